// Tests of the polyhedral pass (compiler/poly/): kernels come from SPL sources through the real
// pipeline (parse, type check, lower, user and default schedules, as driver/Driver.cpp runs
// them), then PolyModel and Dependences decide every loop.
#include <gtest/gtest.h>
#include <isl/cpp.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "cin/Lower.h"
#include "cin/Schedule.h"
#include "driver/Driver.h"
#include "parse/Parser.h"
#include "poly/Dependences.h"
#include "poly/IslAst.h"
#include "poly/IslSupport.h"
#include "poly/PolyModel.h"
#include "poly/UserSchedule.h"
#include "support/Diagnostics.h"
#include "support/Version.h"
#include "tir/Abi.h"
#include "check/Checker.h"

namespace spl {
namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The kernels of a program for one target, as the driver lowers and schedules them.
std::vector<cin::Kernel> lowerSource(const std::string &path, const std::string &text, bool cuda = false) {
  SourceManager sm;
  Diagnostics diags(sm);
  uint32_t file = sm.addFile(path, text);
  std::optional<ast::Module> module = parseFile(sm, file, diags);
  if (!module) {
    std::ostringstream os;
    diags.flush(os);
    ADD_FAILURE() << "parse failed: " << os.str();
    return {};
  }
  CheckOptions copts;
  copts.stdlibDir = SPL_SOURCE_STDLIB_DIR;
  std::optional<tir::Program> program = checkProgram(*module, sm, diags, copts);
  if (!program) {
    std::ostringstream os;
    diags.flush(os);
    ADD_FAILURE() << "type check failed: " << os.str();
    return {};
  }
  std::vector<cin::Kernel> kernels;
  for (const tir::Export &ex : program->exports) {
    if (cuda ? !ex.cuda : !ex.cpu) continue;
    tir::Abi abi = tir::computeAbi(ex, 32);
    for (int sizeFn = 0; sizeFn < (abi.hasSizeFunction ? 2 : 1); ++sizeFn) {
      cin::LowerOptions lo;
      lo.cuda = cuda;
      lo.sizeFunction = sizeFn == 1;
      lo.precompute = cin::precomputeNames(*program, ex, cuda);
      cin::Kernel k = cin::lowerExport(ex, abi, lo);
      if (!lo.sizeFunction)
        for (const tir::Schedule &sch : program->schedules)
          if (cin::scheduleApplies(sch, ex, cuda)) EXPECT_TRUE(poly::applyUserSchedule(k, sch, diags));
      k.body = cuda ? cin::defaultGpuSchedule(k.body) : cin::defaultCpuSchedule(k.body);
      kernels.push_back(std::move(k));
    }
  }
  return kernels;
}

struct Analyzed {
  poly::PolyModel model;
  poly::DependenceAnalysis deps;
};

Analyzed analyze(const cin::Kernel &k) {
  Analyzed a;
  a.model = poly::buildPolyModel(k);
  a.deps = poly::analyzeDependences(a.model);
  return a;
}

const cin::Kernel &kernelNamed(const std::vector<cin::Kernel> &ks, const std::string &name) {
  for (const cin::Kernel &k : ks)
    if (k.name == name) return k;
  static cin::Kernel none;
  ADD_FAILURE() << "no kernel " << name;
  return none;
}

/// The verdicts of the loops in program order, e.g. {"parallel", "reduction"}.
std::vector<std::string> verdicts(const Analyzed &a) {
  std::vector<std::string> v;
  for (const poly::LoopAnalysis &la : a.deps.loops) v.push_back(poly::loopVerdictName(la.verdict));
  return v;
}

std::string report(const cin::Kernel &k) { return cin::print(k) + poly::emitIsl(k); }

using V = std::vector<std::string>;

// ---- single kernels ------------------------------------------------------------------------------

const char *kDense = R"(
def dot {n: nat} (a: n.f32) (b: n.f32) : f32 =
  zip(a, b) |> map((x, y) => x * y) |> reduce(+, 0.0);
def gemv {n: nat} {m: nat} (A: n.m.f32) (x: m.f32) : n.f32 =
  A |> map(row => dot(row, x));
export gemv as t_gemv for cpu;
)";

TEST(PolyVerdicts, DenseGemvRowsParallelColumnsReduction) {
  auto ks = lowerSource("gemv.spl", kDense);
  ASSERT_EQ(ks.size(), 1u);
  Analyzed a = analyze(ks[0]);
  EXPECT_EQ(verdicts(a), (V{"parallel", "reduction"})) << report(ks[0]);
  ASSERT_EQ(a.deps.loops[1].accumulators.size(), 1u);
  EXPECT_TRUE(a.model.arrays[a.deps.loops[1].accumulators[0]].isLocal);
  EXPECT_TRUE(poly::checkLoopKinds(a.model, a.deps).empty());
  // The model is exact: affine bounds, affine subscripts, so every write is a must-write.
  for (const poly::PolyStatement &st : a.model.statements) {
    EXPECT_TRUE(st.exactDomain) << st.name;
    for (const poly::PolyAccess &acc : st.accesses)
      if (acc.write) EXPECT_TRUE(acc.must) << acc.relation;
  }
}

