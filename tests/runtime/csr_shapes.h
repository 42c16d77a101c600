// csr_shapes.h: what the runtime's matrix tests share (sell_test, inspect_test): the random
// matrices of every shape they run on (tools/matrix's spl_random_csr: uniform, empty rows, skewed
// rows, 1 x N, N x 1, nnz = 0, dense) and a matrix's arrays in the runtime's 32-bit form.
#pragma once

#include "spl_matrix.h"

#include <cstdint>
#include <vector>

namespace spl_test {

struct RandomShape {
  const char *name;
  int64_t rows, cols;
  double density;
  spl_random_kind kind;
};

/// The shapes every matrix test covers; a test appends its own (no rows, very wide, ...).
inline std::vector<RandomShape> randomShapes() {
  return {
      {"uniform", 200, 150, 0.05, SPL_RANDOM_UNIFORM}, {"empty_rows", 301, 300, 0.03, SPL_RANDOM_EMPTY_ROWS},
      {"skewed", 517, 400, 0.02, SPL_RANDOM_SKEWED},   {"row", 1, 1000, 0.3, SPL_RANDOM_UNIFORM},
      {"col", 1000, 1, 0.3, SPL_RANDOM_UNIFORM},       {"nnz0", 50, 60, 0.0, SPL_RANDOM_UNIFORM},
      {"dense", 40, 40, 1.0, SPL_RANDOM_UNIFORM},
  };
}

/// A CSR matrix as the runtime takes it: int32 offsets (shifted by `base`), int32 columns, the
/// values in both precisions; each array holds one element more, so none is empty.
struct Csr32 {
  int64_t rows = 0, columns = 0;
  std::vector<int32_t> offs, cols;
  std::vector<double> vals;
  std::vector<float> vals32;
};

inline Csr32 narrow(const spl_csr &m, int32_t base = 0) {
  Csr32 c;
  c.rows = m.rows;
  c.columns = m.cols;
  for (int64_t i = 0; i <= m.rows; ++i) c.offs.push_back(static_cast<int32_t>(m.offs[i]) + base);
  c.cols.assign(m.cols_idx, m.cols_idx + m.nnz);
  c.vals.assign(m.vals, m.vals + m.nnz);
  for (double v : c.vals) c.vals32.push_back(static_cast<float>(v));
  c.cols.push_back(0), c.vals.push_back(0), c.vals32.push_back(0);
  return c;
}

}  // namespace spl_test
