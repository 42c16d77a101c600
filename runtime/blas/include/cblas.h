/* cblas.h: the C interface of libsplblas (issue 26, docs/blas.md), the reference CBLAS's
 * declarations for the real routines (s, d) and the real results of a complex vector.
 *
 * Installed as <prefix>/include/splblas/cblas.h (pkg-config splblas puts that folder on the
 * include path), so that it does not shadow another BLAS's cblas.h. A matrix argument is read
 * in the layout the first argument names; CblasRowMajor is the column-major routine on the
 * transposed problem, as in the reference. A wrong argument is reported through cblas_xerbla
 * (position counted from 1, the layout included), which prints it and ends the program; a
 * program may define its own cblas_xerbla (and xerbla_) instead. */
#ifndef SPL_CBLAS_H
#define SPL_CBLAS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CBLAS_INDEX size_t

typedef enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_ORDER;
typedef enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 } CBLAS_TRANSPOSE;
typedef enum CBLAS_UPLO { CblasUpper = 121, CblasLower = 122 } CBLAS_UPLO;
typedef enum CBLAS_DIAG { CblasNonUnit = 131, CblasUnit = 132 } CBLAS_DIAG;
typedef enum CBLAS_SIDE { CblasLeft = 141, CblasRight = 142 } CBLAS_SIDE;
typedef CBLAS_ORDER CBLAS_LAYOUT;

/* Level 1. */
float cblas_sdsdot(const int N, const float alpha, const float *X, const int incX, const float *Y, const int incY);
double cblas_dsdot(const int N, const float *X, const int incX, const float *Y, const int incY);
float cblas_sdot(const int N, const float *X, const int incX, const float *Y, const int incY);
double cblas_ddot(const int N, const double *X, const int incX, const double *Y, const int incY);
float cblas_snrm2(const int N, const float *X, const int incX);
float cblas_sasum(const int N, const float *X, const int incX);
double cblas_dnrm2(const int N, const double *X, const int incX);
double cblas_dasum(const int N, const double *X, const int incX);
float cblas_scnrm2(const int N, const void *X, const int incX);
float cblas_scasum(const int N, const void *X, const int incX);
double cblas_dznrm2(const int N, const void *X, const int incX);
double cblas_dzasum(const int N, const void *X, const int incX);
CBLAS_INDEX cblas_isamax(const int N, const float *X, const int incX);
CBLAS_INDEX cblas_idamax(const int N, const double *X, const int incX);

void cblas_sswap(const int N, float *X, const int incX, float *Y, const int incY);
void cblas_scopy(const int N, const float *X, const int incX, float *Y, const int incY);
void cblas_saxpy(const int N, const float alpha, const float *X, const int incX, float *Y, const int incY);
void cblas_dswap(const int N, double *X, const int incX, double *Y, const int incY);
void cblas_dcopy(const int N, const double *X, const int incX, double *Y, const int incY);
void cblas_daxpy(const int N, const double alpha, const double *X, const int incX, double *Y, const int incY);

void cblas_srotg(float *a, float *b, float *c, float *s);
void cblas_srotmg(float *d1, float *d2, float *b1, const float b2, float *P);
void cblas_srot(const int N, float *X, const int incX, float *Y, const int incY, const float c, const float s);
void cblas_srotm(const int N, float *X, const int incX, float *Y, const int incY, const float *P);
void cblas_drotg(double *a, double *b, double *c, double *s);
void cblas_drotmg(double *d1, double *d2, double *b1, const double b2, double *P);
void cblas_drot(const int N, double *X, const int incX, double *Y, const int incY, const double c, const double s);
void cblas_drotm(const int N, double *X, const int incX, double *Y, const int incY, const double *P);

void cblas_sscal(const int N, const float alpha, float *X, const int incX);
void cblas_dscal(const int N, const double alpha, double *X, const int incX);

