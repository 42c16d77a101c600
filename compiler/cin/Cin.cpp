/// \file Cin.cpp: constructors, the shared queries and rewrites (through cin/Visitor.h) and the
/// printer of concrete index notation (`--emit=cin`).
#include "cin/Cin.h"
#include "cin/LevelFormat.h"
#include "cin/Layout.h"

#include <fmt/ranges.h>

#include "cin/Visitor.h"
#include "support/Error.h"
#include "support/Format.h"
#include "support/IrWalk.h"

namespace spl::cin {

namespace {
std::shared_ptr<Expr> mk(ExprKind k, Scalar t) {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->type = t;
  return e;
}
std::shared_ptr<Stmt> mks(StmtKind k) {
  auto s = std::make_shared<Stmt>();
  s->kind = k;
  return s;
}
}  // namespace

std::shared_ptr<Tensor> temporary(const std::string &base, TypeP type) {
  auto t = std::make_shared<Tensor>();
  t->kind = Tensor::Temp;
  t->id = freshNatVar(base).id;
  t->name = base + std::to_string(t->id);
  t->type = std::move(type);
  return t;
}

Nat elementOffset(const Tensor &t, const std::vector<Nat> &indices, const std::vector<int> &leaf, const SumFn &sum) {
  if (t.strides.empty()) return leafOffset(t.type, indices, leaf, sum);
  internal_assert(indices.size() == t.strides.size()) << "an access to view " << t.name << " with " << indices.size()
                                                      << " indices for " << t.strides.size() << " strides";
  Nat off(0);
  for (size_t k = 0; k < indices.size(); ++k) off = off + indices[k] * t.strides[k];
  return off;
}

Scalar scalarOf(const TypeP &t) {
  if (t->kind == TypeKind::Idx) return Scalar::I64;
  if (t->kind == TypeKind::Scalar) return t->scalar;
  return Scalar::I64;
}

ExprP constInt(int64_t v, Scalar t) {
  auto e = mk(ExprKind::Const, t);
  e->ival = v;
  e->fval = static_cast<double>(v);
  e->bval = v != 0;
  return e;
}
ExprP constFloat(double v, Scalar t) {
  auto e = mk(ExprKind::Const, t);
  e->fval = v;
  e->ival = static_cast<int64_t>(v);
  return e;
}
ExprP constBool(bool v) {
  auto e = mk(ExprKind::Const, Scalar::Bool);
  e->bval = v;
  e->ival = v;
  return e;
}
ExprP local(int64_t id, Scalar t) {
  auto e = mk(ExprKind::Local, t);
  e->local = id;
  return e;
}
std::optional<Nat> foldNat(const ExprP &e) {
  switch (e->kind) {
    case ExprKind::NatE: return e->nat;
    case ExprKind::Const: return e->type == Scalar::I64 || e->type == Scalar::I32 ? std::optional<Nat>(Nat(e->ival)) : std::nullopt;
    case ExprKind::Binary: {
      if (e->type != Scalar::I64) return std::nullopt;
      std::optional<Nat> a = foldNat(e->args[0]), b = foldNat(e->args[1]);
      if (!a || !b) return std::nullopt;
      switch (e->binop) {
        case ast::BinOp::Add: return *a + *b;
        case ast::BinOp::Sub: return *a - *b;
        case ast::BinOp::Mul: return *a * *b;
        case ast::BinOp::Div: {
          for (const Nat::Term &t : a->terms())
            if (t.coeff.num() < 0) return std::nullopt;
          if (auto c = b->asConst(); c && *c > 0) return Nat::div(*a, *c);
          return std::nullopt;
        }
        default: return std::nullopt;
      }
    }
    case ExprKind::MinMax: {
      if (e->type != Scalar::I64) return std::nullopt;
      std::optional<Nat> a = foldNat(e->args[0]), b = foldNat(e->args[1]);
      if (!a || !b) return std::nullopt;
      return e->isMax ? Nat::max(*a, *b) : Nat::min(*a, *b);
    }
    default: return std::nullopt;
  }
}

ExprP natExpr(const Nat &n) {
  if (auto c = n.asConst()) return constInt(*c);
  auto e = mk(ExprKind::NatE, Scalar::I64);
  e->nat = n;
  return e;
}
ExprP access(TensorP t, std::vector<Nat> indices, std::vector<int> leaf, Scalar type) {
  auto e = mk(ExprKind::Access, type);
  e->tensor = std::move(t);
  e->indices = std::move(indices);
  e->leaf = std::move(leaf);
  return e;
}
ExprP unary(ast::UnOp op, ExprP a, Scalar t) {
  auto e = mk(ExprKind::Unary, t);
  e->unop = op;
  e->args = {std::move(a)};
  return e;
}
ExprP binary(ast::BinOp op, ExprP a, ExprP b, Scalar t) {
  auto e = mk(ExprKind::Binary, t);
  e->binop = op;
  e->args = {std::move(a), std::move(b)};
  return e;
}
ExprP select(ExprP c, ExprP a, ExprP b, Scalar t) {
  auto e = mk(ExprKind::Select, t);
  e->args = {std::move(c), std::move(a), std::move(b)};
  return e;
}
ExprP convert(ExprP a, Scalar t) {
  if (a->type == t) return a;
  auto e = mk(ExprKind::Convert, t);
  e->args = {std::move(a)};
  return e;
}
ExprP minmax(bool isMax, ExprP a, ExprP b, Scalar t) {
  auto e = mk(ExprKind::MinMax, t);
  e->isMax = isMax;
  e->args = {std::move(a), std::move(b)};
  return e;
}

bool isSafe(const ExprP &e) {
  return !anyExpr(e, [](const Expr &x) {
    switch (x.kind) {
      case ExprKind::Access: return true;
      case ExprKind::NatE:
        // Lookups load from memory; divisions by constants are safe.
        for (const Nat::Term &t : x.nat.terms())
          for (const auto &f : t.mono.factors)
            if (f.first->kind == NatAtomKind::Lookup || f.first->kind == NatAtomKind::Sum) return true;
        return false;
      case ExprKind::Binary: return (x.binop == ast::BinOp::Div || x.binop == ast::BinOp::Mod) && !isFloat(x.type);
      default: return false;
    }
  });
}

bool isGpuLevel(ForallKind k) {
  return k == ForallKind::GpuBlock || k == ForallKind::GpuThread || k == ForallKind::GpuWarp || k == ForallKind::GpuLane ||
         k == ForallKind::GpuGlobal;
}

const char *forallKindName(ForallKind k) {
  switch (k) {
    case ForallKind::Serial: return "serial";
    case ForallKind::Reduction: return "reduction";
    case ForallKind::Parallel: return "parallel";
    case ForallKind::Vector: return "vector";
    case ForallKind::GpuBlock: return "gpu.block";
    case ForallKind::GpuThread: return "gpu.thread";
    case ForallKind::GpuWarp: return "gpu.warp";
    case ForallKind::GpuLane: return "gpu.lane";
    case ForallKind::GpuGlobal: return "gpu.global";
  }
  return "?";
}

StmtP block(std::vector<StmtP> stmts) {
  auto s = mks(StmtKind::Block);
  for (StmtP &x : stmts) {
    if (!x) continue;
    if (x->kind == StmtKind::Block) s->body.insert(s->body.end(), x->body.begin(), x->body.end());
    else s->body.push_back(std::move(x));
  }
  return s;
}
std::optional<SegmentLevel> segmentOfExtent(const Nat &lo, const Nat &hi) {
  if (!lo.isZero()) return std::nullopt;
  for (const Nat::Term &t : hi.terms()) {
    if (!(t.coeff == Rat(1)) || t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) continue;
    const NatAtom &a = *t.mono.factors[0].first;
    if (a.kind != NatAtomKind::Lookup) continue;
    if (hi.terms().size() == 1) return SegmentLevel{a.var, /*lengths=*/true, a.args[0]};  // L@p
    Nat parent = a.args[0] - Nat(1);                                                      // T@(p + 1) - T@p
    if (hi == Nat::lookup(a.var, a.args[0]) - Nat::lookup(a.var, parent)) return SegmentLevel{a.var, false, parent};
  }
  return std::nullopt;
}

StmtP forall(int64_t var, std::string name, Nat lo, Nat hi, StmtP body, ForallKind kind, SourceLoc loc) {
  auto s = mks(StmtKind::Forall);
  s->var = var;
  s->varName = std::move(name);
  s->segment = segmentOfExtent(lo, hi);
  s->lo = std::move(lo);
  s->hi = std::move(hi);
  s->body = {std::move(body)};
  s->forall = kind;
  s->loc = loc;
  return s;
}
StmtP assign(ExprP lhs, ExprP rhs) {
  auto s = mks(StmtKind::Assign);
  s->lhs = std::move(lhs);
  s->value = std::move(rhs);
  return s;
}
StmtP declLocal(int64_t id, std::string name, Scalar t, ExprP init) {
  auto s = mks(StmtKind::DeclLocal);
  s->local = id;
  s->localName = std::move(name);
  s->type = t;
  s->value = std::move(init);
  return s;
}
StmtP setLocal(int64_t id, ExprP v, Scalar t) {
  auto s = mks(StmtKind::SetLocal);
  s->local = id;
  s->value = std::move(v);
  s->type = t;
  return s;
}
StmtP ifThen(ExprP cond, StmtP then, StmtP otherwise) {
  auto s = mks(StmtKind::If);
  s->value = std::move(cond);
  s->body = {std::move(then), std::move(otherwise)};
  return s;
}
StmtP failWith(int code, SourceLoc loc) {
  auto s = std::make_shared<Stmt>();
  s->kind = StmtKind::Fail;
  s->code = code;
  s->loc = loc;
  return s;
}

StmtP allocTemp(TensorP t, StmtP body) {
  auto s = mks(StmtKind::Alloc);
  s->tensor = std::move(t);
  s->body = {std::move(body)};
  return s;
}

namespace {
/// Substitutes nats in bounds, indices and nat expressions; a nat expression that becomes a
/// constant is a constant.
class NatSubstitution : public Mutator {
 public:
  explicit NatSubstitution(const NatSubst &sub) : sub_(sub) {}

