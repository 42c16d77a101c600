// fake_driver_test.cpp: the runtime's CUDA plumbing (dlopen, contexts, module cache, memory,
// argument passing) against fake_cuda/libcuda.so.1, which CMake puts first on
// LD_LIBRARY_PATH for this executable only. Runs on any machine; the real device behaviour is
// covered by cuda_test.cpp where a GPU exists.
#include "spl_runtime.h"
#include "cuda_kernels.h"
#include "fake_cuda/fake_cuda.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace {

/* Hooks of the fake driver, found in the copy the runtime loaded. */
struct Fake {
  decltype(&fake_cuda_stats) stats = nullptr;
  decltype(&fake_cuda_make_context) make_context = nullptr;
  decltype(&cuCtxSetCurrent) set_current = nullptr;

  Fake() {
    EXPECT_EQ(spl_cuda_available(), 1) << spl_cuda_last_error();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr)
      return;
    stats = reinterpret_cast<decltype(stats)>(dlsym(lib, "fake_cuda_stats"));
    make_context = reinterpret_cast<decltype(make_context)>(dlsym(lib, "fake_cuda_make_context"));
    set_current = reinterpret_cast<decltype(set_current)>(dlsym(lib, "cuCtxSetCurrent"));
  }
  bool ok() const { return stats && make_context && set_current; }
};

/* A fresh module cache cell. Real cells are globals of the generated objects; these stay
 * reachable too (no leak reports) and each call gives a new one, so tests can be repeated. */
void **fresh_slot() {
  static auto *slots = new std::deque<void *>;
  slots->push_back(nullptr);
  return &slots->back();
}

#define REQUIRE_FAKE(fake)                                                                        \
  Fake fake;                                                                                      \
  if (!fake.ok())                                                                                 \
  GTEST_SKIP() << "the fake libcuda.so.1 is not the one loaded (real driver first on the path?)"

TEST(FakeDriver, AvailableAndAllocatesStreamOrdered) {
  REQUIRE_FAKE(fake);
  FakeCudaStats before = fake.stats();
  void *dptr = nullptr;
  ASSERT_EQ(spl_cuda_alloc(&dptr, 256, nullptr), SPL_OK) << spl_cuda_last_error();
  ASSERT_NE(dptr, nullptr);
  EXPECT_EQ(spl_cuda_free(dptr, nullptr), SPL_OK);
  FakeCudaStats after = fake.stats();
  EXPECT_EQ(after.async_allocs, before.async_allocs + 1) << "memory pools supported: use them";
  EXPECT_EQ(after.async_frees, before.async_frees + 1);
  EXPECT_EQ(after.sync_allocs, before.sync_allocs);
}

