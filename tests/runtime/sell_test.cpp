// sell_test.cpp: the runtime's SELL-C-sigma inspector (spl_sell_sizes, spl_sell_build_*) against
// tools/matrix's spl_csr_to_sell (the reference): the same slot offsets, columns, values (f64
// and f32) and window positions, bit for bit, on random matrices of every shape (empty rows,
// skewed rows, 1 x N, N x 1, nnz = 0, a partial last window and slice) and on one large enough
// for the windows to run on several threads; then offsets not starting at 0, bad arguments, the
// choice between two windows (spl_sell_pick_sigma), and the one-call conversion a plan makes
// (spl_sell_convert_*) against the two calls.
#include "spl_runtime.h"
#include "spl_matrix.h"
#include "csr_shapes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

class Sell : public ::testing::Test {
 protected:
  void TearDown() override { spl_set_num_threads(0); }
};

using spl_test::Csr32;
using spl_test::narrow;

/// Builds with the runtime and compares everything with the reference converter.
void expectSameAsReference(const spl_csr &m, int64_t lanes, int64_t sigma, int32_t base = 0) {
  SCOPED_TRACE("lanes " + std::to_string(lanes) + " sigma " + std::to_string(sigma) + " base " + std::to_string(base));
  spl_sell ref{};
  ASSERT_EQ(spl_csr_to_sell(&m, lanes, sigma, &ref), SPL_MATRIX_OK);
  Csr32 c = narrow(m, base);
  int64_t slices = -1, slots = -1;
  ASSERT_EQ(spl_sell_sizes(m.rows, c.offs.data(), lanes, sigma, &slices, &slots), SPL_OK);
  ASSERT_EQ(slices, ref.slices);
  ASSERT_EQ(slots, ref.soffs[ref.slices]);
  const size_t stored = static_cast<size_t>(slots * lanes), lanesTotal = static_cast<size_t>(slices * lanes);
  std::vector<int32_t> soffs(static_cast<size_t>(slices) + 1, -1), scols(stored + 1, -1), wpos(lanesTotal + 1, -1);
  std::vector<double> svals(stored + 1, -1.0);
  std::vector<float> svals32(stored + 1, -1.0f);
  std::vector<int32_t> soffs2(soffs), scols2(scols), wpos2(wpos);
  ASSERT_EQ(spl_sell_build_f64(m.rows, c.offs.data(), c.cols.data(), c.vals.data(), lanes, sigma, soffs.data(), scols.data(),
                               svals.data(), wpos.data()),
            SPL_OK);
  ASSERT_EQ(spl_sell_build_f32(m.rows, c.offs.data(), c.cols.data(), c.vals32.data(), lanes, sigma, soffs2.data(),
                               scols2.data(), svals32.data(), wpos2.data()),
            SPL_OK);
  EXPECT_EQ(std::vector<int32_t>(soffs.begin(), soffs.end()), std::vector<int32_t>(ref.soffs, ref.soffs + slices + 1));
  EXPECT_EQ(std::vector<int32_t>(scols.begin(), scols.end() - 1), std::vector<int32_t>(ref.cols_idx, ref.cols_idx + stored));
  EXPECT_EQ(std::vector<double>(svals.begin(), svals.end() - 1), std::vector<double>(ref.vals, ref.vals + stored));
  EXPECT_EQ(std::vector<float>(svals32.begin(), svals32.end() - 1), std::vector<float>(ref.vals_f32, ref.vals_f32 + stored));
  EXPECT_EQ(std::vector<int32_t>(wpos.begin(), wpos.end() - 1), std::vector<int32_t>(ref.wpos, ref.wpos + lanesTotal));
  EXPECT_EQ(soffs2, soffs);
  EXPECT_EQ(scols2, scols);
  EXPECT_EQ(wpos2, wpos);
  // Nothing written past the ends.
  EXPECT_EQ(scols.back(), -1);
  EXPECT_EQ(svals.back(), -1.0);
  EXPECT_EQ(wpos.back(), -1);
  spl_sell_free(&ref);
}

