/// \file Schedule.h: the default schedules of each target on concrete index notation (a user's
/// `schedule` block is applied before, by poly/UserSchedule.h, which checks each command against
/// the polyhedral dependences; its loops keep their kinds here), and which schedule blocks
/// apply to an export.
/// Takes:      a lowered kernel whose independent loops are all marked Parallel.
/// Gives:      the kernel with each forall's kind final: for the CPU, the outermost Parallel
///             loop of each nest runs on the thread pool and the loops nested in it run
///             serially (vectorised by LLVM where it can); Reduction loops stay reductions.
///             Each such parallel loop carries how much one iteration does (iterationWork: the
///             pool's chunk size) and, where that moves with its variable, how much more its
///             last iteration does than its first (workGrowth: the pool hands out a growing
///             loop's chunks from the last).
///             Before that, a row loop whose per-row reduction walks memory with a stride
///             (DIA's diagonals, ELL stored slot-major, A^T x on a row-major A, A x on a
///             column-major A; also over a triangle) is interchanged into blocks of 1024 rows
///             (each block a task of the pool) swept once per
///             reduction index, each row combining its terms in the same order (so the result
///             is the same); what a row does with its sum (gemv's beta y + alpha sum) runs after,
///             per row, from a temporary of the sums. A recurrence whose element sums terms of
///             the elements before it (recur's forward substitution) becomes right-looking,
///             over a whole triangle or a band (a row's terms from column max(0, i - w)).
/// Fails:      never: what a user asks for is checked in poly/UserSchedule.
#pragma once

#include <set>
#include <string>

#include "cin/Cin.h"
#include "tir/Tir.h"

namespace spl::cin {

/// Does the schedule block apply to this export on this target (named by its C name or its def)?
bool scheduleApplies(const tir::Schedule &s, const tir::Export &ex, bool cuda);

/// The `precompute(name)` arguments of the blocks that apply: the lowering acts on them
/// (LowerOptions::precompute), poly::applyUserSchedule then checks each took effect.
std::set<std::string> precomputeNames(const tir::Program &p, const tir::Export &ex, bool cuda);

StmtP defaultCpuSchedule(const StmtP &body);

/// About how many innermost iterations (statements) `s` runs: each loop's extent, bounded
/// over the ranges of the loops around it (`loops`: a triangle counts as its bounding box),
/// times its body's; nullopt where an extent reads memory (a compressed row's length).
std::optional<Nat> workOf(const StmtP &s, NatFacts &loops);

/// The offsets array T (its tensor id) when `loop` runs over [0, T@(i+1) - T@i) for the row
/// variable i, i.e. over the positions of row i of a compressed level (its SegmentLevel says
/// so); 0 otherwise.
int64_t compressedRowOffsets(const Stmt &loop, int64_t rowVar);

/// `loop`, inside outer loop i, with its variable changed to the position it reads, so that an
/// interchange of the two loops walks a triangle or band by rows and columns rather than by
/// diagonals, and a fusion with another loop over the row meets it at the same elements:
/// - the rest of a row after i (`drop(i + 1)`: k in [0, n - i - 1) reading k + i + 1) becomes
///   [i + 1, n) reading k (shifted by i plus the constant of such an index, else by i);
/// - a part of a row starting at a position lo that moves with i (a band's row, generate over
///   max(hi - lo, 0) reading lo + k, lo = max(0, i - kl)) becomes [lo, hi) reading k (of
///   the offsets read, the one of fewest terms: the position in the row, not a band's stored
///   row ku + lo + k - i).
/// Null when the loop is neither (its lower bound is not zero, or no index reads k + lo).
StmtP shiftToPositions(const Stmt &loop, const Nat &i, int64_t outerVar);

/// The change of an access's offset in its buffer when `var` advances by one (a constant, or
/// symbolic like n for a column walk of a row-major matrix).
Nat strideOf(const Expr &access, int64_t var);

/// The default GPU schedule: unless the program maps loops itself (mapBlock, mapThread, ...),
/// the outermost independent loop of each nest runs one iteration per GPU thread (GpuGlobal)
/// and the loops inside it run in that thread.
StmtP defaultGpuSchedule(const StmtP &body);

}  // namespace spl::cin
