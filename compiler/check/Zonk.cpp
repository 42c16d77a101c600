/// \file Zonk.cpp: replaces solved metas in a def's TIR by their solutions, and reports the
/// expressions whose type could not be inferred.
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "support/Format.h"
#include "check/CheckerImpl.h"

namespace spl::check {

namespace {

bool hasMeta(const TypeP &t) {
  if (t->kind == TypeKind::Meta) return true;
  for (const TypeP &e : t->elems)
    if (hasMeta(e)) return true;
  for (const FunParam &p : t->params)
    if (!p.isNat && hasMeta(p.type)) return true;
  return false;
}

}  // namespace

tir::ExprP Checker::zonkExpr(const tir::ExprP &e) {
  std::map<int64_t, tir::VarP> vars;  // zonked copies, by id
  std::function<tir::VarP(const tir::VarP &)> zvar = [&](const tir::VarP &v) -> tir::VarP {
    if (!v) return v;
    auto it = vars.find(v->id);
    if (it != vars.end()) return it->second;
    auto nv = std::make_shared<tir::Var>(*v);
    nv->type = zonk(v->type);
    vars[v->id] = nv;
    return nv;
  };
  // A literal whose value its (inferred) type cannot hold is an error, not a wrapped or
  // rounded-to-infinity value: `x + 4294967297` with x: i32, `2147483648` as an i32, a float
  // beyond f32's range as an f32. `negated`: the literal is the operand of a unary minus
  // (`-2147483648` fits i32).
  auto checkLiteralRange = [&](const tir::Expr &lit, bool negated) {
    const TypeP &t = lit.type;
    if (t->kind != TypeKind::Scalar) return;
    bool integral = lit.fval == static_cast<double>(lit.ival);
    if (t->scalar == ScalarKind::I32 && integral) {
      int64_t v = negated ? -lit.ival : lit.ival;
      if (v < INT32_MIN || v > INT32_MAX)
        fail(lit.loc, fmt::format("the literal {} does not fit its type i32 (-2147483648 to 2147483647); use it where an "
                                  "i64 is expected",
                                  v));
    }
    if (t->scalar == ScalarKind::F32 && !std::isinf(lit.fval) && std::fabs(lit.fval) > static_cast<double>(FLT_MAX)) {
      fail(lit.loc, fmt::format("the literal {}{:g} does not fit its type f32 (at most about 3.4e38 in magnitude)",
                                negated ? "-" : "", lit.fval));
    }
  };
  const tir::Expr *negatedLiteral = nullptr;  // a literal under unary minus: checked negated
  std::function<tir::ExprP(const tir::ExprP &)> go = [&](const tir::ExprP &x) -> tir::ExprP {
    if (x->kind == tir::ExprKind::Unary && x->unop == ast::UnOp::Neg && x->args[0]->kind == tir::ExprKind::Lit)
      negatedLiteral = x->args[0].get();
    auto n = std::make_shared<tir::Expr>(*x);
    n->type = zonk(x->type);
    if (n->kind != tir::ExprKind::Lambda && hasMeta(n->type))
      fail(x->loc, "cannot infer the type of this expression (`" + types::str(n->type) + "`); annotate it with `: T`");
    n->nat = zonk(x->nat);
    for (Nat &k : n->natArgs) k = zonk(k);
    n->var = zvar(x->var);
    for (tir::Param &p : n->params) p.var = zvar(p.var);
    for (tir::ExprP &a : n->args) a = go(a);
    for (tir::CallArg &c : n->callArgs) {
      if (c.sort == tir::CallArg::Nat) c.nat = zonk(c.nat);
      if (c.type) {
        c.type = zonk(c.type);
        if (hasMeta(c.type)) fail(x->loc, "cannot infer the data argument of '" + x->def->name + "' at this call");
      }
      if (c.value) c.value = go(c.value);
    }
    if (n->kind == tir::ExprKind::Lit) {
      TypeP t = n->type;
      if (t->kind == TypeKind::Scalar && isFloat(t->scalar) && x->fval == 0 && x->ival != 0) n->fval = static_cast<double>(x->ival);
      checkLiteralRange(*n, x.get() == negatedLiteral);
    }
    if (x->kind == tir::ExprKind::CallDef) {
      // Check that the nat arguments were all inferred.
      for (const tir::CallArg &c : n->callArgs)
        if (c.sort == tir::CallArg::Nat) {
          std::vector<int64_t> ids;
          c.nat.collectIds(ids);
          for (int64_t id : ids)
            if (natMetas_.count(id) && !natSolutions_.vars.count(id))
              fail(x->loc, "cannot infer the implicit parameter '" + natMetaNames_[id] + "' of '" + x->def->name + "'");
        }
    }
    return n;
  };
  return go(e);
}

}  // namespace spl::check
