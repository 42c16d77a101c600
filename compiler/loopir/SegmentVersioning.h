/// \file SegmentVersioning.h: two versions of a reduction over a compressed segment.
/// Takes:      a loopir::Function for the CPU (from loopir/Flatten).
/// Gives:      the same function where a reduction loop whose trip count is read from memory
///             (a CSR row, a LIL list, a graph's neighbours) and whose body gathers through
///             an index read from memory runs as
///
///               if (hi - lo >= kLongSegment) { the loop, vectorised as LLVM sees fit }
///               else                         { the loop, kept scalar (width 1, no interleave) }
///
///             Sparse rows are mostly short: LLVM's vector loop (8 lanes x 4 partial sums of
///             gathers on AVX-512) never runs on them, and its checks and vector epilogue cost
///             more than a plain scalar loop (on a 2-core AMD EPYC, cop20k_A with 21 entries a
///             row: 1.18 ms against 0.98 ms scalar; pwtk with 53: 2.9 against 2.7), while long
///             rows still gain from it (dense rows of 1414: 0.82 ms against 1.07 scalar). The
///             threshold 64 is where the two met on the benchmark suite.
/// Assumes:    nothing beyond the loop IR's guarantees; the two versions are the same loop, so
///             results differ only by the reassociation a reduction already allows.
/// Guarantees: only Reduction loops outside GPU functions are touched; a loop already carrying
///             a schedule's hint (vectorize, width, unroll) is left as the user asked.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Segments at least this long take the vectorised version.
constexpr int64_t kLongSegment = 64;

/// A Reduction loop whose bounds are read from memory and whose body gathers through an index
/// read from memory (CSR SpMV's nonzero loop): the loops this pass and StreamPrefetch take.
bool isSegmentGather(const Stmt &loop);

/// Rewrites every eligible loop of `f`. Returns how many it versioned.
int versionSegmentReductions(Function &f);

}  // namespace spl::loopir
