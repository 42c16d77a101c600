/// \file GpuMergeRows.h: rows on a merge path over row ends and nonzeros, written out as loop IR.
/// Takes:      a loopir::Function after loopir/GpuRowStrategy; only cuda functions' top-level
///             grid loops with rows=merge change.
/// Gives:      each such loop replaced by a GpuKernel on a resident grid (as many blocks of
///             kMergeBlock threads as the device holds at once) whose body says what one thread
///             does, and two workspaces of that kernel: the carries (two of the accumulator's
///             type a warp) and their arrival counters (one word a warp). The merge path of a
///             CSR matrix (Merrill and Garland, "Merge-based parallel sparse matrix-vector
///             multiplication", SC'16): its items are the n row ends and the nnz nonzeros in
///             the order a sequential SpMV meets them, so item d is at coordinate (r, p) with
///             r + p = d; row r's items are its nonzeros, positions [offs[r] - offs[0],
///             offs[r+1] - offs[0]), then its end. Each warp takes 32L consecutive items,
///             L = max(kMergeRound, ceil(items / threads)), so warps get equal work whatever
///             the row lengths:
///               1. the warp searches the row ends together for the coordinates of its first
///                  item and of the item after its last (lanes 0-15 for one, 16-31 for the
///                  other; 16 pivots a step read at once, the interval shrinking about 17
///                  times a step, a WarpVote finding the first pivot past the answer): its
///                  rows, and the part of each that falls in its range;
///               2. the warp runs its rows as vectors of W lanes, 32 / W rows at a time, W the
///                  power of two covering the warp's nonzeros per row over the reads per lane
///                  (a schedule's gpu_merge(i, R), --gpu-merge-unroll, or 32 bytes' worth of
///                  the accumulator); each lane issues its R reads of a row together, and a
///                  WarpReduce sums the row. A warp inside one long row takes all 32 lanes to
///                  it; a warp of short rows gives each lane its own rows. A row of the 32 / W
///                  that would take more than kMergeLongRowSteps steps of its W lanes (a hub
///                  among a power-law graph's short rows, which would keep the other lanes
///                  waiting) sits out that pass and is then summed by all 32 lanes, the long
///                  rows of the step one at a time (the lowest lane holding one first);
///               3. a row that crosses a warp's boundary is finished across warps,
///                  deterministically and without any warp waiting for another: each warp the
///                  row crosses stores its part in a carry (2w for the row it began with,
///                  2w + 1 for one it began and did not end), passes a Fence and counts itself
///                  (Arrive) on the counter of the row's first warp t0; the warp whose count
///                  completes the t1 - t0 + 1 warps the row crosses sums the carries (its lanes
///                  in parallel, in a fixed order) and finishes the row. Every other row is
///                  finished by its warp.
///             The kernel carries a schedule's gpu_merge(i, R, B) or --gpu-merge-min-blocks as
///             knobs.mergeBlocksPerSm (B blocks run on each multiprocessor, ptxas keeping
///             registers for them, though more might fit).
/// Assumes:    RowPatterns' mergesRows holds for the loop (GpuRowStrategy checked it): rows from
///             0 to n reduced into one accumulator, the reduction reading its row only through
///             its segment's positions of the offsets buffer.
#pragma once

#include "loopir/GpuRowStrategy.h"
#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Threads a block of the merge-path kernels.
constexpr int64_t kMergeBlock = 256;
/// The fewest items a thread's share of the merge path holds (a warp's share is 32 times that).
constexpr int64_t kMergeRound = 8;
/// A row of a warp needing more than this many steps of its W lanes is summed by all 32 lanes
/// after the others (--gpu-merge-long-rows; 0: never).
constexpr int64_t kMergeLongRowSteps = 4;

/// Rewrites every rows=merge grid loop of `f` (a cuda function) into a GpuKernel, with the
/// options' reads a lane and blocks a multiprocessor where the loop's schedule sets none.
/// Returns how many it rewrote.
int lowerMergeRows(Function &f, const GpuRowOptions &opts);

}  // namespace spl::loopir
