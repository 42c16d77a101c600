// Every export of the test programs that returns an assembled sparse result (a dependent pair
// whose offsets it writes: SDDMM, which reuses its input's pattern; add, mul and transpose,
// which build theirs; dense2csr, whose offsets come from the caller; the BCSR inspectors) must
// return offsets that start at 0 (LANGUAGE.md section 6) whatever its input offsets start at:
// the contract lets an input's offsets start anywhere, near INT32_MAX included. Each export is
// called with its inputs' offsets as given (from 0) and shifted by 1000 and up to INT32_MAX;
// the result has offsets from 0 and the same rows (lengths, columns, values) every time.
#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <string>
#include <vector>

#include "dense2csr.h"
#include "e2e_support.h"
#include "einsum.h"
#include "inspect.h"

namespace {

using spl_e2e::testMatrices;

/// An assembled result: offsets, values and columns, sized by the export's NAME_size.
struct Assembled {
  std::vector<int32_t> offs, cols;
  std::vector<float> vals;
};

/// Calls an export with inputs whose offsets start at `base`: first its size function into
/// sizes[3], then the export into the result's arrays.
using Call = std::function<int(int64_t base, int64_t *sizes, Assembled *out)>;

/// The result of `call` at `base`, its sizes checked against those at base 0.
Assembled assembleAt(const Call &call, int64_t base, const std::string &what) {
  int64_t sizes[3] = {-1, -1, -1};
  EXPECT_EQ(call(base, sizes, nullptr), SPL_OK) << what << ": size function from " << base;
  Assembled a;
  a.offs.assign(static_cast<size_t>(std::max<int64_t>(sizes[0], 0)) + 1, -77);
  a.vals.assign(static_cast<size_t>(std::max<int64_t>(sizes[1], 0)) + 1, -77.0f);
  a.cols.assign(static_cast<size_t>(std::max<int64_t>(sizes[2], 0)) + 1, -77);
  EXPECT_EQ(call(base, sizes, &a), SPL_OK) << what << ": export from " << base;
  a.offs.resize(static_cast<size_t>(sizes[0]));
  return a;
}

/// The same export from shifted inputs returns offsets from 0 and the same rows.
void expectRebased(const Call &call, int64_t nnz, const std::string &what) {
  Assembled want = assembleAt(call, 0, what);
  ASSERT_FALSE(want.offs.empty()) << what;
  ASSERT_EQ(want.offs[0], 0) << what << ": offsets from unshifted inputs";
  for (int64_t base : {int64_t{1000}, int64_t{INT32_MAX} - nnz - 7, int64_t{INT32_MAX} - nnz}) {
    Assembled got = assembleAt(call, base, what);
    ASSERT_EQ(got.offs, want.offs) << what << ": offsets from inputs shifted by " << base;
    size_t entries = static_cast<size_t>(want.offs.back());
    for (size_t p = 0; p < entries; ++p) {
      ASSERT_EQ(got.cols[p], want.cols[p]) << what << " from " << base << ": column of entry " << p;
      ASSERT_EQ(got.vals[p], want.vals[p]) << what << " from " << base << ": value of entry " << p;
    }
  }
}

/// `offs` shifted by `base` (int64 arithmetic; the test keeps offs[n] + base within int32).
std::vector<int32_t> shifted(const int32_t *offs, int64_t n, int64_t base) {
  std::vector<int32_t> out(static_cast<size_t>(n) + 1);
  for (int64_t i = 0; i <= n; ++i) out[static_cast<size_t>(i)] = static_cast<int32_t>(offs[i] + base);
  return out;
}

class AssembledOffsets : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    a_ = &testMatrices()[GetParam()].m;
    name_ = testMatrices()[GetParam()].name;
    ASSERT_EQ(spl_csr_to_f32(a_, &af_), 0);
  }
  void TearDown() override { spl_csr_f32_free(&af_); }
  const spl_csr *a_ = nullptr;
  spl_csr_f32 af_{};
  std::string name_;
};

