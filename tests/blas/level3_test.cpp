// libsplblas's level 3 through its Fortran entry points, on sizes beyond netlib's xblat3 (which
// stops at 9): seeded random operands up to 120 x 90 (gemm, symm, syrk and syr2k up to 300 x 131
// x 530, across the blocks of gemm's schedule; trmm and trsm on triangles of 1100, by blocks),
// non-square, 1 x N and N x 1, every side, uplo, trans and diag, leading dimensions larger than
// the matrices. References in double on the matrices the arguments mean; every position of C (B)
// outside what the routine may write (past ldc, the other triangle of syrk/syr2k) must come back
// unchanged, A and B of a product unchanged.
#include <array>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>
#include <vector>

#include "buffer_check.h"

#define FORTRAN_BLAS3(P, T)                                                                                       \
  void P##gemm_(const char *, const char *, const int *, const int *, const int *, const T *, const T *,         \
                const int *, const T *, const int *, const T *, T *, const int *, size_t, size_t);               \
  void P##symm_(const char *, const char *, const int *, const int *, const T *, const T *, const int *,         \
                const T *, const int *, const T *, T *, const int *, size_t, size_t);                            \
  void P##syrk_(const char *, const char *, const int *, const int *, const T *, const T *, const int *,         \
                const T *, T *, const int *, size_t, size_t);                                                    \
  void P##syr2k_(const char *, const char *, const int *, const int *, const T *, const T *, const int *,        \
                 const T *, const int *, const T *, T *, const int *, size_t, size_t);                           \
  void P##trmm_(const char *, const char *, const char *, const char *, const int *, const int *, const T *,     \
                const T *, const int *, T *, const int *, size_t, size_t, size_t, size_t);                       \
  void P##trsm_(const char *, const char *, const char *, const char *, const int *, const int *, const T *,     \
                const T *, const int *, T *, const int *, size_t, size_t, size_t, size_t);

extern "C" {
FORTRAN_BLAS3(s, float)
FORTRAN_BLAS3(d, double)
}

namespace {

template <typename T> struct Blas;
template <> struct Blas<float> {
  static constexpr auto gemm = sgemm_, symm = ssymm_, syrk = ssyrk_, syr2k = ssyr2k_, trmm = strmm_, trsm = strsm_;
};
template <> struct Blas<double> {
  static constexpr auto gemm = dgemm_, symm = dsymm_, syrk = dsyrk_, syr2k = dsyr2k_, trmm = dtrmm_, trsm = dtrsm_;
};

// A column-major r x c matrix in a buffer of ld x c elements (ld >= r) and 3 more.
template <typename T> struct Mat {
  int r, c, ld;
  std::vector<T> buf;
  Mat(int r_, int c_, int pad, std::mt19937 &rng, double lo = -1, double hi = 1) : r(r_), c(c_), ld(std::max(1, r_) + pad) {
    std::uniform_real_distribution<double> d(lo, hi);
    buf.resize(size_t(ld) * size_t(c) + 3);
    for (T &v : buf) v = T(d(rng));
  }
  double operator()(int i, int j) const { return double(buf[size_t(i) + size_t(j) * size_t(ld)]); }
  size_t pos(int i, int j) const { return size_t(i) + size_t(j) * size_t(ld); }
};

using blas_check::expectBuffer;
using blas_check::widen;

template <typename T> class Level3 : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Level3, Precisions);

const int kShapes[][3] = {{1, 1, 1}, {1, 33, 5}, {33, 1, 7}, {7, 9, 0}, {40, 25, 31}, {120, 90, 64}};
// gemm's schedule (stdlib/blas3.spl, also symm's, syrk's and syr2k's) blocks C into blocks of
// 256 columns and 256 rows of 16 x 8 register tiles and k into blocks of 256 with 32 vector
// registers (120 rows of 12 x 4 tiles and k by 128 with 16): these shapes cross every kind of
// edge (a partial block, a partial tile in m and in n, a last k block of 18), and the first is
// all full blocks and tiles with 32 registers.
const int kBlockedShapes[][3] = {{256, 64, 512}, {300, 131, 530}};
const double kAlphas[] = {0.0, 1.0, -0.6}, kBetas[] = {0.0, 1.0, 0.8};