 protected:
  ExprP mutateNatE(const ExprP &e) override {
    Nat n = spl::substitute(e->nat, sub_);
    if (auto k = n.asConst()) return constInt(*k);
    if (n.identical(e->nat)) return e;
    auto c = std::make_shared<Expr>(*e);
    c->nat = n;
    return c;
  }
  ExprP mutateAccess(const ExprP &e) override {
    ExprP cur = mutateChildren(e);
    std::vector<Nat> indices;
    bool same = true;
    for (const Nat &i : cur->indices) {
      indices.push_back(spl::substitute(i, sub_));
      same = same && indices.back().identical(i);
    }
    if (same) return cur;
    auto c = std::make_shared<Expr>(*cur);
    c->indices = std::move(indices);
    return c;
  }
  StmtP mutateForall(const StmtP &s) override {
    StmtP cur = mutateChildren(s);
    Nat lo = spl::substitute(cur->lo, sub_), hi = spl::substitute(cur->hi, sub_);
    bool partial = cur->segment && !cur->segment->whole;
    Nat parent = partial ? spl::substitute(cur->segment->parent, sub_) : Nat();
    if (lo.identical(cur->lo) && hi.identical(cur->hi) && (!partial || parent.identical(cur->segment->parent))) return cur;
    auto c = std::make_shared<Stmt>(*cur);
    c->lo = lo;
    c->hi = hi;
    // A whole segment is the one the new bounds give; a part keeps its segment, re-based.
    if (partial) c->segment->parent = parent;
    else c->segment = segmentOfExtent(lo, hi);
    return c;
  }

