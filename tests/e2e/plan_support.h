// What the plan tests share (plan_test.cpp, plan_spmm_test.cpp): a test matrix's CSR arrays with
// 32-bit indices in both precisions, SPL_PLAN_KERNEL set for a scope, a matrix of dense blocks,
// and what an explanation says of a conversion that planning's budget may cut short.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "e2e_support.h"

namespace spl_plan_test {

struct Csr32 {
  std::vector<int32_t> offs, cols;
  std::vector<double> vals;
  std::vector<float> vals32;
};

inline Csr32 narrow(const spl_csr &m) {
  Csr32 c;
  for (int64_t i = 0; i <= m.rows; ++i) c.offs.push_back(static_cast<int32_t>(m.offs[i]));
  c.cols.assign(m.cols_idx, m.cols_idx + m.nnz);
  c.vals.assign(m.vals, m.vals + m.nnz);
  for (double v : c.vals) c.vals32.push_back(static_cast<float>(v));
  c.cols.push_back(0), c.vals.push_back(0), c.vals32.push_back(0);  // never empty
  return c;
}

/// SPL_PLAN_KERNEL set for the scope of one test.
struct ForcedKernel {
  explicit ForcedKernel(const char *kernel) { setenv("SPL_PLAN_KERNEL", kernel, 1); }
  ~ForcedKernel() { unsetenv("SPL_PLAN_KERNEL"); }
};

/// A matrix of dense 3 x 3 blocks on `nodes` nodes (each couples to a few nearby ones, rows in
/// column order), cut by one row and two columns so that 3 divides neither n nor m.
inline spl_csr denseBlocks(int64_t nodes) {
  std::mt19937_64 rng(21);
  std::vector<int32_t> rows, cols;
  std::vector<double> vals;
  const int64_t n = 3 * nodes - 1, m = 3 * nodes - 2;
  for (int64_t I = 0; I < nodes; ++I) {
    std::vector<int64_t> coupled;
    for (int64_t J : {I - 9, I - 1, I, I + 1, I + 4, I + 30})
      if (J >= 0 && J < nodes && (J == I || rng() % 4 != 0)) coupled.push_back(J);
    for (int64_t i = 3 * I; i < 3 * I + 3 && i < n; ++i)
      for (int64_t J : coupled)
        for (int64_t j = 3 * J; j < 3 * J + 3 && j < m; ++j) {
          rows.push_back(static_cast<int32_t>(i));
          cols.push_back(static_cast<int32_t>(j));
          vals.push_back(1.0 + static_cast<double>((i * 13 + j * 7) % 50) / 25);
        }
  }
  spl_csr a{};
  EXPECT_EQ(spl_csr_from_coo(n, m, static_cast<int64_t>(rows.size()), rows.data(), cols.data(), vals.data(), &a), SPL_MATRIX_OK);
  return a;
}

/// Whether a plan's explanation shows the conversion to `name` ("DIA", "BCSR", "SELL-C-sigma")
/// tried within planning's budget: converted and timed (`timed`, the start of its line), or cut
/// short by the budget, which a loaded machine (ctest -j2) may spend before the conversion ("no
/// planning time left to try"), during it ("stopped at planning's deadline") or on it ("converted
/// in ..., no planning time left to time it").
inline bool triedWithinBudget(const std::string &why, const std::string &name, const std::string &timed) {
  for (const std::string &line : {timed, "no planning time left to try " + name, name + " converted in",
                                  name + "'s conversion stopped at planning's deadline"})
    if (why.find(line) != std::string::npos) return true;
  return false;
}

}  // namespace spl_plan_test
