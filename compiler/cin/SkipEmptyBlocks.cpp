// SkipEmptyBlocks.cpp: a block whose finishing nest writes nothing is not computed, nor a
// register tile of a block whose part of the sums it does not read (SkipEmptyBlocks.h says what
// is assumed). syrk and syr2k take gemm's blocked schedule and keep one triangle of C: without
// this, every block below (or above) the diagonal computed its 256 x 256 sums for nothing, twice
// the multiplications, and the blocks on the diagonal half their sums (a quarter more
// multiplications than the triangle's at n = 1000).
#include "cin/SkipEmptyBlocks.h"

#include <functional>
#include <map>
#include <set>

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

/// The finishing nest with its x range cut to [x0, x1) and each y loop's range to [y0, y1): the
/// nest as it runs over one tile's box (runsOnce of it tests the tile).
StmtP restricted(const Stmt &f, const Nat &x0, const Nat &x1, const Nat &y0, const Nat &y1) {
  auto cut = [&](const StmtP &y) {
    auto c = std::make_shared<Stmt>(*y);
    c->lo = Nat::max(y->lo, y0);
    c->hi = Nat::min(y->hi, y1);
    return StmtP(c);
  };
  auto copy = std::make_shared<Stmt>(f);
  copy->lo = Nat::max(f.lo, x0);
  copy->hi = Nat::min(f.hi, x1);
  const StmtP &inner = only(f.body[0]);
  if (inner->kind == StmtKind::Forall) {
    copy->body = {cut(inner)};
  } else {
    auto branch = std::make_shared<Stmt>(*inner);
    branch->body = {cut(only(inner->body[0])), cut(only(inner->body[1]))};
    copy->body = {branch};
  }
  return copy;
}

/// `fn` on every access of tensor t in the expressions of s and the statements below it.
void accessesOf(const StmtP &s, int64_t t, const std::function<void(const Expr &)> &fn) {
  forEachStmt(s, [&](const StmtP &st) {
    for (const ExprP &e : {st->lhs, st->value})
      if (e)
        anyExpr(e, [&](const Expr &x) {
          if (x.kind == ExprKind::Access && x.tensor->id == t) fn(x);
          return false;
        });
  });
}

/// The coefficient c of loop t in `n` when n = c * t + r, c a positive integer and r free of t.
std::optional<int64_t> stepOf(const Nat &n, int64_t t) {
  for (const Nat::Term &term : n.terms())
    if (term.mono.factors.size() == 1 && term.mono.factors[0].second == 1 &&
        term.mono.factors[0].first->kind == NatAtomKind::Var && term.mono.factors[0].first->var.id == t &&
        term.coeff.isInt() && term.coeff.num() > 0) {
      Nat rest = n - Nat::var({t, ""}) * Nat(term.coeff.num());
      if (!rest.mentions(t)) return term.coeff.num();
    }
  return std::nullopt;
}

/// Is hi at most lo + step: lo + e with e <= step, the min of such an arm and others, or the max
/// of such arms?
bool withinStep(const Nat &lo, const Nat &hi, int64_t step) {
  if (std::optional<int64_t> e = (hi - lo).asConst()) return *e <= step;
  if (hi.terms().size() != 1) return false;
  const Nat::Term &t = hi.terms()[0];
  if (t.coeff != Rat(1) || t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) return false;
  const NatAtom &a = *t.mono.factors[0].first;
  if (a.kind != NatAtomKind::Min && a.kind != NatAtomKind::Max) return false;
  bool some = false, all = true;
  for (const Nat &arm : a.args) {
    bool w = withinStep(lo, arm, step);
    some = some || w, all = all && w;
  }
  return a.kind == NatAtomKind::Min ? some : all;
}

