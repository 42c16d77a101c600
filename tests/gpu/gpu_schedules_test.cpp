// GPU execution tests of kernels placed by hand (ctest labels gpu and gpu_emulated): the
// mapBlock/mapWarp/mapLane SpMV, the position split with atomic row updates, the CSC SpMV
// scattering with atomics and the atomic dot product of gpu_schedules.spl, each against its CPU
// export (or, for the cuda-only warp kernel, the CPU position split) on the test matrices.
// The emulator runs threads one at a time, so it exercises the atomics' code, not their races.
#include "e2e_support.h"
#include "gpu_schedules.h"
#include "gpu_support.h"
#include "spl_runtime.h"

namespace {

using spl_gpu_test::DeviceBuffer;

using spl_gpu_test::maxRel;

class GpuSchedules : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
};

TEST_P(GpuSchedules, HandPlacedKernelsMatchTheCpu) {
  const spl_csr &a = spl_e2e::testMatrices()[GetParam()].m;
  spl_csr_f32 af;
  ASSERT_EQ(spl_csr_to_f32(&a, &af), 0);
  size_t rows = static_cast<size_t>(a.rows), cols = static_cast<size_t>(a.cols), nnz = static_cast<size_t>(a.nnz);
  std::vector<int32_t> offs(af.offs, af.offs + rows + 1), colIdx(af.cols_idx, af.cols_idx + nnz);
  std::vector<float> vals(af.vals, af.vals + nnz);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 11), xt = spl_e2e::randomVectorF(a.rows, 12);
  DeviceBuffer dOffs(offs), dCols(colIdx), dVals(vals), dx(x), dxt(xt);

  std::vector<float> want(rows + 1);
  ASSERT_EQ(spl_sched_pos(a.rows, a.cols, offs.data(), vals.data(), colIdx.data(), x.data(), want.data()), SPL_OK);
  want.resize(rows);
  {
    DeviceBuffer out(std::vector<float>(rows + 1, -7.0f));
    ASSERT_EQ(spl_sched_pos_cuda(nullptr, a.rows, a.cols, dOffs.as<int32_t>(), dVals.as<float>(), dCols.as<int32_t>(),
                                 dx.as<float>(), out.as<float>()),
              SPL_OK);
    EXPECT_LT(maxRel(out.download<float>(rows), want), 1e-5) << "position split with atomics";
  }
  {
    DeviceBuffer out(std::vector<float>(rows + 1, -7.0f));
    ASSERT_EQ(spl_sched_warp_cuda(nullptr, a.rows, a.cols, dOffs.as<int32_t>(), dCols.as<int32_t>(), dVals.as<float>(),
                                  dx.as<float>(), out.as<float>()),
              SPL_OK);
    EXPECT_LT(maxRel(out.download<float>(rows), want), 1e-5) << "mapBlock/mapWarp/mapLane";
  }
  {
    // The matrix as the CSC of its transpose: y = A^T xt.
    std::vector<float> wantT(cols + 1);
    ASSERT_EQ(spl_sched_csc(a.cols, a.rows, offs.data(), vals.data(), colIdx.data(), xt.data(), wantT.data()), SPL_OK);
    wantT.resize(cols);
    DeviceBuffer out(std::vector<float>(cols + 1, -7.0f));
    ASSERT_EQ(spl_sched_csc_cuda(nullptr, a.cols, a.rows, dOffs.as<int32_t>(), dVals.as<float>(), dCols.as<int32_t>(),
                                 dxt.as<float>(), out.as<float>()),
              SPL_OK);
    EXPECT_LT(maxRel(out.download<float>(cols), wantT), 1e-5) << "CSC scatter with atomics";
  }
  {
    float dotWant = 0;
    ASSERT_EQ(spl_sched_dot(a.cols, x.data(), x.data(), &dotWant), SPL_OK);
    DeviceBuffer out(std::vector<float>{-7.0f});
    ASSERT_EQ(spl_sched_dot_cuda(nullptr, a.cols, dx.as<float>(), dx.as<float>(), out.as<float>()), SPL_OK);
    EXPECT_LT(maxRel(out.download<float>(1), {dotWant}), 1e-5) << "atomic dot product";
  }
  spl_csr_f32_free(&af);
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuSchedules, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

}  // namespace
