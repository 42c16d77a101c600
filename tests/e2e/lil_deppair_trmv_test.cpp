// End to end: three contract examples whose objects are linked into one program (section 8:
// objects of many .spl files link together):
//   ../shared/spec/examples/spmv_lil.spl     SpMV on LIL (row lengths, rows back to back; the
//                                            row offsets come from the Sigma precomputation);
//   ../shared/spec/examples/spmv_deppair.spl SpMV with the CSR as one dependent pair, and split;
//   ../shared/spec/examples/trmv.spl         lower-triangular matrix-vector product.
// Each is checked against a double-precision reference.
#include "e2e_support.h"
#include "spmv_deppair.h"
#include "spmv_lil.h"
#include "trmv.h"

namespace {

using spl_e2e::kF32Tolerance;

class SpmvLil : public ::testing::TestWithParam<size_t> {};

TEST_P(SpmvLil, MatchesReference) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  spl_lil lil{};
  ASSERT_EQ(spl_csr_to_lil(&a, &lil), SPL_MATRIX_OK);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 51);
  std::vector<double> xd = spl_e2e::toDouble(x), want(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, xd.data(), want.data());
  std::vector<float> y(static_cast<size_t>(a.rows) + 2, -777.0f);
  ASSERT_EQ(spl_spmv_lil(a.rows, a.cols, lil.lens, lil.cols_idx, lil.vals_f32, x.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance) << nm.name;
  EXPECT_EQ(y[a.rows], -777.0f) << nm.name << ": wrote past n";
  spl_lil_free(&lil);
}

INSTANTIATE_TEST_SUITE_P(Matrices, SpmvLil, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

TEST(SpmvLil, ByHand) {
  // Rows of lengths 2, 0, 3, 1 back to back: row 2 starts at 2, row 3 at 5.
  const int32_t lens[] = {2, 0, 3, 1};
  const int32_t cols[] = {0, 3, 1, 2, 3, 0};
  const float vals[] = {1, 2, 3, 4, 5, 6};
  const float x[] = {1, 10, 100, 1000};
  float y[4] = {-1, -1, -1, -1};
  ASSERT_EQ(spl_spmv_lil(4, 4, lens, cols, vals, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 2001.0f);
  EXPECT_FLOAT_EQ(y[1], 0.0f);
  EXPECT_FLOAT_EQ(y[2], 30.0f + 400.0f + 5000.0f);
  EXPECT_FLOAT_EQ(y[3], 6.0f);
  float y0[1] = {-1};
  ASSERT_EQ(spl_spmv_lil(0, 4, lens, cols, vals, x, y0), SPL_OK);
  EXPECT_EQ(y0[0], -1.0f);
}

class SpmvDepPair : public ::testing::TestWithParam<size_t> {};

TEST_P(SpmvDepPair, MatchesReference) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  spl_csr_f32 af{};
  ASSERT_EQ(spl_csr_to_f32(&a, &af), SPL_MATRIX_OK);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 52);
  std::vector<double> xd = spl_e2e::toDouble(x), want(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, xd.data(), want.data());

  std::vector<float> y(static_cast<size_t>(a.rows) + 2, -777.0f);
  ASSERT_EQ(spl_spmv_deppair(a.rows, a.cols, af.offs, af.vals, af.cols_idx, x.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance) << nm.name << " deppair";
  EXPECT_EQ(y[a.rows], -777.0f) << nm.name << ": wrote past n";

  std::vector<float> ys(static_cast<size_t>(a.rows) + 2, -777.0f);
  ASSERT_EQ(spl_spmv_split(a.rows, a.cols, af.offs, af.vals, af.cols_idx, x.data(), ys.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(ys.data(), want.data(), a.rows), kF32Tolerance) << nm.name << " split";
  EXPECT_EQ(ys[a.rows], -777.0f) << nm.name << ": wrote past n";
  spl_csr_f32_free(&af);
}

INSTANTIATE_TEST_SUITE_P(Matrices, SpmvDepPair, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

TEST(SpmvDepPair, OffsetsNotStartingAtZero) {
  const int32_t offs[] = {5, 7, 7, 8};
  const int32_t cols[] = {0, 2, 1};
  const float vals[] = {1.0f, 2.0f, 3.0f};
  const float x[] = {10.0f, 20.0f, 30.0f};
  float y[3] = {-1, -1, -1}, ys[3] = {-1, -1, -1};
  ASSERT_EQ(spl_spmv_deppair(3, 3, offs, vals, cols, x, y), SPL_OK);
  ASSERT_EQ(spl_spmv_split(3, 3, offs, vals, cols, x, ys), SPL_OK);
  const float want[] = {70.0f, 0.0f, 60.0f};
  for (int i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(y[i], want[i]) << i;
    EXPECT_FLOAT_EQ(ys[i], want[i]) << i;
  }
}

class Trmv : public ::testing::TestWithParam<int64_t> {};

TEST_P(Trmv, MatchesReference) {
  // The lower triangle of a random dense n x n matrix, row i's i+1 entries stored back to back
  // (row i starts at i*(i+1)/2).
  const int64_t n = GetParam();
  const int64_t size = n * (n + 1) / 2;
  std::vector<float> dense = spl_e2e::randomVectorF(n * n, 61), v = spl_e2e::randomVectorF(n, 62);
  std::vector<float> l(static_cast<size_t>(size) + 1, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) l[i * (i + 1) / 2 + j] = dense[i * n + j];
  std::vector<double> want(static_cast<size_t>(n) + 1, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) want[i] += static_cast<double>(dense[i * n + j]) * v[j];
  std::vector<float> y(static_cast<size_t>(n) + 2, -777.0f);
  ASSERT_EQ(spl_trmv(n, l.data(), v.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), n), kF32Tolerance) << "n = " << n;
  EXPECT_EQ(y[n], -777.0f) << "wrote past n";
}

INSTANTIATE_TEST_SUITE_P(Sizes, Trmv, ::testing::Values<int64_t>(0, 1, 2, 17, 300));

TEST(Trmv, ByHand) {
  // [1 0 0; 2 3 0; 4 5 6] * [1, 10, 100]
  const float l[] = {1, 2, 3, 4, 5, 6};
  const float v[] = {1, 10, 100};
  float y[3] = {-1, -1, -1};
  ASSERT_EQ(spl_trmv(3, l, v, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], 32.0f);
  EXPECT_FLOAT_EQ(y[2], 654.0f);
}

}  // namespace
