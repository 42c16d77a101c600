// End to end: stdlib/spmv.spl's SELL-C-sigma SpMV (spmv_sell_f32/f64) on operands built by
// tools/matrix's spl_csr_to_sell, mapped back to rows by sell_rows (and spl_sell_unpermute), against the
// double-precision reference on the real and random matrices, for sigma 1 (rows in order),
// a sigma that is not a multiple of the lanes (slices straddle windows), 64 and all rows.
// spmv_sell_rows (y in row order, through wpos) runs on sigma = its window of SELL_WINDOW slices.
// The lanes and window are those the kernels were compiled with (-D), read from the header.
#include "e2e_support.h"
#include "spmv.h"

#define SELL_F32_LANES SPL_SPMV_SELL_LANES_F32
#define SELL_F64_LANES SPL_SPMV_SELL_LANES_F64
#define SELL_WINDOW_SLICES SPL_SPMV_SELL_WINDOW

namespace {

/// Calls a SELL kernel k(ns, m, soffs, cols, vals, rest...). A --checked build (the header says
/// so) takes the element count of cols and of vals after each: the slots times the lanes.
template <typename Kernel, typename V, typename... Rest>
int callSell(Kernel k, int64_t lanes, int64_t ns, int64_t m, const int32_t *soffs, const int32_t *cols, const V *vals,
             Rest... rest) {
#ifdef SPL_SPMV_CHECKED
  const int64_t count = static_cast<int64_t>(soffs[ns] - soffs[0]) * lanes;
  return k(ns, m, soffs, cols, count, vals, count, rest...);
#else
  (void)lanes;
  return k(ns, m, soffs, cols, vals, rest...);
#endif
}

using spl_e2e::kF32Tolerance;
using spl_e2e::kF64Tolerance;

class Sell : public ::testing::TestWithParam<size_t> {};

std::vector<int64_t> sigmas(int64_t rows, int64_t lanes) { return {1, lanes + 3, 64, std::max<int64_t>(rows, 1)}; }

TEST_P(Sell, F64MatchesReference) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  std::vector<double> x(static_cast<size_t>(a.cols) + 1), want(static_cast<size_t>(a.rows) + 1);
  spl_random_vector(42, a.cols, x.data());
  spl_ref_spmv(&a, x.data(), want.data());
  for (int64_t sigma : sigmas(a.rows, SELL_F64_LANES)) {
    spl_sell s{};
    ASSERT_EQ(spl_csr_to_sell(&a, SELL_F64_LANES, sigma, &s), SPL_MATRIX_OK);
    std::vector<double> ys(static_cast<size_t>(s.slices * s.lanes) + 1, -777.0), y(static_cast<size_t>(a.rows) + 1, -555.0);
    ASSERT_EQ(
        callSell(spl_spmv_sell_f64, SELL_F64_LANES, s.slices, a.cols, s.soffs, s.cols_idx, s.vals, x.data(), ys.data()),
        SPL_OK);
    ASSERT_EQ(spl_sell_rows_f64(a.rows, s.slices * s.lanes, s.pos, ys.data(), y.data()), SPL_OK);
    EXPECT_LT(spl_rel_error_f64(y.data(), want.data(), a.rows), kF64Tolerance) << nm.name << " sigma " << sigma;
    std::vector<double> y2(static_cast<size_t>(a.rows) + 1, -555.0);
    spl_sell_unpermute(&s, ys.data(), y2.data());
    EXPECT_EQ(y2, y) << nm.name;
    // Lanes past the last row sum only padding.
    for (int64_t r = a.rows; r < s.slices * s.lanes; ++r) EXPECT_EQ(ys[static_cast<size_t>(r)], 0.0) << nm.name;
    spl_sell_free(&s);
  }
}

TEST_P(Sell, F32MatchesReference) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  const spl_csr &a = nm.m;
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 7);
  std::vector<double> xd = spl_e2e::toDouble(x), want(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, xd.data(), want.data());
  for (int64_t sigma : sigmas(a.rows, SELL_F32_LANES)) {
    spl_sell s{};
    ASSERT_EQ(spl_csr_to_sell(&a, SELL_F32_LANES, sigma, &s), SPL_MATRIX_OK);
    std::vector<float> ys(static_cast<size_t>(s.slices * s.lanes) + 1, -777.0f), y(static_cast<size_t>(a.rows) + 1, -555.0f);
    ASSERT_EQ(callSell(spl_spmv_sell_f32, SELL_F32_LANES, s.slices, a.cols, s.soffs, s.cols_idx, s.vals_f32, x.data(),
                       ys.data()),
              SPL_OK);
    ASSERT_EQ(spl_sell_rows_f32(a.rows, s.slices * s.lanes, s.pos, ys.data(), y.data()), SPL_OK);
    EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance) << nm.name << " sigma " << sigma;
    spl_sell_free(&s);
  }
}

