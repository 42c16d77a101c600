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
#include <sstream>

namespace spl::poly {
namespace {

using cin::Stmt;
using cin::StmtP;

/// Names for the atoms of affine bounds: every Var atom is an isl parameter or one of the two
/// nest dimensions.
struct AffineNames {
  int64_t outerVar = 0, innerVar = 0;
  std::map<int64_t, std::string> params;  // Var atom id -> isl parameter name
  std::map<std::string, NatVarId> back;   // isl parameter name -> the Var
};

std::optional<std::string> affineText(const Nat &n, AffineNames &names) {
  std::ostringstream os;
  bool first = true;
  for (const Nat::Term &t : n.terms()) {
    auto c = t.coeff.isInt() ? std::optional<int64_t>(t.coeff.num()) : std::nullopt;
    if (!c) return std::nullopt;
    std::string atom;
    if (t.mono.factors.empty()) {
      atom = "";
    } else if (t.mono.factors.size() == 1 && t.mono.factors[0].second == 1 && t.mono.factors[0].first->kind == NatAtomKind::Var) {
      const NatVarId &v = t.mono.factors[0].first->var;
      if (v.id == names.outerVar) atom = "i";
      else if (v.id == names.innerVar) atom = "j";
      else {
        auto it = names.params.find(v.id);
        if (it == names.params.end()) {
          std::string p = "p" + std::to_string(names.params.size());
          it = names.params.emplace(v.id, p).first;
          names.back.emplace(p, v);
        }
        atom = it->second;
      }
    } else {
      return std::nullopt;  // a product of atoms, a lookup, a min/max...: not handled here
    }
    int64_t mag = *c < 0 ? -*c : *c;
    os << (*c < 0 ? (first ? "-" : " - ") : (first ? "" : " + ")) << mag << (atom.empty() ? "" : "*" + atom);
    first = false;
  }
  if (first) os << "0";
  return os.str();
}

/// An isl AST expression as a Nat: iterators by `iters`, parameters by `names`.
std::optional<Nat> natOf(isl_ast_expr *e, const std::map<std::string, Nat> &iters, const AffineNames &names) {
  std::map<std::string, Nat> ids = iters;
  for (const auto &[p, v] : names.back) ids.emplace(p, Nat::var(v));
  return natOfAstExpr(e, ids);
}

struct Translator {
  const Stmt &outer, &inner;
  AffineNames names;
  std::vector<NatVarId> loopVars;        // per AST depth: tile i, tile j, point i, point j
  std::vector<std::string> loopNames;
  std::vector<cin::ForallKind> loopKinds;
  std::map<std::string, Nat> iters;      // isl iterator name -> the forall variable
  int depth = 0;
  std::string why;

  std::optional<StmtP> node(isl_ast_node *n) {
    switch (isl_ast_node_get_type(n)) {
      case isl_ast_node_block: {
        isl_ast_node_list *list = isl_ast_node_block_get_children(n);
        std::vector<StmtP> out;
        for (int k = 0; k < isl_ast_node_list_n_ast_node(list); ++k) {
          isl_ast_node *c = isl_ast_node_list_get_ast_node(list, k);
          std::optional<StmtP> s = node(c);
          isl_ast_node_free(c);
          if (!s) {
            isl_ast_node_list_free(list);
            return std::nullopt;
          }
          out.push_back(*s);
        }
        isl_ast_node_list_free(list);
        return cin::block(out);
      }
      case isl_ast_node_mark: {
        isl_ast_node *c = isl_ast_node_mark_get_node(n);
        std::optional<StmtP> s = node(c);
        isl_ast_node_free(c);
        return s;
      }
      case isl_ast_node_for: return forNode(n);
      case isl_ast_node_user: return userNode(n);
      default: why = "isl's AST holds a guard or a node kind the translation does not take"; return std::nullopt;
    }
  }

