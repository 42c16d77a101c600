// libsplblas's level 1 through its Fortran entry points, against references written here in
// double precision that follow the reference BLAS's loops (a negative increment walks from the
// far end; an increment of 0 visits one element n times, in order). Seeded random vectors of
// lengths 0 to 1000 with increments 1, 2, 3, -1, -3 and 0, in buffers with guard elements
// between and after the strided ones, which must come back untouched.
#include <gtest/gtest.h>

#include "blas1.h"
#include "spl_runtime.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <random>
#include <vector>

extern "C" {
void saxpy_(const int *, const float *, const float *, const int *, float *, const int *);
void daxpy_(const int *, const double *, const double *, const int *, double *, const int *);
void scopy_(const int *, const float *, const int *, float *, const int *);
void dcopy_(const int *, const double *, const int *, double *, const int *);
void sswap_(const int *, float *, const int *, float *, const int *);
void dswap_(const int *, double *, const int *, double *, const int *);
void srot_(const int *, float *, const int *, float *, const int *, const float *, const float *);
void drot_(const int *, double *, const int *, double *, const int *, const double *, const double *);
void srotm_(const int *, float *, const int *, float *, const int *, const float *);
void drotm_(const int *, double *, const int *, double *, const int *, const double *);
void sscal_(const int *, const float *, float *, const int *);
void dscal_(const int *, const double *, double *, const int *);
float sdot_(const int *, const float *, const int *, const float *, const int *);
double ddot_(const int *, const double *, const int *, const double *, const int *);
double dsdot_(const int *, const float *, const int *, const float *, const int *);
float sdsdot_(const int *, const float *, const float *, const int *, const float *, const int *);
float snrm2_(const int *, const float *, const int *);
double dnrm2_(const int *, const double *, const int *);
float sasum_(const int *, const float *, const int *);
double dasum_(const int *, const double *, const int *);
int isamax_(const int *, const float *, const int *);
int idamax_(const int *, const double *, const int *);
void srotg_(float *, float *, float *, float *);
void drotg_(double *, double *, double *, double *);
}

namespace {

// The Fortran names of one precision.
template <typename T> struct Blas;
template <> struct Blas<float> {
  static constexpr auto axpy = saxpy_;
  static constexpr auto copy = scopy_;
  static constexpr auto swap = sswap_;
  static constexpr auto rot = srot_;
  static constexpr auto rotm = srotm_;
  static constexpr auto scal = sscal_;
  static constexpr auto dot = sdot_;
  static constexpr auto nrm2 = snrm2_;
  static constexpr auto asum = sasum_;
  static constexpr auto iamax = isamax_;
  static constexpr auto rotg = srotg_;
  static constexpr double tol = 2e-5;
};
template <> struct Blas<double> {
  static constexpr auto axpy = daxpy_;
  static constexpr auto copy = dcopy_;
  static constexpr auto swap = dswap_;
  static constexpr auto rot = drot_;
  static constexpr auto rotm = drotm_;
  static constexpr auto scal = dscal_;
  static constexpr auto dot = ddot_;
  static constexpr auto nrm2 = dnrm2_;
  static constexpr auto asum = dasum_;
  static constexpr auto iamax = idamax_;
  static constexpr auto rotg = drotg_;
  static constexpr double tol = 1e-12;
};

const int kLengths[] = {0, 1, 2, 3, 7, 33, 100, 1000};
const int kIncrements[] = {1, 2, 3, -1, -3, 0};

// A strided vector in a buffer with guards: element k of the walk is at position(k).
template <typename T> struct Strided {
  int n, inc;
  std::vector<T> buf;
  Strided(int n_, int inc_, std::mt19937 &rng) : n(n_), inc(inc_) {
    size_t len = 1 + (n > 0 ? size_t(n - 1) * size_t(std::abs(inc)) : 0) + 4;
    std::uniform_real_distribution<double> d(-2.0, 2.0);
    for (size_t i = 0; i < len; ++i) buf.push_back(T(d(rng)));
  }
  // Fortran: the walk starts at 1 + (1 - n) * inc when inc < 0.
  size_t position(int k) const { return inc >= 0 ? size_t(k) * size_t(inc) : size_t(n - 1 - k) * size_t(-inc); }
  T *data() { return buf.data(); }
};

template <typename T> void expectSame(const std::vector<T> &got, const std::vector<double> &want, const char *what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(double(got[i]), want[i], Blas<T>::tol * (1 + std::fabs(want[i]))) << what << " element " << i;
}

template <typename T> std::vector<double> widen(const std::vector<T> &v) { return std::vector<double>(v.begin(), v.end()); }

template <typename T> class Level1 : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Level1, Precisions);

