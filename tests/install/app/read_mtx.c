/* A user program of an installed SPL that reads its matrix from a Matrix Market file with the
 * installed matrix library (spl_matrix.h, libsplmatrix), runs the kernel on the file's arrays and
 * compares with the library's double-precision reference. Usage: read_mtx FILE.mtx */
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"
#include "spl_matrix.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: read_mtx FILE.mtx\n");
    return 2;
  }
  char err[512];
  spl_csr a = {0};
  if (spl_read_matrix(argv[1], &a, err, sizeof err) != SPL_MATRIX_OK) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  spl_csr_f32 k = {0};
  float *x = malloc(((size_t)a.cols + 1) * sizeof *x), *y = malloc(((size_t)a.rows + 1) * sizeof *y);
  double *xd = malloc(((size_t)a.cols + 1) * sizeof *xd), *want = malloc(((size_t)a.rows + 1) * sizeof *want);
  if (spl_csr_to_f32(&a, &k) != SPL_MATRIX_OK || !x || !y || !xd || !want) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  spl_random_vector_f32(7, a.cols, x);
  for (int64_t j = 0; j < a.cols; ++j) xd[j] = x[j];
  int rc = app_spmv(a.rows, a.cols, k.offs, k.vals, k.cols_idx, x, y);
  if (rc != SPL_OK) {
    fprintf(stderr, "app_spmv: %s\n", spl_error_string(rc));
    return 1;
  }
  spl_ref_spmv(&a, xd, want);
  double e = spl_rel_error(y, want, a.rows);
  printf("%lld x %lld, %lld entries: %s\n", (long long)a.rows, (long long)a.cols, (long long)a.nnz,
         e < 1e-5 ? "matches the reference" : "WRONG");
  spl_csr_f32_free(&k);
  spl_csr_free(&a);
  free(x), free(y), free(xd), free(want);
  return e < 1e-5 ? 0 : 1;
}
