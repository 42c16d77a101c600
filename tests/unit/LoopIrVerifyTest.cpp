// The loop IR's verifier (loopir/Verify.h): accepts what Flatten makes of a real program and
// names each kind of broken invariant in a hand-built function: a variable used outside its
// scope or at another type, a buffer or field that does not exist, a store of the wrong type,
// arithmetic on mismatched operands, a condition that is not i1. The driver runs it after every
// pass (a violation is an internal error naming the pass).
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
  // verifyAfter turns it into an internal error naming the pass.
  try {
    verifyAfter(wide, "SomePass");
    FAIL() << "no internal error";
  } catch (const spl::InternalError &e) {
    EXPECT_NE(std::string(e.what()).find("broken after SomePass"), std::string::npos) << e.what();
  }
}

}  // namespace
