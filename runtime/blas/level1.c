/* level1.c: the Fortran BLAS level-1 entry points of libsplblas (issue 26, docs/blas.md).
 *
 * Takes: the reference BLAS's Fortran calling convention as gfortran compiles it (every argument
 * by pointer, INTEGER 32-bit, REAL functions returning float, a trailing underscore).
 * Gives: the same results through stdlib/blas1.spl's exports (spl_blas_*), which hold all of the
 * arithmetic. What is here only decodes: the reference's quick returns (n <= 0; a routine of one
 * vector returns at once when its increment is not positive), and the pointers of rotg/rotmg's
 * in-out scalars passed by value and written back through the exports' outputs. */
#include <stdint.h>

#include "blas1.h"

#define N64(p) ((int64_t)*(p))

/* ---- rotg, rotmg ---------------------------------------------------------------------------- */

void srotg_(float *a, float *b, float *c, float *s) { spl_blas_srotg(*a, *b, a, b, c, s); }
void drotg_(double *a, double *b, double *c, double *s) { spl_blas_drotg(*a, *b, a, b, c, s); }

void srotmg_(float *d1, float *d2, float *x1, const float *y1, float *param) {
  spl_blas_srotmg(*d1, *d2, *x1, *y1, param[0], param[1], param[2], param[3], param[4], d1, d2, x1, &param[0],
                  &param[1], &param[2], &param[3], &param[4]);
}
void drotmg_(double *d1, double *d2, double *x1, const double *y1, double *param) {
  spl_blas_drotmg(*d1, *d2, *x1, *y1, param[0], param[1], param[2], param[3], param[4], d1, d2, x1, &param[0],
                  &param[1], &param[2], &param[3], &param[4]);
}

/* ---- two vectors: negative increments walk from the far end --------------------------------- */

void srot_(const int *n, float *x, const int *incx, float *y, const int *incy, const float *c, const float *s) {
  if (*n > 0) spl_blas_srot(N64(n), x, N64(incx), y, N64(incy), *c, *s);
}
void drot_(const int *n, double *x, const int *incx, double *y, const int *incy, const double *c, const double *s) {
  if (*n > 0) spl_blas_drot(N64(n), x, N64(incx), y, N64(incy), *c, *s);
}

void srotm_(const int *n, float *x, const int *incx, float *y, const int *incy, const float *p) {
  if (*n > 0 && p[0] != -2.0f) spl_blas_srotm(N64(n), x, N64(incx), y, N64(incy), p[0], p[1], p[2], p[3], p[4]);
}
void drotm_(const int *n, double *x, const int *incx, double *y, const int *incy, const double *p) {
  if (*n > 0 && p[0] != -2.0) spl_blas_drotm(N64(n), x, N64(incx), y, N64(incy), p[0], p[1], p[2], p[3], p[4]);
}

void sswap_(const int *n, float *x, const int *incx, float *y, const int *incy) {
  if (*n > 0) spl_blas_sswap(N64(n), x, N64(incx), y, N64(incy));
}
void dswap_(const int *n, double *x, const int *incx, double *y, const int *incy) {
  if (*n > 0) spl_blas_dswap(N64(n), x, N64(incx), y, N64(incy));
}

void scopy_(const int *n, const float *x, const int *incx, float *y, const int *incy) {
  if (*n > 0) spl_blas_scopy(N64(n), x, N64(incx), y, N64(incy));
}
void dcopy_(const int *n, const double *x, const int *incx, double *y, const int *incy) {
  if (*n > 0) spl_blas_dcopy(N64(n), x, N64(incx), y, N64(incy));
}

void saxpy_(const int *n, const float *alpha, const float *x, const int *incx, float *y, const int *incy) {
  if (*n > 0) spl_blas_saxpy(N64(n), *alpha, x, N64(incx), y, N64(incy));
}
void daxpy_(const int *n, const double *alpha, const double *x, const int *incx, double *y, const int *incy) {
  if (*n > 0) spl_blas_daxpy(N64(n), *alpha, x, N64(incx), y, N64(incy));
}

float sdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy) {
  float r = 0.0f;
  if (*n > 0) spl_blas_sdot(N64(n), x, N64(incx), y, N64(incy), &r);
  return r;
}
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy) {
  double r = 0.0;
  if (*n > 0) spl_blas_ddot(N64(n), x, N64(incx), y, N64(incy), &r);
  return r;
}
double dsdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy) {
  double r = 0.0;
  if (*n > 0) spl_blas_dsdot(N64(n), x, N64(incx), y, N64(incy), &r);
  return r;
}
float sdsdot_(const int *n, const float *sb, const float *x, const int *incx, const float *y, const int *incy) {
  float r = *sb;
  if (*n > 0) spl_blas_sdsdot(N64(n), *sb, x, N64(incx), y, N64(incy), &r);
  return r;
}

/* ---- one vector: nothing to do unless the increment is positive ----------------------------- */

void sscal_(const int *n, const float *alpha, float *x, const int *incx) {
  if (*n > 0 && *incx > 0) spl_blas_sscal(N64(n), *alpha, x, N64(incx));
}
void dscal_(const int *n, const double *alpha, double *x, const int *incx) {
  if (*n > 0 && *incx > 0) spl_blas_dscal(N64(n), *alpha, x, N64(incx));
}

float snrm2_(const int *n, const float *x, const int *incx) {
  float r = 0.0f;
  if (*n > 0 && *incx > 0) spl_blas_snrm2(N64(n), x, N64(incx), &r);
  return r;
}
double dnrm2_(const int *n, const double *x, const int *incx) {
  double r = 0.0;
  if (*n > 0 && *incx > 0) spl_blas_dnrm2(N64(n), x, N64(incx), &r);
  return r;
}

float sasum_(const int *n, const float *x, const int *incx) {
  float r = 0.0f;
  if (*n > 0 && *incx > 0) spl_blas_sasum(N64(n), x, N64(incx), &r);
  return r;
}
double dasum_(const int *n, const double *x, const int *incx) {
  double r = 0.0;
  if (*n > 0 && *incx > 0) spl_blas_dasum(N64(n), x, N64(incx), &r);
  return r;
}

int isamax_(const int *n, const float *x, const int *incx) {
  int32_t r = 0;
  if (*n > 0 && *incx > 0) spl_blas_isamax(N64(n), x, N64(incx), &r);
  return r;
}
int idamax_(const int *n, const double *x, const int *incx) {
  int32_t r = 0;
  if (*n > 0 && *incx > 0) spl_blas_idamax(N64(n), x, N64(incx), &r);
  return r;
}
