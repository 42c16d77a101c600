// End to end: ../shared/spec/examples/formats.spl (SpMV over ELL row- and column-major, DIA and
// BCSR, written as plain `map` programs) compiled for the CPU, linked, and checked against a
// double-precision reference on the real and random matrices, each converted with the matrix
// library.
#include <sys/mman.h>
#include <unistd.h>

#include <limits>

#include "e2e_support.h"
#include "formats.h"

namespace {

using spl_e2e::kF32Tolerance;

using spl_e2e::padded;

/// Checks y[0 .. a.rows) against A x and y[a.rows .. total) == 0 (padding rows).
void expectSpmv(const spl_csr &a, const std::vector<double> &xd, const std::vector<float> &y, int64_t total,
                const std::string &what) {
  std::vector<double> want(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, xd.data(), want.data());
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance) << what;
  for (int64_t i = a.rows; i < total; ++i) EXPECT_EQ(y[i], 0.0f) << what << ": padding row " << i;
}

class Formats : public ::testing::TestWithParam<size_t> {};

TEST_P(Formats, EllRowMajor) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  spl_ell ell{};
  ASSERT_EQ(spl_csr_to_ell(&a, SPL_ELL_ROW_MAJOR, &ell), SPL_MATRIX_OK);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 11);
  std::vector<float> y(static_cast<size_t>(a.rows) + 1, -777.0f);
  ASSERT_EQ(spl_spmv_ell(a.rows, a.cols, ell.width, ell.vals_f32, ell.cols_idx, x.data(), y.data()), SPL_OK);
  expectSpmv(a, spl_e2e::toDouble(x), y, a.rows, nm.name + " ELL width " + std::to_string(ell.width));

  // The same rows padded to a wider width (value 0, column 0 in the extra slots): w is the
  // stride of the rows, not only the trip count.
  const int64_t w = ell.width + 3;
  std::vector<float> vals;
  std::vector<int32_t> cols;
  spl_e2e::widenEllRows(ell, a.rows, w, vals, cols);
  std::fill(y.begin(), y.end(), -777.0f);
  ASSERT_EQ(spl_spmv_ell(a.rows, a.cols, w, vals.data(), cols.data(), x.data(), y.data()), SPL_OK);
  expectSpmv(a, spl_e2e::toDouble(x), y, a.rows, nm.name + " ELL width " + std::to_string(w));
  spl_ell_free(&ell);
}

TEST_P(Formats, EllColMajor) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  spl_ell ell{};
  ASSERT_EQ(spl_csr_to_ell(&a, SPL_ELL_COL_MAJOR, &ell), SPL_MATRIX_OK);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 12);
  std::vector<float> y(static_cast<size_t>(a.rows) + 1, -777.0f);
  ASSERT_EQ(spl_spmv_ell_colmajor(a.rows, a.cols, ell.width, ell.vals_f32, ell.cols_idx, x.data(), y.data()), SPL_OK);
  expectSpmv(a, spl_e2e::toDouble(x), y, a.rows, nm.name);
  spl_ell_free(&ell);
}

TEST_P(Formats, Dia) {
  // DIA's x has n entries (the program assumes a square matrix): pad to N x N.
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const int64_t n = std::max(nm.m.rows, nm.m.cols);
  spl_csr a = padded(nm.m, n, n);
  spl_dia dia{};
  ASSERT_EQ(spl_csr_to_dia(&a, &dia), SPL_MATRIX_OK);
  std::vector<float> x = spl_e2e::randomVectorF(n, 13);
  std::vector<double> xd = spl_e2e::toDouble(x);

  // Entries of a diagonal that fall outside the matrix must be ignored whatever they hold.
  for (const float garbage : {std::numeric_limits<float>::quiet_NaN(), 1e30f, -std::numeric_limits<float>::infinity()}) {
    std::vector<float> data(dia.data_f32, dia.data_f32 + dia.ndiags * n);
    data.push_back(0.0f);
    for (int64_t k = 0; k < dia.ndiags; ++k)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t j = i + dia.offsets[k];
        if (j < 0 || j >= n) data[k * n + i] = garbage;
      }
    std::vector<float> y(static_cast<size_t>(n) + 1, -777.0f);
    ASSERT_EQ(spl_spmv_dia(n, dia.ndiags, dia.offsets, data.data(), x.data(), y.data()), SPL_OK);
    expectSpmv(nm.m, xd, y, n, nm.name + " DIA (" + std::to_string(dia.ndiags) + " diagonals), garbage " +
                                   std::to_string(garbage));
  }
  spl_dia_free(&dia);
  spl_csr_free(&a);
}

