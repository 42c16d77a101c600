/// \file AlignStreams.cpp: a vector loop's streams start on a cache line (see the header).
#include "loopir/AlignStreams.h"

#include <optional>
#include <set>

#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

/// What a loop's body reads and writes, in program order: the float elements it stores to
/// and loads (buffer and index), and the variables it binds or assigns (never invariant).
class BodyAccesses : public Visitor {
 public:
  struct Access {
    int buffer;
    ExprP index;
  };
  std::vector<Access> stores, loads;
  std::set<int> bound;
  bool nested = false;       // a loop inside: not innermost
  bool carriesFloat = false;  // assigns a float variable declared outside it

  explicit BodyAccesses(const Function &f) : f_(f) {}

 protected:
  void visitStore(const Stmt &s) override {
    if (s.field < 0 && s.atomic == AtomicOp::None && isFloat(s.buffer)) stores.push_back({s.buffer, s.a});
    visitChildren(s);
  }
  void visitLoad(const Expr &e) override {
    if (e.field < 0 && !e.isVolatile && isFloat(e.buffer)) loads.push_back({e.buffer, e.args[0]});
    visitChildren(e);
  }
  void visitFor(const Stmt &s) override {
    nested = true;
    visitChildren(s);
  }
  void visitWhile(const Stmt &s) override {
    nested = true;
    visitChildren(s);
  }
  void visitDecl(const Stmt &s) override {
    declared_.insert(s.var);
    bind(s);
  }
  void visitAssign(const Stmt &s) override {
    carriesFloat = carriesFloat || (isFloatTy(s.a->type) && !declared_.count(s.var));
    bind(s);
  }
  void visitWarpReduce(const Stmt &s) override { bind(s); }
  void visitArrive(const Stmt &s) override { bind(s); }

 private:
  void bind(const Stmt &s) {
    bound.insert(s.var);
    visitChildren(s);
  }
  bool isFloat(int id) const {
    const Buffer *b = f_.buffer(id);
    return b && b->fields.empty() && isFloatTy(b->elem);
  }
  const Function &f_;
  std::set<int> declared_;
};

/// The coefficient of loop variable `v` in an index that is affine in it with a coefficient
/// free of v (null: 0), or nullopt; `bound` are variables the body sets (not invariant).
std::optional<ExprP> coefficient(const ExprP &e, int v, const std::set<int> &bound) {
  bool variant =
      anyExpr(e, [&](const Expr &x) { return x.kind == ExprKind::Var && (x.var == v || bound.count(x.var)); });
  if (!variant) return ExprP{};
  if (e->kind == ExprKind::Var) return e->var == v ? std::optional<ExprP>(cInt(1)) : std::nullopt;
  if (e->kind != ExprKind::Binary || e->type != Ty::I64) return std::nullopt;
  auto l = coefficient(e->args[0], v, bound), r = coefficient(e->args[1], v, bound);
  if (!l || !r) return std::nullopt;
  switch (e->binop) {
    case BinOp::Add:
      if (!*l) return r;
      if (!*r) return l;
      return bin(BinOp::Add, *l, *r);
    case BinOp::Sub:
      if (!*r) return l;
      return bin(BinOp::Sub, *l ? *l : cInt(0), *r);
    case BinOp::Mul:
      if (*l && *r) return std::nullopt;  // quadratic in v
      if (*l) return bin(BinOp::Mul, *l, e->args[1]);
      if (*r) return bin(BinOp::Mul, e->args[0], *r);
      return ExprP{};
    default: return std::nullopt;
  }
}

class Aligner {
 public:
  explicit Aligner(Function &f) : f_(f), nextVar_(f.freshVarId()) {}
  int aligned = 0;

