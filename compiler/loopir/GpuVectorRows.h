/// \file GpuVectorRows.h: a vector of lanes per row, written out as loop IR.
/// Takes:      a loopir::Function after loopir/GpuRowStrategy (each grid loop carries its
///             mapping); only cuda functions' top-level grid loops with rows=vector change.
/// Gives:      each such loop replaced by a GpuKernel whose body says what one thread does,
///             in loop-IR nodes that --emit=loopir shows and codegen only emits:
///               - W, the lanes of a row: a schedule's gpu_rows(i, vector, W); else the rows'
///                 average length (offsets' total over the rows), a dense row's length, or
///                 kVectorRowLanes when nothing tells the lengths beforehand, rounded up to a
///                 power of two in [1, 32];
///               - a warp takes 32 / W rows at a time (a grid-stride loop over groups of rows,
///                 the same trip count on every lane of the warp);
///               - the warp first measures its rows (each lane's row's steps of W lanes, a
///                 WarpReduce of max, broadcast by a shuffle): a warp whose longest row needs
///                 more than kLongRowSteps steps (a hub among short rows) takes its rows one
///                 at a time with all 32 lanes, otherwise side by side on W lanes each;
///               - a row's lanes stride over its reduction by the row's width, starting from
///                 the identity of its operator (its first lane from the row's initial value),
///                 combine with a WarpReduce, and the row's first lane runs the row's suffix
///                 (its store).
///             Threads launched: the rows times 32 when offsets give their lengths, times W for
///             dense rows, times kVectorRowLanes otherwise (a fixed grid when the row count
///             reads memory); the body strides over whatever grid it gets.
/// Assumes:    RowPatterns' matchRow holds for every rows=vector loop (GpuRowStrategy checked
///             it); the row's prefix is declarations only.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// The lanes a row takes when nothing tells the rows' lengths before the kernel reads them
/// (neither offsets nor a dense range): a BFS frontier's vertices.
constexpr int64_t kVectorRowLanes = 8;
/// A warp whose longest row needs more than this many steps of its W lanes runs its rows one
/// at a time with all 32 lanes.
constexpr int64_t kLongRowSteps = 16;

/// Rewrites every rows=vector grid loop of `f` (a cuda function) into a GpuKernel. Returns how
/// many it rewrote.
int lowerVectorRows(Function &f);

}  // namespace spl::loopir
