/// \file Error.h: the three categories of failure (see docs/architecture.md).
/// - user errors are reported through Diagnostics by the stage that finds them;
/// - internal errors (a broken invariant) throw InternalError naming the condition and the
///   compiler source position: `internal_assert(cond) << "context"`;
/// - unsupported features throw NotSupported, caught by the driver and printed as a located
///   "not supported yet" error.
/// Exceptions never cross the public compiler API: the driver catches both at the top.
/// The asserts stay on in release builds (as Halide's do): they are cheap.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "support/Source.h"

namespace spl {

/// A compiler bug. `loc`, when valid, is the position in the user's program being compiled
/// when it happened (the driver prints it, exits 2, and never calls it the user's error).
struct InternalError : std::runtime_error {
  explicit InternalError(const std::string &what, SourceLoc loc = {}) : std::runtime_error(what), loc(loc) {}
  SourceLoc loc;
};

struct NotSupported : std::runtime_error {
  NotSupported(SourceLoc loc, const std::string &what) : std::runtime_error(what), loc(loc) {}
  SourceLoc loc;
};

/// A user error found deep inside a stage that has no Diagnostics at hand; the driver prints it.
struct CompileError : std::runtime_error {
  CompileError(SourceLoc loc, const std::string &what) : std::runtime_error(what), loc(loc) {}
  SourceLoc loc;
};

namespace detail {
/// Collects a streamed message and throws on destruction (only built when the check fails).
class ErrorReport {
 public:
  enum Kind { Internal, Unsupported, User };
  ErrorReport(Kind kind, const char *file, int line, const char *cond, SourceLoc loc = {})
      : kind_(kind), loc_(loc) {
    if (kind == Internal)
      msg_ = fmt::format("internal compiler error at {}:{}{}: ", file, line, cond ? fmt::format(": condition failed: {}", cond) : "");
  }
  template <typename T>
  ErrorReport &operator<<(const T &v) {
    msg_ += fmt::format("{}", v);
    return *this;
  }
  ~ErrorReport() noexcept(false) {
    if (kind_ == Internal) throw InternalError(msg_, loc_);
    if (kind_ == Unsupported) throw NotSupported(loc_, msg_);
    throw CompileError(loc_, msg_);
  }

 private:
  Kind kind_;
  SourceLoc loc_;
  std::string msg_;
};
/// Makes `cond ? (void)0 : ErrorReport(...) << ...` type-check.
struct Voidify {
  void operator&(const ErrorReport &) {}
};
}  // namespace detail

}  // namespace spl

#define internal_assert(c) \
  (c) ? (void)0 : ::spl::detail::Voidify() & ::spl::detail::ErrorReport(::spl::detail::ErrorReport::Internal, __FILE__, __LINE__, #c)
#define internal_error \
  ::spl::detail::ErrorReport(::spl::detail::ErrorReport::Internal, __FILE__, __LINE__, nullptr)
/// An internal error found while compiling the program construct at `loc`.
#define internal_error_at(loc) \
  ::spl::detail::ErrorReport(::spl::detail::ErrorReport::Internal, __FILE__, __LINE__, nullptr, loc)
#define not_supported(loc) \
  ::spl::detail::ErrorReport(::spl::detail::ErrorReport::Unsupported, __FILE__, __LINE__, nullptr, loc)
#define user_error_at(loc) \
  ::spl::detail::ErrorReport(::spl::detail::ErrorReport::User, __FILE__, __LINE__, nullptr, loc)
