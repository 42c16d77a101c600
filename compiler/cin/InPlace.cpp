/// \file InPlace.cpp: a result written into its inputs (see InPlace.h).
#include "cin/InPlace.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "cin/Visitor.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::cin {
namespace {

bool isAccessTo(const Expr &e, const Tensor *t) { return e.kind == ExprKind::Access && e.tensor.get() == t; }

/// Does `s` (its expressions, at any depth) read tensor t?
bool readsTensor(const StmtP &s, const Tensor *t) {
  // An input is never assigned, so its accesses in a statement are reads of its expressions.
  return anyStmt(s, [&](const Stmt &x) {
    auto reads = [&](const Expr &e) { return isAccessTo(e, t); };
    return anyExpr(x.value, reads) || anyExpr(x.lhs, reads);
  });
}

/// The statements a kernel runs one after another: its blocks and allocations opened.
void units(const StmtP &s, std::vector<StmtP> &out) {
  if (!s) return;
  if (s->kind == StmtKind::Block || s->kind == StmtKind::Alloc) {
    for (const StmtP &c : s->body) units(c, out);
    return;
  }
  out.push_back(s);
}

/// Why the direct write could not be shown (the kernel then stages the result).
struct NotShown {
  std::string why;
};

/// One leaf of the result and the input it goes into, with what the proof found: the loop
/// whose iterations each write one element (`owner`), that element's indices, and the local
/// the input's element is read into.
struct Pair {
  std::vector<int> leaf;
  TensorP input;
  const Stmt *owner = nullptr;
  std::vector<Nat> index;
  int64_t local = 0;
};

class Prover {
 public:
  Prover(const Kernel &k, Pair &p) : k_(k), p_(p) {}

  void run() {
    std::vector<StmtP> seq;
    units(k_.body, seq);
    const Tensor *out = k_.resultTensor.get();
    auto writesLeaf = [&](const Stmt &x) {
      return x.kind == StmtKind::Assign && x.lhs->tensor.get() == out && x.lhs->leaf == p_.leaf;
    };
    size_t first = seq.size();
    for (size_t u = 0; u < seq.size() && first == seq.size(); ++u)
      if (anyStmt(seq[u], writesLeaf)) first = u;
    if (first == seq.size()) refuse("the result is never written");
    for (size_t u = first + 1; u < seq.size(); ++u)
      if (readsTensor(seq[u], p_.input.get()))
        refuse("'" + name() + "' is read after a loop that overwrote it");
    // The writes of the leaf in the first nest that writes it, with the loops around each.
    std::vector<const Stmt *> loops;
    walk(seq[first], loops, writesLeaf);
    if (!p_.owner) refuse("the result is not written one element per iteration");
    // Every read of the input in that nest is of the element the iteration writes.
    const Tensor *in = p_.input.get();
    std::function<void(const StmtP &, bool)> reads = [&](const StmtP &s, bool inside) {
      if (!s) return;
      bool here = inside || s.get() == p_.owner;
      auto check = [&](const ExprP &e) {
        anyExpr(e, [&](const Expr &x) {
          if (!isAccessTo(x, in)) return false;
          if (!here) refuse("'" + name() + "' is read outside the loop that writes it");
          if (x.indices != p_.index)
            refuse(fmt::format("'{}' is read at [{}] where the iteration writes [{}]", name(), showIndex(x.indices),
                               showIndex(p_.index)));
          return false;
        });
      };
      check(s->value);
      for (const StmtP &c : s->body) reads(c, here);
    };
    reads(seq[first], false);
  }

 private:
  std::string name() const { return p_.input->name; }

  /// Do the ranges [lo, hi) of loop `l` for iterations t and t + 1 of the loop of variable t
  /// follow each other without overlapping (lo(t) <= lo(t + 1) and hi(t) <= lo(t + 1); hi may
  /// be a min of which one arm is enough: a tile's last partial tile)?
  static bool movesPast(const Stmt &l, int64_t t) {
    if (!l.lo.mentions(t)) return false;
    NatSubst next;
    next.vars.emplace(t, Nat::var(NatVarId{t, ""}) + Nat(1));
    Nat loNext = substitute(l.lo, next);
    if (!proveNonNegative(loNext - l.lo, NatFacts{})) return false;
    if (proveNonNegative(loNext - l.hi, NatFacts{})) return true;
    std::optional<std::vector<Nat>> arms = minArms(l.hi);
    return arms && std::any_of(arms->begin(), arms->end(), [&](const Nat &arm) { return proveNonNegative(loNext - arm, NatFacts{}); });
  }