// gemm and symm: C := alpha op(A) op(B) + beta C, alpha A B + beta C, alpha B A + beta C.
TYPED_TEST(Level3, ProductsMatchTheReference) {
  using T = TypeParam;
  std::mt19937 rng(2605);
  int calls = 0;
  std::vector<std::array<int, 3>> shapes;
  for (const auto &s : kShapes) shapes.push_back({s[0], s[1], s[2]});
  for (const auto &s : kBlockedShapes) shapes.push_back({s[0], s[1], s[2]});
  for (const auto &s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    for (int routine = 0; routine < 2; ++routine)
      for (char ta : {'N', 'T', 'L', 'R'})
        for (char tb : {'N', 'T', 'U', 'L'}) {
          // gemm: ta, tb are transa, transb; symm: ta is side, tb uplo.
          bool gemm = routine == 0;
          if (gemm != (ta == 'N' || ta == 'T') || gemm != (tb == 'N' || tb == 'T')) continue;
          const double alpha = kAlphas[calls % 3], beta = kBetas[(calls / 3) % 3];
          ++calls;
          const int ka = gemm ? k : (ta == 'L' ? m : n);  // inner dimension
          Mat<T> A = gemm ? (ta == 'N' ? Mat<T>(m, k, 2, rng) : Mat<T>(k, m, 1, rng)) : Mat<T>(ka, ka, 3, rng);
          Mat<T> B = gemm ? (tb == 'N' ? Mat<T>(k, n, 0, rng) : Mat<T>(n, k, 4, rng)) : Mat<T>(m, n, 1, rng);
          Mat<T> C(m, n, 2, rng);
          auto opA = [&](int i, int l) {
            if (gemm) return ta == 'N' ? A(i, l) : A(l, i);
            bool stored = tb == 'U' ? i <= l : i >= l;  // the symmetric A from its uplo triangle
            return stored ? A(i, l) : A(l, i);
          };
          auto opB = [&](int l, int j) { return tb == 'N' ? B(l, j) : B(j, l); };
          std::vector<double> want = widen(C.buf);
          double scale = 1;
          bool quick = m == 0 || n == 0 || ((alpha == 0 || (gemm && k == 0)) && beta == 1);
          for (int i = 0; i < m && !quick; ++i)
            for (int j = 0; j < n; ++j) {
              double acc = 0, mag = 0;
              for (int l = 0; l < ka; ++l) {
                double t = !gemm ? (ta == 'L' ? opA(i, l) * B(l, j) : B(i, l) * opA(l, j)) : opA(i, l) * opB(l, j);
                acc += t, mag += std::fabs(t);
              }
              want[C.pos(i, j)] = alpha * acc + (beta == 0 ? 0 : beta * C(i, j));
              scale = std::max(scale, mag + std::fabs(C(i, j)));
            }
          SCOPED_TRACE(testing::Message() << (gemm ? "gemm " : "symm ") << ta << tb << " m " << m << " n " << n << " k " << k
                                          << " alpha " << alpha << " beta " << beta);
          const T al = T(alpha), be = T(beta);
          std::vector<T> got = C.buf, a0 = A.buf, b0 = B.buf;
          if (gemm)
            Blas<T>::gemm(&ta, &tb, &m, &n, &k, &al, A.buf.data(), &A.ld, B.buf.data(), &B.ld, &be, got.data(), &C.ld, 1, 1);
          else
            Blas<T>::symm(&ta, &tb, &m, &n, &al, A.buf.data(), &A.ld, B.buf.data(), &B.ld, &be, got.data(), &C.ld, 1, 1);
          expectBuffer(got, want, scale, "C");
          ASSERT_EQ(A.buf, a0);
          ASSERT_EQ(B.buf, b0);
        }
  }
  EXPECT_GT(calls, 40);
}

