// The emulator's cost report (ctest label gpu_emulated only): for each seed kernel, the work its
// launches do, counted by the emulator in every thread (LLVM instructions of the optimised device
// code, bytes loaded outside shared memory), must stay within a small factor of the compulsory
// work (each nonzero, each dense element, each edge touched a bounded number of times), and no
// thread may do a share out of proportion to the others. Work 100x too large (a one-thread
// scan over a dense matrix, a thread walking a dense row alone) fails here without a device.
// The factors hold with room over what the kernels do today (commented at each bound); they are
// about the amount of work, not its speed.
#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bfs.h"
#include "dense2csr.h"
#include "e2e_support.h"
#include "gpu_support.h"
#include "spl_runtime.h"
#include "spmv_csr.h"
#include "spmv_lil.h"

namespace {

using spl_gpu_test::DeviceBuffer;

/// One launch as the emulator reports it (cuda_emulator.cpp's LaunchCost).
struct LaunchCost {
  char kernel[96];
  uint64_t threads, instructions, maxThreadInstructions, loadBytes, storeBytes, atomics, warpInstructions;
};

/// The launches of `run()`, from the emulator's cost report.
template <typename Run>
std::vector<LaunchCost> costsOf(Run run) {
  void *lib = dlopen(SPL_CUDA_EMULATOR_PATH, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr);
  if (lib == nullptr) return {};
  auto reset = reinterpret_cast<void (*)()>(dlsym(lib, "spl_emu_cost_reset"));
  auto report = reinterpret_cast<size_t (*)(LaunchCost *, size_t)>(dlsym(lib, "spl_emu_cost_report"));
  EXPECT_TRUE(reset && report);
  if (!reset || !report) return {};
  reset();
  run();
  std::vector<LaunchCost> out(64);
  out.resize(std::min<size_t>(report(out.data(), out.size()), out.size()));
  return out;
}

/// Totals over launches, and the busiest thread's share against the average thread's.
struct Work {
  uint64_t instructions = 0, warpInstructions = 0, loadBytes = 0, launches = 0;
  double worstImbalance = 0;  // max over launches of busiest / (instructions / threads)
  double worstShare = 0;      // max over launches of busiest / instructions: the critical path
};
Work total(const std::vector<LaunchCost> &costs) {
  Work w;
  for (const LaunchCost &c : costs) {
    w.instructions += c.instructions;
    w.warpInstructions += c.warpInstructions;
    w.loadBytes += c.loadBytes;
    ++w.launches;
    double mean = c.threads ? static_cast<double>(c.instructions) / static_cast<double>(c.threads) : 0;
    // Launches of a few instructions a thread say nothing about balance.
    if (c.instructions > 20000 && mean > 0)
      w.worstImbalance = std::max(w.worstImbalance, static_cast<double>(c.maxThreadInstructions) / mean);
    // A launch doing real work on a few threads (a serial loop as a one-thread kernel) has a
    // critical path as long as its work, whatever its balance.
    if (c.instructions > 100000)
      w.worstShare = std::max(w.worstShare, static_cast<double>(c.maxThreadInstructions) / static_cast<double>(c.instructions));
  }
  return w;
}

/// No thread does more than `imbalance` times the average of its launch, nor 1% of a launch.
void expectSpread(const Work &w, double imbalance) {
  EXPECT_LE(w.worstImbalance, imbalance);
  EXPECT_LE(w.worstShare, 0.01) << "a thread does " << 100 * w.worstShare << "% of a launch";
}

class GpuCost : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
};

/// A rows x cols matrix of the given kind with about `perRow` entries a row.
spl_csr randomMatrix(int64_t rows, int64_t cols, double perRow, spl_random_kind kind, uint64_t seed) {
  spl_csr a{};
  EXPECT_EQ(spl_random_csr(rows, cols, perRow / static_cast<double>(cols), seed, kind, &a), 0);
  return a;
}

template <typename T>
std::vector<T> vec(const T *p, int64_t n) {
  return std::vector<T>(p, p + n);
}