  static std::string showIndex(const std::vector<Nat> &ix) {
    std::vector<std::string> parts;
    for (const Nat &n : ix) parts.push_back(n.str());
    return fmt::format("{}", fmt::join(parts, ", "));
  }

  [[noreturn]] void refuse(const std::string &why) const { throw NotShown{why}; }

  /// Finds the writes below s; `loops` are the foralls around s, outermost first.
  template <typename Pred>
  void walk(const StmtP &s, std::vector<const Stmt *> &loops, const Pred &writes) {
    if (!s) return;
    if (writes(*s)) found(*s, loops);
    bool loop = s->kind == StmtKind::Forall;
    if (loop) loops.push_back(s.get());
    for (const StmtP &c : s->body) walk(c, loops, writes);
    if (loop) loops.pop_back();
  }

  void found(const Stmt &write, const std::vector<const Stmt *> &loops) {
    const std::vector<Nat> &ix = write.lhs->indices;
    if (p_.owner) {
      if (ix != p_.index) refuse("the result is written at [" + showIndex(ix) + "] and at [" + showIndex(p_.index) + "]");
      if (std::find(loops.begin(), loops.end(), p_.owner) == loops.end())
        refuse("the result is written in two loops");
      return;
    }
    // The indices are variables of loops around the write, one each; the owner is the
    // innermost of those loops, and every other loop around it partitions the elements: the
    // range of an index loop inside it moves past itself from one iteration to the next (the
    // tile loops of a tiled nest).
    if (ix.size() == 1 && !ix[0].asVar()) return foundPacked(ix, loops);
    std::vector<const Stmt *> indexLoops;
    for (size_t d = 0; d < ix.size(); ++d) {
      std::optional<NatVarId> v = ix[d].asVar();
      auto l = v ? std::find_if(loops.begin(), loops.end(), [&](const Stmt *x) { return x->var == v->id; }) : loops.end();
      if (l == loops.end())
        refuse("the result is written at [" + showIndex(ix) + "], not at the variables of the loops around the write");
      indexLoops.push_back(*l);
    }
    const Stmt *owner = nullptr;
    for (const Stmt *l : loops)
      if (std::find(indexLoops.begin(), indexLoops.end(), l) != indexLoops.end()) owner = l;
    for (const Stmt *t : loops) {
      if (t == owner) break;
      if (std::find(indexLoops.begin(), indexLoops.end(), t) != indexLoops.end()) continue;
      bool partitions = false;
      for (auto l = std::find(loops.begin(), loops.end(), t); l != loops.end() && !partitions; ++l)
        partitions = std::find(indexLoops.begin(), indexLoops.end(), *l) != indexLoops.end() && movesPast(**l, t->var);
      if (!partitions)
        refuse("the result is written at [" + showIndex(ix) + "] in every iteration of loop " + t->varName);
    }
    for (size_t a = 0; a < ix.size(); ++a)
      for (size_t b = a + 1; b < ix.size(); ++b)
        if (ix[a] == ix[b]) refuse("the result is written at [" + showIndex(ix) + "], a loop variable twice");
    if (ix.empty()) refuse("a scalar result cannot be written in place");
    p_.owner = owner;
    p_.index = ix;
  }

