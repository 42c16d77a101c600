// Reduces over tuples lowered in lanes (cin/LowerFunctional.cpp, accumulateInLanes), through
// tests/e2e/lane_reductions.spl, against in-order loops: the first position of the largest |x_i|
// in f64 and f32, the smallest value's last position and count, and each row's first largest
// on 1 and 2 threads. Lengths around the lanes (32 in f64, 64 in f32) and their vectors, with
// ties (few distinct values), NaN, signed zeros, the largest in the partial group past the
// last whole group of lanes, and n = 0. A grouping that dropped a lane, combined lanes out of order without the tie rule, or
// ran the tail twice gives another position or count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "lane_reductions.h"
#include "spl_runtime.h"

namespace {

const std::vector<int64_t> kLengths = {0,  1,  2,   7,   8,   9,   15,  16,  17,  31,   32,  33,
                                       63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000, 4097};

/// x of length n whose values come from `distinct` magnitudes with random signs (many ties),
/// some NaN where `nans`.
template <typename T>
std::vector<T> values(int64_t n, int distinct, bool nans, std::mt19937 &rng) {
  std::uniform_int_distribution<int> pick(0, distinct - 1), sign(0, 1), rare(0, 19);
  std::vector<T> x(static_cast<size_t>(n));
  for (T &v : x) {
    v = static_cast<T>(pick(rng)) * static_cast<T>(0.5);
    if (sign(rng)) v = -v;
    if (nans && rare(rng) == 0) v = std::numeric_limits<T>::quiet_NaN();
  }
  return x;
}

/// The in-order result of firstLargest: the first i with |x_i| greater than every earlier one
/// kept, from 0 and position n.
template <typename T>
int32_t firstLargest(const std::vector<T> &x) {
  T best = 0;
  int32_t at = static_cast<int32_t>(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    T a = std::fabs(x[i]);
    if (a > best || (a == best && static_cast<int32_t>(i) < at)) {
      best = a;
      at = static_cast<int32_t>(i);
    }
  }
  return at;
}

/// `kernel`'s first largest against the in-order one on seeded x of every length, with few
/// or many distinct values, with and without NaN.
template <typename T>
void expectTheInOrderFirstLargest(int (*kernel)(int64_t, const T *, int32_t *), unsigned seed) {
  std::mt19937 rng(seed);
  for (int64_t n : kLengths)
    for (int distinct : {1, 3, 50})
      for (bool nans : {false, true}) {
        std::vector<T> x = values<T>(n, distinct, nans, rng);
        int32_t got = -7;
        ASSERT_EQ(kernel(n, x.data(), &got), 0);
        EXPECT_EQ(got, firstLargest(x)) << "n=" << n << " distinct=" << distinct << " nans=" << nans;
      }
}

TEST(LaneReductions, FirstLargestIsTheInOrderOneInF64) { expectTheInOrderFirstLargest<double>(spl_test_first_largest_f64, 36); }

TEST(LaneReductions, FirstLargestIsTheInOrderOneInF32) { expectTheInOrderFirstLargest<float>(spl_test_first_largest_f32, 37); }

TEST(LaneReductions, TheLargestInTheTailOrInTheLastLane) {
  // The largest |x_i| at `at` and again in the same lane a group later (32 lanes in f64): the
  // first one wins, in a whole group, in the last lane of the last one, or in the partial group.
  for (int64_t n : {31, 33, 63, 64, 65, 95, 1001}) {
    for (int64_t at : {int64_t{0}, n / 32 * 32 - 1, n / 32 * 32, n - 1}) {
      if (at < 0 || at >= n) continue;
      std::vector<double> x(static_cast<size_t>(n), -1.0);
      x[static_cast<size_t>(at)] = -3.0;
      if (at + 32 < n) x[static_cast<size_t>(at + 32)] = 3.0;
      int32_t got = -7;
      ASSERT_EQ(spl_test_first_largest_f64(n, x.data(), &got), 0);
      EXPECT_EQ(got, at) << "n=" << n;
    }
  }
}

TEST(LaneReductions, SmallestLastPositionAndCount) {
  std::mt19937 rng(38);
  for (int64_t n : kLengths)
    for (int distinct : {1, 4, 1000}) {
      std::vector<double> x = values<double>(n, distinct, false, rng);
      double want = 1.0e300, got = 0;
      int64_t wantAt = -1, gotAt = -7;
      int32_t wantCount = 0, gotCount = -7;
      for (size_t i = 0; i < x.size(); ++i) {
        if (x[i] < want) {
          want = x[i];
          wantAt = static_cast<int64_t>(i);
          wantCount = 1;
        } else if (x[i] == want) {
          wantAt = static_cast<int64_t>(i);
          ++wantCount;
        }
      }
      ASSERT_EQ(spl_test_smallest_last_count(n, x.data(), &got, &gotAt, &gotCount), 0);
      EXPECT_EQ(got, want) << "n=" << n;
      EXPECT_EQ(gotAt, wantAt) << "n=" << n << " distinct=" << distinct;
      EXPECT_EQ(gotCount, wantCount) << "n=" << n << " distinct=" << distinct;
    }
}

TEST(LaneReductions, EachRowsFirstLargestOnOneAndTwoThreads) {
  std::mt19937 rng(39);
  for (int threads : {1, 2})
    for (int64_t m : {int64_t{1}, int64_t{16}, int64_t{37}, int64_t{300}}) {
      const int64_t n = 211;
      std::vector<float> a = values<float>(n * m, 20, true, rng);
      std::vector<int32_t> got(static_cast<size_t>(n), -7);
      spl_set_num_threads(threads);
      ASSERT_EQ(spl_test_rows_first_largest(n, m, a.data(), got.data()), 0);
      for (int64_t i = 0; i < n; ++i) {
        std::vector<float> row(a.begin() + i * m, a.begin() + (i + 1) * m);
        EXPECT_EQ(got[static_cast<size_t>(i)], firstLargest(row)) << "threads=" << threads << " m=" << m << " row=" << i;
      }
    }
  spl_set_num_threads(0);
}

}  // namespace
