/// \file LoopIr.cpp: constructors and the printer of the loop IR (`--emit=loopir`).
#include "loopir/LoopIr.h"

#include <algorithm>

#include "support/Format.h"
#include "support/IrWalk.h"

namespace spl::loopir {

const char *tyName(Ty t) {
  switch (t) {
    case Ty::I1: return "i1";
    case Ty::I32: return "i32";
    case Ty::I64: return "i64";
    case Ty::F32: return "f32";
    case Ty::F64: return "f64";
  }
  return "?";
}
bool isFloatTy(Ty t) { return t == Ty::F32 || t == Ty::F64; }
int tyBytes(Ty t) {
  switch (t) {
    case Ty::I1: return 1;
    case Ty::I32:
    case Ty::F32: return 4;
    case Ty::I64:
    case Ty::F64: return 8;
  }
  return 8;
}

const char *binOpName(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::Rem: return "%";
    case BinOp::FloorDiv: return "floordiv";
    case BinOp::ExactDiv: return "exactdiv";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::And: return "&&";
    case BinOp::Or: return "||";
  }
  return "?";
}

namespace {
std::shared_ptr<Expr> mk(ExprKind k, Ty t) {
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
bool isCompare(BinOp op) {
  return op == BinOp::Eq || op == BinOp::Ne || op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge;
}
}  // namespace

ExprP cInt(int64_t v, Ty t) {
  auto e = mk(ExprKind::Const, t);
  e->ival = v;
  e->fval = static_cast<double>(v);
  return e;
}
ExprP cFloat(double v, Ty t) {
  auto e = mk(ExprKind::Const, t);
  e->fval = v;
  return e;
}
ExprP var(int id, Ty t) {
  auto e = mk(ExprKind::Var, t);
  e->var = id;
  return e;
}
ExprP load(int buffer, ExprP index, Ty t, int field) {
  auto e = mk(ExprKind::Load, t);
  e->buffer = buffer;
  e->field = field;
  e->args = {std::move(index)};
  return e;
}
ExprP loadVolatile(int buffer, ExprP index, Ty t) {
  auto e = mk(ExprKind::Load, t);
  e->buffer = buffer;
  e->isVolatile = true;
  e->args = {std::move(index)};
  return e;
}
ExprP un(ast::UnOp op, ExprP a) {
  auto e = mk(ExprKind::Unary, a->type);
  e->unop = op;
  e->args = {std::move(a)};
  return e;
}
ExprP bin(BinOp op, ExprP a, ExprP b, bool reassoc) {
  Ty t = isCompare(op) || op == BinOp::And || op == BinOp::Or ? Ty::I1 : a->type;
  // Fold the integer identities the flattening produces everywhere (x + 0, x * 1, ...).
  if (a->type != Ty::F32 && a->type != Ty::F64 && !isCompare(op)) {
    bool ac = a->kind == ExprKind::Const, bc = b->kind == ExprKind::Const;
    if (ac && bc && op == BinOp::Add) return cInt(a->ival + b->ival, t);
    if (ac && bc && op == BinOp::Sub) return cInt(a->ival - b->ival, t);
    if (ac && bc && op == BinOp::Mul) return cInt(a->ival * b->ival, t);
    if (op == BinOp::Add && bc && b->ival == 0) return a;
    if (op == BinOp::Add && ac && a->ival == 0) return b;
    if (op == BinOp::Sub && bc && b->ival == 0) return a;
    if (op == BinOp::Mul && bc && b->ival == 1) return a;
    if (op == BinOp::Mul && ac && a->ival == 1) return b;
    if (op == BinOp::Mul && ((bc && b->ival == 0) || (ac && a->ival == 0))) return cInt(0, t);
  }
  auto e = mk(ExprKind::Binary, t);
  e->binop = op;
  e->reassoc = reassoc;
  e->args = {std::move(a), std::move(b)};
  return e;
}
ExprP sel(ExprP c, ExprP a, ExprP b) {
  auto e = mk(ExprKind::Select, a->type);
  e->args = {std::move(c), std::move(a), std::move(b)};
  return e;
}
ExprP cast(ExprP a, Ty t) {
  if (a->type == t) return a;
  if (a->kind == ExprKind::Const && !isFloatTy(t) && !isFloatTy(a->type) && t != Ty::I1) return cInt(a->ival, t);
  auto e = mk(ExprKind::Cast, t);
  e->args = {std::move(a)};
  return e;
}
ExprP mm(bool isMax, ExprP a, ExprP b) {
  auto e = mk(ExprKind::MinMax, a->type);
  e->isMax = isMax;
  e->args = {std::move(a), std::move(b)};
  return e;
}

const char *gpuIndexName(GpuIndexKind k) {
  switch (k) {
    case GpuIndexKind::ThreadX: return "threadIdx.x";
    case GpuIndexKind::BlockX: return "blockIdx.x";
    case GpuIndexKind::BlockDimX: return "blockDim.x";
    case GpuIndexKind::GridDimX: return "gridDim.x";
  }
  return "?";
}
ExprP gpuIndex(GpuIndexKind k) {
  auto e = mk(ExprKind::GpuIndex, Ty::I64);
  e->gpuIndex = k;
  return e;
}
ExprP warpShuffle(ShuffleKind k, ExprP value, ExprP lane, ExprP width) {
  auto e = mk(ExprKind::WarpShuffle, value->type);
  e->shuffle = k;
  e->args = {std::move(value), std::move(lane), std::move(width)};
  return e;
}

ExprP warpVote(VoteKind k, ExprP predicate, ExprP width) {
  auto e = mk(ExprKind::WarpVote, Ty::I64);
  e->vote = k;
  e->args = {std::move(predicate), std::move(width)};
  return e;
}

ExprP substituteVar(const ExprP &e, int v, const ExprP &by) {
  if (!e) return e;
  if (e->kind == ExprKind::Var && e->var == v) return by;
  std::shared_ptr<Expr> copy;
  for (size_t k = 0; k < e->args.size(); ++k) {
    ExprP a = substituteVar(e->args[k], v, by);
    if (a == e->args[k]) continue;
    if (!copy) copy = std::make_shared<Expr>(*e);
    copy->args[k] = a;
  }
  return copy ? ExprP(copy) : e;
}

StmtP substituteVar(const StmtP &s, int v, const ExprP &by) {
  return rewriteBottomUp(s, [&](const StmtP &x) -> StmtP {
    ExprP a = substituteVar(x->a, v, by), b = substituteVar(x->b, v, by), step = substituteVar(x->step, v, by);
    ExprP parent = substituteVar(x->segment.parent, v, by);
    if (a == x->a && b == x->b && step == x->step && parent == x->segment.parent) return x;
    auto copy = std::make_shared<Stmt>(*x);
    copy->a = a;
    copy->b = b;
    copy->step = step;
    copy->segment.parent = parent;
    return copy;
  });
}

bool Segment::ofRow(int rowVar) const {
  return parent && whole && offsets >= 0 && parent->kind == ExprKind::Var && parent->var == rowVar;
}

StmtP block(std::vector<StmtP> s) {
  auto b = mks(StmtKind::Block);
  for (StmtP &x : s) {
    if (!x) continue;
    if (x->kind == StmtKind::Block) b->body.insert(b->body.end(), x->body.begin(), x->body.end());
    else b->body.push_back(std::move(x));
  }
  return b;
}
StmtP forLoop(int v, std::string name, ExprP lo, ExprP hi, StmtP body, LoopKind k) {
  auto s = mks(StmtKind::For);
  s->var = v;
  s->name = std::move(name);
  s->a = std::move(lo);
  s->b = std::move(hi);
  s->body = {std::move(body)};
  s->loop = k;
  return s;
}
StmtP steppedLoop(int v, std::string name, ExprP lo, ExprP hi, ExprP step, StmtP body) {
  auto s = mks(StmtKind::For);
  s->var = v;
  s->name = std::move(name);
  s->a = std::move(lo);
  s->b = std::move(hi);
  s->step = std::move(step);
  s->body = {std::move(body)};
  return s;
}
StmtP warpReduce(int var, int partner, ExprP width, ExprP combine) {
  auto s = mks(StmtKind::WarpReduce);
  s->var = var;
  s->partner = partner;
  s->a = std::move(width);
  s->b = std::move(combine);
  return s;
}
StmtP gpuKernel(std::string name, ast::GpuRowMapping rows, ExprP threads, int64_t block, StmtP body) {
  auto s = mks(StmtKind::GpuKernel);
  s->name = std::move(name);
  s->rows = rows;
  s->a = std::move(threads);
  s->b = cInt(block);
  s->body = {std::move(body)};
  return s;
}
StmtP whileLoop(ExprP condition, StmtP body) {
  auto s = mks(StmtKind::While);
  s->a = std::move(condition);
  s->body = {std::move(body)};
  return s;
}
StmtP fence() { return mks(StmtKind::Fence); }
StmtP arrive(int var, int counters, ExprP word) {
  auto s = mks(StmtKind::Arrive);
  s->var = var;
  s->buffer = counters;
  s->a = std::move(word);
  return s;
}
StmtP store(int buffer, ExprP index, ExprP value, int field) {
  auto s = mks(StmtKind::Store);
  s->buffer = buffer;
  s->a = std::move(index);
  s->b = std::move(value);
  s->field = field;
  return s;
}
StmtP atomicUpdate(int buffer, ExprP index, AtomicOp op, ExprP value) {
  auto s = mks(StmtKind::Store);
  s->buffer = buffer;
  s->a = std::move(index);
  s->b = std::move(value);
  s->atomic = op;
  return s;
}
const char *atomicOpName(AtomicOp op) {
  switch (op) {
    case AtomicOp::None: return "";
    case AtomicOp::Add: return "+";
    case AtomicOp::Min: return "min";
    case AtomicOp::Max: return "max";
  }
  return "?";
}
StmtP decl(int v, std::string name, Ty t, ExprP init) {
  auto s = mks(StmtKind::Decl);
  s->var = v;
  s->name = std::move(name);
  s->type = t;
  s->a = std::move(init);
  return s;
}
StmtP assignVar(int v, ExprP value) {
  auto s = mks(StmtKind::Assign);
  s->var = v;
  s->a = std::move(value);
  return s;
}
StmtP ifThen(ExprP c, StmtP then, StmtP otherwise) {
  auto s = mks(StmtKind::If);
  s->a = std::move(c);
  s->body = {std::move(then), std::move(otherwise)};
  return s;
}

StmtP prefetch(int buffer, ExprP index, int field) {
  auto s = mks(StmtKind::Prefetch);
  s->buffer = buffer;
  s->a = std::move(index);
  s->field = field;
  return s;
}

StmtP allocBuffer(int buffer, ExprP count) {
  auto s = mks(StmtKind::Alloc);
  s->buffer = buffer;
  s->a = std::move(count);
  return s;
}

StmtP freeBuffer(int buffer) {
  auto s = mks(StmtKind::Free);
  s->buffer = buffer;
  return s;
}

StmtP sigmaPrefix(int prefix, int lengths, ExprP n) {
  auto s = mks(StmtKind::SigmaPrefix);
  s->buffer = prefix;
  s->source = lengths;
  s->a = std::move(n);
  return s;
}

bool anyExpr(const ExprP &e, const std::function<bool(const Expr &)> &pred) { return ir::anyNode(e, pred, &Expr::args); }

bool anyStmt(const StmtP &s, const std::function<bool(const Stmt &)> &pred) { return ir::anyNode(s, pred, &Stmt::body); }

bool sameExpr(const ExprP &a, const ExprP &b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type || a->args.size() != b->args.size()) return false;
  switch (a->kind) {
    case ExprKind::Const:
      if (a->ival != b->ival || a->fval != b->fval) return false;
      break;
    case ExprKind::Var:
      if (a->var != b->var) return false;
      break;
    case ExprKind::Load:
      if (a->buffer != b->buffer || a->field != b->field || a->isVolatile != b->isVolatile) return false;
      break;
    case ExprKind::Unary:
      if (a->unop != b->unop) return false;
      break;
    case ExprKind::Binary:
      if (a->binop != b->binop || a->reassoc != b->reassoc) return false;
      break;
    case ExprKind::MinMax:
      if (a->isMax != b->isMax) return false;
      break;
    case ExprKind::GpuIndex:
      if (a->gpuIndex != b->gpuIndex) return false;
      break;
    case ExprKind::WarpShuffle:
      if (a->shuffle != b->shuffle) return false;
      break;
    case ExprKind::WarpVote:
      if (a->vote != b->vote) return false;
      break;
    case ExprKind::Select:
    case ExprKind::Cast: break;
  }
  for (size_t k = 0; k < a->args.size(); ++k)
    if (!sameExpr(a->args[k], b->args[k])) return false;
  return true;
}