TEST(PolyVerdicts, CsrSpmvRowsParallelNonzerosReduction) {
  auto ks = lowerSource(SPL_CONTRACT_DIR "/spmv_csr.spl", readFile(SPL_CONTRACT_DIR "/spmv_csr.spl"));
  for (const char *name : {"spl_spmv_csr", "spl_spmv_csr_packed", "spl_row_sums"}) {
    const cin::Kernel &k = kernelNamed(ks, name);
    Analyzed a = analyze(k);
    EXPECT_EQ(verdicts(a), (V{"parallel", "reduction"})) << report(k);
    // The nonzero loop's bound offs@(i + 1) - offs@i is data-dependent: an upper-bound parameter.
    bool upper = false;
    for (const poly::PolyParam &p : a.model.params) upper = upper || p.kind == poly::PolyParam::UpperBound;
    EXPECT_TRUE(upper) << report(k);
  }
}

TEST(PolyVerdicts, ScanLoopSequential) {
  auto ks = lowerSource(SPL_CONTRACT_DIR "/dense2csr.spl", readFile(SPL_CONTRACT_DIR "/dense2csr.spl"));
  const cin::Kernel &k = kernelNamed(ks, "spl_dense2csr_offsets");
  Analyzed a = analyze(k);
  // The row loop is the scan (sequential); the count of one row is a reduction.
  EXPECT_EQ(verdicts(a), (V{"sequential", "reduction"})) << report(k);
  EXPECT_NE(a.deps.loops[0].reason.find("acc"), std::string::npos) << a.deps.loops[0].reason;
}

TEST(PolyVerdicts, SmallScanSequential) {
  const char *src = R"(
def prefix {n: nat} (a: n.i32) : (n+1).i32 = a |> scan(+, 0);
export prefix as t_prefix for cpu;
)";
  auto ks = lowerSource("scan.spl", src);
  ASSERT_EQ(ks.size(), 1u);
  Analyzed a = analyze(ks[0]);
  ASSERT_EQ(a.deps.loops.size(), 1u) << report(ks[0]);
  EXPECT_EQ(verdicts(a), (V{"sequential"})) << report(ks[0]);
}

TEST(PolyVerdicts, FoldLoopSequential) {
  const char *src = R"(
def total {n: nat} (a: n.f32) : f32 = a |> fold(0.0, (acc, x) => acc + x);
export total as t_total for cpu;
)";
  auto ks = lowerSource("fold.spl", src);
  ASSERT_EQ(ks.size(), 1u);
  Analyzed a = analyze(ks[0]);
  EXPECT_EQ(verdicts(a), (V{"sequential"})) << report(ks[0]);
  // A fold's combination is not reassociable: the carried dependence is on its accumulator.
  EXPECT_NE(a.deps.loops[0].reason.find("flow dependence"), std::string::npos) << a.deps.loops[0].reason;
  // The same with reduce is a reduction.
  const char *red = R"(
def total {n: nat} (a: n.f32) : f32 = a |> reduce(+, 0.0);
export total as t_total for cpu;
)";
  auto rs = lowerSource("reduce.spl", red);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(verdicts(analyze(rs[0])), (V{"reduction"})) << report(rs[0]);
}

// A fold over a join consumes the rows' elements in order: the join's loops must run in order
// too (they were once lowered parallel, racing on the fold's accumulator); a reduce over a join
// reassociates, so its loops are reductions. The lowering's kinds must hold under isl.
TEST(PolyVerdicts, FoldOverJoinRunsItsRowsInOrder) {
  const char *src = R"(
def horner {n: nat} {m: nat} (A: n.m.f64) : f64 = A |> join |> fold(0.0, (s, v) => s * 0.5 + v);
def total {n: nat} {m: nat} (A: n.m.f64) : f64 = A |> join |> reduce(+, 0.0);
def prefix {n: nat} {m: nat} (A: n.m.i32) : (n*m+1).i32 = A |> join |> scan(+, 0);
export horner as t_horner for cpu;
export total as t_total for cpu;
export prefix as t_prefix for cpu;
)";
  auto ks = lowerSource("fold_join.spl", src);
  ASSERT_EQ(ks.size(), 3u);
  std::vector<V> want = {{"sequential", "sequential"}, {"reduction", "reduction"}, {"sequential", "sequential"}};
  for (size_t k = 0; k < ks.size(); ++k) {
    Analyzed a = analyze(ks[k]);
    EXPECT_EQ(verdicts(a), want[k]) << report(ks[k]);
    EXPECT_TRUE(poly::checkLoopKinds(a.model, a.deps).empty()) << report(ks[k]);
  }
}

TEST(PolyVerdicts, SpmvDeppairFoldNonzerosSequential) {
  auto ks = lowerSource(SPL_CONTRACT_DIR "/spmv_deppair.spl", readFile(SPL_CONTRACT_DIR "/spmv_deppair.spl"));
  const cin::Kernel &k = kernelNamed(ks, "spl_spmv_deppair");
  EXPECT_EQ(verdicts(analyze(k)), (V{"parallel", "sequential"})) << report(k);
}

