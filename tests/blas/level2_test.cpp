// libsplblas's level 2 through its Fortran entry points, on sizes beyond netlib's xblat2 (which
// stops at n = 9): seeded random matrices up to 150 x 150, non-square (1 x N, N x 1), band widths
// from 0 to past the matrix, increments 1, 2, -1, -3 and leading dimensions larger than the
// matrix. Each storage (full, band, packed) is read here through one function, `at`, that gives
// the buffer position of element (i, j) or -1 where the storage has none; the references compute
// in double on the matrix that storage means, and every buffer position the routine may not
// write (between strides, past lda, outside the triangle or band) must come back unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "blas2.h"
#include "buffer_check.h"
#include "spl_runtime.h"

#define FORTRAN_BLAS2(P, T)                                                                                      \
  void P##gemv_(const char *, const int *, const int *, const T *, const T *, const int *, const T *,            \
                const int *, const T *, T *, const int *, size_t);                                               \
  void P##gbmv_(const char *, const int *, const int *, const int *, const int *, const T *, const T *,          \
                const int *, const T *, const int *, const T *, T *, const int *, size_t);                       \
  void P##symv_(const char *, const int *, const T *, const T *, const int *, const T *, const int *, const T *, \
                T *, const int *, size_t);                                                                       \
  void P##sbmv_(const char *, const int *, const int *, const T *, const T *, const int *, const T *,            \
                const int *, const T *, T *, const int *, size_t);                                               \
  void P##spmv_(const char *, const int *, const T *, const T *, const T *, const int *, const T *, T *,          \
                const int *, size_t);                                                                            \
  void P##trmv_(const char *, const char *, const char *, const int *, const T *, const int *, T *, const int *, \
                size_t, size_t, size_t);                                                                         \
  void P##trsv_(const char *, const char *, const char *, const int *, const T *, const int *, T *, const int *, \
                size_t, size_t, size_t);                                                                         \
  void P##tbmv_(const char *, const char *, const char *, const int *, const int *, const T *, const int *, T *, \
                const int *, size_t, size_t, size_t);                                                            \
  void P##tbsv_(const char *, const char *, const char *, const int *, const int *, const T *, const int *, T *, \
                const int *, size_t, size_t, size_t);                                                            \
  void P##tpmv_(const char *, const char *, const char *, const int *, const T *, T *, const int *, size_t,      \
                size_t, size_t);                                                                                 \
  void P##tpsv_(const char *, const char *, const char *, const int *, const T *, T *, const int *, size_t,      \
                size_t, size_t);                                                                                 \
  void P##ger_(const int *, const int *, const T *, const T *, const int *, const T *, const int *, T *,         \
               const int *);                                                                                     \
  void P##syr_(const char *, const int *, const T *, const T *, const int *, T *, const int *, size_t);          \
  void P##spr_(const char *, const int *, const T *, const T *, const int *, T *, size_t);                       \
  void P##syr2_(const char *, const int *, const T *, const T *, const int *, const T *, const int *, T *,       \
                const int *, size_t);                                                                            \
  void P##spr2_(const char *, const int *, const T *, const T *, const int *, const T *, const int *, T *,       \
                size_t);

extern "C" {
FORTRAN_BLAS2(s, float)
FORTRAN_BLAS2(d, double)
}

namespace {

#define BLAS2_NAMES(P)                                                                                   \
  static constexpr auto gemv = P##gemv_, gbmv = P##gbmv_, symv = P##symv_, sbmv = P##sbmv_;           \
  static constexpr auto spmv = P##spmv_, trmv = P##trmv_, trsv = P##trsv_, tbmv = P##tbmv_;           \
  static constexpr auto tbsv = P##tbsv_, tpmv = P##tpmv_, tpsv = P##tpsv_, ger = P##ger_;             \
  static constexpr auto syr = P##syr_, spr = P##spr_, syr2 = P##syr2_, spr2 = P##spr2_;
template <typename T> struct Blas;
template <> struct Blas<float> {
  BLAS2_NAMES(s)
};
template <> struct Blas<double> {
  BLAS2_NAMES(d)
};

enum class Kind { Full, Band, Packed };

// How a matrix is stored: at(i, j) is element (i, j)'s buffer position, -1 where none is.
struct Storage {
  Kind kind = Kind::Full;
  int m = 0, n = 0, lda = 1;
  int kl = 0, ku = 0;  // band: diagonals below and above (a triangle's or symmetric band: k and 0)
  char uplo = 'A';     // 'U' or 'L': only that triangle is stored (symmetric, triangular)
  long at(int i, int j) const {
    if (uplo == 'U' && i > j) return -1;
    if (uplo == 'L' && i < j) return -1;
    switch (kind) {
      case Kind::Full: return i + long(j) * lda;
      case Kind::Band:
        if (i < j - ku || i > j + kl) return -1;
        return (ku + i - j) + long(j) * lda;
      case Kind::Packed:
        return uplo == 'U' ? i + long(j) * (j + 1) / 2 : i + long(j) * (2 * n - j - 1) / 2;
    }
    return -1;
  }
  size_t size() const {
    switch (kind) {
      case Kind::Full: return size_t(lda) * size_t(n) + 3;
      case Kind::Band: return size_t(lda) * size_t(n) + 3;
      case Kind::Packed: return size_t(n) * size_t(n + 1) / 2 + 3;
    }
    return 0;
  }
};

// A strided vector: element k at pos(k) (a negative increment walks from the far end).
struct Walk {
  int n, inc;
  size_t pos(int k) const { return inc > 0 ? size_t(k) * size_t(inc) : size_t(n - 1 - k) * size_t(-inc); }
  size_t size() const { return n > 0 ? size_t(n - 1) * size_t(std::abs(inc)) + 3 : 3; }
};

template <typename T> std::vector<T> randomBuffer(size_t len, std::mt19937 &rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> b(len);
  for (T &v : b) v = T(d(rng));
  return b;
}

using blas_check::expectBuffer;
using blas_check::widen;

template <typename T> class Level2 : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Level2, Precisions);