bool mentionsVar(const ExprP &e, int v) {
  return anyExpr(e, [&](const Expr &x) { return x.kind == ExprKind::Var && x.var == v; });
}

bool mentionsVar(const StmtP &s, int v) {
  if (!s) return false;
  if ((s->kind == StmtKind::For || s->kind == StmtKind::Assign || s->kind == StmtKind::WarpReduce || s->kind == StmtKind::Arrive) &&
      s->var == v)
    return true;
  if (mentionsVar(s->a, v) || mentionsVar(s->b, v) || mentionsVar(s->step, v)) return true;
  for (const StmtP &b : s->body)
    if (mentionsVar(b, v)) return true;
  return false;
}

StmtP rewriteBottomUp(const StmtP &s, const std::function<StmtP(const StmtP &)> &rewrite) {
  return ir::rewriteNodes(s, rewrite, &Stmt::body);
}

void rewriteTopLevel(Function &f, const std::function<StmtP(const StmtP &)> &rewrite) {
  if (f.body->kind != StmtKind::Block) {
    f.body = rewrite(f.body);
    return;
  }
  auto body = std::make_shared<Stmt>(*f.body);
  for (StmtP &s : body->body) s = rewrite(s);
  f.body = body;
}

int Function::freshVarId() const {
  int largest = 0;
  for (const ScalarParam &p : scalars) largest = std::max(largest, p.var);
  auto uses = [&](const Expr &e) {
    if (e.kind == ExprKind::Var) largest = std::max(largest, e.var);
    return false;
  };
  anyStmt(body, [&](const Stmt &s) {
    largest = std::max({largest, s.var, s.partner});
    anyExpr(s.a, uses);
    anyExpr(s.b, uses);
    anyExpr(s.step, uses);
    return false;
  });
  return largest + 1;
}