// An element of C gets the same bits whatever the shape of the call that computes it: gemm as
// one m x n call, as m calls of one row and as n calls of one column; syrk and syr2k on n
// columns and on each leading 1 .. n - 1 (full and partial register tiles: dsyrk T's 4 x 12
// tiles on AVX2, whose full tiles LLVM had vectorised along k, differed at 36 of 42 leading
// sizes; the leading n - 5 alone had passed by chance with the 8 x 16 tiles before). LAPACK relies on it: its generalized eigenvalue drivers
// compare the eigenvalues computed with and without the eigenvectors bit for bit (DGV result 5,
// dgd.in), and the two runs update blocks of different shapes. gemm TN's tiles of dot products
// along k had summed a full tile's elements in vector lanes and the last rows' and columns' in k
// order: 20 of dgd.in's 1092 checks failed on an AVX2 CPU; f32 TN's gemm tiles on the row-major
// A differed too (37 x 23 x 300).
TYPED_TEST(Level3, AnElementDoesNotDependOnTheShapeOfTheCall) {
  using T = TypeParam;
  std::mt19937 rng(2612);
  const int shapes[][3] = {{6, 6, 6}, {13, 11, 9}, {37, 23, 300}};
  const T alpha = T(0.7), beta = T(-1.3), zero = T(0);
  const int one = 1;
  for (const auto &s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'}) {
        SCOPED_TRACE(testing::Message() << "gemm " << ta << tb << " m " << m << " n " << n << " k " << k);
        Mat<T> A = ta == 'N' ? Mat<T>(m, k, 1, rng) : Mat<T>(k, m, 2, rng);
        Mat<T> B = tb == 'N' ? Mat<T>(k, n, 3, rng) : Mat<T>(n, k, 0, rng);
        Mat<T> C(m, n, 1, rng);
        for (const T *b : {&beta, &zero}) {
          std::vector<T> whole = C.buf, byRow = C.buf, byColumn = C.buf;
          Blas<T>::gemm(&ta, &tb, &m, &n, &k, &alpha, A.buf.data(), &A.ld, B.buf.data(), &B.ld, b, whole.data(), &C.ld, 1, 1);
          for (int i = 0; i < m; ++i)
            Blas<T>::gemm(&ta, &tb, &one, &n, &k, &alpha, A.buf.data() + (ta == 'N' ? A.pos(i, 0) : A.pos(0, i)), &A.ld,
                          B.buf.data(), &B.ld, b, byRow.data() + C.pos(i, 0), &C.ld, 1, 1);
          for (int j = 0; j < n; ++j)
            Blas<T>::gemm(&ta, &tb, &m, &one, &k, &alpha, A.buf.data(), &A.ld,
                          B.buf.data() + (tb == 'N' ? B.pos(0, j) : B.pos(j, 0)), &B.ld, b, byColumn.data() + C.pos(0, j),
                          &C.ld, 1, 1);
          ASSERT_EQ(byRow, whole) << "one row a call, beta " << *b;
          ASSERT_EQ(byColumn, whole) << "one column a call, beta " << *b;
        }
      }
    // syrk and syr2k: C's leading columns from the leading rows (N) or columns (T).
    for (int lead = 1; lead < n; ++lead)
      for (char uplo : {'U', 'L'})
        for (char trans : {'N', 'T'}) {
          SCOPED_TRACE(testing::Message() << "syrk/syr2k " << uplo << trans << " n " << n << " lead " << lead << " k " << k);
          Mat<T> A = trans == 'N' ? Mat<T>(n, k, 2, rng) : Mat<T>(k, n, 1, rng);
          Mat<T> B = trans == 'N' ? Mat<T>(n, k, 1, rng) : Mat<T>(k, n, 3, rng);
          Mat<T> C(n, n, 2, rng);
          std::vector<T> whole = C.buf, leading = C.buf;
          Blas<T>::syrk(&uplo, &trans, &n, &k, &alpha, A.buf.data(), &A.ld, &beta, whole.data(), &C.ld, 1, 1);
          Blas<T>::syrk(&uplo, &trans, &lead, &k, &alpha, A.buf.data(), &A.ld, &beta, leading.data(), &C.ld, 1, 1);
          for (int j = 0; j < lead; ++j)
            for (int i = 0; i < lead; ++i) ASSERT_EQ(leading[C.pos(i, j)], whole[C.pos(i, j)]) << "syrk at " << i << ", " << j;
          whole = C.buf, leading = C.buf;
          Blas<T>::syr2k(&uplo, &trans, &n, &k, &alpha, A.buf.data(), &A.ld, B.buf.data(), &B.ld, &beta, whole.data(), &C.ld, 1, 1);
          Blas<T>::syr2k(&uplo, &trans, &lead, &k, &alpha, A.buf.data(), &A.ld, B.buf.data(), &B.ld, &beta, leading.data(), &C.ld,
                         1, 1);
          for (int j = 0; j < lead; ++j)
            for (int i = 0; i < lead; ++i) ASSERT_EQ(leading[C.pos(i, j)], whole[C.pos(i, j)]) << "syr2k at " << i << ", " << j;
        }
  }
}