TEST_P(Formats, Bcsr) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  for (int64_t b : {1, 2, 3, 4}) {
    spl_bcsr bc{};
    ASSERT_EQ(spl_csr_to_bcsr(&nm.m, b, &bc), SPL_MATRIX_OK);
    const int64_t rows = bc.block_rows * b, cols = bc.block_cols * b;
    spl_csr a = padded(nm.m, rows, cols);
    std::vector<float> x = spl_e2e::randomVectorF(cols, 14 + b);
    std::vector<float> y(static_cast<size_t>(rows) + 1, -777.0f);
    ASSERT_EQ(spl_spmv_bcsr(bc.block_rows, bc.block_cols, b, bc.offs, bc.blocks_f32, bc.block_cols_idx, x.data(), y.data()),
              SPL_OK);
    expectSpmv(a, spl_e2e::toDouble(x), y, rows, nm.name + " BCSR b=" + std::to_string(b));
    spl_csr_free(&a);
    spl_bcsr_free(&bc);
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, Formats, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

TEST(Formats, DiaByHand) {
  // 3 x 3, diagonals -1, 0 and 2: data[k][i] = A(i, i + off[k]); slots outside hold garbage.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int32_t offsets[] = {-1, 0, 2};
  const float data[] = {nan, 4.0f, 5.0f,   // A(1,0) = 4, A(2,1) = 5
                        1.0f, 2.0f, 3.0f,  // diagonal
                        6.0f, nan, nan};   // A(0,2) = 6
  const float x[] = {1.0f, 10.0f, 100.0f};
  float y[3] = {-1, -1, -1};
  ASSERT_EQ(spl_spmv_dia(3, 3, offsets, data, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 1.0f + 600.0f);
  EXPECT_FLOAT_EQ(y[1], 4.0f + 20.0f);
  EXPECT_FLOAT_EQ(y[2], 50.0f + 300.0f);
}

TEST(Formats, DiaReadsNoXOutsideTheMatrix) {
  // `if j >= 0 && j < n then a * x@j else 0.0` evaluates only the chosen branch: x@j is never
  // read for j outside [0, n). x sits between inaccessible guard regions larger than any
  // offset, so such a read faults instead of going unnoticed.
  const int64_t n = 4096, page = sysconf(_SC_PAGESIZE);
  const int64_t xBytes = (n * static_cast<int64_t>(sizeof(float)) + page - 1) / page * page;
  const int64_t guard = xBytes + page;
  void *base = mmap(nullptr, static_cast<size_t>(2 * guard + xBytes), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(base, MAP_FAILED);
  char *xPage = static_cast<char *>(base) + guard;
  ASSERT_EQ(mprotect(xPage, static_cast<size_t>(xBytes), PROT_READ | PROT_WRITE), 0);
  float *x = reinterpret_cast<float *>(xPage + xBytes) - n;  // x[n] is the first guarded byte
  std::vector<float> xv = spl_e2e::randomVectorF(n, 19);
  std::copy(xv.begin(), xv.begin() + n, x);

  const int32_t offsets[] = {-(int32_t)n + 1, -1000, -1, 0, 1, 777, (int32_t)n - 1};
  const int64_t d = sizeof offsets / sizeof offsets[0];
  std::vector<float> data = spl_e2e::randomVectorF(d * n, 20);
  std::vector<double> want(static_cast<size_t>(n), 0.0);
  for (int64_t k = 0; k < d; ++k)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = i + offsets[k];
      if (j < 0 || j >= n)
        data[k * n + i] = std::numeric_limits<float>::quiet_NaN();
      else
        want[i] += static_cast<double>(data[k * n + i]) * x[j];
    }
  std::vector<float> y(static_cast<size_t>(n) + 1, -777.0f);
  ASSERT_EQ(spl_spmv_dia(n, d, offsets, data.data(), x, y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), n), kF32Tolerance);
  munmap(base, static_cast<size_t>(2 * guard + xBytes));
}

TEST(Formats, EllByHand) {
  // 2 x 3 with width 2; row 1 has one entry and one padding slot (value 0, column 0).
  const float vals[] = {1.0f, 2.0f, 3.0f, 0.0f};
  const int32_t cols[] = {0, 2, 1, 0};
  const float x[] = {5.0f, 7.0f, 11.0f};
  float y[2] = {-1, -1};
  ASSERT_EQ(spl_spmv_ell(2, 3, 2, vals, cols, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 5.0f + 22.0f);
  EXPECT_FLOAT_EQ(y[1], 21.0f);
  // Column-major: slot k of row i at k * n + i.
  const float valsT[] = {1.0f, 3.0f, 2.0f, 0.0f};
  const int32_t colsT[] = {0, 1, 2, 0};
  float yt[2] = {-1, -1};
  ASSERT_EQ(spl_spmv_ell_colmajor(2, 3, 2, valsT, colsT, x, yt), SPL_OK);
  EXPECT_FLOAT_EQ(yt[0], 27.0f);
  EXPECT_FLOAT_EQ(yt[1], 21.0f);
}

TEST(Formats, BcsrOffsetsNotStartingAtZero) {
  // 2 x 2 blocks of size 2 (a 4 x 4 matrix); block row 0 holds block column 1, block row 1
  // holds block columns 0 and 1. offs starts at 3: block t of the arrays is block offs[I]-3+k.
  const int32_t offs[] = {3, 4, 6};
  const int32_t bcols[] = {1, 0, 1};
  const float blocks[] = {1, 2, 3, 4,  // A(0..1, 2..3)
                          5, 6, 7, 8,  // A(2..3, 0..1)
                          9, 10, 11, 12};
  const float x[] = {1, 10, 100, 1000};
  float y[4] = {-1, -1, -1, -1};
  ASSERT_EQ(spl_spmv_bcsr(2, 2, 2, offs, blocks, bcols, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 100.0f + 2000.0f);
  EXPECT_FLOAT_EQ(y[1], 300.0f + 4000.0f);
  EXPECT_FLOAT_EQ(y[2], 5.0f + 60.0f + 900.0f + 10000.0f);
  EXPECT_FLOAT_EQ(y[3], 7.0f + 80.0f + 1100.0f + 12000.0f);
}

TEST(Formats, ZeroRows) {
  float y[1] = {-1};
  const int32_t offs[] = {0};
  ASSERT_EQ(spl_spmv_ell(0, 5, 3, nullptr, nullptr, nullptr, y), SPL_OK);
  ASSERT_EQ(spl_spmv_ell_colmajor(0, 5, 3, nullptr, nullptr, nullptr, y), SPL_OK);
  ASSERT_EQ(spl_spmv_dia(0, 0, nullptr, nullptr, nullptr, y), SPL_OK);
  ASSERT_EQ(spl_spmv_bcsr(0, 0, 2, offs, nullptr, nullptr, nullptr, y), SPL_OK);
  EXPECT_EQ(y[0], -1.0f);
}

}  // namespace