  /// A packed result (a triangle column by column: sprL's j n + j - j (j + 1) / 2 + t): one
  /// index e + v, v the variable of a loop around the write with coefficient 1 (the owner) and
  /// e free of it. The owner's iterations write the run [e + lo, e + hi); it is shown distinct
  /// from one iteration of the loop around the owner to the next when the next run starts at
  /// or past this one's end (that loop the only one around the owner that e mentions; a loop
  /// that e does not mention would write the same run again).
  void foundPacked(const std::vector<Nat> &ix, const std::vector<const Stmt *> &loops) {
    const Stmt *owner = nullptr;
    for (const Stmt *l : loops) {
      NatVarId v{l->var, l->varName};
      Nat rest = ix[0] - Nat::var(v);
      if (ix[0].mentions(l->var) && !rest.mentions(l->var)) owner = l;
    }
    if (!owner) refuse("the result is written at [" + showIndex(ix) + "], not at a loop variable plus a position free of it");
    NatSubst atLo, atHi;
    atLo.vars.emplace(owner->var, owner->lo);
    atHi.vars.emplace(owner->var, owner->hi);
    const Nat runStart = substitute(ix[0], atLo), runEnd = substitute(ix[0], atHi);
    // Runs that never go backwards, so that apart from the next one means apart from all later
    // (with the ranges of the loops around the owner).
    NatFacts around;
    for (const Stmt *t : loops) {
      if (t == owner) break;
      around.ranges.push_back({t->var, t->lo, t->hi});
    }
    if (!proveNonNegative(runEnd - runStart, around))
      refuse("the result is written at [" + showIndex(ix) + "], whose runs in loop " + owner->varName + " may be empty backwards");
    for (const Stmt *t : loops) {
      if (t == owner) break;
      if (!ix[0].mentions(t->var) && !owner->lo.mentions(t->var) && !owner->hi.mentions(t->var))
        refuse("the result is written at [" + showIndex(ix) + "] in every iteration of loop " + t->varName);
      NatSubst next;
      next.vars.emplace(t->var, Nat::var(NatVarId{t->var, t->varName}) + Nat(1));
      if (!proveNonNegative(substitute(runStart, next) - runEnd, NatFacts{}))
        refuse("the result is written at [" + showIndex(ix) + "], whose runs in loop " + owner->varName +
               " are not shown apart from one iteration of loop " + t->varName + " to the next");
    }
    if (around.ranges.size() > 1) refuse("the result is written at [" + showIndex(ix) + "] under more than one loop around " + owner->varName);
    p_.owner = owner;
    p_.index = ix;
  }

  const Kernel &k_;
  Pair &p_;
};

/// Writes the inputs instead of the result: reads each input's element once at the top of
/// its owner loop's body (before the loop writes anything), reads of it below use that local,
/// and accesses to a leaf of the result become accesses to its input.
class Rewriter : public Mutator {
 public:
  Rewriter(const Kernel &k, std::vector<Pair> &pairs) : k_(k), pairs_(pairs) {}

  StmtP mutateForall(const StmtP &s) override {
    std::vector<const Pair *> mine;
    for (const Pair &p : pairs_)
      if (p.owner == s.get()) mine.push_back(&p);
    if (mine.empty()) return mutateChildren(s);
    for (const Pair *p : mine) active_.push_back(p);
    StmtP body = mutateChildren(s);
    for (size_t i = 0; i < mine.size(); ++i) active_.pop_back();
    std::vector<StmtP> stmts;
    for (const Pair *p : mine) {
      TypeP elem = p->input->type;
      while (elem->kind == TypeKind::Array) elem = elem->elems[0];
      stmts.push_back(declLocal(p->local, p->input->name + "_elem", scalarOf(elem), access(p->input, p->index, {}, scalarOf(elem))));
    }
    for (const StmtP &c : body->body) {
      StmtP changed = storeOnlyChanged(c, mine);
      if (changed->kind == StmtKind::Block) stmts.insert(stmts.end(), changed->body.begin(), changed->body.end());
      else stmts.push_back(changed);
    }
    auto copy = std::make_shared<Stmt>(*body);
    copy->body = {block(std::move(stmts))};
    return onlyChangedElements(copy);
  }

