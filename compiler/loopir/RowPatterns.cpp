/// \file RowPatterns.cpp: the row-loop shapes of GPU row mappings (see the header).
#include "loopir/RowPatterns.h"

#include <limits>

#include "loopir/SegmentPosition.h"

namespace spl::loopir {

namespace {

bool storesOrLoops(const StmtP &s) {
  return anyStmt(s, [](const Stmt &x) {
    return x.kind == StmtKind::Store || x.kind == StmtKind::For || x.kind == StmtKind::Barrier || x.kind == StmtKind::Alloc ||
           x.kind == StmtKind::Return;
  });
}

}  // namespace

bool matchRow(const Stmt &loop, RowShape &shape) {
  if (loop.a->kind != ExprKind::Const || loop.a->ival != 0) return false;
  const StmtP &body = loop.body[0];
  std::vector<StmtP> items = body->kind == StmtKind::Block ? body->body : std::vector<StmtP>{body};
  size_t r = 0;
  while (r < items.size() && items[r]->kind == StmtKind::Decl) ++r;
  if (r == items.size() || items[r]->kind != StmtKind::For || items[r]->loop != LoopKind::Reduction) return false;
  shape.prefix.assign(items.begin(), items.begin() + static_cast<long>(r));
  shape.suffix.assign(items.begin() + static_cast<long>(r) + 1, items.end());
  shape.reduction = items[r].get();
  // Where the row's segment is, as Flatten recorded it on the reduction (loopir::Segment).
  const loopir::Segment &seg = shape.reduction->segment;
  shape.offsets = seg.ofRow(loop.var) ? seg.offsets : -1;
  shape.fromZero = seg.ofRow(loop.var) && seg.fromZero;
  // Without offsets the rows are dense (a reduction over the same loop-free range in every
  // row) or their lengths are read some other way (a graph's neighbours of frontier[k]): the
  // vector kernel still runs them, the merge path needs the offsets.
  // Exactly one accumulator, declared in the prefix, updated as acc = acc op e.
  const StmtP &rb = shape.reduction->body[0];
  if (storesOrLoops(rb)) return false;
  std::vector<StmtP> inner = rb->kind == StmtKind::Block ? rb->body : std::vector<StmtP>{rb};
  const Stmt *update = nullptr;
  for (const StmtP &st : inner) {
    if (st->kind == StmtKind::Decl) continue;
    if (st->kind != StmtKind::Assign || update) return false;
    update = st.get();
  }
  if (!update) return false;
  const ExprP &v = update->a;
  bool ok = false;
  if (v->kind == ExprKind::Binary && v->reassoc && (v->binop == BinOp::Add || v->binop == BinOp::Mul)) ok = true;
  if (v->kind == ExprKind::MinMax) ok = true;
  if (!ok) return false;
  int side = -1;
  for (int k = 0; k < 2; ++k)
    if (v->args[k]->kind == ExprKind::Var && v->args[k]->var == update->var) side = k;
  if (side < 0) return false;
  bool declared = false;
  for (const StmtP &d : shape.prefix)
    if (d->var == update->var) {
      declared = true;
      shape.accTy = d->type;
    }
  if (!declared || shape.accTy == Ty::I1) return false;
  shape.acc = update->var;
  shape.contribution = v->args[1 - side];
  auto c = std::make_shared<Expr>(*v);
  c->args[side] = var(update->var, shape.accTy);
  c->args[1 - side] = var(kShuffled, shape.accTy);
  shape.combine = c;
  return true;
}

ExprP combineIdentity(const RowShape &shape) {
  const Expr &c = *shape.combine;
  Ty t = shape.accTy;
  if (c.kind == ExprKind::Binary) {
    int64_t unit = c.binop == BinOp::Mul ? 1 : 0;
    return isFloatTy(t) ? cFloat(static_cast<double>(unit), t) : cInt(unit, t);
  }
  if (isFloatTy(t)) return cFloat(c.isMax ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity(), t);
  if (t == Ty::I32) return cInt(c.isMax ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max(), t);
  return cInt(c.isMax ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max(), t);
}

ExprP lanesCovering(const ExprP &length) {
  ExprP lanes = cInt(32);
  for (int64_t w = 16; w >= 1; w /= 2) lanes = sel(bin(BinOp::Le, length, cInt(w)), cInt(w), lanes);
  return lanes;
}

bool rowPattern(const Stmt &loop) {
  RowShape shape;
  return matchRow(loop, shape);
}

bool positionPure(const Stmt &loop, RowShape &shape) {
  if (shape.offsets < 0) return false;  // the reduction runs over no segment of this row
  const Stmt &red = *shape.reduction;
  const StmtP &rb = red.body[0];
  std::vector<StmtP> inner = rb->kind == StmtKind::Block ? rb->body : std::vector<StmtP>{rb};
  std::vector<int> forbidden{loop.var, red.var};
  for (const StmtP &d : shape.prefix) forbidden.push_back(d->var);
  auto pure = [&](const auto &x) {
    for (int v : forbidden)
      if (mentionsVar(x, v)) return false;
    return true;
  };
  shape.perNonzero.clear();
  for (const StmtP &st : inner) {
    if (st->kind != StmtKind::Decl) continue;
    StmtP d = withSegmentPosition(st, shape.offsets, shape.fromZero, loop.var, red.var, kPosition);
    if (!pure(d)) return false;
    shape.perNonzero.push_back(d);
  }
  shape.contribution = withSegmentPosition(shape.contribution, shape.offsets, shape.fromZero, loop.var, red.var, kPosition);
  return pure(shape.contribution);
}

bool mergesRows(const Stmt &loop) {
  RowShape shape;
  return matchRow(loop, shape) && positionPure(loop, shape);
}

bool mentionsPrefix(const RowShape &shape, const Stmt &red) {
  for (const StmtP &d : shape.prefix)
    if (mentionsVar(red.a, d->var) || mentionsVar(red.b, d->var)) return true;
  return false;
}

bool matchCompaction(const Stmt &loop, Compaction &c) {
  if (loop.a->kind != ExprKind::Const || loop.a->ival != 0) return false;
  const StmtP &body = loop.body[0];
  std::vector<StmtP> items = body->kind == StmtKind::Block ? body->body : std::vector<StmtP>{body};
  if (items.size() < 3) return false;
  size_t k = 0;
  while (k + 3 < items.size() && items[k]->kind == StmtKind::Decl) c.prefix.push_back(items[k++]);
  if (k + 3 != items.size()) return false;
  const StmtP &counter = items[k], &scan = items[k + 1], &fill = items[k + 2];
  if (counter->kind != StmtKind::Decl || !counter->a || counter->a->kind != ExprKind::Const || counter->a->ival != 0) return false;
  c.cnt = counter->var;
  c.cntTy = counter->type;
  if (scan->kind != StmtKind::For || scan->loop != LoopKind::Serial || mentionsVar(scan->a, c.cnt) || mentionsVar(scan->b, c.cnt))
    return false;
  c.scan = scan.get();
  const StmtP &sb = scan->body[0];
  std::vector<StmtP> inner = sb->kind == StmtKind::Block ? sb->body : std::vector<StmtP>{sb};
  if (inner.empty()) return false;
  for (size_t q = 0; q + 1 < inner.size(); ++q) {
    if (inner[q]->kind != StmtKind::Decl || mentionsVar(inner[q], c.cnt)) return false;
    c.scanDecls.push_back(inner[q]);
  }
  const StmtP &guard = inner.back();
  if (guard->kind != StmtKind::If || guard->body.size() < 1 || (guard->body.size() > 1 && guard->body[1])) return false;
  const ExprP &cond = guard->a;
  if (cond->kind != ExprKind::Binary || cond->binop != BinOp::And) return false;
  const ExprP &bound = cond->args[0];
  if (bound->kind != ExprKind::Binary || bound->binop != BinOp::Lt || bound->args[0]->kind != ExprKind::Var ||
      bound->args[0]->var != c.cnt || mentionsVar(bound->args[1], c.cnt) || mentionsVar(bound->args[1], scan->var))
    return false;
  c.length = bound->args[1];
  c.test = cond->args[1];
  if (mentionsVar(c.test, c.cnt)) return false;
  const StmtP &then = guard->body[0];
  std::vector<StmtP> acts = then->kind == StmtKind::Block ? then->body : std::vector<StmtP>{then};
  if (acts.empty()) return false;
  const StmtP &bump = acts.back();
  if (bump->kind != StmtKind::Assign || bump->var != c.cnt || bump->a->kind != ExprKind::Binary || bump->a->binop != BinOp::Add) return false;
  bool plusOne = false;
  for (int s = 0; s < 2; ++s)
    plusOne = plusOne || (bump->a->args[s]->kind == ExprKind::Var && bump->a->args[s]->var == c.cnt &&
                          bump->a->args[1 - s]->kind == ExprKind::Const && bump->a->args[1 - s]->ival == 1);
  if (!plusOne) return false;
  for (size_t q = 0; q + 1 < acts.size(); ++q) {
    // Stores whose values do not read cnt (their indices do); nothing else.
    if (acts[q]->kind != StmtKind::Store || acts[q]->atomic != AtomicOp::None || mentionsVar(acts[q]->b, c.cnt)) return false;
    c.appends.push_back(acts[q]);
  }
  if (fill->kind != StmtKind::For || fill->loop != LoopKind::Serial || fill->a->kind != ExprKind::Var || fill->a->var != c.cnt ||
      print(fill->b) != print(c.length))
    return false;
  if (anyStmt(fill->body[0], [&](const Stmt &x) { return x.kind != StmtKind::Store && x.kind != StmtKind::Block; }) ||
      mentionsVar(fill->body[0], c.cnt))
    return false;
  c.fill = fill.get();
  return true;
}

ExprP denseRowLength(const Stmt &loop) {
  auto rowFree = [&](const ExprP &e, const std::vector<StmtP> &prefix) {
    if (hasLoad(e) || mentionsVar(e, loop.var)) return false;
    for (const StmtP &d : prefix)
      if (mentionsVar(e, d->var)) return false;
    return true;
  };
  RowShape shape;
  if (matchRow(loop, shape)) {
    if (shape.offsets >= 0) return nullptr;
    const Stmt &red = *shape.reduction;
    return rowFree(red.a, shape.prefix) && rowFree(red.b, shape.prefix) ? bin(BinOp::Sub, red.b, red.a) : nullptr;
  }
  Compaction c;
  if (matchCompaction(loop, c) && rowFree(c.scan->a, c.prefix) && rowFree(c.scan->b, c.prefix))
    return bin(BinOp::Sub, c.scan->b, c.scan->a);
  return nullptr;
}

bool rowOffsetsKnown(const Stmt &loop) {
  RowShape shape;
  return matchRow(loop, shape) && shape.offsets >= 0;
}

bool compactsRows(const Stmt &loop) {
  Compaction c;
  return matchCompaction(loop, c);
}

}  // namespace spl::loopir
