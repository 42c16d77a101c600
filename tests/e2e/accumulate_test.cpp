// Results that start as their input, written in place (tests/e2e/accumulate.spl): the kernels
// add into y in the entries' order, so a C loop in that order gives the same bits; elements
// between a view's strides and past its end are not touched; rows repeated, no entries, no rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "accumulate.h"
#include "e2e_support.h"
#include "spl_runtime.h"

namespace {

struct Pairs {
  std::vector<double> vals;
  std::vector<int32_t> rows;
};

/// k (value, row) pairs over n rows, rows drawn with repeats (and all on one row where n is 1).
Pairs randomPairs(int64_t n, int64_t k, uint64_t seed) {
  Pairs p;
  p.vals.resize(static_cast<size_t>(k) + 1);
  spl_random_vector(seed, k, p.vals.data());
  for (int64_t e = 0; e < k; ++e) p.rows.push_back(static_cast<int32_t>((static_cast<uint64_t>(e) * 2654435761u + seed) % static_cast<uint64_t>(n)));
  p.rows.push_back(0);
  return p;
}

TEST(Accumulate, AddsAtRowsInPlace) {
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 0}, {1, 5}, {7, 3}, {7, 40}, {1000, 333}, {4096, 100000}}) {
    Pairs p = randomPairs(std::max<int64_t>(n, 1), k, 21);
    std::vector<double> y(static_cast<size_t>(n) + 1), want;
    spl_random_vector(22, n, y.data());
    y[n] = 7.5;  // past the end: untouched
    want = y;
    for (int64_t e = 0; e < k; ++e) want[p.rows[e]] += p.vals[e];
    ASSERT_EQ(spl_acc_add_at_rows(n, k, p.vals.data(), p.rows.data(), y.data()), SPL_OK);
    EXPECT_EQ(y, want) << n << " rows, " << k << " pairs";
  }
}

TEST(Accumulate, AddsAtRowsThroughAnIncrement) {
  const int64_t n = 50, k = 400;
  Pairs p = randomPairs(n, k, 31);
  for (int64_t inc : {1, 2, 3, -1, -4, 0}) {
    int64_t span = inc == 0 ? 1 : (n - 1) * (inc < 0 ? -inc : inc) + 1;
    std::vector<double> y(static_cast<size_t>(span) + 2);
    spl_random_vector(32, span + 2, y.data());
    std::vector<double> want = y;
    for (int64_t e = 0; e < k; ++e) {
      int64_t i = p.rows[e];
      want[inc >= 0 ? i * inc : (n - 1 - i) * -inc] += p.vals[e];
    }
    ASSERT_EQ(spl_acc_add_at_rows_inc(n, k, p.vals.data(), p.rows.data(), y.data(), inc), SPL_OK);
    EXPECT_EQ(y, want) << "increment " << inc;
  }
}

TEST(Accumulate, CooProductAddedToY) {
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) {
    spl_coo coo{};
    ASSERT_EQ(spl_csr_to_coo(&nm.m, &coo), 0) << nm.name;
    std::vector<double> x(static_cast<size_t>(nm.m.cols) + 1), y(static_cast<size_t>(nm.m.rows) + 1), ax(y.size());
    spl_random_vector(41, nm.m.cols, x.data());
    spl_random_vector(42, nm.m.rows, y.data());
    y[nm.m.rows] = -3.25;
    spl_ref_spmv(&nm.m, x.data(), ax.data());
    std::vector<double> want(y.size());
    for (int64_t i = 0; i < nm.m.rows; ++i) want[i] = y[i] + ax[i];
    ASSERT_EQ(spl_acc_coo_add(nm.m.rows, nm.m.cols, nm.m.nnz, coo.vals, coo.row_idx, coo.col_idx, x.data(), y.data()), SPL_OK);
    EXPECT_LE(spl_rel_error_f64(y.data(), want.data(), nm.m.rows), 1e-12) << nm.name;
    EXPECT_EQ(y[nm.m.rows], -3.25) << nm.name << ": past the end";
    spl_coo_free(&coo);
  }
}

}  // namespace