 private:
  const NatSubst &sub_;
};
}  // namespace

ExprP substitute(const ExprP &e, const NatSubst &sub) { return NatSubstitution(sub).mutate(e); }

StmtP substitute(const StmtP &s, const NatSubst &sub) { return NatSubstitution(sub).mutate(s); }

namespace {

std::string leafStr(const std::vector<int> &leaf) {
  std::string s;
  for (int k : leaf) s += fmt::format(".{}", k);
  return s;
}

}  // namespace

namespace {

/// Writes an expression in --emit=cin's syntax.
class ExprPrinter : public Visitor {
 public:
  explicit ExprPrinter(TextOut &out) : out_(out) {}

 protected:
  void visitConst(const Expr &e) override {
    if (e.type == Scalar::Bool) return out_("{}", e.bval ? "true" : "false");
    if (!isFloat(e.type)) return out_("{}", e.ival);
    std::string text = fmt::format("{:g}", e.fval);
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    out_.append(text);
  }
  void visitLocal(const Expr &e) override { out_("%{}", e.local); }
  void visitNatE(const Expr &e) override { out_("({})", e.nat.str()); }
  void visitAccess(const Expr &e) override {
    std::vector<std::string> indices;
    for (const Nat &i : e.indices) indices.push_back(i.str());
    out_("{}[{}]{}", e.tensor->name, fmt::join(indices, ", "), leafStr(e.leaf));
  }
  void visitUnary(const Expr &e) override {
    out_("{}{}", ast::unOpToken(e.unop), ast::isPrefixOp(e.unop) ? "" : "(");
    visit(e.args[0]);
    if (!ast::isPrefixOp(e.unop)) out_(")");
  }
  void visitBinary(const Expr &e) override {
    out_("(");
    visit(e.args[0]);
    out_(" {}{} ", ast::binOpToken(e.binop), e.reassoc ? "~" : "");
    visit(e.args[1]);
    out_(")");
  }
  void visitSelect(const Expr &e) override {
    out_("(");
    visit(e.args[0]);
    out_(" ? ");
    visit(e.args[1]);
    out_(" : ");
    visit(e.args[2]);
    out_(")");
  }
  void visitConvert(const Expr &e) override {
    out_("{}(", scalarName(e.type));
    visit(e.args[0]);
    out_(")");
  }
  void visitMinMax(const Expr &e) override {
    out_("{}(", e.isMax ? "max" : "min");
    visit(e.args[0]);
    out_(", ");
    visit(e.args[1]);
    out_(")");
  }

