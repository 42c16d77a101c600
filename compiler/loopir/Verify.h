/// \file Verify.h: the loop IR's verifier.
/// Takes:      a loopir::Function, after Flatten or after any loop-IR pass.
/// Gives:      the first broken invariant of those LoopIr.h guarantees, as text (empty when
///             none): every variable used is a scalar parameter, a loop variable of an
///             enclosing loop or declared earlier in an enclosing block, and is used at its
///             declared type; every buffer named exists (a struct buffer's field too); loads
///             and stores index with an integer and carry the element's type; operands agree
///             (arithmetic on equal types, comparisons give i1, && || ! on i1, a Select's arms
///             alike and its condition i1); loop bounds, steps and counts are integers; GPU
///             operations (thread indices, shuffles, warp reductions, kernels) only in cuda
///             functions, a warp reduction's combination typed as its variable, a kernel at the
///             top level with a load-free thread count and a constant block.
/// Fails:      verifyAfter throws InternalError naming the pass that broke the invariant (the
///             driver runs it after Flatten and after every loop-IR pass: the verifier is
///             cheap next to LLVM, so it is always on, as Halide's are).
#pragma once

#include <string>

#include "loopir/LoopIr.h"

namespace spl::loopir {

std::string verify(const Function &f);

void verifyAfter(const Function &f, const char *pass);

}  // namespace spl::loopir
