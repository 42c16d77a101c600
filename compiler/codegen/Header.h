/// \file Header.h: the C header declaring an object's exported functions (LANGUAGE.md 8).
/// Lists the error codes (under the same guard as spl_runtime.h), spl_error_string, the packed
/// struct typedefs, the values of the main file's tunables the object was compiled with (as
/// macros, so that a C program sizes its operands for them: SELL-C-sigma's C and sigma), and one
/// prototype per export and target compiled, with a comment giving the SPL definition it comes
/// from.
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
  /// Not empty: NAME_plan and NAME_run too (a schedule's plan(), docs/plans.md), with the
  /// parameter carrying each argument of the runtime's CSR kernel type (n, m, offs, cols, vals,
  /// x, out).
  std::vector<int> planParams;
  bool planTransposed = false;  // the plan computes out = A^T x
  bool planSpmm = false;        // the plan computes out = A B (planParams: n, m, k, offs, vals, cols, B, out)
};

/// A tunable NAME becomes `#define SPL_<STEM>_<NAME> value`, STEM being the header's file name
/// without its extension (the source's when the header has no name), so that two headers of one
/// source compiled with different -D values can be included together. A --checked object's
/// header also defines `SPL_<STEM>_CHECKED 1` (its array inputs may take counts, docs/c-abi.md).
/// `SPL_<STEM>_MASKED_ROWS` is 1 where the object was compiled for a CPU on which a sparse row's
/// loop runs as masked whole vectors (codegen::cpuVectors), else 0: what a plan's kernel table
/// built by hand says in csr_masked_rows (spl_runtime.h).
std::string writeHeader(const std::string &sourcePath, const std::string &headerPath, const std::vector<HeaderEntry> &entries,
                        const std::vector<tir::Tunable> &tunables, bool checked = false, bool maskedRows = false);

}  // namespace spl::codegen