TEST(PolyVerdicts, EinsumCscScatterSequential) {
  auto ks = lowerSource(SPL_CONTRACT_DIR "/einsum.spl", readFile(SPL_CONTRACT_DIR "/einsum.spl"));
  const cin::Kernel &k = kernelNamed(ks, "spl_ein_spmv_csc");
  Analyzed a = analyze(k);
  // Zero-initialisation parallel; the column loop scatters into out[crd]: a data-dependent
  // subscript, so a may-write of the whole of out, carried by the column loop.
  EXPECT_EQ(verdicts(a), (V{"parallel", "sequential", "sequential"})) << report(k);
  const std::string &why = a.deps.loops[1].reason;
  EXPECT_NE(why.find("on out"), std::string::npos) << why;
  bool mayWrite = false;
  for (const poly::PolyStatement &st : a.model.statements)
    for (const poly::PolyAccess &acc : st.accesses)
      mayWrite = mayWrite || (acc.write && !acc.must && a.model.arrays[acc.array].name == "out");
  EXPECT_TRUE(mayWrite) << report(k);
}

TEST(PolyVerdicts, ZeroInitialisationLoopsParallel) {
  auto ks = lowerSource(SPL_CONTRACT_DIR "/einsum.spl", readFile(SPL_CONTRACT_DIR "/einsum.spl"));
  for (const char *name : {"spl_ein_spmv_csc", "spl_ein_spmv_coo", "spl_ein_spmm", "spl_ein_residual", "spl_ein_csr2dense"}) {
    const cin::Kernel &k = kernelNamed(ks, name);
    Analyzed a = analyze(k);
    ASSERT_FALSE(a.deps.loops.empty());
    EXPECT_EQ(a.model.loops[0].name.substr(0, 2), "z0") << name;
    EXPECT_EQ(verdicts(a)[0], "parallel") << report(k);
  }
  // spmm: rows parallel, the nonzero loop carries out[i, l] += (not marked reassociable),
  // the dense inner loop writes distinct out[i, l].
  Analyzed spmm = analyze(kernelNamed(ks, "spl_ein_spmm"));
  EXPECT_EQ(verdicts(spmm), (V{"parallel", "parallel", "parallel", "sequential", "parallel"}));
}

TEST(PolyVerdicts, JoinedSegmentsParallel) {
  // bfs frontier: each frontier node writes its segment [wo@i, wo@(i+1)) of the output; the
  // segment model proves the node loop parallel. The loop over a node's children carries the
  // count cnt (and writes out at the data-dependent offset cnt); the padding loop after it
  // writes distinct elements (parallel, though the lowering runs it serially).
  auto ks = lowerSource(SPL_CONTRACT_DIR "/bfs.spl", readFile(SPL_CONTRACT_DIR "/bfs.spl"));
  const cin::Kernel &k = kernelNamed(ks, "spl_bfs_frontier");
  Analyzed a = analyze(k);
  EXPECT_EQ(verdicts(a), (V{"parallel", "sequential", "parallel"})) << report(k);
  bool segmented = false;
  for (const poly::PolyArray &arr : a.model.arrays) segmented = segmented || arr.segmentedBy == "writeOffsets";
  EXPECT_TRUE(segmented) << report(k);
  // bfs count: the scan over the frontier is sequential, each node's count a reduction.
  const cin::Kernel &c = kernelNamed(ks, "spl_bfs_count");
  EXPECT_EQ(verdicts(analyze(c)), (V{"sequential", "reduction"})) << report(c);
}

TEST(PolyVerdicts, UserScheduleSplitGemv) {
  auto ks = lowerSource(SPL_E2E_DIR "/schedules.spl", readFile(SPL_E2E_DIR "/schedules.spl"));
  const cin::Kernel &k = kernelNamed(ks, "spl_sched_gemv");
  Analyzed a = analyze(k);
  // The split row loop (io, ii) with the guard 16*io + ii < n, then the reduction.
  EXPECT_EQ(verdicts(a), (V{"parallel", "parallel", "reduction"})) << report(k);
  for (const poly::PolyStatement &st : a.model.statements) EXPECT_TRUE(st.exactDomain) << st.domain;
}

TEST(PolyVerdicts, QuotaGivesUnknown) {
  auto ks = lowerSource("gemv.spl", kDense);
  ASSERT_EQ(ks.size(), 1u);
  poly::PolyModel m = poly::buildPolyModel(ks[0]);
  poly::DependenceOptions tiny;
  tiny.maxOperations = 1;
  poly::DependenceAnalysis d = poly::analyzeDependences(m, tiny);
  EXPECT_TRUE(d.quotaExceeded);
  EXPECT_EQ(verdicts({m, d}), (V{"unknown", "unknown"}));
  // Unknown proves nothing: the check reports the parallel loop.
  EXPECT_FALSE(poly::checkLoopKinds(m, d).empty());
}