TEST_F(Sell, MatchesTheReferenceConverter) {
  uint64_t seed = 1;
  for (const spl_test::RandomShape &s : spl_test::randomShapes()) {
    SCOPED_TRACE(s.name);
    spl_csr m{};
    ASSERT_EQ(spl_random_csr(s.rows, s.cols, s.density, seed++, s.kind, &m), SPL_MATRIX_OK);
    for (int64_t lanes : {1, 4, 8, 16})
      for (int64_t windowSlices : {1, 3, 8}) expectSameAsReference(m, lanes, lanes * windowSlices);
    expectSameAsReference(m, 8, 64, 7);  // offsets starting at 7
    spl_csr_free(&m);
  }
}

TEST_F(Sell, ParallelWindowsMatchTheReference) {
  spl_csr m{};
  ASSERT_EQ(spl_random_csr(200003, 200003, 0.00004, 77, SPL_RANDOM_EMPTY_ROWS, &m), SPL_MATRIX_OK);
  for (int threads : {1, 2, 4}) {
    spl_set_num_threads(threads);
    expectSameAsReference(m, 8, 64);
  }
  spl_csr_free(&m);
}

// A window's rows are ordered by a counting sort when their lengths span a range not much wider
// than the window, by a comparison sort otherwise: windows of both kinds side by side (rows of
// 0-3 entries, then windows each with one row of 5000), ties among equal lengths included.
TEST_F(Sell, BothOrdersOfAWindowMatchTheReference) {
  spl_csr m{};
  std::vector<int64_t> offs{0};
  std::vector<int32_t> cols;
  const int64_t rows = 1000, columns = 6000;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t len = i >= 500 && i % 97 == 0 ? 5000 : (i * 7) % 4;
    for (int64_t k = 0; k < len; ++k) cols.push_back(static_cast<int32_t>(k + (len < 4 ? i % 100 : 0)));
    offs.push_back(static_cast<int64_t>(cols.size()));
  }
  std::vector<double> vals(cols.size());
  for (size_t k = 0; k < vals.size(); ++k) vals[k] = 1.0 + static_cast<double>(k % 101);
  m.rows = rows;
  m.cols = columns;
  m.nnz = static_cast<int64_t>(cols.size());
  m.offs = offs.data();
  m.cols_idx = cols.data();
  m.vals = vals.data();
  for (int64_t lanes : {4, 8})
    for (int64_t windowSlices : {1, 8}) expectSameAsReference(m, lanes, lanes * windowSlices);
}

TEST_F(Sell, RejectsBadArguments) {
  const int32_t offs[] = {0, 2, 1, 3};
  const int32_t good[] = {0, 1, 2, 3};
  int64_t slices = 0, slots = 0;
  EXPECT_EQ(spl_sell_sizes(3, offs, 8, 8, &slices, &slots), SPL_ERR_BAD_INPUT);   // decreasing
  EXPECT_EQ(spl_sell_sizes(3, good, 8, 12, &slices, &slots), SPL_ERR_BAD_INPUT);  // sigma % lanes
  EXPECT_EQ(spl_sell_sizes(3, good, 0, 8, &slices, &slots), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_sizes(3, good, 2048, 2048, &slices, &slots), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_sizes(-1, good, 8, 8, &slices, &slots), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_sizes(3, nullptr, 8, 8, &slices, &slots), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_sizes(3, good, 8, 8, nullptr, &slots), SPL_ERR_BAD_INPUT);
  int32_t soffs[2], wpos[8], cols[8];
  double vals[8];
  const int32_t c3[] = {0, 1, 2};
  const double v3[] = {1, 2, 3};
  EXPECT_EQ(spl_sell_build_f64(3, offs, c3, v3, 8, 8, soffs, cols, vals, wpos), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_build_f64(3, good, nullptr, v3, 8, 8, soffs, cols, vals, wpos), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_build_f64(3, good, c3, v3, 8, 8, soffs, cols, vals, nullptr), SPL_ERR_BAD_INPUT);
  ASSERT_EQ(spl_sell_build_f64(3, good, c3, v3, 8, 8, soffs, cols, vals, wpos), SPL_OK);
  EXPECT_EQ(soffs[1], 1);
  ASSERT_EQ(spl_sell_sizes(0, good, 8, 8, &slices, &slots), SPL_OK);
  EXPECT_EQ(slices, 0);
  EXPECT_EQ(slots, 0);
}

