/// \file Schedule.cpp: the default CPU schedule (see Schedule.h).
#include "cin/Schedule.h"

namespace spl::cin {

namespace {

StmtP rewrite(const StmtP &s, bool insideParallel) {
  auto copy = std::make_shared<Stmt>(*s);
  bool inner = insideParallel;
  if (s->kind == StmtKind::Forall && s->forall == ForallKind::Parallel) {
    if (insideParallel) copy->forall = ForallKind::Serial;
    inner = true;
  }
  if (s->kind == StmtKind::Forall && s->forall != ForallKind::Parallel) {
    // A serial or reduction loop: loops inside it may still be the outermost parallel ones,
    // but running a parallel region per iteration of a serial loop costs more than it gives
    // for the small inner loops SPL produces, so they run serially too.
    inner = true;
  }
  for (StmtP &b : copy->body)
    if (b) b = rewrite(b, inner);
  return copy;
}

}  // namespace

StmtP defaultCpuSchedule(const StmtP &body) { return rewrite(body, false); }

}  // namespace spl::cin
