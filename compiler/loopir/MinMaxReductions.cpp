/// \file MinMaxReductions.cpp: float min/max reductions whose accumulator is never NaN (see
/// the header).
#include "loopir/MinMaxReductions.h"

#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

/// Is `e` min or max of variable `v` and something else (either order)?
bool isMinMaxOf(const Expr &e, int v) {
  if (e.kind != ExprKind::MinMax) return false;
  for (const ExprP &a : e.args)
    if (a->kind == ExprKind::Var && a->var == v) return true;
  return false;
}

/// The float variables that are never NaN: declared in the body, every declaration gives a
/// constant that is not NaN or another such variable's value (loopir/PartialSums's partial
/// maxima start at their accumulator's), and every later value is min or max of the variable
/// and another value (visited in program order: a declaration comes before the variable's
/// uses; `settle` then drops the copies of variables that turned out NaN-able).
class NeverNan : public Visitor {
 public:
  std::map<int, bool> vars;  // variable -> still never NaN

  void settle() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto &[copy, source] : copies_)
        if (vars[copy] && !vars[source]) {
          vars[copy] = false;
          changed = true;
        }
    }
  }

 protected:
  void visitDecl(const Stmt &s) override {
    bool fromVar = s.a && s.a->kind == ExprKind::Var && s.a->type == s.type;
    bool ok = isFloatTy(s.type) && s.a && ((s.a->kind == ExprKind::Const && !std::isnan(s.a->fval)) || fromVar);
    if (ok && fromVar) copies_.emplace_back(s.var, s.a->var);
    note(s.var, ok);
    visitChildren(s);
  }
  void visitAssign(const Stmt &s) override {
    // A variable assigned before any declaration (not one of the body's) is not one of them.
    if (!vars.count(s.var)) vars.emplace(s.var, false);
    note(s.var, isMinMaxOf(*s.a, s.var));
    visitChildren(s);
  }
  void visitWarpReduce(const Stmt &s) override {
    note(s.var, false);
    visitChildren(s);
  }
  void visitArrive(const Stmt &s) override {
    note(s.var, false);
    visitChildren(s);
  }

 private:
  std::vector<std::pair<int, int>> copies_;  // (variable, the variable it was declared from)

  void note(int v, bool ok) {
    auto [it, fresh] = vars.emplace(v, ok);
    if (!fresh) it->second = it->second && ok;
  }
};

class Guard : public Mutator {
 public:
  explicit Guard(const std::map<int, bool> &neverNan) : neverNan_(neverNan) {}
  int rewritten = 0;

 protected:
  StmtP mutateAssign(const StmtP &s) override {
    auto it = neverNan_.find(s->var);
    if (it == neverNan_.end() || !it->second) return mutateChildren(s);
    const Expr &m = *s->a;
    std::vector<ExprP> args = m.args;
    // The operand that is not the accumulator (max(acc, acc) has none).
    const size_t other = args[0]->kind == ExprKind::Var && args[0]->var == s->var ? 1 : 0;
    if ((args[other]->kind == ExprKind::Var && args[other]->var == s->var) || guarded(*args[other], m.isMax))
      return s;
    const double bound = std::numeric_limits<double>::infinity();
    args[other] = mm(m.isMax, args[other], cFloat(m.isMax ? -bound : bound, args[other]->type));
    auto c = std::make_shared<Stmt>(*s);
    auto both = std::make_shared<Expr>(*mm(m.isMax, args[0], args[1]));
    both->neverNan = true;
    c->a = both;
    ++rewritten;
    return c;
  }

 private:
  /// Already max(e, -inf) (min(e, +inf)): the pass ran before.
  static bool guarded(const Expr &e, bool isMax) {
    if (e.kind != ExprKind::MinMax || e.isMax != isMax) return false;
    const Expr &c = *e.args[1];
    return c.kind == ExprKind::Const && std::isinf(c.fval) && (c.fval < 0) == isMax;
  }

  const std::map<int, bool> &neverNan_;
};

}  // namespace

int guardMinMaxReductions(Function &f) {
  if (f.cuda) return 0;
  NeverNan scan;
  scan.visit(f.body);
  scan.settle();
  Guard guard(scan.vars);
  f.body = guard.mutate(f.body);
  return guard.rewritten;
}

}  // namespace spl::loopir
