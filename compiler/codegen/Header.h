/// \file Header.h: the C header declaring an object's exported functions (LANGUAGE.md 8).
/// Lists the error codes (under the same guard as spl_runtime.h), spl_error_string, the packed
/// struct typedefs, and one prototype per export and target compiled, with a comment giving
/// the SPL definition it comes from.
#pragma once

#include <string>
#include <vector>

#include "tir/Abi.h"
#include "tir/Tir.h"

namespace spl::codegen {

struct HeaderEntry {
  const tir::Export *ex;
  tir::Abi abi;
  bool cpu = false, cuda = false;
};

std::string writeHeader(const std::string &sourcePath, const std::string &headerPath, const std::vector<HeaderEntry> &entries);

}  // namespace spl::codegen