const int kIncs[] = {1, 2, -1, -3};

// y := alpha op(A) x + beta y for A general (full or band) and symmetric (full, band, packed).
TYPED_TEST(Level2, MatrixVectorProductsMatchTheStoredMatrix) {
  using T = TypeParam;
  std::mt19937 rng(2602);
  const int shapes[][2] = {{0, 4}, {1, 1}, {1, 37}, {37, 1}, {9, 9}, {60, 23}, {23, 60}, {150, 150}};
  const double alphas[] = {0.0, 1.0, -0.7}, betas[] = {0.0, 1.0, 0.9};
  int calls = 0;
  for (const auto &s : shapes)
    for (int sym = 0; sym < 2; ++sym)
      for (Kind kind : {Kind::Full, Kind::Band, Kind::Packed}) {
        if ((!sym && kind == Kind::Packed) || (sym && s[0] != s[1])) continue;
        for (char uplo : sym ? std::vector<char>{'U', 'L'} : std::vector<char>{'A'})
          for (int band : {0, 1, 3, 200}) {
            if (kind != Kind::Band && band != 0) continue;
            Storage st;
            st.kind = kind;
            st.m = s[0], st.n = s[1], st.uplo = uplo;
            if (kind == Kind::Band) {
              st.kl = sym && uplo == 'U' ? 0 : band;
              st.ku = sym && uplo == 'L' ? 0 : (sym ? band : (band + 1) % 5);
            }
            st.lda = kind == Kind::Band ? st.kl + st.ku + 1 + (band % 2) : std::max(1, st.m) + (s[0] % 3);
            std::vector<T> a = randomBuffer<T>(st.size(), rng);
            for (char trans : sym ? std::vector<char>{'N'} : std::vector<char>{'N', 'T'}) {
              // op(A): r x c; element (i, j) of the matrix the storage means.
              int r = trans == 'N' ? st.m : st.n, c = trans == 'N' ? st.n : st.m;
              auto M = [&](int i, int j) -> double {
                if (trans != 'N') std::swap(i, j);
                long p = st.at(i, j);
                if (p < 0 && sym) p = st.at(j, i);
                return p < 0 ? 0.0 : double(a[size_t(p)]);
              };
              for (int incx : kIncs)
                for (int incy : {1, -2}) {
                  double alpha = alphas[(calls + incx + 3) % 3], beta = betas[(calls / 3) % 3];
                  ++calls;
                  Walk wx{c, incx}, wy{r, incy};
                  std::vector<T> x = randomBuffer<T>(wx.size(), rng), y = randomBuffer<T>(wy.size(), rng);
                  std::vector<double> want = widen(y);
                  double scale = 1;
                  bool quick = r == 0 || c == 0 || (alpha == 0 && beta == 1);
                  for (int i = 0; i < r && !quick; ++i) {
                    double acc = 0, mag = 0;
                    for (int j = 0; j < c; ++j) {
                      acc += M(i, j) * double(x[wx.pos(j)]);
                      mag += std::fabs(M(i, j) * double(x[wx.pos(j)]));
                    }
                    double old = double(y[wy.pos(i)]);
                    want[wy.pos(i)] = alpha * acc + (beta == 0 ? 0 : beta * old);
                    scale = std::max(scale, mag + std::fabs(old));
                  }
                  SCOPED_TRACE(testing::Message() << (sym ? "symmetric " : "general ") << int(kind) << " " << st.m << "x"
                                                  << st.n << " uplo " << uplo << " band " << st.kl << "/" << st.ku << " trans "
                                                  << trans << " incx " << incx << " incy " << incy << " alpha " << alpha
                                                  << " beta " << beta);
                  const T al = T(alpha), be = T(beta);
                  std::vector<T> got = y, a0 = a;
                  const char *tr = &trans, *ul = &uplo;
                  if (!sym && kind == Kind::Full)
                    Blas<T>::gemv(tr, &st.m, &st.n, &al, a.data(), &st.lda, x.data(), &incx, &be, got.data(), &incy, 1);
                  else if (!sym)
                    Blas<T>::gbmv(tr, &st.m, &st.n, &st.kl, &st.ku, &al, a.data(), &st.lda, x.data(), &incx, &be, got.data(), &incy, 1);
                  else if (kind == Kind::Full)
                    Blas<T>::symv(ul, &st.n, &al, a.data(), &st.lda, x.data(), &incx, &be, got.data(), &incy, 1);
                  else if (kind == Kind::Band) {
                    int k = std::max(st.kl, st.ku);
                    Blas<T>::sbmv(ul, &st.n, &k, &al, a.data(), &st.lda, x.data(), &incx, &be, got.data(), &incy, 1);
                  } else {
                    Blas<T>::spmv(ul, &st.n, &al, a.data(), x.data(), &incx, &be, got.data(), &incy, 1);
                  }
                  expectBuffer(got, want, scale, "y");
                  ASSERT_EQ(a, a0) << "the matrix was written";
                }
            }
          }
      }
  EXPECT_GT(calls, 500);
}