 private:
  TextOut &out_;
};

}  // namespace

std::string print(const ExprP &e) { return e ? print(*e) : std::string(); }

std::string print(const Expr &e) {
  TextOut out;
  ExprPrinter(out).dispatch(e);
  return out.str();
}

namespace {

/// Writes statements in --emit=cin's syntax, one per line, nested bodies indented.
class StmtPrinter : public Visitor {
 public:
  StmtPrinter(TextOut &out, int indent) : out_(out), w_(out, indent, [this](const StmtP &s) { visit(s); }) {}

 protected:
  void visitBlock(const Stmt &s) override {
    for (const StmtP &b : s.body) visit(b);
  }
  void visitForall(const Stmt &s) override {
    out_("{}forall {}%{} in [{}, {}) {}", pad(), s.varName, s.var, s.lo.str(), s.hi.str(), forallKindName(s.forall));
    if (s.segment)
      out_(" segment({}{} @ {}{}", s.segment->array.name, s.segment->lengths ? " lengths" : "", s.segment->parent.str(),
           s.segment->whole ? ")" : ", part)");
    if (s.balanceBy) out_(" balanced");
    if (s.rows != ast::GpuRowMapping::Auto) out_(" rows={}", ast::gpuRowMappingName(s.rows));
    out_.append(s.knobs.str());
    if (s.vectorize) out_(" vectorize");
    if (s.vectorBits) out_("({} bits)", s.vectorBits);
    if (s.unroll) out_(" unroll({})", s.unroll);
    if (s.vectorWidth) out_(" width({})", s.vectorWidth);
    if (s.interleave) out_(" interleave({})", s.interleave);
    if (s.maskedTail) out_(" masked-tail");
    if (s.gatherAhead) out_(" prefetch({})", s.gatherAhead);
    w_.braced(s.body[0]);
  }
  void visitAssign(const Stmt &s) override {
    out_("{}{} {}", pad(), print(s.lhs), s.atomic ? "atomic " : "");
    if (s.compound) out_("{}", s.isMinMax ? (s.isMax ? "max" : "min") : ast::binOpToken(s.op));
    out_("= {}\n", print(s.value));
  }
  void visitDeclLocal(const Stmt &s) override {
    out_("{}local %{} {}: {}{}\n", pad(), s.local, s.localName, scalarName(s.type), s.value ? " = " + print(s.value) : "");
  }
  void visitSetLocal(const Stmt &s) override { out_("{}%{} = {}\n", pad(), s.local, print(s.value)); }
  void visitIf(const Stmt &s) override {
    w_.ifElse(print(s.value), s.body[0], s.body[1]);
  }
  void visitAlloc(const Stmt &s) override {
    out_("{}where {}: {}", pad(), s.tensor->name, types::str(s.tensor->type));
    w_.braced(s.body[0]);
  }
  void visitFail(const Stmt &s) override { out_("{}fail {}\n", pad(), s.code); }
  void visitBarrier(const Stmt &) override { out_("{}barrier\n", pad()); }

