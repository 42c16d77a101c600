// End to end with --checked: kernels validate their inputs against their types (monotone
// offsets, non-negative lengths, idx values below their bound, non-negative nats) and return
// SPL_ERR_BAD_INPUT instead of reading out of bounds; valid inputs still give the right results.
#include "e2e_support.h"
#include "formats.h"
#include "spmv_csr.h"
#include "spmv_lil.h"

namespace {

TEST(Checked, ValidCsrStillComputes) {
  for (size_t k = 0; k < spl_e2e::kNumTestMatrices; ++k) {
    const spl_csr &a = spl_e2e::testMatrices()[k].m;
    spl_csr_f32 af;
    ASSERT_EQ(spl_csr_to_f32(&a, &af), 0);
    std::vector<float> x = spl_e2e::randomVectorF(a.cols, 3), y(static_cast<size_t>(a.rows) + 1);
    std::vector<double> xd = spl_e2e::toDouble(x), want(static_cast<size_t>(a.rows) + 1);
    spl_ref_spmv(&a, xd.data(), want.data());
    ASSERT_EQ(spl_spmv_csr(a.rows, a.cols, af.offs, af.cols_idx, af.vals, x.data(), y.data()), SPL_OK);
    EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), spl_e2e::kF32Tolerance);
    spl_csr_f32_free(&af);
  }
}

TEST(Checked, RejectsBadCsr) {
  const int32_t offs[] = {0, 2, 3};
  const int32_t cols[] = {0, 1, 2};
  const float vals[] = {1, 2, 3}, x[] = {1, 1, 1};
  float y[2] = {-1, -1};
  ASSERT_EQ(spl_spmv_csr(2, 3, offs, cols, vals, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 3.0f);
  const int32_t decreasing[] = {0, 2, 1};
  EXPECT_EQ(spl_spmv_csr(2, 3, decreasing, cols, vals, x, y), SPL_ERR_BAD_INPUT) << "offsets not monotone";
  const int32_t tooBig[] = {0, 1, 3};
  EXPECT_EQ(spl_spmv_csr(2, 3, offs, tooBig, vals, x, y), SPL_ERR_BAD_INPUT) << "column 3 of a 3-column matrix";
  const int32_t negative[] = {0, -1, 2};
  EXPECT_EQ(spl_spmv_csr(2, 3, offs, negative, vals, x, y), SPL_ERR_BAD_INPUT) << "negative column";
  EXPECT_EQ(spl_spmv_csr(-2, 3, offs, cols, vals, x, y), SPL_ERR_BAD_INPUT) << "negative row count";
  EXPECT_EQ(spl_spmv_csr(2, -3, offs, cols, vals, x, y), SPL_ERR_BAD_INPUT) << "negative column count";
  EXPECT_EQ(spl_row_sums(2, decreasing, vals, y), SPL_ERR_BAD_INPUT);
}

TEST(Checked, RejectsBadLilAndEll) {
  const int32_t lens[] = {2, -1};
  const int32_t cols[] = {0, 1, 0};
  const float vals[] = {1, 2, 3}, x[] = {1, 1};
  float y[2];
  EXPECT_EQ(spl_spmv_lil(2, 2, lens, cols, vals, x, y), SPL_ERR_BAD_INPUT) << "negative row length";
  const int32_t okLens[] = {2, 1};
  EXPECT_EQ(spl_spmv_lil(2, 2, okLens, cols, vals, x, y), SPL_OK);
  const float ellVals[] = {1, 0, 2, 0};
  const int32_t ellCols[] = {1, 0, 5, 0};
  EXPECT_EQ(spl_spmv_ell(2, 2, 2, ellVals, ellCols, x, y), SPL_ERR_BAD_INPUT) << "ELL column 5 of 2";
  const int32_t ellOk[] = {1, 0, 0, 0};
  EXPECT_EQ(spl_spmv_ell(2, 2, 2, ellVals, ellOk, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], 2.0f);
}

}  // namespace
