// End to end: conversions derived by isl from PLDI'15 scripts (tests/e2e/inspect.spl): CSR to
// ELL (compact_and_pad of the columns), DIA (skew, reorder, compact_and_pad of the diagonals)
// and BCSR with 2x2 and 3x2 blocks (tile, compact of the block columns). Each result is read
// back entry by entry and must hold exactly the source's entries (and zeros elsewhere), with the
// structure its format promises; repeated or out-of-range columns must be refused.
#include <algorithm>
#include <map>
#include <set>

#include "e2e_support.h"
#include "inspect.h"

namespace {

using Entries = std::map<std::pair<int64_t, int64_t>, float>;

Entries entriesOf(const spl_csr_f32 &a) {
  Entries e;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int32_t k = a.offs[i]; k < a.offs[i + 1]; ++k) e[{i, a.cols_idx[k]}] = a.vals[k];
  return e;
}

/// Adds a nonzero read back from a converted format; a slot written twice is a failure.
void put(Entries &e, int64_t i, int64_t j, float v, const std::string &what) {
  if (v == 0.0f) return;
  ASSERT_TRUE(e.emplace(std::make_pair(i, j), v).second) << what << ": entry (" << i << ", " << j << ") appears twice";
}

void expectSameEntries(const Entries &want, const Entries &got, const std::string &what) {
  // Zero values stored in the source read back as padding: compare the nonzeros.
  Entries w;
  for (const auto &[ij, v] : want)
    if (v != 0.0f) w.emplace(ij, v);
  EXPECT_EQ(w.size(), got.size()) << what;
  int bad = 0;
  for (const auto &[ij, v] : w) {
    auto it = got.find(ij);
    if ((it == got.end() || it->second != v) && ++bad <= 5)
      ADD_FAILURE() << what << ": entry (" << ij.first << ", " << ij.second << ") = " << v << " is "
                    << (it == got.end() ? std::string("missing") : std::to_string(it->second));
  }
}

void checkEll(const spl_csr_f32 &a, const std::string &what) {
  int64_t sizes[3];
  ASSERT_EQ(spl_inspect_ell_size(a.rows, a.cols, a.offs, a.vals, a.cols_idx, sizes), SPL_OK) << what;
  int64_t longest = 0;
  for (int64_t i = 0; i < a.rows; ++i) longest = std::max<int64_t>(longest, a.offs[i + 1] - a.offs[i]);
  ASSERT_EQ(sizes[0], 1);
  ASSERT_EQ(sizes[1], a.rows * longest) << what << ": the width is the longest row";
  std::vector<float> vals(sizes[1] + 1, -1.0f);
  std::vector<int32_t> cols(sizes[2] + 1, -7);
  int64_t w = -1;
  ASSERT_EQ(spl_inspect_ell(a.rows, a.cols, a.offs, a.vals, a.cols_idx, &w, vals.data(), cols.data()), SPL_OK) << what;
  ASSERT_EQ(w, longest) << what;
  EXPECT_EQ(vals[sizes[1]], -1.0f) << what << ": wrote past the values";
  Entries got;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t s = 0; s < w; ++s) {
      int32_t c = cols[i * w + s];
      ASSERT_TRUE(c >= 0 && c < a.cols) << what << ": slot column " << c;
      // Slots hold the row's entries in the CSR's order, then padding (0, 0).
      int64_t len = a.offs[i + 1] - a.offs[i];
      if (s < len) EXPECT_EQ(c, a.cols_idx[a.offs[i] + s]) << what << " row " << i << " slot " << s;
      else EXPECT_TRUE(c == 0 && vals[i * w + s] == 0.0f) << what << ": padding of row " << i;
      put(got, i, c, vals[i * w + s], what);
    }
  expectSameEntries(entriesOf(a), got, what + " (ELL)");
}

