/// \file SegmentVersioning.cpp: scalar and vector versions of segment reductions (see the header).
#include "loopir/SegmentVersioning.h"

#include <algorithm>

#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

/// Variables of the loop body declared with a value read from memory (j = cols[k]).
void loadedVars(const StmtP &s, std::vector<int> &out) {
  class Collect : public Visitor {
   public:
    explicit Collect(std::vector<int> &out) : out_(out) {}

   protected:
    void visitDecl(const Stmt &d) override {
      if (hasLoad(d.a)) out_.push_back(d.var);
    }

   private:
    std::vector<int> &out_;
  } collect(out);
  collect.visit(s);
}

bool mentionsAny(const ExprP &e, const std::vector<int> &vars) {
  return anyExpr(e, [&](const Expr &x) {
    return x.kind == ExprKind::Var && std::find(vars.begin(), vars.end(), x.var) != vars.end();
  });
}

/// Does some load index through a value read from memory (x[cols[k]], or x[j] with j so read)?
bool gathers(const StmtP &s, const std::vector<int> &loaded) {
  class Find : public Visitor {
   public:
    explicit Find(const std::vector<int> &loaded) : loaded_(loaded) {}
    bool found = false;

   protected:
    void visitLoad(const Expr &e) override {
      found = found || hasLoad(e.args[0]) || mentionsAny(e.args[0], loaded_);
      visitChildren(e);
    }

   private:
    const std::vector<int> &loaded_;
  } find(loaded);
  find.visit(s);
  return find.found;
}

/// The types of the values `s` assigns to variables it does not declare (a value carried from
/// one iteration of the loop around it to the next, such as a fold's or a row's accumulator).
std::vector<Ty> outerAssignments(const StmtP &s) {
  class Find : public Visitor {
   public:
    std::vector<Ty> types;

   protected:
    void visitDecl(const Stmt &d) override { declared_.push_back(d.var); }
    void visitAssign(const Stmt &a) override {
      if (std::find(declared_.begin(), declared_.end(), a.var) == declared_.end()) types.push_back(a.a->type);
    }

   private:
    std::vector<int> declared_;
  } find;
  find.visit(s);
  return find.types;
}

/// The widest floating-point type a segment loop accumulates, or I64 when it sums none.
Ty accumulatedType(const StmtP &loop) {
  Ty widest = Ty::I64;
  for (Ty t : outerAssignments(loop->body[0]))
    if (isFloatTy(t) && (widest == Ty::I64 || tyBytes(t) > tyBytes(widest))) widest = t;
  return widest;
}

/// The versions of a segment gather, or `s` itself.
StmtP version(const StmtP &cur, int maskedVectorBytes, int &count) {
  if (!isSegmentGather(*cur) || cur->vectorize || cur->vectorWidth || cur->interleave || cur->unroll || cur->userKind)
    return cur;
  auto scalarWith = [&](int partialSums) {
    auto loop = std::make_shared<Stmt>(*cur);
    loop->vectorWidth = 1;
    loop->interleave = partialSums;
    loop->unroll = 1;  // a few iterations: an unrolled body and its remainder loop cost more than they save
    return loop;
  };
  ExprP length = bin(BinOp::Sub, cur->b, cur->a);
  Ty sum = accumulatedType(cur);
  // LLVM vectorises innermost loops only: a segment whose entries each run a loop (a BCSR
  // block's columns of a run-time size) keeps the versions below, which ask for no vector.
  bool innermost = !anyStmt(cur->body[0], [](const Stmt &x) { return x.kind == StmtKind::For; });
  // Nor an early exit: an entry that may return (a --checked bound check) leaves a loop with a
  // reduction that LLVM cannot vectorise, and the request only made it warn.
  bool exits = anyStmt(cur->body[0], [](const Stmt &x) { return x.kind == StmtKind::Return; });
  if (maskedVectorBytes > 0 && sum != Ty::I64 && innermost && !exits) {
    auto masked = std::make_shared<Stmt>(*cur);
    masked->vectorize = true;
    masked->vectorWidth = maskedVectorBytes / tyBytes(sum);
    masked->interleave = 1;
    masked->maskedTail = true;
    ++count;
    return ifThen(bin(BinOp::Lt, length, cInt(kMaskedSegment)), scalarWith(1), masked);
  }
  auto vector = std::make_shared<Stmt>(*cur);
  ++count;
  // Short segments first: they are the most common, and pay for one comparison only.
  return ifThen(bin(BinOp::Lt, length, cInt(kMediumSegment)), scalarWith(1),
                ifThen(bin(BinOp::Ge, length, cInt(kLongSegment)), vector, scalarWith(kMediumPartialSums)));
}