TYPED_TEST(Level1, TwoVectorRoutinesFollowTheReferenceLoops) {
  using T = TypeParam;
  std::mt19937 rng(26);
  for (int n : kLengths)
    for (int incx : kIncrements)
      for (int incy : kIncrements) {
        if ((incx == 0 || incy == 0) && n > 33) continue;  // one element n times: short is enough
        SCOPED_TRACE(testing::Message() << "n " << n << " incx " << incx << " incy " << incy);
        Strided<T> x(n, incx, rng), y(n, incy, rng);
        const T alpha = T(0.75), c = T(0.6), s = T(0.8);
        // axpy
        {
          std::vector<double> want = widen(y.buf);
          for (int k = 0; k < n; ++k) want[y.position(k)] += double(alpha) * double(x.buf[x.position(k)]);
          std::vector<T> got = y.buf;
          Blas<T>::axpy(&n, &alpha, x.data(), &incx, got.data(), &incy);
          expectSame(got, want, "axpy");
        }
        // copy
        {
          std::vector<double> want = widen(y.buf);
          for (int k = 0; k < n; ++k) want[y.position(k)] = double(x.buf[x.position(k)]);
          std::vector<T> got = y.buf;
          Blas<T>::copy(&n, x.data(), &incx, got.data(), &incy);
          expectSame(got, want, "copy");
        }
        // swap, rot, rotm: both vectors change (unless they share an element through a 0 step,
        // where the reference's sequential loop is the definition).
        {
          std::vector<double> wx = widen(x.buf), wy = widen(y.buf);
          for (int k = 0; k < n; ++k) std::swap(wx[x.position(k)], wy[y.position(k)]);
          std::vector<T> gx = x.buf, gy = y.buf;
          Blas<T>::swap(&n, gx.data(), &incx, gy.data(), &incy);
          expectSame(gx, wx, "swap x");
          expectSame(gy, wy, "swap y");
        }
        {
          std::vector<double> wx = widen(x.buf), wy = widen(y.buf);
          for (int k = 0; k < n; ++k) {
            double a = wx[x.position(k)], b = wy[y.position(k)];
            wx[x.position(k)] = double(c) * a + double(s) * b;
            wy[y.position(k)] = double(c) * b - double(s) * a;
          }
          std::vector<T> gx = x.buf, gy = y.buf;
          Blas<T>::rot(&n, gx.data(), &incx, gy.data(), &incy, &c, &s);
          expectSame(gx, wx, "rot x");
          expectSame(gy, wy, "rot y");
        }
        for (T flag : {T(-1), T(0), T(1), T(-2)}) {
          const T p[5] = {flag, T(0.5), T(-0.25), T(1.5), T(2)};
          double h11 = flag == 0 ? 1 : p[1], h21 = flag > 0 ? -1 : p[2], h12 = flag > 0 ? 1 : p[3], h22 = flag == 0 ? 1 : p[4];
          std::vector<double> wx = widen(x.buf), wy = widen(y.buf);
          if (flag != -2)
            for (int k = 0; k < n; ++k) {
              double a = wx[x.position(k)], b = wy[y.position(k)];
              wx[x.position(k)] = h11 * a + h12 * b;
              wy[y.position(k)] = h21 * a + h22 * b;
            }
          std::vector<T> gx = x.buf, gy = y.buf;
          Blas<T>::rotm(&n, gx.data(), &incx, gy.data(), &incy, p);
          expectSame(gx, wx, "rotm x");
          expectSame(gy, wy, "rotm y");
        }
        // dot
        {
          double want = 0;
          for (int k = 0; k < n; ++k) want += double(x.buf[x.position(k)]) * double(y.buf[y.position(k)]);
          double got = Blas<T>::dot(&n, x.data(), &incx, y.data(), &incy);
          EXPECT_NEAR(got, want, Blas<T>::tol * (n + 1) * 4) << "dot";
          if constexpr (std::is_same_v<T, float>) {
            EXPECT_NEAR(dsdot_(&n, x.data(), &incx, y.data(), &incy), want, 1e-12 * (n + 1)) << "dsdot";
            const float sb = 0.5f;
            EXPECT_NEAR(sdsdot_(&n, &sb, x.data(), &incx, y.data(), &incy), float(0.5 + want), 1e-5 * (n + 1)) << "sdsdot";
          }
        }
      }
}

