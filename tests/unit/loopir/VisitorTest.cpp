// The loop IR's visitor and mutator (loopir/Visitor.h): the order in which the default walk
// reaches a statement's expressions (a, b, step, the segment's parent) and statements, a pass
// that overrides one kind and sees every node of it, pre-order interception through the
// virtual visit / mutate, and a mutation that copies only the path to a change (the rest of
// the tree is shared, not copied).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loopir/LoopIr.h"
#include "loopir/Visitor.h"

namespace {

using namespace spl::loopir;

/// Records the variables and loads it meets, in the order the default walk reaches them.
class Order : public Visitor {
 public:
  std::vector<std::string> seen;

 protected:
  void visitVar(const Expr &e) override { seen.push_back("v" + std::to_string(e.var)); }
  void visitLoad(const Expr &e) override {
    seen.push_back("b" + std::to_string(e.buffer));
    visitChildren(e);
  }
  void visitStore(const Stmt &s) override {
    seen.push_back("store");
    visitChildren(s);
  }
};

TEST(LoopIrVisitor, DefaultWalkVisitsExpressionsThenStatementsInOrder) {
  // for v3 in [v1, v2) step v4 segment(offsets b5 @ v6) { b7[v3] = b8[v3] }
  StmtP loop = steppedLoop(3, "k", var(1, Ty::I64), var(2, Ty::I64), var(4, Ty::I64),
                           store(7, var(3, Ty::I64), load(8, var(3, Ty::I64), Ty::F64)));
  auto withSegment = std::make_shared<Stmt>(*loop);
  withSegment->segment.parent = var(6, Ty::I64);
  withSegment->segment.offsets = 5;
  Order order;
  order.visit(StmtP(withSegment));
  EXPECT_EQ(order.seen, (std::vector<std::string>{"v1", "v2", "v4", "v6", "store", "v3", "b8", "v3"}));
}

TEST(LoopIrVisitor, EveryKindHasItsMethodAndNullIsNothing) {
  struct Kinds : Visitor {
    int fences = 0, shuffles = 0, kernels = 0;
    void visitFence(const Stmt &) override { ++fences; }
    void visitWarpShuffle(const Expr &e) override {
      ++shuffles;
      visitChildren(e);
    }
    void visitGpuKernel(const Stmt &s) override {
      ++kernels;
      visitChildren(s);
    }
  } kinds;
  StmtP body = block({fence(), decl(9, "x", Ty::F32, warpShuffle(ShuffleKind::Down, cFloat(1, Ty::F32), cInt(1), cInt(32))),
                      ifThen(cInt(1, Ty::I1), fence(), nullptr)});
  kinds.visit(gpuKernel("k", spl::ast::GpuRowMapping::Vector, cInt(64), 256, body));
  kinds.visit(StmtP());
  kinds.visit(ExprP());
  EXPECT_EQ(kinds.fences, 2);
  EXPECT_EQ(kinds.shuffles, 1);
  EXPECT_EQ(kinds.kernels, 1);
}

/// Replaces variable 1 by the constant 7.
class ConstantOne : public Mutator {
 protected:
  ExprP mutateVar(const ExprP &e) override { return e->var == 1 ? cInt(7) : e; }
};

TEST(LoopIrMutator, CopiesOnlyThePathToAChange) {
  StmtP untouched = store(2, var(3, Ty::I64), cFloat(0, Ty::F32));
  ExprP index = bin(BinOp::Add, var(3, Ty::I64), var(1, Ty::I64));
  StmtP changed = store(2, index, cFloat(1, Ty::F32));
  StmtP root = block({untouched, changed});
  StmtP out = ConstantOne().mutate(root);
  ASSERT_NE(out, root);
  EXPECT_EQ(out->body[0], untouched);  // shared
  ASSERT_NE(out->body[1], changed);
  EXPECT_EQ(print(out->body[1]->a), "(v3 + 7)");
  EXPECT_EQ(out->body[1]->a->args[0], index->args[0]);  // the unchanged operand is shared
  EXPECT_EQ(out->body[1]->b, changed->b);
  // Nothing to change: the very same tree.
  StmtP none = block({untouched});
  EXPECT_EQ(ConstantOne().mutate(none), none);
  EXPECT_EQ(ConstantOne().mutate(StmtP()), nullptr);
}

TEST(LoopIrMutator, VirtualMutateInterceptsBeforeTheKind) {
  // Every Binary whose left operand is v3 becomes v9, its operands not looked into.
  struct Intercept : Mutator {
    using Mutator::mutate;
    int binaries = 0;
    ExprP mutate(const ExprP &e) override {
      if (e && e->kind == ExprKind::Binary && e->args[0]->kind == ExprKind::Var && e->args[0]->var == 3) return var(9, Ty::I64);
      return Mutator::mutate(e);
    }
    ExprP mutateBinary(const ExprP &e) override {
      ++binaries;
      return mutateChildren(e);
    }
  } intercept;
  ExprP e = bin(BinOp::Mul, bin(BinOp::Add, var(3, Ty::I64), var(1, Ty::I64)), var(5, Ty::I64));
  EXPECT_EQ(print(intercept.mutate(e)), "(v9 * v5)");
  EXPECT_EQ(intercept.binaries, 1);  // the outer product; the inner sum was replaced whole
}

}  // namespace