TEST(FakeDriver, DeviceToHostCopySynchronizes) {
  REQUIRE_FAKE(fake);
  int64_t host[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
  void *dptr = nullptr;
  ASSERT_EQ(spl_cuda_alloc(&dptr, sizeof host, nullptr), SPL_OK);
  int syncs = fake.stats().stream_syncs;
  ASSERT_EQ(spl_cuda_memcpy(dptr, host, sizeof host, 0, nullptr), SPL_OK);
  EXPECT_EQ(fake.stats().stream_syncs, syncs) << "host to device stays asynchronous";
  ASSERT_EQ(spl_cuda_memcpy(back, dptr, sizeof back, 1, nullptr), SPL_OK);
  EXPECT_EQ(fake.stats().stream_syncs, syncs + 1);
  EXPECT_EQ(back[3], 4);
  EXPECT_EQ(spl_cuda_memcpy(back, dptr, sizeof back, 7, nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_cuda_free(dptr, nullptr), SPL_OK);
}

TEST(FakeDriver, SigmaPrefixPassesArgumentsAndLaunchShape) {
  REQUIRE_FAKE(fake);
  std::vector<int32_t> lens = {3, 0, 5, 1};
  std::vector<int64_t> out(5, -1);
  int launches = fake.stats().launches;
  ASSERT_EQ(spl_cuda_sigma_prefix_i32(lens.data(), 4, out.data(), nullptr), SPL_OK)
      << spl_cuda_last_error();
  EXPECT_EQ(out, (std::vector<int64_t>{0, 3, 3, 8, 9}));
  FakeCudaStats s = fake.stats();
  EXPECT_EQ(s.launches, launches + 1) << "one segment: the write phase alone";
  EXPECT_EQ(s.last_grid[0] * s.last_grid[1] * s.last_grid[2], 1u) << "one segment";
  EXPECT_EQ(s.last_block[0], static_cast<unsigned>(SPL_RT_SCAN_BLOCK));
  EXPECT_EQ(spl_cuda_sigma_prefix_i32(lens.data(), -1, out.data(), nullptr), SPL_ERR_BAD_INPUT);

  std::vector<int64_t> none(1, -1);
  launches = fake.stats().launches;
  ASSERT_EQ(spl_cuda_sigma_prefix_i32(nullptr, 0, none.data(), nullptr), SPL_OK);
  EXPECT_EQ(none[0], 0);
  EXPECT_EQ(fake.stats().launches, launches + 1) << "n = 0: the write phase alone";

  /* Past one segment: the reduce phase, then the write phase, on as many blocks. */
  const int64_t two = int64_t(SPL_RT_SCAN_BLOCK) * SPL_RT_SCAN_MIN_SEGMENT_TILES + 1;
  std::vector<int32_t> more(static_cast<size_t>(two), 2);
  std::vector<int64_t> more_out(static_cast<size_t>(two) + 1, -1);
  launches = fake.stats().launches;
  ASSERT_EQ(spl_cuda_sigma_prefix_i32(more.data(), two, more_out.data(), nullptr), SPL_OK);
  for (int64_t i = 0; i <= two; ++i)
    ASSERT_EQ(more_out[static_cast<size_t>(i)], 2 * i) << i;
  s = fake.stats();
  EXPECT_EQ(s.launches, launches + 2) << "reduce, write";
  EXPECT_EQ(s.last_grid[0], 2u) << "two segments";
}

TEST(FakeDriver, SigmaPrefixSegmentsFillTheGrid) {
  /* Past SPL_RT_SCAN_MAX_SEGMENTS segments of the fewest tiles, segments grow by whole tiles
   * and stay under the limit. */
  REQUIRE_FAKE(fake);
  const int64_t full = int64_t(SPL_RT_SCAN_BLOCK) * SPL_RT_SCAN_MIN_SEGMENT_TILES * SPL_RT_SCAN_MAX_SEGMENTS;
  for (int64_t n : {full, full + 1, int64_t(3000017)}) {
    SCOPED_TRACE(n);
    std::vector<int32_t> lens(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      lens[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919) % 13);
    std::vector<int64_t> out(static_cast<size_t>(n) + 1, -1), expected(out.size());
    ASSERT_EQ(spl_sigma_prefix_i32(lens.data(), n, expected.data()), SPL_OK);
    ASSERT_EQ(spl_cuda_sigma_prefix_i32(lens.data(), n, out.data(), nullptr), SPL_OK);
    EXPECT_EQ(out, expected);
    FakeCudaStats s = fake.stats();
    EXPECT_LE(s.last_grid[0], static_cast<unsigned>(SPL_RT_SCAN_MAX_SEGMENTS));
    EXPECT_GT(s.last_grid[0], static_cast<unsigned>(SPL_RT_SCAN_MAX_SEGMENTS / 2));
  }
}

TEST(FakeDriver, ModuleLoadedOncePerContext) {
  REQUIRE_FAKE(fake);
  static const char ptx[] = ".version 7.0\n.visible .entry first(\n)\n.visible .entry second(\n)\n";
  void *&slot = *fresh_slot();
  int loads = fake.stats().module_loads;
  ASSERT_EQ(spl_cuda_launch(ptx, "first", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr), SPL_OK);
  ASSERT_NE(slot, nullptr);
  void *cache = slot;
  ASSERT_EQ(spl_cuda_launch(ptx, "second", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr), SPL_OK);
  ASSERT_EQ(spl_cuda_launch(ptx, "first", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr), SPL_OK);
  EXPECT_EQ(slot, cache);
  EXPECT_EQ(fake.stats().module_loads, loads + 1);

  /* A user context of its own gets its own module; going back reuses the first. */
  CUctx_st *user_ctx = fake.make_context(7);
  std::thread([&] {
    fake.set_current(user_ctx);
    EXPECT_EQ(spl_cuda_launch(ptx, "first", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr),
              SPL_OK);
    EXPECT_EQ(spl_cuda_launch(ptx, "second", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr),
              SPL_OK);
  }).join();
  EXPECT_EQ(fake.stats().module_loads, loads + 2);
  ASSERT_EQ(spl_cuda_launch(ptx, "second", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr), SPL_OK);
  EXPECT_EQ(fake.stats().module_loads, loads + 2);
}

TEST(FakeDriver, ConcurrentFirstLaunchesShareOneCache) {
  REQUIRE_FAKE(fake);
  static const char ptx[] = ".visible .entry racy(\n)\n";
  void *&slot = *fresh_slot();
  int loads = fake.stats().module_loads;
  std::vector<std::thread> threads;
  std::vector<int> status(16, -1);
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      status[t] = spl_cuda_launch(ptx, "racy", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr);
    });
  for (auto &thread : threads)
    thread.join();
  for (int s : status)
    EXPECT_EQ(s, SPL_OK);
  EXPECT_EQ(fake.stats().module_loads, loads + 1) << "all threads use the primary context";
  EXPECT_EQ(fake.stats().primary_retains, 1) << "the primary context is retained once";
}

