/// \file Format.h: how the compiler formats text: through fmt (diagnostics, the IR printers,
/// the tables of --time-passes). `TextOut` appends formatted pieces to one buffer, as the
/// printers build their output a line at a time; `fmt::format` where a piece stands alone;
/// `NestedWriter` the indentation and braces both IR printers write.
/// Floating-point constants print with `{:g}` (printf's %g, as the printers always have).
#pragma once

#include <fmt/format.h>

#include <functional>
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

/// The nesting both IR printers write (cin/Cin.cpp's --emit=cin, loopir/LoopIr.cpp's
/// --emit=loopir): the padding of the current depth, a body one level deeper, and the shapes
///   HEAD {          if COND {            (no else: `}`)
///     body            then
///   }               } else {
///                     otherwise
///                   }
/// `visit` writes one statement (the printer's own visitor).
template <class StmtP>
class NestedWriter {
 public:
  NestedWriter(TextOut &out, int indent, std::function<void(const StmtP &)> visit)
      : out_(out), indent_(indent), visit_(std::move(visit)) {}
  std::string pad() const { return std::string(static_cast<size_t>(indent_) * 2, ' '); }
  /// ` {`, then `body` one level deeper, then `}` on a line of its own: what follows a head
  /// already written at the current depth.
  void braced(const StmtP &body) {
    out_(" {{\n");
    nested(body);
    out_("{}}}\n", pad());
  }
  void ifElse(const std::string &cond, const StmtP &then, const StmtP &otherwise) {
    out_("{}if {} {{\n", pad(), cond);
    nested(then);
    out_("{}}}", pad());
    if (otherwise) {
      out_(" else {{\n");
      nested(otherwise);
      out_("{}}}", pad());
    }
    out_("\n");
  }

 private:
  void nested(const StmtP &body) {
    ++indent_;
    visit_(body);
    --indent_;
  }
  TextOut &out_;
  int indent_;
  std::function<void(const StmtP &)> visit_;
};

}  // namespace spl
