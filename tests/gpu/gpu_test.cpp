// GPU execution tests (ctest label gpu): each cuda function runs on device memory and must
// match its CPU twin on the real and random matrices. Without a CUDA driver the execution tests
// skip, and the stubs must fail cleanly with SPL_ERR_CUDA instead.
#include <dlfcn.h>

#include <cstring>
#include <optional>

#include "dense.h"
#include "e2e_support.h"
#include "einsum.h"
#include "gpu_support.h"
#include "spl_runtime.h"
#include "spmv_csr.h"
#include "spmv_csr_gpu.h"
#include "spmv_lil.h"

namespace {

using spl_gpu_test::DeviceBuffer;

template <typename T>
std::vector<T> vec(const T *p, int64_t n) {
  return std::vector<T>(p, p + n);
}

using spl_gpu_test::maxRel;

TEST(GpuStubs, FailCleanlyWithoutADriver) {
  if (spl_cuda_available()) GTEST_SKIP() << "a CUDA driver is present";
  const int32_t offs[] = {0, 1};
  const int32_t cols[] = {0};
  const float vals[] = {1}, x[] = {1};
  float y[1];
  EXPECT_EQ(spl_spmv_csr_cuda(nullptr, 1, 1, offs, cols, vals, x, y), SPL_ERR_CUDA);
  EXPECT_EQ(spl_spmv_csr_mapped_cuda(nullptr, 1, 1, offs, cols, vals, x, y), SPL_ERR_CUDA);
  float d = 0;
  EXPECT_EQ(spl_sdot_cuda(nullptr, 1, x, x, &d), SPL_ERR_CUDA);
}

class Gpu : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
};

/// The CSR SpMV of one matrix on the device: its offsets, columns, values, x, and y poisoned
/// with -1; `want` is the CPU's result.
struct CsrOnDevice {
  explicit CsrOnDevice(const spl_csr &a) : a(a) {
    EXPECT_EQ(spl_csr_to_f32(&a, &af), 0);
    x = spl_e2e::randomVectorF(a.cols, 7);
    want.resize(static_cast<size_t>(a.rows) + 1);
    EXPECT_EQ(spl_spmv_csr(a.rows, a.cols, af.offs, af.cols_idx, af.vals, x.data(), want.data()), SPL_OK);
    want.resize(static_cast<size_t>(a.rows));
    offs.emplace(vec(af.offs, a.rows + 1));
    cols.emplace(vec(af.cols_idx, a.nnz));
    vals.emplace(vec(af.vals, a.nnz));
    dx.emplace(x);
    out.emplace(std::vector<float>(static_cast<size_t>(a.rows) + 1, -1.0f));
  }
  ~CsrOnDevice() { spl_csr_f32_free(&af); }
  const spl_csr &a;
  spl_csr_f32 af{};
  std::vector<float> x, want;
  std::optional<DeviceBuffer> offs, cols, vals, dx, out;
};

// The three forms are separate tests, so that a device run that hangs names the kernel.
TEST_P(Gpu, CsrSpmvDefaultMatchesTheCpu) {
  CsrOnDevice d(spl_e2e::testMatrices()[GetParam()].m);
  ASSERT_EQ(spl_spmv_csr_cuda(nullptr, d.a.rows, d.a.cols, d.offs->as<int32_t>(), d.cols->as<int32_t>(), d.vals->as<float>(),
                              d.dx->as<float>(), d.out->as<float>()),
            SPL_OK);
  EXPECT_LT(maxRel(d.out->download<float>(d.a.rows), d.want), 1e-5);
}

TEST_P(Gpu, CsrSpmvMappedMatchesTheCpu) {
  CsrOnDevice d(spl_e2e::testMatrices()[GetParam()].m);
  ASSERT_EQ(spl_spmv_csr_mapped_cuda(nullptr, d.a.rows, d.a.cols, d.offs->as<int32_t>(), d.cols->as<int32_t>(),
                                     d.vals->as<float>(), d.dx->as<float>(), d.out->as<float>()),
            SPL_OK);
  EXPECT_LT(maxRel(d.out->download<float>(d.a.rows), d.want), 1e-5) << "hand-mapped mapBlock/mapThread kernel";
}

TEST_P(Gpu, CsrSpmvEinsumMatchesTheCpu) {
  CsrOnDevice d(spl_e2e::testMatrices()[GetParam()].m);
  ASSERT_EQ(spl_ein_spmv_cuda(nullptr, d.a.rows, d.a.cols, d.offs->as<int32_t>(), d.vals->as<float>(), d.cols->as<int32_t>(),
                              d.dx->as<float>(), d.out->as<float>()),
            SPL_OK);
  EXPECT_LT(maxRel(d.out->download<float>(d.a.rows), d.want), 1e-5) << "einsum";
}

#ifdef SPL_GPU_EMULATED
/// The emulator's counts of device allocations and kernel launches so far.
struct DriverCounts {
  uint64_t allocs = 0, frees = 0, launches = 0;
};
DriverCounts driverCounts() {
  DriverCounts c;
  void *lib = dlopen(SPL_CUDA_EMULATOR_PATH, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr) << "the emulator is not loaded";
  if (lib == nullptr) return c;
  auto counts = reinterpret_cast<void (*)(uint64_t *, uint64_t *, uint64_t *)>(dlsym(lib, "spl_emu_counts"));
  EXPECT_NE(counts, nullptr);
  if (counts != nullptr) counts(&c.allocs, &c.frees, &c.launches);
  return c;
}

