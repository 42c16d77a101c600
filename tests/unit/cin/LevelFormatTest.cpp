// Tests of the level-format interface (compiler/cin/LevelFormat.h): every format of LANGUAGE.md
// section 7 is recognised from its type with the properties the lowering relies on, and a
// format registered from outside the compiler drives the lowering of index notation without
// any change to it (the reason the interface exists).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cin/LevelFormat.h"
#include "cin/Lower.h"
#include "parse/Parser.h"
#include "support/Diagnostics.h"
#include "tir/Abi.h"
#include "check/Checker.h"

namespace spl {
namespace {

using cin::LevelFormatP;
using cin::LevelProperties;

TypeP f32() { return types::scalar(ScalarKind::F32); }

struct Shapes {
  NatVarId n = freshNatVar("n"), m = freshNatVar("m"), w = freshNatVar("w"), k = freshNatVar("k"),
           b = freshNatVar("b"), i = freshNatVar("i"), offs = freshNatVar("offs"), lens = freshNatVar("lens");
  Nat N = Nat::var(n), M = Nat::var(m), W = Nat::var(w), K = Nat::var(k), B = Nat::var(b), I = Nat::var(i);
  Nat rowLen = Nat::lookup(offs, I + Nat(1)) - Nat::lookup(offs, I);

  TypeP entry(TypeP value) { return types::tuple({std::move(value), types::idx(M)}); }
  TypeP csr(TypeP value) { return types::array(N, i, types::array(rowLen, entry(std::move(value)))); }
};

TEST(LevelFormat, RecognisesEveryFormatOfTheContract) {
  Shapes s;
  EXPECT_EQ(cin::formatNames(types::array(s.N, f32())), "dense");
  EXPECT_EQ(cin::formatNames(types::array(s.N, types::array(s.M, f32()))), "dense, dense");
  EXPECT_EQ(cin::formatNames(s.csr(f32())), "dense, compressed");
  // LIL: the row length is read from a lengths array.
  EXPECT_EQ(cin::formatNames(types::array(s.N, s.i, types::array(Nat::lookup(s.lens, s.I), s.entry(f32())))),
            "dense, compressed");
  // ELL, both orders: rows (or slots) of one width.
  EXPECT_EQ(cin::formatNames(types::array(s.N, types::array(s.W, s.entry(f32())))), "dense, padded");
  EXPECT_EQ(cin::formatNames(types::array(s.W, types::array(s.N, s.entry(f32())))), "dense, padded");
  // COO: each entry carries both coordinates.
  EXPECT_EQ(cin::formatNames(types::array(s.K, types::tuple({f32(), types::idx(s.N), types::idx(s.M)}))), "singleton");
  // A sparse vector: one top-level list of entries.
  EXPECT_EQ(cin::formatNames(types::array(s.K, s.entry(f32()))), "compressed");
  // BCSR: compressed block rows whose values are dense b x b blocks.
  EXPECT_EQ(cin::formatNames(s.csr(types::array(s.B, types::array(s.B, f32())))), "dense, compressed, dense, dense");
  // Through a dependent pair (the csr of LANGUAGE.md 7).
  EXPECT_EQ(cin::formatNames(types::depPair(s.offs, true, s.csr(f32()))), "dense, compressed");
  // Not tensors at all.
  EXPECT_EQ(cin::formatNames(f32()), "");
}

TEST(LevelFormat, PropertiesAndCoordinatesPerFormat) {
  Shapes s;
  auto levels = cin::levelsOf(s.csr(f32()));
  ASSERT_EQ(levels.size(), 2u);
  LevelProperties rows = levels[0].format->properties(), entries = levels[1].format->properties();
  EXPECT_TRUE(rows.full && rows.hasLocate && rows.ordered && rows.unique);
  EXPECT_FALSE(entries.full || entries.hasLocate || entries.padded);
  EXPECT_TRUE(entries.ordered && entries.unique);
  EXPECT_EQ(levels[1].format->coordinateCount(*levels[1].type), 1);
  // The child shape of the compressed level is the value: f32.
  EXPECT_EQ(types::str(levels[1].format->childShape(*levels[1].type)), "f32");

  auto ell = cin::levelsOf(types::array(s.N, types::array(s.W, s.entry(f32()))));
  ASSERT_EQ(ell.size(), 2u);
  EXPECT_TRUE(ell[1].format->properties().padded);
  EXPECT_FALSE(ell[1].format->properties().hasLocate);

  auto coo = cin::levelsOf(types::array(s.K, types::tuple({f32(), types::idx(s.N), types::idx(s.M)})));
  ASSERT_EQ(coo.size(), 1u);
  EXPECT_EQ(coo[0].format->coordinateCount(*coo[0].type), 2);
  EXPECT_FALSE(coo[0].format->properties().unique);
  // A pattern (no value component) has no level below it.
  EXPECT_EQ(coo[0].format->childShape(*types::array(s.K, types::tuple({types::idx(s.N), types::idx(s.M)}))), nullptr);
}

/// A format defined outside the compiler: it claims compressed levels and forwards to the
/// built-in one, renaming the loops it emits and counting its calls.
class TracedCompressed : public cin::LevelFormat {
 public:
  explicit TracedCompressed(LevelFormatP inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "traced"; }
  bool matches(const Type &t, int depth) const override { return inner_->matches(t, depth); }
  LevelProperties properties() const override { return inner_->properties(); }
  int coordinateCount(const Type &t) const override { return inner_->coordinateCount(t); }
  TypeP childShape(const Type &t) const override { return inner_->childShape(t); }
  void iterate(cin::lower::Lowerer &L, const cin::LevelPosition &at, const std::string &, cin::ForallKind kind,
               const IterateBody &body) const override {
    ++iterations;
    inner_->iterate(L, at, "traced", kind, body);
  }
  void appendEdges(cin::lower::Lowerer &L, const cin::TensorP &pos, const Nat &parent, const cin::ExprP &count) const override {
    ++appends;
    inner_->appendEdges(L, pos, parent, count);
  }
  void appendCoordinates(cin::lower::Lowerer &L, const cin::LevelPosition &entry,
                         const std::vector<cin::ExprP> &coordinates) const override {
    ++appends;
    inner_->appendCoordinates(L, entry, coordinates);
  }
  mutable int iterations = 0, appends = 0;

