/// \file GuardRange.cpp: index-set splitting of guarded loop bodies (see GuardRange.h).
///
/// A loop qualifies when its body is a list of declarations followed by one update that is a
/// no-op unless a condition holds:
///   out[ix] = out[ix] op (c ? e : z)    acc = acc op (c ? e : z)    if (c) S
/// with z the identity of op (0 for + on integers or a reassociating float sum, 1 for *,
/// false for ||), and c a conjunction of comparisons whose sides are affine in the loop
/// variable with unit coefficient (through the declarations, i32 conversions and loop-invariant
/// loads in them). Each comparison bounds the loop variable from one side; comparisons free of
/// it decide whether the loop runs at all.
#include "loopir/GuardRange.h"

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

bool isIntTy(Ty t) { return t == Ty::I32 || t == Ty::I64; }

/// What a statement may change: the variables it declares, assigns or loops over, and the
/// buffers it stores to, allocates, frees or fills.
struct Effects {
  std::set<int> declared, assigned, buffers;
};

class EffectsCollector : public Visitor {
 public:
  Effects fx;

 protected:
  void visitFor(const Stmt &s) override { declares(s); }
  void visitDecl(const Stmt &s) override { declares(s); }
  void visitAssign(const Stmt &s) override {
    fx.assigned.insert(s.var);
    visitChildren(s);
  }
  void visitStore(const Stmt &s) override { writes(s); }
  void visitAlloc(const Stmt &s) override { writes(s); }
  void visitFree(const Stmt &s) override { writes(s); }
  void visitSigmaPrefix(const Stmt &s) override { writes(s); }

 private:
  void declares(const Stmt &s) {
    fx.declared.insert(s.var);
    visitChildren(s);
  }
  void writes(const Stmt &s) {
    fx.buffers.insert(s.buffer);
    visitChildren(s);
  }
};

void collectEffects(const StmtP &s, Effects &fx) {
  EffectsCollector c;
  c.fx = std::move(fx);
  c.visit(s);
  fx = std::move(c.fx);
}

ExprP rebuild(const ExprP &e, std::vector<ExprP> args) {
  auto c = std::make_shared<Expr>(*e);
  c->args = std::move(args);
  return c;
}

ExprP toI64(const ExprP &e) { return cast(e, Ty::I64); }

/// An integer expression as coef * v + inv (inv an i64 expression free of the loop, null = 0).
struct Linear {
  int64_t coef = 0;
  ExprP inv;
};

ExprP addInv(const ExprP &a, ExprP b, bool subtract) {
  if (!b) return a;
  if (b->kind == ExprKind::Binary && b->binop == BinOp::Sub && b->args[0]->kind == ExprKind::Const && b->args[0]->ival == 0) {
    b = b->args[1];  // a -/+ (0 - x) = a +/- x
    subtract = !subtract;
  }
  if (!a) return subtract ? bin(BinOp::Sub, cInt(0), b) : b;
  return bin(subtract ? BinOp::Sub : BinOp::Add, a, b);
}

class LoopNarrower {
 public:
  LoopNarrower(const Stmt &loop, int &nextVar) : loop_(loop), nextVar_(nextVar), v_(loop.var) {}

