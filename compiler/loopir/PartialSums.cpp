/// \file PartialSums.cpp: explicit partial sums of scalar loops over run-time strides (see the
/// header).
#include "loopir/PartialSums.h"

#include <algorithm>
#include <map>

#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

bool mentions(const ExprP &e, int v) {
  return anyExpr(e, [&](const Expr &x) { return x.kind == ExprKind::Var && x.var == v; });
}

/// How many times `s`'s expressions read variable `v`.
int usesOf(const StmtP &s, int v) {
  int uses = 0;
  anyStmt(s, [&](const Stmt &t) {
    for (const ExprP *e : {&t.a, &t.b, &t.step})
      anyExpr(*e, [&](const Expr &x) {
        uses += x.kind == ExprKind::Var && x.var == v;
        return false;
      });
    return false;
  });
  return uses;
}

/// Does some load of `s` move by k times a run-time value (x[base + k * incx])?
bool loadsByRunTimeStride(const StmtP &s, int k) {
  auto strided = [&](const Expr &x) {
    if (x.kind != ExprKind::Binary || x.binop != BinOp::Mul) return false;
    for (int i = 0; i < 2; ++i) {
      const ExprP &byK = x.args[i], &stride = x.args[1 - i];
      if (mentions(byK, k) && !mentions(stride, k) && stride->kind != ExprKind::Const) return true;
    }
    return false;
  };
  return anyStmt(s, [&](const Stmt &t) {
    for (const ExprP *e : {&t.a, &t.b})
      if (anyExpr(*e, [&](const Expr &x) { return x.kind == ExprKind::Load && anyExpr(x.args[0], strided); })) return true;
    return false;
  });
}

/// Statements a body may hold to be copied: nothing that loops, exits or synchronises.
bool copyable(const StmtP &s) {
  return !anyStmt(s, [](const Stmt &t) {
    switch (t.kind) {
      case StmtKind::Block:
      case StmtKind::Decl:
      case StmtKind::Assign:
      case StmtKind::Store:
      case StmtKind::If:
      case StmtKind::Prefetch:
        return false;
      default:
        return true;
    }
  });
}

/// A variable the loop carries: a sum, or a running minimum or maximum.
struct Accumulator {
  int var = 0;
  Ty type = Ty::F64;
  bool isMinMax = false, isMax = false;
  bool reassoc = false;  // a float sum's adds may reassociate

  /// The partial accumulators' start: the add's identity (-0.0 for floats, whose +0.0 would
  /// turn a sum of -0.0 into +0.0), or the accumulator's own value, which min and max take
  /// any number of times without a change (NaN included: maxNum(NaN, NaN) is NaN).
  ExprP start() const {
    if (isMinMax) return loopir::var(var, type);
    return isFloatTy(type) ? cFloat(-0.0, type) : cInt(0, type);
  }
  ExprP combine(ExprP a, ExprP b) const { return isMinMax ? mm(isMax, a, b) : bin(BinOp::Add, a, b, reassoc); }
};

/// The variables `body` declares, with their types.
std::map<int, Ty> declaredIn(const StmtP &body) {
  std::map<int, Ty> out;
  anyStmt(body, [&](const Stmt &t) {
    if (t.kind == StmtKind::Decl) out.emplace(t.var, t.type);
    return false;
  });
  return out;
}

/// The accumulators of `body` (every variable it assigns without declaring), or false where
/// one is not `acc = acc + e` with a reassociable add, nor `acc = min(acc, e)` or max, every
/// assignment of it alike, acc read nowhere else.
bool accumulatorsOf(const StmtP &body, std::vector<Accumulator> &accs) {
  const std::map<int, Ty> local = declaredIn(body);
  std::map<int, int> assignments;
  bool ok = true;
  anyStmt(body, [&](const Stmt &t) {
    if (t.kind != StmtKind::Assign || local.count(t.var)) return false;
    const Expr &e = *t.a;
    Accumulator acc{t.var, e.type, e.kind == ExprKind::MinMax, e.isMax, e.reassoc};
    bool isSum = e.kind == ExprKind::Binary && e.binop == BinOp::Add && (e.reassoc || !isFloatTy(e.type));
    bool selfOnce = false;
    if (isSum || acc.isMinMax)
      for (int i = 0; i < 2; ++i) {
        const ExprP &self = e.args[i], &other = e.args[1 - i];
        selfOnce = selfOnce || (self->kind == ExprKind::Var && self->var == t.var && !mentions(other, t.var));
      }
    ok = ok && selfOnce;
    if (!assignments[t.var]++) accs.push_back(acc);
    const Accumulator &first = *std::find_if(accs.begin(), accs.end(), [&](const Accumulator &a) { return a.var == t.var; });
    ok = ok && first.isMinMax == acc.isMinMax && first.isMax == acc.isMax && first.reassoc == acc.reassoc;
    return !ok;
  });
  if (!ok) return false;
  for (const Accumulator &a : accs)
    if (usesOf(body, a.var) != assignments[a.var]) return false;
  return !accs.empty();
}