// axpy from 2^20 elements runs the streamed export (runtime/blas/level1.c): the same reference
// loop at and around that length, with increments of either sign, y's guard elements untouched.
TYPED_TEST(Level1, AxpyBeyondTheCachesFollowsTheReferenceLoop) {
  using T = TypeParam;
  std::mt19937 rng(2620);
  for (int n : {(1 << 20) - 1, 1 << 20, (1 << 20) + 37})
    for (auto [incx, incy] : {std::pair{1, 1}, std::pair{-1, 2}, std::pair{3, -1}}) {
      SCOPED_TRACE(testing::Message() << "n " << n << " incx " << incx << " incy " << incy);
      Strided<T> x(n, incx, rng), y(n, incy, rng);
      const T alpha = T(-0.375);
      std::vector<double> want = widen(y.buf);
      for (int k = 0; k < n; ++k) want[y.position(k)] += double(alpha) * double(x.buf[x.position(k)]);
      std::vector<T> got = y.buf;
      Blas<T>::axpy(&n, &alpha, x.data(), &incx, got.data(), &incy);
      expectSame(got, want, "axpy");
    }
}

TYPED_TEST(Level1, OneVectorRoutinesReturnAtOnceWithoutAPositiveIncrement) {
  using T = TypeParam;
  std::mt19937 rng(27);
  for (int n : kLengths)
    for (int incx : kIncrements) {
      SCOPED_TRACE(testing::Message() << "n " << n << " incx " << incx);
      Strided<T> x(n, incx, rng);
      bool acts = n > 0 && incx > 0;
      double nrm = 0, big = -1, asum = 0;
      int best = 0;  // the first largest |x_k|, from 1
      for (int k = 0; acts && k < n; ++k) {
        double v = std::fabs(double(x.buf[x.position(k)]));
        asum += v;
        nrm += v * v;
        if (v > big) big = v, best = k + 1;
      }
      EXPECT_NEAR(Blas<T>::nrm2(&n, x.data(), &incx), std::sqrt(nrm), Blas<T>::tol * (1 + std::sqrt(nrm)) * 4) << "nrm2";
      EXPECT_NEAR(Blas<T>::asum(&n, x.data(), &incx), asum, Blas<T>::tol * (1 + asum) * 4) << "asum";
      EXPECT_EQ(Blas<T>::iamax(&n, x.data(), &incx), best) << "iamax";
      const T alpha = T(-1.5);
      std::vector<double> want = widen(x.buf);
      for (int k = 0; acts && k < n; ++k) want[x.position(k)] *= double(alpha);
      std::vector<T> got = x.buf;
      Blas<T>::scal(&n, &alpha, got.data(), &incx);
      expectSame(got, want, "scal");
    }
}

TYPED_TEST(Level1, Nrm2NeitherOverflowsNorUnderflows) {
  using T = TypeParam;
  const int n = 3, one = 1;
  const T huge = std::numeric_limits<T>::max() / 4, tiny = std::numeric_limits<T>::min() * 4;
  T big[n] = {huge, huge, T(0)}, small[n] = {tiny, T(0), tiny};
  EXPECT_NEAR(double(Blas<T>::nrm2(&n, big, &one)) / (double(huge) * std::sqrt(2.0)), 1.0, 1e-6);
  EXPECT_NEAR(double(Blas<T>::nrm2(&n, small, &one)) / (double(tiny) * std::sqrt(2.0)), 1.0, 1e-6);
  // Subnormal: scaled up by a power of the radix (3-4-5 is exact).
  const T sub = std::numeric_limits<T>::denorm_min();
  T subnormal[n] = {3 * sub, T(0), 4 * sub};
  EXPECT_EQ(Blas<T>::nrm2(&n, subnormal, &one), 5 * sub);
  // The three sums of the one pass combined: a tiny element beside ordinary ones, a huge one
  // beside an ordinary one (the reference's results), and a NaN in any company stays NaN.
  T mixed[n] = {tiny, T(3), T(4)}, bigAndOne[n] = {huge, T(1), T(0)};
  EXPECT_EQ(Blas<T>::nrm2(&n, mixed, &one), T(5));
  EXPECT_EQ(Blas<T>::nrm2(&n, bigAndOne, &one), huge);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  T withNan[][n] = {{T(1), nan, T(2)}, {huge, nan, T(0)}, {tiny, nan, T(0)}, {nan, T(0), T(0)}};
  for (T *v : withNan) EXPECT_TRUE(std::isnan(Blas<T>::nrm2(&n, v, &one))) << v[0];
}

