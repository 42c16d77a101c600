// GPU execution tests of temporary arrays inside kernels (ctest labels gpu and gpu_emulated):
// each row's prefix sum of gpu_temps.spl is a per-thread temporary, from the device heap (k a
// run-time size) or in local memory (k = 4), read at gathered positions. Each CPU export is
// checked against a double-precision reference computed here, and each cuda export against its
// CPU twin, on seeded random data, empty and single shapes included.
#include <random>

#include "gpu_support.h"
#include "gpu_temps.h"
#include "spl_runtime.h"

namespace {

using spl_gpu_test::DeviceBuffer;
using spl_gpu_test::maxRel;

struct Rows {
  std::vector<float> a;
  std::vector<int32_t> p;
};

/// n rows of k values in [-1, 1] and k gather positions in [0, k] (position k reads the total).
Rows randomRows(int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  Rows r;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t i = 0; i < n * k; ++i) r.a.push_back(value(rng));
  for (int64_t i = 0; i < n * k; ++i) r.p.push_back(std::uniform_int_distribution<int32_t>(0, static_cast<int32_t>(k) - 1)(rng));
  return r;
}

/// out[i] = sum over j of (exclusive prefix sum of row i)[p[i][j]], in double precision.
std::vector<float> reference(int64_t n, int64_t k, const Rows &r) {
  std::vector<float> out;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> prefix(static_cast<size_t>(k) + 1, 0.0);
    for (int64_t j = 0; j < k; ++j) prefix[static_cast<size_t>(j) + 1] = prefix[static_cast<size_t>(j)] + r.a[static_cast<size_t>(i * k + j)];
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += prefix[static_cast<size_t>(r.p[static_cast<size_t>(i * k + j)])];
    out.push_back(static_cast<float>(sum));
  }
  return out;
}

class GpuTemps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
};

TEST_F(GpuTemps, HeapTemporaryPerRowMatchesTheCpu) {
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {1, 1}, {7, 0}, {37, 13}, {1000, 64}, {300, 700}}) {
    SCOPED_TRACE(::testing::Message() << "n " << n << " k " << k);
    Rows r = randomRows(n, k, static_cast<uint32_t>(n * 31 + k));
    std::vector<float> want(static_cast<size_t>(n), -3.0f);
    ASSERT_EQ(spl_temps_heap(n, k, r.a.data(), r.p.data(), want.data()), SPL_OK);
    EXPECT_LE(maxRel(want, reference(n, k, r)), 1e-5) << "the CPU export";
    DeviceBuffer a(r.a), p(r.p), out(std::vector<float>(static_cast<size_t>(n), -7.0f));
    ASSERT_EQ(spl_temps_heap_cuda(nullptr, n, k, a.as<float>(), p.as<int32_t>(), out.as<float>()), SPL_OK)
        << spl_cuda_last_error();
    EXPECT_LE(maxRel(out.download<float>(static_cast<size_t>(n)), want), 1e-5);
  }
}

TEST_F(GpuTemps, LocalTemporaryPerRowMatchesTheCpu) {
  for (int64_t n : {0, 1, 5, 1000, 100000}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    Rows r = randomRows(n, 4, static_cast<uint32_t>(n + 3));
    std::vector<float> want(static_cast<size_t>(n), -3.0f);
    ASSERT_EQ(spl_temps_local(n, r.a.data(), r.p.data(), want.data()), SPL_OK);
    EXPECT_LE(maxRel(want, reference(n, 4, r)), 1e-5) << "the CPU export";
    DeviceBuffer a(r.a), p(r.p), out(std::vector<float>(static_cast<size_t>(n), -7.0f));
    ASSERT_EQ(spl_temps_local_cuda(nullptr, n, a.as<float>(), p.as<int32_t>(), out.as<float>()), SPL_OK)
        << spl_cuda_last_error();
    EXPECT_LE(maxRel(out.download<float>(static_cast<size_t>(n)), want), 1e-5);
  }
}

#ifndef SPL_GPU_EMULATED
TEST_F(GpuTemps, ExhaustedDeviceHeapIsReportedNotACrash) {
  // 2048 threads at once asking for 80 KB each exceed CUDA's default 8 MB device heap: the
  // call must return SPL_ERR_ALLOC (or, with a heap raised by the application, the right sums).
  const int64_t n = 2048, k = 20000;
  Rows r = randomRows(n, k, 5);
  DeviceBuffer a(r.a), p(r.p), out(std::vector<float>(static_cast<size_t>(n), -7.0f));
  int rc = spl_temps_heap_cuda(nullptr, n, k, a.as<float>(), p.as<int32_t>(), out.as<float>());
  ASSERT_TRUE(rc == SPL_ERR_ALLOC || rc == SPL_OK) << rc << ": " << spl_cuda_last_error();
  if (rc == SPL_OK) {
    std::vector<float> want(static_cast<size_t>(n));
    ASSERT_EQ(spl_temps_heap(n, k, r.a.data(), r.p.data(), want.data()), SPL_OK);
    EXPECT_LE(maxRel(out.download<float>(static_cast<size_t>(n)), want), 1e-4);
  }
}
#endif

}  // namespace