/// A row-order kernel pair (f64, f32) on operands built for its window of `window` slices: y
/// against the reference, padding lanes zero, nothing written past the end.
template <typename F64, typename F32>
void expectRowOrderMatchesReference(const spl_e2e::NamedMatrix &nm, int64_t window, uint64_t seed, F64 f64, F32 f32) {
  const spl_csr &a = nm.m;
  std::vector<double> x(static_cast<size_t>(a.cols) + 1), want(static_cast<size_t>(a.rows) + 1);
  spl_random_vector(seed, a.cols, x.data());
  spl_ref_spmv(&a, x.data(), want.data());
  spl_sell s{};
  ASSERT_EQ(spl_csr_to_sell(&a, SELL_F64_LANES, window * SELL_F64_LANES, &s), SPL_MATRIX_OK);
  ASSERT_NE(s.wpos, nullptr);
  std::vector<double> y(static_cast<size_t>(s.slices * s.lanes) + 1, -777.0);
  ASSERT_EQ(callSell(f64, SELL_F64_LANES, s.slices, a.cols, s.soffs, s.cols_idx, s.vals, s.wpos, x.data(), y.data()),
            SPL_OK);
  EXPECT_LT(spl_rel_error_f64(y.data(), want.data(), a.rows), kF64Tolerance) << nm.name;
  for (int64_t r = a.rows; r < s.slices * s.lanes; ++r) EXPECT_EQ(y[static_cast<size_t>(r)], 0.0) << nm.name;
  EXPECT_EQ(y[static_cast<size_t>(s.slices * s.lanes)], -777.0) << nm.name << ": wrote past the end";
  spl_sell_free(&s);

  std::vector<float> xf = spl_e2e::randomVectorF(a.cols, seed - 35);
  std::vector<double> xfd = spl_e2e::toDouble(xf), wantf(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, xfd.data(), wantf.data());
  ASSERT_EQ(spl_csr_to_sell(&a, SELL_F32_LANES, window * SELL_F32_LANES, &s), SPL_MATRIX_OK);
  std::vector<float> yf(static_cast<size_t>(s.slices * s.lanes) + 1, -777.0f);
  ASSERT_EQ(
      callSell(f32, SELL_F32_LANES, s.slices, a.cols, s.soffs, s.cols_idx, s.vals_f32, s.wpos, xf.data(), yf.data()),
      SPL_OK);
  EXPECT_LT(spl_e2e::relError(yf.data(), wantf.data(), a.rows), kF32Tolerance) << nm.name;
  spl_sell_free(&s);
}

TEST_P(Sell, RowOrderF64AndF32MatchReference) {
  expectRowOrderMatchesReference(spl_e2e::testMatrices()[GetParam()], SELL_WINDOW_SLICES, 43, spl_spmv_sell_rows_f64,
                                 spl_spmv_sell_rows_f32);
}

// The wide kernels (windows of SELL_WINDOW_WIDE slices) on operands built for that window.
TEST_P(Sell, WideRowOrderF64AndF32MatchReference) {
  expectRowOrderMatchesReference(spl_e2e::testMatrices()[GetParam()], SPL_SPMV_SELL_WINDOW_WIDE, 44,
                                 spl_spmv_sell_rows_wide_f64, spl_spmv_sell_rows_wide_f32);
}

INSTANTIATE_TEST_SUITE_P(Matrices, Sell, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices), spl_e2e::matrixParamName);

