// End to end: kernels transformed by schedule blocks (split, reorder, fuse, parallelize,
// unroll, vectorize) compute what the unscheduled programs compute.
#include "e2e_support.h"
#include "schedules.h"

namespace {

std::vector<float> randomF(int64_t n, uint64_t seed) { return spl_e2e::randomVectorF(n, seed); }

TEST(Schedules, SplitParallelUnrollGemv) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {1, 1}, {15, 7}, {16, 16}, {17, 33}, {1000, 300}}) {
    std::vector<float> a = randomF(n * m, 1), x = randomF(m, 2), y(static_cast<size_t>(n) + 1, -1.0f);
    std::vector<double> want(static_cast<size_t>(n) + 1, 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) want[i] += static_cast<double>(a[i * m + j]) * x[j];
    ASSERT_EQ(spl_sched_gemv(n, m, a.data(), x.data(), y.data()), SPL_OK);
    EXPECT_LT(spl_e2e::relError(y.data(), want.data(), n), spl_e2e::kF32Tolerance) << n << "x" << m;
  }
}

TEST(Schedules, ReorderAndSplitAdd) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 9}, {10, 3}, {64, 65}}) {
    std::vector<float> a = randomF(n * m, 3), b = randomF(n * m, 4), c(static_cast<size_t>(n * m) + 1, -1.0f);
    ASSERT_EQ(spl_sched_add2(n, m, a.data(), b.data(), c.data()), SPL_OK);
    for (int64_t k = 0; k < n * m; ++k) ASSERT_FLOAT_EQ(c[k], a[k] + b[k]) << k;
  }
}

TEST(Schedules, FusedTuple) {
  std::vector<float> x = randomF(37, 5), y0(38, -1.0f), y1(38, -1.0f);
  ASSERT_EQ(spl_sched_twice(37, x.data(), y0.data(), y1.data()), SPL_OK);
  for (int k = 0; k < 37; ++k) {
    ASSERT_FLOAT_EQ(y0[k], x[k] * 2.0f);
    ASSERT_FLOAT_EQ(y1[k], x[k] + 1.0f);
  }
}

}  // namespace
