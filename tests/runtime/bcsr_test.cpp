// bcsr_test.cpp: spl_csr_blocks and spl_bcsr_convert_* (a plan's BCSR conversion, issue 25)
// against a reference computed here: every block row's block columns and every stored value, on
// random matrices of every shape (empty rows, skewed rows, 1 x N, N x 1, nnz = 0, dense,
// rectangular) with blocks of 1 to 7, offsets that do not start at 0; matrices of dense blocks
// (the block rows the conversion copies without a sum, and aligned rows it reads without
// merging), also cut so that b divides neither n nor m, and converted with other block sizes;
// block rows almost of dense blocks (each way of missing one), a partial last block column
// copied only at the matrix's edge; rows whose columns are out of order (the
// table path); on 1, 2 and 4 threads; duplicates adding up; columns outside [0, m) left out;
// bad input.
#include "spl_runtime.h"
#include "spl_matrix.h"
#include "csr_shapes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using spl_test::Csr32;
using spl_test::narrow;

class Bcsr : public ::testing::Test {
 protected:
  void TearDown() override { spl_set_num_threads(0); }
};

/// The blocks of c for block size b: (block row, block column) -> its b * b values, row-major.
std::map<std::pair<int64_t, int64_t>, std::vector<double>> reference(const Csr32 &c, int64_t b) {
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> blocks;
  const int64_t base = c.offs[0];
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t p = c.offs[static_cast<size_t>(i)] - base; p < c.offs[static_cast<size_t>(i + 1)] - base; ++p) {
      const int64_t j = c.cols[static_cast<size_t>(p)];
      if (j < 0 || j >= c.columns) continue;
      std::vector<double> &v = blocks[{i / b, j / b}];
      v.resize(static_cast<size_t>(b * b), 0.0);
      v[static_cast<size_t>((i % b) * b + j % b)] += c.vals[static_cast<size_t>(p)];
    }
  return blocks;
}

void expectConversion(const Csr32 &c, int64_t b) {
  SCOPED_TRACE("blocks of " + std::to_string(b));
  const auto want = reference(c, b);
  const int64_t count = static_cast<int64_t>(want.size()), blockRows = (c.rows + b - 1) / b;
  int64_t got = -1;
  ASSERT_EQ(spl_csr_blocks(c.rows, c.columns, c.offs.data(), c.cols.data(), b, &got), SPL_OK);
  EXPECT_EQ(got, count);
  spl_bcsr_operands o64, o32;
  ASSERT_EQ(spl_bcsr_convert_f64(c.rows, c.columns, c.offs.data(), c.cols.data(), c.vals.data(), b, &o64), SPL_OK);
  ASSERT_EQ(spl_bcsr_convert_f32(c.rows, c.columns, c.offs.data(), c.cols.data(), c.vals32.data(), b, &o32), SPL_OK);
  for (const spl_bcsr_operands *o : {&o64, &o32}) {
    EXPECT_EQ(o->rows, c.rows);
    EXPECT_EQ(o->cols, c.columns);
    EXPECT_EQ(o->block, b);
    EXPECT_EQ(o->block_rows, blockRows);
    EXPECT_EQ(o->block_cols, (c.columns + b - 1) / b);
    ASSERT_EQ(o->blocks, count);
    EXPECT_EQ(o->offs[0], 0);
    EXPECT_EQ(o->offs[blockRows], count);
  }
  EXPECT_EQ(o64.bytes, (blockRows + 1 + count) * 4 + count * b * b * 8);
  EXPECT_EQ(o32.bytes, (blockRows + 1 + count) * 4 + count * b * b * 4);
  int64_t k = 0;
  for (int64_t I = 0; I < blockRows; ++I) {
    auto it = want.lower_bound({I, 0});
    for (; it != want.end() && it->first.first == I; ++it, ++k) {
      ASSERT_LT(k, o64.offs[I + 1]) << "block row " << I << " holds too few blocks";
      EXPECT_EQ(o64.bcols[k], it->first.second) << "block row " << I;
      EXPECT_EQ(o32.bcols[k], it->first.second) << "block row " << I;
      for (int64_t s = 0; s < b * b; ++s) {
        const double v = it->second[static_cast<size_t>(s)];
        EXPECT_DOUBLE_EQ(static_cast<const double *>(o64.vals)[k * b * b + s], v) << "block row " << I << " slot " << s;
        EXPECT_NEAR(static_cast<const float *>(o32.vals)[k * b * b + s], v, 1e-5 * (1 + std::abs(v)));
      }
    }
    EXPECT_EQ(o64.offs[I + 1], k) << "block row " << I;
    EXPECT_EQ(o32.offs[I + 1], k) << "block row " << I;
  }
  spl_bcsr_operands_free(&o64);
  spl_bcsr_operands_free(&o32);
  EXPECT_EQ(o64.offs, nullptr);
  EXPECT_EQ(o64.vals, nullptr);
}

