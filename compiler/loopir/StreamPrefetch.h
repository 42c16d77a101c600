/// \file StreamPrefetch.h: software prefetch of the arrays a segment loop streams.
/// Takes:      a loopir::Function for the CPU (from loopir/Flatten, before SegmentVersioning).
/// Gives:      before every segment gather (isSegmentGather: a CSR row's nonzero loop, a
///             vertex's neighbours), when the segment is shorter than kPrefetchBelow, one
///             Prefetch per buffer its body reads at `base + k` (k the loop variable, base free
///             of it: the row's values and column indices), of the element kPrefetchBytes past
///             the segment's first one:
///
///               if (hi - lo < 16) { prefetch vals[start + lo + 2048 / 8]; prefetch cols[start + lo + 2048 / 4] }
///               (prefetcht0 in the row loop's copy for rows of like lengths, which the row
///               sample below chooses, the copy for other rows having neither the test nor the
///               hints; non-temporal under no such row loop: a BFS frontier's vertex's neighbours)
///               for k in [lo, hi) reduction { ... vals[start + k] * x[cols[start + k]] ... }
///
///             Why: with short rows (stencils, road networks: 2 to 7 entries) the nonzero
///             streams are read a few elements per row between gathers, and the hardware
///             prefetchers fall behind: on the 2-core AMD EPYC, a 5-point stencil with 5 million
///             entries (f64, 1 thread) took 4.7 ms plain and 3.7 ms with these prefetches, 2 KB
///             ahead (1 KB: 4.1 ms; values only: 3.9 ms; columns only: 4.6 ms); rows of 7: 3.5
///             and 2.8 ms. Long rows do not want them: pwtk (53 entries a row, blocks) took 4.2 ms
///             with them on every row and 3.0 ms without, so rows of 16 entries or more skip
///             them. Which hint depends on the rows, which the row loop samples before it runs:
///
///               regular = false
///               if (n >= 4096) { 64 rows r evenly spaced: count len(r) == len(r + 1);
///                                regular = at least half of them }
///               if (regular) for i ... { if (len < 16) { prefetcht0 ... } ... }
///               else         for i ... { ... }     (no hint, no test of len)
///
///             Rows of like lengths (stencils, structured FEM) take prefetcht0: on a 2-core Xeon
///             with a 260 MiB L3 (2026-11-28), prefetchnta kept a matrix that fits in the cache
///             out of it (ecology1 at half scale, 5-entry rows, f64, one thread: 4.6 ms with nta,
///             2.3 with t0, 2.4 with none) and on a 5-point stencil of 42M entries, far larger
///             than the cache, nta took 62 ms, none 59, t0 46. Rows of random lengths take no
///             hint: there the test of the row's length before the hints mispredicts as the row
///             loop's exit does. On the 2-core AMD EPYC Zen 5 (2026-12-02, f64, one thread, a C
///             loop of each shape on the suite's matrices at half scale) the test and nta hints
///             ran varied-powerlaw (rows of 1 to 64) in 15.2 ms against 12.5 without either,
///             varied-uniform 13.0 against 10.9, varied-scattered 14.7 against 13.0, roadNet-CA
///             8.6 against 8.3, graphs alike (cit-Patents 23.0 and 23.1), while the stencils
///             wanted them (ecology1 1.31 with t0 against 1.86, G3_circuit 2.10 against 3.01); on
///             the Xeon nta had gained at most 5% there (1 to 41 entries a row: 16M entries 25 ms
///             against 25.5 with none; 63M entries, beyond the cache, 103 against 108; t0 the
///             slowest, 30 and 130). The sample reads 192 offsets, once a call; below 4096 rows it
///             is skipped (no hints).
/// Assumes:    nothing: a prefetch has no effect on results and never faults (an address past
///             the end of a buffer is allowed).
/// Guarantees: only CPU functions; struct (packed) buffers are not prefetched.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// How far ahead of a segment's start its streams are prefetched.
constexpr int64_t kPrefetchBytes = 2048;
/// Segments at least this long are not prefetched.
constexpr int64_t kPrefetchBelow = 16;
/// The row sample: how many pairs of neighbouring rows, from how many rows on.
constexpr int64_t kSamples = 64;
constexpr int64_t kSampleRowsFrom = 4096;

/// Inserts the prefetches into `f`. Returns how many segment loops got them.
int insertStreamPrefetches(Function &f);

}  // namespace spl::loopir