/// `s` with each variable of `to` renamed (its declarations, assignments and uses).
StmtP renamed(const StmtP &s, const std::map<int, std::pair<int, Ty>> &to) {
  StmtP out = rewriteBottomUp(s, [&](const StmtP &t) -> StmtP {
    if (t->kind != StmtKind::Decl && t->kind != StmtKind::Assign) return t;
    auto it = to.find(t->var);
    if (it == to.end()) return t;
    auto c = std::make_shared<Stmt>(*t);
    c->var = it->second.first;
    return c;
  });
  for (const auto &[from, by] : to) out = substituteVar(out, from, var(by.first, by.second));
  return out;
}

/// `acc`'s partial accumulators `parts` combined pairwise (the tree keeps the last step's
/// operations independent), then with acc: `acc = acc op tree`, the form loopir/MinMaxReductions
/// recognises as a reduction's update.
ExprP combined(const Accumulator &acc, std::vector<ExprP> parts) {
  while (parts.size() > 1) {
    std::vector<ExprP> next;
    for (size_t i = 0; i + 1 < parts.size(); i += 2) next.push_back(acc.combine(parts[i], parts[i + 1]));
    if (parts.size() % 2) next.push_back(parts.back());
    parts = std::move(next);
  }
  return acc.combine(var(acc.var, acc.type), parts[0]);
}

}  // namespace

int splitStridedPartialSums(Function &f) {
  if (f.cuda) return 0;
  int next = f.freshVarId(), count = 0;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) -> StmtP {
    if (s->kind != StmtKind::For || s->step || s->vectorWidth != 1 || s->interleave < 2 ||
        (s->loop != LoopKind::Serial && s->loop != LoopKind::Reduction))
      return s;
    const StmtP &body = s->body[0];
    std::vector<Accumulator> accs;
    if (!copyable(body) || !loadsByRunTimeStride(body, s->var) || !accumulatorsOf(body, accs)) return s;
    const int sums = s->interleave, k = s->var;
    const std::map<int, Ty> local = declaredIn(body);
    // The body for iteration loopVar + offset, its accumulators renamed by `to` (none: the
    // accumulators themselves) and its own declarations fresh.
    auto copyFor = [&](int loopVar, int offset, std::map<int, std::pair<int, Ty>> to) {
      for (const auto &[v, t] : local) to[v] = {next++, t};
      ExprP at = var(loopVar, Ty::I64);
      if (offset) at = bin(BinOp::Add, at, cInt(offset));
      return renamed(substituteVar(body, k, at), to);
    };
    std::vector<StmtP> out, copies;
    std::vector<std::vector<ExprP>> parts(accs.size());  // each accumulator's partial ones
    for (int part = 0; part < sums; ++part) {
      std::map<int, std::pair<int, Ty>> to;
      for (size_t a = 0; part > 0 && a < accs.size(); ++a) {
        const int fresh = next++;
        to[accs[a].var] = {fresh, accs[a].type};
        out.push_back(decl(fresh, "acc_" + std::to_string(part), accs[a].type, accs[a].start()));
        parts[a].push_back(var(fresh, accs[a].type));
      }
      copies.push_back(copyFor(k, part, std::move(to)));
    }
    const int whole = next++;
    const ExprP lo = s->a, hi = s->b, steps = cInt(sums);
    out.push_back(decl(whole, s->name + "_whole", Ty::I64,
                       bin(BinOp::Add, lo, bin(BinOp::Mul, bin(BinOp::Div, bin(BinOp::Sub, hi, lo), steps), steps))));
    auto scalarLoop = [&](const StmtP &from) {
      auto l = std::make_shared<Stmt>(*from);
      l->vectorize = false;
      l->vectorWidth = 1;
      l->interleave = 1;
      l->unroll = 1;
      l->segment = Segment{};
      return l;
    };
    auto main = scalarLoop(s);
    main->b = var(whole, Ty::I64);
    main->step = steps;
    main->body = {block(std::move(copies))};
    out.push_back(main);
    for (size_t a = 0; a < accs.size(); ++a) out.push_back(assignVar(accs[a].var, combined(accs[a], std::move(parts[a]))));
    auto rest = scalarLoop(s);
    rest->var = next++;
    rest->name = s->name + "_rest";
    rest->a = var(whole, Ty::I64);
    rest->body = {copyFor(rest->var, 0, {})};
    out.push_back(rest);
    ++count;
    f.noGathers = true;
    return block(std::move(out));
  });
  return count;
}

}  // namespace spl::loopir