  /// `x[i] = c ? e : x_elem` (an element the result keeps where c fails: syr's other triangle)
  /// as `if (c) x[i] = e`, and `c ? x_elem : e` as `if (!c)`: an element kept is not written.
  static StmtP storeOnlyChanged(const StmtP &st, const std::vector<const Pair *> &mine) {
    if (st->kind == StmtKind::Block) {
      auto copy = std::make_shared<Stmt>(*st);
      for (StmtP &b : copy->body) b = storeOnlyChanged(b, mine);
      if (StmtP chosen = storeOnlyChangedBranch(*copy, mine)) copy->body.resize(copy->body.size() - 3), copy->body.push_back(chosen);
      return copy;
    }
    if (st->kind != StmtKind::Assign || st->compound || st->value->kind != ExprKind::Select) return st;
    for (const Pair *p : mine) {
      if (st->lhs->tensor != p->input || st->lhs->indices != p->index) continue;
      const ExprP &v = st->value;
      auto kept = [&](const ExprP &e) { return e->kind == ExprKind::Local && e->local == p->local; };
      if (kept(v->args[2])) return ifThen(v->args[0], assign(st->lhs, v->args[1]));
      if (kept(v->args[1])) return ifThen(unary(ast::UnOp::Not, v->args[0], Scalar::Bool), assign(st->lhs, v->args[2]));
    }
    return st;
  }

  /// The same where the choice is a statement (a branch computes a reduction first, syrk's dot):
  /// a block ending `local sel; if (c) {...; sel = e} else {sel = x_elem}; x[i] = sel` ends
  /// `if (c) {...; x[i] = e}` instead (either branch may be the kept one); null where it does not.
  static StmtP storeOnlyChangedBranch(const Stmt &blockStmt, const std::vector<const Pair *> &mine) {
    const std::vector<StmtP> &b = blockStmt.body;
    if (b.size() < 3) return nullptr;
    const StmtP &decl = b[b.size() - 3], &test = b[b.size() - 2], &store = b.back();
    if (decl->kind != StmtKind::DeclLocal || decl->value || test->kind != StmtKind::If || test->body.size() < 2 || !test->body[1] ||
        store->kind != StmtKind::Assign || store->compound || store->value->kind != ExprKind::Local || store->value->local != decl->local)
      return nullptr;
    // A branch as its statements before the last and the value its last one sets sel to.
    auto setsLast = [&](const StmtP &branch) -> std::optional<std::pair<std::vector<StmtP>, ExprP>> {
      std::vector<StmtP> stmts = branch->kind == StmtKind::Block ? branch->body : std::vector<StmtP>{branch};
      if (stmts.empty() || stmts.back()->kind != StmtKind::SetLocal || stmts.back()->local != decl->local) return std::nullopt;
      ExprP v = stmts.back()->value;
      stmts.pop_back();
      return std::make_pair(std::move(stmts), v);
    };
    auto yes = setsLast(test->body[0]), no = setsLast(test->body[1]);
    if (!yes || !no) return nullptr;
    for (const Pair *p : mine) {
      if (store->lhs->tensor != p->input || store->lhs->indices != p->index) continue;
      auto kept = [&](const std::pair<std::vector<StmtP>, ExprP> &br) {
        return br.first.empty() && br.second->kind == ExprKind::Local && br.second->local == p->local;
      };
      auto writes = [&](std::pair<std::vector<StmtP>, ExprP> br) {
        br.first.push_back(assign(store->lhs, br.second));
        return block(std::move(br.first));
      };
      if (kept(*no)) return ifThen(test->value, writes(*yes));
      if (kept(*yes)) return ifThen(unary(ast::UnOp::Not, test->value, Scalar::Bool), writes(*no));
    }
    return nullptr;
  }

