// The loop IR's verifier (loopir/Verify.h): accepts what Flatten makes of a real program and
// names each kind of broken invariant in a hand-built function: a variable used outside its
// scope or at another type, a buffer or field that does not exist, a store of the wrong type,
// arithmetic on mismatched operands, a condition that is not i1, and the GPU's nodes. The
// driver runs it after every pass (a violation is an internal error naming the pass).
#include <gtest/gtest.h>

#include <string>

#include "loopir/LoopIr.h"
#include "loopir/Verify.h"
#include "support/Error.h"

namespace {

using namespace spl::loopir;

/// out[i] = x[i] * 2 for i < n, with n a scalar parameter (v1) and buffers b1 (x), b2 (out).
Function scale(StmtP body) {
  Function f;
  f.name = "scale";
  f.scalars.push_back(ScalarParam{1, "n", Ty::I64, 0});
  Buffer x;
  x.id = 1;
  x.name = "x";
  x.elem = Ty::F32;
  x.isParam = true;
  Buffer out = x;
  out.id = 2;
  out.name = "out";
  out.isOutput = true;
  f.buffers = {x, out};
  f.body = std::move(body);
  return f;
}

StmtP loopOver(StmtP body) { return forLoop(2, "i", cInt(0), var(1, Ty::I64), std::move(body), LoopKind::Serial); }

TEST(LoopIrVerify, AcceptsAWellFormedFunction) {
  Function f = scale(loopOver(store(2, var(2, Ty::I64), bin(BinOp::Mul, load(1, var(2, Ty::I64), Ty::F32), cFloat(2, Ty::F32)))));
  EXPECT_EQ(verify(f), "");
  EXPECT_NO_THROW(verifyAfter(f, "a test"));
}

TEST(LoopIrVerify, NamesEachBrokenInvariant) {
  // The loop variable used after its loop.
  Function outside = scale(block({loopOver(block({})), store(2, var(2, Ty::I64), cFloat(0, Ty::F32))}));
  EXPECT_NE(verify(outside).find("v2 is used where it is not declared"), std::string::npos) << verify(outside);
  // A variable used at another type than declared.
  Function retyped = scale(loopOver(store(2, var(2, Ty::I64), cast(var(1, Ty::I32), Ty::F32))));
  EXPECT_NE(verify(retyped).find("v1 is declared i64 but used as i32"), std::string::npos) << verify(retyped);
  // A buffer the function does not have.
  Function missing = scale(loopOver(store(7, var(2, Ty::I64), cFloat(0, Ty::F32))));
  EXPECT_NE(verify(missing).find("buffer b7, which the function does not have"), std::string::npos) << verify(missing);
  // A store of f64 into f32 elements.
  Function wide = scale(loopOver(store(2, var(2, Ty::I64), cFloat(0, Ty::F64))));
  EXPECT_NE(verify(wide).find("a store of f64 into f32 elements"), std::string::npos) << verify(wide);
  // Arithmetic on f32 and f64.
  Function mixed = scale(loopOver(store(2, var(2, Ty::I64), bin(BinOp::Add, cFloat(1, Ty::F32), cFloat(1, Ty::F64)))));
  EXPECT_NE(verify(mixed).find("arithmetic on f32 and f64"), std::string::npos) << verify(mixed);
  // A condition that is not i1.
  Function cond = scale(ifThen(var(1, Ty::I64), block({})));
  EXPECT_NE(verify(cond).find("a condition that is not i1"), std::string::npos) << verify(cond);
  // A masked tail on a loop that is not a vector loop (loopir/SegmentVersioning's masked rows
  // are vectorised over at least two lanes), and the same loop as a vector loop.
  auto masked = std::make_shared<Stmt>(*loopOver(block({})));
  masked->maskedTail = true;
  Function scalarMasked = scale(masked);
  EXPECT_NE(verify(scalarMasked).find("loop v2 has a masked tail but is not a vector loop (width 0)"), std::string::npos)
      << verify(scalarMasked);
  auto vectorMasked = std::make_shared<Stmt>(*masked);
  vectorMasked->vectorize = true;
  vectorMasked->vectorWidth = 8;
  EXPECT_EQ(verify(scale(vectorMasked)), "");
  // verifyAfter turns it into an internal error naming the pass.
  try {
    verifyAfter(wide, "SomePass");
    FAIL() << "no internal error";
  } catch (const spl::InternalError &e) {
    EXPECT_NE(std::string(e.what()).find("broken after SomePass"), std::string::npos) << e.what();
  }
}

/// The GPU's nodes (loopir/GpuWarpRows writes them): thread indices, shuffles, votes and warp
/// reductions only in cuda functions, a warp reduction combining into its own type over a
/// partner it binds, a kernel at the top level with a load-free thread count.
TEST(LoopIrVerify, ChecksAlignmentGaps) {
  // loopir/AlignStreams's head: the elements from x[i] to its next 64-byte line.
  auto headOf = [](ExprP gap) {
    return scale(block({decl(3, "head", Ty::I64, std::move(gap)), loopOver(store(2, var(2, Ty::I64), cFloat(0, Ty::F32)))}));
  };
  Function good = headOf(alignGap(1, cInt(0), 64));
  EXPECT_EQ(verify(good), "");
  // 24 bytes is no power of two; 2 bytes is less than an f32; a buffer that does not exist.
  Function odd = headOf(alignGap(1, cInt(0), 24));
  EXPECT_NE(verify(odd).find("an alignment gap to 24 bytes"), std::string::npos) << verify(odd);
  Function small = headOf(alignGap(1, cInt(0), 2));
  EXPECT_NE(verify(small).find("an alignment gap to 2 bytes"), std::string::npos) << verify(small);
  Function missing = headOf(alignGap(9, cInt(0), 64));
  EXPECT_NE(verify(missing).find("buffer b9, which the function does not have"), std::string::npos) << verify(missing);
  // Its index must be an integer.
  Function floatIndex = headOf(alignGap(1, cFloat(1, Ty::F32), 64));
  EXPECT_NE(verify(floatIndex).find("an alignment gap whose index is not an integer"), std::string::npos) << verify(floatIndex);
}

TEST(LoopIrVerify, ChecksTheGpuNodes) {
  // A kernel: each thread reduces x[threadIdx.x] over groups of 8 lanes into v3 and stores it.
  ExprP tid = gpuIndex(GpuIndexKind::ThreadX);
  StmtP reduce = warpReduce(3, 4, cInt(8), bin(BinOp::Add, var(3, Ty::F32), var(4, Ty::F32), true));
  StmtP perThread = block({decl(3, "acc", Ty::F32, load(1, tid, Ty::F32)), reduce,
                           ifThen(bin(BinOp::Lt, tid, var(1, Ty::I64)), store(2, tid, var(3, Ty::F32)))});
  Function kernel = scale(block({gpuKernel("i", spl::ast::GpuRowMapping::Vector, var(1, Ty::I64), 256, perThread)}));
  kernel.cuda = true;
  EXPECT_EQ(verify(kernel), "");
  // The same on the CPU.
  Function cpu = kernel;
  cpu.cuda = false;
  EXPECT_NE(verify(cpu).find("in CPU function scale"), std::string::npos) << verify(cpu);
  // The partner is bound only inside the combination.
  Function leaked = scale(block({gpuKernel("i", spl::ast::GpuRowMapping::Vector, var(1, Ty::I64), 256,
                                           block({decl(3, "acc", Ty::F32, cFloat(0, Ty::F32)), reduce, store(2, tid, var(4, Ty::F32))}))}));
  leaked.cuda = true;
  EXPECT_NE(verify(leaked).find("v4 is used where it is not declared"), std::string::npos) << verify(leaked);
  // A combination of another type than the variable.
  Function retyped = scale(block({gpuKernel(
      "i", spl::ast::GpuRowMapping::Vector, var(1, Ty::I64), 256,
      block({decl(3, "acc", Ty::F32, cFloat(0, Ty::F32)), warpReduce(3, 4, cInt(8), cast(var(4, Ty::F32), Ty::F64))}))}));
  retyped.cuda = true;
  EXPECT_NE(verify(retyped).find("combined across a warp into a f64 value"), std::string::npos) << verify(retyped);
  // A shuffle whose lane is a float.
  Function lane = scale(block({gpuKernel("i", spl::ast::GpuRowMapping::Vector, var(1, Ty::I64), 256,
                                         store(2, tid, warpShuffle(ShuffleKind::Down, cFloat(1, Ty::F32), cFloat(1, Ty::F32), cInt(32))))}));
  lane.cuda = true;
  EXPECT_NE(verify(lane).find("a shuffle whose value, lane or width is mistyped"), std::string::npos) << verify(lane);
  // A vote on a value that is not a predicate.
  Function vote = scale(block({gpuKernel("i", spl::ast::GpuRowMapping::Compact, var(1, Ty::I64), 256,
                                         store(2, tid, cast(warpVote(VoteKind::Before, tid, cInt(8)), Ty::F32)))}));
  vote.cuda = true;
  EXPECT_NE(verify(vote).find("a vote whose predicate is not i1"), std::string::npos) << verify(vote);
  // A kernel inside a loop, and one whose thread count reads memory.
  Function nested = scale(loopOver(gpuKernel("i", spl::ast::GpuRowMapping::Vector, var(1, Ty::I64), 256, block({}))));
  nested.cuda = true;
  EXPECT_NE(verify(nested).find("a kernel nested in other statements"), std::string::npos) << verify(nested);
  Function loads = scale(block({gpuKernel("i", spl::ast::GpuRowMapping::Vector, cast(load(1, cInt(0), Ty::F32), Ty::I64), 256, block({}))}));
  loads.cuda = true;
  EXPECT_NE(verify(loads).find("a kernel's thread count reads memory"), std::string::npos) << verify(loads);
  // A loop's step that is not an integer.
  Function step = scale(steppedLoop(2, "i", cInt(0), var(1, Ty::I64), cFloat(2, Ty::F32), block({})));
  EXPECT_NE(verify(step).find("a loop's step is f32"), std::string::npos) << verify(step);
}

/// The merge path's nodes (loopir/GpuMergeRows writes them): a kernel's workspace only inside a
/// kernel on a resident grid and never allocated, arrivals only on a workspace of i64 counters
/// into a declared i64, fences only in cuda functions, a while loop's condition an i1.
TEST(LoopIrVerify, ChecksTheMergePathNodes) {
  auto withWorkspaces = [](StmtP body) {
    Function f = scale(std::move(body));
    f.cuda = true;
    Buffer carries;
    carries.id = 3;
    carries.name = "carries";
    carries.elem = Ty::F32;
    carries.perWarp = 2;
    Buffer counters = carries;
    counters.id = 4;
    counters.name = "counters";
    counters.elem = Ty::I64;
    counters.perWarp = 1;
    counters.arrivals = true;
    f.buffers.push_back(carries);
    f.buffers.push_back(counters);
    return f;
  };
  ExprP tid = gpuIndex(GpuIndexKind::ThreadX);
  // Lane work: store a carry, fence, count the arrival, read the carry back volatile while the
  // count is below 2.
  StmtP work = block({decl(5, "count", Ty::I64, cInt(0)), store(3, tid, load(1, tid, Ty::F32)), fence(), arrive(5, 4, cInt(0)),
                      whileLoop(bin(BinOp::Lt, var(5, Ty::I64), cInt(2)), assignVar(5, cInt(2))),
                      store(2, tid, loadVolatile(3, tid, Ty::F32))});
  Function merge = withWorkspaces(block({gpuKernel("i", spl::ast::GpuRowMapping::Merge, nullptr, 256, work)}));
  EXPECT_EQ(verify(merge), "");
  EXPECT_NE(print(merge).find("threads resident block 256"), std::string::npos) << print(merge);
  EXPECT_NE(print(merge).find("buffer b4 counters: i64 workspace 1/warp arrivals"), std::string::npos) << print(merge);
  EXPECT_NE(print(merge).find("v5 = arrive b4[0]"), std::string::npos) << print(merge);
  EXPECT_NE(print(merge).find("volatile b3["), std::string::npos) << print(merge);
  // On a grid of a thread count the host cannot size a workspace per warp.
  Function counted = withWorkspaces(block({gpuKernel("i", spl::ast::GpuRowMapping::Merge, var(1, Ty::I64), 256, work)}));
  EXPECT_NE(verify(counted).find("of workspace carries outside a kernel on a resident grid"), std::string::npos) << verify(counted);
  // Nor outside any kernel; nor is one allocated.
  Function outside = withWorkspaces(store(3, cInt(0), cFloat(0, Ty::F32)));
  EXPECT_NE(verify(outside).find("outside a kernel on a resident grid"), std::string::npos) << verify(outside);
  Function allocated = withWorkspaces(block({gpuKernel("i", spl::ast::GpuRowMapping::Merge, nullptr, 256, allocBuffer(3, cInt(4)))}));
  EXPECT_NE(verify(allocated).find("an allocation of workspace carries"), std::string::npos) << verify(allocated);
  // An arrival on the carries (not counters), and one into an undeclared variable.
  Function notCounters = withWorkspaces(block({gpuKernel("i", spl::ast::GpuRowMapping::Merge, nullptr, 256,
                                                         block({decl(5, "count", Ty::I64, cInt(0)), arrive(5, 3, cInt(0))}))}));
  EXPECT_NE(verify(notCounters).find("not a workspace of i64 arrival counters"), std::string::npos) << verify(notCounters);
  Function undeclared = withWorkspaces(block({gpuKernel("i", spl::ast::GpuRowMapping::Merge, nullptr, 256, arrive(5, 4, cInt(0)))}));
  EXPECT_NE(verify(undeclared).find("which is not a declared i64"), std::string::npos) << verify(undeclared);
  // A while loop over an i64, and a fence on the CPU.
  Function loop = scale(whileLoop(var(1, Ty::I64), block({})));
  EXPECT_NE(verify(loop).find("a while loop's condition is not i1"), std::string::npos) << verify(loop);
  Function cpuFence = scale(fence());
  EXPECT_NE(verify(cpuFence).find("a memory fence in CPU function scale"), std::string::npos) << verify(cpuFence);
}

}  // namespace