// x := op(A) x and x := op(A)^-1 x for A triangular (full, band, packed), every uplo, trans and
// diag; the diagonal dominates (|a_ii| >= 2, off-diagonal entries below 1/n) so the solve is
// well conditioned at n = 150 and 1100 (more than one 1024-row block of the column sweeps).
TYPED_TEST(Level2, TriangularProductsAndSolvesMatchTheStoredMatrix) {
  using T = TypeParam;
  std::mt19937 rng(2603);
  int calls = 0;
  for (int n : {1, 2, 7, 40, 150, 1100})
    for (Kind kind : {Kind::Full, Kind::Band, Kind::Packed})
      for (int k : {0, 1, 5, 8, 300}) {
        if (kind != Kind::Band && k != 0) continue;
        for (char uplo : {'U', 'L'}) {
          Storage st;
          st.kind = kind;
          st.m = st.n = n, st.uplo = uplo;
          if (kind == Kind::Band) (uplo == 'U' ? st.ku : st.kl) = k;
          st.lda = kind == Kind::Band ? k + 1 + (n % 2) : n + (n % 3);
          std::vector<T> a = randomBuffer<T>(st.size(), rng, -1.0 / n, 1.0 / n);
          for (int i = 0; i < n; ++i) {
            std::uniform_real_distribution<double> d(2, 3);
            a[size_t(st.at(i, i))] = T((i % 2 ? -1 : 1) * d(rng));
          }
          for (char trans : {'N', 'T'})
            for (char diag : {'N', 'U'})
              for (int incx : kIncs)
                for (int solve = 0; solve < 2; ++solve) {
                  ++calls;
                  auto M = [&](int i, int j) -> double {
                    if (trans != 'N') std::swap(i, j);
                    if (i == j && diag == 'U') return 1.0;
                    long p = st.at(i, j);
                    return p < 0 ? 0.0 : double(a[size_t(p)]);
                  };
                  Walk wx{n, incx};
                  std::vector<T> x = randomBuffer<T>(wx.size(), rng);
                  std::vector<double> want = widen(x), v(static_cast<size_t>(n), 0.0), b(static_cast<size_t>(n), 0.0);
                  for (int i = 0; i < n; ++i) b[size_t(i)] = double(x[wx.pos(i)]);
                  bool lower = (uplo == 'L') == (trans == 'N');
                  if (!solve) {
                    for (int i = 0; i < n; ++i)
                      for (int j = 0; j < n; ++j) v[size_t(i)] += M(i, j) * b[size_t(j)];
                  } else {
                    for (int s = 0; s < n; ++s) {
                      int i = lower ? s : n - 1 - s;
                      double r = b[size_t(i)];
                      for (int j = 0; j < n; ++j)
                        if (j != i) r -= M(i, j) * v[size_t(j)];
                      v[size_t(i)] = r / M(i, i);
                    }
                  }
                  for (int i = 0; i < n; ++i) want[wx.pos(i)] = v[size_t(i)];
                  SCOPED_TRACE(testing::Message() << (solve ? "solve " : "product ") << int(kind) << " n " << n << " k " << k
                                                  << " uplo " << uplo << " trans " << trans << " diag " << diag << " incx " << incx);
                  std::vector<T> got = x, a0 = a;
                  const char *ul = &uplo, *tr = &trans, *dg = &diag;
                  if (kind == Kind::Full)
                    (solve ? Blas<T>::trsv : Blas<T>::trmv)(ul, tr, dg, &n, a.data(), &st.lda, got.data(), &incx, 1, 1, 1);
                  else if (kind == Kind::Band)
                    (solve ? Blas<T>::tbsv : Blas<T>::tbmv)(ul, tr, dg, &n, &k, a.data(), &st.lda, got.data(), &incx, 1, 1, 1);
                  else
                    (solve ? Blas<T>::tpsv : Blas<T>::tpmv)(ul, tr, dg, &n, a.data(), got.data(), &incx, 1, 1, 1);
                  expectBuffer(got, want, 4.0 * n, "x");
                  ASSERT_EQ(a, a0) << "the matrix was written";
                }
        }
      }
  EXPECT_GT(calls, 400);
}

// A := alpha x y' + A (ger, all of A) and the symmetric updates of one triangle (syr, syr2 on
// full storage; spr, spr2 packed): positions outside the triangle, past lda and after the
// matrix stay as they were.
TYPED_TEST(Level2, RankUpdatesWriteOnlyTheStoredElements) {
  using T = TypeParam;
  std::mt19937 rng(2604);
  int calls = 0;
  const int shapes[][2] = {{1, 1}, {1, 29}, {29, 1}, {8, 8}, {50, 31}, {120, 120}};
  for (const auto &s : shapes)
    for (int routine = 0; routine < 5; ++routine) {  // ger, syr, syr2, spr, spr2
      bool sym = routine > 0, packed = routine >= 3, two = routine == 2 || routine == 4;
      if (sym && s[0] != s[1]) continue;
      for (char uplo : sym ? std::vector<char>{'U', 'L'} : std::vector<char>{'A'})
        for (int incx : kIncs)
          for (int incy : {1, -2}) {
            ++calls;
            Storage st;
            st.kind = packed ? Kind::Packed : Kind::Full;
            st.m = s[0], st.n = s[1], st.uplo = uplo, st.lda = st.m + (incx == 2 ? 3 : 0);
            std::vector<T> a = randomBuffer<T>(st.size(), rng);
            Walk wx{st.m, incx}, wy{st.n, incy};
            std::vector<T> x = randomBuffer<T>(wx.size(), rng), y = randomBuffer<T>(wy.size(), rng);
            const T alpha = T(calls % 4 == 0 ? 0.0 : -0.8);
            std::vector<double> want = widen(a);
            for (int j = 0; j < st.n; ++j)
              for (int i = 0; i < st.m; ++i) {
                long p = st.at(i, j);
                if (p < 0) continue;
                double xi = double(x[wx.pos(i)]), xj = sym ? double(x[wx.pos(j)]) : 0;
                double yi = two ? double(y[wy.pos(i)]) : 0, yj = sym && !two ? xj : double(y[wy.pos(j)]);
                want[size_t(p)] += double(alpha) * (xi * yj + (two ? yi * xj : 0));
              }
            SCOPED_TRACE(testing::Message() << "routine " << routine << " " << st.m << "x" << st.n << " uplo " << uplo
                                            << " incx " << incx << " incy " << incy << " alpha " << double(alpha));
            std::vector<T> got = a;
            const char *ul = &uplo;
            switch (routine) {
              case 0: Blas<T>::ger(&st.m, &st.n, &alpha, x.data(), &incx, y.data(), &incy, got.data(), &st.lda); break;
              case 1: Blas<T>::syr(ul, &st.n, &alpha, x.data(), &incx, got.data(), &st.lda, 1); break;
              case 2: Blas<T>::syr2(ul, &st.n, &alpha, x.data(), &incx, y.data(), &incy, got.data(), &st.lda, 1); break;
              case 3: Blas<T>::spr(ul, &st.n, &alpha, x.data(), &incx, got.data(), 1); break;
              case 4: Blas<T>::spr2(ul, &st.n, &alpha, x.data(), &incx, y.data(), &incy, got.data(), 1); break;
            }
            expectBuffer(got, want, 4.0, "A");
          }
    }
  EXPECT_GT(calls, 100);
}

