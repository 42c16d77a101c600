/// \file CNames.h: which names an export may give its C functions (LANGUAGE.md section 8).
/// Takes:      the C name of an export (`export f as NAME`).
/// Gives:      why NAME cannot name an external C function, or nothing when it can. Refused: C
///             and C++ keywords (the header is read by both: `int`, `class`), identifiers the
///             C standard reserves (`__x`, `_X`, and any `_x` at file scope), `main`, and the
///             names of the C standard library's and POSIX's common functions and objects
///             (`malloc`, `printf`, `read`): a kernel named after one would replace it in the
///             program that links it. The runtime's own prefixes (`spl_error`, `spl_rt_`) stay
///             reserved by the checker.
#pragma once

#include <optional>
#include <string>

namespace spl::types {

std::optional<std::string> whyNotCName(const std::string &name);

}  // namespace spl::types
