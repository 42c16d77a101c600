/// \file Fuse.cpp: fusion of two sibling loops through isl's schedule tree and AST (see Fuse.h).
#include "poly/Fuse.h"

#include <map>

#include "poly/IslAst.h"
#include "poly/IslSupport.h"

namespace spl::poly {

std::optional<cin::StmtP> fuseLoops(const cin::Stmt &a, const cin::Stmt &b, cin::ForallKind kind, std::string &why) {
  // Every Var atom of the bounds is an isl parameter (the kernel's nats, enclosing loops).
  IslContext owner;
  IslParams names(owner.ctx(), {});
  using D = IslParams::Declared;
  D loA = names.declare(a.lo), hiA = names.declare(a.hi), loB = names.declare(b.lo), hiB = names.declare(b.hi);
  if (loA == D::No || hiA == D::No || loB == D::No || hiB == D::No) {
    why = "the loop bounds are not affine in the kernel's nats and the enclosing loops";
    return std::nullopt;
  }
  isl::ast_node ast;
  try {
    IslParams::Domain da = names.domain("A", {a.var}), db = names.domain("B", {b.var});
    da.set = da.set.intersect(names.range(da, a.var, a.lo, loA, a.hi, hiA));
    db.set = db.set.intersect(names.range(db, b.var, b.lo, loB, b.hi, hiB));
    isl::union_set domain = isl::union_set(da.set).unite(isl::union_set(db.set));
    // domain -> band [x] -> sequence (A, B)
    isl::union_pw_aff x = isl::union_pw_aff(IslParams::dim(da, a.var)).union_add(isl::union_pw_aff(IslParams::dim(db, b.var)));
    isl::schedule_node node = isl::schedule::from_domain(domain).root().child(0).insert_partial_schedule(isl::multi_union_pw_aff(x));
    // Separate: where the ranges differ isl splits the loop (the common range runs both bodies
    // unguarded, the rest only one) instead of guarding the bodies in every iteration.
    node = node.as<isl::schedule_node_band>().member_set_ast_loop_separate(0);
    isl::union_set_list filters(owner.ctx(), 2);
    filters = filters.add(isl::union_set(names.domain("A", {a.var}).set)).add(isl::union_set(names.domain("B", {b.var}).set));
    node = node.child(0).insert_sequence(filters);
    ast = isl::ast_build::from_context(names.context()).node_from(node.schedule());
  } catch (const isl::exception &e) {
    why = owner.quotaExceeded(e) ? IslContext::quotaReason("generating the fused loop") : "isl could not generate the fused loop";
    return std::nullopt;
  }
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
  return tr.translate(ast, why);
}

}  // namespace spl::poly