// CSR SpMV (the merge path) on uniform and skewed rows: at most 40 instructions an item (row end
// or nonzero; about 16 today) and 2.5 times the compulsory bytes (value, column and x per
// nonzero, two offsets per row; about 1.3 today); the busiest thread within 8 times the average
// whatever the skew (equal items per warp; about 3 today).
TEST_F(GpuCost, CsrSpmvIsBoundedAndBalanced) {
  for (spl_random_kind kind : {SPL_RANDOM_UNIFORM, SPL_RANDOM_SKEWED}) {
    spl_csr a = randomMatrix(20000, 20000, 8, kind, 3);
    spl_csr_f32 af;
    ASSERT_EQ(spl_csr_to_f32(&a, &af), 0);
    std::vector<float> x(static_cast<size_t>(a.cols), 0.5f);
    DeviceBuffer offs(vec(af.offs, a.rows + 1)), cols(vec(af.cols_idx, a.nnz)), vals(vec(af.vals, a.nnz)), dx(x),
        out(std::vector<float>(static_cast<size_t>(a.rows) + 1));
    auto call = [&] {
      ASSERT_EQ(spl_spmv_csr_cuda(nullptr, a.rows, a.cols, offs.as<int32_t>(), cols.as<int32_t>(), vals.as<float>(), dx.as<float>(),
                                  out.as<float>()),
                SPL_OK);
    };
    call();
    Work w = total(costsOf(call));
    double items = static_cast<double>(a.rows + a.nnz), compulsory = 12.0 * a.nnz + 8.0 * a.rows;
    SCOPED_TRACE(kind == SPL_RANDOM_UNIFORM ? "uniform rows" : "skewed rows");
    EXPECT_EQ(w.launches, 1u);
    EXPECT_LE(w.instructions, 40 * items) << w.instructions / items << " instructions an item";
    EXPECT_LE(w.loadBytes, 2.5 * compulsory) << w.loadBytes / compulsory << " times the compulsory bytes";
    expectSpread(w, 8.0);
    spl_csr_f32_free(&af);
    spl_csr_free(&a);
  }
}

// LIL SpMV with the Sigma prefix on the device: the scan's three launches and the merge path;
// at most 50 instructions an item all told (the scan adds a few a row).
TEST_F(GpuCost, LilSpmvIsBounded) {
  spl_csr a = randomMatrix(20000, 20000, 8, SPL_RANDOM_SKEWED, 5);
  spl_lil lil;
  ASSERT_EQ(spl_csr_to_lil(&a, &lil), 0);
  std::vector<float> x(static_cast<size_t>(a.cols), 0.5f);
  DeviceBuffer lens(vec(lil.lens, a.rows)), cols(vec(lil.cols_idx, a.nnz)), vals(vec(lil.vals_f32, a.nnz)), dx(x),
      out(std::vector<float>(static_cast<size_t>(a.rows) + 1));
  auto call = [&] {
    ASSERT_EQ(spl_spmv_lil_cuda(nullptr, a.rows, a.cols, lens.as<int32_t>(), cols.as<int32_t>(), vals.as<float>(), dx.as<float>(),
                                out.as<float>()),
              SPL_OK);
  };
  call();
  Work w = total(costsOf(call));
  double items = static_cast<double>(a.rows + a.nnz);
  EXPECT_LE(w.launches, 4u);
  EXPECT_LE(w.instructions, 50 * items) << w.instructions / items << " instructions an item";
  expectSpread(w, 8.0);
  spl_lil_free(&lil);
  spl_csr_free(&a);
}