// Every isl context of poly/ has an operations quota unless a pass asks for another; a call past
// it fails like any isl error and quotaExceeded() tells it apart, so a pass can fall back saying
// why (a tile or fusion is refused naming the quota, an inspector is refused at its script).
TEST(PolyQuota, EveryContextIsBoundedAndTellsTheQuotaApart) {
  const std::string text = "[n] -> { [i, j] : 0 <= i < n and 0 <= j <= i and (i + j) mod 3 = 1 }";
  {
    poly::IslContext tiny(1);
    EXPECT_THROW(isl::set(tiny.ctx(), text).lexmax(), isl::exception_quota);
    try {  // a C call the bindings lack returns null; isl::manage throws, and the context knows why
      isl::set s(tiny.ctx(), text);
      isl::manage(isl_set_lexmin(s.release()));
      ADD_FAILURE() << "no quota";
    } catch (const isl::exception &e) {
      EXPECT_TRUE(tiny.quotaExceeded(e));
    }
  }
  poly::IslContext bounded;  // the default quota: plenty for this
  EXPECT_FALSE(isl::set(bounded.ctx(), text).lexmax().is_empty());
  EXPECT_FALSE(bounded.quotaExceeded());
  try {
    isl::set(bounded.ctx(), "{ [i] : i = ");  // not quota: a parse error
    ADD_FAILURE() << "no parse error";
  } catch (const isl::exception &e) {
    EXPECT_FALSE(bounded.quotaExceeded(e));
  }
  EXPECT_NE(poly::IslContext::quotaReason("tiling").find("operations quota (2000000) tiling"), std::string::npos);
}

// Nats reach isl two ways, both through foldAffine: as text (the polyhedral model) and as isl
// objects (loops regenerated by isl). On the same bounds they give the same sets: rational
// coefficients, floor division, remainders, min and max, parameters and dimensions.
TEST(IslParams, ObjectsAgreeWithTheModelsText) {
  NatVarId i = freshNatVar("i"), j = freshNatVar("j"), n = freshNatVar("n"), m = freshNatVar("m");
  Nat I = Nat::var(i), J = Nat::var(j), N = Nat::var(n), M = Nat::var(m);
  // Bounds of j inside i: lo(i) <= j < hi(i).
  std::vector<std::pair<Nat, Nat>> bounds = {
      {Nat(0), N},
      {I, Nat::min(N, I + Nat(8))},
      {Nat::div(I, 4) * Nat(2), Nat::max(M, Nat::mod(I + N, 3)) + Nat(1)},
      {(I + Nat(1)).scale(Rat(1, 2)), N * Nat(3) - I},  // rational coefficients: floor((i + 1) / 2)
  };
  for (const auto &[lo, hi] : bounds) {
    poly::IslContext owner;
    poly::IslParams names(owner.ctx(), {i.id, j.id});
    using D = poly::IslParams::Declared;
    ASSERT_EQ(names.declare(Nat(0)), D::Affine);
    ASSERT_EQ(names.declare(N), D::Affine);
    ASSERT_EQ(names.declare(lo), D::Affine) << lo.str();
    ASSERT_EQ(names.declare(hi), D::Affine) << hi.str();
    poly::IslParams::Domain d = names.domain("S", {i.id, j.id});
    isl::set built = d.set.intersect(names.range(d, i.id, Nat(0), D::Affine, N, D::Affine))
                         .intersect(names.range(d, j.id, lo, D::Affine, hi, D::Affine));
    // The same set as the model writes it, parameters named as their meanings say.
    auto name = [&](const NatAtom &a) -> std::optional<std::string> {
      if (a.var.id == i.id) return std::string("i");
      if (a.var.id == j.id) return std::string("j");
      for (const auto &[p, meaning] : names.meanings())
        if (meaning == Nat::var(a.var)) return p;
      return std::nullopt;
    };
    std::string params;
    for (const auto &[p, meaning] : names.meanings()) params += (params.empty() ? "" : ", ") + p;
    std::string text = "[" + params + "] -> { S[i, j] : 0 <= i < " + *poly::affineIslText(N, name) + " and " +
                       *poly::affineIslText(lo, name) + " <= j < " + *poly::affineIslText(hi, name) + " }";
    EXPECT_TRUE(built.is_equal(isl::set(owner.ctx(), text))) << text << "\nbuilt: " << poly::islText(built);
  }
  // Products of atoms and lookups are not affine; an invariant non-affine bound is one parameter.
  poly::IslContext owner;
  poly::IslParams names(owner.ctx(), {i.id});
  EXPECT_EQ(names.declare(N * M), poly::IslParams::Declared::No);
  EXPECT_EQ(names.declareInvariant(N * M), poly::IslParams::Declared::Opaque);
  EXPECT_EQ(names.declareInvariant(I * N), poly::IslParams::Declared::No);
  EXPECT_TRUE(poly::isAffine(Nat::max(N, I) + Nat::div(M, 3), [](const NatAtom &) { return true; }));
  EXPECT_FALSE(poly::isAffine(N * M, [](const NatAtom &) { return true; }));
}

// ---- hand-built CIN: the rules one at a time -----------------------------------------------------

