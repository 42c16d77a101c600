/* xerbla.c: the reference BLAS's error handler, as libsplblas defines it (docs/blas.md).
 *
 * A routine whose arguments are wrong calls xerbla_(name, info, name_len) with the position of
 * the first wrong argument; the reference prints it and stops the program. The symbol is an
 * ordinary global one of the shared library (not bound within it), so a program that defines its
 * own xerbla_, as netlib's test programs do, gets every call. */
#include <stdio.h>
#include <stdlib.h>

void xerbla_(const char *name, const int *info, size_t name_len) {
  int len = (int)name_len;
  while (len > 0 && name[len - 1] == ' ') --len;
  fprintf(stderr, " ** On entry to %.*s parameter number %d had an illegal value\n", len, name, *info);
  exit(1);
}
