/// \file Visitor.cpp: which members hold a loop-IR statement's expressions, for the visitor's
/// and the mutator's default walks (loopir/Visitor.h).
#include "loopir/Visitor.h"

namespace spl::loopir {

void Visitor::visitChildren(const Stmt &s) {
  visit(s.a);
  visit(s.b);
  visit(s.step);
  visit(s.segment.parent);
  visit(s.iterationWork);
  visit(s.workGrowth);
  for (const StmtP &c : s.body) visit(c);
}

StmtP Mutator::mutateChildren(const StmtP &s) {
  ExprP a = mutate(s->a), b = mutate(s->b), step = mutate(s->step), parent = mutate(s->segment.parent),
        work = mutate(s->iterationWork), growth = mutate(s->workGrowth);
  StmtP withExprs = s;
  if (a != s->a || b != s->b || step != s->step || parent != s->segment.parent || work != s->iterationWork ||
      growth != s->workGrowth) {
    auto copy = std::make_shared<Stmt>(*s);
    copy->a = a;
    copy->b = b;
    copy->step = step;
    copy->segment.parent = parent;
    copy->iterationWork = work;
    copy->workGrowth = growth;
    withExprs = copy;
  }
  return ir::mapChildren(withExprs, [&](const StmtP &c) { return mutate(c); }, &Stmt::body);
}

}  // namespace spl::loopir