/// A kernel with nat parameters n, m and tensors a (input), wo (offsets, input), out (output).
struct HandKernel {
  cin::Kernel k;
  NatVarId n = freshNatVar("n"), m = freshNatVar("m");
  cin::TensorP a, wo, out;
  HandKernel() {
    k.name = "hand";
    for (const NatVarId &v : {n, m}) {
      cin::KernelParam p;
      p.abi.role = tir::AbiParam::Nat;
      p.abi.name = v.name;
      p.natVar = v.id;
      k.params.push_back(p);
    }
    a = tensor("a", cin::Tensor::Input);
    wo = tensor("wo", cin::Tensor::Input);
    out = tensor("out", cin::Tensor::Output);
  }
  cin::TensorP tensor(const std::string &name, cin::Tensor::Kind kind) {
    auto t = std::make_shared<cin::Tensor>();
    t->kind = kind;
    t->id = freshNatVar(name).id;
    t->name = name;
    k.tensors.push_back(t);
    return t;
  }
  static int64_t id(const std::string &name) { return freshNatVar(name).id; }
  static Nat var(int64_t id) { return Nat::var(NatVarId{id, "v"}); }
  static Nat value(int64_t id) { return Nat::value(NatVarId{id, "x"}); }
};

cin::ExprP reassocAdd(const cin::ExprP &x, const cin::ExprP &y) {
  auto e = std::make_shared<cin::Expr>(*cin::binary(ast::BinOp::Add, x, y, ScalarKind::F32));
  e->reassoc = true;
  return e;
}

TEST(PolyRules, GuardReadingTheAccumulatorIsNotAReduction) {
  // local acc = 0; forall k in [0, n) reduction { if (acc < 5) acc = acc +~ a[k] }
  HandKernel h;
  int64_t acc = h.id("acc"), k = h.id("k");
  cin::ExprP accE = cin::local(acc, ScalarKind::I64);
  cin::StmtP update = cin::setLocal(acc, reassocAdd(accE, cin::access(h.a, {h.var(k)}, {}, ScalarKind::I64)), ScalarKind::I64);
  cin::ExprP guard = cin::binary(ast::BinOp::Lt, accE, cin::constInt(5), ScalarKind::Bool);
  h.k.body = cin::block({cin::declLocal(acc, "acc", ScalarKind::I64, cin::constInt(0)),
                         cin::forall(k, "k", Nat(0), Nat::var(h.n), cin::ifThen(guard, update), cin::ForallKind::Reduction)});
  Analyzed a = analyze(h.k);
  EXPECT_EQ(verdicts(a), (V{"sequential"})) << poly::emitIsl(h.k);
  EXPECT_EQ(poly::checkLoopKinds(a.model, a.deps).size(), 1u);
  // Without the guard it is a reduction.
  h.k.body = cin::block({cin::declLocal(acc, "acc", ScalarKind::I64, cin::constInt(0)),
                         cin::forall(k, "k", Nat(0), Nat::var(h.n), update, cin::ForallKind::Reduction)});
  EXPECT_EQ(verdicts(analyze(h.k)), (V{"reduction"})) << poly::emitIsl(h.k);
}

TEST(PolyRules, LocalDeclaredOutsideTheLoopIsShared) {
  // local t; forall i in [0, n) parallel { t = a[i]; out[i] = t }: t is one variable for all
  // iterations (a race), while a t declared inside the loop is private to each iteration.
  HandKernel h;
  int64_t t = h.id("t"), i = h.id("i");
  cin::StmtP body = cin::block({cin::setLocal(t, cin::access(h.a, {h.var(i)}, {}, ScalarKind::F32), ScalarKind::F32),
                                cin::assign(cin::access(h.out, {h.var(i)}, {}, ScalarKind::F32), cin::local(t, ScalarKind::F32))});
  h.k.body = cin::block({cin::declLocal(t, "t", ScalarKind::F32, nullptr),
                         cin::forall(i, "i", Nat(0), Nat::var(h.n), body, cin::ForallKind::Parallel)});
  Analyzed shared = analyze(h.k);
  EXPECT_EQ(verdicts(shared), (V{"sequential"})) << poly::emitIsl(h.k);
  ASSERT_EQ(poly::checkLoopKinds(shared.model, shared.deps).size(), 1u);
  cin::StmtP priv = cin::block({cin::declLocal(t, "t", ScalarKind::F32, cin::access(h.a, {h.var(i)}, {}, ScalarKind::F32)),
                                cin::assign(cin::access(h.out, {h.var(i)}, {}, ScalarKind::F32), cin::local(t, ScalarKind::F32))});
  h.k.body = cin::forall(i, "i", Nat(0), Nat::var(h.n), priv, cin::ForallKind::Parallel);
  EXPECT_EQ(verdicts(analyze(h.k)), (V{"parallel"})) << poly::emitIsl(h.k);
}

