/* The quickstart program: y = A x with the SPL kernel compiled from stdlib/spmv.spl, on a real
 * matrix read from a Matrix Market or Harwell-Boeing file. Prints the checksum of y, its
 * difference from a double-precision reference, and the median time per SpMV. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spl_matrix.h"
#include "spmv.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MATRIX\n", argv[0]);
    return 2;
  }
  spl_csr a;
  char err[512];
  if (spl_read_matrix(argv[1], &a, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  spl_csr_f32 af;
  if (spl_csr_to_f32(&a, &af) != 0) return 1;
  float *x = malloc(sizeof(float) * (size_t)(a.cols + 1));
  float *y = malloc(sizeof(float) * (size_t)(a.rows + 1));
  double *xd = malloc(sizeof(double) * (size_t)(a.cols + 1));
  double *yd = malloc(sizeof(double) * (size_t)(a.rows + 1));
  for (int64_t j = 0; j < a.cols; ++j) {
    x[j] = 1.0f + (float)(j % 10) / 10.0f;
    xd[j] = x[j];
  }
  int rc = spl_spmv_csr_f32(a.rows, a.cols, af.offs, af.cols_idx, af.vals, x, y);
  if (rc != SPL_OK) {
    fprintf(stderr, "spl_spmv_csr_f32: %s\n", spl_error_string(rc));
    return 1;
  }
  spl_ref_spmv(&a, xd, yd);
  double checksum = 0;
  for (int64_t i = 0; i < a.rows; ++i) checksum += y[i];
  enum { RUNS = 51 };
  double times[RUNS];
  int reps = a.nnz > 0 ? (int)(2000000 / (a.nnz + a.rows) + 1) : 1000;
  for (int r = 0; r < RUNS; ++r) {
    double t0 = now();
    for (int k = 0; k < reps; ++k) spl_spmv_csr_f32(a.rows, a.cols, af.offs, af.cols_idx, af.vals, x, y);
    times[r] = (now() - t0) / reps;
  }
  qsort(times, RUNS, sizeof times[0], cmp);
  printf("matrix %s: %lld x %lld, %lld nonzeros\n", argv[1], (long long)a.rows, (long long)a.cols, (long long)a.nnz);
  printf("checksum(y) = %.6f   max relative error vs double reference = %.2e\n", checksum,
         spl_rel_error(y, yd, a.rows));
  printf("time per SpMV: %.3f us (median of %d runs of %d)\n", times[RUNS / 2] * 1e6, RUNS, reps);
  spl_csr_f32_free(&af);
  spl_csr_free(&a);
  free(x);
  free(y);
  free(xd);
  free(yd);
  return 0;
}