// Offsets may start anywhere in the int32 range: row lengths are differences taken in 64 bits.
// A row from INT32_MIN to INT32_MAX (2^32 - 1 entries) cannot be stored (its slots pass
// INT32_MAX) and says so; in 32 bits its length wrapped to -1 and the sizes came back "OK".
TEST_F(Sell, RowLengthsSpanningTheInt32Range) {
  int64_t slices = 0, slots = 0;
  const int32_t whole[] = {INT32_MIN, INT32_MAX};
  EXPECT_EQ(spl_sell_sizes(1, whole, 1, 1, &slices, &slots), SPL_ERR_ALLOC);
  const int32_t low[] = {INT32_MIN, INT32_MIN + 3, INT32_MIN + 3, INT32_MIN + 8};
  ASSERT_EQ(spl_sell_sizes(3, low, 2, 2, &slices, &slots), SPL_OK);
  EXPECT_EQ(slices, 2);
  EXPECT_EQ(slots, 3 + 5);  // widths: rows 0-1 sorted longest first (3), row 2 alone (5)
  const int32_t c8[] = {0, 1, 2, 0, 1, 2, 3, 4};
  const double v8[] = {1, 2, 3, 4, 5, 6, 7, 8};
  int32_t soffs[3], cols[16], wpos[4];
  double vals[16];
  ASSERT_EQ(spl_sell_build_f64(3, low, c8, v8, 2, 2, soffs, cols, vals, wpos), SPL_OK);
  EXPECT_EQ(soffs[2], 8);
  EXPECT_EQ(vals[0], 1);   // slice 0, lane 0: row 0's first entry
  EXPECT_EQ(vals[2 * 3], 4);  // slice 1, lane 0: row 2's first entry
}

std::vector<int32_t> offsetsOf(const std::vector<int32_t> &lengths) {
  std::vector<int32_t> offs{0};
  for (int32_t l : lengths) offs.push_back(offs.back() + l);
  return offs;
}

// spl_sell_pick_sigma: the narrow window unless it stores more than SPL_SELL_WIDE_FILL (1.25)
// times the wide one's slots.
TEST_F(Sell, PicksTheNarrowWindowUnlessItPadsMuchMore) {
  int64_t sigma = 0;
  // Rows of like length (a band): no window pads, the narrow one is kept.
  std::vector<int32_t> band(1000, 5);
  band[0] = band[999] = 3;
  std::vector<int32_t> o = offsetsOf(band);
  ASSERT_EQ(spl_sell_pick_sigma(1000, o.data(), 8, 64, 512, &sigma), SPL_OK);
  EXPECT_EQ(sigma, 64);
  // One row in eight 40 long, the others 1: every narrow slice is 40 wide (320 slots for 64
  // rows); sorted over 64 rows the long ones share one slice (40 + 7).
  std::vector<int32_t> hubs(1024, 1);
  for (size_t i = 0; i < hubs.size(); i += 8) hubs[i] = 40;
  o = offsetsOf(hubs);
  ASSERT_EQ(spl_sell_pick_sigma(1024, o.data(), 8, 8, 64, &sigma), SPL_OK);
  EXPECT_EQ(sigma, 64);
  // The threshold itself, lanes 2: lengths 4 0 1 0 store 4 + 1 = 5 slots in windows of 2 and
  // 4 + 0 = 4 in one window of 4 (5 = 1.25 x 4: narrow); 4 0 2 0 store 6 against 4 (wide).
  o = offsetsOf({4, 0, 1, 0});
  ASSERT_EQ(spl_sell_pick_sigma(4, o.data(), 2, 2, 4, &sigma), SPL_OK);
  EXPECT_EQ(sigma, 2);
  o = offsetsOf({4, 0, 2, 0});
  ASSERT_EQ(spl_sell_pick_sigma(4, o.data(), 2, 2, 4, &sigma), SPL_OK);
  EXPECT_EQ(sigma, 4);
  // No rows, and equal windows.
  ASSERT_EQ(spl_sell_pick_sigma(0, o.data(), 8, 8, 64, &sigma), SPL_OK);
  EXPECT_EQ(sigma, 8);
  ASSERT_EQ(spl_sell_pick_sigma(4, o.data(), 2, 4, 4, &sigma), SPL_OK);
  EXPECT_EQ(sigma, 4);
  // Bad arguments: narrow > wide, a window not a multiple of the lanes, no output, bad offsets.
  EXPECT_EQ(spl_sell_pick_sigma(4, o.data(), 2, 4, 2, &sigma), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_pick_sigma(4, o.data(), 2, 3, 4, &sigma), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_pick_sigma(4, o.data(), 2, 2, 5, &sigma), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_pick_sigma(4, o.data(), 2, 2, 4, nullptr), SPL_ERR_BAD_INPUT);
  const int32_t decreasing[] = {0, 2, 1, 3, 4};
  EXPECT_EQ(spl_sell_pick_sigma(4, decreasing, 2, 2, 4, &sigma), SPL_ERR_BAD_INPUT);
}

}  // namespace

