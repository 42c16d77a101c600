/// \file Tile.cpp: tiling and interchange of a perfect nest through isl's schedule trees and AST
/// (see Tile.h).
#include "poly/Tile.h"

#include "poly/IslAst.h"
#include "poly/IslSupport.h"

#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/ctx.h>
#include <isl/id.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <functional>
#include <map>

namespace spl::poly {
namespace {

using cin::Stmt;
using cin::StmtP;

/// The nest outer { inner } as the domain { S[i, j] }, a band `band` (isl text of a
/// multi_union_pw_aff over S) that `shape` may transform (tile), and isl's AST of it read back
/// with `loops` (outermost first) and the inner body at S(i, j).
std::optional<StmtP> nestFromIsl(const Stmt &outer, const Stmt &inner, const std::string &band,
                                 const std::function<isl_schedule_node *(isl_schedule_node *)> &shape,
                                 const std::vector<AstLoop> &loops, std::string &why) {
  // The bounds: affine in i (and the kernel's nats, enclosing loops), or invariant in the band.
  IslParams names({{outer.var, "i"}, {inner.var, "j"}});
  auto loI = names.invariant(outer.lo), hiI = names.invariant(outer.hi);
  auto loJ = names.invariant(inner.lo), hiJ = names.invariant(inner.hi);
  if (!loI || !hiI || !loJ || !hiJ) {
    why = "the inner loop's bounds are not affine in the outer index";
    return std::nullopt;
  }
  std::string domainText = names.space() + "{ S[i, j] : " + *loI + " <= i < " + *hiI + " and " + *loJ + " <= j < " + *hiJ + " }";
  std::string contextText = names.context();

  IslContext owner;
  isl_ctx *ctx = owner.raw();
  isl_options_set_tile_scale_tile_loops(ctx, 0);  // tile loops count tiles
  isl_options_set_tile_shift_point_loops(ctx, 0);  // point loops run over the original indices
  std::optional<StmtP> result;
  isl_union_set *domain = isl_union_set_read_from_str(ctx, domainText.c_str());
  isl_set *context = isl_set_read_from_str(ctx, contextText.c_str());
  if (!domain || !context) {
    why = "isl could not read the nest's domain `" + domainText + "`";
  } else {
    isl_schedule *sched = isl_schedule_from_domain(isl_union_set_copy(domain));
    isl_multi_union_pw_aff *mupa = isl_multi_union_pw_aff_read_from_str(ctx, (names.space() + band).c_str());
    isl_schedule_node *root = isl_schedule_get_root(sched);
    isl_schedule_free(sched);
    isl_schedule_node *node = isl_schedule_node_child(root, 0);  // below the domain node
    node = shape(isl_schedule_node_insert_partial_schedule(node, mupa));
    isl_schedule *shaped = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    isl_ast_build *build = isl_ast_build_from_context(isl_set_copy(context));
    isl_ast_node *ast = shaped ? isl_ast_build_node_from_schedule(build, shaped) : nullptr;
    isl_ast_build_free(build);
    if (!ast) {
      why = owner.quotaExceeded() ? IslContext::quotaReason("generating the nest's loops") : "isl could not generate the nest's loops";
    } else {
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
      result = tr.translate(ast, why);
      isl_ast_node_free(ast);
    }
  }
  isl_union_set_free(domain);
  isl_set_free(context);
  return result;
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
  auto tile = [&](isl_schedule_node *band) {
    isl_ctx *ctx = isl_schedule_node_get_ctx(band);
    isl_multi_val *sizes = isl_multi_val_zero(isl_schedule_node_band_get_space(band));
    sizes = isl_multi_val_set_val(sizes, 0, isl_val_int_from_si(ctx, outerTile));
    sizes = isl_multi_val_set_val(sizes, 1, isl_val_int_from_si(ctx, innerTile));
    return isl_schedule_node_band_tile(band, sizes);
  };
  return nestFromIsl(outer, inner, "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]", tile, loops, why);
}

std::optional<StmtP> interchangeNest(const Stmt &outer, const Stmt &inner, std::string &why) {
  return nestFromIsl(outer, inner, "[{ S[i, j] -> [(j)] }, { S[i, j] -> [(i)] }]",
                     [](isl_schedule_node *band) { return band; }, {loopOf(inner), loopOf(outer)}, why);
}

}  // namespace spl::poly
