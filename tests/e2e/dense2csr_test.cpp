// End to end: ../shared/spec/examples/dense2csr.spl (dense to CSR in two phases: the row offsets
// as a scan of the row counts, then each row compressed with `which` into a dependent pair), in
// row-major and column-major (transposed input) form, on dense copies of the test matrices and
// on hand-made shapes (all zero, one full row, 1 x N, N x 1, no columns, no rows).
#include <algorithm>
#include <limits>

#include "dense2csr.h"
#include "e2e_support.h"

namespace {

struct DenseCase {
  std::string name;
  int64_t n = 0, m = 0;
  std::vector<float> dense;  // n x m row-major, plus one spare element
};

std::vector<DenseCase> makeCases() {
  std::vector<DenseCase> cases;
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) {
    DenseCase c{nm.name, nm.m.rows, nm.m.cols, {}};
    float *d = spl_csr_to_dense_f32(&nm.m);
    if (d == nullptr) {
      ADD_FAILURE() << "cannot densify " << nm.name;
      continue;
    }
    c.dense.assign(d, d + c.n * c.m);
    free(d);
    c.dense.push_back(0.0f);
    cases.push_back(std::move(c));
  }
  auto add = [&](std::string name, int64_t n, int64_t m, uint64_t seed, double keep, int64_t fullRow) {
    DenseCase c{std::move(name), n, m, std::vector<float>(static_cast<size_t>(n * m) + 1, 0.0f)};
    std::vector<float> r = spl_e2e::randomVectorF(n * m, seed);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        float v = r[i * m + j];
        // Keep a fraction `keep` of the entries (by value, so the pattern is seeded too); the
        // full row gets every entry (a nonzero value even where the random one is 0).
        if (i == fullRow)
          c.dense[i * m + j] = v != 0.0f ? v : 0.5f;
        else if (std::fabs(v) < keep)
          c.dense[i * m + j] = v;
      }
    cases.push_back(std::move(c));
  };
  add("all_zero_7x5", 7, 5, 21, 0.0, -1);
  add("one_full_row_6x9", 6, 9, 22, 0.0, 2);
  add("full_row_and_sparse_30x40", 30, 40, 23, 0.1, 17);
  add("row_1x700", 1, 700, 24, 0.4, -1);
  add("col_700x1", 700, 1, 25, 0.4, -1);
  add("no_cols_4x0", 4, 0, 26, 0.5, -1);
  add("no_rows_0x4", 0, 4, 27, 0.5, -1);
  return cases;
}

const std::vector<DenseCase> &cases() {
  static const std::vector<DenseCase> all = makeCases();
  return all;
}
constexpr size_t kNumCases = spl_e2e::kNumTestMatrices + 7;

/// The CSR of a dense matrix, columns ascending, entries != 0 (the program's `v != 0.0`).
struct Csr {
  std::vector<int32_t> offs, cols;
  std::vector<float> vals;
};
Csr referenceCsr(const DenseCase &c) {
  Csr r;
  r.offs.push_back(0);
  for (int64_t i = 0; i < c.n; ++i) {
    for (int64_t j = 0; j < c.m; ++j)
      if (c.dense[i * c.m + j] != 0.0f) {
        r.vals.push_back(c.dense[i * c.m + j]);
        r.cols.push_back(static_cast<int32_t>(j));
      }
    r.offs.push_back(static_cast<int32_t>(r.vals.size()));
  }
  return r;
}

class Dense2Csr : public ::testing::TestWithParam<size_t> {};

/// Checks the outputs of one compressMatrix call against the reference.
void expectCsr(const Csr &want, const std::vector<int32_t> &offs, const std::vector<float> &vals,
               const std::vector<int32_t> &cols, const std::string &what) {
  const size_t nnz = want.vals.size();
  EXPECT_EQ(std::vector<int32_t>(offs.begin(), offs.end() - 1), want.offs) << what << ": out_offs";
  EXPECT_EQ(std::vector<int32_t>(cols.begin(), cols.begin() + nnz), want.cols) << what << ": cols";
  size_t bad = 0;
  for (size_t k = 0; k < nnz; ++k)
    if (!(vals[k] == want.vals[k]) && ++bad <= 5) ADD_FAILURE() << what << ": vals[" << k << "] = " << vals[k] << ", want " << want.vals[k];
  EXPECT_EQ(bad, 0u) << what;
  // Nothing written past the outputs' sizes.
  EXPECT_EQ(offs.back(), -4242) << what;
  EXPECT_EQ(cols.back(), -4242) << what;
  EXPECT_TRUE(std::isnan(vals.back())) << what;
}