// nrm2 sums squares over blocks of 4096 elements (run on the pool) and takes Blue's pass only
// when some element lies outside his middle range: a vector of 10000 (two whole blocks and a
// partial one) against a double-precision sum, then one element past tbig or one nonzero below
// tsml placed in the last block, an infinity, and a stride of 2 over the same elements.
TYPED_TEST(Level1, Nrm2AcrossBlocksTakesBluesPassOnlyWhenNeeded) {
  using T = TypeParam;
  const int n = 10000, one = 1;
  std::vector<T> x(n);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = T((i % 17) - 8) / T(4);
    sum += double(x[i]) * double(x[i]);
  }
  const double tol = std::is_same<T, float>::value ? 1e-5 : 1e-13;
  EXPECT_NEAR(double(Blas<T>::nrm2(&n, x.data(), &one)) / std::sqrt(sum), 1.0, tol);
  // At stride 2, the elements between (huge) never read.
  std::vector<T> strided(2 * n, std::numeric_limits<T>::max());
  for (int i = 0; i < n; ++i) strided[2 * i] = x[i];
  const int two = 2;
  EXPECT_NEAR(double(Blas<T>::nrm2(&n, strided.data(), &two)) / std::sqrt(sum), 1.0, tol);
  const T huge = std::numeric_limits<T>::max() / 4, tiny = std::numeric_limits<T>::min() * 4;
  std::vector<T> withHuge = x;
  withHuge[9000] = -huge;
  EXPECT_NEAR(double(Blas<T>::nrm2(&n, withHuge.data(), &one)) / double(huge), 1.0, tol);
  std::vector<T> tinies(n, T(0));
  tinies[5000] = tiny;
  tinies[9999] = -tiny;
  EXPECT_NEAR(double(Blas<T>::nrm2(&n, tinies.data(), &one)) / (double(tiny) * std::sqrt(2.0)), 1.0, 1e-6);
  std::vector<T> withInf = x;
  withInf[7000] = std::numeric_limits<T>::infinity();
  EXPECT_EQ(Blas<T>::nrm2(&n, withInf.data(), &one), std::numeric_limits<T>::infinity());
}

