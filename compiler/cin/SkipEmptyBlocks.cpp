// SkipEmptyBlocks.cpp: a block whose finishing nest writes nothing is not computed
// (SkipEmptyBlocks.h says what is assumed). syrk and syr2k take gemm's blocked schedule and
// keep one triangle of C: without this, every block below (or above) the diagonal computed
// its 256 x 256 sums for nothing, twice the multiplications.
#include "cin/SkipEmptyBlocks.h"

#include "cin/Visitor.h"

namespace spl::cin {
namespace {

/// How `n` moves as variable x grows: +1 never down, -1 never up, 0 free of x, nullopt
/// unknown. A term c * x counts by the sign of c, a term c * min(...) or c * max(...) by the
/// sign of c times the one direction all its arms share; any other term that mentions x
/// (a product, a division) is unknown.
std::optional<int> direction(const Nat &n, int64_t x) {
  int dir = 0;
  auto join = [&](int d) {
    if (d == 0) return true;
    if (dir != 0 && dir != d) return false;
    dir = d;
    return true;
  };
  for (const Nat::Term &t : n.terms()) {
    int sign = Rat(0) < t.coeff ? 1 : -1;
    bool mentions = false;
    for (const auto &[atom, power] : t.mono.factors)
      if (Nat::fromAtom(atom).mentions(x)) mentions = true;
    if (!mentions) continue;
    if (t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) return std::nullopt;
    const NatAtom &a = *t.mono.factors[0].first;
    if (a.kind == NatAtomKind::Var && a.var.id == x) {
      if (!join(sign)) return std::nullopt;
    } else if (a.kind == NatAtomKind::Min || a.kind == NatAtomKind::Max) {
      int armDir = 0;
      for (const Nat &arm : a.args) {
        std::optional<int> d = direction(arm, x);
        if (!d) return std::nullopt;
        if (*d != 0 && armDir != 0 && *d != armDir) return std::nullopt;
        if (*d != 0) armDir = *d;
      }
      if (!join(sign * armDir)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  return dir;
}

ExprP less(const Nat &a, const Nat &b) { return binary(ast::BinOp::Lt, natExpr(a), natExpr(b), Scalar::Bool); }

/// The test that loop y over [lo(x), hi(x)) runs at least once for some x in [a0, a1) (a0 < a1
/// tested by the caller), or null where lo - hi is not shown monotone in x.
ExprP runsForSomeX(const Stmt &y, const Stmt &x) {
  std::optional<int> lo = direction(y.lo, x.var), hi = direction(y.hi, x.var);
  if (!lo || !hi || (*lo != 0 && *hi != 0 && *lo == *hi)) return nullptr;
  auto at = [&](const Nat &v) {
    NatSubst s;
    s.vars[x.var] = v;
    return less(substitute(y.lo, s), substitute(y.hi, s));
  };
  return binary(ast::BinOp::Or, at(x.lo), at(x.hi - Nat(1)), Scalar::Bool);
}

/// The statement a block or a one-statement block stands for.
const StmtP &only(const StmtP &s) { return s->kind == StmtKind::Block && s->body.size() == 1 ? only(s->body[0]) : s; }

/// The test that the finishing nest `f` (forall x { forall y } or forall x { if c then forall
/// y1 else forall y2 }) runs at least once, or null.
ExprP runsOnce(const Stmt &f) {
  if (f.kind != StmtKind::Forall) return nullptr;
  const StmtP &inner = only(f.body[0]);
  ExprP some;
  if (inner->kind == StmtKind::Forall) {
    some = runsForSomeX(*inner, f);
  } else if (inner->kind == StmtKind::If && inner->body.size() == 2 && inner->body[1] &&
             !anyExpr(inner->value, [&](const Expr &e) { return natMentions(e, f.var) || e.kind == ExprKind::Access; })) {
    const StmtP &yes = only(inner->body[0]), &no = only(inner->body[1]);
    if (yes->kind != StmtKind::Forall || no->kind != StmtKind::Forall) return nullptr;
    ExprP a = runsForSomeX(*yes, f), b = runsForSomeX(*no, f);
    if (a && b) some = select(inner->value, a, b, Scalar::Bool);
  }
  if (!some) return nullptr;
  // A nest whose inner bounds are free of x (gemm's blocks) runs in every block a tile loop
  // gives it: no test.
  bool triangle = anyStmt(f.body[0], [&](const Stmt &y) { return y.kind == StmtKind::Forall && (y.lo.mentions(f.var) || y.hi.mentions(f.var)); });
  if (!triangle) return nullptr;
  return binary(ast::BinOp::And, less(f.lo, f.hi), some, Scalar::Bool);
}

class Skipper : public Mutator {
 protected:
  StmtP mutateForall(const StmtP &s) override {
    StmtP m = mutateChildren(s);
    // T's body: the block's temporaries around statements that write only them, then the
    // finishing nest.
    std::vector<int64_t> temps;
    StmtP body = m->body[0];
    while (body->kind == StmtKind::Alloc || (body->kind == StmtKind::Block && body->body.size() == 1)) {
      if (body->kind == StmtKind::Alloc) temps.push_back(body->tensor->id);
      body = body->body[0];
    }
    if (temps.empty() || body->kind != StmtKind::Block || body->body.size() < 2) return m;
    // Locals declared in the block are its own too; setting one from outside is an effect.
    std::vector<int64_t> locals;
    auto writesOnlyTemps = [&](const StmtP &st) {
      return !anyStmt(st, [&](const Stmt &x) {
        if (x.kind == StmtKind::Fail || x.kind == StmtKind::Barrier) return true;
        if (x.kind == StmtKind::Alloc) temps.push_back(x.tensor->id);
        if (x.kind == StmtKind::DeclLocal) locals.push_back(x.local);
        if (x.kind == StmtKind::SetLocal) return std::find(locals.begin(), locals.end(), x.local) == locals.end();
        return x.kind == StmtKind::Assign && std::find(temps.begin(), temps.end(), x.lhs->tensor->id) == temps.end();
      });
    };
    for (size_t i = 0; i + 1 < body->body.size(); ++i)
      if (!writesOnlyTemps(body->body[i])) return m;
    ExprP runs = runsOnce(*only(body->body.back()));
    // The test stands before the block: it may not read what the block's statements declare.
    auto declaredInside = [&](const Expr &e) {
      for (int64_t l : locals)
        if ((e.kind == ExprKind::Local && e.local == l) || natMentions(e, l)) return true;
      return false;
    };
    if (!runs || anyExpr(runs, declaredInside)) return m;
    auto copy = std::make_shared<Stmt>(*m);
    copy->body = {ifThen(runs, m->body[0])};
    return copy;
  }
};

}  // namespace

void skipEmptyBlocks(Kernel &k) { k.body = Skipper().mutate(k.body); }

}  // namespace spl::cin