/// The constant trip count of `loop` when it runs [0, C) (0 otherwise).
int64_t constantTrip(const Stmt &loop) {
  if (!loop.a || !loop.b || loop.a->kind != ExprKind::Const || loop.a->ival != 0 || loop.b->kind != ExprKind::Const) return 0;
  return loop.b->ival;
}

/// The one loop `s` holds (itself a For, or a Block of one For), or null.
const Stmt *onlyLoop(const StmtP &s) {
  if (!s) return nullptr;
  if (s->kind == StmtKind::For) return s.get();
  if (s->kind == StmtKind::Block && s->body.size() == 1) return onlyLoop(s->body[0]);
  return nullptr;
}

/// The segment loop `cur` with its lanes loop vectorised (see vectorizeSegmentLanes), or `cur`.
StmtP withLanesVectorised(const StmtP &cur, int &count) {
  if (cur->kind != StmtKind::For || cur->loop == LoopKind::Parallel || cur->vectorize || cur->vectorWidth ||
      cur->interleave || cur->unroll || cur->userKind)
    return cur;
  if (!cur->segment) return cur;
  const Stmt *lanes = onlyLoop(cur->body[0]);
  if (!lanes || lanes->loop == LoopKind::Parallel || lanes->vectorize || lanes->vectorWidth || lanes->userKind) return cur;
  int64_t c = constantTrip(*lanes);
  if (c < 2 || c > kMaxLanes) return cur;
  std::vector<int> loaded;
  loadedVars(lanes->body[0], loaded);
  if (!gathers(lanes->body[0], loaded)) return cur;
  // The lanes must be independent: a vectorise hint lets LLVM reorder a floating-point sum
  // carried across them, which a fold over the lanes does not allow.
  if (!outerAssignments(lanes->body[0]).empty()) return cur;
  // A lane that may return (a --checked bound check) ends the loop early: not vectorisable.
  if (anyStmt(lanes->body[0], [](const Stmt &x) { return x.kind == StmtKind::Return; })) return cur;
  auto vecLanes = std::make_shared<Stmt>(*lanes);
  vecLanes->vectorize = true;
  int64_t w = 1;
  while (w * 2 <= c) w *= 2;
  vecLanes->vectorWidth = static_cast<int>(w);
  vecLanes->interleave = 1;
  auto slots = std::make_shared<Stmt>(*cur);
  slots->vectorWidth = 1;
  slots->interleave = 1;
  slots->unroll = 1;
  slots->body = {vecLanes};
  ++count;
  return slots;
}

}  // namespace

int vectorizeSegmentLanes(Function &f) {
  if (f.cuda) return 0;
  int count = 0;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) { return withLanesVectorised(s, count); });
  return count;
}

bool isSegmentGather(const Stmt &loop) {
  if (loop.kind != StmtKind::For || loop.loop != LoopKind::Reduction) return false;
  if (!loop.segment) return false;  // not a segment read from memory
  std::vector<int> loaded;
  loadedVars(loop.body[0], loaded);
  return gathers(loop.body[0], loaded);
}

int versionSegmentReductions(Function &f, int maskedVectorBytes) {
  if (f.cuda) return 0;
  int count = 0;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) { return version(s, maskedVectorBytes, count); });
  return count;
}

}  // namespace spl::loopir