// From 64 elements nrm2 takes the root of its sum of squares where that sum lies in
// [plainNormFloor, tbig^2) (stdlib/blas1.spl: 2^-866 in f64, 2^-54 in f32) and Blue's pass
// elsewhere: vectors of random elements scaled by powers of two from T's subnormal range to past
// tbig (sums on either side of both bounds), ordinary elements beside nonzero ones below tsml
// (the plain sum, which they cannot change by half an ulp), against a sum scaled by the largest
// element in long double, on one block and several, at increments 1 and 2 (dnrm2's blocks over
// the strided x from level1.c's kStridedDnrm2BlocksFrom).
TYPED_TEST(Level1, Nrm2TakesThePlainSumOnlyBetweenItsBounds) {
  using T = TypeParam;
  const bool f32 = std::is_same<T, float>::value;
  const double tol = f32 ? 1e-5 : 1e-13;
  const int exponents64[] = {-1060, -600, -520, -440, -434, -300, 0, 300, 470, 480, 486, 490, 1000};
  const int exponents32[] = {-140, -80, -64, -40, -33, -20, 0, 20, 45, 50, 52, 55, 120};
  std::mt19937 rng(3203);
  std::uniform_real_distribution<double> mant(-1, 1);
  for (int n : {64, 100, 4096, 4097, 10000, 16383, 16384, 16385})
    for (int e : f32 ? exponents32 : exponents64)
      for (int mixed = 0; mixed < 2; ++mixed) {
        SCOPED_TRACE(testing::Message() << "n " << n << " 2^" << e << (mixed ? " beside tiny ones" : ""));
        std::vector<T> v(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
          v[size_t(i)] = mixed && i % 7 == 3 ? T(std::numeric_limits<T>::min() / T(4 + i % 5))
                                             : T(std::ldexp(mant(rng), e));
        long double scale = 0, sum = 0;
        for (T a : v) scale = std::max(scale, std::fabs((long double)a));
        if (scale == 0) continue;
        for (T a : v) sum += ((long double)a / scale) * ((long double)a / scale);
        const double want = double(scale * std::sqrt(sum));
        if (!std::isfinite(want)) continue;
        const int one = 1, two = 2;
        std::vector<T> strided(2 * size_t(n), std::numeric_limits<T>::max());
        for (int i = 0; i < n; ++i) strided[2 * size_t(i)] = v[size_t(i)];
        // A subnormal norm holds fewer digits: the reference BLAS's is as far off.
        const double slack = want * tol + 2 * double(std::numeric_limits<T>::denorm_min());
        EXPECT_NEAR(double(Blas<T>::nrm2(&n, v.data(), &one)), want, slack);
        EXPECT_NEAR(double(Blas<T>::nrm2(&n, strided.data(), &two)), want, slack);
      }
}

// With an increment other than 1, long vectors run the blocks' loops in four partial sums over
// the strided x (dnrm2) or sum the squares in f64 (snrm2: snrm2InF64), and iamax its blocks'
// maxima and search in four partial ones (level1.c's _strided_blocks exports), the blocks on
// the pool from 2^20 elements on: against a double-precision sum and the reference's search, on either side of 2^20,
// with a huge and a tiny element, an infinity and a NaN, at increments 2 and 3 (the elements
// between, the largest finite, never read).
TYPED_TEST(Level1, LongStridedVectorsFollowTheReference) {
  using T = TypeParam;
  const T big = std::numeric_limits<T>::max();
  const double kTolerance = std::is_same<T, float>::value ? 1e-6 : 1e-13;
  std::mt19937 rng(2643);
  for (int n : {(1 << 20) - 1, 1 << 20, (1 << 20) + 4097})
    for (int inc : {2, 3})
      for (int round = 0; round < 4; ++round) {
        SCOPED_TRACE(testing::Message() << "n " << n << " inc " << inc << " round " << round);
        std::vector<T> v(static_cast<size_t>(n));
        for (T &e : v) e = T(int(rng() % 2001) - 1000) / T(256);
        if (round == 1) v[size_t(n - 1)] = big / 8;                          // past tbig, last
        if (round == 1) v[size_t(n / 2)] = std::numeric_limits<T>::min();    // below tsml
        if (round == 2) v[size_t(n - 3)] = std::numeric_limits<T>::infinity();
        if (round == 3) v[size_t(n / 3)] = std::numeric_limits<T>::quiet_NaN();
        std::vector<T> x(static_cast<size_t>(n) * static_cast<size_t>(inc), big);
        for (int i = 0; i < n; ++i) x[size_t(i) * size_t(inc)] = v[size_t(i)];
        double scale = 0, sum = 0;
        for (T e : v) scale = std::max(scale, std::abs(double(e)));
        for (T e : v) sum += (double(e) / scale) * (double(e) / scale);
        const double want = scale * std::sqrt(sum);
        const T got = Blas<T>::nrm2(&n, x.data(), &inc);
        if (round == 2) EXPECT_EQ(got, std::numeric_limits<T>::infinity());
        else if (round == 3) EXPECT_TRUE(std::isnan(got));
        else EXPECT_NEAR(double(got) / want, 1.0, kTolerance);
        int first = 1;
        for (int i = 1; i < n; ++i)
          if (std::abs(v[size_t(i)]) > std::abs(v[size_t(first - 1)])) first = i + 1;
        EXPECT_EQ(Blas<T>::iamax(&n, x.data(), &inc), first);
      }
}

// A vector of one block (up to 4096 elements) takes the block's loop without the blocks' loop
// (stdlib/blas1.spl's sumsShortOrByBlocks), a longer one the blocks: both sides of that edge and
// of dnrm2's scalar loop (64), against a double-precision sum, with Blue's pass wanted by an
// element past tbig or a nonzero one below tsml in the last position, and at stride 2 (the
// elements between, the largest finite, never read).
TYPED_TEST(Level1, Nrm2OnBothSidesOfTheOneBlockEdge) {
  using T = TypeParam;
  const T huge = std::numeric_limits<T>::max() / 4, tiny = std::numeric_limits<T>::min() * 4;
  const double tol = std::is_same<T, float>::value ? 1e-5 : 1e-13;
  for (const int n : {1, 31, 32, 63, 64, 100, 4095, 4096, 4097, 8193}) {
    std::vector<T> x(n), strided(2 * n, std::numeric_limits<T>::max());
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      x[i] = T((i * 7) % 23 - 11) / T(8);
      sum += double(x[i]) * double(x[i]);
      strided[2 * i] = x[i];
    }
    const int one = 1, two = 2;
    const double want = std::sqrt(sum);
    if (want == 0) continue;
    EXPECT_NEAR(double(Blas<T>::nrm2(&n, x.data(), &one)) / want, 1.0, tol) << n;
    EXPECT_NEAR(double(Blas<T>::nrm2(&n, strided.data(), &two)) / want, 1.0, tol) << n;
    std::vector<T> withHuge = x, withTiny(n, T(0));
    withHuge[n - 1] = huge;
    withTiny[n - 1] = -tiny;
    EXPECT_NEAR(double(Blas<T>::nrm2(&n, withHuge.data(), &one)) / double(huge), 1.0, tol) << n;
    EXPECT_NEAR(double(Blas<T>::nrm2(&n, withTiny.data(), &one)) / double(tiny), 1.0, 1e-6) << n;
    // The same at stride 2 (snrm2: its squares in f64 at any length; dnrm2: its copy from 32).
    std::vector<T> hugeStrided = strided, tinyStrided(2 * n, std::numeric_limits<T>::max());
    hugeStrided[2 * (n - 1)] = huge;
    for (int i = 0; i < n; ++i) tinyStrided[2 * i] = i == n - 1 ? -tiny : T(0);
    EXPECT_NEAR(double(Blas<T>::nrm2(&n, hugeStrided.data(), &two)) / double(huge), 1.0, tol) << n;
    EXPECT_NEAR(double(Blas<T>::nrm2(&n, tinyStrided.data(), &two)) / double(tiny), 1.0, 1e-6) << n;
  }
}