TEST(Sell, SlotOffsetsNotStartingAtZero) {
  // Slot offsets start at soffs@0, not 0 (a window of a larger SELL matrix): entries are at
  // (soffs@s - soffs@0 + t) * C + l. Two slices of SELL_F64_LANES rows, widths 2 and 1; lane l
  // of slice 0 holds x[l % 3] * 1 and x[0] * l, lane l of slice 1 holds x[2] * (l + 1).
  const int64_t c = SELL_F64_LANES;
  const int32_t soffs[] = {4, 6, 7};
  std::vector<int32_t> cols(static_cast<size_t>(3 * c));
  std::vector<double> vals(static_cast<size_t>(3 * c));
  for (int64_t l = 0; l < c; ++l) {
    cols[l] = static_cast<int32_t>(l % 3), vals[l] = 1.0;
    cols[c + l] = 0, vals[c + l] = static_cast<double>(l);
    cols[2 * c + l] = 2, vals[2 * c + l] = static_cast<double>(l + 1);
  }
  const double x[] = {10.0, 20.0, 30.0};
  std::vector<double> y(static_cast<size_t>(2 * c), -1.0);
  ASSERT_EQ(callSell(spl_spmv_sell_f64, SELL_F64_LANES, 2, 3, soffs, cols.data(), vals.data(), x, y.data()), SPL_OK);
  for (int64_t l = 0; l < c; ++l) {
    EXPECT_DOUBLE_EQ(y[l], x[l % 3] + 10.0 * static_cast<double>(l)) << l;
    EXPECT_DOUBLE_EQ(y[c + l], 30.0 * static_cast<double>(l + 1)) << l;
  }
}

#ifdef SPL_SPMV_CHECKED
// Built with --checked: a column out of range, or a window position out of its window, is
// SPL_ERR_BAD_INPUT, not a read out of bounds.
TEST(Sell, CheckedRejectsBadColumnsAndWindowPositions) {
  spl_csr a{};
  ASSERT_EQ(spl_random_csr(100, 90, 0.05, 9, SPL_RANDOM_UNIFORM, &a), SPL_MATRIX_OK);
  spl_sell s{};
  ASSERT_EQ(spl_csr_to_sell(&a, SELL_F64_LANES, SELL_WINDOW_SLICES * SELL_F64_LANES, &s), SPL_MATRIX_OK);
  std::vector<double> x(90, 1.0), y(static_cast<size_t>(s.slices * s.lanes) + 1);
  ASSERT_EQ(callSell(spl_spmv_sell_rows_f64, SELL_F64_LANES, s.slices, 90, s.soffs, s.cols_idx, s.vals, s.wpos,
                     x.data(), y.data()),
            SPL_OK);
  const int32_t col = s.cols_idx[0];
  s.cols_idx[0] = 90;
  EXPECT_EQ(callSell(spl_spmv_sell_f64, SELL_F64_LANES, s.slices, 90, s.soffs, s.cols_idx, s.vals, x.data(), y.data()),
            SPL_ERR_BAD_INPUT);
  EXPECT_EQ(callSell(spl_spmv_sell_rows_f64, SELL_F64_LANES, s.slices, 90, s.soffs, s.cols_idx, s.vals, s.wpos,
                     x.data(), y.data()),
            SPL_ERR_BAD_INPUT);
  s.cols_idx[0] = col;
  const int32_t last = s.wpos[s.slices * s.lanes - 1];
  s.wpos[s.slices * s.lanes - 1] = static_cast<int32_t>(SELL_WINDOW_SLICES * SELL_F64_LANES);
  EXPECT_EQ(callSell(spl_spmv_sell_rows_f64, SELL_F64_LANES, s.slices, 90, s.soffs, s.cols_idx, s.vals, s.wpos,
                     x.data(), y.data()),
            SPL_ERR_BAD_INPUT);
  s.wpos[s.slices * s.lanes - 1] = last;
  // Buffers one element shorter than the slots need: refused before anything is read.
  const int64_t entries = static_cast<int64_t>(s.soffs[s.slices] - s.soffs[0]) * s.lanes;
  EXPECT_EQ(spl_spmv_sell_f64(s.slices, 90, s.soffs, s.cols_idx, entries - 1, s.vals, entries, x.data(), y.data()),
            SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_spmv_sell_f64(s.slices, 90, s.soffs, s.cols_idx, entries, s.vals, entries - 1, x.data(), y.data()),
            SPL_ERR_BAD_INPUT);
  EXPECT_EQ(callSell(spl_spmv_sell_rows_f64, SELL_F64_LANES, s.slices, 90, s.soffs, s.cols_idx, s.vals, s.wpos,
                     x.data(), y.data()),
            SPL_OK);
  spl_sell_free(&s);
  spl_csr_free(&a);
}
#endif

TEST(Sell, NoSlices) {
  const int32_t soffs[] = {0};
  double y[1] = {-1};
  const int32_t *noCols = nullptr;
  const double *noVals = nullptr, *noX = nullptr;
  ASSERT_EQ(callSell(spl_spmv_sell_f64, SELL_F64_LANES, 0, 0, soffs, noCols, noVals, noX, y), SPL_OK);
  EXPECT_EQ(y[0], -1.0);
}

}  // namespace
