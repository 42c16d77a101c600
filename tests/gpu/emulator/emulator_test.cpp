// The CUDA emulator's own checks (label gpu_emulated): a shuffle reached by the lanes of a warp
// from two places of their call chains is divergent even when the shuffle inside the called
// helper is one instruction (the emulator inlines every device function, so a place is a whole
// call chain), the same helper called from one place runs, the blocks of a launch and the
// threads of a block run in orders that change from launch to launch (a GPU promises none; code
// that assumes a warp's lanes run in lockstep gets a stale value in one of them), and a block
// that waits for another is reported instead of hanging. The kernels are
// emulator_checks.ll, loaded as an "SPLEMU01" image straight through the emulator's driver API.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

extern "C" {
int cuInit(unsigned);
int cuDevicePrimaryCtxRetain(void **ctx, int device);
int cuCtxSetCurrent(void *ctx);
int cuModuleLoadDataEx(void **module, const void *image, unsigned numOptions, int *options, void **values);
int cuModuleGetFunction(void **function, void *module, const char *name);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                   void *stream, void **params, void **extra);
int cuMemAlloc_v2(unsigned long long *dptr, size_t bytes);
int cuMemFree_v2(unsigned long long dptr);
}

namespace {

constexpr int kLaunchFailed = 719;

class Emulator : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), 0);
    void *ctx = nullptr;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), 0);
    ASSERT_EQ(cuCtxSetCurrent(ctx), 0);
    std::ifstream in(SPL_EMULATOR_CHECKS_BC, std::ios::binary);
    std::string bitcode((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(bitcode.empty()) << SPL_EMULATOR_CHECKS_BC;
    std::string image = "SPLEMU01";
    uint64_t size = bitcode.size();
    image.append(reinterpret_cast<const char *>(&size), 8);
    image += bitcode;
    ASSERT_EQ(cuModuleLoadDataEx(&module_, image.data(), 0, nullptr, nullptr), 0);
  }
  void *kernel(const char *name) {
    void *f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, module_, name), 0) << name;
    return f;
  }
  void *module_ = nullptr;
};

/// Device memory holding n int32, read back on destruction's request.
struct Ints {
  explicit Ints(size_t n) : n(n) { EXPECT_EQ(cuMemAlloc_v2(&ptr, n * 4), 0); }
  ~Ints() { cuMemFree_v2(ptr); }
  int32_t *data() const { return reinterpret_cast<int32_t *>(static_cast<uintptr_t>(ptr)); }
  std::vector<int32_t> values() const { return std::vector<int32_t>(data(), data() + n); }
  unsigned long long ptr = 0;
  size_t n;
};

TEST_F(Emulator, AHelperThatShufflesReachedFromTwoPlacesIsDivergent) {
  Ints out(32);
  void *params[] = {&out.ptr};
  EXPECT_EQ(cuLaunchKernel(kernel("divergent_helper"), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), kLaunchFailed)
      << "lanes reached the helper's shuffle from two call sites";
}

TEST_F(Emulator, AHelperThatShufflesReachedFromOnePlaceRuns) {
  Ints out(32);
  void *params[] = {&out.ptr};
  ASSERT_EQ(cuLaunchKernel(kernel("uniform_helper"), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), 0);
  for (int32_t v : out.values()) EXPECT_EQ(v, 7) << "lane 0's value, 0 + 7";
}

/// The orders in which `kernel` (one ticket per block or thread, out[ticket] = its index) ran
/// its `count` blocks or threads in three launches in a row, each checked to run every one once.
std::set<std::vector<int32_t>> ticketOrders(void *kernel, unsigned grid, unsigned block, unsigned count) {
  std::set<std::vector<int32_t>> orders;
  for (int launch = 0; launch < 3; ++launch) {
    Ints counter(1), out(count);
    std::memset(counter.data(), 0, 4);
    void *params[] = {&counter.ptr, &out.ptr};
    EXPECT_EQ(cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, nullptr, params, nullptr), 0);
    std::vector<int32_t> order = out.values(), sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int32_t> every(count);
    std::iota(every.begin(), every.end(), 0);
    EXPECT_EQ(sorted, every) << "every one ran once";
    orders.insert(order);
  }
  return orders;
}

TEST_F(Emulator, BlocksRunInOrdersThatVaryFromLaunchToLaunch) {
  EXPECT_EQ(ticketOrders(kernel("block_order"), 16, 1, 16).size(), 3u)
      << "three launches in a row ran their blocks in three different orders";
}

TEST_F(Emulator, ThreadsRunInOrdersThatVaryFromLaunchToLaunch) {
  EXPECT_EQ(ticketOrders(kernel("thread_order"), 1, 64, 64).size(), 3u)
      << "three launches in a row ran their threads in three different orders";
}

// Code that assumes a warp's lanes run in lockstep (a neighbour's write read without a sync)
// gets a lane a stale cell in at least one of the orders: the emulator does not hide it.
TEST_F(Emulator, ALaneReadingANeighboursWriteWithoutSyncIsExposed) {
  bool stale = false;
  for (int launch = 0; launch < 3; ++launch) {
    Ints cells(32), out(32);
    std::memset(cells.data(), 0xff, 32 * 4);
    void *params[] = {&cells.ptr, &out.ptr};
    ASSERT_EQ(cuLaunchKernel(kernel("reads_a_neighbour_without_sync"), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), 0);
    std::vector<int32_t> got = out.values();
    for (int32_t t = 0; t < 32; ++t) stale = stale || got[static_cast<size_t>(t)] != (t + 1) % 32;
  }
  EXPECT_TRUE(stale) << "every lane saw its neighbour's write in every order, as only lockstep would promise";
}

// A block that waits for another ends the process with a report instead of hanging.
TEST_F(Emulator, ABlockWaitingForAnotherIsReported) {
  void *f = kernel("block_waits_for_another");
  EXPECT_EXIT(
      {
        setenv("SPL_EMU_LAUNCH_TIMEOUT", "1", 1);
        setenv("SPL_EMU_BLOCK_ORDER", "forward", 1);
        Ints flag(1);
        std::memset(flag.data(), 0, 4);
        void *params[] = {&flag.ptr};
        cuLaunchKernel(f, 2, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr);
        std::exit(0);
      },
      ::testing::ExitedWithCode(124), "kernel block_waits_for_another, block \\(0, 0, 0\\): still running after 1 s");
}

}  // namespace
