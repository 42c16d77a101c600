// dia_test.cpp: spl_csr_diagonals and spl_dia_convert_* (a plan's DIA conversion, issue 25)
// against a reference computed here: the set of diagonals j - i and every stored slot, on random
// matrices of every shape (empty rows, skewed rows, 1 x N, N x 1, nnz = 0, dense, rectangular),
// with offsets that do not start at 0, on 1, 2 and 4 threads; the count's limit (exact up to it,
// limit + 1 past it, also when the diagonals lie outside a chunk's window or in other chunks);
// duplicate entries adding up; columns outside [0, m) left out; bad input.
#include "spl_runtime.h"
#include "spl_matrix.h"
#include "csr_shapes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using spl_test::Csr32;
using spl_test::narrow;

class Dia : public ::testing::Test {
 protected:
  void TearDown() override { spl_set_num_threads(0); }
};

/// The diagonals of c (columns in [0, m)) with each one's slots, computed the obvious way.
std::map<int64_t, std::vector<double>> reference(const Csr32 &c) {
  std::map<int64_t, std::vector<double>> diags;
  const int64_t base = c.offs[0];
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t p = c.offs[static_cast<size_t>(i)] - base; p < c.offs[static_cast<size_t>(i + 1)] - base; ++p) {
      const int64_t j = c.cols[static_cast<size_t>(p)];
      if (j < 0 || j >= c.columns) continue;
      std::vector<double> &d = diags[j - i];
      d.resize(static_cast<size_t>(c.rows), 0.0);
      d[static_cast<size_t>(i)] += c.vals[static_cast<size_t>(p)];
    }
  return diags;
}

void expectConversion(const Csr32 &c) {
  const std::map<int64_t, std::vector<double>> want = reference(c);
  const int64_t count = static_cast<int64_t>(want.size());
  int64_t got = -1;
  ASSERT_EQ(spl_csr_diagonals(c.rows, c.columns, c.offs.data(), c.cols.data(), count, &got), SPL_OK);
  EXPECT_EQ(got, count);
  ASSERT_EQ(spl_csr_diagonals(c.rows, c.columns, c.offs.data(), c.cols.data(), count + 5, &got), SPL_OK);
  EXPECT_EQ(got, count);
  if (count > 0) {
    ASSERT_EQ(spl_csr_diagonals(c.rows, c.columns, c.offs.data(), c.cols.data(), count - 1, &got), SPL_OK);
    EXPECT_EQ(got, count);  // limit + 1: past the limit
  }
  spl_dia_operands d64, d32;
  ASSERT_EQ(spl_dia_convert_f64(c.rows, c.columns, c.offs.data(), c.cols.data(), c.vals.data(), &d64), SPL_OK);
  ASSERT_EQ(spl_dia_convert_f32(c.rows, c.columns, c.offs.data(), c.cols.data(), c.vals32.data(), &d32), SPL_OK);
  EXPECT_EQ(d64.rows, c.rows);
  EXPECT_EQ(d64.cols, c.columns);
  ASSERT_EQ(d64.diagonals, count);
  ASSERT_EQ(d32.diagonals, count);
  EXPECT_EQ(d64.bytes, count * (c.rows * 8 + 4));
  EXPECT_EQ(d32.bytes, count * (c.rows * 4 + 4));
  size_t k = 0;
  for (const auto &[offset, slots] : want) {
    EXPECT_EQ(d64.offsets[k], offset);
    EXPECT_EQ(d32.offsets[k], offset);
    for (int64_t i = 0; i < c.rows; ++i) {
      const double v64 = static_cast<const double *>(d64.diags)[k * static_cast<size_t>(c.rows) + static_cast<size_t>(i)];
      const float v32 = static_cast<const float *>(d32.diags)[k * static_cast<size_t>(c.rows) + static_cast<size_t>(i)];
      EXPECT_EQ(v64, slots[static_cast<size_t>(i)]) << "diagonal " << offset << " row " << i;
      EXPECT_NEAR(v32, slots[static_cast<size_t>(i)], 1e-5 * (1 + std::abs(slots[static_cast<size_t>(i)])));
    }
    ++k;
  }
  spl_dia_operands_free(&d64);
  spl_dia_operands_free(&d32);
  EXPECT_EQ(d64.offsets, nullptr);
  EXPECT_EQ(d64.diags, nullptr);
}

TEST_F(Dia, EveryShapeMatchesTheReference) {
  std::vector<spl_test::RandomShape> shapes = spl_test::randomShapes();
  shapes.push_back({"none", 0, 10, 0.0, SPL_RANDOM_UNIFORM});
  shapes.push_back({"wide", 30, 3000, 0.1, SPL_RANDOM_UNIFORM});
  uint64_t seed = 9;
  for (const spl_test::RandomShape &s : shapes) {
    SCOPED_TRACE(s.name);
    spl_csr m{};
    ASSERT_EQ(spl_random_csr(s.rows, s.cols, s.density, seed++, s.kind, &m), SPL_MATRIX_OK);
    expectConversion(narrow(m));
    expectConversion(narrow(m, 7));  // offsets starting at 7
    spl_csr_free(&m);
  }
}

