// The CIN verifier (cin/Verify.h): accepts a well-formed kernel and names each kind of broken
// invariant in a hand-built one: a local used outside its scope, an access of a tensor the
// kernel does not have or with more indices than its array levels, a write to an input, a
// comparison not typed bool. The driver runs it after lowering, the schedule block, the default
// schedule and isl's regeneration (a violation is an internal error naming the stage).
#include <gtest/gtest.h>

#include <string>

#include "cin/Cin.h"
#include "cin/Verify.h"
#include "support/Error.h"

namespace {

using namespace spl;
using namespace spl::cin;

TensorP tensor(Tensor::Kind kind, int64_t id, const char *name) {
  auto t = std::make_shared<Tensor>();
  t->kind = kind;
  t->id = id;
  t->name = name;
  t->type = types::array(Nat::var(NatVarId{1, "n"}), types::scalar(ScalarKind::F32));
  return t;
}

/// out[i] = x[i] for i < n, plus whatever `extra` adds inside the loop.
Kernel copy(const TensorP &x, const TensorP &out, StmtP extra = nullptr) {
  Kernel k;
  k.name = "copy";
  k.tensors = {x, out};
  NatVarId i = freshNatVar("i");
  std::vector<StmtP> body = {assign(access(out, {Nat::var(i)}, {}, Scalar::F32), access(x, {Nat::var(i)}, {}, Scalar::F32))};
  if (extra) body.push_back(extra);
  k.body = forall(i.id, "i", Nat(0), Nat::var(NatVarId{1, "n"}), block(body), ForallKind::Serial);
  return k;
}

TEST(CinVerify, AcceptsAWellFormedKernel) {
  TensorP x = tensor(Tensor::Input, 101, "x"), out = tensor(Tensor::Output, 102, "out");
  EXPECT_EQ(verify(copy(x, out)), "");
}

TEST(CinVerify, NamesEachBrokenInvariant) {
  TensorP x = tensor(Tensor::Input, 101, "x"), out = tensor(Tensor::Output, 102, "out");
  TensorP stranger = tensor(Tensor::Temp, 103, "t");
  Kernel undeclared = copy(x, out, setLocal(999, constInt(0), Scalar::I64));
  EXPECT_NE(verify(undeclared).find("local %999 is set where it is not declared"), std::string::npos) << verify(undeclared);
  Kernel notInScope = copy(x, out, assign(access(stranger, {Nat(0)}, {}, Scalar::F32), constFloat(0, Scalar::F32)));
  EXPECT_NE(verify(notInScope).find("a write of t, which is not in scope"), std::string::npos) << verify(notInScope);
  Kernel tooDeep = copy(x, out, assign(access(out, {Nat(0), Nat(0)}, {}, Scalar::F32), constFloat(0, Scalar::F32)));
  EXPECT_NE(verify(tooDeep).find("with 2 indices, more than its array levels"), std::string::npos) << verify(tooDeep);
  Kernel intoInput = copy(x, out, assign(access(x, {Nat(0)}, {}, Scalar::F32), constFloat(0, Scalar::F32)));
  EXPECT_NE(verify(intoInput).find("a write to the input x"), std::string::npos) << verify(intoInput);
  Kernel badCompare = copy(x, out, ifThen(binary(ast::BinOp::Gt, constInt(2), constInt(1), Scalar::I64), block({})));
  EXPECT_NE(verify(badCompare).find("a comparison of i64 and i64 typed i64"), std::string::npos) << verify(badCompare);
  try {
    verifyAfter(intoInput, "SomeStage");
    FAIL() << "no internal error";
  } catch (const InternalError &e) {
    EXPECT_NE(std::string(e.what()).find("broken after SomeStage"), std::string::npos) << e.what();
  }
}

}  // namespace
