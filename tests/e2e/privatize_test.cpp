// The privatize race strategy and distribute on the thread pool (tests/e2e/privatize.spl):
// the same results as double references on 1, 2 and 3 threads, and the same bits on each (the
// parts are fixed, whatever the threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "e2e_support.h"
#include "privatize.h"
#include "spl_runtime.h"

namespace {

TEST(Privatize, PrivatizedScatterCsc) {
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) {
    spl_e2e::ScatterCase c(nm.m);
    std::vector<double> first = c.run(spl_sched_csc_private, nm.m, 1, nm.name);
    for (int threads : {2, 3})
      EXPECT_EQ(c.run(spl_sched_csc_private, nm.m, threads, nm.name), first) << nm.name << ": the bits differ from one thread's";
  }
  spl_set_num_threads(0);
}

TEST(Privatize, PrivatizedColumnMax) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 1}, {5, 4}, {7, 9}, {3000, 7}, {20000, 33}}) {
    std::vector<int32_t> a(static_cast<size_t>(n * m) + 1);
    for (int64_t k = 0; k < n * m; ++k) a[k] = static_cast<int32_t>((k * 2654435761u) % 100003) - 50000;
    for (int threads : {1, 2}) {
      spl_set_num_threads(threads);
      std::vector<int32_t> out(static_cast<size_t>(m) + 1, 7);
      ASSERT_EQ(spl_sched_colmax_private(n, m, a.data(), out.data()), SPL_OK);
      for (int64_t i = 0; i < m; ++i) {
        int32_t want = INT32_MIN;
        for (int64_t k = 0; k < n; ++k) want = std::max(want, a[k * m + i]);
        ASSERT_EQ(out[i], want) << n << "x" << m << " column " << i << " threads " << threads;
      }
      EXPECT_EQ(out[m], 7);
    }
  }
  spl_set_num_threads(0);
}

TEST(Privatize, PrivatizedSymmetricProducts) {
  for (int64_t n : {0, 1, 3, 4, 5, 31, 32, 33, 100, 1001}) {
    std::vector<double> l(static_cast<size_t>(n * n) + 1), x(static_cast<size_t>(n) + 1);
    spl_random_vector(11, n * n, l.data());
    spl_random_vector(12, n, x.data());
    std::vector<double> want(static_cast<size_t>(n) + 1), scale(want.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double t = (j <= i ? l[i * n + j] : l[j * n + i]) * x[j];
        want[i] += t, scale[i] += std::fabs(t);
      }
    for (auto [name, kernel] : {std::pair{"columns", spl_sched_sym_columns}, std::pair{"rows", spl_sched_sym_rows}}) {
      std::vector<double> first;
      for (int threads : {1, 2, 3}) {
        spl_set_num_threads(threads);
        std::vector<double> y(static_cast<size_t>(n) + 1, -7.0);
        ASSERT_EQ(kernel(n, l.data(), x.data(), y.data()), SPL_OK);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_LE(std::fabs(y[i] - want[i]), 1e-13 * (scale[i] + 1e-300)) << name << " n " << n << " row " << i << " threads " << threads;
        EXPECT_EQ(y[n], -7.0);
        if (first.empty()) first = y;
        else EXPECT_EQ(y, first) << name << " n " << n << ": the bits differ from one thread's";
      }
    }
  }
  spl_set_num_threads(0);
}

}  // namespace
