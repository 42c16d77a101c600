/// \file Cin.cpp: constructors and the printer of concrete index notation (`--emit=cin`).
#include "cin/Cin.h"
#include "cin/LevelFormat.h"

#include <fmt/ranges.h>

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
  switch (e->kind) {
    case ExprKind::Const:
    case ExprKind::Local: return true;
    case ExprKind::NatE: {
      // Lookups load from memory; divisions by constants are safe.
      std::vector<int64_t> ids;
      for (const Nat::Term &t : e->nat.terms())
        for (const auto &f : t.mono.factors)
          if (f.first->kind == NatAtomKind::Lookup || f.first->kind == NatAtomKind::Sum) return false;
      return true;
    }
    case ExprKind::Access: return false;
    case ExprKind::Binary:
      if ((e->binop == ast::BinOp::Div || e->binop == ast::BinOp::Mod) && !isFloat(e->type)) return false;
      [[fallthrough]];
    default:
      for (const ExprP &a : e->args)
        if (!isSafe(a)) return false;
      return true;
  }
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

ExprP substitute(const ExprP &e, const NatSubst &sub) {
  auto c = std::make_shared<Expr>(*e);
  c->nat = spl::substitute(e->nat, sub);
  for (Nat &i : c->indices) i = spl::substitute(i, sub);
  for (ExprP &a : c->args) a = substitute(a, sub);
  if (c->kind == ExprKind::NatE)
    if (auto k = c->nat.asConst()) return constInt(*k);
  return c;
}

StmtP substitute(const StmtP &s, const NatSubst &sub) {
  if (!s) return s;
  auto c = std::make_shared<Stmt>(*s);
  c->lo = spl::substitute(s->lo, sub);
  c->hi = spl::substitute(s->hi, sub);
  if (c->segment && !c->segment->whole) c->segment->parent = spl::substitute(c->segment->parent, sub);
  else if (c->kind == StmtKind::Forall) c->segment = segmentOfExtent(c->lo, c->hi);
  if (c->lhs) c->lhs = substitute(c->lhs, sub);
  if (c->value) c->value = substitute(c->value, sub);
  for (StmtP &b : c->body) b = substitute(b, sub);
  return c;
}

namespace {

std::string leafStr(const std::vector<int> &leaf) {
  std::string s;
  for (int k : leaf) s += fmt::format(".{}", k);
  return s;
}

}  // namespace

std::string print(const ExprP &e) {
  switch (e->kind) {
    case ExprKind::Const:
      if (e->type == Scalar::Bool) return e->bval ? "true" : "false";
      if (isFloat(e->type)) {
        std::string s = fmt::format("{:g}", e->fval);
        if (s.find_first_of(".en") == std::string::npos) s += ".0";
        return s;
      }
      return fmt::format("{}", e->ival);
    case ExprKind::Local: return fmt::format("%{}", e->local);
    case ExprKind::NatE: return fmt::format("({})", e->nat.str());
    case ExprKind::Access: {
      std::vector<std::string> indices;
      for (const Nat &i : e->indices) indices.push_back(i.str());
      return fmt::format("{}[{}]{}", e->tensor->name, fmt::join(indices, ", "), leafStr(e->leaf));
    }
    case ExprKind::Unary: return fmt::format("{}{}", e->unop == ast::UnOp::Neg ? "-" : "!", print(e->args[0]));
    case ExprKind::Binary:
      return fmt::format("({} {}{} {})", print(e->args[0]), ast::binOpToken(e->binop), e->reassoc ? "~" : "", print(e->args[1]));
    case ExprKind::Select: return fmt::format("({} ? {} : {})", print(e->args[0]), print(e->args[1]), print(e->args[2]));
    case ExprKind::Convert: return fmt::format("{}({})", scalarName(e->type), print(e->args[0]));
    case ExprKind::MinMax: return fmt::format("{}({}, {})", e->isMax ? "max" : "min", print(e->args[0]), print(e->args[1]));
  }
  return "?";
}

namespace {

void printStmt(TextOut &out, const StmtP &s, int indent) {
  std::string pad(indent * 2, ' ');
  auto nested = [&](const StmtP &body) { printStmt(out, body, indent + 1); };
  switch (s->kind) {
    case StmtKind::Block:
      for (const StmtP &b : s->body) printStmt(out, b, indent);
      break;
    case StmtKind::Forall:
      out("{}forall {}%{} in [{}, {}) {}", pad, s->varName, s->var, s->lo.str(), s->hi.str(), forallKindName(s->forall));
      if (s->segment)
        out(" segment({}{} @ {}{}", s->segment->array.name, s->segment->lengths ? " lengths" : "", s->segment->parent.str(),
            s->segment->whole ? ")" : ", part)");
      if (s->balanceBy) out(" balanced");
      if (s->rows != ast::GpuRowMapping::Auto) out(" rows={}", ast::gpuRowMappingName(s->rows));
      out.append(s->knobs.str());
      if (s->vectorize) out(" vectorize");
      if (s->unroll) out(" unroll({})", s->unroll);
      out(" {{\n");
      nested(s->body[0]);
      out("{}}}\n", pad);
      break;
    case StmtKind::Assign:
      out("{}{} {}", pad, print(s->lhs), s->atomic ? "atomic " : "");
      if (s->compound) out("{}", s->isMinMax ? (s->isMax ? "max" : "min") : ast::binOpToken(s->op));
      out("= {}\n", print(s->value));
      break;
    case StmtKind::DeclLocal:
      out("{}local %{} {}: {}{}\n", pad, s->local, s->localName, scalarName(s->type), s->value ? " = " + print(s->value) : "");
      break;
    case StmtKind::SetLocal: out("{}%{} = {}\n", pad, s->local, print(s->value)); break;
    case StmtKind::If:
      out("{}if {} {{\n", pad, print(s->value));
      nested(s->body[0]);
      out("{}}}", pad);
      if (s->body[1]) {
        out(" else {{\n");
        nested(s->body[1]);
        out("{}}}", pad);
      }
      out("\n");
      break;
    case StmtKind::Alloc:
      out("{}where {}: {} {{\n", pad, s->tensor->name, types::str(s->tensor->type));
      nested(s->body[0]);
      out("{}}}\n", pad);
      break;
    case StmtKind::Fail: out("{}fail {}\n", pad, s->code); break;
    case StmtKind::Barrier: out("{}barrier\n", pad); break;
  }
}

}  // namespace

std::string print(const StmtP &s, int indent) {
  TextOut out;
  printStmt(out, s, indent);
  return out.str();
}

std::string print(const Kernel &k) {
  TextOut out;
  out("kernel {}{}{}\n", k.name, k.cuda ? " (cuda)" : "", k.sizeFunction ? " (sizes)" : "");
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
  printStmt(out, k.body, 1);
  return out.str();
}

bool anyStmt(const StmtP &s, const std::function<bool(const Stmt &)> &pred) { return ir::anyNode(s, pred, &Stmt::body); }

bool anyExpr(const ExprP &e, const std::function<bool(const Expr &)> &pred) { return ir::anyNode(e, pred, &Expr::args); }

void forEachStmt(const StmtP &s, const std::function<void(const StmtP &)> &fn) { ir::forEachNode(s, fn, &Stmt::body); }

const Stmt *findForall(const StmtP &s, const std::function<bool(const Stmt &)> &pred) {
  const Stmt *found = nullptr;
  anyStmt(s, [&](const Stmt &x) {
    if (x.kind == StmtKind::Forall && pred(x)) found = &x;
    return found != nullptr;
  });
  return found;
}

}  // namespace spl::cin
