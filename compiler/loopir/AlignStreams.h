/// \file AlignStreams.h: a vector loop's streams start on a cache line.
/// Takes:      a loopir::Function for the CPU (after the other CPU passes).
/// Gives:      every innermost serial, reduction, vector or parallel loop (one not balanced by
///             rows) that streams a float array (an element index `inv + s * i` with s 1, or an
///             invariant that is 1 at run time) split at the first element of that stream that
///             starts a 64-byte line, when it runs 512 iterations or more:
///
///               for i in [lo, hi) reduction { acc = acc + x[b + i * incx] * y[c + i * incy] }
///             becomes
///               var lo' = lo;  var hi' = hi
///               if (hi' - lo' >= 512 && incx == 1) {
///                 var head = lo' + align_gap64(x[b + lo' * incx])
///                 for i in [lo', head) reduction scalar { the body }     (at most 15 iterations)
///                 for i in [head, hi') reduction { the body }
///               } else { for i in [lo', hi') reduction { the body } }
///
///             The stream aligned is the first one the loop stores to, else the first it reads.
///             Why: an array from malloc starts 16 bytes past a line (glibc's large blocks),
///             and a 512-bit vector read from it straddles two lines every time. On the 2-core
///             AMD EPYC (Zen 5, 2026-11-30; C loops with AVX-512 intrinsics, one thread, arrays
///             16 bytes past a line): a dot product of 2 x 32 MB ran at 28.5 GB/s against 48 on
///             aligned arrays, 1024 elements in L1 in 76 ns against 38, an axpy 45 against 82
///             GB/s; started on a line after a scalar head, 44 GB/s, 45 ns and 82 GB/s (256-bit
///             vectors lose less: half their reads straddle). libsplblas's level 1 and 2 run
///             512-bit vectors over the caller's arrays, which OpenBLAS's 256-bit Haswell
///             kernels outran there by 1.2-1.6x (ddot, dasum, dger at 4M and 4000).
///             Loops shorter than kAlignFrom run the loop as it was: a head of up to 15 scalar
///             iterations cost 256 elements in L1 more than the straddling did, and a head
///             computed for every loop (empty when short) ran libsplblas's band routines, rows of
///             65, 3-19% slower (dgbmv T, dtbmv, dsbmv). Behind the test, with the long run laid
///             out of line (`if seldom`), dgbmv T still runs 8-15% slower, dtbmv 3-5%, dsbmv
///             within 1% (paired against the build without this pass).
/// Assumes:    nothing beyond the loop IR's invariants.
/// Guarantees: each iteration runs once, those of a serial or reduction loop in their order
///             (the head is at most hi - lo; a parallel loop's head runs serially before it), so
///             results are bit-identical; lo and hi are evaluated once, before the loops, as the
///             loop evaluated them. The head loop carries no vector, interleave or unroll hint;
///             the main loop and the short one keep the loop's hints. The pool's chunks of 64
///             iterations or more start a multiple of 16 iterations from the loop's first
///             (runtime/src/thread_pool.cpp), so each thread's part starts on a line too. cuda
///             functions, GPU loops, parallel loops balanced by rows, segment loops
///             (loopir/SegmentVersioning's), loops kept scalar (width 1) and loops that carry a
///             float value from one iteration to the next outside a reduction (a running sum:
///             never vectorised) are left as they are.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Loops of fewer iterations (known at run time) run without a head.
constexpr int64_t kAlignFrom = 512;
/// The alignment a stream's main loop starts on: a cache line, the widest vector's size.
constexpr int64_t kAlignBytes = 64;

/// Splits every eligible loop of `f`. Returns how many loops got a head.
int alignVectorStreams(Function &f);

}  // namespace spl::loopir