void checkDia(const spl_csr_f32 &a, const std::string &what) {
  int64_t sizes[3];
  ASSERT_EQ(spl_inspect_dia_size(a.rows, a.cols, a.offs, a.vals, a.cols_idx, sizes), SPL_OK) << what;
  std::set<int64_t> diagonals;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int32_t k = a.offs[i]; k < a.offs[i + 1]; ++k) diagonals.insert(a.cols_idx[k] - i);
  const int64_t nd = static_cast<int64_t>(diagonals.size());
  ASSERT_EQ(sizes[1], nd * a.rows) << what;
  ASSERT_EQ(sizes[2], nd) << what;
  std::vector<float> data(sizes[1] + 1, -1.0f);
  std::vector<int32_t> offsets(sizes[2] + 1, -7);
  int64_t got_nd = -1;
  ASSERT_EQ(spl_inspect_dia(a.rows, a.cols, a.offs, a.vals, a.cols_idx, &got_nd, data.data(), offsets.data()), SPL_OK);
  ASSERT_EQ(got_nd, nd) << what;
  // The diagonals come out sorted: the marked range is numbered in order.
  EXPECT_TRUE(std::equal(diagonals.begin(), diagonals.end(), offsets.begin())) << what << ": diagonal offsets";
  Entries got;
  for (int64_t d = 0; d < nd; ++d)
    for (int64_t i = 0; i < a.rows; ++i) {
      int64_t j = i + offsets[d];
      float v = data[d * a.rows + i];
      if (j < 0 || j >= a.cols) EXPECT_EQ(v, 0.0f) << what << ": outside the matrix";
      else put(got, i, j, v, what);
    }
  expectSameEntries(entriesOf(a), got, what + " (DIA)");
}

/// BCSR with b x c blocks: sizes, offsets, unique block columns per block row, every entry.
void checkBcsr(const spl_csr_f32 &a, int64_t b, int64_t c, const std::string &what) {
  using SizeFn = int (*)(int64_t, int64_t, const int32_t *, const float *, const int32_t *, int64_t *);
  using ConvFn = int (*)(int64_t, int64_t, const int32_t *, const float *, const int32_t *, int32_t *, float *, int32_t *);
  SizeFn size = b == 2 ? spl_inspect_bcsr_size : spl_inspect_bcsr32_size;
  ConvFn conv = b == 2 ? spl_inspect_bcsr : spl_inspect_bcsr32;
  const int64_t nb = (a.rows + b - 1) / b;
  std::vector<std::set<int64_t>> blockCols(static_cast<size_t>(nb));
  for (int64_t i = 0; i < a.rows; ++i)
    for (int32_t k = a.offs[i]; k < a.offs[i + 1]; ++k) blockCols[i / b].insert(a.cols_idx[k] / c);
  int64_t nnzb = 0;
  for (const auto &s : blockCols) nnzb += static_cast<int64_t>(s.size());
  int64_t sizes[3];
  ASSERT_EQ(size(a.rows, a.cols, a.offs, a.vals, a.cols_idx, sizes), SPL_OK) << what;
  ASSERT_EQ(sizes[0], nb + 1) << what;
  ASSERT_EQ(sizes[1], nnzb * b * c) << what;
  ASSERT_EQ(sizes[2], nnzb) << what;
  std::vector<int32_t> offs(nb + 1, -7), bcols(nnzb + 1, -7);
  std::vector<float> blocks(nnzb * b * c + 1, -1.0f);
  ASSERT_EQ(conv(a.rows, a.cols, a.offs, a.vals, a.cols_idx, offs.data(), blocks.data(), bcols.data()), SPL_OK) << what;
  Entries got;
  ASSERT_EQ(offs[0], 0) << what;
  for (int64_t ib = 0; ib < nb; ++ib) {
    ASSERT_EQ(offs[ib + 1] - offs[ib], static_cast<int32_t>(blockCols[ib].size())) << what << ": block row " << ib;
    std::set<int64_t> seen;
    for (int32_t p = offs[ib]; p < offs[ib + 1]; ++p) {
      ASSERT_TRUE(blockCols[ib].count(bcols[p])) << what << ": block column " << bcols[p] << " in block row " << ib;
      ASSERT_TRUE(seen.insert(bcols[p]).second) << what << ": block column stored twice";
      for (int64_t r = 0; r < b; ++r)
        for (int64_t q = 0; q < c; ++q) {
          float v = blocks[(p * b + r) * c + q];
          int64_t i = ib * b + r, j = bcols[p] * c + q;
          if (i >= a.rows || j >= a.cols) EXPECT_EQ(v, 0.0f) << what << ": padding outside the matrix";
          else put(got, i, j, v, what);
        }
    }
  }
  EXPECT_EQ(blocks[nnzb * b * c], -1.0f) << what << ": wrote past the blocks";
  expectSameEntries(entriesOf(a), got, what + " (BCSR)");
}

