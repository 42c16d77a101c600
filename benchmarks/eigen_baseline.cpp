// Eigen baseline of spl-spmv-bench and spl-spmm-bench: y = A x (and C = A B, B dense row-major)
// with A a Map of the CSR arrays as SparseMatrix<T, RowMajor, int>. Eigen runs row-major sparse x dense products on OpenMP threads
// (Eigen::setNbThreads) when built with -fopenmp and the matrix has more than 20000 entries.
#include "baselines.h"

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <cstdio>

namespace {
template <class T>
void spmv(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *colsIdx, const T *vals,
          const T *x, T *y) {
  using Sparse = Eigen::SparseMatrix<T, Eigen::RowMajor, int>;
  using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  Eigen::Map<const Sparse> a(rows, cols, nnz, offs, colsIdx, vals);
  Eigen::Map<const Vec> xv(x, cols);
  Eigen::Map<Vec> yv(y, rows);
  yv.noalias() = a * xv;
}
/// C = A B with B and C dense, row-major (k columns): Eigen's sparse x dense product.
template <class T>
void spmm(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *colsIdx, const T *vals, int64_t k,
          const T *B, T *C) {
  using Sparse = Eigen::SparseMatrix<T, Eigen::RowMajor, int>;
  using Dense = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Sparse> a(rows, cols, nnz, offs, colsIdx, vals);
  Eigen::Map<const Dense> b(B, cols, k);
  Eigen::Map<Dense> c(C, rows, k);
  c.noalias() = a * b;
}
} // namespace

extern "C" {
void eigen_spmm_f64(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *colsIdx,
                    const double *vals, int64_t k, const double *B, double *C) {
  spmm(rows, cols, nnz, offs, colsIdx, vals, k, B, C);
}

void eigen_spmm_f32(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *colsIdx,
                    const float *vals, int64_t k, const float *B, float *C) {
  spmm(rows, cols, nnz, offs, colsIdx, vals, k, B, C);
}

void eigen_set_threads(int n) { Eigen::setNbThreads(n); }

const char *eigen_version(void) {
  static char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%d.%d", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  return buf;
}

void eigen_spmv_f64(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *colsIdx,
                    const double *vals, const double *x, double *y) {
  spmv(rows, cols, nnz, offs, colsIdx, vals, x, y);
}

void eigen_spmv_f32(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *colsIdx,
                    const float *vals, const float *x, float *y) {
  spmv(rows, cols, nnz, offs, colsIdx, vals, x, y);
}
}
