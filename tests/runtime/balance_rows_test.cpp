// balance_rows_test.cpp: spl_balance_rows_* gives monotone boundaries covering [0, n] with
// parts of roughly equal nnz + rows, on uniform, skewed and empty-row offsets.
#include "spl_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

/* Checks the partition contract and returns the heaviest part's weight (nnz + rows). */
template <typename Offset>
int64_t check_partition(const std::vector<Offset> &offs, int64_t nparts,
                        const std::vector<int64_t> &bounds) {
  const int64_t n = static_cast<int64_t>(offs.size()) - 1;
  EXPECT_EQ(bounds.front(), 0);
  EXPECT_EQ(bounds.back(), n);
  int64_t heaviest = 0;
  for (int64_t p = 0; p < nparts; ++p) {
    EXPECT_LE(bounds[p], bounds[p + 1]) << "part " << p;
    EXPECT_GE(bounds[p], 0);
    EXPECT_LE(bounds[p + 1], n);
    int64_t lo = bounds[p], hi = bounds[p + 1];
    int64_t weight = static_cast<int64_t>(offs[hi] - offs[lo]) + (hi - lo);
    heaviest = std::max(heaviest, weight);
  }
  return heaviest;
}

template <typename Offset> std::vector<Offset> offsets_from_lengths(const std::vector<int> &lens) {
  std::vector<Offset> offs(lens.size() + 1, 0);
  for (size_t i = 0; i < lens.size(); ++i)
    offs[i + 1] = offs[i] + lens[i];
  return offs;
}

/* The bound the header promises: ideal share plus the heaviest single row. */
template <typename Offset> int64_t allowed(const std::vector<Offset> &offs, int64_t nparts) {
  const int64_t n = static_cast<int64_t>(offs.size()) - 1;
  int64_t total = static_cast<int64_t>(offs[n] - offs[0]) + n;
  int64_t max_row = 0;
  for (int64_t i = 0; i < n; ++i)
    max_row = std::max<int64_t>(max_row, static_cast<int64_t>(offs[i + 1] - offs[i]) + 1);
  return (total + nparts - 1) / nparts + max_row;
}

void balance(const std::vector<int32_t> &offs, int64_t nparts, std::vector<int64_t> &bounds) {
  bounds.assign(static_cast<size_t>(nparts) + 1, -7);
  spl_balance_rows_i32(offs.data(), static_cast<int64_t>(offs.size()) - 1, nparts, bounds.data());
}
void balance(const std::vector<int64_t> &offs, int64_t nparts, std::vector<int64_t> &bounds) {
  bounds.assign(static_cast<size_t>(nparts) + 1, -7);
  spl_balance_rows_i64(offs.data(), static_cast<int64_t>(offs.size()) - 1, nparts, bounds.data());
}

template <typename Offset> void check_lengths(const std::vector<int> &lens) {
  auto offs = offsets_from_lengths<Offset>(lens);
  for (int64_t nparts : {1, 2, 3, 7, 16, 64, 1000}) {
    SCOPED_TRACE(::testing::Message() << "n " << lens.size() << " nparts " << nparts);
    std::vector<int64_t> bounds;
    balance(offs, nparts, bounds);
    int64_t heaviest = check_partition(offs, nparts, bounds);
    EXPECT_LE(heaviest, allowed(offs, nparts));
  }
}

std::vector<int> uniform_lengths(int n, int len) { return std::vector<int>(n, len); }

std::vector<int> skewed_lengths() {
  /* Power-law rows plus one huge row in the middle, as in a web graph. */
  std::mt19937 rng(12345);
  std::vector<int> lens(5000);
  for (int &len : lens)
    len = static_cast<int>(std::pow(2.0, std::uniform_real_distribution<double>(0, 10)(rng)));
  lens[2500] = 200000;
  return lens;
}

std::vector<int> mostly_empty_lengths() {
  std::vector<int> lens(10000, 0);
  lens[10] = 500;
  lens[9000] = 500;
  return lens;
}

TEST(BalanceRows, UniformRowsSplitEvenly) {
  auto offs = offsets_from_lengths<int32_t>(uniform_lengths(1000, 3));
  std::vector<int64_t> bounds;
  balance(offs, 4, bounds);
  EXPECT_EQ(bounds, (std::vector<int64_t>{0, 250, 500, 750, 1000}));
}

TEST(BalanceRows, SkewedI32) { check_lengths<int32_t>(skewed_lengths()); }
TEST(BalanceRows, SkewedI64) { check_lengths<int64_t>(skewed_lengths()); }
TEST(BalanceRows, EmptyRowsCountAsWork) {
  check_lengths<int32_t>(mostly_empty_lengths());
  /* All rows empty: the split is by row count alone. */
  auto offs = offsets_from_lengths<int64_t>(uniform_lengths(100, 0));
  std::vector<int64_t> bounds;
  balance(offs, 4, bounds);
  EXPECT_EQ(bounds, (std::vector<int64_t>{0, 25, 50, 75, 100}));
}

TEST(BalanceRows, HugeRowLeavesOthersBalanced) {
  std::vector<int> lens(100, 1);
  lens[0] = 1000000;
  auto offs = offsets_from_lengths<int32_t>(lens);
  std::vector<int64_t> bounds;
  balance(offs, 4, bounds);
  check_partition(offs, 4, bounds);
  EXPECT_EQ(bounds[1], 1) << "the huge row forms a part of its own";
}

TEST(BalanceRows, NonzeroFirstOffset) {
  /* Offsets of a sub-range of a larger structure start above zero. */
  std::vector<int64_t> offs = {1000, 1010, 1020, 1030, 1040};
  std::vector<int64_t> bounds;
  balance(offs, 2, bounds);
  EXPECT_EQ(bounds, (std::vector<int64_t>{0, 2, 4}));
}

TEST(BalanceRows, ZeroRows) {
  std::vector<int32_t> offs = {0};
  std::vector<int64_t> bounds;
  balance(offs, 5, bounds);
  EXPECT_EQ(bounds, (std::vector<int64_t>(6, 0)));
}

TEST(BalanceRows, MorePartsThanRows) {
  auto offs = offsets_from_lengths<int64_t>(uniform_lengths(3, 2));
  std::vector<int64_t> bounds;
  balance(offs, 10, bounds);
  check_partition(offs, 10, bounds);
}

TEST(BalanceRows, RandomStructures) {
  std::mt19937 rng(777);
  for (int trial = 0; trial < 50; ++trial) {
    int n = std::uniform_int_distribution<int>(0, 3000)(rng);
    int max_len = std::uniform_int_distribution<int>(0, 200)(rng);
    std::vector<int> lens(static_cast<size_t>(n));
    for (int &len : lens)
      len = std::uniform_int_distribution<int>(0, max_len)(rng);
    check_lengths<int64_t>(lens);
  }
}

TEST(BalanceRows, InvalidArgumentsWriteNothing) {
  std::vector<int32_t> offs = {0, 1, 2};
  int64_t bounds[3] = {-7, -7, -7};
  spl_balance_rows_i32(offs.data(), 2, 0, bounds);
  spl_balance_rows_i32(offs.data(), -1, 2, bounds);
  EXPECT_EQ(bounds[0], -7);
  EXPECT_EQ(bounds[1], -7);
}

} // namespace
