/* blas_args.h: the Fortran BLAS's argument decoding and the kernels' status, shared by level1.c,
 * level2.c and level3.c.
 *
 * LSAME (a CHARACTER argument's first letter, either case), the reference's checks as a chain
 * whose first failure sets INFO (the position of the wrong argument), and its report through
 * xerbla_ (xerbla.c, or the program's own) with the routine's six-character name. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "blas_f77.h"
#include "spl_runtime.h"

#define N64(p) ((int64_t) * (p))

static inline int blas_is(const char *c, char letter) { return (*c | 0x20) == (letter | 0x20); }
static inline int blas_max1(int a) { return a > 1 ? a : 1; }
static inline int blas_bad_trans(const char *t) { return !blas_is(t, 'N') && !blas_is(t, 'T') && !blas_is(t, 'C'); }
static inline int blas_bad_uplo(const char *u) { return !blas_is(u, 'U') && !blas_is(u, 'L'); }
static inline int blas_bad_diag(const char *d) { return !blas_is(d, 'U') && !blas_is(d, 'N'); }

/* The first failing check sets info (the reference's IF .. ELSE IF chain). */
#define BLAS_CHECK(cond, pos) \
  if (!info && (cond)) info = (pos)
/* NAME: the routine's name as a string literal of six characters ("DGEMV "). */
#define BLAS_REPORT(NAME)                      \
  if (info) {                                  \
    xerbla_(NAME, &info, sizeof NAME - 1);     \
    return;                                    \
  }

/* A kernel's status, nonzero only when a temporary could not be allocated (SPL_ERR_ALLOC: the
 * arguments were checked above; trsm's and trmm's row-major copy of the triangle and symm's of
 * sym(A) are p x p elements). The reference BLAS cannot fail and has no code to return it with;
 * OpenBLAS prints and aborts on a failed allocation, and so does this layer, rather than return
 * with the output unchanged. `routine` is the Fortran entry's name (__func__). */
static inline void blas_done(int status, const char *routine) {
  if (status == 0) return;
  fprintf(stderr, " ** libsplblas: %s could not run: %s\n", routine, spl_error_string(status));
  abort();
}
#define BLAS_RUN(call) blas_done((call), __func__)