class Inspect : public ::testing::TestWithParam<size_t> {};

TEST_P(Inspect, ConversionsHoldEveryEntry) {
  const spl_e2e::NamedMatrix &nm = spl_e2e::testMatrices()[GetParam()];
  spl_csr_f32 a{};
  ASSERT_EQ(spl_csr_to_f32(&nm.m, &a), SPL_MATRIX_OK);
  checkEll(a, nm.name);
  checkDia(a, nm.name);
  checkBcsr(a, 2, 2, nm.name);
  checkBcsr(a, 3, 2, nm.name);
  spl_csr_f32_free(&a);
}

INSTANTIATE_TEST_SUITE_P(Matrices, Inspect, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices), spl_e2e::matrixParamName);

// The run-time injectivity check: a column repeated in a row would put two entries in one slot,
// an out-of-range column outside the marks; both are refused before anything is written past.
TEST(Inspect, RepeatedOrOutOfRangeColumnsAreRefused) {
  const int32_t offs[] = {0, 2, 2, 5};
  const float vals[] = {1, 2, 3, 4, 5};
  const int32_t repeated[] = {4, 1, 0, 3, 3};
  const int32_t outside[] = {4, 1, 0, 5, 3};
  const int32_t negative[] = {4, -1, 0, 2, 3};
  for (const int32_t *cols : {repeated, outside, negative}) {
    int64_t sizes[3];
    EXPECT_EQ(spl_inspect_ell_size(3, 5, offs, vals, cols, sizes), SPL_ERR_BAD_INPUT);
    EXPECT_EQ(spl_inspect_dia_size(3, 5, offs, vals, cols, sizes), SPL_ERR_BAD_INPUT);
    EXPECT_EQ(spl_inspect_bcsr_size(3, 5, offs, vals, cols, sizes), SPL_ERR_BAD_INPUT);
    std::vector<float> v(64);
    std::vector<int32_t> c(64), o(64);
    int64_t k = 0;
    EXPECT_EQ(spl_inspect_dia(3, 5, offs, vals, cols, &k, v.data(), c.data()), SPL_ERR_BAD_INPUT);
    EXPECT_EQ(spl_inspect_bcsr(3, 5, offs, vals, cols, o.data(), v.data(), c.data()), SPL_ERR_BAD_INPUT);
  }
  // The same column in two rows is fine.
  const int32_t fine[] = {4, 1, 4, 1, 3};
  int64_t sizes[3];
  EXPECT_EQ(spl_inspect_dia_size(3, 5, offs, vals, fine, sizes), SPL_OK);
}

TEST(Inspect, EmptyMatrices) {
  const int32_t offs0[] = {0};
  int64_t sizes[3] = {-1, -1, -1};
  ASSERT_EQ(spl_inspect_bcsr_size(0, 0, offs0, nullptr, nullptr, sizes), SPL_OK);
  EXPECT_EQ(sizes[0], 1);
  EXPECT_EQ(sizes[2], 0);
  int32_t o[1] = {-7};
  ASSERT_EQ(spl_inspect_bcsr(0, 0, offs0, nullptr, nullptr, o, nullptr, nullptr), SPL_OK);
  EXPECT_EQ(o[0], 0);
  int64_t nd = -1;
  ASSERT_EQ(spl_inspect_dia(0, 0, offs0, nullptr, nullptr, &nd, nullptr, nullptr), SPL_OK);
  EXPECT_EQ(nd, 0);
}

}  // namespace