// dnrm2 of fewer than 64 elements has the reference BLAS's bits (LAPACK's Householder
// reflections, DLARFG, take such norms of its columns): each square rounded, then added to the
// sum in order, then the root (stdlib/blas1.spl's nrm2ShortInOrder: one scalar loop, and its
// schedule says fp_contract(off)); snrm2 keeps its vector sums (blas1.spl says why). A
// multiply-add had rounded x1*x1 + x0^2 once, 0.7 ulp off where the reference is 0.3 off or the
// other way, and LAPACK's DGEES declined a swap of an ill-conditioned pair of eigenvalues in its
// ded.in tests on an AVX2 CPU. Volatile: the reference's two roundings, whatever this file's
// compiler contracts. The same bits at increment 3.
TEST(Level1F64, Nrm2OfAShortVectorRoundsAsTheReference) {
  using T = double;
  std::mt19937 rng(2611);
  std::uniform_real_distribution<double> mant(-1, 1);
  std::uniform_int_distribution<int> exp(-30, 30), len(1, 63);
  int differ = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int n = trial < 63 ? trial + 1 : len(rng), one = 1;
    std::vector<T> x(n);
    for (T &v : x) v = T(std::ldexp(mant(rng), exp(rng) / (trial % 2 ? 4 : 1)));
    volatile T sum = 0;
    for (T v : x) {
      volatile T square = v * v;
      sum = T(sum) + T(square);
    }
    T want = std::sqrt(T(sum));
    T got = Blas<T>::nrm2(&n, x.data(), &one);
    if (got != want && ++differ <= 5) ADD_FAILURE() << "n " << n << ": " << got << " against " << want;
    // At increment 3 (level1.c's _strided_short export, the same squares in order).
    std::vector<T> strided(3 * size_t(n), T(7));
    for (int i = 0; i < n; ++i) strided[3 * size_t(i)] = x[size_t(i)];
    const int three = 3;
    T gotStrided = Blas<T>::nrm2(&n, strided.data(), &three);
    if (gotStrided != want && ++differ <= 5) ADD_FAILURE() << "n " << n << " strided: " << gotStrided << " against " << want;
  }
  EXPECT_EQ(differ, 0);
}