  /// The owner loop l whose body became `x_elem = x[i]; if (c) {...}`: the element is read
  /// inside the test only, and where c compares l's variable with a bound free of it (syr's
  /// triangle, j <= i) l runs over the elements that change only, neither reading nor writing
  /// the others. A test choosing between two such comparisons by a value that l does not change
  /// (syr's uplo) gives l a version for each.
  static StmtP onlyChangedElements(const StmtP &l) {
    const StmtP &b = l->body[0];
    if (l->segment || b->kind != StmtKind::Block || b->body.size() != 2) return l;
    const StmtP &decl = b->body[0], &test = b->body[1];
    if (decl->kind != StmtKind::DeclLocal || test->kind != StmtKind::If || (test->body.size() > 1 && test->body[1])) return l;
    auto readsElem = [&](const Expr &e) { return e.kind == ExprKind::Local && e.local == decl->local; };
    auto readsVar = [&](const Expr &e) { return e.kind == ExprKind::NatE && e.nat.mentions(l->var); };
    if (anyExpr(test->value, readsElem)) return l;
    StmtP changed = block({decl, test->body[0]});
    // l over the elements where `c` holds, or null when c is not a comparison of l's variable.
    auto bounded = [&](const ExprP &c) -> StmtP {
      std::optional<Nat> lhs = c->kind == ExprKind::Binary ? foldNat(c->args[0]) : std::nullopt;
      std::optional<Nat> rhs = lhs ? foldNat(c->args[1]) : std::nullopt;
      if (!rhs) return nullptr;
      Nat v = Nat::var(NatVarId{l->var, l->varName}), a = *lhs, e = *rhs;
      ast::BinOp op = c->binop;
      if (a != v) {  // e.g. i >= j as j <= i
        std::swap(a, e);
        op = op == ast::BinOp::Le ? ast::BinOp::Ge : op == ast::BinOp::Ge ? ast::BinOp::Le : op == ast::BinOp::Lt ? ast::BinOp::Gt
           : op == ast::BinOp::Gt ? ast::BinOp::Lt : op;
      }
      if (a != v || e.mentions(l->var)) return nullptr;
      auto n = std::make_shared<Stmt>(*l);
      n->body = {changed};
      if (op == ast::BinOp::Le) n->hi = Nat::min(l->hi, e + Nat(1));
      else if (op == ast::BinOp::Lt) n->hi = Nat::min(l->hi, e);
      else if (op == ast::BinOp::Ge) n->lo = Nat::max(l->lo, e);
      else if (op == ast::BinOp::Gt) n->lo = Nat::max(l->lo, e + Nat(1));
      else return nullptr;
      return n;
    };
    const ExprP &c = test->value;
    if (StmtP n = bounded(c)) return n;
    if (c->kind == ExprKind::Select && !anyExpr(c->args[0], readsVar)) {
      StmtP yes = bounded(c->args[1]), no = bounded(c->args[2]);
      if (yes && no) return ifThen(c->args[0], yes, no);
    }
    return l;
  }

  ExprP mutateAccess(const ExprP &e) override {
    ExprP m = mutateChildren(e);
    for (const Pair *p : active_)
      if (m->tensor == p->input) return local(p->local, m->type);
    if (m->tensor == k_.resultTensor)
      for (const Pair &p : pairs_)
        if (m->leaf == p.leaf) return access(p.input, m->indices, {}, m->type);
    return m;
  }

