/// \file GpuWarpRows.h: rows on the lanes of warps (vector and compact), written out as loop IR.
/// Takes:      a loopir::Function after loopir/GpuRowStrategy (each grid loop carries its
///             mapping); only cuda functions' top-level grid loops with rows=vector or
///             rows=compact change.
/// Gives:      each such loop replaced by a GpuKernel whose body says what one thread does,
///             in loop-IR nodes that --emit=loopir shows and codegen only emits. Both mappings
///             share one skeleton:
///               - W, the lanes of a row: a schedule's gpu_rows(i, vector, W); else the rows'
///                 average length (offsets' total over the rows), a dense row's length, or
///                 kWarpRowLanes when nothing tells the lengths beforehand, rounded up to a
///                 power of two in [1, 32];
///               - a warp takes 32 / W rows at a time (a grid-stride loop over groups of rows,
///                 the same trip count on every lane of the warp);
///               - the warp enters its rows (each lane its row's declarations and range) and
///                 measures them (the row's steps of W lanes, a WarpReduce of max, broadcast by
///                 a shuffle): a warp whose longest row needs more than kLongRowSteps steps (a
///                 hub among short rows) takes its rows one at a time with all 32 lanes,
///                 otherwise side by side on W lanes each.
///             What a row's lanes then do:
///               vector   stride over the reduction by the row's width, starting from the
///                        identity of its operator (the first lane from the row's initial
///                        value), combine with a WarpReduce; the first lane runs the suffix;
///               compact  take the row's candidates W at a time, kCompactSteps steps tested
///                        before they are counted (their loads in flight together); a passing
///                        lane appends at the row's count plus the passing lanes before it in
///                        its row (WarpVote before), while under LEN; the count grows by the
///                        row's passing lanes (WarpVote count); then the fill from min(count,
///                        LEN) over the row's lanes. The same appends, in the same order, as
///                        the serial loop. Every lane of a warp steps as often as its longest
///                        row needs, so the votes have the whole warp.
///             Threads launched: the rows times W for dense rows or a schedule's W, times 32
///             when offsets give the lengths of vector rows, times kWarpRowLanes otherwise
///             (a fixed grid when the row count reads memory); the body strides over
///             whatever grid it gets.
/// Assumes:    RowPatterns' matchRow (vector) or matchCompaction (compact) holds for the loop
///             (GpuRowStrategy checked it); the rows' prefixes are declarations only.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// The lanes a row takes when nothing tells the rows' lengths before the kernel reads them
/// (neither offsets nor a dense range): a BFS frontier's vertices.
constexpr int64_t kWarpRowLanes = 8;
/// A warp whose longest row needs more than this many steps of its W lanes runs its rows one
/// at a time with all 32 lanes.
constexpr int64_t kLongRowSteps = 16;
/// The steps of a compacted row whose candidates a lane tests before the warp counts them.
constexpr int64_t kCompactSteps = 4;

/// Rewrites every rows=vector and rows=compact grid loop of `f` (a cuda function) into a
/// GpuKernel. Returns how many it rewrote.
int lowerWarpRows(Function &f);

}  // namespace spl::loopir