  StmtP run() {
    const StmtP &body = loop_.body[0];
    std::vector<StmtP> items = body->kind == StmtKind::Block ? body->body : std::vector<StmtP>{body};
    if (items.empty()) return nullptr;
    collectEffects(body, fx_);
    for (size_t k = 0; k + 1 < items.size(); ++k) {
      const StmtP &d = items[k];
      if (d->kind != StmtKind::Decl || !d->a) return nullptr;
      decls_[d->var] = d;
    }
    for (const auto &[id, d] : decls_)
      if (fx_.assigned.count(id)) return nullptr;

    ExprP cond;
    StmtP update = matchUpdate(items.back(), cond);
    if (!update || !addCondition(cond)) return nullptr;
    if (lower_.empty() && upper_.empty()) return nullptr;

    // The narrowed loop, its bounds declared just before it.
    int loVar = nextVar_++, hiVar = nextVar_++;
    ExprP lo = loop_.a, hi = loop_.b;
    for (const ExprP &l : lower_) lo = mm(true, lo, l);
    for (const ExprP &h : upper_) hi = mm(false, hi, h);
    if (!feasible_.empty()) {
      ExprP all = feasible_[0];
      for (size_t k = 1; k < feasible_.size(); ++k) all = bin(BinOp::And, all, feasible_[k]);
      hi = sel(all, hi, var(loVar, Ty::I64));
    }
    items.back() = update;
    if (needsI32_)
      for (StmtP &s : items) s = widenStmt(s);
    auto narrowed = std::make_shared<Stmt>(loop_);
    narrowed->a = var(loVar, Ty::I64);
    narrowed->b = var(hiVar, Ty::I64);
    narrowed->segment = {};  // its bounds are variables now, no longer read from memory
    narrowed->body = {block(items)};
    StmtP result = block({decl(loVar, loop_.name + "_lo", Ty::I64, lo), decl(hiVar, loop_.name + "_hi", Ty::I64, hi), narrowed});

    // Loads in the bounds only run when the original loop would have run; an i32 loop
    // variable is exact only while the bounds fit i32 (else the original loop runs).
    ExprP guard;
    if (hoistedLoads_) guard = bin(BinOp::Lt, loop_.a, loop_.b);
    if (needsI32_) {
      ExprP fits = bin(BinOp::And, bin(BinOp::Ge, loop_.a, cInt(std::numeric_limits<int32_t>::min())),
                       bin(BinOp::Le, loop_.b, cInt(int64_t{std::numeric_limits<int32_t>::max()} + 1)));
      guard = guard ? bin(BinOp::And, guard, fits) : fits;
    }
    if (!guard) return result;
    return ifThen(guard, result, needsI32_ ? std::make_shared<Stmt>(loop_) : nullptr);
  }

 private:
  /// The update with its condition removed (`cond` set), or null when it is not of a
  /// no-op-unless-condition form.
  StmtP matchUpdate(const StmtP &u, ExprP &cond) {
    if (u->kind == StmtKind::Store && u->atomic != AtomicOp::None) return nullptr;
    if (u->kind == StmtKind::If) {
      if (u->body.size() > 1 && u->body[1]) return nullptr;
      cond = u->a;
      return u->body[0];
    }
    ExprP value = u->kind == StmtKind::Store ? u->b : u->kind == StmtKind::Assign ? u->a : nullptr;
    if (!value || value->kind != ExprKind::Binary) return nullptr;
    auto isSelf = [&](const ExprP &x) {
      if (u->kind == StmtKind::Assign) return x->kind == ExprKind::Var && x->var == u->var;
      return x->kind == ExprKind::Load && x->buffer == u->buffer && x->field == u->field && sameExpr(x->args[0], u->a);
    };
    int selfSide = isSelf(value->args[0]) ? 0 : isSelf(value->args[1]) ? 1 : -1;
    if (selfSide < 0) return nullptr;
    const ExprP &other = value->args[1 - selfSide];
    if (other->kind != ExprKind::Select) return nullptr;
    const ExprP &z = other->args[2];
    if (z->kind != ExprKind::Const) return nullptr;
    bool fp = isFloatTy(z->type);
    bool identity = false;
    switch (value->binop) {
      // x + 0.0 turns -0.0 into +0.0: only a reassociating (no-signed-zeros) sum may drop it.
      case BinOp::Add: identity = fp ? z->fval == 0.0 && value->reassoc : z->ival == 0; break;
      case BinOp::Mul: identity = fp ? z->fval == 1.0 : z->ival == 1; break;
      case BinOp::Or: identity = z->ival == 0; break;
      default: break;
    }
    if (!identity) return nullptr;
    cond = other->args[0];
    std::vector<ExprP> args = value->args;
    args[1 - selfSide] = other->args[1];
    auto c = std::make_shared<Stmt>(*u);
    if (u->kind == StmtKind::Store)
      c->b = rebuild(value, args);
    else
      c->a = rebuild(value, args);
    return c;
  }

  bool isDecl(int id) const { return decls_.count(id) != 0; }
  bool isVariant(int id) const { return id == v_ || fx_.declared.count(id) || fx_.assigned.count(id); }

