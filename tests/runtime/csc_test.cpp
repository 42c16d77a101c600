// csc_test.cpp: spl_csc_convert_* (a transposed plan's conversion, issue 25) against tools/matrix's
// spl_csr_transpose (its reference): the column offsets, each column's rows in increasing order
// and their values, on random matrices of every shape (empty rows, skewed rows, 1 x N, N x 1,
// nnz = 0, dense, rectangular), with offsets that do not start at 0, on 1, 2, 4 and 16 threads
// (parts capped at 8); duplicates kept in row order; bad input (a column outside [0, m)).
#include "spl_runtime.h"
#include "spl_matrix.h"
#include "csr_shapes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using spl_test::Csr32;
using spl_test::narrow;

class Csc : public ::testing::Test {
 protected:
  void TearDown() override { spl_set_num_threads(0); }
};

void expectTranspose(const spl_csr &m, int32_t base) {
  const Csr32 c = narrow(m, base);
  spl_csr t{};
  ASSERT_EQ(spl_csr_transpose(&m, &t), SPL_MATRIX_OK);
  spl_csc_operands a, b;
  ASSERT_EQ(spl_csc_convert_f64(c.rows, c.columns, c.offs.data(), c.cols.data(), c.vals.data(), &a), SPL_OK);
  ASSERT_EQ(spl_csc_convert_f32(c.rows, c.columns, c.offs.data(), c.cols.data(), c.vals32.data(), &b), SPL_OK);
  EXPECT_EQ(a.rows, m.rows);
  EXPECT_EQ(a.cols, m.cols);
  EXPECT_EQ(a.entries, m.nnz);
  EXPECT_EQ(a.bytes, 4 * (m.cols + 1) + 12 * m.nnz);
  EXPECT_EQ(b.bytes, 4 * (m.cols + 1) + 8 * m.nnz);
  for (int64_t j = 0; j <= m.cols; ++j) {
    EXPECT_EQ(a.offs[j], t.offs[j]) << "column " << j;
    EXPECT_EQ(b.offs[j], t.offs[j]) << "column " << j;
  }
  for (int64_t p = 0; p < m.nnz; ++p) {
    EXPECT_EQ(a.rows_idx[p], t.cols_idx[p]) << "entry " << p;
    EXPECT_EQ(static_cast<const double *>(a.vals)[p], t.vals[p]) << "entry " << p;
    EXPECT_EQ(b.rows_idx[p], t.cols_idx[p]) << "entry " << p;
    EXPECT_EQ(static_cast<const float *>(b.vals)[p], static_cast<float>(t.vals[p])) << "entry " << p;
  }
  spl_csc_operands_free(&a);
  spl_csc_operands_free(&b);
  EXPECT_EQ(a.offs, nullptr);
  spl_csr_free(&t);
}

TEST_F(Csc, EveryShapeOnEveryThreadCountMatchesTheReference) {
  std::vector<spl_test::RandomShape> shapes = spl_test::randomShapes();
  shapes.push_back({"none", 0, 10, 0.0, SPL_RANDOM_UNIFORM});
  shapes.push_back({"wide", 30, 3000, 0.1, SPL_RANDOM_UNIFORM});
  shapes.push_back({"many rows", 50000, 700, 0.004, SPL_RANDOM_SKEWED});
  uint64_t seed = 21;
  for (const spl_test::RandomShape &s : shapes) {
    spl_csr m{};
    ASSERT_EQ(spl_random_csr(s.rows, s.cols, s.density, seed++, s.kind, &m), SPL_MATRIX_OK);
    for (int threads : {1, 2, 4, 16}) {
      SCOPED_TRACE(std::string(s.name) + ", " + std::to_string(threads) + " threads");
      spl_set_num_threads(threads);
      expectTranspose(m, 0);
      expectTranspose(m, 7);  // offsets starting at 7
    }
    spl_csr_free(&m);
  }
}

// Duplicate entries stay two entries, in row order within their column.
TEST_F(Csc, DuplicatesStayInRowOrder) {
  const int32_t offs[] = {0, 3, 4, 6};
  const int32_t cols[] = {1, 1, 0, 1, 1, 2};
  const double vals[] = {1, 2, 3, 4, 5, 6};
  spl_csc_operands a;
  ASSERT_EQ(spl_csc_convert_f64(3, 3, offs, cols, vals, &a), SPL_OK);
  const int32_t wantOffs[] = {0, 1, 5, 6}, wantRows[] = {0, 0, 0, 1, 2, 2};
  const double wantVals[] = {3, 1, 2, 4, 5, 6};
  for (int j = 0; j < 4; ++j) EXPECT_EQ(a.offs[j], wantOffs[j]);
  for (int p = 0; p < 6; ++p) {
    EXPECT_EQ(a.rows_idx[p], wantRows[p]);
    EXPECT_EQ(static_cast<const double *>(a.vals)[p], wantVals[p]);
  }
  spl_csc_operands_free(&a);
  spl_csc_operands_free(nullptr);
}

TEST_F(Csc, RejectsBadInputAndLeavesNothing) {
  const int32_t good[] = {0, 1, 2}, decreasing[] = {0, 2, 1}, cols[] = {0, 1}, outside[] = {0, 2}, negative[] = {-1, 0};
  const double vals[] = {1, 2};
  spl_csc_operands a;
  a.entries = 99;
  EXPECT_EQ(spl_csc_convert_f64(2, 2, decreasing, cols, vals, &a), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(a.entries, 0);
  EXPECT_EQ(a.offs, nullptr);
  EXPECT_EQ(spl_csc_convert_f64(2, 2, good, outside, vals, &a), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(a.offs, nullptr);
  EXPECT_EQ(a.rows_idx, nullptr);
  EXPECT_EQ(spl_csc_convert_f64(2, 2, good, negative, vals, &a), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csc_convert_f64(2, 2, good, nullptr, vals, &a), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csc_convert_f64(2, 2, good, cols, nullptr, &a), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csc_convert_f64(2, 2, good, cols, vals, nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csc_convert_f64(-1, 2, good, cols, vals, &a), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csc_convert_f64(2, int64_t{1} << 31, good, cols, vals, &a), SPL_ERR_BAD_INPUT);
  const int32_t none[] = {5, 5, 5};
  ASSERT_EQ(spl_csc_convert_f64(2, 3, none, nullptr, nullptr, &a), SPL_OK);  // no entries: nothing needed
  EXPECT_EQ(a.entries, 0);
  for (int j = 0; j <= 3; ++j) EXPECT_EQ(a.offs[j], 0);
  spl_csc_operands_free(&a);
}

}  // namespace
