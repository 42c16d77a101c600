/// \file Visitor.cpp: dispatch by kind and the default walks of CIN's visitor and mutator
/// (cin/Visitor.h).
#include "cin/Visitor.h"

#include "support/IrWalk.h"

namespace spl::cin {

void Visitor::visit(const StmtP &s) {
  if (s) dispatch(*s);
}

void Visitor::visit(const ExprP &e) {
  if (e) dispatch(*e);
}

void Visitor::dispatch(const Stmt &s) {
  switch (s.kind) {
#define SPL_CIN_DISPATCH(K) \
  case StmtKind::K: visit##K(s); return;
    SPL_CIN_STMT_KINDS(SPL_CIN_DISPATCH)
#undef SPL_CIN_DISPATCH
  }
}

void Visitor::dispatch(const Expr &e) {
  switch (e.kind) {
#define SPL_CIN_DISPATCH(K) \
  case ExprKind::K: visit##K(e); return;
    SPL_CIN_EXPR_KINDS(SPL_CIN_DISPATCH)
#undef SPL_CIN_DISPATCH
  }
}

void Visitor::visitChildren(const Stmt &s) {
  visit(s.lhs);
  visit(s.value);
  for (const StmtP &c : s.body) visit(c);
}

void Visitor::visitChildren(const Expr &e) {
  for (const ExprP &a : e.args) visit(a);
}

StmtP Mutator::mutate(const StmtP &s) {
  if (!s) return s;
  switch (s->kind) {
#define SPL_CIN_DISPATCH(K) \
  case StmtKind::K: return mutate##K(s);
    SPL_CIN_STMT_KINDS(SPL_CIN_DISPATCH)
#undef SPL_CIN_DISPATCH
  }
  return s;
}

ExprP Mutator::mutate(const ExprP &e) {
  if (!e) return e;
  switch (e->kind) {
#define SPL_CIN_DISPATCH(K) \
  case ExprKind::K: return mutate##K(e);
    SPL_CIN_EXPR_KINDS(SPL_CIN_DISPATCH)
#undef SPL_CIN_DISPATCH
  }
  return e;
}

StmtP Mutator::mutateChildren(const StmtP &s) {
  ExprP lhs = mutate(s->lhs), value = mutate(s->value);
  StmtP withExprs = s;
  if (lhs != s->lhs || value != s->value) {
    auto copy = std::make_shared<Stmt>(*s);
    copy->lhs = lhs;
    copy->value = value;
    withExprs = copy;
  }
  return ir::mapChildren(withExprs, [&](const StmtP &c) { return mutate(c); }, &Stmt::body);
}

ExprP Mutator::mutateChildren(const ExprP &e) {
  return ir::mapChildren(e, [&](const ExprP &a) { return mutate(a); }, &Expr::args);
}

}  // namespace spl::cin