// A call in steady state allocates and frees nothing on the device (its temporaries come from
// the runtime's workspace of the stream) and launches only kernels that have work: CSR is one
// merge-path kernel, LIL the device Sigma scan's three kernels and that one.
TEST_P(Gpu, CallsInSteadyStateAllocateNothing) {
  CsrOnDevice d(spl_e2e::testMatrices()[GetParam()].m);
  auto csr = [&] {
    return spl_spmv_csr_cuda(nullptr, d.a.rows, d.a.cols, d.offs->as<int32_t>(), d.cols->as<int32_t>(), d.vals->as<float>(),
                             d.dx->as<float>(), d.out->as<float>());
  };
  ASSERT_EQ(csr(), SPL_OK);
  DriverCounts before = driverCounts();
  ASSERT_EQ(csr(), SPL_OK);
  ASSERT_EQ(csr(), SPL_OK);
  DriverCounts after = driverCounts();
  EXPECT_EQ(after.allocs - before.allocs, 0u);
  EXPECT_EQ(after.frees - before.frees, 0u);
  EXPECT_EQ(after.launches - before.launches, 2u);
  EXPECT_LT(maxRel(d.out->download<float>(d.a.rows), d.want), 1e-5);

  spl_lil lil;
  ASSERT_EQ(spl_csr_to_lil(&d.a, &lil), 0);
  DeviceBuffer lens(vec(lil.lens, d.a.rows)), cols(vec(lil.cols_idx, d.a.nnz)), vals(vec(lil.vals_f32, d.a.nnz));
  std::vector<float> want(static_cast<size_t>(d.a.rows) + 1);
  ASSERT_EQ(spl_spmv_lil(d.a.rows, d.a.cols, lil.lens, lil.cols_idx, lil.vals_f32, d.x.data(), want.data()), SPL_OK);
  want.resize(static_cast<size_t>(d.a.rows));
  auto lilCall = [&] {
    return spl_spmv_lil_cuda(nullptr, d.a.rows, d.a.cols, lens.as<int32_t>(), cols.as<int32_t>(), vals.as<float>(), d.dx->as<float>(),
                             d.out->as<float>());
  };
  ASSERT_EQ(lilCall(), SPL_OK);
  before = driverCounts();
  ASSERT_EQ(lilCall(), SPL_OK);
  after = driverCounts();
  EXPECT_EQ(after.allocs - before.allocs, 0u);
  EXPECT_EQ(after.frees - before.frees, 0u);
  EXPECT_LE(after.launches - before.launches, 4u);
  EXPECT_LT(maxRel(d.out->download<float>(d.a.rows), want), 1e-5);
  spl_lil_free(&lil);
}
#endif

TEST_P(Gpu, LilUsesTheDeviceSigmaPrecomputation) {
  const spl_csr &a = spl_e2e::testMatrices()[GetParam()].m;
  spl_lil lil;
  ASSERT_EQ(spl_csr_to_lil(&a, &lil), 0);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 8);
  std::vector<float> want(static_cast<size_t>(a.rows) + 1);
  ASSERT_EQ(spl_spmv_lil(a.rows, a.cols, lil.lens, lil.cols_idx, lil.vals_f32, x.data(), want.data()), SPL_OK);
  want.resize(static_cast<size_t>(a.rows));
  DeviceBuffer lens(vec(lil.lens, a.rows)), cols(vec(lil.cols_idx, a.nnz)), vals(vec(lil.vals_f32, a.nnz)), dx(x),
      out(std::vector<float>(static_cast<size_t>(a.rows) + 1));
  ASSERT_EQ(spl_spmv_lil_cuda(nullptr, a.rows, a.cols, lens.as<int32_t>(), cols.as<int32_t>(), vals.as<float>(), dx.as<float>(),
                              out.as<float>()),
            SPL_OK);
  EXPECT_LT(maxRel(out.download<float>(a.rows), want), 1e-5);
  spl_lil_free(&lil);
}

TEST_P(Gpu, DenseDotAndGemv) {
  const spl_csr &a = spl_e2e::testMatrices()[GetParam()].m;
  std::vector<float> dense(static_cast<size_t>(a.rows * a.cols) + 1, 0.0f);
  float *d = spl_csr_to_dense_f32(&a);
  std::memcpy(dense.data(), d, sizeof(float) * static_cast<size_t>(a.rows * a.cols));
  free(d);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 9), want(static_cast<size_t>(a.rows) + 1);
  ASSERT_EQ(spl_sgemv(a.rows, a.cols, dense.data(), x.data(), want.data()), SPL_OK);
  want.resize(static_cast<size_t>(a.rows));
  DeviceBuffer dA(dense), dx(x), out(std::vector<float>(static_cast<size_t>(a.rows) + 1));
  ASSERT_EQ(spl_sgemv_cuda(nullptr, a.rows, a.cols, dA.as<float>(), dx.as<float>(), out.as<float>()), SPL_OK);
  EXPECT_LT(maxRel(out.download<float>(a.rows), want), 1e-5);
  float dotWant = 0;
  ASSERT_EQ(spl_sdot(a.cols, x.data(), x.data(), &dotWant), SPL_OK);
  DeviceBuffer dd(std::vector<float>{-1.0f});
  ASSERT_EQ(spl_sdot_cuda(nullptr, a.cols, dx.as<float>(), dx.as<float>(), dd.as<float>()), SPL_OK);
  EXPECT_LT(maxRel(dd.download<float>(1), {dotWant}), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Matrices, Gpu, ::testing::Range<size_t>(0, 13));

}  // namespace
