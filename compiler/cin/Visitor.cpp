/// \file Visitor.cpp: which members hold a CIN statement's expressions, for the visitor's and
/// the mutator's default walks (cin/Visitor.h).
#include "cin/Visitor.h"

namespace spl::cin {

void Visitor::visitChildren(const Stmt &s) {
  visit(s.lhs);
  visit(s.value);
  for (const StmtP &c : s.body) visit(c);
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

}  // namespace spl::cin
