/// \file GuardRange.h: index-set splitting of guarded loop bodies.
/// Takes:      a loopir::Function (from loopir/Flatten).
/// Gives:      the same function where a serial or reduction loop whose body does nothing
///             unless an affine condition on the loop variable holds runs only over the
///             interval where it holds, with the condition dropped from the body:
///
///               for i in [lo, hi) { j = i32(i) + o; out[i] = out[i] + (j >= 0 && j < n ? e : 0) }
///             becomes
///               if (lo < hi && lo, hi within i32) {
///                 for i in [max(lo, -o), min(hi, n - o)) { j = ...; out[i] = out[i] + e } }
///               else the original loop
///
///             This is what DIA, boundary-padded stencils and convolutions need: the guard is
///             what keeps the loop from vectorising, and half of a DIA's slots lie outside.
/// Assumes:    signed integer arithmetic does not overflow (SPL leaves it undefined, as C
///             does), so an i32 sum compares like its mathematical value. Where the condition
///             truncates the loop variable to i32 the new loop is versioned on the bounds
///             fitting i32; inside that version `i64(i32(i) + o)` becomes `i + i64(o)`.
/// Guarantees: the iterations removed are exactly those where the body is a no-op (adding 0
///             under a reassociating sum, an `if` without else); the order of the others is
///             unchanged, so results are bit-identical. Loads hoisted into the new bounds are
///             evaluated only when the loop runs (they came from declarations every iteration
///             evaluates). Parallel and GPU-mapped loops are left alone.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Rewrites every eligible loop of `f` (innermost first). Returns how many loops it narrowed.
int restrictGuardedLoops(Function &f);

}  // namespace spl::loopir