TEST(FakeDriver, ReportsDriverErrorsWithNames) {
  REQUIRE_FAKE(fake);
  void *&slot = *fresh_slot();
  EXPECT_EQ(spl_cuda_launch("garbage", "k", &slot, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr),
            SPL_ERR_CUDA);
  std::string error = spl_cuda_last_error();
  EXPECT_NE(error.find("cuModuleLoadDataEx"), std::string::npos) << error;
  EXPECT_NE(error.find("CUDA_ERROR_INVALID_PTX"), std::string::npos) << error;
  EXPECT_NE(error.find("fake ptxas: no .entry"), std::string::npos) << "JIT log included: " << error;

  static const char ptx[] = ".visible .entry present(\n)\n";
  void *&slot2 = *fresh_slot();
  EXPECT_EQ(spl_cuda_launch(ptx, "absent", &slot2, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr),
            SPL_ERR_CUDA);
  error = spl_cuda_last_error();
  EXPECT_NE(error.find("cuModuleGetFunction"), std::string::npos) << error;
  EXPECT_NE(error.find("absent"), std::string::npos) << error;

  EXPECT_EQ(spl_cuda_launch(ptx, "present", nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr),
            SPL_ERR_BAD_INPUT);
}

} // namespace

namespace {

/* The stream handle of a test of its own: workspaces are per (context, stream), so each test
 * starts from a workspace no other test touched. */
void *own_stream(uintptr_t k) { return reinterpret_cast<void *>(uintptr_t(0x5000) + 16 * k); }

TEST(FakeDriverWorkspace, ASteadyCallAllocatesNothing) {
  REQUIRE_FAKE(fake);
  void *stream = own_stream(1);
  auto one_call = [&](size_t bytes, void **a, void **b) {
    void *call = nullptr;
    ASSERT_EQ(spl_cuda_call_begin(stream, &call), SPL_OK) << spl_cuda_last_error();
    ASSERT_NE(call, nullptr);
    ASSERT_EQ(spl_cuda_call_alloc(call, bytes, a), SPL_OK);
    ASSERT_EQ(spl_cuda_call_alloc(call, 100, b), SPL_OK);
    EXPECT_EQ(spl_cuda_call_end(call), SPL_OK);
  };
  void *a = nullptr, *b = nullptr;
  one_call(4000, &a, &b);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // Disjoint and 256-byte aligned within a call.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 256, 0u);
  EXPECT_GE(reinterpret_cast<uintptr_t>(b), reinterpret_cast<uintptr_t>(a) + 4000);
  FakeCudaStats before = fake.stats();
  void *a2 = nullptr, *b2 = nullptr;
  for (int k = 0; k < 5; ++k) one_call(4000, &a2, &b2);
  FakeCudaStats after = fake.stats();
  EXPECT_EQ(after.async_allocs + after.sync_allocs, before.async_allocs + before.sync_allocs);
  EXPECT_EQ(after.async_frees + after.sync_frees, before.async_frees + before.sync_frees);
  EXPECT_EQ(a2, a) << "a later call on the stream reuses the bytes";
  EXPECT_EQ(spl_cuda_call_alloc(nullptr, 8, &a), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_cuda_call_end(nullptr), SPL_OK);
}

TEST(FakeDriverWorkspace, OpenCallsGetDisjointBytesAndGrowthFreesLater) {
  REQUIRE_FAKE(fake);
  void *stream = own_stream(2);
  void *first = nullptr, *second = nullptr, *p = nullptr, *q = nullptr;
  ASSERT_EQ(spl_cuda_call_begin(stream, &first), SPL_OK);
  ASSERT_EQ(spl_cuda_call_begin(stream, &second), SPL_OK);
  ASSERT_EQ(spl_cuda_call_alloc(first, 1000, &p), SPL_OK);
  ASSERT_EQ(spl_cuda_call_alloc(second, 1000, &q), SPL_OK);
  EXPECT_NE(p, q) << "two open calls on one stream";
  // More than the first block: a new block; the old one is freed only when both calls close.
  int frees = fake.stats().async_frees;
  void *big = nullptr;
  ASSERT_EQ(spl_cuda_call_alloc(first, size_t(3) << 20, &big), SPL_OK);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(spl_cuda_call_end(first), SPL_OK);
  EXPECT_EQ(fake.stats().async_frees, frees) << "the second call still uses the old block";
  EXPECT_EQ(spl_cuda_call_end(second), SPL_OK);
  EXPECT_EQ(fake.stats().async_frees, frees + 1);
  // The next call fits in the grown block.
  int allocs = fake.stats().async_allocs;
  void *again = nullptr, *call = nullptr;
  ASSERT_EQ(spl_cuda_call_begin(stream, &call), SPL_OK);
  ASSERT_EQ(spl_cuda_call_alloc(call, size_t(3) << 20, &again), SPL_OK);
  EXPECT_EQ(spl_cuda_call_end(call), SPL_OK);
  EXPECT_EQ(fake.stats().async_allocs, allocs);
}

TEST(FakeDriverWorkspace, CounterEpochsGrowAndNewWordsAreZero) {
  REQUIRE_FAKE(fake);
  void *stream = own_stream(3);
  uint32_t last = 0;
  int memsets = fake.stats().memsets;
  for (int k = 0; k < 4; ++k) {
    void *call = nullptr, *words = nullptr;
    uint32_t epoch = 0;
    ASSERT_EQ(spl_cuda_call_begin(stream, &call), SPL_OK);
    ASSERT_EQ(spl_cuda_call_counters(call, 64, &words, &epoch), SPL_OK);
    ASSERT_NE(words, nullptr);
    EXPECT_GT(epoch, last) << "every call's epoch is larger than the ones before";
    last = epoch;
    if (k == 0) {
      // A new block of words is zeroed (stream-ordered memset).
      const auto *w = static_cast<const uint64_t *>(words);
      for (int i = 0; i < 64; ++i) EXPECT_EQ(w[i], 0u);
    }
    EXPECT_EQ(spl_cuda_call_end(call), SPL_OK);
  }
  EXPECT_EQ(fake.stats().memsets, memsets + 1) << "zeroed once, when allocated";
  void *call = nullptr, *words = nullptr;
  uint32_t epoch = 0;
  ASSERT_EQ(spl_cuda_call_begin(stream, &call), SPL_OK);
  EXPECT_EQ(spl_cuda_call_counters(call, 8, nullptr, &epoch), SPL_ERR_BAD_INPUT);
  ASSERT_EQ(spl_cuda_call_counters(call, 1000, &words, &epoch), SPL_OK) << "grown: a new zeroed block";
  EXPECT_EQ(fake.stats().memsets, memsets + 2);
  EXPECT_EQ(spl_cuda_call_end(call), SPL_OK);
}

TEST(FakeDriverWorkspace, ReleaseFreesIdleWorkspaces) {
  REQUIRE_FAKE(fake);
  void *stream = own_stream(4), *call = nullptr, *p = nullptr;
  ASSERT_EQ(spl_cuda_call_begin(stream, &call), SPL_OK);
  ASSERT_EQ(spl_cuda_call_alloc(call, 64, &p), SPL_OK);
  EXPECT_EQ(spl_cuda_call_end(call), SPL_OK);
  int frees = fake.stats().sync_frees;
  EXPECT_EQ(spl_cuda_release_workspaces(), SPL_OK);
  EXPECT_GT(fake.stats().sync_frees, frees);
  // Usable again afterwards: a fresh workspace.
  ASSERT_EQ(spl_cuda_call_begin(stream, &call), SPL_OK);
  ASSERT_EQ(spl_cuda_call_alloc(call, 64, &p), SPL_OK);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(spl_cuda_call_end(call), SPL_OK);
}

TEST(FakeDriverWorkspace, ResidentBlocksFromTheOccupancyCalculator) {
  REQUIRE_FAKE(fake);
  uint32_t blocks = 0;
  /* The fake's PTX names one entry; it has 4 multiprocessors and 2 blocks of any size each. */
  ASSERT_EQ(spl_cuda_resident_blocks(spl_rt_scan_ptx, SPL_RT_SCAN_REDUCE, fresh_slot(), 256, &blocks), SPL_OK)
      << spl_cuda_last_error();
  EXPECT_EQ(blocks, 8u);
  EXPECT_EQ(spl_cuda_resident_blocks(spl_rt_scan_ptx, SPL_RT_SCAN_REDUCE, fresh_slot(), 0, &blocks), SPL_ERR_BAD_INPUT);
  /* At most 1 a multiprocessor: 4; at most 3 (more than fit) or no cap: the 2 that fit. */
  void **slot = fresh_slot();
  ASSERT_EQ(spl_cuda_resident_blocks_at_most(spl_rt_scan_ptx, SPL_RT_SCAN_REDUCE, slot, 256, 1, &blocks), SPL_OK);
  EXPECT_EQ(blocks, 4u);
  ASSERT_EQ(spl_cuda_resident_blocks_at_most(spl_rt_scan_ptx, SPL_RT_SCAN_REDUCE, slot, 256, 3, &blocks), SPL_OK);
  EXPECT_EQ(blocks, 8u);
  ASSERT_EQ(spl_cuda_resident_blocks_at_most(spl_rt_scan_ptx, SPL_RT_SCAN_REDUCE, slot, 256, 0, &blocks), SPL_OK);
  EXPECT_EQ(blocks, 8u);
}

}  // namespace