TEST_F(Bcsr, EveryShapeMatchesTheReference) {
  std::vector<spl_test::RandomShape> shapes = spl_test::randomShapes();
  shapes.push_back({"none", 0, 10, 0.0, SPL_RANDOM_UNIFORM});
  shapes.push_back({"wide", 30, 3000, 0.1, SPL_RANDOM_UNIFORM});
  uint64_t seed = 31;
  for (const spl_test::RandomShape &s : shapes) {
    SCOPED_TRACE(s.name);
    spl_csr m{};
    ASSERT_EQ(spl_random_csr(s.rows, s.cols, s.density, seed++, s.kind, &m), SPL_MATRIX_OK);
    for (int64_t b : {1, 2, 3, 4, 5, 7}) {
      expectConversion(narrow(m), b);
      expectConversion(narrow(m, 7), b);  // offsets starting at 7
    }
    spl_csr_free(&m);
  }
}

/// A matrix of dense blocks of `block` on `nodes` x `nodes` nodes (each node row couples to a
/// few nearby node columns), cut to `rows` x `cols`, with its rows' entries in column order.
Csr32 denseBlocks(int64_t nodes, int64_t block, int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int64_t>> coupled(static_cast<size_t>(nodes));
  for (int64_t I = 0; I < nodes; ++I) {
    for (int64_t J : {I - 7, I - 1, I, I + 1, I + 3, I + 20})
      if (J >= 0 && J < nodes && (J == I || rng() % 4 != 0)) coupled[static_cast<size_t>(I)].push_back(J);
  }
  Csr32 c;
  c.rows = rows;
  c.columns = cols;
  c.offs.push_back(0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t J : coupled[static_cast<size_t>(i / block)])
      for (int64_t j = J * block; j < (J + 1) * block && j < cols; ++j) {
        c.cols.push_back(static_cast<int32_t>(j));
        c.vals.push_back(1.0 + static_cast<double>((i * 31 + j * 17) % 97) / 16);
      }
    c.offs.push_back(static_cast<int32_t>(c.cols.size()));
  }
  for (double v : c.vals) c.vals32.push_back(static_cast<float>(v));
  c.cols.push_back(0), c.vals.push_back(0), c.vals32.push_back(0);
  return c;
}

// Dense blocks converted with their own size (every block row aligned), with sizes that divide
// them or not, cut so that the size divides neither n nor m, on every thread count.
TEST_F(Bcsr, DenseBlocksOnEveryThreadCount) {
  for (int threads : {1, 2, 4}) {
    spl_set_num_threads(threads);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    for (int64_t block : {2, 3, 6}) {
      SCOPED_TRACE("dense blocks of " + std::to_string(block));
      const Csr32 whole = denseBlocks(1500, block, 1500 * block, 1500 * block, 5 + static_cast<uint64_t>(block));
      const Csr32 cut = denseBlocks(1500, block, 1500 * block - 1, 1500 * block - 2, 5 + static_cast<uint64_t>(block));
      for (int64_t b : {2, 3, 4})
        for (const Csr32 *c : {&whole, &cut}) expectConversion(*c, b);
    }
  }
}

