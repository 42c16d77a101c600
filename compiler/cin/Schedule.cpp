/// \file Schedule.cpp: the default CPU schedule (see Schedule.h).
#include "cin/Schedule.h"

namespace spl::cin {

namespace {

/// The offsets array `T` when a loop nested in `s` runs over [0, T@(i+1) - T@i) for the
/// position i of `s`: the work of iteration i is then that row's nonzero count.
int64_t rowOffsetsOf(const StmtP &s, int64_t var) {
  if (!s) return 0;
  if (s->kind == StmtKind::Forall && s->lo.isZero()) {
    Nat i = Nat::var(NatVarId{var, ""});
    for (const Nat::Term &t : s->hi.terms())
      for (const auto &f : t.mono.factors)
        if (f.first->kind == NatAtomKind::Lookup) {
          const NatVarId &arr = f.first->var;
          if (s->hi == Nat::lookup(arr, i + Nat(1)) - Nat::lookup(arr, i)) return arr.id;
        }
  }
  for (const StmtP &b : s->body)
    if (int64_t t = rowOffsetsOf(b, var)) return t;
  return 0;
}

StmtP rewrite(const StmtP &s, bool insideParallel) {
  auto copy = std::make_shared<Stmt>(*s);
  bool inner = insideParallel;
  if (s->kind == StmtKind::Forall && s->userKind) {
    inner = inner || s->forall == ForallKind::Parallel;
  } else if (s->kind == StmtKind::Forall && s->forall == ForallKind::Parallel) {
    if (insideParallel) copy->forall = ForallKind::Serial;
    else if (s->lo.isZero()) copy->balanceBy = rowOffsetsOf(s->body[0], s->var);
    inner = true;
  }
  if (s->kind == StmtKind::Forall && s->forall != ForallKind::Parallel && !s->userKind) {
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

namespace {

bool isGpuLevel(ForallKind k) {
  return k == ForallKind::GpuBlock || k == ForallKind::GpuThread || k == ForallKind::GpuWarp || k == ForallKind::GpuLane ||
         k == ForallKind::GpuGlobal;
}

StmtP gpuRewrite(const StmtP &s, bool inside) {
  auto copy = std::make_shared<Stmt>(*s);
  bool inner = inside;
  if (s->kind == StmtKind::Forall) {
    if (s->userKind || isGpuLevel(s->forall)) {
      inner = true;
    } else if (s->forall == ForallKind::Parallel) {
      copy->forall = inside ? ForallKind::Serial : ForallKind::GpuGlobal;
      // Rows of a compressed level: the CUDA back end may give each row a vector of lanes.
      if (!inside && s->lo.isZero()) copy->balanceBy = rowOffsetsOf(s->body[0], s->var);
      inner = true;
    } else {
      inner = true;  // a serial loop runs in one thread: what it contains does too
    }
  }
  for (StmtP &b : copy->body)
    if (b) b = gpuRewrite(b, inner);
  return copy;
}

}  // namespace

StmtP defaultGpuSchedule(const StmtP &body) { return gpuRewrite(body, false); }

}  // namespace spl::cin
