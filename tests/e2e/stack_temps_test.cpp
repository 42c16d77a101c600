// Temporaries whose size is known at run time (codegen/CodeGenCpu.cpp: a stack buffer each,
// else spl_temp_alloc, the thread's scratch, else the heap), through tests/e2e/stack_temps.spl's
// three scans a row: rows of k doubles with k such that all three temporaries fit their stack
// buffers, the scratch, two of them the scratch, or none, on 1 and 2 threads, every row's result
// against a long double reference. Two temporaries that overlap would show as a wrong sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "spl_runtime.h"
#include "stack_temps.h"

namespace {

struct Case {
  int64_t rows;
  int64_t k;
};

/// Row i's sum over j of s[q_j] + t[q_j] + u[q_j], where s, t and u are the exclusive prefix
/// sums, maxima (from 0) and minima (from 0) of the row, and its magnitude for the tolerance.
void reference(const std::vector<double> &a, const std::vector<int32_t> &q, int64_t rows, int64_t k,
               std::vector<long double> &sum, std::vector<long double> &mag) {
  sum.assign(static_cast<size_t>(rows), 0);
  mag.assign(static_cast<size_t>(rows), 0);
  std::vector<long double> s(static_cast<size_t>(k + 1)), t(s.size()), u(s.size());
  for (int64_t i = 0; i < rows; ++i) {
    long double run = 0, hi = 0, lo = 0, runMag = 0;
    for (int64_t j = 0; j <= k; ++j) {
      s[j] = run;
      t[j] = hi;
      u[j] = lo;
      if (j == k) break;
      long double v = a[i * k + j];
      run += v;
      runMag += std::fabs(v);
      hi = std::max(hi, v);
      lo = std::min(lo, v);
    }
    for (int64_t j = 0; j < k; ++j) {
      int64_t at = q[i * k + j];
      sum[i] += s[at] + t[at] + u[at];
      mag[i] += runMag + std::fabs(t[at]) + std::fabs(u[at]);
    }
  }
}

class StackTemps : public ::testing::TestWithParam<int> {};

TEST_P(StackTemps, ThreeScansARowMatchTheReferenceWhereverTheyLie) {
  spl_set_num_threads(GetParam());
  // 8 (k + 1) bytes each: up to k = 1,359 the stack buffers of 10,880 bytes, up to 10,900 the
  // scratch's 256 KB (in lines), at 12,000 two of them, at 40,000 none.
  const Case cases[] = {{1, 1}, {5, 7}, {37, 100}, {9, 1300}, {9, 4200}, {4, 12000}, {3, 40000}, {0, 50}, {3, 0}};
  std::mt19937_64 rng(26);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (const Case &c : cases) {
    std::vector<double> a(static_cast<size_t>(c.rows * c.k));
    std::vector<int32_t> q(a.size());
    for (double &v : a) v = value(rng);
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(std::max<int64_t>(0, c.k - 1)));
    for (int32_t &v : q) v = pick(rng);
    std::vector<double> out(static_cast<size_t>(c.rows) + 1, -7.0);
    ASSERT_EQ(spl_test_three_scans(c.rows, c.k, a.data(), q.data(), out.data()), 0) << c.rows << " x " << c.k;
    std::vector<long double> sum, mag;
    reference(a, q, c.rows, c.k, sum, mag);
    for (int64_t i = 0; i < c.rows; ++i)
      EXPECT_LE(std::fabs(static_cast<long double>(out[i]) - sum[i]), 1e-13L * (mag[i] + 1) * (c.k + 1))
          << "row " << i << " of " << c.rows << " x " << c.k << ": " << out[i] << " against " << static_cast<double>(sum[i]);
    EXPECT_EQ(out[c.rows], -7.0) << "wrote past the result";
  }
  spl_set_num_threads(0);
}

INSTANTIATE_TEST_SUITE_P(Threads, StackTemps, ::testing::Values(1, 2));

}  // namespace