// syrk and syr2k: one triangle of C := alpha A A' (+ alpha B A') + beta C (or with A' A).
TYPED_TEST(Level3, RankKUpdatesWriteOneTriangle) {
  using T = TypeParam;
  std::mt19937 rng(2606);
  int calls = 0;
  std::vector<std::array<int, 3>> shapes;
  for (const auto &s : kShapes) shapes.push_back({s[0], s[1], s[2]});
  for (const auto &s : kBlockedShapes) shapes.push_back({s[0], s[1], s[2]});
  for (const auto &s : shapes)
    for (int two = 0; two < 2; ++two)
      for (char uplo : {'U', 'L'})
        for (char trans : {'N', 'T'}) {
          const int n = s[0], k = s[2];
          const double alpha = kAlphas[calls % 3], beta = kBetas[(calls / 3) % 3];
          ++calls;
          Mat<T> A = trans == 'N' ? Mat<T>(n, k, 1, rng) : Mat<T>(k, n, 2, rng);
          Mat<T> B = trans == 'N' ? Mat<T>(n, k, 3, rng) : Mat<T>(k, n, 0, rng);
          Mat<T> C(n, n, 2, rng);
          auto a = [&](int i, int l) { return trans == 'N' ? A(i, l) : A(l, i); };
          auto b = [&](int i, int l) { return trans == 'N' ? B(i, l) : B(l, i); };
          std::vector<double> want = widen(C.buf);
          double scale = 1;
          bool quick = n == 0 || ((alpha == 0 || k == 0) && beta == 1);
          for (int j = 0; j < n && !quick; ++j)
            for (int i = 0; i < n; ++i) {
              if (uplo == 'U' ? i > j : i < j) continue;
              double acc = 0, mag = 0;
              for (int l = 0; l < k; ++l) {
                double t = two ? a(i, l) * b(j, l) + b(i, l) * a(j, l) : a(i, l) * a(j, l);
                acc += t, mag += std::fabs(t);
              }
              want[C.pos(i, j)] = alpha * acc + (beta == 0 ? 0 : beta * C(i, j));
              scale = std::max(scale, mag + std::fabs(C(i, j)));
            }
          SCOPED_TRACE(testing::Message() << (two ? "syr2k " : "syrk ") << uplo << trans << " n " << n << " k " << k
                                          << " alpha " << alpha << " beta " << beta);
          const T al = T(alpha), be = T(beta);
          std::vector<T> got = C.buf;
          if (two)
            Blas<T>::syr2k(&uplo, &trans, &n, &k, &al, A.buf.data(), &A.ld, B.buf.data(), &B.ld, &be, got.data(), &C.ld, 1, 1);
          else
            Blas<T>::syrk(&uplo, &trans, &n, &k, &al, A.buf.data(), &A.ld, &be, got.data(), &C.ld, 1, 1);
          expectBuffer(got, want, scale, "C");
        }
  EXPECT_GT(calls, 40);
}

// trmm or trsm, B := alpha op(A) B, alpha B op(A), or their solves, on an m x n B and a random
// triangle A with a dominant diagonal, against the reference in double.
template <typename T>
void checkTriangular(char side, char uplo, char trans, char diag, bool solve, int m, int n, double alpha,
                     std::mt19937 &rng) {
  const int na = side == 'L' ? m : n;
  Mat<T> A(na, na, 1, rng, -1.0 / na, 1.0 / na);
  for (int i = 0; i < na; ++i) A.buf[A.pos(i, i)] = T((i % 2 ? -2.5 : 2.0) + 0.1 * (i % 5));
  Mat<T> B(m, n, 2, rng);
  // op(A)(i, j) of the triangle as stored.
  auto op = [&](int i, int j) -> double {
    if (trans != 'N') std::swap(i, j);
    if (i == j) return diag == 'U' ? 1.0 : A(i, i);
    return (uplo == 'U' ? i < j : i > j) ? A(i, j) : 0.0;
  };
  std::vector<double> want = widen(B.buf);
  // Each vector v of B (a column for side L, a row for side R): v := alpha M v, or M v = alpha v
  // solved, with M = op(A) (side L) or op(A)' (side R).
  auto M = [&](int i, int j) { return side == 'L' ? op(i, j) : op(j, i); };
  const bool lowerM = ((uplo == 'L') == (trans == 'N')) == (side == 'L');
  const int vecs = side == 'L' ? n : m;
  for (int q = 0; q < vecs && m > 0 && n > 0; ++q) {
    auto at = [&](int p) { return side == 'L' ? B.pos(p, q) : B.pos(q, p); };
    std::vector<double> v(static_cast<size_t>(na), 0.0), r(static_cast<size_t>(na), 0.0);
    for (int p = 0; p < na; ++p) v[size_t(p)] = double(B.buf[at(p)]);
    if (!solve) {
      for (int i = 0; i < na; ++i)
        for (int j = lowerM ? 0 : i; j <= (lowerM ? i : na - 1); ++j) r[size_t(i)] += alpha * M(i, j) * v[size_t(j)];
    } else {
      for (int t = 0; t < na; ++t) {
        const int i = lowerM ? t : na - 1 - t;
        double acc = alpha * v[size_t(i)];
        for (int j = lowerM ? 0 : i + 1; j < (lowerM ? i : na); ++j) acc -= M(i, j) * r[size_t(j)];
        r[size_t(i)] = acc / M(i, i);
      }
    }
    for (int p = 0; p < na; ++p) want[at(p)] = r[size_t(p)];
  }
  SCOPED_TRACE(testing::Message() << (solve ? "trsm " : "trmm ") << side << uplo << trans << diag << " m " << m << " n "
                                  << n << " alpha " << alpha);
  const T al = T(alpha);
  std::vector<T> got = B.buf, a0 = A.buf;
  (solve ? Blas<T>::trsm : Blas<T>::trmm)(&side, &uplo, &trans, &diag, &m, &n, &al, A.buf.data(), &A.ld, got.data(),
                                         &B.ld, 1, 1, 1, 1);
  expectBuffer(got, want, 8.0 * na, "B");
  ASSERT_EQ(A.buf, a0);
}

