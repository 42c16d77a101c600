/// \file LoopIr.cpp: constructors, the shared queries and rewrites and the printer of the loop IR
/// (`--emit=loopir`); the walks go through loopir/Visitor.h.
#include "loopir/LoopIr.h"

#include <algorithm>

#include "support/Format.h"
#include "support/IrWalk.h"
#include "loopir/Visitor.h"

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

ExprP alignGap(int buffer, ExprP index, int64_t bytes) {
  auto e = mk(ExprKind::AlignGap, Ty::I64);
  e->buffer = buffer;
  e->ival = bytes;
  e->args = {std::move(index)};
  return e;
}

namespace {
/// Replaces every use of one variable in expressions (what binds or assigns it is left alone).
class VarSubstitution : public Mutator {
 public:
  VarSubstitution(int v, ExprP by) : v_(v), by_(std::move(by)) {}

 protected:
  ExprP mutateVar(const ExprP &e) override { return e->var == v_ ? by_ : e; }

 private:
  int v_;
  ExprP by_;
};
}  // namespace

ExprP substituteVar(const ExprP &e, int v, const ExprP &by) { return VarSubstitution(v, by).mutate(e); }

StmtP substituteVar(const StmtP &s, int v, const ExprP &by) { return VarSubstitution(v, by).mutate(s); }

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

StmtP prefetch(int buffer, ExprP index, int field, int locality) {
  auto s = mks(StmtKind::Prefetch);
  s->buffer = buffer;
  s->a = std::move(index);
  s->field = field;
  s->locality = locality;
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
      if (a->isMax != b->isMax || a->neverNan != b->neverNan) return false;
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
    case ExprKind::AlignGap:
      if (a->buffer != b->buffer || a->ival != b->ival) return false;
      break;
    case ExprKind::Select:
    case ExprKind::Cast: break;
  }
  for (size_t k = 0; k < a->args.size(); ++k)
    if (!sameExpr(a->args[k], b->args[k])) return false;
  return true;
}