// Past the default schedule's blocks of 1024 row sums (cin/Schedule.h sweeps a column-major
// triangle by columns, block by block): packed triangles of order 4099 and a 5000 x 3 gemv, in
// f32 (the packed matrix takes 34 MB), every uplo and trans.
TEST(Level2Large, SweepsAcrossRowBlocksMatchTheReference) {
  std::mt19937 rng(2608);
  const int n = 4099, one = 1;
  for (char uplo : {'U', 'L'}) {
    Storage st;
    st.kind = Kind::Packed;
    st.m = st.n = n, st.uplo = uplo;
    std::vector<float> ap = randomBuffer<float>(st.size(), rng, -1.0 / n, 1.0 / n);
    for (int i = 0; i < n; ++i) ap[size_t(st.at(i, i))] = (i % 2 ? -2.0f : 2.5f);
    std::vector<float> x = randomBuffer<float>(size_t(n), rng), y = randomBuffer<float>(size_t(n), rng);
    auto stored = [&](int i, int j) { long p = st.at(i, j); return p < 0 ? 0.0 : double(ap[size_t(p)]); };
    // spmv: y := A x + 0.5 y, A symmetric.
    {
      std::vector<float> got = y;
      const float alpha = 1, beta = 0.5f;
      Blas<float>::spmv(&uplo, &n, &alpha, ap.data(), x.data(), &one, &beta, got.data(), &one, 1);
      for (int i = 0; i < n; ++i) {
        double acc = 0;
        for (int j = 0; j < n; ++j) acc += (st.at(i, j) >= 0 ? stored(i, j) : stored(j, i)) * double(x[size_t(j)]);
        ASSERT_NEAR(double(got[size_t(i)]), acc + 0.5 * double(y[size_t(i)]), 1e-4) << "spmv " << uplo << " row " << i;
      }
    }
    for (char trans : {'N', 'T'})
      for (int solve = 0; solve < 2; ++solve) {
        std::vector<float> got = x;
        (solve ? Blas<float>::tpsv : Blas<float>::tpmv)(&uplo, &trans, "N", &n, ap.data(), got.data(), &one, 1, 1, 1);
        // Check through the product: op(A) got = x for a solve, got = op(A) x for a product.
        const std::vector<float> &in = solve ? got : x;
        const std::vector<float> &out = solve ? x : got;
        for (int i = 0; i < n; ++i) {
          double acc = 0;
          for (int j = 0; j < n; ++j) acc += (trans == 'N' ? stored(i, j) : stored(j, i)) * double(in[size_t(j)]);
          ASSERT_NEAR(acc, double(out[size_t(i)]), 1e-4) << (solve ? "tpsv " : "tpmv ") << uplo << trans << " row " << i;
        }
      }
  }
  // gemv 'N' on 5000 x 3 (two blocks of rows), lda 5003.
  const int m = 5000, c = 3, lda = 5003;
  std::vector<float> a = randomBuffer<float>(size_t(lda) * c, rng), x = randomBuffer<float>(c, rng), y(size_t(m), 1.0f);
  const float alpha = -1, beta = 2;
  Blas<float>::gemv("N", &m, &c, &alpha, a.data(), &lda, x.data(), &one, &beta, y.data(), &one, 1);
  for (int i = 0; i < m; ++i) {
    double acc = 0;
    for (int j = 0; j < c; ++j) acc += double(a[size_t(i) + size_t(j) * lda]) * double(x[size_t(j)]);
    ASSERT_NEAR(double(y[size_t(i)]), 2.0 - acc, 1e-5) << "gemv row " << i;
  }
}