// trmm and trsm on every side, uplo, trans and diag.
TYPED_TEST(Level3, TriangularProductsAndSolvesMatchTheReference) {
  std::mt19937 rng(2607);
  int calls = 0;
  for (const auto &s : kShapes)
    for (char side : {'L', 'R'})
      for (char uplo : {'U', 'L'})
        for (char trans : {'N', 'T'})
          for (char diag : {'N', 'U'})
            for (int solve = 0; solve < 2; ++solve) {
              checkTriangular<TypeParam>(side, uplo, trans, diag, solve, s[0], s[1], kAlphas[(calls + 1) % 3], rng);
              ++calls;
            }
  EXPECT_GT(calls, 150);
}

// A triangle of 512 steps or more is solved and multiplied by blocks of 256 (level3.c: the
// diagonal block's export, gemm's for the rest): 1100 crosses four full blocks and a partial one
// on the side whose triangle it is; alpha 1 and not 1 (the first block's update scales the rest).
// trmm's right side goes by blocks of 64 from 256 steps: 256 is four full blocks, 300 four and a
// partial one, 255 none (the unblocked export); their solves stay unblocked.
TYPED_TEST(Level3, LargeTrianglesGoByBlocks) {
  std::mt19937 rng(2611);
  int calls = 0;
  for (const auto &s : {std::array<int, 2>{1100, 13}, std::array<int, 2>{13, 1100}, std::array<int, 2>{13, 256},
                        std::array<int, 2>{9, 300}, std::array<int, 2>{9, 255}})
    for (char uplo : {'U', 'L'})
      for (char trans : {'N', 'T'})
        for (char diag : {'N', 'U'})
          for (int solve = 0; solve < 2; ++solve) {
            const char side = s[0] > s[1] ? 'L' : 'R';
            checkTriangular<TypeParam>(side, uplo, trans, diag, solve, s[0], s[1], (calls / 2) % 2 ? 1.0 : -0.6, rng);
            ++calls;
          }
  EXPECT_EQ(calls, 80);
}

// A temporary that cannot be allocated stops the program with the routine's name and the
// runtime's error (OpenBLAS prints and aborts too) rather than return with C unchanged: symm
// copies sym(A) whole (3000 x 3000 doubles, 72 MB), here under an address-space limit 40 MB above
// what the process holds.
TEST(Level3DeathTest, AnAllocationThatFailsAbortsWithTheRoutinesName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int n = 3000;
  const double one = 1.0, zero = 0.0;
  std::vector<double> A(size_t(n) * size_t(n), 0.0), B(size_t(n) * size_t(n), 1.0), C(size_t(n) * size_t(n), 7.0);
  for (int i = 0; i < n; ++i) A[size_t(i) * size_t(n) + size_t(i)] = 2.0;
  auto limitAddressSpace = [] {
    long pages = 0;
    std::FILE *statm = std::fopen("/proc/self/statm", "r");
    if (statm == nullptr || std::fscanf(statm, "%ld", &pages) != 1) std::abort();
    std::fclose(statm);
    struct rlimit lim;
    getrlimit(RLIMIT_AS, &lim);
    lim.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(40) << 20);
    setrlimit(RLIMIT_AS, &lim);
  };
  EXPECT_DEATH(
      {
        limitAddressSpace();
        dsymm_("L", "L", &n, &n, &one, A.data(), &n, B.data(), &n, &zero, C.data(), &n, 1, 1);
      },
      "libsplblas: dsymm_ could not run: SPL_ERR_ALLOC");
  // Without the limit the same call runs: C = 2 B.
  dsymm_("L", "L", &n, &n, &one, A.data(), &n, B.data(), &n, &zero, C.data(), &n, 1, 1);
  EXPECT_DOUBLE_EQ(C[0], 2.0);
  EXPECT_DOUBLE_EQ(C.back(), 2.0);
}

}  // namespace
