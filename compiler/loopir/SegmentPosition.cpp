/// \file SegmentPosition.cpp: the segment position recogniser and rewrite (see the header).
#include "loopir/SegmentPosition.h"

#include "loopir/Visitor.h"

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

/// Replaces each segment position by the position variable (the outermost match: what a match
/// holds is not looked into).
class PositionRewrite : public Mutator {
 public:
  PositionRewrite(int offs, bool fromZero, int row, int iter, int position)
      : offs_(offs), fromZero_(fromZero), row_(row), iter_(iter), position_(position) {}

 protected:
  ExprP mutateBinary(const ExprP &e) override {
    if (isSegmentPosition(e, offs_, fromZero_, row_, iter_)) return var(position_, Ty::I64);
    return mutateChildren(e);
  }

 private:
  int offs_;
  bool fromZero_;
  int row_, iter_, position_;
};

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
  return PositionRewrite(offs, fromZero, row, iter, position).mutate(e);
}

StmtP withSegmentPosition(const StmtP &s, int offs, bool fromZero, int row, int iter, int position) {
  return PositionRewrite(offs, fromZero, row, iter, position).mutate(s);
}

}  // namespace spl::loopir
