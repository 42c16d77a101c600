// cuda_test.cpp: the spl_cuda_* entry points on whatever machine runs the tests.
//
// Without a usable driver every entry must fail cleanly with SPL_ERR_CUDA. With one, the tests
// copy data through device memory, run the device prefix sum against the CPU reference and
// exercise the module cache (repeat launches, other threads, bad PTX). The PTX test assembles
// the runtime's embedded kernels with ptxas when the toolkit is installed. tests/gpu builds this
// file a second time against the CUDA emulator (runtime_emulated_tests, SPL_GPU_EMULATED), which
// JITs the scan's IR, so the CudaDevice tests run everywhere.
#include "spl_runtime.h"
#include "cuda_kernels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <random>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

bool have_cuda() { return spl_cuda_available() == 1; }

/* A fresh module cache cell. Real cells are globals of the generated objects; these stay
 * reachable too (no leak reports) and each call gives a new one, so tests can be repeated. */
void **fresh_slot() {
  static auto *slots = new std::deque<void *>;
  slots->push_back(nullptr);
  return &slots->back();
}

TEST(CudaWithoutDriver, EveryEntryFailsWithCudaError) {
  if (have_cuda())
    GTEST_SKIP() << "a CUDA driver and device are present";
  EXPECT_EQ(spl_cuda_available(), 0);
  void *dptr = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(spl_cuda_alloc(&dptr, 1024, nullptr), SPL_ERR_CUDA);
  EXPECT_NE(std::string(spl_cuda_last_error()), "") << "the reason should be recorded";
  EXPECT_EQ(spl_cuda_free(dptr, nullptr), SPL_ERR_CUDA);
  char host[16] = {0};
  EXPECT_EQ(spl_cuda_memcpy(host, host, sizeof host, 0, nullptr), SPL_ERR_CUDA);
  void *slot = nullptr;
  EXPECT_EQ(spl_cuda_launch(spl_rt_scan_ptx, SPL_RT_SCAN_WRITE, &slot, 1, 1, 1, 32, 1, 1, 0,
                            nullptr, nullptr),
            SPL_ERR_CUDA);
  EXPECT_EQ(slot, nullptr) << "no module cache without a driver";
  EXPECT_EQ(spl_cuda_sigma_prefix_i32(nullptr, 0, nullptr, nullptr), SPL_ERR_CUDA);
}

TEST(CudaWithoutDriver, LastErrorIsPerThread) {
  if (have_cuda())
    GTEST_SKIP() << "a CUDA driver and device are present";
  std::string other;
  std::thread([&] { other = spl_cuda_last_error(); }).join();
  EXPECT_EQ(other, "") << "a fresh thread has no error yet";
  std::thread([&] {
    void *p = nullptr;
    spl_cuda_alloc(&p, 8, nullptr);
    other = spl_cuda_last_error();
  }).join();
  EXPECT_NE(other, "");
}

/* Device buffer freed at scope exit. */
struct DeviceBuffer {
  void *ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) { EXPECT_EQ(spl_cuda_alloc(&ptr, bytes, nullptr), SPL_OK)
                                             << spl_cuda_last_error(); }
  ~DeviceBuffer() { EXPECT_EQ(spl_cuda_free(ptr, nullptr), SPL_OK) << spl_cuda_last_error(); }
};

TEST(CudaDevice, AllocAndCopyRoundTrip) {
  if (!have_cuda())
    GTEST_SKIP() << "no CUDA driver: " << spl_cuda_last_error();
  std::vector<int32_t> host(10000), back(10000, -1);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<int32_t>(i * 7 - 3);
  const size_t bytes = host.size() * sizeof(int32_t);
  DeviceBuffer a(bytes), b(bytes);
  ASSERT_NE(a.ptr, nullptr);
  ASSERT_EQ(spl_cuda_memcpy(a.ptr, host.data(), bytes, 0, nullptr), SPL_OK);
  ASSERT_EQ(spl_cuda_memcpy(b.ptr, a.ptr, bytes, 2, nullptr), SPL_OK);
  ASSERT_EQ(spl_cuda_memcpy(back.data(), b.ptr, bytes, 1, nullptr), SPL_OK);
  EXPECT_EQ(back, host);
  EXPECT_EQ(spl_cuda_memcpy(back.data(), b.ptr, bytes, 3, nullptr), SPL_ERR_BAD_INPUT);
  void *none = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(spl_cuda_alloc(&none, 0, nullptr), SPL_OK);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(spl_cuda_free(nullptr, nullptr), SPL_OK);
}

