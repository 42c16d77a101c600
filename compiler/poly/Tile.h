/// \file Tile.h: tiling and interchange of a perfect nest of two loops through isl (schedule
/// tree + AST).
///
/// Takes:      a CIN forall `outer` whose body is exactly one forall `inner`, and the tile
///             sizes. Bounds are affine (Var atoms: kernel nats, enclosing loop variables, the
///             outer variable) or invariant in the band (no outer or inner variable, e.g. a CSR
///             row's length `offs@(i + 1) - offs@i` inside row i): such a bound is one isl
///             parameter.
/// Gives:      the tiled nest as CIN, generated from isl's AST: the nest's domain
///             { S[i, j] : lo_i <= i < hi_i and lo_j <= j < hi_j } gets the band schedule
///             S[i, j] -> [i, j], isl_schedule_band_tile splits it into tile loops (over tile
///             indices) and point loops, isl_ast_build_node_from_schedule builds the loops, and
///             each AST for loop becomes a forall whose bounds are the AST's expressions as Nats
///             (sums, products by constants, min, max and floor division by constants). The
///             inner body is reused with i and j replaced by the AST's index expressions. The
///             point loops keep the original variables, names and kinds; the tile loops get
///             fresh ones named `tileNames`.
/// Assumes:    the caller checked legality (the band is permutable: tiling reorders
///             iterations across tiles).
/// Fails:      returns nullopt with `why` when a bound is not affine or isl's AST holds
///             something this translation does not cover (a guard, a non-unit stride).
#pragma once

#include <optional>
#include <string>

#include "cin/Cin.h"

namespace spl::poly {

/// interchangeNest: the same nest with the band S[i, j] -> [j, i]; isl's AST gives the bounds of
/// the exchanged loops (a triangle 0 <= j <= i < n becomes j in [0, n), i in [j, n)). The loops
/// keep their variables, names and kinds. Assumes the caller checked legality.
std::optional<cin::StmtP> interchangeNest(const cin::Stmt &outer, const cin::Stmt &inner, std::string &why);

std::optional<cin::StmtP> tileNest(const cin::Stmt &outer, const cin::Stmt &inner, int64_t outerTile, int64_t innerTile,
                                   const std::string &outerTileName, const std::string &innerTileName, std::string &why);

}  // namespace spl::poly
