// End to end: ../shared/spec/examples/spmv_csr.spl compiled for the CPU, linked, and checked
// against a double-precision reference on the real and random matrices.
#include <functional>
#include <string>

#include "e2e_support.h"
#include "spmv_csr.h"

namespace {

using spl_e2e::kF32Tolerance;

class SpmvCsr : public ::testing::TestWithParam<size_t> {};

TEST_P(SpmvCsr, MatchesReference) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  spl_csr_f32 af;
  ASSERT_EQ(spl_csr_to_f32(&a, &af), 0);
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 42);
  std::vector<double> xd = spl_e2e::toDouble(x), want(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, xd.data(), want.data());

  std::vector<float> y(static_cast<size_t>(a.rows) + 1, -777.0f);
  ASSERT_EQ(spl_spmv_csr(a.rows, a.cols, af.offs, af.cols_idx, af.vals, x.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance) << nm.name;

  // The packed form: (value, column) interleaved in one struct array.
  std::vector<spl_spmv_csr_packed_A_t> packed(static_cast<size_t>(a.nnz) + 1);
  for (int64_t k = 0; k < a.nnz; ++k) packed[k] = {af.vals[k], af.cols_idx[k]};
  std::vector<float> yp(static_cast<size_t>(a.rows) + 1, -777.0f);
  ASSERT_EQ(spl_spmv_csr_packed(a.rows, a.cols, af.offs, packed.data(), x.data(), yp.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(yp.data(), want.data(), a.rows), kF32Tolerance) << nm.name;

  // Row sums: A times the all-ones vector.
  std::vector<double> ones(static_cast<size_t>(a.cols) + 1, 1.0), sums(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, ones.data(), sums.data());
  std::vector<float> ys(static_cast<size_t>(a.rows) + 1, -777.0f);
  ASSERT_EQ(spl_row_sums(a.rows, af.offs, af.vals, ys.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(ys.data(), sums.data(), a.rows), kF32Tolerance) << nm.name;
  spl_csr_f32_free(&af);
}

INSTANTIATE_TEST_SUITE_P(Matrices, SpmvCsr, ::testing::Range<size_t>(0, 13),
                         [](const ::testing::TestParamInfo<size_t> &i) {
                           std::string n = spl_e2e::testMatrices()[i.param].name;
                           for (char &c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(SpmvCsr, OffsetsNotStartingAtZero) {
  // Rows start at offs@0, not at 0: the closed form offs@i - offs@0 must be used.
  const int32_t offs[] = {5, 7, 7, 8};
  const int32_t cols[] = {0, 2, 1};
  const float vals[] = {1.0f, 2.0f, 3.0f};
  const float x[] = {10.0f, 20.0f, 30.0f};
  float y[3] = {-1, -1, -1};
  ASSERT_EQ(spl_spmv_csr(3, 3, offs, cols, vals, x, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], 70.0f);
  EXPECT_FLOAT_EQ(y[1], 0.0f);
  EXPECT_FLOAT_EQ(y[2], 60.0f);
}

TEST(SpmvCsr, EveryRowLengthAcrossTheLoopVersions) {
  // Row i holds i entries (0 to 140): loopir/SegmentVersioning's versions for the CPU the test
  // runs on, each boundary from both sides and every remainder: with AVX-512 the scalar loop
  // (under 8) and the masked vector loop (16 lanes of f32: tails of 0 to 15 lanes, one to eight
  // vectors); elsewhere the scalar loop (under 32), the two-partial-sum loop (32 to 63) and the
  // vector loop (64 and more). Small integers keep every sum exact in f32.
  const int64_t rows = 141, cols = 150;
  std::vector<int32_t> offs{0}, colIdx;
  std::vector<float> vals;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = 0; k < i; ++k) {
      colIdx.push_back(static_cast<int32_t>((k * 7 + i) % cols));
      vals.push_back(static_cast<float>((k + i) % 5) - 2.0f);
    }
    offs.push_back(static_cast<int32_t>(colIdx.size()));
  }
  std::vector<float> x(cols);
  for (int64_t j = 0; j < cols; ++j) x[j] = static_cast<float>(j % 9) - 4.0f;
  std::vector<float> y(rows, -777.0f);
  ASSERT_EQ(spl_spmv_csr(rows, cols, offs.data(), colIdx.data(), vals.data(), x.data(), y.data()), SPL_OK);
  for (int64_t i = 0; i < rows; ++i) {
    double want = 0;
    for (int32_t k = offs[i]; k < offs[i + 1]; ++k) want += static_cast<double>(vals[k]) * x[colIdx[k]];
    EXPECT_EQ(y[i], static_cast<float>(want)) << "row of " << i << " entries";
  }
}

/// y = A x for rows whose lengths `length(i)` gives (columns spread, small integers: every sum
/// is exact in f32), offsets starting at `first`.
void checkRowsOfLengths(int64_t rows, int32_t first, const std::function<int64_t(int64_t)> &length) {
  const int64_t cols = 97;
  std::vector<int32_t> offs{first}, colIdx;
  std::vector<float> vals;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = 0; k < length(i); ++k) {
      colIdx.push_back(static_cast<int32_t>((i + 13 * k) % cols));
      vals.push_back(static_cast<float>((i + k) % 5) - 2.0f);
    }
    offs.push_back(first + static_cast<int32_t>(colIdx.size()));
  }
  colIdx.push_back(0), vals.push_back(0.0f);  // never empty
  std::vector<float> x(cols);
  for (int64_t j = 0; j < cols; ++j) x[j] = static_cast<float>(j % 9) - 4.0f;
  std::vector<float> y(static_cast<size_t>(rows) + 1, -777.0f);
  ASSERT_EQ(spl_spmv_csr(rows, cols, offs.data(), colIdx.data(), vals.data(), x.data(), y.data()), SPL_OK);
  int wrong = 0;
  for (int64_t i = 0; i < rows; ++i) {
    double want = 0;
    for (int32_t k = offs[i] - first; k < offs[i + 1] - first; ++k) want += static_cast<double>(vals[k]) * x[colIdx[k]];
    if (y[i] != static_cast<float>(want) && ++wrong < 5) ADD_FAILURE() << "row " << i << " of " << rows;
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(y[static_cast<size_t>(rows)], -777.0f);
}

TEST(SpmvCsr, BothPrefetchCopiesOfTheRowLoop) {
  // loopir/StreamPrefetch samples 64 pairs of neighbouring rows from 4096 rows on and runs a
  // copy of the row loop with temporal prefetches where at least half have like lengths, another
  // with non-temporal ones otherwise: rows of 5 (a stencil's), rows of 1 to 15 drawn from a
  // hash, each on 4095 rows (no sample), 4096 and 6400 rows, offsets from 0 and from 3.
  for (int64_t rows : {4095, 4096, 6400})
    for (int32_t first : {0, 3}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", offsets from " + std::to_string(first));
      checkRowsOfLengths(rows, first, [](int64_t) { return int64_t{5}; });
      checkRowsOfLengths(rows, first, [](int64_t i) { return 1 + static_cast<int64_t>((i * 2654435761u) % 15); });
    }
}

TEST(SpmvCsr, ZeroRows) {
  const int32_t offs[] = {0};
  float y[1] = {-1};
  ASSERT_EQ(spl_spmv_csr(0, 0, offs, nullptr, nullptr, nullptr, y), SPL_OK);
  EXPECT_FLOAT_EQ(y[0], -1.0f);
}

}  // namespace
