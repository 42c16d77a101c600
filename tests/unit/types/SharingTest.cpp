// Types and nats are shared, not copied (issue 23: type checking held about 25 KB per small
// def, most of it copies of types that had not changed). Small integer nats are one
// representation; a substitution that reaches nothing returns its input, and one that reaches
// part of a type rebuilds only the path to the change; the checker's final pass over a def
// (zonk) keeps the types that had no unknowns left, so a def's body shares its parameters'.
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>

#include "parse/Parser.h"
#include "support/Diagnostics.h"
#include "tir/Tir.h"
#include "types/Checker.h"
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

TEST(TypeSharing, ACheckedDefSharesItsParametersTypes) {
  const char *source = R"(
def rows {n: nat} {m: nat} (x: n.m.f32) (s: f32) : n.m.f32 = x |> map(r => r |> map(v => v * s));
def same {n: nat} (x: n.(4.f64)) : n.(4.f64) = x;
)";
  SourceManager sm;
  Diagnostics diags(sm);
  uint32_t file = sm.addFile("sharing.spl", source);
  std::optional<ast::Module> module = parseFile(sm, file, diags);
  std::optional<tir::Program> program = module ? checkProgram(*module, sm, diags, CheckOptions{}) : std::nullopt;
  if (!program) {
    std::ostringstream os;
    diags.flush(os);
    FAIL() << os.str();
  }
  const tir::Def *same = nullptr, *rows = nullptr;
  for (const tir::DefP &d : program->defs) {
    if (d->name == "same") same = d.get();
    if (d->name == "rows") rows = d.get();
  }
  ASSERT_TRUE(same && rows);
  auto valueParam = [](const tir::Def &d, const std::string &name) -> const tir::Var * {
    for (const tir::DefParam &p : d.params)
      if (p.name == name && p.value) return p.value.get();
    return nullptr;
  };
  // The body is the parameter: its type is the parameter's type node, not a copy of it.
  const tir::Var *sameX = valueParam(*same, "x");
  ASSERT_NE(sameX, nullptr);
  ASSERT_EQ(same->body->kind, tir::ExprKind::VarRef);
  EXPECT_EQ(same->body->type, sameX->type);
  EXPECT_EQ(same->body->var->type, sameX->type);
  // In the map, the argument x is a use of the parameter: the same type node again.
  const tir::Expr *map = rows->body.get();
  ASSERT_EQ(map->kind, tir::ExprKind::Prim);
  const tir::Expr *argument = nullptr;
  for (const tir::ExprP &a : map->args)
    if (a->kind == tir::ExprKind::VarRef && a->var->name == "x") argument = a.get();
  ASSERT_NE(argument, nullptr);
  const tir::Var *rowsX = valueParam(*rows, "x");
  ASSERT_NE(rowsX, nullptr);
  EXPECT_EQ(argument->type, rowsX->type);
}

}  // namespace
}  // namespace spl
