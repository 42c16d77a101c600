/// \file Tile.cpp: tiling and interchange of a perfect nest through isl's schedule trees and AST
/// (see Tile.h).
#include "poly/Tile.h"

#include "poly/IslAst.h"
#include "poly/IslSupport.h"

#include <isl/options.h>

#include <functional>
#include <map>

namespace spl::poly {
namespace {

using cin::Stmt;
using cin::StmtP;

/// The nest outer { inner } as the domain { S[i, j] }, the band [i, j] (`interchange`: [j, i])
/// that `shape` may transform (tile), and isl's AST of it read back with `loops` (outermost
/// first) and the inner body at S(i, j).
std::optional<StmtP> nestFromIsl(const Stmt &outer, const Stmt &inner, bool interchange,
                                 const std::function<isl::schedule_node(isl::schedule_node_band)> &shape,
                                 const std::vector<AstLoop> &loops, std::string &why) {
  IslContext owner;
  isl_options_set_tile_scale_tile_loops(owner.raw(), 0);   // tile loops count tiles
  isl_options_set_tile_shift_point_loops(owner.raw(), 0);  // point loops run over the original indices
  // The bounds: affine in i (and the kernel's nats, enclosing loops), or invariant in the band.
  IslParams names(owner.ctx(), {outer.var, inner.var});
  auto loI = names.declareInvariant(outer.lo), hiI = names.declareInvariant(outer.hi);
  auto loJ = names.declareInvariant(inner.lo), hiJ = names.declareInvariant(inner.hi);
  using D = IslParams::Declared;
  if (loI == D::No || hiI == D::No || loJ == D::No || hiJ == D::No) {
    why = "the inner loop's bounds are not affine in the outer index";
    return std::nullopt;
  }
  isl::ast_node ast;
  try {
    IslParams::Domain d = names.domain("S", {outer.var, inner.var});
    d.set = d.set.intersect(names.range(d, outer.var, outer.lo, loI, outer.hi, hiI))
                .intersect(names.range(d, inner.var, inner.lo, loJ, inner.hi, hiJ));
    isl::multi_union_pw_aff i(isl::union_pw_aff(IslParams::dim(d, outer.var)));
    isl::multi_union_pw_aff j(isl::union_pw_aff(IslParams::dim(d, inner.var)));
    isl::multi_union_pw_aff band = interchange ? j.flat_range_product(i) : i.flat_range_product(j);
    isl::schedule sched = isl::schedule::from_domain(isl::union_set(d.set));
    isl::schedule_node node = sched.root().child(0).insert_partial_schedule(band);
    ast = isl::ast_build::from_context(names.context()).node_from(shape(node.as<isl::schedule_node_band>()).schedule());
  } catch (const isl::exception &e) {
    why = owner.quotaExceeded(e) ? IslContext::quotaReason("generating the nest's loops") : "isl could not generate the nest's loops";
    return std::nullopt;
  }
  AstToCin tr(
      names.meanings(),
      [&](const std::string &, int depth, const std::string &) -> std::optional<AstLoop> {
        if (depth >= static_cast<int>(loops.size())) return std::nullopt;
        return loops[static_cast<size_t>(depth)];
      },
      [&](const std::string &, const std::vector<Nat> &at, std::string &) -> std::optional<StmtP> {
        // S(i, j): the inner body at the AST's indices.
        NatSubst sub;
        sub.vars.emplace(outer.var, at.at(0));
        sub.vars.emplace(inner.var, at.at(1));
        return cin::substitute(inner.body[0], sub);
      },
      outer.loc);
  return tr.translate(ast, why);
}

/// The loop `f` regenerated: its variable, name, kind and hints.
AstLoop loopOf(const Stmt &f) { return {NatVarId{f.var, f.varName}, f.varName, f.forall, &f}; }

}  // namespace

std::optional<StmtP> tileNest(const Stmt &outer, const Stmt &inner, int64_t outerTile, int64_t innerTile,
                              const std::string &outerTileName, const std::string &innerTileName, std::string &why) {
  // The AST's loops, outermost first: tile i, tile j, point i, point j (no hints: the kinds
  // apply to the tile and the point loops alike).
  std::vector<AstLoop> loops = {{freshNatVar(outerTileName), outerTileName, outer.forall},
                                {freshNatVar(innerTileName), innerTileName, inner.forall},
                                {NatVarId{outer.var, outer.varName}, outer.varName, outer.forall},
                                {NatVarId{inner.var, inner.varName}, inner.varName, inner.forall}};
  auto tile = [&](const isl::schedule_node_band &band) -> isl::schedule_node {
    isl::multi_val sizes = isl::multi_val::zero(band.partial_schedule().space()).set_at(0, outerTile).set_at(1, innerTile);
    return band.tile(sizes);
  };
  return nestFromIsl(outer, inner, false, tile, loops, why);
}

std::optional<StmtP> interchangeNest(const Stmt &outer, const Stmt &inner, std::string &why) {
  return nestFromIsl(outer, inner, true, [](const isl::schedule_node_band &band) -> isl::schedule_node { return band; },
                     {loopOf(inner), loopOf(outer)}, why);
}

}  // namespace spl::poly
