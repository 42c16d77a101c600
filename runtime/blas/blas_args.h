/* blas_args.h: the Fortran BLAS's argument decoding, shared by level2.c and level3.c.
 *
 * LSAME (a CHARACTER argument's first letter, either case), the reference's checks as a chain
 * whose first failure sets INFO (the position of the wrong argument), and its report through
 * xerbla_ (xerbla.c, or the program's own) with the routine's six-character name. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "blas_f77.h"

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