/// A 5-point stencil on a g x g grid: diagonals 0, +-1, +-g; the boundary rows miss some.
Csr32 stencil(int64_t g) {
  Csr32 c;
  c.rows = c.columns = g * g;
  c.offs.push_back(0);
  for (int64_t i = 0; i < g * g; ++i) {
    const int64_t r = i / g, col = i % g;
    for (int64_t j : {i - g, i - 1, i, i + 1, i + g}) {
      const bool inside = j >= 0 && j < g * g && !(j == i - 1 && col == 0) && !(j == i + 1 && col == g - 1);
      if (!inside || (j == i - g && r == 0)) continue;
      c.cols.push_back(static_cast<int32_t>(j));
      c.vals.push_back(j == i ? 4.0 : -1.0 - static_cast<double>(i % 7) / 8);
    }
    c.offs.push_back(static_cast<int32_t>(c.cols.size()));
  }
  for (double v : c.vals) c.vals32.push_back(static_cast<float>(v));
  c.cols.push_back(0), c.vals.push_back(0), c.vals32.push_back(0);
  return c;
}

/// Three diagonals, 0 and +-half, on n rows: the far ones lie outside every chunk's window.
Csr32 farDiagonals(int64_t n) {
  Csr32 c;
  c.rows = c.columns = n;
  c.offs.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j : {i - n / 2, i, i + n / 2})
      if (j >= 0 && j < n) c.cols.push_back(static_cast<int32_t>(j)), c.vals.push_back(static_cast<double>(j % 5) + 1);
    c.offs.push_back(static_cast<int32_t>(c.cols.size()));
  }
  for (double v : c.vals) c.vals32.push_back(static_cast<float>(v));
  c.cols.push_back(0), c.vals.push_back(0), c.vals32.push_back(0);
  return c;
}

// Many row chunks (the pool's), on every thread count: the diagonals of all chunks merge into one
// set, those outside a chunk's window included.
TEST_F(Dia, StencilsOnEveryThreadCount) {
  const std::vector<std::pair<const char *, Csr32>> matrices = {
      {"stencil 3x3", stencil(3)}, {"stencil 180x180", stencil(180)}, {"far diagonals", farDiagonals(40000)}};
  for (const auto &[name, c] : matrices)
    for (int threads : {1, 2, 4}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(threads) + " threads");
      spl_set_num_threads(threads);
      expectConversion(c);
    }
}

/// n rows of the columns row(i) gives (a column outside [0, m) included as given).
template <typename Row> Csr32 fromRows(int64_t n, int64_t m, Row row) {
  Csr32 c;
  c.rows = n;
  c.columns = m;
  c.offs.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j : row(i)) c.cols.push_back(static_cast<int32_t>(j)), c.vals.push_back(static_cast<double>((i + j) % 9) + 1);
    c.offs.push_back(static_cast<int32_t>(c.cols.size()));
  }
  for (double v : c.vals) c.vals32.push_back(static_cast<float>(v));
  c.cols.push_back(0), c.vals.push_back(0), c.vals32.push_back(0);
  return c;
}

// The count marks only the first row of a run of rows of one length where each holds the row
// before it shifted by one column; these runs must not hide a diagonal: a first row with a column
// outside [0, m) (the rows after it hold a valid one on that row's diagonal; one chunk of rows,
// so that no later chunk's first row marks it), one row deep in a
// long run that breaks the shift, rows whose columns step by two (each row on diagonals of its
// own: 601 on 600 rows), a band whose last rows' columns run past m, on 1 and 2 threads.
TEST_F(Dia, RunsOfShiftedRowsHideNoDiagonal) {
  const int64_t n = 40000;
  const std::vector<std::pair<const char *, Csr32>> matrices = {
      {"first row's column -1", fromRows(10000, 10000, [](int64_t i) { return std::vector<int64_t>{i - 1, i}; })},
      {"one row breaks the run", fromRows(n, n, [](int64_t i) {
         return i == 25000 ? std::vector<int64_t>{i - 7, i, i + 1} : std::vector<int64_t>{i - 2, i, i + 1};
       })},
      {"columns step by two", fromRows(600, 1202, [](int64_t i) { return std::vector<int64_t>{2 * i, 2 * i + 1}; })},
      {"band past m", fromRows(n, n, [](int64_t i) { return std::vector<int64_t>{i, i + 1, i + 2}; })}};
  for (const auto &[name, c] : matrices)
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(threads) + " threads");
      spl_set_num_threads(threads);
      expectConversion(c);
    }
}