/// spl_sell_convert_* against the two-call path (spl_sell_sizes for both windows, the padding
/// rule, spl_sell_build_*), which MatchesTheReferenceConverter checks against tools/matrix: the
/// same window, offsets, columns, values and window positions, and the bytes it reports.
void expectConvertAsTwoCalls(const spl_csr &m, int64_t lanes, int64_t narrowRows, int64_t wideRows) {
  SCOPED_TRACE("lanes " + std::to_string(lanes) + " windows " + std::to_string(narrowRows) + "/" + std::to_string(wideRows));
  Csr32 c = narrow(m);
  int64_t slices = 0, narrowSlots = 0, wideSlots = 0;
  ASSERT_EQ(spl_sell_sizes(m.rows, c.offs.data(), lanes, narrowRows, &slices, &narrowSlots), SPL_OK);
  ASSERT_EQ(spl_sell_sizes(m.rows, c.offs.data(), lanes, wideRows, &slices, &wideSlots), SPL_OK);
  const int64_t sigma =
      static_cast<double>(narrowSlots) > SPL_SELL_WIDE_FILL * static_cast<double>(wideSlots) ? wideRows : narrowRows;
  const int64_t slots = sigma == narrowRows ? narrowSlots : wideSlots;
  const size_t stored = static_cast<size_t>(slots * lanes), lanesTotal = static_cast<size_t>(slices * lanes);
  std::vector<int32_t> soffs(static_cast<size_t>(slices) + 1), scols(stored + 1), wpos(lanesTotal + 1);
  std::vector<double> svals(stored + 1);
  std::vector<float> svals32(stored + 1);
  ASSERT_EQ(spl_sell_build_f64(m.rows, c.offs.data(), c.cols.data(), c.vals.data(), lanes, sigma, soffs.data(), scols.data(),
                               svals.data(), wpos.data()),
            SPL_OK);
  ASSERT_EQ(spl_sell_build_f32(m.rows, c.offs.data(), c.cols.data(), c.vals32.data(), lanes, sigma, soffs.data(),
                               scols.data(), svals32.data(), wpos.data()),
            SPL_OK);
  spl_sell_operands d{}, f{};
  ASSERT_EQ(spl_sell_convert_f64(m.rows, c.offs.data(), c.cols.data(), c.vals.data(), lanes, narrowRows, wideRows, &d), SPL_OK);
  ASSERT_EQ(spl_sell_convert_f32(m.rows, c.offs.data(), c.cols.data(), c.vals32.data(), lanes, narrowRows, wideRows, &f), SPL_OK);
  for (const spl_sell_operands *s : {&d, &f}) {
    EXPECT_EQ(s->rows, m.rows);
    EXPECT_EQ(s->lanes, lanes);
    EXPECT_EQ(s->sigma, sigma);
    EXPECT_EQ(s->slices, slices);
    EXPECT_EQ(s->slots, slots);
    ASSERT_TRUE(s->soffs && s->scols && s->svals && s->wpos);
    EXPECT_EQ(std::vector<int32_t>(s->soffs, s->soffs + slices + 1), soffs);
    EXPECT_EQ(std::vector<int32_t>(s->scols, s->scols + stored), std::vector<int32_t>(scols.begin(), scols.end() - 1));
    EXPECT_EQ(std::vector<int32_t>(s->wpos, s->wpos + lanesTotal), std::vector<int32_t>(wpos.begin(), wpos.end() - 1));
  }
  const double *dv = static_cast<const double *>(d.svals);
  const float *fv = static_cast<const float *>(f.svals);
  EXPECT_EQ(std::vector<double>(dv, dv + stored), std::vector<double>(svals.begin(), svals.end() - 1));
  EXPECT_EQ(std::vector<float>(fv, fv + stored), std::vector<float>(svals32.begin(), svals32.end() - 1));
  const int64_t atLeastOne = std::max<int64_t>(slots * lanes, 1);
  EXPECT_EQ(d.bytes, static_cast<int64_t>(4 * (slices + 1) + 12 * atLeastOne + 4 * std::max<int64_t>(slices * lanes, 1)));
  EXPECT_EQ(f.bytes, static_cast<int64_t>(4 * (slices + 1) + 8 * atLeastOne + 4 * std::max<int64_t>(slices * lanes, 1)));
  spl_sell_operands_free(&d);
  spl_sell_operands_free(&f);
  EXPECT_EQ(d.soffs, nullptr);
  EXPECT_EQ(d.bytes, 0);
}

