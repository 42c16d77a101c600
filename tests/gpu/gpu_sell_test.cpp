// GPU execution tests of stdlib/spmv.spl's SELL-C-sigma kernel for CUDA (ctest labels gpu and
// gpu_emulated): spmv_sell_rows_gpu_f32/f64 (a block per window, a thread per row) on operands
// built by the runtime's inspector, against the double-precision reference and against the CPU
// export spmv_sell_rows, on random matrices of every shape (empty rows, skewed rows, 1 x N, N x 1,
// nnz = 0, a partial last window and slice) and the bundled real ones.
#include <string>

#include "e2e_support.h"
#include "gpu_support.h"
#include "spl_matrix.h"
#include "spl_runtime.h"
#include "spmv.h"

namespace {

using spl_gpu_test::DeviceBuffer;

/// The lanes (C) and the CUDA kernel's window (in slices) spmv.spl was compiled with, from its
/// header; the CPU export compared with it runs on the same operands, so it is compiled with
/// SELL_WINDOW equal to SELL_WINDOW_GPU (tests/gpu/CMakeLists.txt).
constexpr int64_t kLanesF32 = SPL_SPMV_SELL_LANES_F32, kLanesF64 = SPL_SPMV_SELL_LANES_F64, kWindow = SPL_SPMV_SELL_WINDOW_GPU;
static_assert(SPL_SPMV_SELL_WINDOW == SPL_SPMV_SELL_WINDOW_GPU, "the CPU and CUDA kernels must share the operands");

struct Sell {
  int64_t slices = 0, slots = 0;
  std::vector<int32_t> soffs, cols, wpos;
};

template <typename T>
Sell build(const spl_csr &a, int64_t lanes, const std::vector<T> &vals, std::vector<T> &svals) {
  std::vector<int32_t> offs;
  for (int64_t i = 0; i <= a.rows; ++i) offs.push_back(static_cast<int32_t>(a.offs[i]));
  std::vector<int32_t> cols(a.cols_idx, a.cols_idx + a.nnz);
  cols.push_back(0);
  Sell s;
  EXPECT_EQ(spl_sell_sizes(a.rows, offs.data(), lanes, kWindow * lanes, &s.slices, &s.slots), SPL_OK);
  s.soffs.assign(static_cast<size_t>(s.slices) + 1, 0);
  s.cols.assign(static_cast<size_t>(s.slots * lanes) + 1, 0);
  s.wpos.assign(static_cast<size_t>(s.slices * lanes) + 1, 0);
  svals.assign(static_cast<size_t>(s.slots * lanes) + 1, T(0));
  int rc;
  if constexpr (sizeof(T) == 8)
    rc = spl_sell_build_f64(a.rows, offs.data(), cols.data(), vals.data(), lanes, kWindow * lanes, s.soffs.data(),
                            s.cols.data(), svals.data(), s.wpos.data());
  else
    rc = spl_sell_build_f32(a.rows, offs.data(), cols.data(), vals.data(), lanes, kWindow * lanes, s.soffs.data(),
                            s.cols.data(), svals.data(), s.wpos.data());
  EXPECT_EQ(rc, SPL_OK);
  return s;
}

std::vector<spl_csr> matrices() {
  std::vector<spl_csr> all;
  struct Shape {
    int64_t rows, cols;
    double density;
    spl_random_kind kind;
  };
  const Shape shapes[] = {{200, 150, 0.05, SPL_RANDOM_UNIFORM}, {301, 300, 0.03, SPL_RANDOM_EMPTY_ROWS},
                          {517, 400, 0.02, SPL_RANDOM_SKEWED},  {1, 1000, 0.3, SPL_RANDOM_UNIFORM},
                          {1000, 1, 0.3, SPL_RANDOM_UNIFORM},   {50, 60, 0.0, SPL_RANDOM_UNIFORM},
                          {3000, 3000, 0.004, SPL_RANDOM_SKEWED}};
  uint64_t seed = 11;
  for (const Shape &s : shapes) {
    spl_csr m{};
    EXPECT_EQ(spl_random_csr(s.rows, s.cols, s.density, seed++, s.kind, &m), SPL_MATRIX_OK);
    all.push_back(m);
  }
  for (const char *f : {"pores_1.mtx", "lund_a.mtx", "utm300.rua"}) {
    spl_csr m{};
    char err[256];
    std::string path = spl_e2e::testMatricesDir() + "/" + f;
    EXPECT_EQ(spl_read_matrix(path.c_str(), &m, err, sizeof err), SPL_MATRIX_OK) << err;
    all.push_back(m);
  }
  return all;
}

// The suite's name: the wide variant (windows of 64 slices: blocks of 1024 threads in f32) is
// another binary of this file.
#ifndef SELL_SUITE
#define SELL_SUITE GpuSell
#endif

class SELL_SUITE : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
};

