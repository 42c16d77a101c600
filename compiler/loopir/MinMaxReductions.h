/// \file MinMaxReductions.h: float min/max reductions whose accumulator is never NaN, in the
/// form the CPU's min/max instructions compute in one step.
/// Takes:      a loopir::Function for the CPU (after the other CPU passes).
/// Gives:      for each float variable declared with a value that is not NaN (a constant, or such a variable's value) and
///             only ever assigned min or max of itself and another value,
///
///               var acc: f64 = 0                      var acc: f64 = 0
///               acc = max(acc, abs(x[k]))       ->    acc = max(acc, max(abs(x[k]), -inf))
///
///             (min: the other value guarded by min(e, +inf)).
///             Why: a float min/max is IEEE's minNum/maxNum (LLVM's minnum/maxnum: a NaN operand
///             gives the other one), which an x86 min/max instruction computes only when one
///             operand is known never to be NaN; otherwise LLVM adds a compare and a blend to
///             each min/max and the vectoriser a NaN test that leaves the vector loop. The
///             accumulator is never NaN here (maxNum of a value that is not NaN never is), but
///             LLVM cannot see that through the loop's phi; the guard max(e, -inf) is never NaN
///             by itself (maxNum(NaN, -inf) = -inf), so both min/max become one instruction and
///             the reduction vectorises without the test. idamax's block maxima over |x|
///             (f64, one thread, 4096 elements in the L1 cache): the loop went from about 35
///             instructions a 16 elements to 15 (benchmarks/blas_bench.c, docs/blas.md).
///             The rewritten min/max is marked `neverNan` (printed max.nn / min.nn): neither
///             operand is NaN, so codegen gives its call LLVM's nnan flag, which the vectoriser
///             carries to the lanes' final reduction: a tree of three min/max instructions on
///             8 lanes instead of a chain of seven, each with a NaN test and a blend, at the
///             end of each of idamax's blocks of 256 elements (the 2-core Zen 5, 4096 elements,
///             one thread: 304 -> 245-250 ns; OpenBLAS 358-374).
/// Assumes:    nothing beyond the loop IR's invariants.
/// Guarantees: the same results bit for bit: with acc not NaN, max(acc, max(e, -inf)) is
///             max(acc, e) for every e (e NaN: acc; otherwise e's max with acc, signed zeros
///             included, as max(e, -inf) is e); likewise for min. cuda functions are left as
///             they are (PTX's min/max already ignore a NaN in one instruction).
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Guards the other operand of every never-NaN accumulator's min/max in `f`. Returns how many
/// assignments it rewrote.
int guardMinMaxReductions(Function &f);

}  // namespace spl::loopir
