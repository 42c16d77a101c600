// GPU --checked tests (ctest label gpu): the CSR SpMV compiled with --checked validates its
// inputs on the device. Good input computes what the CPU computes; a column index out of range,
// decreasing offsets or a negative size return SPL_ERR_BAD_INPUT, and the output is not written
// by the kernels after the failed check. Without a CUDA driver the stubs fail with SPL_ERR_CUDA.
#include "e2e_support.h"
#include "gpu_support.h"
#include "spl_runtime.h"
#include "spmv_csr.h"

namespace {

using spl_gpu_test::download;
using spl_gpu_test::upload;

struct Csr {
  std::vector<int32_t> offs, cols;
  std::vector<float> vals;
};

/// Runs the checked cuda SpMV on a 3 x 4 matrix; returns its code and the output.
int run(const Csr &a, int64_t n, int64_t m, std::vector<float> &y) {
  std::vector<float> x = {1, 2, 3, 4};
  void *offs = upload(a.offs), *cols = upload(a.cols), *vals = upload(a.vals), *dx = upload(x),
       *out = upload(std::vector<float>(3, -1.0f));
  int rc = spl_spmv_csr_cuda(nullptr, n, m, static_cast<int32_t *>(offs), static_cast<int32_t *>(cols),
                             static_cast<float *>(vals), static_cast<float *>(dx), static_cast<float *>(out));
  y = download<float>(out, 3);
  for (void *p : {offs, cols, vals, dx, out}) spl_cuda_free(p, nullptr);
  return rc;
}

TEST(GpuChecked, FailsCleanlyWithoutADriver) {
  if (spl_cuda_available()) GTEST_SKIP() << "a CUDA driver is present";
  const int32_t offs[] = {0, 1}, cols[] = {0};
  const float vals[] = {1}, x[] = {1};
  float y[1];
  EXPECT_EQ(spl_spmv_csr_cuda(nullptr, 1, 1, offs, cols, vals, x, y), SPL_ERR_CUDA);
}

TEST(GpuChecked, GoodInputMatchesTheCpuAndBadInputIsRefused) {
  if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  Csr good{{0, 2, 2, 4}, {0, 3, 1, 2}, {1, 2, 3, 4}};
  std::vector<float> y;
  ASSERT_EQ(run(good, 3, 4, y), SPL_OK);
  EXPECT_EQ(y, (std::vector<float>{1 * 1 + 2 * 4, 0, 3 * 2 + 4 * 3}));

  Csr badColumn = good;
  badColumn.cols[3] = 4;  // m = 4: out of range
  EXPECT_EQ(run(badColumn, 3, 4, y), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(y, (std::vector<float>(3, -1.0f))) << "no kernel after the failed check wrote the output";

  Csr decreasing = good;
  decreasing.offs = {0, 2, 1, 4};
  EXPECT_EQ(run(decreasing, 3, 4, y), SPL_ERR_BAD_INPUT);

  EXPECT_EQ(run(good, -1, 4, y), SPL_ERR_BAD_INPUT) << "a negative size is refused on the host";
}

}  // namespace