TEST_F(Sell, ConvertInOneCallMatchesTheTwoCalls) {
  std::vector<spl_test::RandomShape> shapes = spl_test::randomShapes();
  shapes.push_back({"none", 0, 10, 0.0, SPL_RANDOM_UNIFORM});
  uint64_t seed = 31;
  for (const spl_test::RandomShape &s : shapes) {
    SCOPED_TRACE(s.name);
    spl_csr m{};
    ASSERT_EQ(spl_random_csr(s.rows, s.cols, s.density, seed++, s.kind, &m), SPL_MATRIX_OK);
    for (int64_t lanes : {1, 4, 8, 16}) {
      expectConvertAsTwoCalls(m, lanes, lanes, 4 * lanes);
      expectConvertAsTwoCalls(m, lanes, 8 * lanes, 64 * lanes);
      expectConvertAsTwoCalls(m, lanes, 3 * lanes, 3 * lanes);
    }
    spl_csr_free(&m);
  }
  // Large enough for the windows to run on several threads.
  spl_csr big{};
  ASSERT_EQ(spl_random_csr(100003, 100003, 0.00004, 91, SPL_RANDOM_EMPTY_ROWS, &big), SPL_MATRIX_OK);
  for (int threads : {1, 2, 4}) {
    spl_set_num_threads(threads);
    expectConvertAsTwoCalls(big, 8, 64, 512);
  }
  spl_csr_free(&big);
}

TEST_F(Sell, ConvertRejectsBadArgumentsAndLeavesNothing) {
  const int32_t good[] = {0, 1, 2, 3}, decreasing[] = {0, 2, 1, 3};
  const int32_t c3[] = {0, 1, 2};
  const double v3[] = {1, 2, 3};
  spl_sell_operands s{};
  s.bytes = 99;  // overwritten even on failure
  EXPECT_EQ(spl_sell_convert_f64(3, decreasing, c3, v3, 2, 2, 4, &s), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(s.bytes, 0);
  EXPECT_EQ(s.soffs, nullptr);
  EXPECT_EQ(spl_sell_convert_f64(3, good, c3, v3, 2, 4, 6, &s), SPL_ERR_BAD_INPUT);  // 6 % 4: windows not nested
  EXPECT_EQ(spl_sell_convert_f64(3, good, c3, v3, 2, 3, 6, &s), SPL_ERR_BAD_INPUT);  // 3 % 2
  EXPECT_EQ(spl_sell_convert_f64(3, good, c3, v3, 2, 4, 2, &s), SPL_ERR_BAD_INPUT);  // narrow > wide
  EXPECT_EQ(spl_sell_convert_f64(3, good, nullptr, v3, 2, 2, 4, &s), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_convert_f64(-1, good, c3, v3, 2, 2, 4, &s), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sell_convert_f64(3, good, c3, v3, 2, 2, 4, nullptr), SPL_ERR_BAD_INPUT);
  const int32_t whole[] = {INT32_MIN, INT32_MAX};  // 2^32 - 1 entries in one row: more slots than int32
  EXPECT_EQ(spl_sell_convert_f64(1, whole, c3, v3, 1, 1, 1, &s), SPL_ERR_ALLOC);
  EXPECT_EQ(s.soffs, nullptr);
  spl_sell_operands_free(&s);  // a zeroed struct
  spl_sell_operands_free(nullptr);
}
