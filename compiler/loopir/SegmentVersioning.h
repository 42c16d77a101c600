/// \file SegmentVersioning.h: how loops over a compressed segment are vectorised on the CPU.
/// Takes:      a loopir::Function for the CPU (from loopir/Flatten).
/// Gives:      versionSegmentReductions: the same function where a reduction loop whose trip
///             count is read from memory (a CSR row, a LIL list, a graph's neighbours) and
///             whose body gathers through an index read from memory runs, when the loop is
///             innermost and sums floats on a CPU whose vectors take a lane mask at no cost
///             and whose gathers are fast (Intel's AVX-512; not AMD's Zen 4 and 5, where the
///             masked rows ran 2.6-4.5x slower than the versions below: codegen::cpuVectors), as
///
///               if (hi - lo < kMaskedSegment) { the loop, kept scalar (width 1, no interleave) }
///               else { the loop vectorised over a whole vector of its sums' type (8 lanes of
///                      f64, 16 of f32), one partial sum, the last partial vector under a mask }
///
///             and elsewhere as
///
///               if (hi - lo < kMediumSegment)     { the loop, kept scalar (width 1, no interleave) }
///               else if (hi - lo >= kLongSegment) { the loop, vectorised as LLVM sees fit }
///               else                              { scalar, kMediumPartialSums partial sums }
///
///             With masks, a row of 8 to 63 entries runs a few vector iterations and no scalar
///             remainder loop, whose exit mispredicts on rows of varying length (2-core Xeon,
///             AVX-512, 2026-11-29, stdlib's CSR kernel in f64 on the suite at half scale, one
///             thread, against the three versions below in the same build: rma10 (51 a row)
///             0.78 -> 0.56 ms, cop20k_A (22) 1.30 -> 0.75, conf5_4-8x8-05 (39) 0.57 -> 0.47,
///             varied-uniform (1-41) 26.0 -> 19.0, kron_g500-logn18 19.2 -> 13.2, email-Enron
///             0.24 -> 0.21, rail4284 13.2 -> 12.4; atmosmodd, thermal2, consph, pdb1HYS within
///             3%; dense2 (2000 a row, x in L1) 0.79 -> 0.84: LLVM's four unmasked partial sums
///             suit only rows that long with x in L1, and rows of 256 or more kept on them lost
///             on kron and rail4284). A threshold of 16 lost on the varied rows (20.6 ms) and
///             graphs; rows under 8 stay scalar (the stencils: a masked 16-lane row had lost
///             20-25% there). Two or four partial sums under masks were mixed (rma10 and
///             rail4284 gained 2-9%, cop20k_A lost 7%, rma10 lost 40% with four).
///
///             Without masks (the three versions, tuned on a 2-core AMD EPYC):
///             sparse rows are mostly short: LLVM's vector loop (8 lanes x 4 partial sums of
///             gathers) never runs on them, and its checks and vector epilogue cost
///             more than a plain scalar loop (on a 2-core AMD EPYC, cop20k_A with 21 entries a
///             row: 1.18 ms against 0.98 ms scalar; pwtk with 53: 2.9 against 2.7), while long
///             rows still gain from it (dense rows of 1414: 0.82 ms against 1.07 scalar). The
///             threshold 64 is where the two met on the benchmark suite. Between 32 and 64, a
///             single partial sum makes the loop wait on its floating-point adds (2-3 cycles a
///             nonzero, about the memory's pace on one core): two partial sums (LLVM
///             interleaves the reassociable reduction, then pairs the loads) ran the
///             block-FEM rows 5-17% faster in f64 and 14-20% in f32 (pwtk, shipsec1, cant,
///             rma10, conf5_4-8x8-05, against the single sum in the same process), cop20k_A
///             and the graphs within 3% either way, ba-graph 3-5% slower. Four partial sums
///             lost 7-10% on rma10, and from 16 or 24 entries cop20k_A lost up to 20% (the
///             remainder loop's exit mispredicts on rows that short). Short rows are tested
///             first: they are the most common and pay one comparison. Two partial sums on short
///             rows too, only in StreamPrefetch's copy for rows of like lengths (a hand-written C
///             loop had run ecology1 1.46x faster so), measured against one sum in the same
///             process (2-core Xeon, 2026-11-28, stdlib spmv_csr at half scale): ecology1 0.99-1.04x,
///             G3_circuit 0.85-1.08x, atmosmodd 0.91-1.00x, roadNet-CA 0.93-1.00x: not kept.
///             vectorizeSegmentLanes: a segment loop whose body is one loop over a constant
///             number of lanes (SELL-C's slots over the C rows of a slice) runs its lanes as one
///             vector and its segment scalar (see the function).
/// Assumes:    nothing beyond the loop IR's guarantees; the versions are the same loop, so
///             results differ only by the reassociation a reduction already allows; the lanes
///             vectorised carry nothing from one lane to the next (checked).
/// Guarantees: only loops outside GPU functions are touched (Reduction loops by the first, the
///             serial segment loops and their lanes by the second); a loop already carrying a
///             schedule's hint (vectorize, width, unroll) is left as the user asked.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// With masked vectors: segments at least this long take the masked vector loop.
constexpr int64_t kMaskedSegment = 8;

/// Without them: segments at least this long take the vectorised version.
constexpr int64_t kLongSegment = 64;

/// Segments at least this long (and shorter than kLongSegment) run scalar with
/// kMediumPartialSums partial sums (LLVM's interleaving of a reassociable reduction).
constexpr int64_t kMediumSegment = 32;
constexpr int kMediumPartialSums = 2;

/// A Reduction loop over a segment (Stmt::segment: its bounds read from memory) whose body gathers through an index
/// read from memory (CSR SpMV's nonzero loop): the loops this pass and StreamPrefetch take.
bool isSegmentGather(const Stmt &loop);

/// Rewrites every eligible loop of `f`, with masked vectors of `maskedVectorBytes` bytes (0:
/// none). Returns how many it versioned.
int versionSegmentReductions(Function &f, int maskedVectorBytes);

/// Lanes at most this many are vectorised across by vectorizeSegmentLanes.
constexpr int64_t kMaxLanes = 16;

/// A loop over a segment read from memory whose body is one loop over a constant C lanes
/// (2 <= C <= kMaxLanes) that gathers and carries no variable across lanes: SELL-C's slots
/// over the C rows of a slice, after the default schedule swept the lanes inside the slots
/// (cin/Schedule's interchange). The lanes loop is vectorised (width: the largest power of two
/// <= C), the segment loop kept scalar (width 1, no interleave, no unroll): one gather of C
/// lanes per slot. Left to itself LLVM vectorises the segment loop across slots instead, a
/// vector loop its mostly shorter segments never enter (thermal2's mirror as SELL-8: 5.6 ms
/// against 3.1 ms, 2-core AMD EPYC). Loops carrying a schedule's hints are left alone. Returns
/// how many it rewrote.
int vectorizeSegmentLanes(Function &f);

}  // namespace spl::loopir