  /// Does `e` read the loop variable, directly or through the body's declarations?
  bool dependsOnLoop(const ExprP &e) const {
    class Find : public Visitor {
     public:
      explicit Find(const LoopNarrower &n) : n_(n) {}
      bool found = false;

     protected:
      void visitVar(const Expr &x) override {
        if (x.var == n_.v_) found = true;
        else if (n_.isDecl(x.var)) visit(n_.decls_.at(x.var)->a);
      }

     private:
      const LoopNarrower &n_;
    } find(*this);
    find.visit(e);
    return find.found;
  }

  /// `e` evaluated before the loop: declarations expanded; null when it reads anything the
  /// loop changes, or a load that not every iteration performs (`fromDecl`: e is part of a
  /// declaration's value outside any conditional arm).
  ExprP hoist(const ExprP &e, bool fromDecl) {
    switch (e->kind) {
      case ExprKind::Const: return e;
      case ExprKind::Var:
        if (isDecl(e->var)) return hoist(decls_.at(e->var)->a, true);
        return isVariant(e->var) ? nullptr : e;
      case ExprKind::Load: {
        if (!fromDecl || fx_.buffers.count(e->buffer)) return nullptr;
        ExprP ix = hoist(e->args[0], fromDecl);
        if (!ix) return nullptr;
        hoistedLoads_ = true;
        return rebuild(e, {ix});
      }
      default: break;
    }
    std::vector<ExprP> args;
    for (size_t k = 0; k < e->args.size(); ++k) {
      // The arms of a select and the right side of && / || are evaluated conditionally.
      bool conditional = (e->kind == ExprKind::Select && k > 0) ||
                         (e->kind == ExprKind::Binary && k == 1 && (e->binop == BinOp::And || e->binop == BinOp::Or));
      ExprP a = hoist(e->args[k], fromDecl && !conditional);
      if (!a) return nullptr;
      args.push_back(a);
    }
    return rebuild(e, std::move(args));
  }

  std::optional<Linear> linearize(const ExprP &e, bool fromDecl) {
    if (!isIntTy(e->type)) return std::nullopt;
    if (!dependsOnLoop(e)) {
      ExprP h = hoist(e, fromDecl);
      if (!h) return std::nullopt;
      return Linear{0, toI64(h)};
    }
    switch (e->kind) {
      case ExprKind::Var:
        if (e->var == v_) return Linear{1, nullptr};
        if (isDecl(e->var)) return linearize(decls_.at(e->var)->a, true);
        return std::nullopt;
      case ExprKind::Cast: {
        const ExprP &a = e->args[0];
        if (e->type == Ty::I64 && a->type == Ty::I32) return linearize(a, fromDecl);
        if (e->type == Ty::I32 && a->type == Ty::I64 && a->kind == ExprKind::Var && a->var == v_) {
          needsI32_ = true;  // exact only while the loop's bounds fit i32: versioned
          return Linear{1, nullptr};
        }
        return std::nullopt;
      }
      case ExprKind::Binary: {
        if (e->binop != BinOp::Add && e->binop != BinOp::Sub && e->binop != BinOp::Mul) return std::nullopt;
        auto l = linearize(e->args[0], fromDecl), r = linearize(e->args[1], fromDecl);
        if (!l || !r) return std::nullopt;
        if (e->binop == BinOp::Mul) {
          // Only a constant factor keeps the coefficient known.
          const ExprP &k = l->coef == 0 ? e->args[0] : e->args[1];
          Linear &x = l->coef == 0 ? *r : *l;
          if ((l->coef != 0 && r->coef != 0) || k->kind != ExprKind::Const) return std::nullopt;
          return Linear{x.coef * k->ival, x.inv ? bin(BinOp::Mul, x.inv, cInt(k->ival)) : nullptr};
        }
        bool sub = e->binop == BinOp::Sub;
        return Linear{sub ? l->coef - r->coef : l->coef + r->coef, addInv(l->inv, r->inv, sub)};
      }
      default: return std::nullopt;
    }
  }