int Function::freshBufferId() const {
  int largest = 0;
  for (const Buffer &b : buffers) largest = std::max(largest, b.id);
  return largest + 1;
}

const Buffer *Function::buffer(int id) const {
  for (const Buffer &b : buffers)
    if (b.id == id) return &b;
  return nullptr;
}

std::string print(const ExprP &e) {
  switch (e->kind) {
    case ExprKind::Const:
      if (isFloatTy(e->type)) return fmt::format("{:g}{}", e->fval, e->type == Ty::F32 ? "f" : "");
      return fmt::format("{}", e->ival);
    case ExprKind::Var: return fmt::format("v{}", e->var);
    case ExprKind::Load:
      return fmt::format("{}{}[{}]{}", e->isVolatile ? "volatile b" : "b", e->buffer, print(e->args[0]),
                         e->field >= 0 ? fmt::format(".f{}", e->field) : "");
    case ExprKind::Unary: return fmt::format("{}{}", e->unop == ast::UnOp::Neg ? "-" : "!", print(e->args[0]));
    case ExprKind::Binary:
      if (e->binop == BinOp::FloorDiv || e->binop == BinOp::ExactDiv)
        return fmt::format("{}({}, {})", binOpName(e->binop), print(e->args[0]), print(e->args[1]));
      return fmt::format("({} {}{} {})", print(e->args[0]), binOpName(e->binop), e->reassoc ? "~" : "", print(e->args[1]));
    case ExprKind::Select: return fmt::format("({} ? {} : {})", print(e->args[0]), print(e->args[1]), print(e->args[2]));
    case ExprKind::Cast: return fmt::format("{}({})", tyName(e->type), print(e->args[0]));
    case ExprKind::MinMax: return fmt::format("{}({}, {})", e->isMax ? "max" : "min", print(e->args[0]), print(e->args[1]));
    case ExprKind::GpuIndex: return gpuIndexName(e->gpuIndex);
    case ExprKind::WarpShuffle:
      return fmt::format("{}({}, {}, width {})", e->shuffle == ShuffleKind::Down ? "shfl_down" : "shfl_idx", print(e->args[0]),
                         print(e->args[1]), print(e->args[2]));
    case ExprKind::WarpVote:
      return fmt::format("{}({}, width {})", e->vote == VoteKind::Before ? "vote_before" : "vote_count", print(e->args[0]),
                         print(e->args[1]));
  }
  return "?";
}