/// Register tiles inside a block that straddles the diagonal (syrk's blocks on it): a tile
/// whose part of the block's sums the finishing nest f never reads is skipped too, where that
/// can be shown. f reads the block's sums S at S[x + o0, y + o1] (x, y its loops). A tile is the
/// body of a loop among the block's statements whose accesses of S (reads and stores) are all
/// S[u + o0, v + o1], u and v loops of the body whose ranges are the same at every access and
/// free of the body's other loops: the box [X0, X1) x [Y0, Y1) of S it touches. Tiles touch
/// disjoint boxes where X0 = c * t + r, t a loop around the tile, r free of the block's loops
/// and X1 <= X0 + c (Y likewise): the tile loops' steps. Then each element of S that f reads is
/// touched by the runs of one tile only (and written, besides, by statements that only store
/// into S: a tile's sums set to 0; a read of S outside a tile gives up, checked after), so a
/// tile whose box f does not read (runsOnce of f cut to the box is false) is skipped with no
/// effect on what f reads. Assumed, not checked: inside a tile an element of S flows only into
/// itself (an accumulator per element of the result, as the reorders make it, copied into a
/// register tile and back element by element); no schedule makes one element's sum read
/// another's.
class TileSkipper {
 public:
  TileSkipper(int64_t sums, const Stmt &finish, const std::vector<StmtP> &before) : sums_(sums), finish_(finish) {
    for (const StmtP &b : before)
      forEachStmt(b, [&](const StmtP &st) {
        if (st->kind == StmtKind::Forall) blockLoops_.push_back(st->var);
      });
  }

  /// Finds the offsets of S's indices in f; false where f reads S otherwise.
  bool readOffsets() {
    std::vector<int64_t> ys;
    forEachStmt(finish_.body[0], [&](const StmtP &st) {
      if (st->kind == StmtKind::Forall) ys.push_back(st->var);
    });
    auto freeOfNest = [&](const Nat &n) {
      if (n.mentions(finish_.var)) return false;
      for (int64_t y : ys)
        if (n.mentions(y)) return false;
      return true;
    };
    bool ok = true, seen = false;
    accessesOf(std::make_shared<Stmt>(finish_), sums_, [&](const Expr &a) {
      if (!ok || a.indices.size() != 2) return void(ok = false);
      Nat o0 = a.indices[0] - Nat::var({finish_.var, ""});
      std::optional<Nat> o1;
      for (int64_t y : ys)
        if (Nat d = a.indices[1] - Nat::var({y, ""}); freeOfNest(d)) o1 = d;
      if (!freeOfNest(o0) || !o1 || (seen && (o0 != offset_[0] || *o1 != offset_[1]))) return void(ok = false);
      offset_[0] = o0, offset_[1] = *o1;
      seen = true;
    });
    return ok && seen;
  }

  /// `s`, one of the block's statements before f, with its tiles guarded; `around`: the block's
  /// loops around s.
  StmtP guard(const StmtP &s, std::vector<int64_t> &around) {
    auto c = std::make_shared<Stmt>(*s);
    if (s->kind == StmtKind::Forall) {
      around.push_back(s->var);
      if (ExprP test = tileTest(s->body[0], around)) {
        c->body = {ifThen(test, s->body[0])};
        tiles_.insert(c->body[0].get());
      } else {
        c->body = {guard(s->body[0], around)};
      }
      around.pop_back();
      return c;
    }
    for (StmtP &b : c->body)
      if (b) b = guard(b, around);
    return c;
  }

  /// Does a statement outside the tiles read S (then the tiles' guards are not safe)?
  bool readsOutsideTiles(const StmtP &s) const {
    if (tiles_.count(s.get())) return false;
    if (s->value && readsTensor(s->value, sums_)) return true;
    if (s->lhs && s->lhs->kind == ExprKind::Access &&
        (s->lhs->tensor->id == sums_ ? s->compound : readsTensor(s->lhs, sums_)))
      return true;
    for (const StmtP &b : s->body)
      if (b && readsOutsideTiles(b)) return true;
    return false;
  }

  int tiles() const { return static_cast<int>(tiles_.size()); }