std::optional<int64_t> constUpper(const ExprP &e) {
  switch (e->kind) {
    case ExprKind::Const: return e->ival;
    case ExprKind::Cast: return constUpper(e->args[0]);
    case ExprKind::MinMax: {
      auto a = constUpper(e->args[0]), b = constUpper(e->args[1]);
      if (e->isMax) {
        if (a && b) return std::max(*a, *b);
        return std::nullopt;
      }
      if (a && b) return std::min(*a, *b);
      return a ? a : b;
    }
    case ExprKind::Select: {
      auto a = constUpper(e->args[1]), b = constUpper(e->args[2]);
      if (a && b) return std::max(*a, *b);
      return std::nullopt;
    }
    case ExprKind::Binary: {
      auto a = constUpper(e->args[0]), b = constUpper(e->args[1]);
      if (!a || !b) return std::nullopt;
      switch (e->binop) {
        case BinOp::Add: return *a + *b;
        case BinOp::Mul: return *a * *b;
        case BinOp::FloorDiv:
        case BinOp::ExactDiv:
        case BinOp::Div: return *b > 0 ? std::optional<int64_t>(*a / *b) : std::nullopt;
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

bool mentionsVar(const ExprP &e, int v) {
  return anyExpr(e, [&](const Expr &x) { return x.kind == ExprKind::Var && x.var == v; });
}

bool unitStride(const ExprP &index, int v, ExprP &base) {
  if (index->kind == ExprKind::Var && index->var == v) {
    base = nullptr;
    return true;
  }
  if (index->kind != ExprKind::Binary || index->binop != BinOp::Add) return false;
  for (int side = 0; side < 2; ++side) {
    const ExprP &rest = index->args[1 - side];
    ExprP inner;
    if (!mentionsVar(rest, v) && unitStride(index->args[side], v, inner)) {
      base = inner ? bin(BinOp::Add, rest, inner) : rest;
      return true;
    }
  }
  return false;
}

namespace {
/// Finds a use of a variable, or a statement that binds or assigns it.
class VarMention : public Visitor {
 public:
  explicit VarMention(int v) : v_(v) {}
  bool found = false;

 protected:
  void visitVar(const Expr &e) override { found = found || e.var == v_; }
  void visitFor(const Stmt &s) override { binds(s); }
  void visitAssign(const Stmt &s) override { binds(s); }
  void visitWarpReduce(const Stmt &s) override { binds(s); }
  void visitArrive(const Stmt &s) override { binds(s); }

 private:
  void binds(const Stmt &s) {
    found = found || s.var == v_;
    visitChildren(s);
  }
  int v_;
};
}  // namespace

bool mentionsVar(const StmtP &s, int v) {
  VarMention m(v);
  m.visit(s);
  return m.found;
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

namespace {
/// The largest variable id a function's body binds or uses.
class LargestVar : public Visitor {
 public:
  int largest = 0;

 protected:
  void visitVar(const Expr &e) override { largest = std::max(largest, e.var); }
  void visitFor(const Stmt &s) override { note(s); }
  void visitDecl(const Stmt &s) override { note(s); }
  void visitAssign(const Stmt &s) override { note(s); }
  void visitWarpReduce(const Stmt &s) override {
    largest = std::max(largest, s.partner);
    note(s);
  }
  void visitArrive(const Stmt &s) override { note(s); }

 private:
  void note(const Stmt &s) {
    largest = std::max(largest, s.var);
    visitChildren(s);
  }
};
}  // namespace

int Function::freshVarId() const {
  LargestVar walk;
  for (const ScalarParam &p : scalars) walk.largest = std::max(walk.largest, p.var);
  walk.visit(body);
  return walk.largest + 1;
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

namespace {

/// Writes an expression in --emit=loopir's syntax.
class ExprPrinter : public Visitor {
 public:
  explicit ExprPrinter(TextOut &out) : out_(out) {}

 protected:
  void visitConst(const Expr &e) override {
    if (isFloatTy(e.type)) out_("{:g}{}", e.fval, e.type == Ty::F32 ? "f" : "");
    else out_("{}", e.ival);
  }
  void visitVar(const Expr &e) override { out_("v{}", e.var); }
  void visitLoad(const Expr &e) override {
    out_("{}{}[", e.isVolatile ? "volatile b" : "b", e.buffer);
    visit(e.args[0]);
    out_("]");
    if (e.field >= 0) out_(".f{}", e.field);
  }
  void visitUnary(const Expr &e) override {
    out_("{}{}", ast::unOpToken(e.unop), ast::isPrefixOp(e.unop) ? "" : "(");
    visit(e.args[0]);
    if (!ast::isPrefixOp(e.unop)) out_(")");
  }
  void visitBinary(const Expr &e) override {
    if (e.binop == BinOp::FloorDiv || e.binop == BinOp::ExactDiv) return call(binOpName(e.binop), e, "");
    out_("(");
    visit(e.args[0]);
    out_(" {}{} ", binOpName(e.binop), e.reassoc ? "~" : "");
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
  void visitCast(const Expr &e) override { call(tyName(e.type), e, ""); }
  void visitMinMax(const Expr &e) override { call(e.isMax ? (e.neverNan ? "max.nn" : "max") : (e.neverNan ? "min.nn" : "min"), e, ""); }
  void visitGpuIndex(const Expr &e) override { out_("{}", gpuIndexName(e.gpuIndex)); }
  void visitWarpShuffle(const Expr &e) override {
    call(e.shuffle == ShuffleKind::Down ? "shfl_down" : "shfl_idx", e, "width ");
  }
  void visitWarpVote(const Expr &e) override { call(e.vote == VoteKind::Before ? "vote_before" : "vote_count", e, "width "); }
  void visitAlignGap(const Expr &e) override {
    out_("align_gap{}(b{}[", e.ival, e.buffer);
    visit(e.args[0]);
    out_("])");
  }

 private:
  /// name(arg, arg, ..., lastLabel last)
  void call(const char *name, const Expr &e, const char *lastLabel) {
    out_("{}(", name);
    for (size_t k = 0; k < e.args.size(); ++k) {
      if (k) out_(", {}", k + 1 == e.args.size() ? lastLabel : "");
      visit(e.args[k]);
    }
    out_(")");
  }
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

/// Writes statements in --emit=loopir's syntax, one per line, nested bodies indented.
class StmtPrinter : public Visitor {
 public:
  StmtPrinter(TextOut &out, int indent) : out_(out), w_(out, indent, [this](const StmtP &s) { visit(s); }) {}

 protected:
  void visitBlock(const Stmt &s) override {
    for (const StmtP &b : s.body) visit(b);
  }
  void visitFor(const Stmt &s) override {
    out_("{}for v{} ({}) in [{}, {}) {}{}", pad(), s.var, s.name, print(s.a), print(s.b),
         s.step ? "step " + print(s.step) + " " : "", loopName(s.loop));
    if (s.segment) {
      out_(" segment(");
      if (s.segment.offsets >= 0) out_("{}{}", s.segment.fromZero ? "prefix b" : "offsets b", s.segment.offsets);
      if (s.segment.lengths >= 0) out_("{}lengths b{}", s.segment.offsets >= 0 ? ", " : "", s.segment.lengths);
      out_(" @ {}{}", print(s.segment.parent), s.segment.whole ? ")" : ", part)");
    }
    if (s.balanceBy >= 0) out_(" balanced-by b{}", s.balanceBy);
    if (s.iterationWork) out_(" work {}", print(s.iterationWork));
    if (s.workGrowth) out_(" growth {}", print(s.workGrowth));
    if (s.rows != ast::GpuRowMapping::Auto) out_(" rows={}", ast::gpuRowMappingName(s.rows));
    out_.append(s.knobs.str());
    if (s.vectorize) out_(" vectorize");
    if (s.vectorWidth) out_(" width={}", s.vectorWidth);
    if (s.interleave) out_(" interleave={}", s.interleave);
    if (s.gatherAhead) out_(" prefetch-ahead={}", s.gatherAhead);
    if (s.maskedTail) out_(" masked-tail");
    if (s.unroll) out_(" unroll={}", s.unroll);
    w_.braced(s.body[0]);
  }
  void visitStore(const Stmt &s) override {
    out_("{}b{}[{}]{}{}= {}\n", pad(), s.buffer, print(s.a), s.field >= 0 ? fmt::format(".f{}", s.field) : "",
         s.atomic != AtomicOp::None ? fmt::format(" atomic {}", atomicOpName(s.atomic)) : " ", print(s.b));
  }
  void visitDecl(const Stmt &s) override {
    out_("{}var v{} {}: {}{}\n", pad(), s.var, s.name, tyName(s.type), s.a ? " = " + print(s.a) : "");
  }
  void visitAssign(const Stmt &s) override { out_("{}v{} = {}\n", pad(), s.var, print(s.a)); }
  void visitIf(const Stmt &s) override {
    w_.ifElse((s.seldom ? "seldom " : "") + print(s.a), s.body[0], s.body[1]);
  }
  void visitAlloc(const Stmt &s) override { out_("{}alloc b{}[{}]\n", pad(), s.buffer, print(s.a)); }
  void visitFree(const Stmt &s) override { out_("{}free b{}\n", pad(), s.buffer); }
  void visitSigmaPrefix(const Stmt &s) override {
    out_("{}b{} = spl_sigma_prefix(b{}, {})\n", pad(), s.buffer, s.source, print(s.a));
  }
  void visitReturn(const Stmt &s) override { out_("{}return {}\n", pad(), s.code); }
  void visitBarrier(const Stmt &) override { out_("{}barrier\n", pad()); }
  void visitPrefetch(const Stmt &s) override {
    out_("{}prefetch{} b{}[{}]\n", pad(), s.locality ? fmt::format(".t{}", 3 - s.locality) : "", s.buffer, print(s.a));
  }
  void visitWarpReduce(const Stmt &s) override {
    out_("{}warp_reduce v{} = {} over {} lanes (v{}: another lane's v{})\n", pad(), s.var, print(s.b), print(s.a), s.partner,
         s.var);
  }
  void visitGpuKernel(const Stmt &s) override {
    out_("{}gpu.kernel ({}) rows={}{} threads {} block {}", pad(), s.name, ast::gpuRowMappingName(s.rows), s.knobs.str(),
         s.a ? print(s.a) : "resident", print(s.b));
    w_.braced(s.body[0]);
  }
  void visitWhile(const Stmt &s) override {
    out_("{}while {}", pad(), print(s.a));
    w_.braced(s.body[0]);
  }
  void visitFence(const Stmt &) override { out_("{}fence\n", pad()); }
  void visitArrive(const Stmt &s) override { out_("{}v{} = arrive b{}[{}]\n", pad(), s.var, s.buffer, print(s.a)); }

 private:
  std::string pad() const { return w_.pad(); }
  TextOut &out_;
  NestedWriter<StmtP> w_;
};

}  // namespace

std::string print(const PlanEntry &p) {
  if (p.spmm) {
    std::string widths;
    for (const PlanEntry::Width &w : p.widths) {
      widths += fmt::format("; width {}: csr {}", w.width, w.csr);
      for (const auto &[b, kernel] : w.bcsr) widths += fmt::format(", bcsr {} ({}x{})", kernel, b, b);
    }
    return fmt::format("plan {} ({}, spmm): csr {}{}\n", p.name, p.f64 ? "f64" : "f32", p.csr, widths);
  }
  std::string blocks;
  for (const auto &[b, kernel] : p.bcsr) blocks += fmt::format(", bcsr {} ({}x{})", kernel, b, b);
  const std::string candidates = fmt::format("csr of short rows {}, of two sums {}, with gathers prefetched {}, sell {} ({} rows a window) and {} ({} rows), {} lanes, dia {}{}",
                                             p.csrShort, p.csrTwoSums, p.csrPrefetch, p.sellNarrow, p.narrowRows, p.sellWide, p.wideRows, p.lanes, p.dia, blocks);
  if (p.transposed)
    return fmt::format("plan {} ({}, transposed): csr^T {}, csr over the transpose {}; the copy's plan: {}\n", p.name,
                       p.f64 ? "f64" : "f32", p.csr, p.gather, candidates);
  return fmt::format("plan {} ({}): csr {}, {}\n", p.name, p.f64 ? "f64" : "f32", p.csr, candidates);
}

std::string print(const Function &f) {
  TextOut out;
  out("function {}{}{}{}{}\n", f.name, f.cuda ? " (cuda)" : "", f.internal ? " (internal)" : "",
      f.fpContract ? "" : " (fp_contract off)", f.fpReassoc ? "" : " (fp_reassoc off)");
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
  StmtPrinter(out, 1).visit(f.body);
  return out.str();
}

}  // namespace spl::loopir
