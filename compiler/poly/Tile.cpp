/// \file Tile.cpp: tiling of a perfect nest through isl's schedule trees and AST (see Tile.h).
#include "poly/Tile.h"

#include "poly/IslAst.h"

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

#include <map>

namespace spl::poly {
namespace {

using cin::Stmt;
using cin::StmtP;

/// Names for the atoms of affine bounds: the two nest dimensions are `i` and `j`, every other
/// Var atom is an isl parameter.
struct AffineNames {
  int64_t outerVar = 0, innerVar = 0;
  std::map<int64_t, std::string> params;  // Var atom id -> isl parameter name
  std::map<std::string, Nat> back;        // isl parameter name -> the Var

  std::optional<std::string> text(const Nat &n) {
    return affineIslText(n, [this](const NatAtom &a) -> std::optional<std::string> {
      if (a.kind != NatAtomKind::Var) return std::nullopt;
      if (a.var.id == outerVar) return std::string("i");
      if (a.var.id == innerVar) return std::string("j");
      auto it = params.find(a.var.id);
      if (it == params.end()) {
        std::string p = "p" + std::to_string(params.size());
        it = params.emplace(a.var.id, p).first;
        back.emplace(p, Nat::var(a.var));
      }
      return it->second;
    });
  }

  /// A bound that is affine, or else invariant in the band (no i or j: CSR's
  /// `offs@(i + 1) - offs@i` inside a row): the whole bound is then one isl parameter.
  std::optional<std::string> bound(const Nat &n) {
    if (auto t = text(n)) return t;
    if (n.mentions(outerVar) || n.mentions(innerVar)) return std::nullopt;
    std::string p = "q" + std::to_string(opaque++);
    params.emplace(-opaque, p);  // listed with the parameters (negative keys: no Var atom)
    back.emplace(p, n);
    return p;
  }
  int64_t opaque = 0;
};

}  // namespace

std::optional<StmtP> tileNest(const Stmt &outer, const Stmt &inner, int64_t outerTile, int64_t innerTile,
                              const std::string &outerTileName, const std::string &innerTileName, std::string &why) {
  AffineNames names;
  names.outerVar = outer.var;
  names.innerVar = inner.var;
  auto loI = names.bound(outer.lo), hiI = names.bound(outer.hi);
  auto loJ = names.bound(inner.lo), hiJ = names.bound(inner.hi);
  if (!loI || !hiI || !loJ || !hiJ) {
    why = "the inner loop's bounds are not affine in the outer index";
    return std::nullopt;
  }
  std::string params;
  for (const auto &[id, p] : names.params) params += (params.empty() ? "" : ", ") + p;
  std::string domainText = "[" + params + "] -> { S[i, j] : " + *loI + " <= i < " + *hiI + " and " + *loJ + " <= j < " + *hiJ + " }";
  std::string contextText = "[" + params + "] -> { : ";
  bool any = false;
  for (const auto &[id, p] : names.params) {
    contextText += (any ? " and " : "") + p + " >= 0";
    any = true;
  }
  contextText += any ? " }" : "true }";

  isl_ctx *ctx = isl_ctx_alloc();
  isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
  isl_options_set_tile_scale_tile_loops(ctx, 0);  // tile loops count tiles
  isl_options_set_tile_shift_point_loops(ctx, 0);  // point loops run over the original indices
  std::optional<StmtP> result;
  isl_union_set *domain = isl_union_set_read_from_str(ctx, domainText.c_str());
  isl_set *context = isl_set_read_from_str(ctx, contextText.c_str());
  if (!domain || !context) {
    why = "isl could not read the nest's domain `" + domainText + "`";
  } else {
    isl_schedule *sched = isl_schedule_from_domain(isl_union_set_copy(domain));
    isl_multi_union_pw_aff *band =
        isl_multi_union_pw_aff_read_from_str(ctx, ("[" + params + "] -> [{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]").c_str());
    isl_schedule_node *root = isl_schedule_get_root(sched);
    isl_schedule_free(sched);
    isl_schedule_node *leaf = isl_schedule_node_child(root, 0);  // below the domain node
    leaf = isl_schedule_node_insert_partial_schedule(leaf, band);
    isl_multi_val *sizes = isl_multi_val_zero(isl_schedule_node_band_get_space(leaf));
    sizes = isl_multi_val_set_val(sizes, 0, isl_val_int_from_si(ctx, outerTile));
    sizes = isl_multi_val_set_val(sizes, 1, isl_val_int_from_si(ctx, innerTile));
    leaf = isl_schedule_node_band_tile(leaf, sizes);
    isl_schedule *tiled = isl_schedule_node_get_schedule(leaf);
    isl_schedule_node_free(leaf);
    isl_ast_build *build = isl_ast_build_from_context(isl_set_copy(context));
    isl_ast_node *ast = tiled ? isl_ast_build_node_from_schedule(build, tiled) : nullptr;
    isl_ast_build_free(build);
    if (!ast) {
      why = "isl could not tile the nest";
    } else {
      // The AST's loops, outermost first: tile i, tile j, point i, point j.
      std::vector<AstLoop> loops = {{freshNatVar(outerTileName), outerTileName, outer.forall},
                                    {freshNatVar(innerTileName), innerTileName, inner.forall},
                                    {NatVarId{outer.var, outer.varName}, outer.varName, outer.forall},
                                    {NatVarId{inner.var, inner.varName}, inner.varName, inner.forall}};
      AstToCin tr(
          names.back,
          [&](const std::string &, int depth) -> std::optional<AstLoop> {
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
  isl_ctx_free(ctx);
  return result;
}

}  // namespace spl::poly