// The band routines swept by columns (stdlib/blas2.spl: gbmv N, tbmv LN and UN by blocks of
// 1024 rows, of 256 up to 2048 rows on more than one thread; sbmv in one fused pass): matrices
// past two blocks and under, bands that cross the blocks' edges, wider than tall and taller than
// wide, increments 1 and -2 / 3, on 1, 2 and 3 threads, against a double reference (f64:
// relative 1e-13 of each row's magnitude) and with the same bits on each.
TEST(Level2Large, BandSweepsMatchTheReferenceOnEveryThreadCount) {
  std::mt19937 rng(2609);
  struct Case {
    int m, n, kl, ku;
  };
  for (Case c : {Case{2100, 1900, 40, 17}, Case{1100, 3000, 3, 70}, Case{2300, 2300, 45, 9}, Case{2500, 2500, 0, 0},
                 Case{400, 400, 32, 32}, Case{1500, 1500, 20, 7}, Case{2048, 2048, 5, 40}})
    for (int sym = 0; sym < 3; ++sym) {  // gbmv, sbmv, tbmv
      if (sym && c.m != c.n) continue;
      for (char uplo : sym ? std::vector<char>{'L', 'U'} : std::vector<char>{'A'})
        for (char trans : sym == 1 ? std::vector<char>{'N'} : std::vector<char>{'N', 'T'})
          for (auto [incx, incy] : std::vector<std::pair<int, int>>{{1, 1}, {-2, 3}}) {
            Storage st;
            st.kind = Kind::Band;
            st.m = c.m, st.n = c.n, st.uplo = uplo;
            int k = std::max(c.kl, c.ku);
            if (sym) (uplo == 'U' ? st.ku : st.kl) = k;
            else st.kl = c.kl, st.ku = c.ku;
            st.lda = st.kl + st.ku + 2;
            std::vector<double> a = randomBuffer<double>(st.size(), rng);
            int rows = trans == 'N' ? st.m : st.n, cols = trans == 'N' ? st.n : st.m;
            auto M = [&](int i, int j) -> double {
              if (trans != 'N') std::swap(i, j);
              long p = st.at(i, j);
              if (p < 0 && sym == 1) p = st.at(j, i);
              return p < 0 ? 0.0 : a[size_t(p)];
            };
            Walk wx{cols, incx}, wy{rows, incy};
            std::vector<double> x = randomBuffer<double>(wx.size(), rng), y = randomBuffer<double>(wy.size(), rng);
            const double alpha = 0.75, beta = -0.5;
            std::vector<double> want(static_cast<size_t>(rows)), scale(static_cast<size_t>(rows));
            for (int i = 0; i < rows; ++i) {
              double acc = 0, mag = 0;
              for (int j = std::max(0, i - k - c.kl - c.ku); j < std::min(cols, i + k + c.kl + c.ku + 1); ++j) {
                double term = M(i, j) * x[wx.pos(j)];
                acc += term, mag += std::fabs(term);
              }
              bool update = sym != 2;
              want[size_t(i)] = update ? alpha * acc + beta * y[wy.pos(i)] : acc;
              scale[size_t(i)] = mag + (update ? std::fabs(y[wy.pos(i)]) : 0);
            }
            std::vector<double> first;
            for (int threads : {1, 2, 3}) {
              spl_set_num_threads(threads);
              const char *ul = &uplo, *tr = &trans;
              std::vector<double> got = sym == 2 ? x : y;
              if (sym == 0)
                Blas<double>::gbmv(tr, &st.m, &st.n, &st.kl, &st.ku, &alpha, a.data(), &st.lda, x.data(), &incx, &beta, got.data(), &incy, 1);
              else if (sym == 1)
                Blas<double>::sbmv(ul, &st.n, &k, &alpha, a.data(), &st.lda, x.data(), &incx, &beta, got.data(), &incy, 1);
              else
                Blas<double>::tbmv(ul, tr, "N", &st.n, &k, a.data(), &st.lda, got.data(), &incx, 1, 1, 1);
              SCOPED_TRACE(testing::Message() << "routine " << sym << " " << st.m << "x" << st.n << " band " << st.kl << "/" << st.ku
                                              << " uplo " << uplo << " trans " << trans << " incx " << incx << " incy " << incy
                                              << " threads " << threads);
              const Walk &out = sym == 2 ? wx : wy;
              for (int i = 0; i < rows; ++i)
                ASSERT_LE(std::fabs(got[out.pos(i)] - want[size_t(i)]), 1e-13 * (scale[size_t(i)] + 1e-300)) << "row " << i;
              if (first.empty()) first = got;
              else ASSERT_EQ(got, first) << "the bits differ from one thread's";
            }
            spl_set_num_threads(0);
          }
    }
}

// y after a call on one of several thread counts: its elements between and past its n strides
// as they were before the call, and the same bits as after the first thread count's call
// (`first`, which that call sets).
template <typename T>
void expectStridesKeptAndBitsAsFirst(const std::vector<T> &got, const std::vector<T> &y, int n, int incy, std::vector<T> &first) {
  for (size_t k = 0; k < got.size(); ++k)
    if (k % size_t(std::abs(incy)) != 0 || k >= size_t(n) * size_t(std::abs(incy)))
      ASSERT_EQ(got[k], y[k]) << "position " << k << " between or past the strides";
  if (first.empty()) first = got;
  else ASSERT_EQ(got, first) << "the bits differ from one thread's";
}

// The routine on 1, 2 and 3 threads: `call(got)` on a copy of `start` (the vector it writes),
// then `check(got, threads)` (the test's own assertions) and expectStridesKeptAndBitsAsFirst over
// start's n strides of inc. The thread count goes back to the default after, a failure too; wrap
// it in ASSERT_NO_FATAL_FAILURE to stop at one.
template <typename T, typename Call, typename Check>
void onEveryThreadCount(const std::vector<T> &start, int n, int inc, Call call, Check check) {
  std::vector<T> first;
  for (int threads : {1, 2, 3}) {
    spl_set_num_threads(threads);
    SCOPED_TRACE(testing::Message() << "threads " << threads);
    std::vector<T> got = start;
    call(got);
    check(got, threads);
    if (!testing::Test::HasFatalFailure()) expectStridesKeptAndBitsAsFirst(got, start, n, inc, first);
    if (testing::Test::HasFatalFailure()) break;
  }
  spl_set_num_threads(0);
}

