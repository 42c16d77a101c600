/* baselines.h: the library baselines of spl-spmv-bench, each behind a small C interface in a
 * translation unit of its own (the libraries' headers define macros that must not meet):
 *   Eigen 3 (SparseMatrix<T, RowMajor, int> times a vector, multithreaded with OpenMP),
 *   librsb (rsb_spmv on its recursive sparse blocks, built from the CSR arrays),
 *   SuiteSparse: CSparse cs_gaxpy (on the CSC form; f64 only, serial) and CHOLMOD
 *   cholmod_sdmult (A' x on A^T stored as CSC, i.e. the CSR arrays of A; f64 only, serial). */
#ifndef SPL_BENCH_BASELINES_H
#define SPL_BENCH_BASELINES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Eigen: maps the CSR arrays (no copy) and computes y = A x. */
void eigen_set_threads(int n);
const char *eigen_version(void);
void eigen_spmv_f64(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *cols_idx,
                    const double *vals, const double *x, double *y);
void eigen_spmv_f32(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *cols_idx,
                    const float *vals, const float *x, float *y);
/* C = A B for B of k columns, B and C dense row-major (spl-spmm-bench). */
void eigen_spmm_f64(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *cols_idx,
                    const double *vals, int64_t k, const double *B, double *C);
void eigen_spmm_f32(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *cols_idx,
                    const float *vals, int64_t k, const float *B, float *C);

/* ---- librsb. rsb_bench_create sets the executing threads first (RSB partitions for them). */
int rsb_bench_init(void);
void rsb_bench_exit(void);
const char *rsb_bench_version(void);
void *rsb_bench_create(int is_double, int threads, int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs,
                       const int32_t *cols_idx, const void *vals);
int rsb_bench_set_threads(int threads);
int rsb_bench_spmv(void *mtx, int is_double, const void *x, void *y);
void rsb_bench_destroy(void *mtx);

/* ---- SuiteSparse (double only). */
int ss_init(void);
void ss_exit(void);
const char *ss_version(void);
/* CSparse on A in CSC (column offsets, row indices, values): y = A x with cs_gaxpy (y zeroed first). */
void *ss_csparse_create(int64_t rows, int64_t cols, int64_t nnz, const int32_t *col_offs, const int32_t *row_idx,
                        const double *vals);
void ss_csparse_spmv(void *a, const double *x, double *y);
void ss_csparse_destroy(void *a);
/* CHOLMOD on the CSR arrays of A read as A^T in CSC: y = (A^T)^T x with cholmod_sdmult. */
void *ss_cholmod_create(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *cols_idx,
                        const double *vals);
int ss_cholmod_spmv(void *a, const double *x, double *y);
void ss_cholmod_destroy(void *a);

/* ---- OpenMP's idle policy. libgomp's default spins an idle thread for milliseconds after each
 * parallel region; with the baselines (Eigen, librsb, the C loops, the triad: all OpenMP) timed
 * between SPL's samples, that thread then holds the second of two cores while SPL's pool worker
 * wants it, and SPL's two-thread figures fall to its one-thread ones (pwtk CSR: 3.06 against
 * 1.55 ms; cant 0.90 against 0.64). libgomp reads OMP_WAIT_POLICY once, when it loads, so a
 * bench started without it sets it and runs itself again; run.sh and run-spmm.sh set it
 * already. An explicit OMP_WAIT_POLICY (active, to measure the spinning) is kept. */
static inline void bench_require_passive_openmp(char **argv) {
  if (getenv("OMP_WAIT_POLICY"))
    return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);
  perror("bench: cannot run itself again with OMP_WAIT_POLICY=passive");
  exit(1);
}

#ifdef __cplusplus
}
#endif

#endif
