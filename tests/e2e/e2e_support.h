// Shared helpers of the end-to-end tests: the test matrices (the bundled real ones and seeded
// random ones with empty rows, skewed rows, 1xN, Nx1 and nnz = 0) and comparison against
// double-precision references. Each test links the objects splc made from one .spl file.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "spl_matrix.h"
#include "spl_runtime.h"

namespace spl_e2e {

struct NamedMatrix {
  std::string name;
  spl_csr m{};
};

/// Owns CSR matrices for the duration of a test binary.
class MatrixSet {
 public:
  ~MatrixSet() {
    for (NamedMatrix &n : all) spl_csr_free(&n.m);
  }
  std::vector<NamedMatrix> all;
};

/// The folder of the real test matrices: SPL_TEST_MATRICES_DIR when set (test binaries carried to
/// another machine, where the source tree lies elsewhere), else the source tree's, fixed at build.
inline std::string testMatricesDir() {
  const char *dir = std::getenv("SPL_TEST_MATRICES_DIR");
  return dir && *dir ? dir : SPL_TEST_MATRICES;
}

inline const std::vector<NamedMatrix> &testMatrices() {
  static MatrixSet set;
  if (!set.all.empty()) return set.all;
  const char *real[] = {"pores_1.mtx", "lund_a.mtx", "jgl009.mtx", "utm300.rua", "g20.rua"};
  for (const char *f : real) {
    NamedMatrix n;
    n.name = f;
    char err[512];
    std::string path = testMatricesDir() + "/" + f;
    if (spl_read_matrix(path.c_str(), &n.m, err, sizeof err) != 0) {
      ADD_FAILURE() << "cannot read " << path << ": " << err;
      continue;
    }
    set.all.push_back(n);
  }
  struct Shape {
    const char *name;
    int64_t rows, cols;
    double density;
    spl_random_kind kind;
    uint64_t seed;
  };
  const Shape shapes[] = {
      {"uniform_200x150", 200, 150, 0.05, SPL_RANDOM_UNIFORM, 1},
      {"empty_rows_300x300", 300, 300, 0.03, SPL_RANDOM_EMPTY_ROWS, 2},
      {"skewed_500x400", 500, 400, 0.02, SPL_RANDOM_SKEWED, 3},
      {"row_1x1000", 1, 1000, 0.3, SPL_RANDOM_UNIFORM, 4},
      {"col_1000x1", 1000, 1, 0.3, SPL_RANDOM_UNIFORM, 5},
      {"nnz0_50x60", 50, 60, 0.0, SPL_RANDOM_UNIFORM, 6},
      {"dense_40x40", 40, 40, 1.0, SPL_RANDOM_UNIFORM, 7},
      {"large_3000x3000", 3000, 3000, 0.004, SPL_RANDOM_SKEWED, 8},
  };
  for (const Shape &s : shapes) {
    NamedMatrix n;
    n.name = s.name;
    if (spl_random_csr(s.rows, s.cols, s.density, s.seed, s.kind, &n.m) != 0) {
      ADD_FAILURE() << "cannot generate " << s.name;
      continue;
    }
    set.all.push_back(n);
  }
  return set.all;
}

/// The matrix padded with zero rows and columns to rows x cols (rows >= m.rows, cols >= m.cols);
/// the caller frees it.
inline spl_csr padded(const spl_csr &m, int64_t rows, int64_t cols) {
  spl_coo coo{};
  spl_csr out{};
  EXPECT_EQ(spl_csr_to_coo(&m, &coo), SPL_MATRIX_OK);
  EXPECT_EQ(spl_csr_from_coo(rows, cols, coo.nnz, coo.row_idx, coo.col_idx, coo.vals, &out), SPL_MATRIX_OK);
  spl_coo_free(&coo);
  return out;
}

/// A row-major ELL matrix's values and columns re-laid with row stride w >= ell.width, the extra
/// slots value 0 / column 0 (plus one spare element, so that empty matrices have a buffer).
inline void widenEllRows(const spl_ell &ell, int64_t rows, int64_t w, std::vector<float> &vals,
                         std::vector<int32_t> &cols) {
  vals.assign(static_cast<size_t>(rows * w) + 1, 0.0f);
  cols.assign(static_cast<size_t>(rows * w) + 1, 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < ell.width; ++k) {
      vals[static_cast<size_t>(i * w + k)] = ell.vals_f32[i * ell.width + k];
      cols[static_cast<size_t>(i * w + k)] = ell.cols_idx[i * ell.width + k];
    }
}

/// The number of matrices testMatrices() returns (for INSTANTIATE_TEST_SUITE_P ranges).
constexpr size_t kNumTestMatrices = 13;

/// A gtest parameter name for test matrix i: its name with non-alphanumerics replaced by '_'.
inline std::string matrixParamName(const ::testing::TestParamInfo<size_t> &info) {
  std::string n = testMatrices()[info.param].name;
  for (char &c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

inline std::vector<float> randomVectorF(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n) + 1);
  spl_random_vector_f32(seed, n, v.data());
  return v;
}

inline std::vector<double> toDouble(const std::vector<float> &v) { return std::vector<double>(v.begin(), v.end()); }

/// Max relative error of float results against a double reference (see spl_rel_error).
inline double relError(const float *got, const double *want, int64_t n) { return spl_rel_error(got, want, n); }

constexpr double kF32Tolerance = 1e-5;
constexpr double kF64Tolerance = 1e-12;

/// The operands of a column scatter y = A x with A read by columns (its CSC): x from seed 9,
/// A x in double, and per row the sum of its terms' magnitudes (the scale of the sum's
/// rounding), each with a guard element past the end.
struct ScatterCase {
  spl_csc csc{};
  std::vector<double> x, want, scale;
  explicit ScatterCase(const spl_csr &a)
      : x(static_cast<size_t>(a.cols) + 1), want(static_cast<size_t>(a.rows) + 1, 0.0), scale(want.size(), 0.0) {
    EXPECT_EQ(spl_csr_to_csc(&a, &csc), 0);
    spl_random_vector(9, a.cols, x.data());
    spl_ref_spmv(&a, x.data(), want.data());
    for (int64_t i = 0; i < a.rows; ++i)
      for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) scale[i] += std::fabs(a.vals[p] * x[a.cols_idx[p]]);
  }
  /// y = A x by `kernel` (an export taking n, m, the CSC and x) on `threads` threads, checked
  /// against want row by row, its guard element untouched.
  template <typename Kernel>
  std::vector<double> run(Kernel kernel, const spl_csr &a, int threads, const std::string &name) {
    spl_set_num_threads(threads);
    std::vector<double> y(static_cast<size_t>(a.rows) + 1, -7.0);
    EXPECT_EQ(kernel(a.rows, a.cols, csc.offs, csc.vals, csc.row_idx, x.data(), y.data()), SPL_OK);
    for (int64_t i = 0; i < a.rows; ++i)
      if (!(std::fabs(y[i] - want[i]) <= 1e-13 * (scale[i] + 1e-300))) {
        ADD_FAILURE() << name << " row " << i << " threads " << threads << ": " << y[i] << ", want " << want[i];
        break;
      }
    EXPECT_EQ(y[a.rows], -7.0);
    spl_set_num_threads(0);
    return y;
  }
  ScatterCase(const ScatterCase &) = delete;
  ScatterCase &operator=(const ScatterCase &) = delete;
  ~ScatterCase() { spl_csc_free(&csc); }
};

}  // namespace spl_e2e
