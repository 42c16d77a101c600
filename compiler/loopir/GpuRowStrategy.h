/// \file GpuRowStrategy.h: how each grid loop of a cuda function puts its rows on threads.
/// Takes:      a loopir::Function from Flatten (a cuda one; others are left alone).
/// Gives:      every top-level grid loop (GpuGlobal, or Parallel: what the back end launches as
///             one kernel over a grid) carries Stmt::rows, one of
///               thread   a thread an iteration (any loop);
///               vector   a vector of lanes a row, the width from the row lengths (offsets'
///                        average, a dense row's length), partials combined by shuffles
///                        (rows reduced into one accumulator: RowPatterns' matchRow);
///               merge    a merge path over row ends and nonzeros, the same number of nonzeros
///                        for every lane whatever the row lengths, rows cut between lanes
///                        combined in order (rows whose reduction reads only its segment's
///                        positions: positionPure);
///               compact  a warp a row, appending in order what passes a test, a ballot a
///                        step (matchCompaction: dense2csr's `which`, a BFS step);
///             printed by --emit=loopir (`rows=merge`). loopir/GpuWarpRows then writes vector
///             and compact loops out as loop-IR kernels, loopir/GpuMergeRows merge loops;
///             codegen/CodeGenCuda.cpp emits those kernels and decides nothing.
///             The default, per loop, from the loop alone (no pass over the matrix per call):
///             merge where it applies (unless the options rule it out: --gpu-rows=vector), else
///             vector, else compact, else thread; a loop a user schedule placed on the grid
///             (parallelize(i, gpu_global)) keeps a thread an iteration. A schedule's
///             gpu_rows(i, m) asks for m; a mapping the rows' shape does not allow, or a loop
///             that is not a grid loop, is a user error at the command; so is gpu_merge's
///             knobs on a loop that does not end up a merge path.
/// Assumes:    Flatten's segments (loopir::Segment) on the rows' reductions.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

struct GpuRowOptions {
  /// --gpu-rows=vector: the default never picks merge (a schedule's gpu_rows still may).
  bool mergeByDefault = true;
  /// --gpu-merge-unroll: a merge path's nonzeros of a row each lane reads at once (0: 32 bytes'
  /// worth of the accumulator); a schedule's gpu_merge(i, R) wins (loopir/GpuMergeRows).
  int64_t mergeReads = 0;
  /// --gpu-merge-min-blocks: the merge-path kernels' blocks a multiprocessor, run there with
  /// registers kept for them (0: as many as fit); a schedule's gpu_merge(i, R, B) wins.
  int mergeBlocksPerSm = 0;
  /// --gpu-merge-long-rows: the steps of its W lanes past which a merge path's row is summed
  /// by the whole warp (0: never; -1: kMergeLongRowSteps).
  int64_t mergeLongRowSteps = -1;
  /// --gpu-merge-prefetch=off: a merge path's step loads its rows' ends itself instead of the
  /// step before loading them.
  bool mergePrefetch = true;
};

/// Sets Stmt::rows on every grid loop of `f` (a cuda function). Returns how many grid loops
/// it mapped other than a thread an iteration. Throws CompileError for an inapplicable
/// gpu_rows.
int chooseGpuRowMappings(Function &f, const GpuRowOptions &opts);

}  // namespace spl::loopir