// Past the limit the count stops: a scattered matrix reads limit + 1 on every thread count.
TEST_F(Dia, TheCountStopsPastTheLimit) {
  spl_csr m{};
  ASSERT_EQ(spl_random_csr(100003, 100003, 0.00004, 17, SPL_RANDOM_UNIFORM, &m), SPL_MATRIX_OK);
  const Csr32 c = narrow(m);
  std::set<int64_t> offsets;
  for (int64_t i = 0; i < c.rows; ++i)
    for (int32_t p = c.offs[static_cast<size_t>(i)]; p < c.offs[static_cast<size_t>(i + 1)]; ++p) offsets.insert(c.cols[static_cast<size_t>(p)] - i);
  const int64_t all = static_cast<int64_t>(offsets.size());
  ASSERT_GT(all, 1000);
  for (int threads : {1, 2, 4}) {
    spl_set_num_threads(threads);
    int64_t got = 0;
    ASSERT_EQ(spl_csr_diagonals(c.rows, c.columns, c.offs.data(), c.cols.data(), 12, &got), SPL_OK);
    EXPECT_EQ(got, 13);
    ASSERT_EQ(spl_csr_diagonals(c.rows, c.columns, c.offs.data(), c.cols.data(), all, &got), SPL_OK);
    EXPECT_EQ(got, all);
    ASSERT_EQ(spl_csr_diagonals(c.rows, c.columns, c.offs.data(), c.cols.data(), 0, &got), SPL_OK);
    EXPECT_EQ(got, 1);
  }
  spl_csr_free(&m);
}

// Duplicates add up (the CSR kernels sum them); columns outside [0, m) are left out.
TEST_F(Dia, DuplicatesAddUpAndOutsideColumnsAreLeftOut) {
  const int32_t offs[] = {0, 3, 5, 6};
  const int32_t cols[] = {1, 1, -4, 2, 9, 0};  // row 0: (0,1) twice and a negative column; row 1: (1,2) and column 9
  const double vals[] = {1.5, 2.0, 7.0, 3.0, 8.0, 4.0};
  int64_t count = 0;
  ASSERT_EQ(spl_csr_diagonals(3, 3, offs, cols, 10, &count), SPL_OK);
  EXPECT_EQ(count, 2);  // +1 and -2
  spl_dia_operands d;
  ASSERT_EQ(spl_dia_convert_f64(3, 3, offs, cols, vals, &d), SPL_OK);
  ASSERT_EQ(d.diagonals, 2);
  EXPECT_EQ(d.offsets[0], -2);
  EXPECT_EQ(d.offsets[1], 1);
  const double *v = static_cast<const double *>(d.diags);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 0.0);
  EXPECT_EQ(v[2], 4.0);  // (2, 0)
  EXPECT_EQ(v[3], 3.5);  // (0, 1) twice
  EXPECT_EQ(v[4], 3.0);  // (1, 2)
  EXPECT_EQ(v[5], 0.0);
  spl_dia_operands_free(&d);
  spl_dia_operands_free(nullptr);
}

TEST_F(Dia, RejectsBadInput) {
  const int32_t good[] = {0, 1, 2}, decreasing[] = {0, 2, 1}, cols[] = {0, 1};
  const double vals[] = {1, 2};
  int64_t count = 99;
  EXPECT_EQ(spl_csr_diagonals(2, 2, decreasing, cols, 5, &count), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(spl_csr_diagonals(-1, 2, good, cols, 5, &count), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_diagonals(2, 2, nullptr, cols, 5, &count), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_diagonals(2, 2, good, nullptr, 5, &count), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_diagonals(2, 2, good, cols, -1, &count), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_diagonals(2, 2, good, cols, 5, nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_diagonals(int64_t{1} << 32, 2, good, cols, 5, &count), SPL_ERR_BAD_INPUT);
  spl_dia_operands d;
  d.diagonals = 99;
  EXPECT_EQ(spl_dia_convert_f64(2, 2, decreasing, cols, vals, &d), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(d.diagonals, 0);
  EXPECT_EQ(d.diags, nullptr);
  EXPECT_EQ(spl_dia_convert_f64(2, 2, good, cols, nullptr, &d), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_dia_convert_f64(2, 2, good, cols, vals, nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_dia_convert_f64(2, -1, good, cols, vals, &d), SPL_ERR_BAD_INPUT);
  const int32_t none[] = {3, 3, 3};
  ASSERT_EQ(spl_dia_convert_f64(2, 2, none, nullptr, nullptr, &d), SPL_OK);  // no entries: nothing needed
  EXPECT_EQ(d.diagonals, 0);
  spl_dia_operands_free(&d);
}

}  // namespace