// symv and spmv (full and packed storage) on the thread pool: the fused loop over the stored
// triangle's columns (L) or rows (U) runs as eight parts, each adding the sums of other rows
// into a private copy that is combined after it in part order (parallelize(..., privatize),
// stdlib/blas2.spl). Sizes past the eight parts' boundaries and the column blocks (1000, 2001;
// symv L in blocks of four up to 1024 rows, of eight from 1025: level2.c's kSymvSmallRows), and
// below poly::minPrivateWork, where the parts run in order on one copy (spmv 63 and 256; 401
// with 512-bit vectors; symv up to 320 rows, 448 with AVX-512, runs the same loops without
// parts: level2.c's symvSerialRows), increments 1, -2 and 3, alpha and beta not 1: against a double reference,
// and the same bits on 1, 2 and 3 threads (neither the parts nor the version taken depend on
// the thread count).
template <typename T> void checkSymvOnThreads(Kind kind, double tolerance) {
  std::mt19937 rng(4242);
  for (int n : {63, 256, 257, 320, 321, 401, 448, 449, 1000, 1024, 1025, 2001})
    for (char uplo : {'L', 'U'})
      for (auto [incx, incy] : std::vector<std::pair<int, int>>{{1, 1}, {-2, 3}}) {
        Storage st;
        st.kind = kind;
        st.m = st.n = n, st.lda = n + 3, st.uplo = uplo;
        std::vector<T> a = randomBuffer<T>(st.size(), rng);
        Walk wx{n, incx}, wy{n, incy};
        std::vector<T> x = randomBuffer<T>(wx.size(), rng), y = randomBuffer<T>(wy.size(), rng);
        const T alpha = T(0.75), beta = T(-0.5);
        std::vector<double> want(static_cast<size_t>(n)), scale(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
          double acc = 0, mag = 0;
          for (int j = 0; j < n; ++j) {
            long p = st.at(i, j) >= 0 ? st.at(i, j) : st.at(j, i);
            double term = double(a[size_t(p)]) * double(x[wx.pos(j)]);
            acc += term, mag += std::fabs(term);
          }
          want[size_t(i)] = double(alpha) * acc + double(beta) * double(y[wy.pos(i)]);
          scale[size_t(i)] = std::fabs(double(alpha)) * mag + std::fabs(double(beta) * double(y[wy.pos(i)]));
        }
        SCOPED_TRACE(testing::Message() << (kind == Kind::Full ? "symv " : "spmv ") << uplo << " n " << n << " incx " << incx << " incy " << incy);
        auto call = [&](std::vector<T> &got) {
          if (kind == Kind::Full) Blas<T>::symv(&uplo, &n, &alpha, a.data(), &st.lda, x.data(), &incx, &beta, got.data(), &incy, 1);
          else Blas<T>::spmv(&uplo, &n, &alpha, a.data(), x.data(), &incx, &beta, got.data(), &incy, 1);
        };
        auto check = [&](const std::vector<T> &got, int) {
          for (int i = 0; i < n; ++i)
            ASSERT_LE(std::fabs(double(got[wy.pos(i)]) - want[size_t(i)]), tolerance * (scale[size_t(i)] + 1e-300)) << "row " << i;
        };
        ASSERT_NO_FATAL_FAILURE(onEveryThreadCount(y, n, incy, call, check));
      }
}

TEST(Level2Threads, SymvAndSpmvPartsMatchTheReferenceOnEveryThreadCount) {
  for (Kind kind : {Kind::Full, Kind::Packed}) {
    checkSymvOnThreads<double>(kind, 1e-13);
    checkSymvOnThreads<float>(kind, 2e-5);
  }
}

// gemv N from 257 to 2048 rows runs blocks of 256 rows on more than one thread and one block
// of 2048 on one, and past 2048 rows blocks of 4096 on one thread and of 2048 on more; up to
// 2048 rows and from a million elements, parts of the columns on every thread count
// (runtime/blas/level2.c): the shapes at the edges and past them, increments 1 and -2 / 3, lda
// past m, against a double reference, and the same bits on 1, 2 and 3 threads (an element's sum
// runs over the columns in order in the exports of blocks, over the parts in part order in the
// export of parts: one export for a shape whatever the threads).
template <typename T> void checkGemvNOnThreads(double tolerance) {
  std::mt19937 rng(2613);
  struct Shape {
    int m, n, lda;  // lda 0: m + 5
  };
  std::vector<Shape> shapes;
  for (int m : {256, 257, 400, 2048, 2049, 4096, 4097})
    for (int n : {3, 37}) shapes.push_back({m, n, 0});
  for (Shape s : {Shape{600, 1667, 0}, Shape{2048, 489, 0}, Shape{2049, 489, 0}, Shape{100, 10001, 0}, Shape{999, 1000, 0}})
    shapes.push_back(s);
  // Columns a multiple of 4 KB apart, or one element more, where sgemv takes its sweeps of eight
  // columns (level2.c's sgemv_columns_alias): the parts (1024 x 1024, 1500 rows), past one block
  // of rows (2500), 64 bytes past a multiple (lda 2064, still eight) and 128 (2080, sixteen).
  for (Shape s : {Shape{1024, 1024, 1024}, Shape{1500, 700, 2049}, Shape{2500, 37, 3072}, Shape{2050, 37, 2064},
                  Shape{2050, 37, 2080}})
    shapes.push_back(s);
  for (auto [m, n, ldaGiven] : shapes)
    for (auto [incx, incy] : std::vector<std::pair<int, int>>{{1, 1}, {-2, 3}}) {
      const int lda = ldaGiven ? ldaGiven : m + 5;
      std::vector<T> a = randomBuffer<T>(size_t(lda) * size_t(n), rng);
      Walk wx{n, incx}, wy{m, incy};
      std::vector<T> x = randomBuffer<T>(wx.size(), rng), y = randomBuffer<T>(wy.size(), rng);
      const T alpha = T(-0.75), beta = T(0.5);
      SCOPED_TRACE(testing::Message() << "gemv N " << m << " x " << n << " lda " << lda << " incx " << incx << " incy " << incy);
      auto call = [&](std::vector<T> &got) {
        Blas<T>::gemv("N", &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, got.data(), &incy, 1);
      };
      auto check = [&](const std::vector<T> &got, int) {
        for (int i = 0; i < m; ++i) {
          double acc = 0, mag = 0;
          for (int j = 0; j < n; ++j) {
            const double term = double(a[size_t(i) + size_t(j) * size_t(lda)]) * double(x[wx.pos(j)]);
            acc += term, mag += std::fabs(term);
          }
          const double want = double(alpha) * acc + double(beta) * double(y[wy.pos(i)]);
          const double scale = std::fabs(double(alpha)) * mag + std::fabs(double(beta) * double(y[wy.pos(i)]));
          ASSERT_LE(std::fabs(double(got[wy.pos(i)]) - want), tolerance * (scale + 1e-300)) << "row " << i;
        }
      };
      ASSERT_NO_FATAL_FAILURE(onEveryThreadCount(y, m, incy, call, check));
    }
}

