// GPU --checked tests (ctest label gpu): the CSR SpMV compiled with --checked validates its
// inputs on the device. Good input computes what the CPU computes; a column index out of range,
// decreasing offsets, a negative size or buffers shorter than the offsets say (the counts a
// checked kernel takes) return SPL_ERR_BAD_INPUT, and the output is not written
// by the kernels after the failed check. Without a CUDA driver the stubs fail with SPL_ERR_CUDA.
// The same holds in mapBlock/mapThread nests with barriers (the hand-mapped SpMV, and a gather
// whose index is only checked inside the nest), where a failing thread must still reach the
// barriers: the call returns SPL_ERR_BAD_INPUT rather than hanging or failing the launch.
#include <random>

#include "e2e_support.h"
#include "gpu_checked_mapped.h"
#include "gpu_support.h"
#include "spl_runtime.h"
#include "spmv_csr.h"
#include "spmv_csr_gpu.h"

namespace {

using spl_gpu_test::download;
using spl_gpu_test::upload;

struct Csr {
  std::vector<int32_t> offs, cols;
  std::vector<float> vals;
};

// Checked: cols and vals are each followed by the element count of their buffer.
using CsrSpmv = int (*)(void *, int64_t, int64_t, const int32_t *, const int32_t *, int64_t, const float *, int64_t,
                        const float *, float *);

/// Runs a checked cuda SpMV on a 3 x 4 matrix; returns its code and the output. `shortBy`
/// passes counts that many elements smaller than the buffers.
int run(const Csr &a, int64_t n, int64_t m, std::vector<float> &y, CsrSpmv spmv = &spl_spmv_csr_cuda,
        int64_t shortBy = 0) {
  std::vector<float> x = {1, 2, 3, 4};
  void *offs = upload(a.offs), *cols = upload(a.cols), *vals = upload(a.vals), *dx = upload(x),
       *out = upload(std::vector<float>(3, -1.0f));
  const int64_t ncols = static_cast<int64_t>(a.cols.size()) - shortBy, nvals = static_cast<int64_t>(a.vals.size());
  int rc = spmv(nullptr, n, m, static_cast<int32_t *>(offs), static_cast<int32_t *>(cols), ncols,
                static_cast<float *>(vals), nvals, static_cast<float *>(dx), static_cast<float *>(out));
  y = download<float>(out, 3);
  for (void *p : {offs, cols, vals, dx, out}) spl_cuda_free(p, nullptr);
  return rc;
}

TEST(GpuChecked, FailsCleanlyWithoutADriver) {
  if (spl_cuda_available()) GTEST_SKIP() << "a CUDA driver is present";
  const int32_t offs[] = {0, 1}, cols[] = {0};
  const float vals[] = {1}, x[] = {1};
  float y[1];
  EXPECT_EQ(spl_spmv_csr_cuda(nullptr, 1, 1, offs, cols, 1, vals, 1, x, y), SPL_ERR_CUDA);
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

  EXPECT_EQ(run(good, 3, 4, y, &spl_spmv_csr_cuda, 1), SPL_ERR_BAD_INPUT) << "cols holds 3 of the 4 entries";
  EXPECT_EQ(y, (std::vector<float>(3, -1.0f)));
  Csr pastTheEnd = good;
  pastTheEnd.offs = {0, 2, 2, 9};
  EXPECT_EQ(run(pastTheEnd, 3, 4, y), SPL_ERR_BAD_INPUT) << "offsets beyond the buffers";
}

TEST(GpuChecked, MappedSpmvWithBarriersChecksItsInput) {
  if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  Csr good{{0, 2, 2, 4}, {0, 3, 1, 2}, {1, 2, 3, 4}};
  std::vector<float> y;
  ASSERT_EQ(run(good, 3, 4, y, &spl_spmv_csr_mapped_cuda), SPL_OK) << spl_cuda_last_error();
  EXPECT_EQ(y, (std::vector<float>{1 * 1 + 2 * 4, 0, 3 * 2 + 4 * 3}));

  Csr badColumn = good;
  badColumn.cols[3] = 4;
  EXPECT_EQ(run(badColumn, 3, 4, y, &spl_spmv_csr_mapped_cuda), SPL_ERR_BAD_INPUT) << spl_cuda_last_error();
  EXPECT_EQ(y, (std::vector<float>(3, -1.0f))) << "the mapped kernel ran after the failed validation";

  Csr decreasing = good;
  decreasing.offs = {0, 2, 1, 4};
  EXPECT_EQ(run(decreasing, 3, 4, y, &spl_spmv_csr_mapped_cuda), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(run(good, 3, 4, y, &spl_spmv_csr_mapped_cuda, 1), SPL_ERR_BAD_INPUT) << "cols holds 3 of the 4 entries";
}

/// The checked gather-sum of gpu_checked_mapped.spl on n rows of k indices into x (m values):
/// the code, the output, and the output computed here in double precision.
struct GatherRun {
  int rc = 0;
  std::vector<float> out, want;
};

GatherRun gather(int64_t n, int64_t k, int64_t m, const std::vector<int32_t> &p) {
  std::vector<float> x(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j % 7) - 2.5f;
  GatherRun r;
  spl_gpu_test::DeviceBuffer dp(p), dx(x), dout(std::vector<float>(static_cast<size_t>(n), -1.0f));
  r.rc = spl_checked_gather_sum_cuda(nullptr, n, k, m, dp.as<int32_t>(), dx.as<float>(), dout.as<float>());
  r.out = dout.download<float>(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      int32_t q = p[static_cast<size_t>(i * k + j)];
      if (q >= 0 && q < m) sum += x[static_cast<size_t>(q)];
    }
    r.want.push_back(static_cast<float>(sum));
  }
  return r;
}

TEST(GpuChecked, CheckInsideAMappedNestWithABarrier) {
  if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  const int64_t n = 37, k = 21, m = 50;  // 10 blocks, the last one ragged
  std::mt19937 rng(7);
  std::vector<int32_t> p(static_cast<size_t>(n * k));
  for (int32_t &q : p) q = std::uniform_int_distribution<int32_t>(0, m - 1)(rng);
  GatherRun ok = gather(n, k, m, p);
  ASSERT_EQ(ok.rc, SPL_OK) << spl_cuda_last_error();
  EXPECT_LE(spl_gpu_test::maxRel(ok.out, ok.want), 1e-5);

  // One bad index (in the middle of row 13, and at a block's last row), several in different
  // blocks and threads, and every index bad: always SPL_ERR_BAD_INPUT.
  std::vector<std::vector<std::pair<int64_t, int32_t>>> cases = {
      {{13 * k + 9, static_cast<int32_t>(m)}}, {{35 * k + 20, -1}}, {{0, -5}, {17 * k + 3, 1000}, {36 * k + 8, static_cast<int32_t>(m)}}};
  std::vector<std::pair<int64_t, int32_t>> all;
  for (int64_t i = 0; i < n * k; ++i) all.push_back({i, static_cast<int32_t>(m + i)});
  cases.push_back(all);
  for (const auto &bad : cases) {
    std::vector<int32_t> q = p;
    for (auto [at, value] : bad) q[static_cast<size_t>(at)] = value;
    GatherRun r = gather(n, k, m, q);
    EXPECT_EQ(r.rc, SPL_ERR_BAD_INPUT) << bad.size() << " bad indices; " << spl_cuda_last_error();
  }
}

}  // namespace