TEST_P(Dense2Csr, RowAndColumnMajor) {
  const DenseCase &c = cases()[GetParam()];
  const Csr want = referenceCsr(c);
  const int64_t nnz = static_cast<int64_t>(want.vals.size());
  const float nan = std::numeric_limits<float>::quiet_NaN();

  // Phase 1: the offsets.
  std::vector<int32_t> offsets(static_cast<size_t>(c.n) + 2, -4242);
  ASSERT_EQ(spl_dense2csr_offsets(c.n, c.m, c.dense.data(), offsets.data()), SPL_OK);
  EXPECT_EQ(std::vector<int32_t>(offsets.begin(), offsets.end() - 1), want.offs) << c.name;
  EXPECT_EQ(offsets.back(), -4242) << c.name << ": wrote past n + 1 offsets";
  offsets = want.offs;  // phase 2 gets the right offsets even if phase 1 failed

  // Phase 2, row-major.
  int64_t sizes[4] = {-1, -1, -1, -99};
  ASSERT_EQ(spl_dense2csr_size(c.n, c.m, offsets.data(), c.dense.data(), sizes), SPL_OK);
  EXPECT_EQ(sizes[0], c.n + 1) << c.name;
  EXPECT_EQ(sizes[1], nnz) << c.name;
  EXPECT_EQ(sizes[2], nnz) << c.name;
  EXPECT_EQ(sizes[3], -99) << c.name;
  std::vector<int32_t> oo(static_cast<size_t>(c.n) + 2, -4242), oc(static_cast<size_t>(nnz) + 1, -4242);
  std::vector<float> ov(static_cast<size_t>(nnz) + 1, nan);
  ASSERT_EQ(spl_dense2csr(c.n, c.m, offsets.data(), c.dense.data(), oo.data(), ov.data(), oc.data()), SPL_OK);
  expectCsr(want, oo, ov, oc, c.name + " row-major");

  // Phase 2, column-major: the input is the m x n transpose.
  std::vector<float> denseT(static_cast<size_t>(c.n * c.m) + 1, 0.0f);
  for (int64_t i = 0; i < c.n; ++i)
    for (int64_t j = 0; j < c.m; ++j) denseT[j * c.n + i] = c.dense[i * c.m + j];
  int64_t sizesT[4] = {-1, -1, -1, -99};
  ASSERT_EQ(spl_dense2csr_colmajor_size(c.n, c.m, offsets.data(), denseT.data(), sizesT), SPL_OK);
  EXPECT_EQ(sizesT[0], c.n + 1) << c.name;
  EXPECT_EQ(sizesT[1], nnz) << c.name;
  EXPECT_EQ(sizesT[2], nnz) << c.name;
  EXPECT_EQ(sizesT[3], -99) << c.name;
  std::fill(oo.begin(), oo.end(), -4242);
  std::fill(oc.begin(), oc.end(), -4242);
  std::fill(ov.begin(), ov.end(), nan);
  ASSERT_EQ(spl_dense2csr_colmajor(c.n, c.m, offsets.data(), denseT.data(), oo.data(), ov.data(), oc.data()), SPL_OK);
  expectCsr(want, oo, ov, oc, c.name + " column-major");
}

INSTANTIATE_TEST_SUITE_P(Matrices, Dense2Csr, ::testing::Range<size_t>(0, kNumCases),
                         [](const ::testing::TestParamInfo<size_t> &i) {
                           std::string n = cases()[i.param].name;
                           for (char &ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(Dense2Csr, OffsetsNotStartingAtZero) {
  // Row i's entries go to positions offs@i - offs@0 of the value and column arrays, whose size
  // is offs@n - offs@0, and out_offs is offs rebased to start at 0 (an assembled pos array
  // starts at 0, LANGUAGE.md 6).
  const float dense[] = {0, 1, 2,  //
                         0, 0, 0,  //
                         3, 0, -4};
  const int32_t offs[] = {10, 12, 12, 14};
  int64_t sizes[3] = {-1, -1, -1};
  ASSERT_EQ(spl_dense2csr_size(3, 3, offs, dense, sizes), SPL_OK);
  EXPECT_EQ(sizes[0], 4);
  EXPECT_EQ(sizes[1], 4);
  EXPECT_EQ(sizes[2], 4);
  int32_t oo[4], oc[4];
  float ov[4];
  ASSERT_EQ(spl_dense2csr(3, 3, offs, dense, oo, ov, oc), SPL_OK);
  const int32_t wantC[] = {1, 2, 0, 2};
  const float wantV[] = {1, 2, 3, -4};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(oo[k], offs[k] - offs[0]);
    EXPECT_EQ(oc[k], wantC[k]) << k;
    EXPECT_EQ(ov[k], wantV[k]) << k;
  }
}

TEST(Dense2Csr, NegativeZeroIsZero) {
  // -0.0 == 0.0, so it is not an entry.
  const float dense[] = {-0.0f, 5.0f, -0.0f, 0.0f};
  int32_t offs[3] = {-1, -1, -1};
  ASSERT_EQ(spl_dense2csr_offsets(2, 2, dense, offs), SPL_OK);
  EXPECT_EQ(offs[0], 0);
  EXPECT_EQ(offs[1], 1);
  EXPECT_EQ(offs[2], 1);
}

}  // namespace
