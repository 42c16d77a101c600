/// \file IslCodegen.h: a kernel's loops regenerated from isl's AST (isl_ast_build), the last
/// step of the polyhedral pass before the loop IR.
///
/// Takes:      a scheduled cin::Kernel (after the user and default schedules; any target).
/// Gives:      the same kernel whose foralls are the for nodes of isl ASTs: each loop nest is
///             described to isl as statement domains and a schedule tree, isl builds the AST
///             (bounds, guards, degenerate loops) and poly/IslAst reads it back into CIN.
///             The kernel is cut into regions, as Polly cuts a function into SCoPs around its
///             non-affine parts:
///               - a region starts at a forall whose own bounds may be anything that does not
///                 mention the region's loops (a CSR row `offs@i .. offs@(i+1)`, a bound read
///                 from a local): each such bound is one isl parameter (it is evaluated where
///                 the loop starts, as before);
///               - it takes in every forall below it, through blocks, whose bounds are affine
///                 in the region's loops, the kernel's nats and the enclosing loops, and one
///                 convex piece (no max in an upper bound, no min in a lower one: isl would run
///                 such a union as a hull with a guard in every iteration; that loop starts a
///                 region of its own, where the bound is a parameter);
///               - everything else below it (assignments, locals, guards, allocations, the
///                 foralls with non-affine bounds) is a statement of the region, an opaque box
///                 whose instances are the iterations of the region loops around it; its inside
///                 is regenerated as regions of its own.
///             Each region's schedule tree is the program order: a band per loop (one member,
///             the loop's variable, AST loop type `atomic`, so no statement is copied) under a
///             mark naming the loop, and a sequence per block. isl computes the bounds; a loop
///             that runs once becomes a binding of its variable (isl's degenerate for), an
///             empty one disappears. Kinds, balance hints, vectorise and unroll hints, names and
///             source locations come back through the marks.
/// Assumes:    nothing beyond CIN's own rules (a bound is evaluated once, where its loop
///             starts; Var atoms are constant through the kernel except loop variables).
/// Guarantees: every statement of the input with instances appears once (a statement under an
///             empty loop may disappear with it), in its order and under the same loops; a
///             region isl's AST cannot express in CIN (a non-unit stride, a guard that is not
///             affine), that exceeds isl's quota or whose nest is deeper than 16 loops keeps its
///             original loops, and `kept` says why.
/// Fails:      never with a user error.
#pragma once

#include <string>
#include <vector>

#include "cin/Cin.h"

namespace spl::poly {

struct IslCodegenReport {
  /// Per region, outermost region first: isl's AST as C text (isl_ast_node_to_C_str), with the
  /// statements S0, S1, ... of the region.
  std::vector<std::string> asts;
  /// Regions that kept their original loops, with the reason.
  std::vector<std::string> kept;
};

/// The kernel's body with every region's loops from isl's AST.
cin::StmtP generateFromIsl(const cin::Kernel &k, IslCodegenReport *report = nullptr);

/// --emit=isl's "ast" section: the regions' ASTs of `k`.
std::string emitIslAst(const cin::Kernel &k);

}  // namespace spl::poly
