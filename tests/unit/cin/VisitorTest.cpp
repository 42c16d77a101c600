// CIN's visitor and mutator (cin/Visitor.h): the default walk's order (a statement's lhs, then
// its value, then its statements), and a mutation that copies only the path to a change. The
// nat substitution of CIN (cin::substitute) is such a mutator: it keeps what it does not reach.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cin/Cin.h"
#include "cin/Visitor.h"

namespace {

using namespace spl;
using namespace spl::cin;

TensorP tensor(int64_t id, const std::string &name, Tensor::Kind kind) {
  auto t = std::make_shared<Tensor>();
  t->id = id;
  t->name = name;
  t->kind = kind;
  t->type = types::array(Nat::var(freshNatVar("n")), types::scalar(ScalarKind::F32));
  return t;
}

TEST(CinVisitor, DefaultWalkVisitsLhsValueThenStatements) {
  struct Order : Visitor {
    std::vector<std::string> seen;
    void visitLocal(const Expr &e) override { seen.push_back("%" + std::to_string(e.local)); }
    void visitAccess(const Expr &e) override { seen.push_back(e.tensor->name); }
    void visitDeclLocal(const Stmt &s) override {
      seen.push_back("decl");
      visitChildren(s);
    }
  } order;
  NatVarId i = freshNatVar("i");
  TensorP x = tensor(1, "x", Tensor::Input), y = tensor(2, "y", Tensor::Output);
  StmtP body = block({declLocal(5, "t", ScalarKind::F32, access(x, {Nat::var(i)}, {}, ScalarKind::F32)),
                      assign(access(y, {Nat::var(i)}, {}, ScalarKind::F32), local(5, ScalarKind::F32))});
  order.visit(forall(i.id, "i", Nat(0), Nat(8), body, ForallKind::Serial));
  EXPECT_EQ(order.seen, (std::vector<std::string>{"decl", "x", "y", "%5"}));
}

TEST(CinMutator, SubstitutionSharesWhatItDoesNotReach) {
  NatVarId i = freshNatVar("i"), n = freshNatVar("n"), m = freshNatVar("m");
  TensorP x = tensor(1, "x", Tensor::Input), y = tensor(2, "y", Tensor::Output);
  StmtP untouched = assign(access(y, {Nat(0)}, {}, ScalarKind::F32), constFloat(1, ScalarKind::F32));
  StmtP reached = assign(access(y, {Nat::var(i)}, {}, ScalarKind::F32), access(x, {Nat::var(i) + Nat::var(m)}, {}, ScalarKind::F32));
  StmtP loop = forall(i.id, "i", Nat(0), Nat::var(n), block({untouched, reached}), ForallKind::Serial);
  NatSubst byM;
  byM.vars.emplace(m.id, Nat(3));
  StmtP out = substitute(loop, byM);
  ASSERT_NE(out, loop);
  const StmtP &outBody = out->body[0];
  EXPECT_EQ(outBody->body[0], untouched);
  EXPECT_EQ(outBody->body[1]->lhs, reached->lhs);  // y[i] does not mention m
  EXPECT_EQ(print(outBody->body[1]->value), "x[i + 3]");
  // Reaching nothing: the very same statement.
  NatSubst byOther;
  byOther.vars.emplace(freshNatVar("k").id, Nat(1));
  EXPECT_EQ(substitute(loop, byOther), loop);
  // A bound that becomes a constant: the loop's bounds change, its body is shared.
  NatSubst byN;
  byN.vars.emplace(n.id, Nat(16));
  StmtP bounded = substitute(loop, byN);
  EXPECT_EQ(bounded->hi.asConst(), 16);
  EXPECT_EQ(bounded->body[0], loop->body[0]);
}

TEST(CinMutator, ANatExpressionThatBecomesConstantIsAConstant) {
  NatVarId n = freshNatVar("n");
  ExprP e = binary(ast::BinOp::Add, natExpr(Nat::var(n) * Nat(2)), constInt(1), ScalarKind::I64);
  NatSubst byN;
  byN.vars.emplace(n.id, Nat(5));
  ExprP out = substitute(e, byN);
  EXPECT_EQ(print(out), "(10 + 1)");
  EXPECT_EQ(out->args[0]->kind, ExprKind::Const);
  EXPECT_EQ(out->args[1], e->args[1]);
}

}  // namespace
