/// \file ParallelScan.cpp: running sums on the GPU as a map and a device scan (see the header).
#include "loopir/ParallelScan.h"

namespace spl::loopir {

namespace {

bool isZero(const ExprP &e) { return e && e->kind == ExprKind::Const && e->ival == 0 && !isFloatTy(e->type); }

/// Is `e` the loop-free `base + 1 + k` (in any association), for the store before the loop at
/// index `base`?
bool isNextIndex(const ExprP &e, const ExprP &base, int k) {
  if (!e || e->kind != ExprKind::Binary || e->binop != BinOp::Add) return false;
  // 1 + k at index 0: the common case.
  auto isOnePlusK = [&](const ExprP &x) {
    if (!x || x->kind != ExprKind::Binary || x->binop != BinOp::Add) return false;
    for (int s = 0; s < 2; ++s)
      if (x->args[s]->kind == ExprKind::Const && x->args[s]->ival == 1 && x->args[1 - s]->kind == ExprKind::Var &&
          x->args[1 - s]->var == k)
        return true;
    return false;
  };
  if (isZero(base)) return isOnePlusK(e);
  for (int s = 0; s < 2; ++s)
    if (sameExpr(e->args[s], base) && isOnePlusK(e->args[1 - s])) return true;
  return false;
}

bool storesOrReturns(const StmtP &s) {
  return anyStmt(s, [](const Stmt &x) {
    return x.kind == StmtKind::Store || x.kind == StmtKind::Return || x.kind == StmtKind::Alloc || x.kind == StmtKind::SigmaPrefix ||
           x.kind == StmtKind::Barrier;
  });
}

bool readsBuffer(const StmtP &s, int buffer) {
  bool found = false;
  anyStmt(s, [&](const Stmt &x) {
    for (const ExprP &e : {x.a, x.b})
      found = found || anyExpr(e, [&](const Expr &y) { return y.kind == ExprKind::Load && y.buffer == buffer; });
    return found;
  });
  return found;
}

}  // namespace

int parallelizeRunningSums(Function &f) {
  if (!f.cuda || !f.body || f.body->kind != StmtKind::Block) return 0;
  std::vector<StmtP> top = f.body->body;
  int count = 0;
  for (size_t i = 0; i + 2 < top.size(); ++i) {
    const StmtP &first = top[i], &init = top[i + 1], &loop = top[i + 2];
    // out[b] = 0; var acc: i32 = 0; for k in [0, m) serial { ...; acc = acc + v; out[b + 1 + k] = acc }
    if (first->kind != StmtKind::Store || first->field >= 0 || !isZero(first->b) || hasLoad(first->a)) continue;
    const Buffer *out = f.buffer(first->buffer);
    if (!out || out->elem != Ty::I32 || !out->fields.empty()) continue;
    if (init->kind != StmtKind::Decl || init->type != Ty::I32 || !isZero(init->a)) continue;
    if (loop->kind != StmtKind::For || loop->loop != LoopKind::Serial || !isZero(loop->a) || hasLoad(loop->b)) continue;
    const int acc = init->var, k = loop->var;
    const StmtP &body = loop->body[0];
    std::vector<StmtP> items = body->kind == StmtKind::Block ? body->body : std::vector<StmtP>{body};
    if (items.size() < 2) continue;
    const StmtP &update = items[items.size() - 2], &write = items.back();
    if (update->kind != StmtKind::Assign || update->var != acc || update->a->kind != ExprKind::Binary ||
        update->a->binop != BinOp::Add)
      continue;
    int side = -1;
    for (int s = 0; s < 2; ++s)
      if (update->a->args[s]->kind == ExprKind::Var && update->a->args[s]->var == acc) side = s;
    if (side < 0) continue;
    ExprP value = update->a->args[1 - side];
    if (write->kind != StmtKind::Store || write->buffer != first->buffer || write->field >= 0 || write->b->kind != ExprKind::Var ||
        write->b->var != acc || !isNextIndex(write->a, first->a, k))
      continue;
    std::vector<StmtP> prefix(items.begin(), items.end() - 2);
    bool clean = !mentionsVar(value, acc) && !anyExpr(value, [&](const Expr &y) { return y.kind == ExprKind::Load && y.buffer == out->id; });
    for (const StmtP &p : prefix) clean = clean && !storesOrReturns(p) && !mentionsVar(p, acc) && !readsBuffer(p, out->id);
    // acc must be dead after the loop (the scan replaces it).
    for (size_t j = i + 3; j < top.size(); ++j) clean = clean && !mentionsVar(top[j], acc);
    if (!clean) continue;

    Buffer counts;
    counts.id = f.freshBufferId();
    counts.name = "running_sum_terms";
    counts.elem = Ty::I32;
    Buffer sums;
    sums.id = counts.id + 1;
    sums.name = "running_sums";
    sums.elem = Ty::I64;
    const int outId = out->id;  // `out` points into f.buffers, which the pushes may move
    f.buffers.push_back(counts);
    f.buffers.push_back(sums);
    ExprP m = loop->b;
    std::vector<StmtP> mapBody = prefix;
    mapBody.push_back(store(counts.id, var(k, Ty::I64), cast(value, Ty::I32)));
    int j = f.freshVarId();
    ExprP at = isZero(first->a) ? var(j, Ty::I64) : bin(BinOp::Add, first->a, var(j, Ty::I64));
    std::vector<StmtP> replacement{
        allocBuffer(counts.id, m),
        forLoop(k, loop->name, cInt(0), m, block(mapBody), LoopKind::GpuGlobal),
        allocBuffer(sums.id, bin(BinOp::Add, m, cInt(1))),
        sigmaPrefix(sums.id, counts.id, m),
        forLoop(j, "s", cInt(0), bin(BinOp::Add, m, cInt(1)), store(outId, at, cast(load(sums.id, var(j, Ty::I64), Ty::I64), Ty::I32)),
                LoopKind::GpuGlobal),
        freeBuffer(counts.id),
        freeBuffer(sums.id)};
    top.erase(top.begin() + static_cast<long>(i), top.begin() + static_cast<long>(i) + 3);
    top.insert(top.begin() + static_cast<long>(i), replacement.begin(), replacement.end());
    i += replacement.size() - 1;
    ++count;
  }
  if (count) f.body = block(top);
  return count;
}

}  // namespace spl::loopir
