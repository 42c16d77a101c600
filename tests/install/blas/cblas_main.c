/* A program of the BLAS's users: the C interface from the installed prefix (pkg-config splblas:
 * include/splblas/cblas.h and libsplblas). Prints y = A x for a 2 x 3 row-major A. */
#include <cblas.h>
#include <stdio.h>

int main(void) {
  double a[6] = {1, 2, 3, 4, 5, 6}, x[3] = {1, 1, 1}, y[2];
  cblas_dgemv(CblasRowMajor, CblasNoTrans, 2, 3, 1.0, a, 3, x, 1, 0.0, y, 1);
  printf("y = %g %g\n", y[0], y[1]);
  return 0;
}
