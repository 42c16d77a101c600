/* blas_f77.h: the Fortran BLAS entry points libsplblas defines (level1.c, level2.c, level3.c),
 * declared for cblas.c, which calls them as the reference CBLAS calls its Fortran BLAS, and
 * included by their definitions so that the two cannot drift apart.
 *
 * gfortran's convention: every argument by pointer, INTEGER 32-bit, REAL functions returning
 * float, each CHARACTER argument's hidden length (size_t) after the others. Each precision's set
 * is declared once (BLAS_F77(P, T): P the prefix, s or d, T its type). */
#pragma once

#include <stddef.h>

#define BLAS_F77(P, T)                                                                                          \
  void P##rotg_(T *a, T *b, T *c, T *s);                                                                        \
  void P##rotmg_(T *d1, T *d2, T *x1, const T *y1, T *param);                                                   \
  void P##rot_(const int *n, T *x, const int *incx, T *y, const int *incy, const T *c, const T *s);             \
  void P##rotm_(const int *n, T *x, const int *incx, T *y, const int *incy, const T *param);                    \
  void P##swap_(const int *n, T *x, const int *incx, T *y, const int *incy);                                    \
  void P##copy_(const int *n, const T *x, const int *incx, T *y, const int *incy);                              \
  void P##axpy_(const int *n, const T *alpha, const T *x, const int *incx, T *y, const int *incy);              \
  T P##dot_(const int *n, const T *x, const int *incx, const T *y, const int *incy);                            \
  void P##scal_(const int *n, const T *alpha, T *x, const int *incx);                                           \
  T P##nrm2_(const int *n, const T *x, const int *incx);                                                        \
  T P##asum_(const int *n, const T *x, const int *incx);                                                        \
  int i##P##amax_(const int *n, const T *x, const int *incx);                                                   \
                                                                                                                \
  void P##gemv_(const char *trans, const int *m, const int *n, const T *alpha, const T *a, const int *lda,      \
                const T *x, const int *incx, const T *beta, T *y, const int *incy, size_t trans_len);           \
  void P##gbmv_(const char *trans, const int *m, const int *n, const int *kl, const int *ku, const T *alpha,    \
                const T *a, const int *lda, const T *x, const int *incx, const T *beta, T *y, const int *incy,  \
                size_t trans_len);                                                                              \
  void P##symv_(const char *uplo, const int *n, const T *alpha, const T *a, const int *lda, const T *x,         \
                const int *incx, const T *beta, T *y, const int *incy, size_t uplo_len);                        \
  void P##sbmv_(const char *uplo, const int *n, const int *k, const T *alpha, const T *a, const int *lda,       \
                const T *x, const int *incx, const T *beta, T *y, const int *incy, size_t uplo_len);            \
  void P##spmv_(const char *uplo, const int *n, const T *alpha, const T *ap, const T *x, const int *incx,       \
                const T *beta, T *y, const int *incy, size_t uplo_len);                                         \
  void P##trmv_(const char *uplo, const char *trans, const char *diag, const int *n, const T *a,                \
                const int *lda, T *x, const int *incx, size_t l1, size_t l2, size_t l3);                        \
  void P##trsv_(const char *uplo, const char *trans, const char *diag, const int *n, const T *a,                \
                const int *lda, T *x, const int *incx, size_t l1, size_t l2, size_t l3);                        \
  void P##tbmv_(const char *uplo, const char *trans, const char *diag, const int *n, const int *k, const T *a,  \
                const int *lda, T *x, const int *incx, size_t l1, size_t l2, size_t l3);                        \
  void P##tbsv_(const char *uplo, const char *trans, const char *diag, const int *n, const int *k, const T *a,  \
                const int *lda, T *x, const int *incx, size_t l1, size_t l2, size_t l3);                        \
  void P##tpmv_(const char *uplo, const char *trans, const char *diag, const int *n, const T *ap, T *x,         \
                const int *incx, size_t l1, size_t l2, size_t l3);                                              \
  void P##tpsv_(const char *uplo, const char *trans, const char *diag, const int *n, const T *ap, T *x,         \
                const int *incx, size_t l1, size_t l2, size_t l3);                                              \
  void P##ger_(const int *m, const int *n, const T *alpha, const T *x, const int *incx, const T *y,             \
               const int *incy, T *a, const int *lda);                                                          \
  void P##syr_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, T *a,               \
               const int *lda, size_t uplo_len);                                                                \
  void P##spr_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, T *ap,              \
               size_t uplo_len);                                                                                \
  void P##syr2_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, const T *y,        \
                const int *incy, T *a, const int *lda, size_t uplo_len);                                        \
  void P##spr2_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, const T *y,        \
                const int *incy, T *ap, size_t uplo_len);                                                       \
                                                                                                                \
  void P##gemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,               \
                const T *alpha, const T *a, const int *lda, const T *b, const int *ldb, const T *beta, T *c,    \
                const int *ldc, size_t la, size_t lb);                                                          \
  void P##symm_(const char *side, const char *uplo, const int *m, const int *n, const T *alpha, const T *a,     \
                const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc, size_t ls,     \
                size_t lu);                                                                                     \
  void P##syrk_(const char *uplo, const char *trans, const int *n, const int *k, const T *alpha, const T *a,    \
                const int *lda, const T *beta, T *c, const int *ldc, size_t lu, size_t lt);                     \
  void P##syr2k_(const char *uplo, const char *trans, const int *n, const int *k, const T *alpha, const T *a,   \
                 const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc, size_t lu,    \
                 size_t lt);                                                                                    \
  void P##trmm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,         \
                const int *n, const T *alpha, const T *a, const int *lda, T *b, const int *ldb, size_t l1,      \
                size_t l2, size_t l3, size_t l4);                                                               \
  void P##trsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,         \
                const int *n, const T *alpha, const T *a, const int *lda, T *b, const int *ldb, size_t l1,      \
                size_t l2, size_t l3, size_t l4);

BLAS_F77(s, float)
BLAS_F77(d, double)

#undef BLAS_F77

/* The f32 dot products accumulated in f64, and the real results of a complex vector (x holds
 * n (re, im) pairs, incx pairs apart). */
double dsdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy);
float sdsdot_(const int *n, const float *sb, const float *x, const int *incx, const float *y, const int *incy);
float scasum_(const int *n, const float *x, const int *incx);
double dzasum_(const int *n, const double *x, const int *incx);
float scnrm2_(const int *n, const float *x, const int *incx);
double dznrm2_(const int *n, const double *x, const int *incx);

/* The reference's error handler (xerbla.c; a program may define its own). */
void xerbla_(const char *name, const int *info, size_t name_len);
