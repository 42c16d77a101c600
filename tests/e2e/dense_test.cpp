// End to end: ../shared/spec/examples/dense.spl (generic dot and gemv at f32 and f64).
#include "dense.h"
#include "e2e_support.h"

namespace {

std::vector<double> randomD(int64_t n, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n) + 1);
  spl_random_vector(seed, n, v.data());
  return v;
}

class Dense : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(Dense, DotAndGemv) {
  auto [n, m] = GetParam();
  std::vector<double> ad = randomD(n * m, 1), xd = randomD(m, 2), bd = randomD(m, 3);
  std::vector<float> af(ad.begin(), ad.end()), xf(xd.begin(), xd.end()), bf(bd.begin(), bd.end());
  // Round the doubles through float so both precisions see the same inputs.
  for (size_t i = 0; i < ad.size(); ++i) ad[i] = af[i];
  for (size_t i = 0; i < xd.size(); ++i) xd[i] = xf[i];
  for (size_t i = 0; i < bd.size(); ++i) bd[i] = bf[i];

  double dotWant = 0;
  for (int64_t j = 0; j < m; ++j) dotWant += xd[j] * bd[j];
  float sdot = -1;
  ASSERT_EQ(spl_sdot(m, xf.data(), bf.data(), &sdot), SPL_OK);
  EXPECT_LT(spl_e2e::relError(&sdot, &dotWant, 1), spl_e2e::kF32Tolerance);
  double ddot = -1;
  ASSERT_EQ(spl_ddot(m, xd.data(), bd.data(), &ddot), SPL_OK);
  EXPECT_NEAR(ddot, dotWant, 1e-12 * std::max(1.0, std::fabs(dotWant)));

  std::vector<double> want(static_cast<size_t>(n) + 1, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) want[i] += ad[i * m + j] * xd[j];
  std::vector<float> ys(static_cast<size_t>(n) + 1, -7);
  ASSERT_EQ(spl_sgemv(n, m, af.data(), xf.data(), ys.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(ys.data(), want.data(), n), spl_e2e::kF32Tolerance);
  std::vector<double> yd(static_cast<size_t>(n) + 1, -7);
  ASSERT_EQ(spl_dgemv(n, m, ad.data(), xd.data(), yd.data()), SPL_OK);
  EXPECT_LT(spl_rel_error_f64(yd.data(), want.data(), n), spl_e2e::kF64Tolerance);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Dense,
                         ::testing::Values(std::make_pair(0, 0), std::make_pair(1, 1), std::make_pair(1, 1000),
                                           std::make_pair(1000, 1), std::make_pair(7, 13), std::make_pair(64, 64),
                                           std::make_pair(257, 129), std::make_pair(500, 3000)));

}  // namespace