 private:
  const Kernel &k_;
  std::vector<Pair> &pairs_;
  std::vector<const Pair *> active_;
};

/// Every loop of s run in order (a vector written in place with an increment of 0).
StmtP serialized(const StmtP &s) {
  struct Serial : Mutator {
    StmtP mutateForall(const StmtP &f) override {
      StmtP m = mutateChildren(f);
      auto copy = std::make_shared<Stmt>(*m);
      copy->forall = ForallKind::Serial;
      copy->balanceBy = 0;
      copy->vectorize = false;  // its iterations update one element in turn: no vectors
      return copy;
    }
  } serial;
  return serial.mutate(s);
}

/// A vector written in place with an increment of 0 has every element on one: the reference
/// BLAS then runs its iterations in order on that element (axpy accumulates into it, copy
/// leaves the last element there), and so does the kernel: the statements that write such a
/// vector get a serial version, taken when its increment is 0.
StmtP serialWhereStrideIsZero(const StmtP &body, const std::vector<Pair> &pairs) {
  ExprP zero;
  for (const Pair &p : pairs) {
    if (p.input->strides.size() != 1) continue;  // a matrix: its leading dimension was checked
    ExprP z = binary(ast::BinOp::Eq, natExpr(p.input->strides[0]), constInt(0), Scalar::Bool);
    zero = zero ? binary(ast::BinOp::Or, zero, z, Scalar::Bool) : z;
  }
  if (!zero) return body;
  auto writes = [&](const StmtP &s) {
    return anyStmt(s, [&](const Stmt &x) {
      return x.kind == StmtKind::Assign && std::any_of(pairs.begin(), pairs.end(), [&](const Pair &p) {
               return x.lhs->tensor == p.input;
             });
    });
  };
  // A statement whose loops all run in order already (a scatter's) needs no second version.
  auto inOrder = [](const StmtP &s) {
    return !anyStmt(s, [](const Stmt &x) { return x.kind == StmtKind::Forall && (x.forall != ForallKind::Serial || x.vectorize); });
  };
  std::function<StmtP(const StmtP &)> version = [&](const StmtP &s) -> StmtP {
    if (!s || !writes(s) || inOrder(s)) return s;
    if (s->kind == StmtKind::Block || s->kind == StmtKind::Alloc) {
      auto copy = std::make_shared<Stmt>(*s);
      for (StmtP &c : copy->body) c = version(c);
      return copy;
    }
    return ifThen(zero, serialized(s), s);
  };
  return version(body);
}

/// `input[i..] = result[i.., leaf]` over every element of the input (a dense vector or matrix).
StmtP copyInto(const TensorP &input, const TensorP &result, const std::vector<int> &leaf, SourceLoc loc) {
  std::vector<std::pair<NatVarId, Nat>> dims;
  TypeP t = input->type;
  for (; t->kind == TypeKind::Array; t = t->elems[0]) dims.emplace_back(freshNatVar("c"), t->len);
  std::vector<Nat> ix;
  for (const auto &d : dims) ix.push_back(Nat::var(d.first));
  Scalar sc = scalarOf(t);
  StmtP s = assign(access(input, ix, {}, sc), access(result, ix, leaf, sc));
  Nat below(1);  // the elements one iteration of the loop copies (the pool's chunks, cin::Stmt)
  for (size_t d = dims.size(); d-- > 0;) {
    auto loop = std::make_shared<Stmt>(*forall(dims[d].first.id, "c", Nat(0), dims[d].second, s, ForallKind::Parallel, loc));
    loop->iterationWork = below;
    below = below * dims[d].second;
    s = loop;
  }
  return s;
}

/// The statement a nest of loops over every element of `input` (its dimensions in order, each
/// from 0 to its length, nothing else in their bodies) runs at that element, with the indices
/// it runs at; null for anything else.
const Stmt *elementwiseBody(const StmtP &unit, const Tensor &input, std::vector<Nat> &index) {
  const Stmt *s = unit.get();
  auto only = [](const Stmt *x) -> const Stmt * {
    while (x && x->kind == StmtKind::Block && x->body.size() == 1) x = x->body[0].get();
    return x;
  };
  index.clear();
  for (TypeP t = input.type; t->kind == TypeKind::Array; t = t->elems[0]) {
    s = only(s);
    if (!s || s->kind != StmtKind::Forall || s->body.size() != 1 || s->lo != Nat(0) || s->hi != t->len) return nullptr;
    index.push_back(Nat::var(NatVarId{s->var, s->varName}));
    s = s->body[0].get();
  }
  s = only(s);
  return s && s->kind == StmtKind::Assign && !index.empty() ? s : nullptr;
}

/// The result's leaf in input P starts as a copy of P: the kernel's statements are, in order,
/// fills of the leaf with zeros, one nest over every element that adds P to it (`einsum
/// z[i] = y[i] + S[i]` lowers to z = 0; z[i] = z[i] + y[i]; then S scattered into z) or copies
/// P into it, and statements that update the leaf but never read P. Then the leaf is P from
/// the start: the fills and the copy are dropped and the rest works on P. The statements before
/// the copy may not touch the leaf otherwise; the added zero loses only a negative zero's sign,
/// which P keeps. Returns the units to drop, or none when the kernel is not of that shape.
std::optional<std::vector<const Stmt *>> seededFromInput(const Kernel &k, const Pair &p) {
  std::vector<StmtP> seq;
  units(k.body, seq);
  const Tensor *out = k.resultTensor.get(), *in = p.input.get();
  auto touchesLeaf = [&](const StmtP &s) {
    auto leafAccess = [&](const Expr &e) { return isAccessTo(e, out) && e.leaf == p.leaf; };
    return anyStmt(s, [&](const Stmt &x) { return anyExpr(x.value, leafAccess) || anyExpr(x.lhs, leafAccess); });
  };
  auto isZero = [](const ExprP &e) { return e->kind == ExprKind::Const && e->fval == 0 && e->ival == 0; };
  auto isLeafAt = [&](const ExprP &e, const std::vector<Nat> &ix) {
    return isAccessTo(*e, out) && e->leaf == p.leaf && e->indices == ix;
  };
  std::vector<const Stmt *> dropped;
  std::vector<Nat> ix;
  size_t u = 0;
  for (; u < seq.size() && !readsTensor(seq[u], in); ++u) {
    if (!touchesLeaf(seq[u])) continue;
    const Stmt *fill = elementwiseBody(seq[u], *in, ix);
    if (!fill || fill->compound || !isLeafAt(fill->lhs, ix) || !isZero(fill->value)) return std::nullopt;
    dropped.push_back(seq[u].get());
  }
  if (u == seq.size()) return std::nullopt;
  const Stmt *copy = elementwiseBody(seq[u], *in, ix);
  if (!copy || !isLeafAt(copy->lhs, ix)) return std::nullopt;
  auto isInputAt = [&](const ExprP &e) { return isAccessTo(*e, in) && e->indices == ix && e->leaf.empty(); };
  const ExprP &v = copy->value;
  bool copies = !copy->compound && isInputAt(v);
  bool adds = (copy->compound && copy->op == ast::BinOp::Add && !copy->isMinMax && isInputAt(v)) ||
              (!copy->compound && v->kind == ExprKind::Binary && v->binop == ast::BinOp::Add &&
               ((isLeafAt(v->args[0], ix) && isInputAt(v->args[1])) || (isInputAt(v->args[0]) && isLeafAt(v->args[1], ix))));
  if (!copies && !(adds && !dropped.empty())) return std::nullopt;
  dropped.push_back(seq[u].get());
  for (size_t after = u + 1; after < seq.size(); ++after)
    if (readsTensor(seq[after], in)) return std::nullopt;
  return dropped;
}

/// A kernel of a schedule's versions (poly/UserSchedule's specialize): statements that read no
/// tensor (a view's base), then an If marked `versions` whose branches are the versions, each
/// a whole kernel after those statements. Each version is written in place (or staged) on its
/// own, as the kernel it stands for: one writes at its loops, another at its own. False (the
/// kernel as it was) where the kernel is not so made.
bool versionsInPlace(Kernel &k) {
  if (k.body->kind != StmtKind::Block || k.body->body.empty()) return false;
  const StmtP &last = k.body->body.back();
  if (last->kind != StmtKind::If || !last->versions) return false;
  std::vector<StmtP> before(k.body->body.begin(), k.body->body.end() - 1);
  for (const StmtP &s : before)
    if (s->kind != StmtKind::DeclLocal || anyExpr(s->value, [](const Expr &e) { return e.kind == ExprKind::Access; })) return false;
  std::vector<TensorP> tensors;
  std::vector<std::string> staged;
  TensorP result = k.resultTensor;
  int count = 0;
  // Each branch as a kernel of its own (a nested specialize's If is its version's last
  // statement), without the statements before, which neither read nor write an array.
  auto inPlace = [&](const StmtP &version) {
    Kernel one = k;
    one.body = block({version ? version : block({})});
    writeResultInPlace(one);
    ++count;
    if (!one.inPlaceStaged.empty()) {
      staged.push_back(fmt::format("version {}: {}", count, one.inPlaceStaged));
      result = one.resultTensor;
    }
    for (const TensorP &t : one.tensors)
      if (std::find(tensors.begin(), tensors.end(), t) == tensors.end()) tensors.push_back(t);
    return one.body;
  };
  auto joined = std::make_shared<Stmt>(*last);
  joined->body = {inPlace(last->body[0]), inPlace(last->body.size() > 1 ? last->body[1] : nullptr)};
  before.push_back(joined);
  k.body = block(std::move(before));
  k.tensors = std::move(tensors);
  k.resultTensor = result;
  k.inPlaceStaged = fmt::format("{}", fmt::join(staged, "; "));
  return true;
}

}  // namespace

