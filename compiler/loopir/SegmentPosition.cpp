/// \file SegmentPosition.cpp: the segment position recogniser and rewrite (see the header).
#include "loopir/SegmentPosition.h"

namespace spl::loopir {

namespace {

const Expr *unwidened(const ExprP &e) { return e->kind == ExprKind::Cast ? e->args[0].get() : e.get(); }

/// Is `e` offs[row] (widened or not)?
bool isOffsetAtVar(const ExprP &e, int offs, int row) {
  const Expr *x = unwidened(e);
  return x->kind == ExprKind::Load && x->buffer == offs && x->field < 0 && x->args[0]->kind == ExprKind::Var &&
         x->args[0]->var == row;
}

/// Is `e` offs[0] (widened or not)?
bool isFirstOffset(const ExprP &e, int offs) {
  const Expr *x = unwidened(e);
  return x->kind == ExprKind::Load && x->buffer == offs && x->field < 0 && x->args[0]->kind == ExprKind::Const &&
         x->args[0]->ival == 0;
}

/// Is `e` -1 * offs[0] (either order)?
bool isMinusFirstOffset(const ExprP &e, int offs) {
  if (e->kind != ExprKind::Binary || e->binop != BinOp::Mul) return false;
  for (int k = 0; k < 2; ++k)
    if (e->args[k]->kind == ExprKind::Const && e->args[k]->ival == -1 && isFirstOffset(e->args[1 - k], offs)) return true;
  return false;
}

/// Is `e` offs[row] - offs[0] (as offs[row] + -1 * offs[0], or a subtraction)?
bool isRowStart(const ExprP &e, int offs, int row) {
  if (e->kind != ExprKind::Binary) return false;
  if (e->binop == BinOp::Sub) return isOffsetAtVar(e->args[0], offs, row) && isFirstOffset(e->args[1], offs);
  if (e->binop != BinOp::Add) return false;
  for (int k = 0; k < 2; ++k)
    if (isOffsetAtVar(e->args[k], offs, row) && isMinusFirstOffset(e->args[1 - k], offs)) return true;
  return false;
}

ExprP rewrite(const ExprP &e, int offs, bool fromZero, int row, int iter, int position) {
  if (!e) return e;
  if (isSegmentPosition(e, offs, fromZero, row, iter)) return var(position, Ty::I64);
  bool changed = false;
  std::vector<ExprP> args;
  args.reserve(e->args.size());
  for (const ExprP &a : e->args) {
    args.push_back(rewrite(a, offs, fromZero, row, iter, position));
    changed = changed || args.back() != a;
  }
  if (!changed) return e;
  auto copy = std::make_shared<Expr>(*e);
  copy->args = std::move(args);
  return copy;
}

}  // namespace

bool isSegmentPosition(const ExprP &e, int offs, bool fromZero, int row, int iter) {
  if (!e || e->kind != ExprKind::Binary || e->binop != BinOp::Add || e->type != Ty::I64) return false;
  for (int k = 0; k < 2; ++k)
    if (e->args[k]->kind == ExprKind::Var && e->args[k]->var == iter &&
        (fromZero ? isOffsetAtVar(e->args[1 - k], offs, row) : isRowStart(e->args[1 - k], offs, row)))
      return true;
  return false;
}

ExprP withSegmentPosition(const ExprP &e, int offs, bool fromZero, int row, int iter, int position) {
  return rewrite(e, offs, fromZero, row, iter, position);
}

StmtP withSegmentPosition(const StmtP &s, int offs, bool fromZero, int row, int iter, int position) {
  return rewriteBottomUp(s, [&](const StmtP &t) -> StmtP {
    ExprP a = rewrite(t->a, offs, fromZero, row, iter, position), b = rewrite(t->b, offs, fromZero, row, iter, position);
    if (a == t->a && b == t->b) return t;
    auto copy = std::make_shared<Stmt>(*t);
    copy->a = a;
    copy->b = b;
    return copy;
  });
}

}  // namespace spl::loopir
