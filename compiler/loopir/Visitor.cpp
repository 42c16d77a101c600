/// \file Visitor.cpp: dispatch by kind and the default walks of the loop IR's visitor and
/// mutator (loopir/Visitor.h).
#include "loopir/Visitor.h"

#include "support/IrWalk.h"

namespace spl::loopir {

void Visitor::visit(const StmtP &s) {
  if (s) dispatch(*s);
}

void Visitor::visit(const ExprP &e) {
  if (e) dispatch(*e);
}

void Visitor::dispatch(const Stmt &s) {
  switch (s.kind) {
#define SPL_LOOPIR_DISPATCH(K) \
  case StmtKind::K: visit##K(s); return;
    SPL_LOOPIR_STMT_KINDS(SPL_LOOPIR_DISPATCH)
#undef SPL_LOOPIR_DISPATCH
  }
}

void Visitor::dispatch(const Expr &e) {
  switch (e.kind) {
#define SPL_LOOPIR_DISPATCH(K) \
  case ExprKind::K: visit##K(e); return;
    SPL_LOOPIR_EXPR_KINDS(SPL_LOOPIR_DISPATCH)
#undef SPL_LOOPIR_DISPATCH
  }
}

void Visitor::visitExprs(const Stmt &s) {
  visit(s.a);
  visit(s.b);
  visit(s.step);
  visit(s.segment.parent);
}

void Visitor::visitChildren(const Stmt &s) {
  visitExprs(s);
  for (const StmtP &c : s.body) visit(c);
}

void Visitor::visitChildren(const Expr &e) {
  for (const ExprP &a : e.args) visit(a);
}

StmtP Mutator::mutate(const StmtP &s) {
  if (!s) return s;
  switch (s->kind) {
#define SPL_LOOPIR_DISPATCH(K) \
  case StmtKind::K: return mutate##K(s);
    SPL_LOOPIR_STMT_KINDS(SPL_LOOPIR_DISPATCH)
#undef SPL_LOOPIR_DISPATCH
  }
  return s;
}

ExprP Mutator::mutate(const ExprP &e) {
  if (!e) return e;
  switch (e->kind) {
#define SPL_LOOPIR_DISPATCH(K) \
  case ExprKind::K: return mutate##K(e);
    SPL_LOOPIR_EXPR_KINDS(SPL_LOOPIR_DISPATCH)
#undef SPL_LOOPIR_DISPATCH
  }
  return e;
}

StmtP Mutator::mutateChildren(const StmtP &s) {
  ExprP a = mutate(s->a), b = mutate(s->b), step = mutate(s->step), parent = mutate(s->segment.parent);
  StmtP withExprs = s;
  if (a != s->a || b != s->b || step != s->step || parent != s->segment.parent) {
    auto copy = std::make_shared<Stmt>(*s);
    copy->a = a;
    copy->b = b;
    copy->step = step;
    copy->segment.parent = parent;
    withExprs = copy;
  }
  return ir::mapChildren(withExprs, [&](const StmtP &c) { return mutate(c); }, &Stmt::body);
}

ExprP Mutator::mutateChildren(const ExprP &e) {
  return ir::mapChildren(e, [&](const ExprP &a) { return mutate(a); }, &Expr::args);
}

}  // namespace spl::loopir
