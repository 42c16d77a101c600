// libsplblas's C interface (cblas.h) on what netlib's CBLAS programs (blas/xdcblat*) do not
// reach: larger row-major problems against double-precision references computed here, the real
// results of a complex vector (scasum, dzasum, scnrm2, dznrm2, not tested by xdcblat1), and the
// library's own cblas_xerbla, which must name the caller's argument in a row-major call (the
// Fortran routine saw the transposed call's) and end the program.
#include <gtest/gtest.h>

#include <cblas.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace {

std::vector<double> randomVector(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double &x : v) x = dist(gen);
  return v;
}

// C = alpha op(A) op(B) + beta C in row-major storage with leading dimensions beyond the
// columns: every (transA, transB), against a loop over the row-major elements.
TEST(Cblas, RowMajorGemmMatchesTheDefinition) {
  const int m = 37, n = 53, k = 29, pad = 3;
  const double alpha = 0.75, beta = -0.5;
  for (CBLAS_TRANSPOSE ta : {CblasNoTrans, CblasTrans}) {
    for (CBLAS_TRANSPOSE tb : {CblasNoTrans, CblasTrans}) {
      int arows = ta == CblasNoTrans ? m : k, acols = ta == CblasNoTrans ? k : m;
      int brows = tb == CblasNoTrans ? k : n, bcols = tb == CblasNoTrans ? n : k;
      int lda = acols + pad, ldb = bcols + pad, ldc = n + pad;
      std::vector<double> a = randomVector(size_t(arows) * lda, 1), b = randomVector(size_t(brows) * ldb, 2);
      std::vector<double> c = randomVector(size_t(m) * ldc, 3), expect = c;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double sum = 0;
          for (int p = 0; p < k; ++p) {
            double aip = ta == CblasNoTrans ? a[i * lda + p] : a[p * lda + i];
            double bpj = tb == CblasNoTrans ? b[p * ldb + j] : b[j * ldb + p];
            sum += aip * bpj;
          }
          expect[i * ldc + j] = alpha * sum + beta * c[i * ldc + j];
        }
      cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < ldc; ++j)
          ASSERT_NEAR(c[i * ldc + j], expect[i * ldc + j], 1e-12) << "ta " << ta << " tb " << tb << " at " << i << ", " << j;
    }
  }
}

// y = A x on a row-major A, and a lower triangular solve on the same storage: the row-major
// calls are the column-major routines on A' (trans and uplo flipped).
TEST(Cblas, RowMajorGemvAndTrsvMatchTheDefinition) {
  const int n = 300, lda = 307;
  std::vector<double> a = randomVector(size_t(n) * lda, 4), x = randomVector(n, 5), y(n, 0.0);
  for (int i = 0; i < n; ++i) a[i * lda + i] = 4.0 + std::fabs(a[i * lda + i]);  // well conditioned
  cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, a.data(), lda, x.data(), 1, 0.0, y.data(), 1);
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    for (int j = 0; j < n; ++j) sum += a[i * lda + j] * x[j];
    ASSERT_NEAR(y[i], sum, 1e-12) << i;
  }
  // Solve L z = b with L the row-major lower triangle; check L z against b.
  std::vector<double> b = randomVector(n, 6), z = b;
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, a.data(), lda, z.data(), 1);
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    for (int j = 0; j <= i; ++j) sum += a[i * lda + j] * z[j];
    ASSERT_NEAR(sum, b[i], 1e-10) << i;
  }
}

// A complex vector of n (re, im) pairs, incx pairs apart: asum is sum |re| + |im|, nrm2 the
// Euclidean norm of all 2n parts; both 0 for n <= 0 or incx <= 0.
// The reference: (sum |re| + |im|, sum re^2 + im^2) over n pairs inc pairs apart, in double.
template <typename T> std::pair<double, double> pairSums(const std::vector<T> &z, int n, int inc) {
  double asum = 0, sumsq = 0;
  if (inc > 0)
    for (int i = 0; i < n; ++i)
      for (int part = 0; part < 2; ++part) {
        double v = z[2 * size_t(i) * inc + part];
        asum += std::fabs(v);
        sumsq += v * v;
      }
  return {asum, sumsq};
}

TEST(Cblas, RealResultsOfAComplexVector) {
  for (int n : {0, 1, 7, 1000}) {
    for (int inc : {1, 3, 0, -2}) {
      std::vector<double> z = randomVector(2 * size_t(std::max(n, 1)) * size_t(std::max(inc, 1)) + 2, 7 + n);
      std::vector<float> zf(z.begin(), z.end());
      auto [asum, sumsq] = pairSums(z, n, inc);
      EXPECT_NEAR(cblas_dzasum(n, z.data(), inc), asum, 1e-12 * (1 + asum)) << n << " " << inc;
      EXPECT_NEAR(cblas_dznrm2(n, z.data(), inc), std::sqrt(sumsq), 1e-12 * (1 + sumsq)) << n << " " << inc;
      auto [asumf, sumsqf] = pairSums(zf, n, inc);
      EXPECT_NEAR(cblas_scasum(n, zf.data(), inc), asumf, 1e-5 * (1 + asumf)) << n << " " << inc;
      EXPECT_NEAR(cblas_scnrm2(n, zf.data(), inc), std::sqrt(sumsqf), 1e-5 * (1 + sumsqf)) << n << " " << inc;
    }
  }
}

TEST(Cblas, IamaxCountsFromZero) {
  std::vector<double> x = {1, -5, 3, 5, -2};
  EXPECT_EQ(cblas_idamax(5, x.data(), 1), 1u);
  EXPECT_EQ(cblas_idamax(2, x.data(), 2), 1u);  // x[0], x[2]: |3| at position 1
  EXPECT_EQ(cblas_idamax(0, x.data(), 1), 0u);
}

// The library's own handler: the caller's position, the CBLAS name, the program ends.
using CblasDeathTest = ::testing::Test;
TEST(CblasDeathTest, WrongArgumentsNameTheCallersPosition) {
  double a[4] = {0}, x[2] = {0}, y[2] = {0};
  // Row-major: the Fortran dgemv sees n = -1 as its m (position 2), the caller passed it as M (3).
  EXPECT_EXIT(cblas_dgemv(CblasRowMajor, CblasNoTrans, -1, 2, 1.0, a, 2, x, 1, 0.0, y, 1),
              ::testing::ExitedWithCode(1), "Parameter 3 to routine cblas_dgemv was incorrect");
  EXPECT_EXIT(cblas_dgemv(CblasColMajor, CblasNoTrans, 2, -1, 1.0, a, 2, x, 1, 0.0, y, 1),
              ::testing::ExitedWithCode(1), "Parameter 4 to routine cblas_dgemv was incorrect");
  // A wrong enum is found by the C layer itself.
  EXPECT_EXIT(cblas_dgemm(static_cast<CBLAS_LAYOUT>(7), CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, a, 1, a, 1,
                          0.0, y, 1),
              ::testing::ExitedWithCode(1), "Parameter 1 to routine cblas_dgemm was incorrect");
  EXPECT_EXIT(cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, static_cast<CBLAS_TRANSPOSE>(0), CblasUnit, 1,
                          1, 1.0, a, 1, y, 1),
              ::testing::ExitedWithCode(1), "Parameter 4 to routine cblas_dtrsm was incorrect");
  // Row-major gemm: A and B exchange places in the Fortran call; lda (9) stays the caller's 9.
  EXPECT_EXIT(cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 1, a, 2, 0.0, y, 2),
              ::testing::ExitedWithCode(1), "Parameter 9 to routine cblas_dgemm was incorrect");
}

}  // namespace
