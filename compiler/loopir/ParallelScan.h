/// \file ParallelScan.h: a running sum over a serial loop, on the GPU, as a parallel map and the
/// runtime's device scan.
/// Takes:      a loopir::Function for CUDA (from loopir/Flatten).
/// Gives:      the function where a top-level prefix sum of the form `scan(+, 0)` lowers to
///
///               out[b] = 0
///               var acc: i32 = 0
///               for k in [0, m) serial { ...; acc = acc + v; out[b + 1 + k] = acc }
///
///             (dense2csr's row counts, a BFS step's frontier degrees) becomes
///
///               alloc counts[m]
///               for k in [0, m) gpu.global { ...; counts[k] = v }      (one thread per k)
///               alloc sums[m + 1]; sums = spl_sigma_prefix(counts, m)  (the device scan)
///               for k in [0, m + 1) gpu.global { out[b + k] = i32(sums[k]) }
///
///             The serial loop ran as a one-thread kernel: 38 ms for the row counts of a 1414 x
///             1414 dense matrix on an H100, where cusparseDenseToSparse took 0.043 ms.
/// Assumes:    the loop's other statements declare values and reduce (no stores, no returns);
///             v and they do not read acc or out.
/// Guarantees: the same values in out: the i32 running sum wraps as the i64 sums truncated do.
///             Only cuda functions, only i32 sums (the device scan adds i32 counts).
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Rewrites every such running sum of `f` (a cuda function). Returns how many it rewrote.
int parallelizeRunningSums(Function &f);

}  // namespace spl::loopir