TEST(Level2Threads, GemvNMatchesTheReferenceOnEveryThreadCount) {
  checkGemvNOnThreads<double>(1e-13);
  checkGemvNOnThreads<float>(2e-5);
}

// trmv and tpmv L N and U N sweep blocks of 1024 rows; on more than one thread dtrmv and dtpmv
// L N take blocks of 256 from 257 to 1024 rows, and U N (s and d) from 257 rows; stpmv L N past
// 2048 rows sixteen columns at a time, strmv L N and U N past 2048 rows gemv N's eight parts of
// columns (runtime/blas/level2.c; L N's from their exports' specialize): sizes at the edges
// (2048 and 2049 either side of the last) and past them, unit and stored diagonals,
// increments 1 and -2, against a double reference, and the same bits on 1, 2 and 3 threads (a
// row's sum runs over the columns in order in every export but the parts, whose grouping does not
// depend on the threads).
template <typename T> void checkTrmvOnThreads(double tolerance) {
  std::mt19937 rng(2614);
  for (char uplo : {'L', 'U'})
    for (Kind kind : {Kind::Full, Kind::Packed})
      for (int n : {256, 257, 400, 1024, 1025, 1500, 2048, 2049})
        for (char diag : {'N', 'U'})
          for (int incx : {1, -2}) {
            Storage st;
            st.kind = kind, st.m = n, st.n = n, st.lda = n + 3, st.uplo = uplo;
            std::vector<T> a = randomBuffer<T>(st.size(), rng);
            Walk wx{n, incx};
            std::vector<T> x = randomBuffer<T>(wx.size(), rng);
            SCOPED_TRACE(testing::Message() << (kind == Kind::Full ? "trmv " : "tpmv ") << uplo << " N n " << n << " diag "
                                            << diag << " incx " << incx);
            auto call = [&](std::vector<T> &got) {
              if (kind == Kind::Full)
                Blas<T>::trmv(&uplo, "N", &diag, &n, a.data(), &st.lda, got.data(), &incx, 1, 1, 1);
              else
                Blas<T>::tpmv(&uplo, "N", &diag, &n, a.data(), got.data(), &incx, 1, 1, 1);
            };
            auto check = [&](const std::vector<T> &got, int) {
              for (int i = 0; i < n; ++i) {
                double acc = diag == 'U' ? double(x[wx.pos(i)]) : double(a[size_t(st.at(i, i))]) * double(x[wx.pos(i)]);
                double mag = std::fabs(acc);
                for (int j = uplo == 'L' ? 0 : i + 1; j < (uplo == 'L' ? i : n); ++j) {
                  const double term = double(a[size_t(st.at(i, j))]) * double(x[wx.pos(j)]);
                  acc += term, mag += std::fabs(term);
                }
                ASSERT_LE(std::fabs(double(got[wx.pos(i)]) - acc), tolerance * (mag + 1e-300)) << "row " << i;
              }
            };
            ASSERT_NO_FATAL_FAILURE(onEveryThreadCount(x, n, incx, call, check));
          }
}

TEST(Level2Threads, TrmvMatchesTheReferenceOnEveryThreadCount) {
  checkTrmvOnThreads<double>(1e-13);
  checkTrmvOnThreads<float>(2e-5);
}

