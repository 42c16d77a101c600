// End to end with --checked: kernels validate their inputs against their types (monotone
// offsets, non-negative lengths, idx values below their bound, non-negative nats, and entries
// that fit in the element counts the caller passes after each data-dependent array) and return
// SPL_ERR_BAD_INPUT instead of reading out of bounds; valid inputs still give the right results.
// Hostile inputs run on buffers that end at an inaccessible page, so a read one element past
// the end crashes the test instead of passing unnoticed.
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <random>

#include "checked_wide.h"
#include "e2e_support.h"
#include "formats.h"
#include "spmv_csr.h"
#include "spmv_deppair.h"
#include "spmv_lil.h"

#ifndef SPL_SPMV_CSR_CHECKED
#error "the kernels of this test are compiled with --checked"
#endif

namespace {

/// `count` elements of T that end where an inaccessible page begins.
template <typename T>
class Guarded {
 public:
  explicit Guarded(const std::vector<T> &values) : count_(values.size()) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = count_ * sizeof(T);
    dataPages_ = (bytes + page - 1) / page * page;
    size_ = dataPages_ + page;
    void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char *>(p);
    mprotect(base_ + dataPages_, page, PROT_NONE);
    data_ = reinterpret_cast<T *>(base_ + dataPages_ - bytes);
    std::copy(values.begin(), values.end(), data_);
  }
  ~Guarded() { munmap(base_, size_); }
  Guarded(const Guarded &) = delete;
  Guarded &operator=(const Guarded &) = delete;
  const T *get() const { return data_; }
  int64_t count() const { return static_cast<int64_t>(count_); }

 private:
  size_t count_, dataPages_ = 0, size_ = 0;
  char *base_ = nullptr;
  T *data_ = nullptr;
};

TEST(Checked, ValidCsrStillComputes) {
  for (size_t k = 0; k < spl_e2e::kNumTestMatrices; ++k) {
    const spl_csr &a = spl_e2e::testMatrices()[k].m;
    spl_csr_f32 af;
    ASSERT_EQ(spl_csr_to_f32(&a, &af), 0);
    const int64_t nnz = a.offs[a.rows] - a.offs[0];
    std::vector<float> x = spl_e2e::randomVectorF(a.cols, 3), y(static_cast<size_t>(a.rows) + 1);
    std::vector<double> xd = spl_e2e::toDouble(x), want(static_cast<size_t>(a.rows) + 1);
    spl_ref_spmv(&a, xd.data(), want.data());
    ASSERT_EQ(spl_spmv_csr(a.rows, a.cols, af.offs, af.cols_idx, nnz, af.vals, nnz, x.data(), y.data()), SPL_OK);
    EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), spl_e2e::kF32Tolerance);
    // A count larger than the entries is a larger buffer: still fine.
    ASSERT_EQ(spl_spmv_csr(a.rows, a.cols, af.offs, af.cols_idx, nnz + 7, af.vals, nnz + 1, x.data(), y.data()),
              SPL_OK);
    spl_csr_f32_free(&af);
  }
}