TYPED_TEST(Level1, RotgZeroesTheSecondComponent) {
  using T = TypeParam;
  const T cases[][2] = {{3, 4}, {-3, 4}, {4, -3}, {0, 2}, {2, 0}, {0, 0}, {1e-3, -7}};
  for (const auto &ab : cases) {
    T a = ab[0], b = ab[1], c = 0, s = 0;
    Blas<T>::rotg(&a, &b, &c, &s);
    double r = a;
    EXPECT_NEAR(double(c) * ab[0] + double(s) * ab[1], r, 1e-5 * (1 + std::fabs(r))) << ab[0] << ", " << ab[1];
    EXPECT_NEAR(-double(s) * ab[0] + double(c) * ab[1], 0.0, 1e-5 * (1 + std::fabs(r))) << ab[0] << ", " << ab[1];
    EXPECT_NEAR(double(c) * c + double(s) * s, 1.0, 1e-5);
  }
}

// iamax's edges, which random vectors do not reach: the first of equal magnitudes (of either
// sign), a NaN after the first element passed over as the reference's `>` passes it, a vector of
// NaNs answered 1, and a strided vector read at its stride only.
TYPED_TEST(Level1, IamaxTakesTheFirstLargestAndPassesOverNaN) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  auto iamax = [](std::vector<T> v, int inc) {
    int n = int((v.size() + size_t(inc) - 1) / size_t(inc));
    return Blas<T>::iamax(&n, v.data(), &inc);
  };
  EXPECT_EQ(iamax({1, -3, 2, 3, -3}, 1), 2);
  EXPECT_EQ(iamax({0, 0, 0}, 1), 1);
  EXPECT_EQ(iamax({1, nan, 5, 2}, 1), 3);
  EXPECT_EQ(iamax({nan, nan}, 1), 1);
  // A NaN first: the reference's |x_1| is NaN, which no later element exceeds.
  EXPECT_EQ(iamax({nan, 1, 5, 2}, 1), 1);
  EXPECT_EQ(iamax({nan, 100, 2, 100, 7}, 2), 1);
  EXPECT_EQ(iamax({1, 100, 2, 100, 7}, 2), 3);  // 1, 2, 7: the 7 at position 3
  std::vector<T> big(5000, T(1));
  big[4321] = T(-2);
  big[4999] = T(2);
  EXPECT_EQ(iamax(big, 1), 4322);
  // iamax goes by blocks of 256 (stdlib/blas1.spl): ties across and at the edges of blocks,
  // the largest in a last partial block, NaN filling a block, NaN scattered through the blocks'
  // maxima (loopir/MinMaxReductions guards them), against the reference's loop. From 2^20
  // elements on, the streamed export (runtime/blas/level1.c), the same at its edge; up to 256
  // with a unit stride the short search alone (iamaxShort, specialized by the length: its three
  // vector widths' edges at 32 and 128, the remainders of 4, 8 and 16 lanes a step); and every
  // case strided.
  std::mt19937 rng(2611);
  for (int n : {1, 2, 3, 5, 7, 15, 16, 17, 31, 32, 33, 47, 48, 49, 95, 96, 97, 100, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 5000, (1 << 20) - 1,
                1 << 20, (1 << 20) + 257}) {
    for (int round = 0; round < 6; ++round) {
      std::vector<T> v(static_cast<size_t>(n));
      for (T &e : v) e = T(int(rng() % 9) - 4);  // few values: many ties
      if (round == 1) v[size_t(n - 1)] = T(9);  // the largest last
      if (round == 3) v[0] = nan;  // the first element NaN: 1 whatever follows
      if (round == 2 && n > 256) {
        for (int i = 1; i < 256; ++i) v[size_t(i)] = nan;  // NaN past the first element
        v[size_t(n / 2 + 128)] = T(-7);
        v[size_t(n - 1)] = T(7);
      }
      if (round >= 4)  // NaN at random places after the first, the largest among them
        for (int i = 1; i < n; ++i)
          if (rng() % 5 == 0) v[size_t(i)] = nan;
      if (round == 5 && n > 3) v[size_t(n / 3)] = T(-8);
      int want = 1;
      for (int i = 1; i < n; ++i)
        if (std::abs(v[size_t(i)]) > std::abs(v[size_t(want - 1)])) want = i + 1;
      SCOPED_TRACE(testing::Message() << "n " << n << " round " << round);
      EXPECT_EQ(iamax(v, 1), want);
      // The same vector at increments 2 and 3, between its elements a larger one never to be
      // read: from 96 elements below 2^20 the export that copies it first (level1.c's _strided),
      // below 96 the short search's four partial maxima (_strided_short: lengths 1-7 leave
      // some or all of their elements to the partial sums' remainder loop), else the strided
      // loops.
      for (int inc : {2, 3}) {
        std::vector<T> strided(size_t(n) * size_t(inc), T(100));
        for (int i = 0; i < n; ++i) strided[size_t(i) * size_t(inc)] = v[size_t(i)];
        EXPECT_EQ(iamax(strided, inc), want) << "increment " << inc;
      }
    }
  }
}

