// End to end: ../shared/spec/examples/convert.spl (the maximum row length of a CSR, and CSR to
// row-major ELL padded with value 0 / column 0), checked entry by entry against the matrix
// library's ELL conversion on the real and random matrices.
#include <algorithm>
#include <limits>

#include "convert.h"
#include "e2e_support.h"

namespace {

int32_t maxRowLength(const spl_csr_f32 &a) {
  int32_t w = 0;
  for (int64_t i = 0; i < a.rows; ++i) w = std::max(w, a.offs[i + 1] - a.offs[i]);
  return w;
}

/// Runs spl_csr2ell with width w and compares every slot with the library's row-major ELL
/// (whose width is the longest row) padded with value 0 / column 0 up to w.
void checkCsr2Ell(const spl_csr_f32 &af, const spl_ell &ell, int64_t w, const std::string &what) {
  const int64_t n = af.rows;
  std::vector<float> vals(static_cast<size_t>(n * w) + 1, std::numeric_limits<float>::quiet_NaN());
  std::vector<int32_t> cols(static_cast<size_t>(n * w) + 1, -12345);
  ASSERT_EQ(spl_csr2ell(n, af.cols, w, af.offs, af.vals, af.cols_idx, vals.data(), cols.data()), SPL_OK) << what;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < w; ++k) {
      const float wantV = k < ell.width ? ell.vals_f32[i * ell.width + k] : 0.0f;
      const int32_t wantC = k < ell.width ? ell.cols_idx[i * ell.width + k] : 0;
      // Exact: the values are copied, and padding must be 0 (a NaN left unwritten fails).
      if (!(vals[i * w + k] == wantV) || cols[i * w + k] != wantC) {
        if (++bad <= 5)
          ADD_FAILURE() << what << ": slot (" << i << ", " << k << ") is (" << vals[i * w + k] << ", " << cols[i * w + k]
                        << "), want (" << wantV << ", " << wantC << ")";
      }
    }
  EXPECT_EQ(bad, 0) << what << ": mismatching slots";
  EXPECT_TRUE(std::isnan(vals[n * w]) && cols[n * w] == -12345) << what << ": wrote past n * w";
}

class Convert : public ::testing::TestWithParam<size_t> {};

TEST_P(Convert, MaxRowAndCsr2Ell) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  spl_csr_f32 af{};
  ASSERT_EQ(spl_csr_to_f32(&nm.m, &af), SPL_MATRIX_OK);
  spl_ell ell{};
  ASSERT_EQ(spl_csr_to_ell(&nm.m, SPL_ELL_ROW_MAJOR, &ell), SPL_MATRIX_OK);

  int32_t w = -1;
  ASSERT_EQ(spl_csr_max_row(af.rows, af.offs, &w), SPL_OK);
  EXPECT_EQ(w, maxRowLength(af)) << nm.name;
  EXPECT_EQ(w, ell.width) << nm.name;

  checkCsr2Ell(af, ell, ell.width, nm.name + " w = max row");
  checkCsr2Ell(af, ell, ell.width + 1, nm.name + " w = max row + 1");
  checkCsr2Ell(af, ell, ell.width + 7, nm.name + " w = max row + 7");
  spl_ell_free(&ell);
  spl_csr_f32_free(&af);
}

INSTANTIATE_TEST_SUITE_P(Matrices, Convert, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

TEST(Convert, MaxRowEmpty) {
  const int32_t offs0[] = {0};
  int32_t w = -1;
  ASSERT_EQ(spl_csr_max_row(0, offs0, &w), SPL_OK);
  EXPECT_EQ(w, 0) << "n = 0";
  const int32_t offsZ[] = {4, 4, 4, 4};
  w = -1;
  ASSERT_EQ(spl_csr_max_row(3, offsZ, &w), SPL_OK);
  EXPECT_EQ(w, 0) << "nnz = 0";
}

TEST(Convert, MaxRowByHand) {
  // The longest row is the last one; offsets start at 5.
  const int32_t offs[] = {5, 7, 7, 8, 12};
  int32_t w = -1;
  ASSERT_EQ(spl_csr_max_row(4, offs, &w), SPL_OK);
  EXPECT_EQ(w, 4);
  // The longest row is the first one.
  const int32_t offs2[] = {0, 9, 10, 10};
  w = -1;
  ASSERT_EQ(spl_csr_max_row(3, offs2, &w), SPL_OK);
  EXPECT_EQ(w, 9);
}

TEST(Convert, Csr2EllOffsetsNotStartingAtZero) {
  // Rows start at offs@i - offs@0 in the value and column arrays.
  const int32_t offs[] = {5, 7, 7, 8};
  const int32_t cols[] = {0, 2, 1};
  const float vals[] = {1.0f, 2.0f, 3.0f};
  float ov[6];
  int32_t oc[6];
  std::fill(ov, ov + 6, -1.0f);
  std::fill(oc, oc + 6, -1);
  ASSERT_EQ(spl_csr2ell(3, 3, 2, offs, vals, cols, ov, oc), SPL_OK);
  const float wantV[] = {1, 2, 0, 0, 3, 0};
  const int32_t wantC[] = {0, 2, 0, 0, 1, 0};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(ov[k], wantV[k]) << "slot " << k;
    EXPECT_EQ(oc[k], wantC[k]) << "slot " << k;
  }
}

TEST(Convert, Csr2EllZeroRows) {
  const int32_t offs[] = {0};
  float ov[1] = {-1};
  int32_t oc[1] = {-1};
  ASSERT_EQ(spl_csr2ell(0, 4, 3, offs, nullptr, nullptr, ov, oc), SPL_OK);
  EXPECT_EQ(ov[0], -1.0f);
  EXPECT_EQ(oc[0], -1);
}

}  // namespace