 private:
  /// The test that f reads an element of the box `body` touches, or null where body is no tile.
  ExprP tileTest(const StmtP &body, const std::vector<int64_t> &around) const {
    std::map<int64_t, const Stmt *> loops;  // the body's own
    forEachStmt(body, [&](const StmtP &st) {
      if (st->kind == StmtKind::Forall) loops[st->var] = st.get();
    });
    std::optional<Nat> box[2][2];
    bool ok = true;
    accessesOf(body, sums_, [&](const Expr &a) {
      if (a.indices.size() != 2) return void(ok = false);
      for (int d = 0; ok && d < 2; ++d) {
        std::optional<NatVarId> v = (a.indices[d] - offset_[d]).asVar();
        auto it = v ? loops.find(v->id) : loops.end();
        if (it == loops.end()) return void(ok = false);
        const Stmt &l = *it->second;
        for (const auto &[id, other] : loops)
          if (l.lo.mentions(id) || l.hi.mentions(id)) return void(ok = false);
        // Ranges from one start: the box to the farthest end (a partial tile's min(n, ...)).
        if (box[d][0] && *box[d][0] != l.lo) return void(ok = false);
        box[d][1] = !box[d][0] || *box[d][1] == l.hi ? l.hi : Nat::max(*box[d][1], l.hi);
        box[d][0] = l.lo;
      }
    });
    if (!ok || !box[0][0]) return nullptr;
    for (int d = 0; d < 2; ++d) {
      bool disjoint = false;
      for (int64_t t : around) {
        std::optional<int64_t> step = stepOf(*box[d][0], t);
        if (!step) continue;
        Nat rest = *box[d][0] - Nat::var({t, ""}) * Nat(*step);
        bool free = true;
        for (int64_t b : blockLoops_) free = free && !rest.mentions(b);
        if (free && withinStep(*box[d][0], *box[d][1], *step)) disjoint = true;
      }
      if (!disjoint) return nullptr;
    }
    return runsOnce(*restricted(finish_, *box[0][0], *box[0][1], *box[1][0], *box[1][1]));
  }

  int64_t sums_;
  const Stmt &finish_;
  std::vector<int64_t> blockLoops_;
  Nat offset_[2];
  std::set<const Stmt *> tiles_;
};

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
    copy->body = {ifThen(runs, withTilesSkipped(m->body[0], temps, locals, body))};
    return copy;
  }

  /// T's body with the register tiles of its block that f never reads skipped (TileSkipper),
  /// where the block's sums are the one temporary f reads and f's bounds read no local of the
  /// block (a tile's test stands where the tile is); else as it is.
  static StmtP withTilesSkipped(const StmtP &chain, const std::vector<int64_t> &temps, const std::vector<int64_t> &locals,
                                const StmtP &body) {
    const Stmt &finish = *only(body->body.back());
    bool boundsReadLocals = false;
    forEachStmt(body->body.back(), [&](const StmtP &st) {
      if (st->kind == StmtKind::Forall)
        for (int64_t l : locals) boundsReadLocals = boundsReadLocals || st->lo.mentions(l) || st->hi.mentions(l);
    });
    if (boundsReadLocals) return chain;
    std::vector<int64_t> read;
    for (int64_t t : temps)
      if (anyStmt(body->body.back(), [&](const Stmt &st) { return (st.value && readsTensor(st.value, t)); }))
        read.push_back(t);
    if (read.size() != 1) return chain;
    std::vector<StmtP> before(body->body.begin(), body->body.end() - 1);
    TileSkipper tiles(read[0], finish, before);
    if (!tiles.readOffsets()) return chain;
    std::vector<StmtP> guarded;
    std::vector<int64_t> around;
    for (const StmtP &b : before) guarded.push_back(tiles.guard(b, around));
    if (tiles.tiles() == 0) return chain;
    for (const StmtP &g : guarded)
      if (tiles.readsOutsideTiles(g)) return chain;
    guarded.push_back(body->body.back());
    // The chain of temporaries down to `body`, copied around the new block.
    std::function<StmtP(const StmtP &)> rebuild = [&](const StmtP &s) -> StmtP {
      if (s == body) return block(guarded);
      auto c = std::make_shared<Stmt>(*s);
      c->body = {rebuild(s->body[0])};
      return c;
    };
    return rebuild(chain);
  }
};

}  // namespace

void skipEmptyBlocks(Kernel &k) { k.body = Skipper().mutate(k.body); }

}  // namespace spl::cin