TEST_F(SELL_SUITE, RowOrderKernelsMatchTheReferenceAndTheCpu) {
  for (spl_csr &a : matrices()) {
    SCOPED_TRACE(::testing::Message() << a.rows << " x " << a.cols << ", " << a.nnz << " entries");
    std::vector<double> x(static_cast<size_t>(a.cols) + 1), want(static_cast<size_t>(a.rows) + 1);
    spl_random_vector(5, a.cols, x.data());
    spl_ref_spmv(&a, x.data(), want.data());

    std::vector<double> v64(a.vals, a.vals + a.nnz), s64;
    v64.push_back(0);
    Sell s = build(a, kLanesF64, v64, s64);
    const size_t lanes64 = static_cast<size_t>(s.slices * kLanesF64);
    std::vector<double> cpu(lanes64 + 1, -5.0);
    ASSERT_EQ(spl_spmv_sell_rows_f64(s.slices, a.cols, s.soffs.data(), s.cols.data(), s64.data(), s.wpos.data(), x.data(),
                                     cpu.data()),
              SPL_OK);
    EXPECT_LT(spl_rel_error_f64(cpu.data(), want.data(), a.rows), 1e-12) << "the CPU export";
    DeviceBuffer dso(s.soffs), dco(s.cols), dva(s64), dwp(s.wpos), dx(x), dout(std::vector<double>(lanes64 + 1, -7.0));
    ASSERT_EQ(spl_spmv_sell_rows_gpu_f64_cuda(nullptr, s.slices, a.cols, dso.as<int32_t>(), dco.as<int32_t>(),
                                              dva.as<double>(), dwp.as<int32_t>(), dx.as<double>(), dout.as<double>()),
              SPL_OK)
        << spl_cuda_last_error();
    std::vector<double> gpu = dout.download<double>(lanes64 + 1);
    EXPECT_LT(spl_rel_error_f64(gpu.data(), want.data(), a.rows), 1e-12) << "f64";
    for (size_t r = static_cast<size_t>(a.rows); r < lanes64; ++r) EXPECT_EQ(gpu[r], 0.0) << "padding lane " << r;
    EXPECT_EQ(gpu[lanes64], -7.0) << "wrote past the end";

    std::vector<float> v32(v64.begin(), v64.end()), s32, x32(x.begin(), x.end());
    std::vector<double> x32d(x32.begin(), x32.end()), want32(static_cast<size_t>(a.rows) + 1);
    spl_ref_spmv(&a, x32d.data(), want32.data());
    Sell t = build(a, kLanesF32, v32, s32);
    const size_t lanes32 = static_cast<size_t>(t.slices * kLanesF32);
    DeviceBuffer tso(t.soffs), tco(t.cols), tva(s32), twp(t.wpos), tx(x32), tout(std::vector<float>(lanes32 + 1, -7.0f));
    ASSERT_EQ(spl_spmv_sell_rows_gpu_f32_cuda(nullptr, t.slices, a.cols, tso.as<int32_t>(), tco.as<int32_t>(),
                                              tva.as<float>(), twp.as<int32_t>(), tx.as<float>(), tout.as<float>()),
              SPL_OK)
        << spl_cuda_last_error();
    std::vector<float> gpu32 = tout.download<float>(lanes32);
    EXPECT_LT(spl_rel_error(gpu32.data(), want32.data(), a.rows), 1e-5) << "f32";
    spl_csr_free(&a);
  }
}

}  // namespace