// A dot product of one block (up to 4096 elements) is the plain dot, past one block the sums of
// blocks on the pool (stdlib/blas1.spl's dotByBlocks chooses by n): ?dot_ gives the export's
// result, near the reference loop in double precision on either side of the block. Lengths
// around the block and the aligned stream's 512 (and 1 and 7: shorter than, and not a multiple
// of, the strided export's four partial sums), increments 1, -1, 2 and 3.
TYPED_TEST(Level1, DotOnEitherSideOfOneBlockFollowsTheReference) {
  using T = TypeParam;
  std::mt19937 rng(2612);
  for (int n : {1, 7, 511, 512, 1000, 4095, 4096, 4097, 9000})
    for (int inc : {1, -1, 2, 3}) {
      SCOPED_TRACE(testing::Message() << "n " << n << " inc " << inc);
      Strided<T> x(n, inc, rng), y(n, inc, rng);
      // dot_ takes the export of four partial sums for an increment other than 1 (level1.c).
      T exported = T(-1);
      if constexpr (std::is_same_v<T, float>)
        ASSERT_EQ((inc == 1 ? spl_blas_sdot : spl_blas_sdot_strided)(n, x.data(), inc, y.data(), inc, &exported), 0);
      else
        ASSERT_EQ((inc == 1 ? spl_blas_ddot : spl_blas_ddot_strided)(n, x.data(), inc, y.data(), inc, &exported), 0);
      double want = 0, magnitude = 0;
      for (int k = 0; k < n; ++k) {
        want += double(x.buf[x.position(k)]) * double(y.buf[y.position(k)]);
        magnitude += std::fabs(double(x.buf[x.position(k)]) * double(y.buf[y.position(k)]));
      }
      const double bound = 4 * double(std::numeric_limits<T>::epsilon()) * (n + 2) * magnitude;
      const T got = Blas<T>::dot(&n, x.data(), &inc, y.data(), &inc);
      EXPECT_NEAR(double(got), want, bound);
      EXPECT_EQ(got, exported);
    }
}

// asum chooses the same way (one loop up to one block, the blocks' sums on the pool past it):
// near the reference on either side, on one and two threads, every increment's elements only.
TYPED_TEST(Level1, AsumOnEitherSideOfOneBlockFollowsTheReference) {
  using T = TypeParam;
  std::mt19937 rng(2613);
  for (int threads : {1, 2}) {
    spl_set_num_threads(threads);
    for (int n : {1, 255, 256, 257, 4095, 4096, 4097, 9000, 100003})
      for (int inc : {1, 3}) {
        SCOPED_TRACE(testing::Message() << "n " << n << " inc " << inc << " threads " << threads);
        Strided<T> x(n, inc, rng);
        double want = 0;
        for (int k = 0; k < n; ++k) want += std::fabs(double(x.buf[x.position(k)]));
        const double bound = 4 * double(std::numeric_limits<T>::epsilon()) * (n + 2) * want;
        EXPECT_NEAR(double(Blas<T>::asum(&n, x.data(), &inc)), want, bound);
      }
  }
  spl_set_num_threads(0);
}

}  // namespace
