/// \file Format.h: how the compiler formats text: through fmt (diagnostics, the IR printers,
/// the tables of --time-passes). `TextOut` appends formatted pieces to one buffer, as the
/// printers build their output a line at a time; `fmt::format` where a piece stands alone.
/// Floating-point constants print with `{:g}` (printf's %g, as the printers always have).
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <utility>

namespace spl {

class TextOut {
 public:
  template <class... Args>
  void operator()(fmt::format_string<Args...> format, Args &&...args) {
    fmt::format_to(std::back_inserter(buffer_), format, std::forward<Args>(args)...);
  }
  void append(const std::string &text) { buffer_.append(text.data(), text.data() + text.size()); }
  std::string str() const { return fmt::to_string(buffer_); }

 private:
  fmt::memory_buffer buffer_;
};

}  // namespace spl