/* Runs the device prefix sum on n random lengths and compares with the CPU version. */
void check_device_prefix(int64_t n, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << "n " << n);
  std::mt19937_64 rng(seed);
  std::vector<int32_t> lens(static_cast<size_t>(n));
  for (int32_t &len : lens)
    len = std::uniform_int_distribution<int32_t>(0, 1 << 20)(rng);
  std::vector<int64_t> expected(static_cast<size_t>(n) + 1), got(static_cast<size_t>(n) + 1, -1);
  ASSERT_EQ(spl_sigma_prefix_i32(lens.data(), n, expected.data()), SPL_OK);

  DeviceBuffer d_lens(lens.size() * sizeof(int32_t) + 4), d_out(got.size() * sizeof(int64_t));
  if (n > 0)
    ASSERT_EQ(spl_cuda_memcpy(d_lens.ptr, lens.data(), lens.size() * sizeof(int32_t), 0, nullptr),
              SPL_OK);
  ASSERT_EQ(spl_cuda_sigma_prefix_i32(static_cast<const int32_t *>(d_lens.ptr), n,
                                      static_cast<int64_t *>(d_out.ptr), nullptr),
            SPL_OK)
      << spl_cuda_last_error();
  ASSERT_EQ(spl_cuda_memcpy(got.data(), d_out.ptr, got.size() * sizeof(int64_t), 1, nullptr),
            SPL_OK)
      << spl_cuda_last_error();
  EXPECT_EQ(got, expected);
}

TEST(CudaDevice, SigmaPrefixMatchesCpu) {
  if (!have_cuda())
    GTEST_SKIP() << "no CUDA driver: " << spl_cuda_last_error();
  uint64_t seed = 99;
  /* One tile and its edges, one segment (one launch) and its edge, segments of the fewest
   * tiles up to SPL_RT_SCAN_MAX_SEGMENTS of them, then longer segments (the last one short). */
  const int64_t tile = SPL_RT_SCAN_BLOCK, one = tile * SPL_RT_SCAN_MIN_SEGMENT_TILES;
  const int64_t full = one * SPL_RT_SCAN_MAX_SEGMENTS;
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(2), tile - 1, tile, tile + 1, 2 * tile + 3,
                    one - 1, one, one + 1, 4 * one + 3, full - 1, full, full + 1,
                    2 * full + tile + 5, int64_t(5000011)}) {
#ifdef SPL_GPU_EMULATED
    if (n > (int64_t(1) << 20)) /* the emulator takes seconds per million lengths */
      continue;
#endif
    check_device_prefix(n, seed++);
  }
}

TEST(CudaDevice, SigmaPrefixFromOtherThreads) {
  /* Threads without a current context get the primary one; the module cache is shared. */
  if (!have_cuda())
    GTEST_SKIP() << "no CUDA driver: " << spl_cuda_last_error();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] { check_device_prefix(5000 + t, 1000 + t); });
  for (auto &thread : threads)
    thread.join();
}