TEST(PolyRules, SegmentsNeedTheGuardToHoldAtTheWrite) {
  // forall i in [0, n) parallel { local cnt = 0;
  //   if (cnt < wo@(i+1) - wo@i) { forall j in [0, m) { out[wo@i + cnt - wo@0] = 1; cnt = cnt + 1 } } }
  // cnt grows inside the inner loop, so the guard proves nothing about later writes: out is a
  // flat array written at data-dependent places and the row loop is not parallel.
  HandKernel h;
  int64_t i = h.id("i"), j = h.id("j"), cnt = h.id("cnt");
  Nat len = Nat::lookup(NatVarId{h.wo->id, "wo"}, h.var(i) + Nat(1)) - Nat::lookup(NatVarId{h.wo->id, "wo"}, h.var(i));
  Nat at = Nat::lookup(NatVarId{h.wo->id, "wo"}, h.var(i)) + h.value(cnt) - Nat::lookup(NatVarId{h.wo->id, "wo"}, Nat(0));
  cin::ExprP cntE = cin::local(cnt, ScalarKind::I64);
  cin::StmtP write = cin::assign(cin::access(h.out, {at}, {}, ScalarKind::F32), cin::constFloat(1.0, ScalarKind::F32));
  cin::StmtP bump = cin::setLocal(cnt, cin::binary(ast::BinOp::Add, cntE, cin::constInt(1), ScalarKind::I64), ScalarKind::I64);
  cin::ExprP guard = cin::binary(ast::BinOp::Lt, cntE, cin::natExpr(len), ScalarKind::Bool);
  auto rowBody = [&](cin::StmtP inner) {
    return cin::block({cin::declLocal(cnt, "cnt", ScalarKind::I64, cin::constInt(0)), inner});
  };
  h.k.body = cin::forall(i, "i", Nat(0), Nat::var(h.n),
                         rowBody(cin::ifThen(guard, cin::forall(j, "j", Nat(0), Nat::var(h.m), cin::block({write, bump}),
                                                                cin::ForallKind::Serial))),
                         cin::ForallKind::Parallel);
  Analyzed bad = analyze(h.k);
  EXPECT_EQ(verdicts(bad)[0], "sequential") << poly::emitIsl(h.k);
  for (const poly::PolyArray &arr : bad.model.arrays) EXPECT_TRUE(arr.segmentedBy.empty()) << arr.name;
  // With the guard inside the inner loop (re-checked before every write) the segments hold.
  h.k.body = cin::forall(i, "i", Nat(0), Nat::var(h.n),
                         rowBody(cin::forall(j, "j", Nat(0), Nat::var(h.m), cin::ifThen(guard, cin::block({write, bump})),
                                             cin::ForallKind::Serial)),
                         cin::ForallKind::Parallel);
  Analyzed good = analyze(h.k);
  EXPECT_EQ(verdicts(good), (V{"parallel", "sequential"})) << poly::emitIsl(h.k);
}

TEST(PolyRules, PackedColumnsAreSegmentsWhenTheyDoNotOverlap) {
  // forall j in [0, n) parallel { forall i in [0, j + 1 + extra) { out[j*(j+1)/2 + i] = 1 } }:
  // with extra = 0, column j of a packed upper triangle, segments [F(j), F(j) + j + 1) with
  // F(j + 1) - F(j) = j + 1: out is [segment, offset], both loops parallel. With extra = 1
  // each column runs one element into the next (out[F(j) + j + 1] is out[F(j + 1)]): no
  // segments, out's index is not affine (a write anywhere in out), and both loops carry output
  // dependences, as they did for packed columns before the closed form.
  for (int extra : {0, 1}) {
    SCOPED_TRACE("extra " + std::to_string(extra));
    HandKernel h;
    int64_t j = h.id("j"), i = h.id("i");
    const Nat start = (h.var(j) * (h.var(j) + Nat(1))).scale(Rat(1, 2));
    cin::StmtP write = cin::assign(cin::access(h.out, {start + h.var(i)}, {}, ScalarKind::F32),
                                   cin::constFloat(1.0, ScalarKind::F32));
    h.k.body = cin::forall(j, "j", Nat(0), Nat::var(h.n),
                           cin::forall(i, "i", Nat(0), h.var(j) + Nat(1 + extra), write, cin::ForallKind::Serial),
                           cin::ForallKind::Parallel);
    Analyzed a = analyze(h.k);
    bool segmented = false;
    for (const poly::PolyArray &arr : a.model.arrays) segmented = segmented || !arr.segmentedBy.empty();
    EXPECT_EQ(segmented, extra == 0) << poly::emitIsl(h.k);
    EXPECT_EQ(verdicts(a), extra == 0 ? (V{"parallel", "parallel"}) : (V{"sequential", "sequential"})) << poly::emitIsl(h.k);
  }
}

TEST(PolyRules, ClosedSegmentsNeedAStartThatNeverDecreases) {
  // forall j in [0, n) { forall i in [0, 2j - 3) { out[(j-2)^2 + i] = 1 } }: F(j + 1) - F(j) =
  // 2j - 3 = L, but the step is negative at j = 0 and 1 (empty segments there), so that F does
  // not rise over the whole range: not proved segments, and out stays flat.
  HandKernel h;
  int64_t j = h.id("j"), i = h.id("i");
  const Nat start = (h.var(j) - Nat(2)) * (h.var(j) - Nat(2));
  cin::StmtP write = cin::assign(cin::access(h.out, {start + h.var(i)}, {}, ScalarKind::F32),
                                 cin::constFloat(1.0, ScalarKind::F32));
  h.k.body = cin::forall(j, "j", Nat(0), Nat::var(h.n),
                         cin::forall(i, "i", Nat(0), h.var(j) * Nat(2) - Nat(3), write, cin::ForallKind::Serial),
                         cin::ForallKind::Parallel);
  Analyzed a = analyze(h.k);
  for (const poly::PolyArray &arr : a.model.arrays) EXPECT_TRUE(arr.segmentedBy.empty()) << arr.name << poly::emitIsl(h.k);
  EXPECT_EQ(verdicts(a), (V{"sequential", "sequential"})) << poly::emitIsl(h.k);
}

