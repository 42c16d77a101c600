/* A user program of an installed SPL: y = A x scaled (scaling.spl) for a 3 x 3 CSR matrix, from a C-only project. */
#include <stdio.h>

#include "kernels.h"

int main(void) {
  const int32_t offs[] = {0, 2, 4, 5};
  const float vals[] = {1, 2, 3, 4, 1};
  const int32_t cols[] = {0, 2, 1, 2, 0};
  const float x[] = {1, 1, 2};
  float y[3];
  int rc = app_spmv(3, 3, offs, vals, cols, x, y);
  if (rc != SPL_OK) {
    printf("error: %s\n", spl_error_string(rc));
    return 1;
  }
  printf("y = %g %g %g\n", y[0], y[1], y[2]);
  return 0;
}
