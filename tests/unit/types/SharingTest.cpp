// Types and nats are shared, not copied (issue 23: type checking held about 25 KB per small
// def, most of it copies of types that had not changed). Small integer nats are one
// representation; a substitution that reaches nothing returns its input, and one that reaches
// part of a type rebuilds only the path to the change (the checker's side: check/CheckerTest).
#include <gtest/gtest.h>

#include <string>

#include "types/Type.h"

namespace spl {
namespace {

TEST(TypeSharing, SmallConstantsAreOneRepresentation) {
  EXPECT_TRUE(Nat().identical(Nat(0)));
  EXPECT_TRUE(Nat(7).identical(Nat(7)));
  EXPECT_TRUE(Nat(-16).identical(Nat(-16)));
  EXPECT_TRUE(Nat(256).identical(Nat(256)));
  // Beyond the shared range a constant is made anew: equal, not identical.
  EXPECT_EQ(Nat(100000), Nat(100000));
  EXPECT_FALSE(Nat(100000).identical(Nat(100000)));
  EXPECT_EQ(Nat(257).str(), "257");
  EXPECT_EQ(Nat(-17).str(), "-17");
}

TEST(TypeSharing, SubstitutionThatReachesNothingReturnsItsInput) {
  NatVarId n = freshNatVar("n"), m = freshNatVar("m"), k = freshNatVar("k"), offs = freshNatVar("offs");
  NatVarId i = freshNatVar("i");
  Nat row = Nat::lookup(offs, Nat::var(i) + Nat(1)) - Nat::lookup(offs, Nat::var(i));
  Nat bounded = Nat::min(Nat::var(n), Nat::var(m) * Nat(2)) + Nat::sum(i, Nat(0), Nat::var(n), Nat::var(i));
  NatSubst byK;
  byK.vars.emplace(k.id, Nat(5));
  EXPECT_TRUE(substitute(row, byK).identical(row));
  EXPECT_TRUE(substitute(bounded, byK).identical(bounded));

  TypeP csrRows = types::array(Nat::var(n), i, types::array(row, types::tuple({types::scalar(ScalarKind::F32), types::idx(Nat::var(m))})));
  TypeP pair = types::depPair(offs, /*overNats=*/true, csrRows);
  EXPECT_EQ(types::substitute(pair, byK), pair);
  EXPECT_EQ(types::substitute(csrRows, byK), csrRows);

  // A substitution that reaches the nat changes it (not identical, not equal).
  NatSubst byM;
  byM.vars.emplace(m.id, Nat(3));
  Nat changed = substitute(bounded, byM);
  EXPECT_FALSE(changed.identical(bounded));
  EXPECT_NE(changed, bounded);
}

TEST(TypeSharing, SubstitutionRebuildsOnlyThePathToAChange) {
  NatVarId n = freshNatVar("n"), m = freshNatVar("m");
  TypeP row = types::array(Nat::var(m), types::scalar(ScalarKind::F64));
  TypeP other = types::array(Nat(4), types::idx(Nat(9)));
  TypeP t = types::tuple({types::array(Nat::var(n), row), other});
  NatSubst byN;
  byN.vars.emplace(n.id, Nat(10));
  TypeP s = types::substitute(t, byN);
  ASSERT_NE(s, t);
  EXPECT_EQ(types::str(s), "(10.m.f64, 4.idx[9])");
  // The parts the substitution did not reach are the same nodes.
  EXPECT_EQ(s->elems[1], other);
  EXPECT_EQ(s->elems[0]->elems[0], row);
  EXPECT_EQ(types::scalar(ScalarKind::F64), types::scalar(ScalarKind::F64));
}

}  // namespace
}  // namespace spl