TEST(PolyRules, AffineGuardsAreExactAndNonAffineOnesMakeMayWrites) {
  // forall i in [0, n) parallel { if (i < m) out[i] = a[i] }: exact domain, must-write.
  // forall i in [0, n) parallel { if (a[i] < 0) out[0] = a[i] }: may-write, carried output dep.
  HandKernel h;
  int64_t i = h.id("i");
  cin::ExprP ai = cin::access(h.a, {h.var(i)}, {}, ScalarKind::I64);
  cin::ExprP affine = cin::binary(ast::BinOp::Lt, cin::natExpr(h.var(i)), cin::natExpr(Nat::var(h.m)), ScalarKind::Bool);
  h.k.body = cin::forall(i, "i", Nat(0), Nat::var(h.n),
                         cin::ifThen(affine, cin::assign(cin::access(h.out, {h.var(i)}, {}, ScalarKind::I64), ai)),
                         cin::ForallKind::Parallel);
  Analyzed exact = analyze(h.k);
  EXPECT_EQ(verdicts(exact), (V{"parallel"}));
  ASSERT_EQ(exact.model.statements.size(), 1u);
  EXPECT_TRUE(exact.model.statements[0].exactDomain) << exact.model.statements[0].domain;
  EXPECT_NE(exact.model.statements[0].domain.find("i < m"), std::string::npos) << exact.model.statements[0].domain;
  cin::ExprP loaded = cin::binary(ast::BinOp::Lt, ai, cin::constInt(0), ScalarKind::Bool);
  h.k.body = cin::forall(i, "i", Nat(0), Nat::var(h.n),
                         cin::ifThen(loaded, cin::assign(cin::access(h.out, {Nat(0)}, {}, ScalarKind::I64), ai)),
                         cin::ForallKind::Parallel);
  Analyzed may = analyze(h.k);
  EXPECT_EQ(verdicts(may), (V{"sequential"})) << poly::emitIsl(h.k);
  EXPECT_FALSE(may.model.statements[0].exactDomain);
  for (const poly::PolyAccess &acc : may.model.statements[0].accesses)
    if (acc.write) EXPECT_FALSE(acc.must) << acc.relation;
}

TEST(PolyRules, MustWritesKillButMayWritesDoNot) {
  // out[0] = 1; forall i in [0, n) { if (a[i] < 0) out[0] = 2 }; out[1] = out[0]
  // The read of out[0] depends on the first write too (the guarded ones may not happen).
  HandKernel h;
  int64_t i = h.id("i");
  cin::ExprP ai = cin::access(h.a, {h.var(i)}, {}, ScalarKind::I64);
  cin::ExprP out0 = cin::access(h.out, {Nat(0)}, {}, ScalarKind::I64);
  cin::ExprP loaded = cin::binary(ast::BinOp::Lt, ai, cin::constInt(0), ScalarKind::Bool);
  auto program = [&](cin::StmtP loopBody) {
    return cin::block({cin::assign(out0, cin::constInt(1)),
                       cin::forall(i, "i", Nat(0), Nat::var(h.n), loopBody, cin::ForallKind::Serial),
                       cin::assign(cin::access(h.out, {Nat(1)}, {}, ScalarKind::I64), out0)});
  };
  auto flowFromFirst = [&](const Analyzed &a) {
    for (const poly::PolyDependence &d : a.deps.deps)
      if (d.kind == poly::DepKind::Flow && d.source == 0 && d.sink == 2) return true;
    return false;
  };
  h.k.body = program(cin::ifThen(loaded, cin::assign(out0, cin::constInt(2))));
  EXPECT_TRUE(flowFromFirst(analyze(h.k))) << poly::emitIsl(h.k);
  // Unguarded, the loop's last write kills the first one when n > 0; the dependence remains
  // only for n <= 0.
  h.k.body = program(cin::assign(out0, cin::constInt(2)));
  Analyzed killed = analyze(h.k);
  bool found = false;
  for (const poly::PolyDependence &d : killed.deps.deps)
    if (d.kind == poly::DepKind::Flow && d.source == 0 && d.sink == 2) {
      found = true;
      EXPECT_NE(d.relation.find("n <= 0"), std::string::npos) << d.relation;
    }
  EXPECT_TRUE(found) << poly::emitIsl(h.k);
}

// ---- agreement with the lowering ----------------------------------------------------------------

class ContractAgreement : public ::testing::TestWithParam<const char *> {};