TEST(Checked, RejectsBadCsr) {
  const int32_t offs[] = {0, 2, 3};
  const int32_t cols[] = {0, 1, 2};
  const float vals[] = {1, 2, 3}, x[] = {1, 1, 1};
  float y[2] = {-1, -1};
  ASSERT_EQ(spl_spmv_csr(2, 3, offs, cols, 3, vals, 3, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 3.0f);
  const int32_t decreasing[] = {0, 2, 1};
  EXPECT_EQ(spl_spmv_csr(2, 3, decreasing, cols, 3, vals, 3, x, y), SPL_ERR_BAD_INPUT) << "offsets not monotone";
  const int32_t tooBig[] = {0, 1, 3};
  EXPECT_EQ(spl_spmv_csr(2, 3, offs, tooBig, 3, vals, 3, x, y), SPL_ERR_BAD_INPUT) << "column 3 of a 3-column matrix";
  const int32_t negative[] = {0, -1, 2};
  EXPECT_EQ(spl_spmv_csr(2, 3, offs, negative, 3, vals, 3, x, y), SPL_ERR_BAD_INPUT) << "negative column";
  EXPECT_EQ(spl_spmv_csr(-2, 3, offs, cols, 3, vals, 3, x, y), SPL_ERR_BAD_INPUT) << "negative row count";
  EXPECT_EQ(spl_spmv_csr(2, -3, offs, cols, 3, vals, 3, x, y), SPL_ERR_BAD_INPUT) << "negative column count";
  EXPECT_EQ(spl_spmv_csr(2, 3, offs, cols, 2, vals, 3, x, y), SPL_ERR_BAD_INPUT) << "cols holds 2 of 3 entries";
  EXPECT_EQ(spl_spmv_csr(2, 3, offs, cols, 3, vals, -1, x, y), SPL_ERR_BAD_INPUT) << "negative count";
  EXPECT_EQ(spl_row_sums(2, decreasing, vals, 3, y), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_row_sums(2, offs, vals, 2, y), SPL_ERR_BAD_INPUT) << "vals holds 2 of 3 entries";
}

// The audit's cases (issue 23): offsets that start at INT32_MIN made the validation read 2^31
// entries; offsets ending past the arrays made it read beyond them.
TEST(Checked, OffsetsBeyondTheBuffersAreRefusedBeforeAnyRead) {
  Guarded<int32_t> cols({0, 1, 2, 0, 1});
  Guarded<float> vals({1, 2, 3, 4, 5});
  const float x[] = {1, 1, 1};
  float y[3];
  const int32_t fromMin[] = {INT32_MIN, 2, 3, 5};
  EXPECT_EQ(spl_spmv_csr(3, 3, fromMin, cols.get(), cols.count(), vals.get(), vals.count(), x, y), SPL_ERR_BAD_INPUT);
  const int32_t pastEnd[] = {0, 2, 3, 9};
  EXPECT_EQ(spl_spmv_csr(3, 3, pastEnd, cols.get(), cols.count(), vals.get(), vals.count(), x, y), SPL_ERR_BAD_INPUT);
  const int32_t exact[] = {0, 2, 3, 5};
  EXPECT_EQ(spl_spmv_csr(3, 3, exact, cols.get(), cols.count(), vals.get(), vals.count(), x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 3.0f);
  EXPECT_FLOAT_EQ(y[2], 9.0f);
  const int32_t shifted[] = {INT32_MAX - 5, INT32_MAX - 3, INT32_MAX - 2, INT32_MAX};
  EXPECT_EQ(spl_spmv_csr(3, 3, shifted, cols.get(), cols.count(), vals.get(), vals.count(), x, y), SPL_OK)
      << "offsets need not start at 0";
  const int32_t lens[] = {INT32_MAX, INT32_MAX, 1};
  EXPECT_EQ(spl_spmv_lil(3, 3, lens, cols.get(), cols.count(), vals.get(), vals.count(), x, y), SPL_ERR_BAD_INPUT);
}

TEST(Checked, SixtyFourBitOffsetsThatDoNotSubtractAreRefused) {
  Guarded<int32_t> cols({0, 1, 0, 1});
  Guarded<double> vals({1, 2, 3, 4});
  const double x[] = {1, 10};
  double y[2];
  // INT64_MIN + 2 - INT64_MAX wraps to 3: a decreasing pair that looks like a row of 3.
  const int64_t wraps[] = {INT64_MAX, INT64_MIN + 2};
  EXPECT_EQ(spl_checked_csr64(1, 2, wraps, cols.get(), cols.count(), vals.get(), vals.count(), x, y),
            SPL_ERR_BAD_INPUT);
  const int64_t span[] = {INT64_MIN, INT64_MAX, INT64_MAX};
  EXPECT_EQ(spl_checked_csr64(2, 2, span, cols.get(), cols.count(), vals.get(), vals.count(), x, y), SPL_ERR_BAD_INPUT);
  const int64_t high[] = {INT64_MAX - 4, INT64_MAX - 2, INT64_MAX};
  ASSERT_EQ(spl_checked_csr64(2, 2, high, cols.get(), cols.count(), vals.get(), vals.count(), x, y), SPL_OK);
  EXPECT_DOUBLE_EQ(y[0], 21.0);
  EXPECT_DOUBLE_EQ(y[1], 43.0);
}

TEST(Checked, RejectsBadLilAndEll) {
  const int32_t lens[] = {2, -1};
  const int32_t cols[] = {0, 1, 0};
  const float vals[] = {1, 2, 3}, x[] = {1, 1};
  float y[2];
  EXPECT_EQ(spl_spmv_lil(2, 2, lens, cols, 3, vals, 3, x, y), SPL_ERR_BAD_INPUT) << "negative row length";
  const int32_t okLens[] = {2, 1};
  EXPECT_EQ(spl_spmv_lil(2, 2, okLens, cols, 3, vals, 3, x, y), SPL_OK);
  EXPECT_EQ(spl_spmv_lil(2, 2, okLens, cols, 3, vals, 2, x, y), SPL_ERR_BAD_INPUT) << "vals holds 2 of 3";
  const float ellVals[] = {1, 0, 2, 0};
  const int32_t ellCols[] = {1, 0, 5, 0};
  EXPECT_EQ(spl_spmv_ell(2, 2, 2, ellVals, ellCols, x, y), SPL_ERR_BAD_INPUT) << "ELL column 5 of 2";
  const int32_t ellOk[] = {1, 0, 0, 0};
  EXPECT_EQ(spl_spmv_ell(2, 2, 2, ellVals, ellOk, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], 2.0f);
}

// BCSR's buffers hold different counts (b*b values per block column): each gets its own.
TEST(Checked, BcsrCountsEachBuffer) {
  // Two block rows of 2x2 blocks: row 0 holds block column 1, row 1 none.
  const int32_t offs[] = {0, 1, 1};
  const float blocks[] = {1, 2, 3, 4};
  const int32_t bcols[] = {1};
  const float x[] = {0, 0, 1, 10};
  float y[4] = {-1, -1, -1, -1};
  ASSERT_EQ(spl_spmv_bcsr(2, 2, 2, offs, blocks, bcols, 4, 1, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 21.0f);
  EXPECT_FLOAT_EQ(y[1], 43.0f);
  EXPECT_FLOAT_EQ(y[2], 0.0f);
  EXPECT_EQ(spl_spmv_bcsr(2, 2, 2, offs, blocks, bcols, 3, 1, x, y), SPL_ERR_BAD_INPUT) << "3 of the 4 values";
  EXPECT_EQ(spl_spmv_bcsr(2, 2, 2, offs, blocks, bcols, 4, 0, x, y), SPL_ERR_BAD_INPUT) << "0 of the 1 block columns";
  // Blocks of size 0 hold no values: nothing to divide the count by.
  EXPECT_EQ(spl_spmv_bcsr(2, 2, 0, offs, blocks, bcols, 0, 1, x, y), SPL_OK);
}

/// A random hostile CSR: offsets from a mix of small and extreme values, buffers of a random
/// length, columns slightly out of range now and then.
struct HostileCsr {
  int64_t n = 0, m = 0;
  std::vector<int32_t> offs, cols;
  std::vector<float> vals;

  explicit HostileCsr(std::mt19937_64 &rng) {
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    n = pick(0, 5);
    m = pick(0, 4);
    const int32_t extremes[] = {INT32_MIN, INT32_MIN + 1, -1, INT32_MAX - 1, INT32_MAX};
    int32_t at = pick(0, 3) == 0 ? extremes[pick(0, 4)] : static_cast<int32_t>(pick(-2, 3));
    for (int64_t i = 0; i <= n; ++i) {
      offs.push_back(at);
      if (pick(0, 9) == 0) at = extremes[pick(0, 4)];
      else at = static_cast<int32_t>(std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, at + pick(-1, 3))));
    }
    const int64_t entries = pick(0, 8);
    for (int64_t k = 0; k < entries; ++k) {
      cols.push_back(static_cast<int32_t>(pick(-1, m)));
      vals.push_back(static_cast<float>(pick(-3, 3)));
    }
  }

  /// What the type demands of the input: monotone offsets whose entries fit the buffers and
  /// columns in [0, m). The reference result when it holds.
  bool valid(const std::vector<float> &x, std::vector<double> &y) const {
    for (int64_t i = 0; i < n; ++i)
      if (offs[i + 1] < offs[i]) return false;
    if (n > 0 && static_cast<int64_t>(offs[n]) - offs[0] > static_cast<int64_t>(cols.size())) return false;
    y.assign(static_cast<size_t>(n), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = offs[i] - static_cast<int64_t>(offs[0]); k < offs[i + 1] - static_cast<int64_t>(offs[0]); ++k) {
        if (cols[k] < 0 || cols[k] >= m) return false;
        y[i] += static_cast<double>(vals[k]) * x[cols[k]];
      }
    return true;
  }
};

// Thousands of random hostile CSR inputs: each call returns SPL_OK with the reference result
// when the input has its type and SPL_ERR_BAD_INPUT otherwise, and never reads past a buffer.
TEST(Checked, HostileCsrInputsGiveTheReferenceOrBadInput) {
  std::mt19937_64 rng(23);
  int ok = 0, bad = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    HostileCsr h(rng);
    std::vector<float> xs(static_cast<size_t>(h.m));
    for (int64_t j = 0; j < h.m; ++j) xs[j] = static_cast<float>(j + 1);
    std::vector<double> want;
    const bool valid = h.valid(xs, want);
    Guarded<int32_t> offs(h.offs), cols(h.cols);
    Guarded<float> vals(h.vals), x(xs);
    std::vector<float> y(static_cast<size_t>(h.n) + 1, -1.0f);
    const int rc = spl_spmv_csr(h.n, h.m, offs.get(), cols.get(), cols.count(), vals.get(), vals.count(), x.get(), y.data());
    // The split form takes the same arrays as a dependent pair (offsets as nats, then data).
    std::vector<float> y2(y.size(), -1.0f);
    const int rc2 = spl_spmv_split(h.n, h.m, offs.get(), vals.get(), cols.get(), cols.count(), x.get(), y2.data());
    ASSERT_EQ(rc, valid ? SPL_OK : SPL_ERR_BAD_INPUT) << "trial " << trial;
    ASSERT_EQ(rc2, rc) << "trial " << trial;
    if (!valid) {
      ++bad;
      continue;
    }
    ++ok;
    for (int64_t i = 0; i < h.n; ++i) {
      EXPECT_NEAR(y[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "trial " << trial << " row " << i;
      EXPECT_NEAR(y2[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "trial " << trial << " row " << i;
    }
  }
  // Both outcomes occur often enough for the test to mean something.
  EXPECT_GT(ok, 400);
  EXPECT_GT(bad, 400);
}

}  // namespace
