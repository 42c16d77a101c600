/// \file SegmentVersioning.cpp: scalar and vector versions of segment reductions (see the header).
#include "loopir/SegmentVersioning.h"

#include <algorithm>
#include <functional>

namespace spl::loopir {

namespace {

/// Variables of the loop body declared with a value read from memory (j = cols[k]).
void loadedVars(const StmtP &s, std::vector<int> &out) {
  if (!s) return;
  if (s->kind == StmtKind::Decl && hasLoad(s->a)) out.push_back(s->var);
  for (const StmtP &b : s->body) loadedVars(b, out);
}

bool mentionsAny(const ExprP &e, const std::vector<int> &vars) {
  return anyExpr(e, [&](const Expr &x) {
    return x.kind == ExprKind::Var && std::find(vars.begin(), vars.end(), x.var) != vars.end();
  });
}

/// Does some load index through a value read from memory (x[cols[k]], or x[j] with j so read)?
bool gathersExpr(const ExprP &e, const std::vector<int> &loaded) {
  if (!e) return false;
  if (e->kind == ExprKind::Load && (hasLoad(e->args[0]) || mentionsAny(e->args[0], loaded))) return true;
  for (const ExprP &a : e->args)
    if (gathersExpr(a, loaded)) return true;
  return false;
}

bool gathers(const StmtP &s, const std::vector<int> &loaded) {
  if (!s) return false;
  if (gathersExpr(s->a, loaded) || gathersExpr(s->b, loaded)) return true;
  for (const StmtP &b : s->body)
    if (gathers(b, loaded)) return true;
  return false;
}

/// The two versions of a segment gather, or `s` itself.
StmtP version(const StmtP &cur, int &count) {
  if (!isSegmentGather(*cur) || cur->vectorize || cur->vectorWidth || cur->interleave || cur->unroll || cur->userKind)
    return cur;
  auto scalarWith = [&](int partialSums) {
    auto loop = std::make_shared<Stmt>(*cur);
    loop->vectorWidth = 1;
    loop->interleave = partialSums;
    loop->unroll = 1;  // a few iterations: an unrolled body and its remainder loop cost more than they save
    return loop;
  };
  auto vector = std::make_shared<Stmt>(*cur);
  ExprP length = bin(BinOp::Sub, cur->b, cur->a);
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

/// Does `s` assign a variable it does not declare (a value carried from one iteration of the
/// loop around it to the next, such as a fold's accumulator)?
bool assignsOuterVariable(const StmtP &s) {
  std::vector<int> declared;
  bool carried = false;
  std::function<void(const StmtP &)> walk = [&](const StmtP &t) {
    if (!t || carried) return;
    if (t->kind == StmtKind::Decl) declared.push_back(t->var);
    if (t->kind == StmtKind::Assign && std::find(declared.begin(), declared.end(), t->var) == declared.end()) carried = true;
    for (const StmtP &b : t->body) walk(b);
  };
  walk(s);
  return carried;
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
  if (assignsOuterVariable(lanes->body[0])) return cur;
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

int versionSegmentReductions(Function &f) {
  if (f.cuda) return 0;
  int count = 0;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) { return version(s, count); });
  return count;
}

}  // namespace spl::loopir
