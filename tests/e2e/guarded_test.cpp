// End to end: tests/e2e/guarded.spl, kernels whose loops loopir/GuardRange narrows to where
// their affine guards hold (i64 and i32 arithmetic, both comparison directions, the identity
// of * and an equality guard), against double-precision references on sizes and offsets that
// put the guard's interval before, inside, across and beyond the loop's range.
#include <cmath>
#include <tuple>

#include "e2e_support.h"
#include "guarded.h"

namespace {

std::vector<double> randomD(int64_t n, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n) + 1);
  spl_random_vector(seed, n, v.data());
  return v;
}

/// |got - want| within a few ulps of the sum of the magnitudes of the terms.
void expectClose(const std::vector<double> &got, const std::vector<double> &want, const std::vector<double> &scale,
                 int64_t n, const char *what) {
  for (int64_t i = 0; i < n; ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), 1e-13 * (scale[i] + 1e-300)) << what << " row " << i;
}

class Conv : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(Conv, MatchesReference) {
  auto [n, k, r] = GetParam();
  std::vector<double> w = randomD(k, 11 + k), x = randomD(n, 17 + n);
  std::vector<double> want(static_cast<size_t>(n) + 1, 0.0), scale(want.size(), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < k; ++t) {
      int64_t j = i + t - r;
      if (j >= 0 && j < n) {
        want[i] += w[t] * x[j];
        scale[i] += std::fabs(w[t] * x[j]);
      }
    }
  std::vector<double> y(static_cast<size_t>(n) + 1, -7.0);
  ASSERT_EQ(spl_conv_i64(n, k, w.data(), x.data(), r, y.data()), SPL_OK);
  expectClose(y, want, scale, n, "conv_i64");
  EXPECT_EQ(y[n], -7.0) << "wrote past the end";
  std::vector<double> y32(static_cast<size_t>(n) + 1, -7.0);
  ASSERT_EQ(spl_conv_i32(n, k, w.data(), x.data(), static_cast<int32_t>(r), y32.data()), SPL_OK);
  expectClose(y32, want, scale, n, "conv_i32");
  EXPECT_EQ(y32[n], -7.0) << "wrote past the end";
}

// n, kernel width, shift r: the window [i - r, i - r + k) lies left of, across, inside and right
// of [0, n), including empty arrays and kernels.
INSTANTIATE_TEST_SUITE_P(Shapes, Conv,
                         ::testing::Values(std::make_tuple(0, 3, 1), std::make_tuple(1, 0, 0), std::make_tuple(1, 1, 0),
                                           std::make_tuple(1, 3, 1), std::make_tuple(7, 3, 1), std::make_tuple(7, 3, -5),
                                           std::make_tuple(7, 3, 12), std::make_tuple(7, 20, 9), std::make_tuple(100, 9, 4),
                                           std::make_tuple(100, 9, 0), std::make_tuple(100, 9, 8), std::make_tuple(1000, 33, 16),
                                           std::make_tuple(1000, 33, -40), std::make_tuple(1000, 33, 1040)));

TEST(Guarded, WindowProductUsesTheIdentityOfTimes) {
  for (int64_t n : {0, 1, 5, 64, 301})
    for (int64_t r : {-3, 0, 1, 4, 400}) {
      std::vector<double> x = randomD(n, 5 + n);
      for (double &v : x) v = 1.0 + 0.1 * v;  // products stay near 1
      std::vector<double> want(static_cast<size_t>(n) + 1, 1.0), scale(want.size(), 0.0);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t t = 0; t < n; ++t)
          if (t - i >= -r && t - i <= r) want[i] *= x[t];
        scale[i] = std::fabs(want[i]) * static_cast<double>(n + 1);
      }
      std::vector<double> y(static_cast<size_t>(n) + 1, -7.0);
      ASSERT_EQ(spl_window_prod(n, x.data(), r, y.data()), SPL_OK);
      expectClose(y, want, scale, n, "window_prod");
      EXPECT_EQ(y[n], -7.0);
    }
}

TEST(Guarded, EqualityGuardPicksOneEntry) {
  const int64_t n = 50;
  std::vector<double> x = randomD(n, 3);
  for (int64_t c : {-1, 0, 17, 49, 50, 1000}) {
    std::vector<double> y(static_cast<size_t>(n) + 1, -7.0);
    ASSERT_EQ(spl_pick(n, x.data(), c, y.data()), SPL_OK);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], c >= 0 && c < n ? x[c] : 0.0) << "c " << c << " row " << i;
    EXPECT_EQ(y[n], -7.0);
  }
}

}  // namespace
