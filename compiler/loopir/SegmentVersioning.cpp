/// \file SegmentVersioning.cpp: scalar and vector versions of segment reductions (see the header).
#include "loopir/SegmentVersioning.h"

#include <algorithm>

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
  auto scalar = std::make_shared<Stmt>(*cur);
  scalar->vectorWidth = 1;
  scalar->interleave = 1;
  scalar->unroll = 1;  // a few iterations: an unrolled body and its remainder loop cost more than they save
  auto vector = std::make_shared<Stmt>(*cur);
  ++count;
  return ifThen(bin(BinOp::Ge, bin(BinOp::Sub, cur->b, cur->a), cInt(kLongSegment)), vector, scalar);
}

}  // namespace

bool isSegmentGather(const Stmt &loop) {
  if (loop.kind != StmtKind::For || loop.loop != LoopKind::Reduction) return false;
  if (!hasLoad(loop.a) && !hasLoad(loop.b)) return false;  // not a segment read from memory
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