 private:
  LevelFormatP inner_;
};

const char *kEinsumSource = R"(
type csr[n: nat, m: nat] = (offs: nats ** n..(i => (offs@(i+1) - offs@i).(f32, idx[m])));
def spmv {n: nat} {m: nat} (A: csr[n, m]) (x: m.f32) : n.f32 = einsum y[i] = A[i, j] * x[j];
def add {n: nat} {m: nat} (A: csr[n, m]) (B: csr[n, m]) : csr[n, m] = einsum C[i, j] = A[i, j] + B[i, j];
export spmv as lf_spmv for cpu;
export add as lf_add for cpu;
)";

/// The CIN text of every kernel of kEinsumSource (the add's size function too).
std::string lowerEinsums() {
  SourceManager sm;
  Diagnostics diags(sm);
  uint32_t file = sm.addFile("levels.spl", kEinsumSource);
  std::optional<ast::Module> module = parseFile(sm, file, diags);
  std::optional<tir::Program> program = module ? checkProgram(*module, sm, diags, CheckOptions{}) : std::nullopt;
  if (!program) {
    std::ostringstream os;
    diags.flush(os);
    ADD_FAILURE() << os.str();
    return "";
  }
  std::string text;
  for (const tir::Export &ex : program->exports) {
    tir::Abi abi = tir::computeAbi(ex, 32);
    cin::LowerOptions lo;
    text += cin::print(cin::lowerExport(ex, abi, lo));
  }
  return text;
}

TEST(LevelFormat, ARegisteredFormatDrivesTheLoweringUnchanged) {
  std::string before = lowerEinsums();
  ASSERT_NE(before.find("{dense, compressed}"), std::string::npos) << before;
  ASSERT_EQ(before.find("traced"), std::string::npos);

  Shapes s;
  auto builtin = cin::levelsOf(s.csr(f32()))[1].format;
  auto traced = std::make_shared<TracedCompressed>(builtin);
  cin::registerLevelFormat(traced);
  std::string after = lowerEinsums();
  cin::unregisterLevelFormat(traced);

  EXPECT_NE(after.find("{dense, traced}"), std::string::npos) << after;
  EXPECT_NE(after.find("forall traced"), std::string::npos) << after;  // the SpMV's row loop
  EXPECT_GT(traced->iterations, 0);
  EXPECT_GT(traced->appends, 0);  // the sum's result assembly: edges and coordinates
  // The same program otherwise: only the names differ (and the ids, which are fresh per run).
  auto normalize = [](std::string t) {
    t = std::regex_replace(t, std::regex("\\b(traced|compressed|p)\\b"), "L");
    return std::regex_replace(t, std::regex("[0-9]+"), "#");
  };
  EXPECT_EQ(normalize(after), normalize(before));
  EXPECT_EQ(normalize(lowerEinsums()), normalize(before));  // unregistered again
}

}  // namespace
}  // namespace spl