  std::optional<StmtP> forNode(isl_ast_node *n) {
    if (depth >= static_cast<int>(loopVars.size())) {
      why = "isl's AST is deeper than the tiled band";
      return std::nullopt;
    }
    isl_ast_expr *it = isl_ast_node_for_get_iterator(n);
    isl_id *id = isl_ast_expr_get_id(it);
    std::string iter = isl_id_get_name(id);
    isl_id_free(id);
    isl_ast_expr_free(it);
    isl_ast_expr *init = isl_ast_node_for_get_init(n), *cond = isl_ast_node_for_get_cond(n), *inc = isl_ast_node_for_get_inc(n);
    std::optional<Nat> lo = natOf(init, iters, names), step = natOf(inc, iters, names);
    // The condition is `iter <= e` or `iter < e`.
    std::optional<Nat> hi;
    if (isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_get_op_n_arg(cond) == 2) {
      isl_ast_expr *rhs = isl_ast_expr_get_op_arg(cond, 1);
      std::optional<Nat> e = natOf(rhs, iters, names);
      isl_ast_expr_free(rhs);
      isl_ast_expr_op_type op = isl_ast_expr_get_op_type(cond);
      if (e && op == isl_ast_expr_op_le) hi = *e + Nat(1);
      if (e && op == isl_ast_expr_op_lt) hi = *e;
    }
    isl_ast_expr_free(init);
    isl_ast_expr_free(cond);
    isl_ast_expr_free(inc);
    if (!lo || !hi || !step || step->asConst() != std::optional<int64_t>(1)) {
      why = "isl's loop `" + iter + "` has bounds or a stride the translation does not take";
      return std::nullopt;
    }
    int d = depth++;
    iters[iter] = Nat::var(loopVars[d]);
    isl_ast_node *body = isl_ast_node_for_get_body(n);
    std::optional<StmtP> b = node(body);
    isl_ast_node_free(body);
    --depth;
    if (!b) return std::nullopt;
    return cin::forall(loopVars[d].id, loopNames[d], *lo, *hi, *b, loopKinds[d], outer.loc);
  }

  std::optional<StmtP> userNode(isl_ast_node *n) {
    isl_ast_expr *call = isl_ast_node_user_get_expr(n);
    std::optional<Nat> i, j;
    if (isl_ast_expr_get_op_n_arg(call) == 3) {
      isl_ast_expr *a = isl_ast_expr_get_op_arg(call, 1), *b = isl_ast_expr_get_op_arg(call, 2);
      i = natOf(a, iters, names);
      j = natOf(b, iters, names);
      isl_ast_expr_free(a);
      isl_ast_expr_free(b);
    }
    isl_ast_expr_free(call);
    if (!i || !j) {
      why = "isl's statement instance has index expressions the translation does not take";
      return std::nullopt;
    }
    NatSubst sub;
    sub.vars.emplace(outer.var, *i);
    sub.vars.emplace(inner.var, *j);
    return cin::substitute(inner.body[0], sub);
  }
};

}  // namespace

std::optional<StmtP> tileNest(const Stmt &outer, const Stmt &inner, int64_t outerTile, int64_t innerTile,
                              const std::string &outerTileName, const std::string &innerTileName, std::string &why) {
  Translator tr{outer, inner, {}, {}, {}, {}, {}, 0, {}};
  tr.names.outerVar = outer.var;
  tr.names.innerVar = inner.var;
  auto loI = affineText(outer.lo, tr.names), hiI = affineText(outer.hi, tr.names);
  auto loJ = affineText(inner.lo, tr.names), hiJ = affineText(inner.hi, tr.names);
  if (!loI || !hiI || !loJ || !hiJ) {
    why = "the loop bounds are not affine in the kernel's nats and the outer index";
    return std::nullopt;
  }
  std::string params;
  for (const auto &[id, p] : tr.names.params) params += (params.empty() ? "" : ", ") + p;
  std::string domainText = "[" + params + "] -> { S[i, j] : " + *loI + " <= i < " + *hiI + " and " + *loJ + " <= j < " + *hiJ + " }";
  std::string contextText = "[" + params + "] -> { : ";
  bool any = false;
  for (const auto &[id, p] : tr.names.params) {
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
      NatVarId ti = freshNatVar(outerTileName), tj = freshNatVar(innerTileName);
      tr.loopVars = {ti, tj, NatVarId{outer.var, outer.varName}, NatVarId{inner.var, inner.varName}};
      tr.loopNames = {outerTileName, innerTileName, outer.varName, inner.varName};
      tr.loopKinds = {outer.forall, inner.forall, outer.forall, inner.forall};
      result = tr.node(ast);
      if (!result) why = tr.why;
      isl_ast_node_free(ast);
    }
  }
  isl_union_set_free(domain);
  isl_set_free(context);
  isl_ctx_free(ctx);
  return result;
}

}  // namespace spl::poly
