/// \file PartialSums.h: a scalar loop's partial sums made explicit where LLVM would drop them.
/// Takes:      a loopir::Function for the CPU (after SegmentVersioning).
/// Gives:      each loop a schedule runs scalar with S > 1 partial sums (`scalar(k, S)`: vector
///             width 1, interleave S) whose loads walk a run-time stride (an index k * incx, incx
///             a variable), and whose every variable carried from one iteration to the next is
///             an accumulator (acc = acc + e, the add reassociable, or acc = min(acc, e), or
///             max; acc read nowhere else), as
///
///               var acc_1 = -0.0 ... var acc_{S-1} = -0.0     (min, max: = acc)
///               var k_whole = lo + ((hi - lo) / S) * S
///               for k in [lo, k_whole) step S { body(k) on acc, body(k + 1) on acc_1, ... }
///               acc = acc + ((acc_1 + acc_2) + acc_3) ...
///               for k in [k_whole, hi) { body(k) on acc }
///
///             each loop scalar (width 1, interleave 1, not unrolled), and marks the function
///             noGathers (codegen then keeps LLVM's SLP vectoriser from gathering the copies'
///             loads into a vector, 2x slower than the scalar sums on a Zen 5).
///             Why: LLVM interleaves such a loop only in the copy it makes for a unit stride
///             (LoopAccessAnalysis versions a loop on `incx == 1` when a load's stride is a
///             run-time value); the loop every other stride runs keeps one sum, whose adds wait
///             on each other: a BLAS ddot at increment 2 or 3 of 4000 elements took 1.44-1.51 us
///             against OpenBLAS's 1.15-1.33 (its kernel keeps two sums); a C loop of four
///             explicit sums ran it in 1.21-1.35 (2-core AMD EPYC Zen 5, 2026-12-02). Loops whose
///             loads move by a constant or gather through an index keep LLVM's interleaving
///             (a CSR row's partial sums, where LLVM also pairs the loads: loopir/SegmentVersioning).
/// Assumes:    the loop IR's invariants; `+` of floats marked reassociable is a reduce's.
/// Guarantees: the same sums up to the reassociation the add allows (the partial sums start at
///             -0.0, the add's identity); the same minima and maxima (min and max reassociate,
///             and take acc's start again without a change); loops of other forms, GPU
///             functions and loops that may exit early are left as they are.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Splits the partial sums of `f`'s scalar loops over run-time strides. Returns how many loops
/// it split.
int splitStridedPartialSums(Function &f);

}  // namespace spl::loopir