// dense2csr (count per row, scan, fill) on a 600 x 600 dense array with a tenth nonzero: at most
// 60 lane instructions, 4 warp instructions (what a GPU issues) and 3 loads per dense element
// over both kernels (each element is read twice: about 38 and 1.6 today, most of them the fill's
// ballot and bookkeeping; the serial scan these kernels replaced ran 600 x 600 additions in one
// thread), and no thread 16 times the average (a warp a row).
TEST_F(GpuCost, Dense2CsrIsBoundedAndBalanced) {
  spl_csr a = randomMatrix(600, 600, 60, SPL_RANDOM_SKEWED, 7);
  float *d = spl_csr_to_dense_f32(&a);
  ASSERT_NE(d, nullptr);
  std::vector<float> dense(d, d + a.rows * a.cols);
  free(d);
  DeviceBuffer dDense(dense), offsets(std::vector<int32_t>(static_cast<size_t>(a.rows) + 1)),
      outOffs(std::vector<int32_t>(static_cast<size_t>(a.rows) + 1)), outVals(std::vector<float>(static_cast<size_t>(a.nnz) + 1)),
      outCols(std::vector<int32_t>(static_cast<size_t>(a.nnz) + 1));
  auto call = [&] {
    ASSERT_EQ(spl_dense2csr_offsets_cuda(nullptr, a.rows, a.cols, dDense.as<float>(), offsets.as<int32_t>()), SPL_OK);
    ASSERT_EQ(spl_dense2csr_cuda(nullptr, a.rows, a.cols, offsets.as<int32_t>(), dDense.as<float>(), outOffs.as<int32_t>(),
                                 outVals.as<float>(), outCols.as<int32_t>()),
              SPL_OK);
  };
  call();
  Work w = total(costsOf(call));
  double elements = static_cast<double>(a.rows * a.cols);
  EXPECT_LE(w.instructions, 60 * elements) << w.instructions / elements << " instructions a dense element";
  EXPECT_LE(w.warpInstructions, 4 * elements) << w.warpInstructions / elements << " warp instructions a dense element";
  EXPECT_LE(w.loadBytes, 3 * 4 * elements) << w.loadBytes / (4 * elements) << " loads of each element";
  expectSpread(w, 16.0);
  EXPECT_EQ(outOffs.download<int32_t>(static_cast<size_t>(a.rows) + 1), std::vector<int32_t>(a.offs, a.offs + a.rows + 1));
  spl_csr_free(&a);
}

// A BFS step (count, then expand) over every vertex of a graph of random degrees: at most 20
// warp instructions (what a GPU issues) an edge or vertex (about 9 today; a lane's count is
// higher, 8 lanes sharing each vertex), and no thread 16 times the average (8 lanes a vertex in
// both kernels). Not yet balanced: hub vertices of a skewed graph, which 8 lanes each walk (a
// dense row's hub: 4.9 ms on an H200).
TEST_F(GpuCost, BfsStepIsBoundedAndBalanced) {
  spl_csr a = randomMatrix(20000, 20000, 8, SPL_RANDOM_UNIFORM, 9);
  const int64_t n = a.rows;
  std::vector<int32_t> nodes(a.offs, a.offs + n + 1), edges(a.cols_idx, a.cols_idx + a.nnz), frontier;
  std::vector<uint8_t> seen(static_cast<size_t>(n) + 1);
  for (int64_t v = 0; v < n; ++v) {
    seen[v] = v % 3 == 0;
    frontier.push_back(static_cast<int32_t>(v));
  }
  const int64_t m = n;
  DeviceBuffer dNodes(nodes), dEdges(edges), dSeen(seen), dFrontier(frontier), dOffsets(std::vector<int32_t>(static_cast<size_t>(m) + 1)),
      dK(std::vector<int64_t>(1)), dNext(std::vector<int32_t>(static_cast<size_t>(a.nnz) + 1));
  auto call = [&] {
    ASSERT_EQ(spl_bfs_count_cuda(nullptr, n, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), m, dFrontier.as<int32_t>(),
                                 dOffsets.as<int32_t>()),
              SPL_OK);
    ASSERT_EQ(spl_bfs_frontier_cuda(nullptr, n, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), m, dFrontier.as<int32_t>(),
                                    dOffsets.as<int32_t>(), dK.as<int64_t>(), dNext.as<int32_t>()),
              SPL_OK);
  };
  call();
  Work w = total(costsOf(call));
  double items = static_cast<double>(n + a.nnz);
  EXPECT_LE(w.warpInstructions, 20 * items) << w.warpInstructions / items << " warp instructions an edge or vertex";
  expectSpread(w, 16.0);
  spl_csr_free(&a);
}

}  // namespace
