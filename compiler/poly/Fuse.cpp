/// \file Fuse.cpp: fusion of two sibling loops through isl's schedule tree and AST (see Fuse.h).
#include "poly/Fuse.h"

#include <isl/ast.h>
#include <isl/aff.h>
#include <isl/ast_build.h>
#include <isl/ctx.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <map>

#include "poly/IslAst.h"
#include "poly/IslSupport.h"

namespace spl::poly {

std::optional<cin::StmtP> fuseLoops(const cin::Stmt &a, const cin::Stmt &b, cin::ForallKind kind, std::string &why) {
  // Every Var atom of the bounds is an isl parameter (the kernel's nats, enclosing loops).
  IslParams names({});
  auto loA = names.text(a.lo), hiA = names.text(a.hi), loB = names.text(b.lo), hiB = names.text(b.hi);
  if (!loA || !hiA || !loB || !hiB) {
    why = "the loop bounds are not affine in the kernel's nats and the enclosing loops";
    return std::nullopt;
  }
  std::string space = names.space();
  std::string domainText =
      space + "{ A[x] : " + *loA + " <= x < " + *hiA + "; B[x] : " + *loB + " <= x < " + *hiB + " }";

  IslContext owner;
  isl_ctx *ctx = owner.raw();
  std::optional<cin::StmtP> result;
  isl_union_set *domain = isl_union_set_read_from_str(ctx, domainText.c_str());
  isl_set *ctxSet = isl_set_read_from_str(ctx, names.context().c_str());
  if (!domain || !ctxSet) {
    why = "isl could not read the loops' domain `" + domainText + "`";
    isl_union_set_free(domain);
    isl_set_free(ctxSet);
  } else {
    // domain -> band [x] -> sequence (A, B)
    isl_schedule *sched = isl_schedule_from_domain(isl_union_set_copy(domain));
    isl_schedule_node *node = isl_schedule_node_child(isl_schedule_get_root(sched), 0);
    isl_schedule_free(sched);
    isl_multi_union_pw_aff *band =
        isl_multi_union_pw_aff_read_from_str(ctx, (space + "[{ A[x] -> [(x)]; B[x] -> [(x)] }]").c_str());
    node = isl_schedule_node_insert_partial_schedule(node, band);
    // Separate: where the ranges differ isl splits the loop (the common range runs both bodies
    // unguarded, the rest only one) instead of guarding the bodies in every iteration.
    node = isl_schedule_node_band_member_set_ast_loop_type(node, 0, isl_ast_loop_separate);
    isl_union_set_list *filters = isl_union_set_list_alloc(ctx, 2);
    filters = isl_union_set_list_add(filters, isl_union_set_read_from_str(ctx, (space + "{ A[x] }").c_str()));
    filters = isl_union_set_list_add(filters, isl_union_set_read_from_str(ctx, (space + "{ B[x] }").c_str()));
    node = isl_schedule_node_child(node, 0);
    node = isl_schedule_node_insert_sequence(node, filters);
    isl_schedule *fused = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    isl_ast_build *build = isl_ast_build_from_context(ctxSet);
    isl_ast_node *ast = fused ? isl_ast_build_node_from_schedule(build, fused) : nullptr;
    isl_ast_build_free(build);
    isl_union_set_free(domain);
    if (!ast) {
      why = owner.quotaExceeded() ? IslContext::quotaReason("generating the fused loop") : "isl could not generate the fused loop";
    } else {
      // The first loop keeps a's variable and name; a loop isl adds for the iterations of one
      // body only (the rest of the longer range) gets a fresh one, named NAME_rest.
      int loops = 0;
      AstToCin tr(
          names.meanings(),
          [&](const std::string &, int depth, const std::string &) -> std::optional<AstLoop> {
            if (depth != 0) return std::nullopt;
            std::string name = loops == 0 ? a.varName : a.varName + "_rest" + (loops > 1 ? std::to_string(loops) : "");
            AstLoop l{loops == 0 ? NatVarId{a.var, a.varName} : freshNatVar(name), name, kind};
            ++loops;
            return l;
          },
          [&](const std::string &stmt, const std::vector<Nat> &at, std::string &) -> std::optional<cin::StmtP> {
            const cin::Stmt &loop = stmt == "A" ? a : b;
            NatSubst sub;
            sub.vars.emplace(loop.var, at.at(0));
            return cin::substitute(loop.body[0], sub);
          },
          a.loc);
      result = tr.translate(ast, why);
      isl_ast_node_free(ast);
    }
  }
  return result;
}

}  // namespace spl::poly
