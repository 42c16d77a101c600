// Upper and lower bounds of nats under variable ranges (FHPNC'21 section 5.3): checked against
// exhaustive evaluation over the ranges, plus the cases the compiler relies on.
#include <gtest/gtest.h>

#include "types/Nat.h"

namespace spl {
namespace {

struct Vars {
  NatVarId n = freshNatVar("n"), g = freshNatVar("g"), i = freshNatVar("i"), r = freshNatVar("r");
  Nat N() const { return Nat::var(n); }
  Nat G() const { return Nat::var(g); }
  Nat I() const { return Nat::var(i); }
  Nat R() const { return Nat::var(r); }
};

/// Checks lo <= e <= hi for every value of the ranged variables (and n in [0, 40]).
void checkBounds(const Nat &e, const NatFacts &facts, const Vars &v, const std::optional<Nat> &hi,
                 const std::optional<Nat> &lo) {
  for (int64_t n = 0; n <= 40; ++n) {
    NatEnv env;
    env.vars[v.n.id] = n;
    std::function<void(size_t)> rec = [&](size_t k) {
      if (k == facts.ranges.size()) {
        auto x = evaluate(e, env);
        if (!x) return;
        if (hi) {
          auto h = evaluate(*hi, env);
          ASSERT_TRUE(h) << hi->str();
          EXPECT_LE(*x, *h) << e.str() << " <= " << hi->str() << " at n=" << n;
        }
        if (lo) {
          auto l = evaluate(*lo, env);
          ASSERT_TRUE(l) << lo->str();
          EXPECT_GE(*x, *l) << e.str() << " >= " << lo->str() << " at n=" << n;
        }
        return;
      }
      const NatFacts::Range &r = facts.ranges[k];
      auto a = evaluate(r.lo, env), b = evaluate(r.hi, env);
      if (!a || !b) return;
      for (int64_t x = *a; x < *b; ++x) {
        env.vars[r.var] = x;
        rec(k + 1);
      }
      env.vars.erase(r.var);
    };
    rec(0);
  }
}

TEST(NatBounds, RaggedSplitRowIsAtMostTheChunk) {
  Vars v;
  NatFacts f;
  f.ranges.push_back({v.g.id, Nat(0), Nat::div(v.N() + Nat(3), 4)});
  Nat row = Nat::min(Nat(4), v.N() - v.G() * Nat(4));
  auto u = upperBound(row, f);
  ASSERT_TRUE(u);
  EXPECT_FALSE(u->mentions(v.g.id)) << u->str();
  EXPECT_EQ(constUpperBound(row, f), 4);
  checkBounds(row, f, v, u, lowerBound(row, f));
}

TEST(NatBounds, TriangleRowIsAtMostN) {
  Vars v;
  NatFacts f;
  f.ranges.push_back({v.i.id, Nat(0), v.N()});
  Nat row = v.I() + Nat(1);
  auto u = upperBound(row, f);
  ASSERT_TRUE(u);
  EXPECT_EQ(*u, v.N());
  EXPECT_EQ(*lowerBound(row, f), Nat(1));
  checkBounds(row, f, v, u, lowerBound(row, f));
}

TEST(NatBounds, NegativeCoefficientsUseTheOtherExtreme) {
  Vars v;
  NatFacts f;
  f.ranges.push_back({v.i.id, Nat(0), v.N()});
  Nat rest = v.N() - v.I();  // drop(i) of an n-array
  EXPECT_EQ(*upperBound(rest, f), v.N());
  EXPECT_EQ(*lowerBound(rest, f), Nat(1));
  checkBounds(rest, f, v, upperBound(rest, f), lowerBound(rest, f));
}

TEST(NatBounds, NestedRangesAndStrides) {
  Vars v;
  NatFacts f;
  f.ranges.push_back({v.g.id, Nat(0), Nat::div(v.N() + Nat(7), 8)});
  f.ranges.push_back({v.r.id, Nat(0), Nat::min(Nat(8), v.N() - v.G() * Nat(8))});
  Nat pos = v.G() * Nat(8) + v.R();
  auto u = upperBound(pos, f);
  ASSERT_TRUE(u);
  EXPECT_FALSE(u->mentions(v.g.id) || u->mentions(v.r.id)) << u->str();
  checkBounds(pos, f, v, u, lowerBound(pos, f));
  // strided(4) part t holds (L + 3 - t) / 4 elements: at most (L + 3) / 4.
  NatFacts s;
  s.ranges.push_back({v.i.id, Nat(0), Nat(4)});
  Nat part = Nat::div(v.N() + Nat(3) - v.I(), 4);
  auto up = upperBound(part, s);
  ASSERT_TRUE(up);
  EXPECT_EQ(*up, Nat::div(v.N() + Nat(3), 4));
  checkBounds(part, s, v, up, lowerBound(part, s));
}

TEST(NatBounds, LookupsAtVaryingPositionsHaveNoUpperBound) {
  Vars v;
  NatVarId offs = freshNatVar("offs");
  NatFacts f;
  f.ranges.push_back({v.i.id, Nat(0), v.N()});
  Nat row = Nat::lookup(offs, v.I() + Nat(1)) - Nat::lookup(offs, v.I());
  EXPECT_FALSE(upperBound(row, f).has_value());
  // A lookup at a fixed position is just a parameter.
  Nat total = Nat::lookup(offs, v.N()) - Nat::lookup(offs, Nat(0));
  EXPECT_EQ(*upperBound(total, f), total);
  // Nor a lower bound: the subtracted lookup would need an upper one.
  EXPECT_FALSE(lowerBound(row, f).has_value());
}

TEST(NatBounds, MinMaxAndConditionals) {
  Vars v;
  NatFacts f;
  f.ranges.push_back({v.i.id, Nat(0), Nat(10)});
  Nat e = Nat::max(v.I(), Nat(3)) + Nat::cond(NatCond::compare("<", v.I(), Nat(5)), Nat(2), v.I());
  auto u = upperBound(e, f), l = lowerBound(e, f);
  ASSERT_TRUE(u && l);
  checkBounds(e, f, v, u, l);
  EXPECT_EQ(*u->asConst(), 18);
}

/// proveNonNegative(e) under the ranges: the verdict is `proved`, and a proof is true at every
/// point (n in [0, 40]).
void checkProof(const Nat &e, const NatFacts &facts, const Vars &v, bool proved) {
  EXPECT_EQ(proveNonNegative(e, facts), proved) << e.str();
  if (proved) checkBounds(e, facts, v, std::nullopt, Nat(0));
}

// A block of 4 rows of n (a split's blocks g in [0, (n + 3) / 4)) starts inside the rows:
// n - 4 g >= 0 (g's bound raised to (n + 3) / 4 makes it linear), so the block's length
// min(n - 4 g, 4) is non-negative; the length is not 4 for every block.
TEST(NatBounds, BlockStartsInsideTheRows) {
  Vars v;
  NatFacts f;
  f.ranges.push_back({v.g.id, Nat(0), Nat::div(v.N() + Nat(3), 4)});
  checkProof(v.N() - Nat(4) * v.G(), f, v, true);
  checkProof(v.N() - Nat(4) * v.G() - Nat(1), f, v, true);
  checkProof(Nat::min(v.N() - Nat(4) * v.G(), Nat(4)), f, v, true);
  checkProof(v.N() - Nat(4) * v.G() - Nat(4), f, v, false);
}

// -min(a, b) is at least -a and -b, max(a, b) at least a and b: the end of one block's run,
// min(n, 4 g + 4), is not past the next block's start 4 g + 4; nothing more follows.
TEST(NatBounds, MinAndMaxAgainstTheirArms) {
  Vars v;
  NatFacts f;
  f.ranges.push_back({v.g.id, Nat(0), v.N()});
  checkProof(Nat(4) * v.G() + Nat(4) - Nat::min(v.N(), Nat(4) * v.G() + Nat(4)), f, v, true);
  checkProof(Nat::max(v.G() - v.N(), v.N()) - v.N(), f, v, true);
  checkProof(v.N() - Nat::min(v.N(), v.G()) - v.G(), f, v, false);
  checkProof(v.G() - Nat::max(v.G(), v.N()), f, v, false);
}

}  // namespace
}  // namespace spl