 private:
  std::string pad() const { return w_.pad(); }
  TextOut &out_;
  NestedWriter<StmtP> w_;
};

}  // namespace

std::string print(const StmtP &s, int indent) {
  TextOut out;
  StmtPrinter(out, indent).visit(s);
  return out.str();
}

std::string quoted(const StmtP &s) {
  std::string text = print(s);
  size_t b = text.find_first_not_of(" \n"), e = text.find_last_not_of(" \n");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

std::string print(const Kernel &k) {
  TextOut out;
  out("kernel {}{}{}{}{}\n", k.name, k.cuda ? " (cuda)" : "", k.sizeFunction ? " (sizes)" : "", k.planned ? " (planned)" : "",
      k.internal ? " (internal)" : "");
  for (const KernelParam &p : k.params) {
    out("  param {} {}", p.abi.ctype, p.abi.name);
    if (p.tensor && (p.tensor->kind == Tensor::NatsInput || p.abi.role == tir::AbiParam::OutNats)) {
      // The offsets of a level (a dependent pair's nats): not a level itself.
      out(" -> {}: nats", p.tensor->name);
    } else if (p.tensor) {
      out(" -> {}: {}", p.tensor->name, types::str(p.tensor->type));
      std::string formats = formatNames(p.tensor->type);  // the level formats read from the type
      if (!formats.empty()) out(" {{{}}}", formats);
    }
    out("\n");
  }
  for (size_t i = 0; i < k.outputSizes.size(); ++i) out("  size[{}] = {}\n", i, k.outputSizes[i].str());
  if (!k.inPlaceStaged.empty()) out("  // result staged in {}, then copied in place: {}\n", k.resultTensor->name, k.inPlaceStaged);
  StmtPrinter(out, 1).visit(k.body);
  return out.str();
}

bool anyStmt(const StmtP &s, const std::function<bool(const Stmt &)> &pred) { return ir::anyNode(s, pred, &Stmt::body); }

bool anyExpr(const ExprP &e, const std::function<bool(const Expr &)> &pred) { return ir::anyNode(e, pred, &Expr::args); }

void forEachStmt(const StmtP &s, const std::function<void(const StmtP &)> &fn) { ir::forEachNode(s, fn, &Stmt::body); }

bool natMentions(const Expr &e, int64_t id) {
  for (const Nat &ix : e.indices)
    if (ix.mentions(id)) return true;
  return e.kind == ExprKind::NatE && e.nat.mentions(id);
}

bool readsTensor(const ExprP &e, int64_t t) {
  return anyExpr(e, [t](const Expr &x) { return (x.kind == ExprKind::Access && x.tensor->id == t) || natMentions(x, t); });
}

bool sameElement(const ExprP &a, const ExprP &b) {
  return a->kind == ExprKind::Access && b->kind == ExprKind::Access && a->tensor->id == b->tensor->id && a->leaf == b->leaf &&
         a->indices == b->indices;
}

std::optional<UpdateForm> updateForm(const ExprP &v, const std::function<bool(const ExprP &)> &isSelf) {
  if (!v || v->args.size() != 2) return std::nullopt;
  bool add = v->kind == ExprKind::Binary && v->binop == ast::BinOp::Add;
  if (!add && v->kind != ExprKind::MinMax) return std::nullopt;
  for (int side = 0; side < 2; ++side)
    if (isSelf(v->args[side])) return UpdateForm{!add, !add && v->isMax, v->args[1 - side]};
  return std::nullopt;
}

const Stmt *findForall(const StmtP &s, const std::function<bool(const Stmt &)> &pred) {
  const Stmt *found = nullptr;
  anyStmt(s, [&](const Stmt &x) {
    if (x.kind == StmtKind::Forall && pred(x)) found = &x;
    return found != nullptr;
  });
  return found;
}

}  // namespace spl::cin
