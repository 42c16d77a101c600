// The type checker's API (check/Checker.h) on small programs: what it gives (the typed defs,
// the implicit arguments it inferred at each call, types shared with the parameters they come
// from, issue 23) and how it fails (a located diagnostic naming both types).
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>

#include "check/Checker.h"
#include "parse/Parser.h"
#include "support/Diagnostics.h"
#include "tir/Tir.h"

namespace spl {
namespace {

/// The program of `source`, or nothing with the diagnostics in `errors`.
std::optional<tir::Program> check(const char *source, std::string *errors = nullptr) {
  SourceManager sm;
  Diagnostics diags(sm);
  uint32_t file = sm.addFile("checked.spl", source);
  std::optional<ast::Module> module = parseFile(sm, file, diags);
  std::optional<tir::Program> program = module ? checkProgram(*module, sm, diags, CheckOptions{}) : std::nullopt;
  std::ostringstream os;
  diags.flush(os);
  if (errors) *errors = os.str();
  return program;
}

const tir::Def *def(const tir::Program &p, const std::string &name) {
  for (const tir::DefP &d : p.defs)
    if (d->name == name) return d.get();
  return nullptr;
}

TEST(Checker, ImplicitNatsAreInferredAtACall) {
  std::optional<tir::Program> p = check(R"(
def twice {n: nat} (x: n.f32) : n.f32 = x |> map(v => v * 2.0);
def eight (y: 8.f32) : 8.f32 = twice(y);
)");
  ASSERT_TRUE(p);
  const tir::Def *eight = def(*p, "eight");
  ASSERT_NE(eight, nullptr);
  ASSERT_EQ(eight->calls.size(), 1u);
  const tir::CallRecord &call = eight->calls[0];
  EXPECT_EQ(call.callee, "twice");
  ASSERT_EQ(call.implicits.size(), 1u);
  EXPECT_EQ(call.implicits[0].name, "n");
  EXPECT_EQ(call.implicits[0].nat.asConst(), 8);
  EXPECT_EQ(types::str(call.result), "8.f32");
}

TEST(Checker, AMismatchIsLocatedAndNamesBothTypes) {
  std::string errors;
  EXPECT_FALSE(check("def widen (x: 4.f32) : 4.f64 = x;\n", &errors));
  EXPECT_NE(errors.find("checked.spl:1:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("error:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("f32"), std::string::npos) << errors;
  EXPECT_NE(errors.find("f64"), std::string::npos) << errors;
}

TEST(Checker, ADefSharesItsParametersTypes) {
  const char *source = R"(
def rows {n: nat} {m: nat} (x: n.m.f32) (s: f32) : n.m.f32 = x |> map(r => r |> map(v => v * s));
def same {n: nat} (x: n.(4.f64)) : n.(4.f64) = x;
)";
  std::string errors;
  std::optional<tir::Program> program = check(source, &errors);
  if (!program) FAIL() << errors;
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