  StmtP rewrite(const StmtP &s) {
    if (s->kind != StmtKind::For || !eligible(*s)) return s;
    BodyAccesses body(f_);
    body.visit(s->body[0]);
    // Not innermost; or a float value carried from one iteration to the next outside a
    // reduction (a running sum): a loop that stays scalar, which a head would only lengthen.
    if (body.nested || (body.carriesFloat && s->loop != LoopKind::Reduction)) return s;
    // The stream to align and the condition (beyond the trip count) under which it is one.
    std::optional<BodyAccesses::Access> stream;
    ExprP unitStride;
    for (const auto *list : {&body.stores, &body.loads}) {
      for (const BodyAccesses::Access &a : *list) {
        auto c = coefficient(a.index, s->var, body.bound);
        if (!c || !*c || hasLoad(*c)) continue;
        if ((*c)->kind == ExprKind::Const) {
          if ((*c)->ival != 1) continue;
        } else {
          unitStride = bin(BinOp::Eq, *c, cInt(1));
        }
        stream = a;
        break;
      }
      if (stream) break;
    }
    if (!stream) return s;
    const ExprP &lo = s->a, &hi = s->b;
    // Short whatever the run: a constant trip count, or a bound like min(64, n - i).
    std::optional<int64_t> most = constUpper(hi);
    if (most && *most - (lo->kind == ExprKind::Const ? lo->ival : 0) < kAlignFrom) return s;

    // Short loops run the loop as it was behind one test; long ones its head and the rest.
    std::vector<StmtP> out;
    ExprP first = once(lo, "lo", body.bound, out), last = once(hi, "hi", body.bound, out);
    ExprP longEnough = bin(BinOp::Ge, bin(BinOp::Sub, last, first), cInt(kAlignFrom));
    ExprP take = unitStride ? bin(BinOp::And, longEnough, unitStride) : longEnough;
    ExprP gap = alignGap(stream->buffer, substituteVar(stream->index, s->var, first), kAlignBytes);
    int head = nextVar_++;
    auto scalarHead = std::make_shared<Stmt>(*s);
    scalarHead->a = first;
    scalarHead->b = var(head, Ty::I64);
    scalarHead->vectorize = false;
    scalarHead->vectorWidth = 1;
    scalarHead->interleave = 1;
    scalarHead->unroll = 1;
    scalarHead->maskedTail = false;
    if (s->loop == LoopKind::Parallel) {  // a few iterations: not worth the pool
      scalarHead->loop = LoopKind::Serial;
      scalarHead->iterationWork = nullptr;
      scalarHead->workGrowth = nullptr;
    }
    auto rest = std::make_shared<Stmt>(*s);
    rest->a = var(head, Ty::I64);
    rest->b = last;
    auto whole = std::make_shared<Stmt>(*s);
    whole->a = first;
    whole->b = last;
    StmtP headThenRest = block({decl(head, "head", Ty::I64, bin(BinOp::Add, first, gap)), scalarHead, rest});
    auto longRun = std::make_shared<Stmt>(*ifThen(take, headThenRest, whole));
    longRun->seldom = true;  // out of line: short runs (rows of a band) fall through to their loop
    out.push_back(longRun);
    ++aligned;
    return block(std::move(out));
  }

 private:
  static bool eligible(const Stmt &s) {
    bool kind = s.loop == LoopKind::Serial || s.loop == LoopKind::Reduction || s.loop == LoopKind::Vector ||
                (s.loop == LoopKind::Parallel && s.balanceBy < 0);
    return kind && !s.segment && !s.step && s.vectorWidth != 1 && !s.maskedTail && s.a->type == Ty::I64 &&
           s.b->type == Ty::I64;
  }

  /// `e` as an expression the two loops may both use: a constant, a variable the body does
  /// not set, or a variable declared with it here (evaluated once, before either loop, as the
  /// loop evaluated its bounds).
  ExprP once(const ExprP &e, const char *name, const std::set<int> &bound, std::vector<StmtP> &out) {
    if (e->kind == ExprKind::Const || (e->kind == ExprKind::Var && !bound.count(e->var))) return e;
    int v = nextVar_++;
    out.push_back(decl(v, name, Ty::I64, e));
    return var(v, Ty::I64);
  }

  Function &f_;
  int nextVar_;
};

}  // namespace

int alignVectorStreams(Function &f) {
  if (f.cuda || !f.body) return 0;
  Aligner aligner(f);
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) { return aligner.rewrite(s); });
  return aligner.aligned;
}

}  // namespace spl::loopir