// trsv's transposed cases (U, T) and (L, T) from 1024 rows and tpsv U T past 2560 go by blocks of
// 256 (gemv T's export, or the packed rows', on the part of x already solved, then the diagonal
// block's solve; runtime/blas/level2.c), strsv's plain ones past 2560 rows (the block's solve,
// then gemv N's export on the rest) unless lda is a multiple of 1024 (dtrsv N: never): sizes at the edges and past them with a partial last block,
// unit and stored diagonals, increments 1 and -2 (the blocks' parts of x taken from the end), lda
// past n (3072 for 2600 rows), the solution's residual against the stored matrix in double
// (|b - op(A) x| within tolerance of |b| + |op(A)| |x| row by row), the same bits on 1, 2 and 3
// threads, and x's elements between the strides kept.
template <typename T> void checkTrsvByBlocks(double tolerance) {
  std::mt19937 rng(2616);
  struct Case {
    Kind kind;
    char trans;
    int n, lda;
  };
  std::vector<Case> cases;
  for (int n : {1023, 1024, 1300}) cases.push_back({Kind::Full, 'T', n, n + 3});
  for (int n : {2560, 2561}) cases.push_back({Kind::Packed, 'T', n, 0});
  for (int n : {2560, 2561}) cases.push_back({Kind::Full, 'N', n, n + 3});
  cases.push_back({Kind::Full, 'N', 2600, 3072});
  for (char uplo : {'L', 'U'})
    for (auto [kind, trans, n, lda] : cases) {
      Storage st;
      st.kind = kind, st.m = n, st.n = n, st.lda = lda, st.uplo = uplo;
      std::vector<T> a = randomBuffer<T>(st.size(), rng, -1.0 / n, 1.0 / n);
      for (int i = 0; i < n; ++i) a[size_t(st.at(i, i))] = T(i % 2 ? -2.5 : 2.25);
      for (char diag : {'N', 'U'})
        for (int incx : {1, -2}) {
          // op(A)(i, j): A(i, j) or A(j, i), read from the stored triangle only.
          auto opA = [&](int i, int j) -> double {
            if (i == j) return diag == 'U' ? 1.0 : double(a[size_t(st.at(i, i))]);
            if (trans == 'T') std::swap(i, j);
            const bool stored = uplo == 'U' ? i < j : i > j;
            return stored ? double(a[size_t(st.at(i, j))]) : 0.0;
          };
          Walk wx{n, incx};
          std::vector<T> x = randomBuffer<T>(wx.size(), rng);
          SCOPED_TRACE(testing::Message() << (kind == Kind::Full ? "trsv " : "tpsv ") << uplo << " " << trans << " n " << n
                                          << " lda " << lda << " diag " << diag << " incx " << incx);
          auto call = [&](std::vector<T> &got) {
            if (kind == Kind::Full)
              Blas<T>::trsv(&uplo, &trans, &diag, &n, a.data(), &st.lda, got.data(), &incx, 1, 1, 1);
            else
              Blas<T>::tpsv(&uplo, &trans, &diag, &n, a.data(), got.data(), &incx, 1, 1, 1);
          };
          // The residual on one thread; the others must give its bits.
          auto check = [&](const std::vector<T> &got, int threads) {
            for (int i = 0; i < n && threads == 1; ++i) {
              double residual = double(x[wx.pos(i)]), mag = std::fabs(residual);
              for (int j = 0; j < n; ++j) {
                const double term = opA(i, j) * double(got[wx.pos(j)]);
                residual -= term, mag += std::fabs(term);
              }
              ASSERT_LE(std::fabs(residual), tolerance * mag) << "row " << i;
            }
          };
          ASSERT_NO_FATAL_FAILURE(onEveryThreadCount(x, n, incx, call, check));
        }
    }
}

TEST(Level2Threads, TrsvGoesByBlocksOnEveryThreadCount) {
  checkTrsvByBlocks<double>(1e-13);
  checkTrsvByBlocks<float>(2e-5);
}

// ger from 2^20 elements of A runs the export whose columns are 256-bit vectors (_stream), below
// it the 512-bit one (runtime/blas/level2.c's kGerStreamFrom): shapes on both sides of that
// edge, tall and wide, increments 1 and -2 / 3, lda past m, against a double reference; the rows
// between m and lda stay as they were, and each shape's bits are those of both exports called
// directly on the same operands (an element's update is one operation in both). Tolerance:
// two roundings (alpha y_j, then the update) of the terms' magnitudes.
template <typename T, typename Export>
void checkGerAcrossTheStreamEdge(Export cached, Export streamed, double tolerance) {
  std::mt19937 rng(2615);
  struct Shape {
    int m, n;
  };
  for (auto [m, n] : {Shape{1024, 1023}, Shape{1024, 1024}, Shape{701, 1500}, Shape{3, 349526}, Shape{349526, 3}})
    for (auto [incx, incy] : std::vector<std::pair<int, int>>{{1, 1}, {-2, 3}}) {
      const int lda = m + 3;
      std::vector<T> a = randomBuffer<T>(size_t(lda) * size_t(n), rng);
      Walk wx{m, incx}, wy{n, incy};
      std::vector<T> x = randomBuffer<T>(wx.size(), rng), y = randomBuffer<T>(wy.size(), rng);
      const T alpha = T(-0.625);
      SCOPED_TRACE(testing::Message() << "ger " << m << " x " << n << " incx " << incx << " incy " << incy);
      std::vector<T> got = a;
      Blas<T>::ger(&m, &n, &alpha, x.data(), &incx, y.data(), &incy, got.data(), &lda);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < lda; ++i) {
          const size_t p = size_t(i) + size_t(j) * size_t(lda);
          if (i >= m) {
            ASSERT_EQ(got[p], a[p]) << "row " << i << " of column " << j << " past m";
            continue;
          }
          const double term = double(alpha) * double(x[wx.pos(i)]) * double(y[wy.pos(j)]);
          ASSERT_LE(std::fabs(double(got[p]) - (double(a[p]) + term)), tolerance * (std::fabs(double(a[p])) + std::fabs(term)))
              << "element (" << i << ", " << j << ")";
        }
      // Both exports' bits, whichever side of the edge the entry point chose (it alone knows where
      // the edge lies).
      for (auto [name, call] : {std::pair<const char *, Export>{"cached", cached}, {"streamed", streamed}}) {
        std::vector<T> other = a;
        ASSERT_EQ(call(m, n, alpha, x.data(), incx, y.data(), incy, other.data(), lda), 0);
        ASSERT_EQ(got, other) << "the bits differ from the " << name << " export's";
      }
    }
}

TEST(Level2Large, GerMatchesTheReferenceOnBothSidesOfTheStreamEdge) {
  checkGerAcrossTheStreamEdge<double>(spl_blas_dger, spl_blas_dger_stream, 4.5e-16);
  checkGerAcrossTheStreamEdge<float>(spl_blas_sger, spl_blas_sger_stream, 2.4e-7);
}

}  // namespace