void writeResultInPlace(Kernel &k) {
  if (k.resultInto.empty()) return;
  if (versionsInPlace(k)) return;
  // A result that starts as a copy of its inputs works on them from the start.
  std::vector<Pair> seeded;
  std::vector<const Stmt *> dropped;
  for (const auto &[leaf, input] : k.resultInto) {
    Pair p{leaf, input, nullptr, {}, 0};
    std::optional<std::vector<const Stmt *>> units = seededFromInput(k, p);
    if (!units) break;
    dropped.insert(dropped.end(), units->begin(), units->end());
    seeded.push_back(std::move(p));
  }
  if (seeded.size() == k.resultInto.size()) {
    struct Seed : Mutator {
      const Kernel *k;
      const std::vector<Pair> *pairs;
      const std::vector<const Stmt *> *dropped;
      StmtP mutate(const StmtP &s) override {
        if (s && std::find(dropped->begin(), dropped->end(), s.get()) != dropped->end()) return block({});
        return Mutator::mutate(s);
      }
      ExprP mutateAccess(const ExprP &e) override {
        ExprP m = mutateChildren(e);
        if (m->tensor == k->resultTensor)
          for (const Pair &p : *pairs)
            if (m->leaf == p.leaf) return access(p.input, m->indices, {}, m->type);
        return m;
      }
    } seed;
    seed.k = &k;
    seed.pairs = &seeded;
    seed.dropped = &dropped;
    k.body = serialWhereStrideIsZero(seed.mutate(k.body), seeded);
    k.tensors.erase(std::remove(k.tensors.begin(), k.tensors.end(), k.resultTensor), k.tensors.end());
    return;
  }
  std::vector<Pair> pairs;
  try {
    for (const auto &[leaf, input] : k.resultInto) {
      Pair p;
      p.leaf = leaf;
      p.input = input;
      Prover(k, p).run();
      p.local = freshNatVar(input->name + "_elem").id;
      pairs.push_back(std::move(p));
    }
  } catch (const NotShown &n) {
    // Staged: the result goes to a temporary, copied into the inputs once everything is read.
    auto temp = std::make_shared<Tensor>(*k.resultTensor);
    temp->kind = Tensor::Temp;
    struct Retarget : Mutator {
      TensorP from, to;
      ExprP mutateAccess(const ExprP &e) override {
        ExprP m = mutateChildren(e);
        return m->tensor == from ? access(to, m->indices, m->leaf, m->type) : m;
      }
    } retarget;
    retarget.from = k.resultTensor;
    retarget.to = temp;
    k.body = retarget.mutate(k.body);
    std::replace(k.tensors.begin(), k.tensors.end(), k.resultTensor, TensorP(temp));
    k.resultTensor = temp;
    k.inPlaceStaged = n.why;
    std::vector<StmtP> copies;
    for (const auto &[leaf, input] : k.resultInto) copies.push_back(copyInto(input, k.resultTensor, leaf, k.loc));
    std::vector<Pair> all;
    for (const auto &[leaf, input] : k.resultInto) all.push_back(Pair{leaf, input, nullptr, {}, 0});
    k.body = allocTemp(k.resultTensor, block({k.body, serialWhereStrideIsZero(block(std::move(copies)), all)}));
    return;
  }
  Rewriter rw(k, pairs);
  k.body = rw.mutate(k.body);
  k.body = serialWhereStrideIsZero(k.body, pairs);
  // The result tensor has no parameter and is no longer accessed.
  k.tensors.erase(std::remove(k.tensors.begin(), k.tensors.end(), k.resultTensor), k.tensors.end());
}

}  // namespace spl::cin
