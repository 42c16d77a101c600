// Loops whose partial sums, minima or maxima loopir/PartialSums writes out (tests/e2e/partial_sums.spl:
// scalar(k, S) over inc(incx) views, S = 3, 4, 5, 8) against plain loops in order: every length
// from 0 to 40 (none, fewer than S, and every remainder of the last step), 1000 and 1001, at
// increments 1, 2, 3, -1 and -2 (a negative one walks x from its far end). Integer sums and
// minima exactly, the f64 sum within its rounding, the maximum exactly with NaN scattered in x
// (max passes over NaN, as the fold does). The elements between the strided ones hold a value
// that would change every result if it were read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "partial_sums.h"

namespace {

/// Where element k of a vector of n with increment inc lies (BLAS's convention).
size_t position(int64_t k, int64_t n, int64_t inc) { return static_cast<size_t>(inc > 0 ? k * inc : (n - 1 - k) * -inc); }

template <typename T> std::vector<T> strided(const std::vector<T> &v, int64_t inc, T between) {
  const int64_t n = static_cast<int64_t>(v.size()), step = inc < 0 ? -inc : inc;
  std::vector<T> out(static_cast<size_t>(n > 0 ? (n - 1) * step + 1 : 0), between);
  for (int64_t k = 0; k < n; ++k) out[position(k, n, inc)] = v[static_cast<size_t>(k)];
  return out;
}

std::vector<int64_t> lengths() {
  std::vector<int64_t> out;
  for (int64_t n = 0; n <= 40; ++n) out.push_back(n);
  out.push_back(1000);
  out.push_back(1001);
  return out;
}

const int64_t kIncrements[] = {1, 2, 3, -1, -2};

TEST(PartialSums, SumsMinimaAndMaximaFollowTheLoopInOrder) {
  std::mt19937 rng(43);
  for (int64_t n : lengths())
    for (int64_t inc : kIncrements) {
      SCOPED_TRACE(testing::Message() << "n " << n << " inc " << inc);
      std::vector<int64_t> xi(static_cast<size_t>(n)), yi(xi.size());
      std::vector<double> xf(xi.size()), yf(xi.size()), xm(xi.size());
      std::vector<int32_t> xs(xi.size());
      int64_t wantDot = 0;
      double wantSum = 0, magnitude = 0, wantMax = -1.0;
      int32_t wantMin = 1000000;
      for (size_t k = 0; k < xi.size(); ++k) {
        xi[k] = int64_t(rng() % 2001) - 1000, yi[k] = int64_t(rng() % 2001) - 1000;
        xf[k] = double(xi[k]) / 7, yf[k] = double(yi[k]) / 3;
        xm[k] = rng() % 5 == 0 ? std::numeric_limits<double>::quiet_NaN() : xf[k];
        xs[k] = int32_t(rng() % 100000) - 50000;
        wantDot += xi[k] * yi[k];
        wantSum += xf[k] * yf[k];
        magnitude += std::fabs(xf[k] * yf[k]);
        wantMax = std::fmax(wantMax, xm[k]);
        wantMin = std::min(wantMin, xs[k]);
      }
      int64_t gotDot = -1;
      ASSERT_EQ(spl_test_dot_i64_three(n, strided(xi, inc, int64_t(1) << 40).data(), inc,
                                       strided(yi, inc, int64_t(1) << 40).data(), inc, &gotDot), 0);
      EXPECT_EQ(gotDot, wantDot);
      double gotSum = -1;
      ASSERT_EQ(spl_test_dot_f64_eight(n, strided(xf, inc, 1e300).data(), inc, strided(yf, inc, 1e300).data(), inc, &gotSum), 0);
      EXPECT_NEAR(gotSum, wantSum, 4 * std::numeric_limits<double>::epsilon() * double(n + 2) * magnitude);
      double gotMax = 0;
      ASSERT_EQ(spl_test_largest_four(n, strided(xm, inc, 1e300).data(), inc, &gotMax), 0);
      EXPECT_EQ(gotMax, wantMax);
      int32_t gotMin = 0;
      ASSERT_EQ(spl_test_smallest_five(n, strided(xs, inc, int32_t(-2000000)).data(), inc, &gotMin), 0);
      EXPECT_EQ(gotMin, wantMin);
    }
}

}  // namespace
