// Compile-time bounds: constUpper (loopir/LoopIr.h) gives the largest value a loop-IR
// expression can take when that is a constant (GPU thread extents, shared-memory and stack
// sizes must be known when compiling; loopir/AlignStreams's short loops), and codegen's localTemp puts a temporary in the function's
// frame only when that bound times its element size is at most kLocalTempBytes.
#include <gtest/gtest.h>

#include "codegen/LoopCodeGen.h"
#include "loopir/LoopIr.h"

namespace {

using namespace spl::loopir;
using spl::codegen::kLocalTempBytes;
using spl::codegen::localTemp;

TEST(CodegenConstUpper, BoundsWhatIsConstantAndNothingElse) {
  ExprP n = var(1, Ty::I64);
  EXPECT_EQ(constUpper(cInt(7)), 7);
  // min(n, 4) <= 4 whatever n is; max(n, 4) has no bound.
  EXPECT_EQ(constUpper(mm(false, n, cInt(4))), 4);
  EXPECT_FALSE(constUpper(mm(true, n, cInt(4))).has_value());
  // Both arms of a select; sums, products and quotients of bounded operands.
  EXPECT_EQ(constUpper(sel(bin(BinOp::Lt, n, cInt(3)), cInt(2), cInt(9))), 9);
  EXPECT_EQ(constUpper(bin(BinOp::Add, mm(false, n, cInt(4)), cInt(3))), 7);
  EXPECT_EQ(constUpper(bin(BinOp::Mul, mm(false, n, cInt(4)), cInt(8))), 32);
  EXPECT_EQ(constUpper(bin(BinOp::Div, cInt(33), cInt(8))), 4);
  // A division by 0 or a negative constant, a difference and a variable: no bound.
  EXPECT_FALSE(constUpper(bin(BinOp::Div, cInt(33), cInt(0))).has_value());
  EXPECT_FALSE(constUpper(bin(BinOp::Div, cInt(33), cInt(-1))).has_value());
  EXPECT_FALSE(constUpper(bin(BinOp::Sub, cInt(8), n)).has_value());
  EXPECT_FALSE(constUpper(n).has_value());
  // A thread index has no constant bound either (it depends on the launch).
  EXPECT_FALSE(constUpper(gpuIndex(GpuIndexKind::ThreadX)).has_value());
}

TEST(CodegenConstUpper, LocalTemporariesFitTheFrame) {
  ExprP n = var(1, Ty::I64);
  // 512 doubles fill kLocalTempBytes exactly; one more, or an unbounded count, goes to the heap.
  ASSERT_EQ(kLocalTempBytes, 4096);
  EXPECT_TRUE(localTemp(*allocBuffer(3, mm(false, n, cInt(512))), 8));
  EXPECT_FALSE(localTemp(*allocBuffer(3, mm(false, n, cInt(513))), 8));
  EXPECT_FALSE(localTemp(*allocBuffer(3, n), 8));
  EXPECT_TRUE(localTemp(*allocBuffer(3, cInt(1024)), 4));
}

}  // namespace
