/// \file GatherPrefetch.h: a schedule's prefetch(k, d): a segment loop's gathers prefetch what
/// they will read d iterations ahead.
/// Takes:      a loopir::Function for the CPU (from loopir/Flatten, before StreamPrefetch and
///             SegmentVersioning, so that their copies of a row loop keep the hints).
/// Gives:      in every segment loop (Stmt::segment, below the row loop of its parent variable)
///             that carries gatherAhead = d, for each read X[e(j)] whose index goes through a
///             variable j the body declares from a stream it reads at base + k (k the loop
///             variable, base free of it: a CSR row's column indices, a plain buffer or a
///             field of pairs; X a plain buffer), a prefetch of the
///             element that read will name d iterations ahead, clamped to the stream's last
///             element; that last element from the stream's base at the row loop's end,
///             computed once before the row loop:
///
///               var gather_end = offs[n] - offs[0]              (base with i := the row loop's end)
///               for i in [0, n) { ...
///                 for k in [0, len(i)) reduction prefetch-ahead=64 {
///                   prefetch.t0 x[i64(cols[base + min(k + 64, gather_end - 1 - base)])]
///                   var j = i64(cols[base + k]);  acc = acc + vals[base + k] * x[j] } }
///
///             Why: a row of a graph's adjacency or of rows of random columns reads x at
///             scattered places, each a miss when x is larger than the L2; the out-of-order core
///             overlaps few of them, as each row's loop is short. Read ahead across rows (the
///             stream is the rows' entries back to back), the misses overlap: stdlib's kernel
///             of short rows on the 2-core Zen 5 (f64, one and two threads, 128 ahead, against
///             the same kernel without; stdlib/spmv.spl), cit-Patents 1.13-1.19x faster,
///             soc-LiveJournal1 1.12-1.17x, wiki-Talk 1.11x (64 ahead 1.06-1.12x, 256
///             1.09-1.14x); where x stays in the caches the hints cost (hollywood-2009, x 1.3
///             MB: 0.83x), so it is a schedule's choice, which a plan times (docs/plans.md).
/// Assumes:    a segment's stream holds the rows' entries back to back in row order (the
///             flattened layout of a position-dependent array: element (i, k) at base(i) + k,
///             base(i + 1) = base(i) + len(i)), so base at the row loop's end is the stream's
///             length. Taken only where that end can be read: a whole segment of a CSR's own
///             offsets (n + 1 of them), not a LIL row's Sigma prefix or stored lengths, and a
///             stream base that reads only the row variable, the function's scalar parameters
///             and buffers (other loops are left without hints).
/// Guarantees: results unchanged (a prefetch has no effect on them); the one extra read, of the
///             index stream, stays within it: the clamp keeps it at or before the last element
///             of the last row, and it runs only inside an iteration, so the stream is not
///             empty. CPU functions only.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Inserts the prefetches into `f`. Returns how many segment loops got them.
int insertGatherPrefetches(Function &f);

}  // namespace spl::loopir
