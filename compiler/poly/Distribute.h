/// \file Distribute.h: a loop moved inward past the statements around its inner loop (loop
/// distribution with scalar and array expansion), for `reorder(i, k)` where k is not i's only
/// statement: a reduction's accumulator between them (gemm's `acc = 0; forall k {...};
/// C[i] = f(acc)`), or the accumulator array an earlier such reorder made. The distribution
/// alone, for `distribute(i, k)`: a loop's statements after k apart from those before it (a
/// fused symv's finishing of its rows, after the loop that adds to them).
///
/// Takes:      a forall `outer` (i in [lo, hi)) whose body is, inside any temporaries allocated
///             per iteration (Alloc), either the forall `inner` (k) alone or a block holding it
///             among other statements: `pre` before it, `post` after it.
/// Gives:      the same computation with the middle nest interchanged:
///               alloc X'[E], ... { forall i_before {pre}; forall k { forall i {k's body} }; forall i_after {post} }
///             Every value private to an iteration of i becomes a cell of an array over i (index
///             i - lo; E is a constant bound of hi - lo, else hi when lo = 0): a local declared
///             by a statement of `pre` (its declaration a store, its reads and writes the cell),
///             and a temporary allocated in i's body (X[x] becomes X'[i - lo, x]). Locals
///             declared in `post` or inside k stay as they are. The interchange goes through isl
///             (poly/Tile.h's interchangeNest), so bounds of k affine in i are exchanged too;
///             k, which updated a private value, now updates cells and runs in order (Serial).
/// Assumes:    the caller checked that i carries no dependence: its iterations are independent,
///             so running all of one part before the next keeps every dependence, and the
///             middle nest's interchange keeps each i's k iterations in order.
/// Fails:      nullopt and `why` when the body is not of that form, a private value is used in
///             a bound or an index (it cannot become an array cell there), no size bounds the
///             extent of i, or isl cannot exchange the bounds.
#pragma once

#include <optional>
#include <string>

#include "cin/Cin.h"

namespace spl::poly {

/// The distributed and interchanged nest; new temporaries are appended to `tensors`.
/// The copies of the outer loop around `pre` and `post` are named `beforeName`, `afterName`
/// (the middle one keeps its variable and name, so later commands naming it find it).
std::optional<cin::StmtP> distributeInterchange(const cin::Stmt &outer, const cin::Stmt &inner, const std::string &beforeName,
                                                const std::string &afterName, std::vector<cin::TensorP> &tensors,
                                                std::string &why);

/// distribute(i, k): the same distribution without the interchange,
///               alloc X'[E], ... { forall i_before {pre}; forall i {k}; forall i_after {post} }
/// with the loops' kinds as they were. Assumes the caller checked that no dependence i carries
/// goes from a later part to an earlier one (poly/Dependences.h's checkDistribution).
std::optional<cin::StmtP> distributeLoop(const cin::Stmt &outer, const cin::Stmt &inner, const std::string &beforeName,
                                         const std::string &afterName, std::vector<cin::TensorP> &tensors, std::string &why);

}  // namespace spl::poly