// Block rows of dense blocks are copied without a sum; a block row that is almost one (a
// repeated column inside a block, columns shifted off the block boundaries, a column past m or
// below 0, two columns of a block swapped in one row) must take the general paths and still
// give the reference's blocks, its neighbours unchanged.
TEST_F(Bcsr, AlmostDenseBlocksTakeTheGeneralPaths) {
  Csr32 c = denseBlocks(200, 3, 600, 600, 19);
  auto at = [&](int64_t row, int64_t k) -> int32_t & { return c.cols[static_cast<size_t>(c.offs[static_cast<size_t>(row)] + k)]; };
  at(16, 1) = at(16, 0);                                  // block row 5: a duplicate inside a block
  for (int64_t i = 30; i < 33; ++i)                       // block row 10: every column one to the right
    for (int32_t p = c.offs[static_cast<size_t>(i)]; p < c.offs[static_cast<size_t>(i + 1)]; ++p) c.cols[static_cast<size_t>(p)] += 1;
  at(62, c.offs[63] - c.offs[62] - 1) = 605;              // block row 20: a column past m
  at(90, 0) = -1;                                         // block row 30: a negative column
  std::swap(at(121, 0), at(121, 1));                      // block row 40: two columns swapped
  std::swap(c.vals[static_cast<size_t>(c.offs[121])], c.vals[static_cast<size_t>(c.offs[121] + 1)]);
  for (size_t p = 0; p < c.vals.size(); ++p) c.vals32[p] = static_cast<float>(c.vals[p]);
  for (int threads : {1, 2}) {
    spl_set_num_threads(threads);
    for (int64_t b : {2, 3}) expectConversion(c, b);
  }
}

// A dense block row's last run may be a partial block column only where it ends at column
// m - 1: rows {0..4} of 5 columns in 2 x 2 blocks are copied (the last block's second column
// 0); rows whose last run starts past m (column 6 of 5) are not, and leave that entry out.
TEST_F(Bcsr, APartialLastBlockColumnOnlyAtTheMatrixEdge) {
  for (int32_t last : {4, 6}) {
    SCOPED_TRACE("last column " + std::to_string(last));
    Csr32 c;
    c.rows = 4;
    c.columns = 5;
    c.offs = {0, 5, 10, 15, 20};
    for (int r = 0; r < 4; ++r)
      for (int32_t j : {0, 1, 2, 3, last}) {
        c.cols.push_back(j);
        c.vals.push_back(1.0 + r * 10 + j);
      }
    for (double v : c.vals) c.vals32.push_back(static_cast<float>(v));
    c.cols.push_back(0), c.vals.push_back(0), c.vals32.push_back(0);
    for (int threads : {1, 2}) {
      spl_set_num_threads(threads);
      expectConversion(c, 2);
    }
  }
}

// Rows whose columns are out of order take the conversion's table instead of the merge: the
// same blocks, in increasing block column.
TEST_F(Bcsr, RowsOutOfOrderGiveTheSameBlocks) {
  Csr32 c = denseBlocks(3000, 3, 9000, 9000, 77);
  std::mt19937_64 rng(3);
  for (int64_t i = 0; i < c.rows; i += 2) {  // every other row reversed or shuffled
    const size_t begin = static_cast<size_t>(c.offs[static_cast<size_t>(i)]), end = static_cast<size_t>(c.offs[static_cast<size_t>(i + 1)]);
    std::vector<std::pair<int32_t, double>> row;
    for (size_t p = begin; p < end; ++p) row.push_back({c.cols[p], c.vals[p]});
    if (i % 4 == 0) std::reverse(row.begin(), row.end());
    else std::shuffle(row.begin(), row.end(), rng);
    for (size_t p = begin; p < end; ++p) {
      c.cols[p] = row[p - begin].first;
      c.vals[p] = row[p - begin].second;
      c.vals32[p] = static_cast<float>(row[p - begin].second);
    }
  }
  for (int threads : {1, 2}) {
    spl_set_num_threads(threads);
    for (int64_t b : {2, 3}) expectConversion(c, b);
  }
}