/// Every forall the lowering (and default schedule) runs in parallel must be parallel for isl,
/// and every reduction forall parallel or a reduction; otherwise one of the two is wrong.
TEST_P(ContractAgreement, LoweringKindsHoldUnderIsl) {
  std::string path = std::string(SPL_CONTRACT_DIR "/") + GetParam();
  auto ks = lowerSource(path, readFile(path));
  // spmv_csr_gpu exports for cuda only: its kernels are checked for their reduction loops.
  if (ks.empty()) ks = lowerSource(path, readFile(path), true);
  ASSERT_FALSE(ks.empty());
  int parallel = 0;
  for (const cin::Kernel &k : ks) {
    Analyzed a = analyze(k);
    EXPECT_FALSE(a.deps.quotaExceeded) << k.name;
    for (const std::string &bad : poly::checkLoopKinds(a.model, a.deps)) ADD_FAILURE() << bad << "\n" << report(k);
    for (const poly::PolyLoop &l : a.model.loops) parallel += l.kind == cin::ForallKind::Parallel;
  }
  RecordProperty("parallel_loops", parallel);
}

INSTANTIATE_TEST_SUITE_P(Contract, ContractAgreement,
                         ::testing::Values("bfs.spl", "convert.spl", "dense.spl", "dense2csr.spl", "einsum.spl",
                                           "formats.spl", "spmv_csr.spl", "spmv_csr_gpu.spl", "spmv_deppair.spl",
                                           "spmv_lil.spl", "trmv.spl"),
                         [](const ::testing::TestParamInfo<const char *> &info) {
                           std::string n = info.param;
                           return n.substr(0, n.size() - 4);
                         });

TEST(ContractAgreementE2e, SchedulesHoldUnderIsl) {
  auto ks = lowerSource(SPL_E2E_DIR "/schedules.spl", readFile(SPL_E2E_DIR "/schedules.spl"));
  ASSERT_FALSE(ks.empty());
  for (const cin::Kernel &k : ks) {
    Analyzed a = analyze(k);
    for (const std::string &bad : poly::checkLoopKinds(a.model, a.deps)) ADD_FAILURE() << bad << "\n" << report(k);
  }
}

/// privatize's parts loop (every eighth iteration from the part's index, poly/Privatize.h) is
/// parallel for isl too: the parts' iterations are affine in the part, so their writes of the
/// values private to an iteration and of their own copies do not meet.
TEST(ContractAgreementE2e, PrivatizedPartsHoldUnderIsl) {
  auto ks = lowerSource(SPL_E2E_DIR "/privatize.spl", readFile(SPL_E2E_DIR "/privatize.spl"));
  ASSERT_EQ(ks.size(), 4u);
  int parts = 0;
  for (const cin::Kernel &k : ks) {
    Analyzed a = analyze(k);
    for (const std::string &bad : poly::checkLoopKinds(a.model, a.deps)) ADD_FAILURE() << bad << "\n" << report(k);
    for (const poly::PolyLoop &l : a.model.loops) parts += l.kind == cin::ForallKind::Parallel && l.name.find("_part%") != std::string::npos;
  }
  EXPECT_EQ(parts, 4);
}

/// A deliberately wrong lowering is caught: mark the csc scatter loop parallel.
TEST(ContractAgreementE2e, WrongParallelLoopIsReported) {
  auto ks = lowerSource(SPL_CONTRACT_DIR "/einsum.spl", readFile(SPL_CONTRACT_DIR "/einsum.spl"));
  cin::Kernel k = kernelNamed(ks, "spl_ein_spmv_csc");
  auto body = std::make_shared<cin::Stmt>(*k.body);
  ASSERT_EQ(body->kind, cin::StmtKind::Block);
  ASSERT_GE(body->body.size(), 2u);
  auto loop = std::make_shared<cin::Stmt>(*body->body[1]);
  ASSERT_EQ(loop->kind, cin::StmtKind::Forall);
  loop->forall = cin::ForallKind::Parallel;
  body->body[1] = loop;
  k.body = body;
  Analyzed a = analyze(k);
  std::vector<std::string> bad = poly::checkLoopKinds(a.model, a.deps);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("is parallel in the lowering but sequential for isl"), std::string::npos) << bad[0];
}

// ---- splc --emit=isl -----------------------------------------------------------------------------

TEST(EmitIsl, DriverPrintsModelDependencesAndVerdicts) {
  std::string out = ::testing::TempDir() + "/poly_emit_isl.txt";
  Options opts;
  opts.input = SPL_CONTRACT_DIR "/spmv_csr.spl";
  opts.output = out;
  opts.emit = Emit::Isl;
  opts.emitGiven = true;
  opts.targetCpu = opts.targetsGiven = true;
  std::ostringstream err;
  ASSERT_EQ(runCompiler(opts, err), 0) << err.str();
  std::string text = readFile(out);
  for (const char *needle : {"kernel spl_spmv_csr\n", "parameters [n, m, U_0]", "domain", "schedule", "must-write",
                             "may-write", "dependences", "flow", "loops", "i%", "parallel -- no dependence is carried",
                             "reduction -- only the reassociable accumulator"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  // Deterministic: a second run gives the same text, up to the ids of locals and loop variables
  // (a process-wide counter: they differ between two compilations in one process).
  std::ostringstream err2;
  ASSERT_EQ(runCompiler(opts, err2), 0);
  std::regex ids("([%_])[0-9]+");
  EXPECT_EQ(std::regex_replace(readFile(out), ids, "$1#"), std::regex_replace(text, ids, "$1#"));
}

}  // namespace
}  // namespace spl