TEST(CudaDevice, SigmaPrefixRejectsBadInput) {
  if (!have_cuda())
    GTEST_SKIP() << "no CUDA driver: " << spl_cuda_last_error();
  int64_t *out = reinterpret_cast<int64_t *>(0x1000);
  EXPECT_EQ(spl_cuda_sigma_prefix_i32(nullptr, -1, out, nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_cuda_sigma_prefix_i32(nullptr, 5, out, nullptr), SPL_ERR_BAD_INPUT);
}

TEST(CudaDevice, LaunchCachesModuleAndReportsErrors) {
  if (!have_cuda())
    GTEST_SKIP() << "no CUDA driver: " << spl_cuda_last_error();
  DeviceBuffer d_out(sizeof(int64_t));
  /* The scan's write phase of one empty segment: it only writes out[0] = 0. */
  int64_t n = 0, seg = SPL_RT_SCAN_BLOCK;
  const int32_t *lens = nullptr;
  void *sums = nullptr, *out = d_out.ptr;
  void *args[] = {&lens, &n, &seg, &sums, &out};
  void *&slot = *fresh_slot();
  ASSERT_EQ(spl_cuda_launch(spl_rt_scan_ptx, SPL_RT_SCAN_WRITE, &slot, 1, 1, 1, 64, 1, 1, 0,
                            nullptr, args),
            SPL_OK)
      << spl_cuda_last_error();
  void *cache = slot;
  EXPECT_NE(cache, nullptr) << "first launch installs the module cache";
  ASSERT_EQ(spl_cuda_launch(spl_rt_scan_ptx, SPL_RT_SCAN_WRITE, &slot, 1, 1, 1, 64, 1, 1, 0,
                            nullptr, args),
            SPL_OK);
  EXPECT_EQ(slot, cache) << "later launches reuse it";
  int64_t result = -1;
  ASSERT_EQ(spl_cuda_memcpy(&result, out, sizeof result, 1, nullptr), SPL_OK);
  EXPECT_EQ(result, 0);

  EXPECT_EQ(spl_cuda_launch(spl_rt_scan_ptx, "no_such_kernel", &slot, 1, 1, 1, 1, 1, 1, 0,
                            nullptr, args),
            SPL_ERR_CUDA);
  EXPECT_NE(std::string(spl_cuda_last_error()).find("cuModuleGetFunction"), std::string::npos)
      << spl_cuda_last_error();

  void *&bad_slot = *fresh_slot();
  EXPECT_EQ(spl_cuda_launch(".version 7.0\n.target sm_52\nthis is not ptx", "k", &bad_slot, 1, 1,
                            1, 1, 1, 1, 0, nullptr, nullptr),
            SPL_ERR_CUDA);
  EXPECT_NE(std::string(spl_cuda_last_error()).find("cuModuleLoadDataEx"), std::string::npos)
      << spl_cuda_last_error();
}

#ifndef SPL_PTXAS_PATH
#define SPL_PTXAS_PATH "/usr/local/cuda/bin/ptxas"
#endif

TEST(CudaKernels, ScanPtxAssemblesWithPtxas) {
  const std::string ptxas = SPL_PTXAS_PATH;
  if (access(ptxas.c_str(), X_OK) != 0)
    GTEST_SKIP() << "ptxas not found at " << ptxas;
  char dir[] = "/tmp/splrt-ptx-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string ptx_path = std::string(dir) + "/scan.ptx";
  const std::string log_path = std::string(dir) + "/ptxas.log";
  {
    std::ofstream file(ptx_path);
    file << spl_rt_scan_ptx;
  }
  const std::string command = "'" + ptxas + "' -arch=sm_90 '" + ptx_path + "' -o /dev/null > '" +
                              log_path + "' 2>&1";
  int status = std::system(command.c_str());
  std::string log;
  {
    std::ifstream file(log_path);
    log.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  std::remove(ptx_path.c_str());
  std::remove(log_path.c_str());
  rmdir(dir);
  EXPECT_EQ(status, 0) << "ptxas rejected the scan kernel:\n" << log;
  for (const char *entry : {SPL_RT_SCAN_REDUCE, SPL_RT_SCAN_WRITE})
    EXPECT_NE(std::string(spl_rt_scan_ptx).find(std::string(".entry ") + entry), std::string::npos)
        << entry;
}

} // namespace