// Duplicates add up (the CSR kernels sum them); columns outside [0, m) are left out.
TEST_F(Bcsr, DuplicatesAddUpAndOutsideColumnsAreLeftOut) {
  const int32_t offs[] = {0, 4, 6, 7};
  const int32_t cols[] = {-4, 1, 1, 2, 2, 9, 0};  // row 0: a negative column, (0,1) twice, (0,2); row 1: (1,2), column 9
  const double vals[] = {7.0, 1.5, 2.0, 5.0, 3.0, 8.0, 4.0};
  int64_t blocks = 0;
  ASSERT_EQ(spl_csr_blocks(3, 3, offs, cols, 2, &blocks), SPL_OK);
  EXPECT_EQ(blocks, 3);  // (0,0), (0,1), (1,0)
  spl_bcsr_operands o;
  ASSERT_EQ(spl_bcsr_convert_f64(3, 3, offs, cols, vals, 2, &o), SPL_OK);
  ASSERT_EQ(o.blocks, 3);
  ASSERT_EQ(o.block_rows, 2);
  EXPECT_EQ(o.offs[1], 2);
  EXPECT_EQ(o.offs[2], 3);
  EXPECT_EQ(o.bcols[0], 0);
  EXPECT_EQ(o.bcols[1], 1);
  EXPECT_EQ(o.bcols[2], 0);
  const double *v = static_cast<const double *>(o.vals);
  const double want[] = {0, 3.5, 0, 0, /* block (0,1) */ 5, 0, 3, 0, /* block (1,0) */ 4, 0, 0, 0};
  for (int s = 0; s < 12; ++s) EXPECT_EQ(v[s], want[s]) << "slot " << s;
  spl_bcsr_operands_free(&o);
  spl_bcsr_operands_free(nullptr);
}

TEST_F(Bcsr, RejectsBadInput) {
  const int32_t good[] = {0, 1, 2}, decreasing[] = {0, 2, 1}, cols[] = {0, 1};
  const double vals[] = {1, 2};
  int64_t blocks = 99;
  EXPECT_EQ(spl_csr_blocks(2, 2, decreasing, cols, 2, &blocks), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(blocks, 0);
  EXPECT_EQ(spl_csr_blocks(2, 2, good, cols, 0, &blocks), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_blocks(2, 2, good, cols, 65, &blocks), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_blocks(2, 2, good, nullptr, 2, &blocks), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_blocks(2, 2, good, cols, 2, nullptr), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_blocks(-1, 2, good, cols, 2, &blocks), SPL_ERR_BAD_INPUT);
  spl_bcsr_operands o;
  EXPECT_EQ(spl_bcsr_convert_f64(2, 2, decreasing, cols, vals, 2, &o), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(o.offs, nullptr);
  EXPECT_EQ(o.blocks, 0);
  EXPECT_EQ(spl_bcsr_convert_f64(2, 2, good, cols, nullptr, 2, &o), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_bcsr_convert_f64(2, 2, good, cols, vals, 0, &o), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_bcsr_convert_f64(2, 2, good, cols, vals, 65, &o), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_bcsr_convert_f64(2, -1, good, cols, vals, 2, &o), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_bcsr_convert_f64(2, 2, good, cols, vals, 2, nullptr), SPL_ERR_BAD_INPUT);
  const float vals32[] = {1, 2};
  EXPECT_EQ(spl_bcsr_convert_f32(2, 2, good, nullptr, vals32, 2, &o), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(o.vals, nullptr);
}

}  // namespace