namespace {

const char *loopName(LoopKind k) {
  switch (k) {
    case LoopKind::Serial: return "serial";
    case LoopKind::Parallel: return "parallel";
    case LoopKind::Vector: return "vector";
    case LoopKind::Reduction: return "reduction";
    case LoopKind::GpuGlobal: return "gpu.global";
    case LoopKind::GpuBlock: return "gpu.block";
    case LoopKind::GpuThread: return "gpu.thread";
    case LoopKind::GpuWarp: return "gpu.warp";
    case LoopKind::GpuLane: return "gpu.lane";
  }
  return "?";
}

void printStmt(TextOut &out, const StmtP &s, int indent) {
  std::string pad(indent * 2, ' ');
  auto nested = [&](const StmtP &body) { printStmt(out, body, indent + 1); };
  switch (s->kind) {
    case StmtKind::Block:
      for (const StmtP &b : s->body) printStmt(out, b, indent);
      break;
    case StmtKind::For:
      out("{}for v{} ({}) in [{}, {}) {}{}", pad, s->var, s->name, print(s->a), print(s->b),
          s->step ? "step " + print(s->step) + " " : "", loopName(s->loop));
      if (s->segment) {
        out(" segment(");
        if (s->segment.offsets >= 0) out("{}{}", s->segment.fromZero ? "prefix b" : "offsets b", s->segment.offsets);
        if (s->segment.lengths >= 0) out("{}lengths b{}", s->segment.offsets >= 0 ? ", " : "", s->segment.lengths);
        out(" @ {}{}", print(s->segment.parent), s->segment.whole ? ")" : ", part)");
      }
      if (s->balanceBy >= 0) out(" balanced-by b{}", s->balanceBy);
      if (s->rows != ast::GpuRowMapping::Auto) out(" rows={}", ast::gpuRowMappingName(s->rows));
      out.append(s->knobs.str());
      if (s->vectorize) out(" vectorize");
      if (s->vectorWidth) out(" width={}", s->vectorWidth);
      if (s->interleave) out(" interleave={}", s->interleave);
      if (s->unroll) out(" unroll={}", s->unroll);
      out(" {{\n");
      nested(s->body[0]);
      out("{}}}\n", pad);
      break;
    case StmtKind::Store:
      out("{}b{}[{}]{}{}= {}\n", pad, s->buffer, print(s->a), s->field >= 0 ? fmt::format(".f{}", s->field) : "",
          s->atomic != AtomicOp::None ? fmt::format(" atomic {}", atomicOpName(s->atomic)) : " ", print(s->b));
      break;
    case StmtKind::Decl: out("{}var v{} {}: {}{}\n", pad, s->var, s->name, tyName(s->type), s->a ? " = " + print(s->a) : ""); break;
    case StmtKind::Assign: out("{}v{} = {}\n", pad, s->var, print(s->a)); break;
    case StmtKind::If:
      out("{}if {} {{\n", pad, print(s->a));
      nested(s->body[0]);
      out("{}}}", pad);
      if (s->body[1]) {
        out(" else {{\n");
        nested(s->body[1]);
        out("{}}}", pad);
      }
      out("\n");
      break;
    case StmtKind::Alloc: out("{}alloc b{}[{}]\n", pad, s->buffer, print(s->a)); break;
    case StmtKind::Free: out("{}free b{}\n", pad, s->buffer); break;
    case StmtKind::SigmaPrefix: out("{}b{} = spl_sigma_prefix(b{}, {})\n", pad, s->buffer, s->source, print(s->a)); break;
    case StmtKind::Return: out("{}return {}\n", pad, s->code); break;
    case StmtKind::Barrier: out("{}barrier\n", pad); break;
    case StmtKind::Prefetch: out("{}prefetch b{}[{}]\n", pad, s->buffer, print(s->a)); break;
    case StmtKind::WarpReduce:
      out("{}warp_reduce v{} = {} over {} lanes (v{}: another lane's v{})\n", pad, s->var, print(s->b), print(s->a), s->partner,
          s->var);
      break;
    case StmtKind::GpuKernel:
      out("{}gpu.kernel ({}) rows={}{} threads {} block {} {{\n", pad, s->name, ast::gpuRowMappingName(s->rows), s->knobs.str(),
          s->a ? print(s->a) : "resident", print(s->b));
      nested(s->body[0]);
      out("{}}}\n", pad);
      break;
    case StmtKind::While:
      out("{}while {} {{\n", pad, print(s->a));
      nested(s->body[0]);
      out("{}}}\n", pad);
      break;
    case StmtKind::Fence: out("{}fence\n", pad); break;
    case StmtKind::Arrive: out("{}v{} = arrive b{}[{}]\n", pad, s->var, s->buffer, print(s->a)); break;
  }
}

}  // namespace

std::string print(const Function &f) {
  TextOut out;
  out("function {}{}\n", f.name, f.cuda ? " (cuda)" : "");
  for (const ScalarParam &p : f.scalars) out("  param {}: v{} {}: {}\n", p.paramIndex, p.var, p.name, tyName(p.type));
  for (const Buffer &b : f.buffers) {
    out("  buffer b{} {}: ", b.id, b.name);
    if (!b.fields.empty()) {
      out("{{");
      for (size_t i = 0; i < b.fields.size(); ++i) out("{}{}", i ? ", " : "", tyName(b.fields[i]));
      out("}}");
    } else {
      out("{}", tyName(b.elem));
    }
    if (b.isParam) out(" param {}", b.paramIndex);
    else if (b.perWarp > 0) out(" workspace {}/warp", b.perWarp);
    else out(" temp");
    out("{}{}\n", b.arrivals ? " arrivals" : "", b.isOutput ? " out" : "");
  }
  printStmt(out, f.body, 1);
  return out.str();
}

}  // namespace spl::loopir
