// End to end: a plan per matrix and width of C = A B (issue 25 item 4; runtime spl_spmm_plan_*,
// docs/plans.md) over stdlib/spmm.spl's kernels: the CSR kernel of any width, the CSR kernels of
// fixed width and the BCSR kernels of 2 x 2 and 3 x 3 blocks. Whatever kernel the plan chooses,
// or is forced to take (SPL_PLAN_KERNEL), C matches the double-precision reference (one SpMV a
// column of B) on the real and random matrices (empty rows, skewed rows, 1 x N, N x 1, nnz = 0),
// at widths with kernels of their own and without (panels of the others' widths), in f64 and
// f32, and nothing is written past C's n * k entries. A width without kernels runs the caller's
// kernel or panels and says so; dense blocks
// make the plan count its blocks and try BCSR; bad input is refused. The same through the entry
// points splc generates for a user's SpMM with plan() (plan_user.spl).
#include <cmath>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "plan_support.h"
#include "plan_user.h"
#include "spl_runtime.h"
#include "spmm.h"

namespace {

using spl_e2e::kF32Tolerance;
using spl_e2e::kF64Tolerance;
using spl_plan_test::Csr32;
using spl_plan_test::ForcedKernel;

/// stdlib's kernels (spl_runtime.h's SPL_SPMM_STDLIB_KERNELS: widths 1-8, 10, 12, 16, 24, 32, 64).
spl_spmm_kernels_f64 kernelsF64() { return SPL_SPMM_STDLIB_KERNELS(f64); }
spl_spmm_kernels_f32 kernelsF32() { return SPL_SPMM_STDLIB_KERNELS(f32); }

bool hasWidth(int64_t k) { return (k >= 1 && k <= 8) || k == 10 || k == 12 || k == 16 || k == 24 || k == 32 || k == 64; }

/// The reference C = A B (n x k, row-major) in double precision, a column at a time.
std::vector<double> referenceProduct(const spl_csr &a, const std::vector<double> &B, int64_t k) {
  std::vector<double> C(static_cast<size_t>(a.rows * k)), x(static_cast<size_t>(a.cols) + 1), y(static_cast<size_t>(a.rows) + 1);
  for (int64_t l = 0; l < k; ++l) {
    for (int64_t j = 0; j < a.cols; ++j) x[static_cast<size_t>(j)] = B[static_cast<size_t>(j * k + l)];
    spl_ref_spmv(&a, x.data(), y.data());
    for (int64_t i = 0; i < a.rows; ++i) C[static_cast<size_t>(i * k + l)] = y[static_cast<size_t>(i)];
  }
  return C;
}

/// The largest relative error of a column of C against the reference's.
template <typename T>
double columnError(const std::vector<T> &C, const std::vector<double> &want, int64_t n, int64_t k) {
  double worst = 0;
  std::vector<double> got(static_cast<size_t>(n) + 1), ref(static_cast<size_t>(n) + 1);
  for (int64_t l = 0; l < k; ++l) {
    for (int64_t i = 0; i < n; ++i) {
      got[static_cast<size_t>(i)] = static_cast<double>(C[static_cast<size_t>(i * k + l)]);
      ref[static_cast<size_t>(i)] = want[static_cast<size_t>(i * k + l)];
    }
    worst = std::max(worst, spl_rel_error_f64(got.data(), ref.data(), n));
  }
  return worst;
}

/// Plans C = A B of width k in one precision and checks two runs against the reference; the
/// plan's kernel.
template <typename T, typename Kernels, typename Plan, typename Run>
std::string planAndCheck(const spl_csr &a, const Csr32 &c, const std::vector<T> &vals, int64_t k, int64_t calls,
                         const Kernels &kernels, Plan plan, Run run, double tolerance) {
  std::vector<T> B(static_cast<size_t>(a.cols * k) + 1);
  for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<T>(std::sin(0.37 * static_cast<double>(i)) + 0.5);
  const std::vector<double> want = referenceProduct(a, std::vector<double>(B.begin(), B.end()), k);
  spl_plan *p = nullptr;
  EXPECT_EQ(plan(a.rows, a.cols, k, c.offs.data(), c.cols.data(), vals.data(), calls, &kernels, &p), SPL_OK);
  if (!p) return "";
  const std::string why = spl_plan_explain(p);
  for (int round = 0; round < 2; ++round) {
    std::vector<T> C(static_cast<size_t>(a.rows * k) + 1, T(-555));
    EXPECT_EQ(run(p, B.data(), C.data()), SPL_OK);
    EXPECT_LT(columnError(C, want, a.rows, k), tolerance) << why;
    EXPECT_EQ(C.back(), T(-555)) << why;  // nothing written past C's n * k entries
  }
  const std::string kernel = spl_plan_kernel(p);
  EXPECT_NE(why.find(kernel == "bcsr"         ? "chose BCSR"
                     : kernel == "csr-w"      ? "chose CSR of width"
                     : kernel == "csr-panels" ? "chose CSR in panels"
                                              : "chose CSR of any width"),
            std::string::npos)
      << why;
  if (kernel == "bcsr") EXPECT_GT(spl_plan_bytes(p), 0) << why;
  else EXPECT_EQ(spl_plan_bytes(p), 0) << why;  // panels run in place
  // A width without kernels of its own: panels of the others' widths were timed, or not wanted.
  if (!hasWidth(k) && k > 0 && a.rows > 0 && a.nnz > 0)
    EXPECT_TRUE(why.find("CSR in panels of B's and C's columns") != std::string::npos ||
                why.find("no kernels of width " + std::to_string(k) + " were given") != std::string::npos)
        << why;
  if (k == 0) EXPECT_NE(why.find("nothing to compute"), std::string::npos) << why;
  T dummy{};
  EXPECT_EQ(spl_spmv_run_f64(p, nullptr, nullptr), SPL_ERR_BAD_INPUT);  // an SpMM plan
  EXPECT_EQ(spl_spmv_run_f32(p, nullptr, nullptr), SPL_ERR_BAD_INPUT);
  (void)dummy;
  spl_plan_free(p);
  return kernel;
}

class SpmmPlan : public ::testing::TestWithParam<size_t> {};

// Each width (with kernels of its own or not), each kernel forced and none, both precisions.
TEST_P(SpmmPlan, EveryKernelComputesAB) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  const Csr32 c = spl_plan_test::narrow(a);
  const spl_spmm_kernels_f64 k64 = kernelsF64();
  const spl_spmm_kernels_f32 k32 = kernelsF32();
  for (const char *forced : {"", "csr", "csr-w", "csr-panels", "bcsr", "bcsr2", "bcsr3"}) {
    ForcedKernel force(forced);
    for (int64_t k : {0, 1, 2, 3, 8, 9, 11, 16, 24, 100}) {
      SCOPED_TRACE(nm.name + ", k = " + std::to_string(k) + ", SPL_PLAN_KERNEL=" + forced);
      const std::string chosen =
          planAndCheck(a, c, c.vals, k, 1000000, k64, spl_spmm_plan_f64, spl_spmm_run_f64, kF64Tolerance);
      const std::string chosen32 =
          planAndCheck(a, c, c.vals32, k, 1000000, k32, spl_spmm_plan_f32, spl_spmm_run_f32, kF32Tolerance);
      const std::string name(forced);
      const bool computes = a.nnz > 0 && hasWidth(k);
      // Without kernels of width k, panels of narrower widths: 9 = 8 + 1, 11 = 10 + 1, 100 = 64 + 32 + 4.
      const bool panels = a.nnz > 0 && a.rows > 0 && k > 0 && !hasWidth(k);
      if (name == "csr" || (!computes && !panels) || (panels && name != "" && name != "csr-panels")) EXPECT_EQ(chosen, "csr");
      if (panels && name.empty()) EXPECT_TRUE(chosen == "csr" || chosen == "csr-panels") << chosen;
      if (name == "csr-panels") EXPECT_EQ(chosen, panels ? "csr-panels" : "csr");
      if (name == "csr-w" && computes) EXPECT_EQ(chosen, "csr-w");
      // BCSR fits any matrix of entries and at least a block's rows (2 x 2 up to width 16, 3 x 3 up to 8).
      const bool bcsr3 = k <= 8 && a.rows >= 3, bcsr2 = k <= 16 && a.rows >= 2;
      if (computes && (((name == "bcsr2" || name == "bcsr") && bcsr2) || (name == "bcsr3" && bcsr3))) EXPECT_EQ(chosen, "bcsr");
      if (!name.empty()) EXPECT_EQ(chosen32, chosen);  // forced: the same in either precision
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, SpmmPlan, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices), spl_e2e::matrixParamName);

// The same through the entry points splc generates for a user's SpMM with plan() (plan_user.spl:
// csr64 in f64; B before the matrix and the factors the other way round in f32): the generated
// table holds stdlib spmm's kernels of the same widths as kernelsF64().
class GeneratedSpmmPlan : public ::testing::TestWithParam<size_t> {};

TEST_P(GeneratedSpmmPlan, EveryKernelComputesAB) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  const Csr32 c = spl_plan_test::narrow(a);
  const spl_spmm_kernels_f64 unused64{};
  const spl_spmm_kernels_f32 unused32{};
  auto plan64 = [](int64_t n, int64_t m, int64_t k, const int32_t *offs, const int32_t *cols, const double *vals, int64_t calls,
                   const spl_spmm_kernels_f64 *, spl_plan **p) { return plan_spmm_f64_plan(n, m, k, offs, vals, cols, calls, p); };
  auto plan32 = [](int64_t n, int64_t m, int64_t k, const int32_t *offs, const int32_t *cols, const float *vals, int64_t calls,
                   const spl_spmm_kernels_f32 *, spl_plan **p) { return plan_spmm_f32_plan(n, m, k, offs, vals, cols, calls, p); };
  for (const char *forced : {"", "csr", "csr-w", "csr-panels", "bcsr", "bcsr3"}) {
    ForcedKernel force(forced);
    for (int64_t k : {1, 3, 9, 16, 100}) {
      SCOPED_TRACE(nm.name + ", generated, k = " + std::to_string(k) + ", SPL_PLAN_KERNEL=" + forced);
      const std::string chosen = planAndCheck(a, c, c.vals, k, 1000000, unused64, plan64, plan_spmm_f64_run, kF64Tolerance);
      const std::string chosen32 = planAndCheck(a, c, c.vals32, k, 1000000, unused32, plan32, plan_spmm_f32_run, kF32Tolerance);
      const std::string name(forced);
      if (name.empty()) continue;
      // Forced, the generated table runs what the runtime's would (kernelsF64()).
      const spl_spmm_kernels_f64 k64 = kernelsF64();
      spl_plan *p = nullptr;
      ASSERT_EQ(spl_spmm_plan_f64(a.rows, a.cols, k, c.offs.data(), c.cols.data(), c.vals.data(), 1, &k64, &p), SPL_OK);
      EXPECT_EQ(chosen, spl_plan_kernel(p));
      EXPECT_EQ(chosen32, chosen);
      spl_plan_free(p);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, GeneratedSpmmPlan, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

// Dense 3 x 3 blocks: the plan counts them and tries BCSR when the calls repay it (the CSR
// kernel of the width first, which needs no conversion), and declines the conversion for few
// calls. Scattered entries: not even tried.
TEST(SpmmPlanChoice, DenseBlocksTryBcsr) {
  spl_csr m = spl_plan_test::denseBlocks(20000);
  const Csr32 c = spl_plan_test::narrow(m);
  const spl_spmm_kernels_f64 k64 = kernelsF64();
  spl_plan *p = nullptr;
  ASSERT_EQ(spl_spmm_plan_f64(m.rows, m.cols, 4, c.offs.data(), c.cols.data(), c.vals.data(), 1000000, &k64, &p), SPL_OK);
  std::string why = spl_plan_explain(p);
  EXPECT_NE(why.find("CSR of width 4 (a row's sums in registers):"), std::string::npos) << why;
  EXPECT_NE(why.find("3 x 3: 1.00 values an entry"), std::string::npos) << why;
  EXPECT_TRUE(spl_plan_test::triedWithinBudget(why, "BCSR", "BCSR (3 x 3 blocks, 1.00 values an entry): converted in")) << why;
  spl_plan_free(p);
  ASSERT_EQ(spl_spmm_plan_f64(m.rows, m.cols, 4, c.offs.data(), c.cols.data(), c.vals.data(), 0, &k64, &p), SPL_OK);
  why = spl_plan_explain(p);
  EXPECT_NE(why.find("0 expected calls would not repay a conversion to BCSR"), std::string::npos) << why;
  EXPECT_NE(std::string(spl_plan_kernel(p)), "bcsr") << why;
  spl_plan_free(p);
  planAndCheck(m, c, c.vals, 4, 1000000, k64, spl_spmm_plan_f64, spl_spmm_run_f64, kF64Tolerance);
  planAndCheck(m, c, c.vals32, 8, 1000000, kernelsF32(), spl_spmm_plan_f32, spl_spmm_run_f32, kF32Tolerance);
  spl_csr_free(&m);

  spl_csr r{};
  ASSERT_EQ(spl_random_csr(20000, 20000, 0.0005, 5, SPL_RANDOM_UNIFORM, &r), SPL_MATRIX_OK);
  const Csr32 rc = spl_plan_test::narrow(r);
  ASSERT_EQ(spl_spmm_plan_f64(r.rows, r.cols, 2, rc.offs.data(), rc.cols.data(), rc.vals.data(), 1000000, &k64, &p), SPL_OK);
  why = spl_plan_explain(p);
  EXPECT_NE(why.find("BCSR not tried: blocks (counted in"), std::string::npos) << why;
  EXPECT_NE(std::string(spl_plan_kernel(p)), "bcsr") << why;
  spl_plan_free(p);
  spl_csr_free(&r);
}

// A width without kernels of its own (k = 9, 13): panels in place are tried over long rows
// (stdlib's widths 8 + 1 and 12 + 1), not over short ones, and C matches the reference
// whichever runs.
TEST(SpmmPlanChoice, PanelsOnlyOverLongRows) {
  const spl_spmm_kernels_f64 k64 = kernelsF64();
  spl_csr longRows{}, shortRows{};
  ASSERT_EQ(spl_random_csr(600, 500, 0.2, 7, SPL_RANDOM_UNIFORM, &longRows), SPL_MATRIX_OK);  // 100 entries a row
  ASSERT_EQ(spl_random_csr(6000, 6000, 0.0005, 7, SPL_RANDOM_UNIFORM, &shortRows), SPL_MATRIX_OK);  // 3 a row
  const Csr32 lc = spl_plan_test::narrow(longRows), sc = spl_plan_test::narrow(shortRows);
  for (int64_t k : {9, 13}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    spl_plan *p = nullptr;
    ASSERT_EQ(spl_spmm_plan_f64(longRows.rows, longRows.cols, k, lc.offs.data(), lc.cols.data(), lc.vals.data(), 1000, &k64, &p),
              SPL_OK);
    std::string why = spl_plan_explain(p);
    EXPECT_NE(why.find(std::string("CSR in panels of B's and C's columns ") + (k == 9 ? "8 + 1" : "12 + 1") + " wide"),
              std::string::npos)
        << why;
    spl_plan_free(p);
    ASSERT_EQ(spl_spmm_plan_f64(shortRows.rows, shortRows.cols, k, sc.offs.data(), sc.cols.data(), sc.vals.data(), 1000, &k64, &p),
              SPL_OK);
    why = spl_plan_explain(p);
    EXPECT_NE(why.find("panels of narrower widths were not tried (rows of "), std::string::npos) << why;
    EXPECT_EQ(std::string(spl_plan_kernel(p)), "csr") << why;
    spl_plan_free(p);
    planAndCheck(longRows, lc, lc.vals, k, 1000, k64, spl_spmm_plan_f64, spl_spmm_run_f64, kF64Tolerance);
    planAndCheck(longRows, lc, lc.vals32, k, 1000, kernelsF32(), spl_spmm_plan_f32, spl_spmm_run_f32, kF32Tolerance);
  }
  spl_csr_free(&longRows);
  spl_csr_free(&shortRows);
}

TEST(SpmmPlanChoice, RefusesBadInput) {
  const spl_csr &a = spl_e2e::testMatrices()[0].m;
  const Csr32 c = spl_plan_test::narrow(a);
  spl_spmm_kernels_f64 k = kernelsF64();
  spl_plan *p = reinterpret_cast<spl_plan *>(&k);
  auto plan = [&](int64_t kk, const spl_spmm_kernels_f64 *kernels) {
    return spl_spmm_plan_f64(a.rows, a.cols, kk, c.offs.data(), c.cols.data(), c.vals.data(), 1, kernels, &p);
  };
  EXPECT_EQ(plan(4, nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(p, nullptr);  // cleared on failure
  EXPECT_EQ(plan(-1, &k), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(plan(INT64_MAX / 2, &k), SPL_ERR_BAD_INPUT);  // n x k entries of C would not fit in 64 bits
  spl_spmm_kernels_f64 bad = k;
  bad.csr = nullptr;
  EXPECT_EQ(plan(4, &bad), SPL_ERR_BAD_INPUT);
  bad = k;
  bad.widths[5].width = -2;
  EXPECT_EQ(plan(4, &bad), SPL_ERR_BAD_INPUT);
  bad = k;
  bad.widths[0].bcsr[0].block = 65;
  EXPECT_EQ(plan(4, &bad), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_spmm_plan_f64(a.rows, a.cols, 4, nullptr, c.cols.data(), c.vals.data(), 1, &k, &p), SPL_ERR_BAD_INPUT);
  std::vector<int32_t> decreasing = c.offs;
  decreasing[1] = decreasing[2] + 1;
  EXPECT_EQ(spl_spmm_plan_f64(a.rows, a.cols, 4, decreasing.data(), c.cols.data(), c.vals.data(), 1, &k, &p),
            SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_spmm_plan_f64(a.rows, a.cols, 4, c.offs.data(), c.cols.data(), c.vals.data(), 1, &k, nullptr),
            SPL_ERR_BAD_INPUT);

  // A plan runs its own product in its own precision.
  ASSERT_EQ(plan(4, &k), SPL_OK);
  std::vector<float> B32(static_cast<size_t>(a.cols * 4)), C32(static_cast<size_t>(a.rows * 4));
  EXPECT_EQ(spl_spmm_run_f32(p, B32.data(), C32.data()), SPL_ERR_BAD_INPUT);
  std::vector<double> B(static_cast<size_t>(a.cols * 4)), C(static_cast<size_t>(a.rows * 4));
  EXPECT_EQ(spl_spmm_run_f64(p, nullptr, C.data()), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_spmm_run_f64(p, B.data(), nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_spmm_run_f64(p, B.data(), C.data()), SPL_OK);
  EXPECT_EQ(spl_spmm_run_f64(nullptr, B.data(), C.data()), SPL_ERR_BAD_INPUT);
  spl_plan_free(p);
  spl_spmv_kernels_f64 spmv{};
  spmv.csr = [](int64_t, int64_t, const int32_t *, const int32_t *, const double *, const double *, double *) { return 0; };
  ASSERT_EQ(spl_spmv_plan_f64(a.rows, a.cols, c.offs.data(), c.cols.data(), c.vals.data(), 1, &spmv, &p), SPL_OK);
  EXPECT_EQ(spl_spmm_run_f64(p, B.data(), C.data()), SPL_ERR_BAD_INPUT);  // an SpMV plan
  spl_plan_free(p);
}

}  // namespace
