/* xerbla.c: the reference BLAS's error handler, as libsplblas defines it (docs/blas.md).
 *
 * A routine whose arguments are wrong calls xerbla_(name, info, name_len) with the position of
 * the first wrong argument; the reference prints it and stops the program. Within a CBLAS call
 * (cblas.c sets CBLAS_CallFromC) the report goes to cblas_xerbla under the CBLAS name
 * ("cblas_dgemv") with the CBLAS position, one more for the layout argument, as the reference
 * CBLAS's xerbla_ does. Both symbols are ordinary globals of the shared library (not bound
 * within it), so a program that defines its own, as netlib's test programs do, gets every call. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "blas_f77.h"
#include "cblas.h"

extern int CBLAS_CallFromC;

void xerbla_(const char *name, const int *info, size_t name_len) {
  int len = (int)name_len;
  while (len > 0 && name[len - 1] == ' ') --len;
  if (CBLAS_CallFromC) {
    char rout[32] = "cblas_";
    for (int i = 0; i < len && i < 16; ++i) rout[6 + i] = (char)tolower((unsigned char)name[i]);
    cblas_xerbla(*info + 1, rout, "");
    return;
  }
  fprintf(stderr, " ** On entry to %.*s parameter number %d had an illegal value\n", len, name, *info);
  exit(1);
}
