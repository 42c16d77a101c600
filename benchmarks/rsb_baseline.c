/* librsb baseline of spl-spmv-bench: the CSR arrays are assembled into librsb's recursive sparse
 * blocks (rsb_mtx_alloc_from_csr_const, after setting the thread count, since the partitioning
 * depends on it), then y = 1 * A x + 0 * y with rsb_spmv.
 *
 * librsb sizes its OpenMP team when rsb_lib_init runs (from omp_get_max_threads()), and
 * RSB_IO_WANT_EXECUTING_THREADS set later does not shrink it: initialised on 2 threads and set to
 * 1, every rsb_spmv still opens a 2-thread region (measured: 10-14 ms instead of 1.5 ms per call
 * while another process kept one core busy). So the library is initialised again, with the OpenMP
 * thread count set first, whenever the wanted thread count changes; no matrix may be alive then. */
#include "baselines.h"

#include <omp.h>
#include <rsb.h>
#include <stdio.h>

static int g_threads; /* the thread count librsb was initialised with; 0: not initialised */

static int reinit(int threads) {
  if (g_threads == threads)
    return 0;
  if (g_threads)
    rsb_lib_exit(RSB_NULL_EXIT_OPTIONS);
  g_threads = 0;
  omp_set_num_threads(threads);
  if (rsb_lib_init(RSB_NULL_INIT_OPTIONS) != RSB_ERR_NO_ERROR)
    return -1;
  g_threads = threads;
  return rsb_bench_set_threads(threads);
}

int rsb_bench_init(void) { return reinit(1); }

void rsb_bench_exit(void) {
  if (g_threads)
    rsb_lib_exit(RSB_NULL_EXIT_OPTIONS);
  g_threads = 0;
}

const char *rsb_bench_version(void) { return RSB_HEADER_VERSION_STRING; }

int rsb_bench_set_threads(int threads) {
  rsb_int_t nt = threads;
  return rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &nt) == RSB_ERR_NO_ERROR ? 0 : -1;
}

void *rsb_bench_create(int is_double, int threads, int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs,
                       const int32_t *cols_idx, const void *vals) {
  if (reinit(threads) != 0)
    return NULL;
  rsb_err_t err = RSB_ERR_NO_ERROR;
  struct rsb_mtx_t *m = rsb_mtx_alloc_from_csr_const(
      vals, (const rsb_coo_idx_t *)offs, (const rsb_coo_idx_t *)cols_idx, (rsb_nnz_idx_t)nnz,
      is_double ? RSB_NUMERICAL_TYPE_DOUBLE : RSB_NUMERICAL_TYPE_FLOAT, (rsb_coo_idx_t)rows, (rsb_coo_idx_t)cols, 1,
      1, RSB_FLAG_DEFAULT_RSB_MATRIX_FLAGS, &err);
  if (err != RSB_ERR_NO_ERROR) {
    if (m)
      rsb_mtx_free(m);
    return NULL;
  }
  return m;
}

int rsb_bench_spmv(void *mtx, int is_double, const void *x, void *y) {
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;
  rsb_err_t err = rsb_spmv(RSB_TRANSPOSITION_N, is_double ? (const void *)&one : (const void *)&onef,
                           (const struct rsb_mtx_t *)mtx, x, 1, is_double ? (const void *)&zero : (const void *)&zerof,
                           y, 1);
  return err == RSB_ERR_NO_ERROR ? 0 : -1;
}

void rsb_bench_destroy(void *mtx) {
  if (mtx)
    rsb_mtx_free((struct rsb_mtx_t *)mtx);
}
