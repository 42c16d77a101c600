/// \file Privatize.h: the `privatize` race strategy of `parallelize(i, KIND, privatize)` (taco's
/// workspaces per thread, OpenBLAS's per-thread buffers): a loop whose iterations only race on
/// updates of arrays runs as parts, each adding into a copy of those arrays of its own, and the
/// copies are combined after it in part order.
///
/// Takes:      a forall `loop` (i in [lo, hi)) and the arrays `updated` whose updates make it
///             carry its dependences: every write of such an array t inside the loop is
///             `t[x] = t[x] op e` with one op per array (+, min or max), and t is read there
///             nowhere else. A float sum is regrouped (each part's terms, then the parts), as
///             the schedule asks by naming the strategy.
/// Gives:      (P = kPrivateParts, t_parts a temporary of P copies of t, shape P.shape(t))
///               where t_parts {
///                 forall i_part in [0, P) parallel {
///                   forall z in shape(t): t_parts[i_part, z] = identity(op)
///                   forall i' in [0, (N + P - 1 - i_part) / P) {loop's body at
///                     i = lo + i_part + P i', t[x] as t_parts[i_part, x]}     (N = hi - lo)
///                 }
///                 forall z0 parallel { forall q in [0, P) { forall z' { t[z] = t[z] op t_parts[q, z] } } }
///               }
///             Part p runs every P-th iteration from lo + p, in order: the parts are affine in
///             p (isl sees them disjoint, poly/Dependences), and a work that changes steadily
///             with i (a triangle's columns or rows, either way) is shared evenly by P parts
///             (on 2, 4 or 8 threads; within one part's share on others). The loop i' keeps
///             the loop's name and kind; the part loop is the `partName` given, a user's
///             Parallel loop, its iteration work the loop's divided by P (where that is
///             unknown, as if large: the schedule asked for the parts). The parts are fixed in
///             number, so the result is the same at every run and for every thread count: each
///             element adds the parts' sums to its value in part order. The copies take P
///             times t's memory.
/// Assumes:    the caller checked (poly/Dependences) that the loop carries no other dependence,
///             so its iterations may run in any grouping once the updates go to private copies.
/// Fails:      nullopt and `why` when an update is not of that form, t is read otherwise, t's
///             shape is not a rectangle of nats (a ragged array), or the loop runs over a
///             compressed row's entries.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cin/Cin.h"

namespace spl::poly {

/// The number of private copies: the parts the loop is cut into.
constexpr int64_t kPrivateParts = 8;

/// The least work that runs as parts with 512-bit vectors (innermost iterations of the whole
/// loop as cin::workOf counts them, a triangle at its bounding box): below it the copies, set to
/// the identity and added to the arrays after, cost more than the threads win. Measured with
/// dsymv, whose work counts about 713,000 (L) and 807,000 (U) at n = 400, 785,000 / 807,000 at
/// 440 and 979,000 / 1,053,000 at 480, on a 2-core AMD EPYC (Zen 5, AVX-512), the parts against
/// the loop in its own order without copies (the version below, with one copy, measured at 400
/// alike on one thread): at 400 1.17-1.19x slower on one thread and 1.09-1.22x slower on two; at
/// 480 1.08-1.18x slower on one and 1.08-1.16x faster on two; at 800 1.05x slower on one,
/// 1.4-1.6x faster on two.
constexpr int64_t kMinPrivateWork512 = 900000;

/// The least work that runs as parts on a CPU whose vectors hold `cpuVectorBits` (0: not
/// known, or not a CPU: as with 512): kMinPrivateWork512 scaled by the width. The copies and the
/// threads' start cost about the same time whatever the vectors, while the work's own time grows
/// as they narrow, so parts repay from less work. On a 2-core AMD EPYC Zen 3 (AVX2, 256 bits),
/// 2026-12-01, paired in one process, dsymv and dspmv at n = 400 (work 713,000-807,000) as parts
/// against the loop in order: 0.96-1.07x as fast on one thread, 1.67-1.82x faster on two (symv
/// 0.42-0.45x OpenBLAS's speed before, on two threads).
int64_t minPrivateWork(int cpuVectorBits);

/// Once the schedule's commands have applied: each loop privatize made gets a version for
/// little work, taken where the work is under `minWork` (minPrivateWork; a work that is a
/// constant picks one version; an unknown one, compressed rows', keeps the parts):
///   if (work >= minWork) {the parts, as they are} else where t_part: shape(t) {
///     forall i_part in [0, P) serial {
///       t_part = identity; the part's iterations on t_part;
///       forall z: t[z] = t[z] op t_part[z] } }
/// one copy, reused part after part, and no threads. Each element gets the parts' sums in part
/// order either way, as the parts' copies give them (the parts in order without any copy, the
/// loop's own order, regrouped the sums: LAPACK's single-precision sep.in then failed 3 of its
/// 13,464 SST tests through ssymv U, ratios 107-201 against 50). The two versions are compiled
/// apart, and LLVM may group the other reassociable sums of the body (a row's dot product)
/// differently in each (dsymv U's results at n = 1000 differed in their last bits), so the
/// version depends on the work and the target alone, never on the threads: the result is the
/// same on every thread count. New copies go to `tensors`; the rest of `body` is unchanged.
cin::StmtP serialWhereFewParts(const cin::StmtP &body, std::vector<cin::TensorP> &tensors, int64_t minWork);

std::optional<cin::StmtP> privatizeUpdates(const cin::Stmt &loop, const std::vector<cin::TensorP> &updated,
                                           const std::string &partName, std::vector<cin::TensorP> &tensors,
                                           std::string &why);

}  // namespace spl::poly