  /// Adds the bounds a condition puts on the loop variable; false when it is not a
  /// conjunction of affine comparisons with coefficient -1, 0 or 1.
  bool addCondition(const ExprP &c) {
    if (c->kind != ExprKind::Binary) return false;
    if (c->binop == BinOp::And) return addCondition(c->args[0]) && addCondition(c->args[1]);
    BinOp op = c->binop;
    if (op != BinOp::Lt && op != BinOp::Le && op != BinOp::Gt && op != BinOp::Ge && op != BinOp::Eq) return false;
    auto l = linearize(c->args[0], false), r = linearize(c->args[1], false);
    if (!l || !r) return false;
    int64_t coef = l->coef - r->coef;
    ExprP inv = addInv(l->inv, r->inv, true);
    if (!inv) inv = cInt(0);
    if (coef == 0) {
      ExprP h = hoist(c, false);
      if (!h) return false;
      feasible_.push_back(h);
      return true;
    }
    if (coef != 1 && coef != -1) return false;
    // coef * v + inv  op  0.  With coef = 1: v op -inv; with coef = -1: inv op v.
    ExprP neg = inv->kind == ExprKind::Binary && inv->binop == BinOp::Sub ? bin(BinOp::Sub, inv->args[1], inv->args[0])
                                                                          : bin(BinOp::Sub, cInt(0), inv);
    ExprP t = coef == 1 ? neg : inv;  // the threshold v is compared with
    auto plus1 = [](const ExprP &x) { return bin(BinOp::Add, x, cInt(1)); };
    if (coef == -1) {  // inv op v  ==  v op' inv
      switch (op) {
        case BinOp::Lt: op = BinOp::Gt; break;
        case BinOp::Le: op = BinOp::Ge; break;
        case BinOp::Gt: op = BinOp::Lt; break;
        case BinOp::Ge: op = BinOp::Le; break;
        default: break;
      }
    }
    switch (op) {
      case BinOp::Ge: lower_.push_back(t); break;
      case BinOp::Gt: lower_.push_back(plus1(t)); break;
      case BinOp::Lt: upper_.push_back(t); break;
      case BinOp::Le: upper_.push_back(plus1(t)); break;
      case BinOp::Eq:
        lower_.push_back(t);
        upper_.push_back(plus1(t));
        break;
      default: return false;
    }
    return true;
  }

  // ---- inside the i32-versioned loop: i64(i32(v) + o) -> v + i64(o) ------------------------


  /// The i64 value of an i32 expression, widening through no-overflow arithmetic.
  ExprP widenI32(const ExprP &x) {
    switch (x->kind) {
      case ExprKind::Const: return cInt(x->ival, Ty::I64);
      case ExprKind::Cast:
        if (x->args[0]->kind == ExprKind::Var && x->args[0]->var == v_) return x->args[0];
        break;
      case ExprKind::Var:
        if (isDecl(x->var) && !hasLoad(decls_.at(x->var)->a) && decls_.at(x->var)->a->type == Ty::I32)
          return widenI32(decls_.at(x->var)->a);
        break;
      case ExprKind::Binary:
        if (x->binop == BinOp::Add || x->binop == BinOp::Sub || x->binop == BinOp::Mul)
          return bin(x->binop, widenI32(x->args[0]), widenI32(x->args[1]));
        break;
      default: break;
    }
    return cast(x, Ty::I64);
  }

  /// i64(i32 expression of the loop variable) -> the i64 expression, children first.
  class Widening : public Mutator {
   public:
    explicit Widening(LoopNarrower &n) : n_(n) {}

   protected:
    ExprP mutateCast(const ExprP &e) override {
      ExprP cur = mutateChildren(e);
      if (cur->type == Ty::I64 && cur->args[0]->type == Ty::I32) {
        ExprP w = n_.widenI32(cur->args[0]);
        if (mentionsVar(w, n_.v_)) return w;
      }
      return cur;
    }

   private:
    LoopNarrower &n_;
  };
  StmtP widenStmt(const StmtP &s) { return Widening(*this).mutate(s); }

  const Stmt &loop_;
  int &nextVar_;
  int v_;
  Effects fx_;
  std::map<int, StmtP> decls_;
  std::vector<ExprP> lower_, upper_, feasible_;
  bool needsI32_ = false;
  bool hoistedLoads_ = false;
};

}  // namespace

int restrictGuardedLoops(Function &f) {
  int nextVar = f.freshVarId();
  int count = 0;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) -> StmtP {
    if (s->kind == StmtKind::For && (s->loop == LoopKind::Serial || s->loop == LoopKind::Reduction || s->loop == LoopKind::Vector)) {
      LoopNarrower n(*s, nextVar);
      if (StmtP r = n.run()) {
        ++count;
        return r;
      }
    }
    return s;
  });
  return count;
}

}  // namespace spl::loopir