/* Level 2 (SPL_CBLAS_LEVEL2(P, T) declares each precision's routines). */
#define SPL_CBLAS_LEVEL2(P, T)                                                                                  \
  void cblas_##P##gemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,      \
                       const T alpha, const T *A, const int lda, const T *X, const int incX, const T beta,      \
                       T *Y, const int incY);                                                                   \
  void cblas_##P##gbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,      \
                       const int KL, const int KU, const T alpha, const T *A, const int lda, const T *X,        \
                       const int incX, const T beta, T *Y, const int incY);                                     \
  void cblas_##P##trmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,         \
                       const CBLAS_DIAG Diag, const int N, const T *A, const int lda, T *X, const int incX);    \
  void cblas_##P##tbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,         \
                       const CBLAS_DIAG Diag, const int N, const int K, const T *A, const int lda, T *X,        \
                       const int incX);                                                                         \
  void cblas_##P##tpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,         \
                       const CBLAS_DIAG Diag, const int N, const T *Ap, T *X, const int incX);                  \
  void cblas_##P##trsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,         \
                       const CBLAS_DIAG Diag, const int N, const T *A, const int lda, T *X, const int incX);    \
  void cblas_##P##tbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,         \
                       const CBLAS_DIAG Diag, const int N, const int K, const T *A, const int lda, T *X,        \
                       const int incX);                                                                         \
  void cblas_##P##tpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,         \
                       const CBLAS_DIAG Diag, const int N, const T *Ap, T *X, const int incX);                  \
  void cblas_##P##symv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *A, const int lda, const T *X, const int incX, const T beta, T *Y,               \
                       const int incY);                                                                         \
  void cblas_##P##sbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const int K,             \
                       const T alpha, const T *A, const int lda, const T *X, const int incX, const T beta,      \
                       T *Y, const int incY);                                                                   \
  void cblas_##P##spmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *Ap, const T *X, const int incX, const T beta, T *Y, const int incY);            \
  void cblas_##P##ger(const CBLAS_LAYOUT layout, const int M, const int N, const T alpha, const T *X,          \
                      const int incX, const T *Y, const int incY, T *A, const int lda);                         \
  void cblas_##P##syr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,            \
                      const T *X, const int incX, T *A, const int lda);                                         \
  void cblas_##P##spr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,            \
                      const T *X, const int incX, T *Ap);                                                       \
  void cblas_##P##syr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *X, const int incX, const T *Y, const int incY, T *A, const int lda);            \
  void cblas_##P##spr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *X, const int incX, const T *Y, const int incY, T *A);

/* Level 3. */
#define SPL_CBLAS_LEVEL3(P, T)                                                                                  \
  void cblas_##P##gemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,  \
                       const int M, const int N, const int K, const T alpha, const T *A, const int lda,         \
                       const T *B, const int ldb, const T beta, T *C, const int ldc);                           \
  void cblas_##P##symm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,   \
                       const int N, const T alpha, const T *A, const int lda, const T *B, const int ldb,        \
                       const T beta, T *C, const int ldc);                                                      \
  void cblas_##P##syrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,          \
                       const int N, const int K, const T alpha, const T *A, const int lda, const T beta, T *C,  \
                       const int ldc);                                                                          \
  void cblas_##P##syr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,         \
                        const int N, const int K, const T alpha, const T *A, const int lda, const T *B,         \
                        const int ldb, const T beta, T *C, const int ldc);                                      \
  void cblas_##P##trmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,                \
                       const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,           \
                       const T alpha, const T *A, const int lda, T *B, const int ldb);                          \
  void cblas_##P##trsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,                \
                       const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,           \
                       const T alpha, const T *A, const int lda, T *B, const int ldb);

SPL_CBLAS_LEVEL2(s, float)
SPL_CBLAS_LEVEL2(d, double)
SPL_CBLAS_LEVEL3(s, float)
SPL_CBLAS_LEVEL3(d, double)

#undef SPL_CBLAS_LEVEL2
#undef SPL_CBLAS_LEVEL3

/* The error handler: info is the wrong argument's position, rout the routine ("cblas_dgemv"),
 * form a printf format for what follows. */
void cblas_xerbla(int info, const char *rout, const char *form, ...);

#ifdef __cplusplus
}
#endif

#endif /* SPL_CBLAS_H */
