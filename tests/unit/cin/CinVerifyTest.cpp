// The CIN verifier (cin/Verify.h): accepts a well-formed kernel and names each kind of broken
// invariant in a hand-built one: a local used outside its scope, an access of a tensor the
// kernel does not have or with more indices than its array levels, a write to an input, a
// comparison not typed bool, a Nat mentioning a variable or array not in scope. The driver runs it
// on the scheduled kernel and after isl's regeneration, and with --verify-each after lowering
// and each schedule command (a violation is an internal error naming the stage).
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
  KernelParam n;  // the nat parameter n (#1) that bounds the loop
  n.abi.role = tir::AbiParam::Nat;
  n.abi.name = "n";
  n.natVar = 1;
  k.params = {n};
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
  // Nats: a loop bound over a nat nobody binds, an index reading an array not in scope.
  Kernel unboundNat = copy(x, out);
  unboundNat.params.clear();
  EXPECT_NE(verify(unboundNat).find("a loop's upper bound mentions n (#1) where it is not in scope"), std::string::npos)
      << verify(unboundNat);
  Kernel strangeLookup = copy(x, out, assign(access(out, {Nat::lookup(NatVarId{103, "t"}, Nat(0))}, {}, Scalar::F32), constFloat(0, Scalar::F32)));
  EXPECT_NE(verify(strangeLookup).find("an index reads the array t (#103) where it is not in scope"), std::string::npos)
      << verify(strangeLookup);
  // A sum's index is in scope inside its body only.
  NatVarId j = freshNatVar("j");
  Kernel summed = copy(x, out, assign(access(out, {Nat::sum(j, Nat(0), Nat::var(NatVarId{1, "n"}), Nat::var(j) * Nat::var(j))}, {}, Scalar::F32),
                                      constFloat(0, Scalar::F32)));
  EXPECT_EQ(verify(summed), "");
  try {
    verifyAfter(intoInput, "SomeStage");
    FAIL() << "no internal error";
  } catch (const InternalError &e) {
    EXPECT_NE(std::string(e.what()).find("broken after SomeStage"), std::string::npos) << e.what();
  }
}

}  // namespace
