/// \file Dependences.h: dependence analysis on the isl model, and a verdict for every loop.
///
/// Takes:      a PolyModel (PolyModel.h).
/// Gives:      the dependences between statement instances, per array:
///               flow   (read after write): value-based, by isl's dataflow analysis
///                      (isl_union_access_info_compute_flow) with must-writes as must-sources,
///                      which kill earlier writes, and may-writes as may-sources, which do not;
///               anti   (write after read) and output (write after write): memory-based, every
///                      pair of accesses to a common element in schedule order;
///             and for every forall a verdict:
///               parallel    no dependence is carried (iterations are independent);
///               (parallel also when every carried dependence is between atomic updates
///               `T[x] op= e` of a tensor T that the loop touches only so: they commute)
///               reduction   every carried dependence is on scalar accumulators X, and every
///                           statement in the loop that touches X is an update X = X op e whose
///                           op is reassociable (Expr::reassoc, the `reduce` combinations, or
///                           integer min/max), with the same op, reading X only there;
///               sequential  anything else; the reason names the carrying dependence (kind,
///                           array, source and sink statements, the carried relation);
///               unknown     isl ran out of its operations quota; treat as sequential.
///             A dependence S[x] -> T[y] is carried by the loop at depth d when S and T are both
///             in the loop, x and y agree on dimensions 0..d-1 and x_d < y_d.
/// Assumes:    the model's texts are well formed (PolyModel.cpp checks it).
/// Guarantees: sound on the model: since the model over-approximates instances and accesses,
///             a loop found parallel is parallel in the program, and a reduction is one.
///             Deterministic text (statement order, then array order).
/// Fails:      never with a user error; on the isl quota (isl_ctx_set_max_operations) every
///             verdict is "unknown" and quotaExceeded is set.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cin/Cin.h"
#include "poly/PolyModel.h"

namespace spl::poly {

enum class DepKind { Flow, Anti, Output };
const char *depKindName(DepKind k);

struct PolyDependence {
  DepKind kind = DepKind::Flow;
  int array = -1;             // PolyModel::arrays
  int source = -1, sink = -1; // PolyModel::statements
  std::string relation;       // isl map text: [params] -> { Ssrc[..] -> Ssink[..] : ... }
};

enum class LoopVerdict { Parallel, Reduction, Sequential, Unknown };
const char *loopVerdictName(LoopVerdict v);

struct LoopAnalysis {
  int loop = -1;
  LoopVerdict verdict = LoopVerdict::Unknown;
  std::vector<int> carried;                   // dependences carried by the loop
  std::vector<std::string> carriedRelations;  // the carried part of each
  std::vector<int> accumulators;              // Reduction: the arrays reassociated
  std::string reason;                         // in words
};

struct DependenceOptions {
  /// isl_ctx_set_max_operations for the whole analysis of one kernel.
  unsigned long maxOperations = 20000000;
};

struct DependenceAnalysis {
  bool quotaExceeded = false;
  std::vector<PolyDependence> deps;
  std::vector<LoopAnalysis> loops;  // one per PolyModel::loops, same order
};

DependenceAnalysis analyzeDependences(const PolyModel &m, const DependenceOptions &opts = {});

/// The dependences and the loop verdicts as text.
std::string print(const PolyModel &m, const DependenceAnalysis &d);

/// `splc --emit=isl` for one kernel: the model (domains, schedule, accesses), the
/// dependences and each loop's verdict.
std::string emitIsl(const cin::Kernel &k, const DependenceOptions &opts = {});

/// Checks the lowering's loop kinds against the analysis: a Parallel or Vector forall must be
/// found parallel, a Reduction forall parallel or a reduction. One line per disagreement (an
/// unknown verdict counts as one: it proves nothing).
std::vector<std::string> checkLoopKinds(const PolyModel &m, const DependenceAnalysis &d);

/// Fusing two sibling loops a before b (indices into PolyModel::loops) into one loop whose
/// iteration x runs a's body at x, then b's at x; the statements `between` them (indices into
/// PolyModel::statements, in program order after a's and before b's) move before a.
/// `conflict`: "" when that keeps every dependence, else the one it breaks, in words: a
/// dependence from a to a moved statement within one iteration of the enclosing loops, or from
/// a at x to b at y with x > y. `carried`: a dependence from a at x to b at y with x < y (the
/// fused loop carries it, so it runs in order).
struct FusionCheck {
  std::string conflict;
  bool carried = false;
};
FusionCheck checkFusion(const PolyModel &m, const DependenceAnalysis &d, int a, int b, const std::vector<int> &between);

/// Tiling the band of `outer` and `inner` (indices into PolyModel::loops; inner is the only
/// statement of outer, every statement of the band inside inner) keeps every dependence when the
/// band is permutable: within one iteration of the loops around it, no dependence between
/// statements of the band goes backwards in either loop (a source at a later outer or a later
/// inner index than its sink), except on the outer loop's reassociable accumulators (its
/// verdict is a reduction: their updates may run in any order). "" when permutable, else that
/// dependence in words.
std::string checkPermutableBand(const PolyModel &m, const DependenceAnalysis &d, int outer, int inner);

/// Distributing loop `loop` (an index into PolyModel::loops) over consecutive parts of its body,
/// `partOf` giving each statement inside it (an index into PolyModel::statements) its part,
/// numbered in program order: every iteration of one part then runs before any of the next.
/// That keeps a dependence the loop carries (source at iteration x, sink at y > x) when its
/// source's part comes no later than its sink's; dependences within one iteration already go
/// forward in program order. "" when every carried dependence is kept, else the first that is
/// not, in words.
std::string checkDistribution(const PolyModel &m, const DependenceAnalysis &d, int loop, const std::map<int, int> &partOf);

}  // namespace spl::poly