TEST_P(AssembledOffsets, EinsumResultsStartAtZero) {
  const spl_csr &s = *a_;
  const int64_t k = 3;
  std::vector<float> u = spl_e2e::randomVectorF(s.rows * k, 41), v = spl_e2e::randomVectorF(s.cols * k, 42);
  expectRebased(
      [&](int64_t base, int64_t *sizes, Assembled *o) {
        std::vector<int32_t> offs = shifted(af_.offs, s.rows, base);
        if (!o) return spl_ein_sddmm_size(s.rows, s.cols, k, offs.data(), af_.vals, af_.cols_idx, u.data(), v.data(), sizes);
        return spl_ein_sddmm(s.rows, s.cols, k, offs.data(), af_.vals, af_.cols_idx, u.data(), v.data(), o->offs.data(),
                             o->vals.data(), o->cols.data());
      },
      s.nnz, name_ + " sddmm");
  // add and mul: A shifted by base, B (the same matrix) by half of it.
  for (bool mul : {false, true})
    expectRebased(
        [&](int64_t base, int64_t *sizes, Assembled *o) {
          std::vector<int32_t> ao = shifted(af_.offs, s.rows, base), bo = shifted(af_.offs, s.rows, base / 2);
          auto size = mul ? spl_ein_mul_size : spl_ein_add_size;
          auto run = mul ? spl_ein_mul : spl_ein_add;
          if (!o) return size(s.rows, s.cols, ao.data(), af_.vals, af_.cols_idx, bo.data(), af_.vals, af_.cols_idx, sizes);
          return run(s.rows, s.cols, ao.data(), af_.vals, af_.cols_idx, bo.data(), af_.vals, af_.cols_idx, o->offs.data(),
                     o->vals.data(), o->cols.data());
        },
        s.nnz, name_ + (mul ? " mul" : " add"));
  expectRebased(
      [&](int64_t base, int64_t *sizes, Assembled *o) {
        std::vector<int32_t> offs = shifted(af_.offs, s.rows, base);
        if (!o) return spl_ein_transpose_size(s.rows, s.cols, offs.data(), af_.vals, af_.cols_idx, sizes);
        return spl_ein_transpose(s.rows, s.cols, offs.data(), af_.vals, af_.cols_idx, o->offs.data(), o->vals.data(),
                                 o->cols.data());
      },
      s.nnz, name_ + " transpose");
}

TEST_P(AssembledOffsets, InspectorResultsStartAtZero) {
  const spl_csr &s = *a_;
  for (bool wide : {false, true})
    expectRebased(
        [&](int64_t base, int64_t *sizes, Assembled *o) {
          std::vector<int32_t> offs = shifted(af_.offs, s.rows, base);
          auto size = wide ? spl_inspect_bcsr32_size : spl_inspect_bcsr_size;
          auto run = wide ? spl_inspect_bcsr32 : spl_inspect_bcsr;
          if (!o) return size(s.rows, s.cols, offs.data(), af_.vals, af_.cols_idx, sizes);
          return run(s.rows, s.cols, offs.data(), af_.vals, af_.cols_idx, o->offs.data(), o->vals.data(), o->cols.data());
        },
        s.nnz, name_ + (wide ? " bcsr 3x2" : " bcsr 2x2"));
}

TEST_P(AssembledOffsets, Dense2CsrResultStartsAtZero) {
  const spl_csr &s = *a_;
  if (s.rows * s.cols > 10'000'000) GTEST_SKIP() << "the dense copy of " << name_ << " is too large for this test";
  std::vector<float> dense(static_cast<size_t>(s.rows * s.cols) + 1, 0.0f), denseT(dense.size(), 0.0f);
  for (int64_t i = 0; i < s.rows; ++i)
    for (int32_t p = af_.offs[i]; p < af_.offs[i + 1]; ++p) {
      dense[static_cast<size_t>(i * s.cols + af_.cols_idx[p])] = af_.vals[p];
      denseT[static_cast<size_t>(af_.cols_idx[p] * s.rows + i)] = af_.vals[p];
    }
  std::vector<int32_t> counted(static_cast<size_t>(s.rows) + 1);
  ASSERT_EQ(spl_dense2csr_offsets(s.rows, s.cols, dense.data(), counted.data()), SPL_OK);
  for (bool colmajor : {false, true})
    expectRebased(
        [&](int64_t base, int64_t *sizes, Assembled *o) {
          std::vector<int32_t> offsets = shifted(counted.data(), s.rows, base);
          const float *in = colmajor ? denseT.data() : dense.data();
          auto size = colmajor ? spl_dense2csr_colmajor_size : spl_dense2csr_size;
          auto run = colmajor ? spl_dense2csr_colmajor : spl_dense2csr;
          if (!o) return size(s.rows, s.cols, offsets.data(), in, sizes);
          return run(s.rows, s.cols, offsets.data(), in, o->offs.data(), o->vals.data(), o->cols.data());
        },
        counted[static_cast<size_t>(s.rows)], name_ + (colmajor ? " dense2csr (column-major)" : " dense2csr"));
}

INSTANTIATE_TEST_SUITE_P(Matrices, AssembledOffsets, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

}  // namespace
