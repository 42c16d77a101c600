/* cblas.c: the CBLAS entry points of libsplblas (issue 26, docs/blas.md; include/cblas.h).
 *
 * Takes: C calls with a layout argument, enums for trans/uplo/diag/side, scalars by value.
 * Gives: the Fortran entry points' results (level1.c, level2.c, level3.c, so stdlib's exports),
 * as the reference CBLAS gives them: a column-major call passes its arguments through; a
 * row-major one is the column-major routine on the transposed problem (a row-major A is a
 * column-major A'), which swaps m and n, kl and ku, x and y (ger), A and B (gemm), flips uplo
 * and side, and flips trans where the routine reads op(A) itself (level 2, syrk, syr2k).
 *
 * Errors follow the reference CBLAS's protocol, which netlib's test programs (xscblat*,
 * xdcblat*) rely on: a wrong enum is reported here through cblas_xerbla at its CBLAS position;
 * a wrong number is found by the Fortran routine, whose xerbla_ call becomes cblas_xerbla(info + 1)
 * while CBLAS_CallFromC is set (xerbla.c), and RowMajorStrg tells cblas_xerbla that the Fortran
 * positions are those of the transposed call. Both are plain global ints because the test
 * programs take RowMajorStrg over by a copy relocation; like the reference's, they are shared by
 * all threads, which matters only on the way to an error, which ends the program. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas_f77.h"
#include "cblas.h"

int RowMajorStrg = 0;
int CBLAS_CallFromC = 0;

/* The reference's message; the program ends (a program may define its own cblas_xerbla). In a
 * row-major call the Fortran routine saw swapped arguments: report the position the caller used. */
void cblas_xerbla(int info, const char *rout, const char *form, ...) {
  if (RowMajorStrg) {
    static const struct {
      const char *name;
      int a, b;
    } swapped[] = {{"gemm", 4, 5}, {"gemm", 9, 11}, {"symm", 4, 5}, {"trmm", 6, 7}, {"trsm", 6, 7},
                   {"gemv", 3, 4}, {"gbmv", 3, 4},  {"gbmv", 5, 6}, {"ger", 2, 3},  {"ger", 6, 8}};
    for (size_t i = 0; i < sizeof swapped / sizeof swapped[0]; ++i) {
      if (!strstr(rout, swapped[i].name)) continue;
      if (info == swapped[i].a) info = swapped[i].b;
      else if (info == swapped[i].b) info = swapped[i].a;
    }
  }
  va_list args;
  va_start(args, form);
  if (info) fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
  vfprintf(stderr, form, args);
  va_end(args);
  exit(1);
}

/* A call's start and end: the state cblas_xerbla and xerbla_ read. */
static int cb_start(CBLAS_LAYOUT layout, const char *rout) {
  CBLAS_CallFromC = 1;
  RowMajorStrg = layout == CblasRowMajor;
  if (layout == CblasRowMajor || layout == CblasColMajor) return 1;
  cblas_xerbla(1, rout, "Illegal layout setting, %d\n", (int)layout);
  CBLAS_CallFromC = RowMajorStrg = 0;
  return 0;
}
static void cb_end(void) { CBLAS_CallFromC = RowMajorStrg = 0; }
/* Reports a wrong enum; returns 0 so that a decoder's caller can stop with it. */
static int cb_bad(int pos, const char *rout, const char *what, int value) {
  cblas_xerbla(pos, rout, "Illegal %s setting, %d\n", what, value);
  cb_end();
  return 0;
}

/* The Fortran letters of the enums; flip: the transposed problem's letter. 0 for a wrong value. */
static char cb_trans(CBLAS_TRANSPOSE t, int flip) {
  if (t == CblasNoTrans) return flip ? 'T' : 'N';
  if (t == CblasTrans) return flip ? 'N' : 'T';
  if (t == CblasConjTrans) return flip ? 'N' : 'C';
  return 0;
}
static char cb_uplo(CBLAS_UPLO u, int flip) {
  if (u == CblasUpper) return flip ? 'L' : 'U';
  if (u == CblasLower) return flip ? 'U' : 'L';
  return 0;
}
static char cb_side(CBLAS_SIDE s, int flip) {
  if (s == CblasLeft) return flip ? 'R' : 'L';
  if (s == CblasRight) return flip ? 'L' : 'R';
  return 0;
}
static char cb_diag(CBLAS_DIAG d) { return d == CblasUnit ? 'U' : d == CblasNonUnit ? 'N' : 0; }

/* Decodes one enum into a char variable, or reports it and returns from the routine. */
#define CB_DECODE(var, expr, pos, what, value) \
  char var = (expr);                           \
  if (!var) {                                  \
    cb_bad(pos, rout, what, (int)(value));     \
    return;                                    \
  }
#define CB_START(NAME)                   \
  const char *rout = NAME;               \
  if (!cb_start(layout, rout)) return;   \
  int row = layout == CblasRowMajor

#define CB_LEVEL1(P, T)                                                                                         \
  T cblas_##P##dot(const int N, const T *X, const int incX, const T *Y, const int incY) {                       \
    return P##dot_(&N, X, &incX, Y, &incY);                                                                     \
  }                                                                                                             \
  T cblas_##P##nrm2(const int N, const T *X, const int incX) { return P##nrm2_(&N, X, &incX); }                 \
  T cblas_##P##asum(const int N, const T *X, const int incX) { return P##asum_(&N, X, &incX); }                 \
  /* From 0 (the Fortran index less one; 0 for an empty vector, as the reference). */                           \
  CBLAS_INDEX cblas_i##P##amax(const int N, const T *X, const int incX) {                                       \
    int i = i##P##amax_(&N, X, &incX);                                                                          \
    return i > 0 ? (CBLAS_INDEX)(i - 1) : 0;                                                                    \
  }                                                                                                             \
  void cblas_##P##swap(const int N, T *X, const int incX, T *Y, const int incY) { P##swap_(&N, X, &incX, Y, &incY); } \
  void cblas_##P##copy(const int N, const T *X, const int incX, T *Y, const int incY) {                         \
    P##copy_(&N, X, &incX, Y, &incY);                                                                           \
  }                                                                                                             \
  void cblas_##P##axpy(const int N, const T alpha, const T *X, const int incX, T *Y, const int incY) {          \
    P##axpy_(&N, &alpha, X, &incX, Y, &incY);                                                                   \
  }                                                                                                             \
  void cblas_##P##rotg(T *a, T *b, T *c, T *s) { P##rotg_(a, b, c, s); }                                        \
  void cblas_##P##rotmg(T *d1, T *d2, T *b1, const T b2, T *p) { P##rotmg_(d1, d2, b1, &b2, p); }               \
  void cblas_##P##rot(const int N, T *X, const int incX, T *Y, const int incY, const T c, const T s) {          \
    P##rot_(&N, X, &incX, Y, &incY, &c, &s);                                                                    \
  }                                                                                                             \
  void cblas_##P##rotm(const int N, T *X, const int incX, T *Y, const int incY, const T *p) {                   \
    P##rotm_(&N, X, &incX, Y, &incY, p);                                                                        \
  }                                                                                                             \
  void cblas_##P##scal(const int N, const T alpha, T *X, const int incX) { P##scal_(&N, &alpha, X, &incX); }

/* Level 2: a row-major A is the column-major A', so op(A) x is the routine on A' with trans
 * flipped (and m, n or kl, ku swapped); a symmetric or triangular A' has the other triangle. */
#define CB_TRIANGULAR(P, T, OP)                                                                                 \
  void cblas_##P##tr##OP(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,       \
                         const CBLAS_DIAG Diag, const int N, const T *A, const int lda, T *X, const int incX) { \
    CB_START("cblas_" #P "tr" #OP);                                                                             \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    CB_DECODE(trans, cb_trans(TransA, row), 3, "TransA", TransA);                                               \
    CB_DECODE(diag, cb_diag(Diag), 4, "Diag", Diag);                                                            \
    P##tr##OP##_(&uplo, &trans, &diag, &N, A, &lda, X, &incX, 1, 1, 1);                                         \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##tb##OP(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,       \
                         const CBLAS_DIAG Diag, const int N, const int K, const T *A, const int lda, T *X,      \
                         const int incX) {                                                                      \
    CB_START("cblas_" #P "tb" #OP);                                                                             \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    CB_DECODE(trans, cb_trans(TransA, row), 3, "TransA", TransA);                                               \
    CB_DECODE(diag, cb_diag(Diag), 4, "Diag", Diag);                                                            \
    P##tb##OP##_(&uplo, &trans, &diag, &N, &K, A, &lda, X, &incX, 1, 1, 1);                                     \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##tp##OP(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,       \
                         const CBLAS_DIAG Diag, const int N, const T *Ap, T *X, const int incX) {               \
    CB_START("cblas_" #P "tp" #OP);                                                                             \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    CB_DECODE(trans, cb_trans(TransA, row), 3, "TransA", TransA);                                               \
    CB_DECODE(diag, cb_diag(Diag), 4, "Diag", Diag);                                                            \
    P##tp##OP##_(&uplo, &trans, &diag, &N, Ap, X, &incX, 1, 1, 1);                                              \
    cb_end();                                                                                                   \
  }

#define CB_LEVEL2(P, T)                                                                                         \
  void cblas_##P##gemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,      \
                       const T alpha, const T *A, const int lda, const T *X, const int incX, const T beta,      \
                       T *Y, const int incY) {                                                                  \
    CB_START("cblas_" #P "gemv");                                                                               \
    CB_DECODE(trans, cb_trans(TransA, row), 2, "TransA", TransA);                                               \
    P##gemv_(&trans, row ? &N : &M, row ? &M : &N, &alpha, A, &lda, X, &incX, &beta, Y, &incY, 1);              \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##gbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,      \
                       const int KL, const int KU, const T alpha, const T *A, const int lda, const T *X,        \
                       const int incX, const T beta, T *Y, const int incY) {                                    \
    CB_START("cblas_" #P "gbmv");                                                                               \
    CB_DECODE(trans, cb_trans(TransA, row), 2, "TransA", TransA);                                               \
    P##gbmv_(&trans, row ? &N : &M, row ? &M : &N, row ? &KU : &KL, row ? &KL : &KU, &alpha, A, &lda, X, &incX, \
             &beta, Y, &incY, 1);                                                                               \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##symv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *A, const int lda, const T *X, const int incX, const T beta, T *Y,               \
                       const int incY) {                                                                        \
    CB_START("cblas_" #P "symv");                                                                               \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    P##symv_(&uplo, &N, &alpha, A, &lda, X, &incX, &beta, Y, &incY, 1);                                         \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##sbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const int K,             \
                       const T alpha, const T *A, const int lda, const T *X, const int incX, const T beta,      \
                       T *Y, const int incY) {                                                                  \
    CB_START("cblas_" #P "sbmv");                                                                               \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    P##sbmv_(&uplo, &N, &K, &alpha, A, &lda, X, &incX, &beta, Y, &incY, 1);                                     \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##spmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *Ap, const T *X, const int incX, const T beta, T *Y, const int incY) {           \
    CB_START("cblas_" #P "spmv");                                                                               \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    P##spmv_(&uplo, &N, &alpha, Ap, X, &incX, &beta, Y, &incY, 1);                                              \
    cb_end();                                                                                                   \
  }                                                                                                             \
  CB_TRIANGULAR(P, T, mv)                                                                                       \
  CB_TRIANGULAR(P, T, sv)                                                                                       \
  /* A' = y x' + A': the column-major ger with x and y (and m and n) exchanged. */                              \
  void cblas_##P##ger(const CBLAS_LAYOUT layout, const int M, const int N, const T alpha, const T *X,          \
                      const int incX, const T *Y, const int incY, T *A, const int lda) {                        \
    CB_START("cblas_" #P "ger");                                                                                \
    if (row) P##ger_(&N, &M, &alpha, Y, &incY, X, &incX, A, &lda);                                              \
    else P##ger_(&M, &N, &alpha, X, &incX, Y, &incY, A, &lda);                                                  \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##syr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,            \
                      const T *X, const int incX, T *A, const int lda) {                                        \
    CB_START("cblas_" #P "syr");                                                                                \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    P##syr_(&uplo, &N, &alpha, X, &incX, A, &lda, 1);                                                           \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##spr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,            \
                      const T *X, const int incX, T *Ap) {                                                      \
    CB_START("cblas_" #P "spr");                                                                                \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    P##spr_(&uplo, &N, &alpha, X, &incX, Ap, 1);                                                                \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##syr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *X, const int incX, const T *Y, const int incY, T *A, const int lda) {           \
    CB_START("cblas_" #P "syr2");                                                                               \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    P##syr2_(&uplo, &N, &alpha, X, &incX, Y, &incY, A, &lda, 1);                                                \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##spr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const T alpha,           \
                       const T *X, const int incX, const T *Y, const int incY, T *A) {                          \
    CB_START("cblas_" #P "spr2");                                                                               \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    P##spr2_(&uplo, &N, &alpha, X, &incX, Y, &incY, A, 1);                                                      \
    cb_end();                                                                                                   \
  }

/* Level 3: a row-major C = op(A) op(B) is the column-major C' = op(B)' op(A)' (gemm with A and B
 * exchanged, trans kept); symm, trmm and trsm move A to the other side (side and uplo flipped,
 * m and n swapped); syrk and syr2k read op(A) themselves, so trans flips with uplo. */
#define CB_TRIANGULAR3(P, T, OP)                                                                                \
  void cblas_##P##tr##OP(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,              \
                         const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,         \
                         const T alpha, const T *A, const int lda, T *B, const int ldb) {                       \
    CB_START("cblas_" #P "tr" #OP);                                                                             \
    CB_DECODE(side, cb_side(Side, row), 2, "Side", Side);                                                       \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 3, "Uplo", Uplo);                                                       \
    CB_DECODE(trans, cb_trans(TransA, 0), 4, "TransA", TransA);                                                 \
    CB_DECODE(diag, cb_diag(Diag), 5, "Diag", Diag);                                                            \
    P##tr##OP##_(&side, &uplo, &trans, &diag, row ? &N : &M, row ? &M : &N, &alpha, A, &lda, B, &ldb, 1, 1, 1,  \
                 1);                                                                                            \
    cb_end();                                                                                                   \
  }

#define CB_LEVEL3(P, T)                                                                                         \
  void cblas_##P##gemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,  \
                       const int M, const int N, const int K, const T alpha, const T *A, const int lda,         \
                       const T *B, const int ldb, const T beta, T *C, const int ldc) {                          \
    CB_START("cblas_" #P "gemm");                                                                               \
    CB_DECODE(ta, cb_trans(TransA, 0), 2, "TransA", TransA);                                                    \
    CB_DECODE(tb, cb_trans(TransB, 0), 3, "TransB", TransB);                                                    \
    if (row) P##gemm_(&tb, &ta, &N, &M, &K, &alpha, B, &ldb, A, &lda, &beta, C, &ldc, 1, 1);                    \
    else P##gemm_(&ta, &tb, &M, &N, &K, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);                        \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##symm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,   \
                       const int N, const T alpha, const T *A, const int lda, const T *B, const int ldb,        \
                       const T beta, T *C, const int ldc) {                                                     \
    CB_START("cblas_" #P "symm");                                                                               \
    CB_DECODE(side, cb_side(Side, row), 2, "Side", Side);                                                       \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 3, "Uplo", Uplo);                                                       \
    P##symm_(&side, &uplo, row ? &N : &M, row ? &M : &N, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);       \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##syrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,          \
                       const int N, const int K, const T alpha, const T *A, const int lda, const T beta, T *C,  \
                       const int ldc) {                                                                         \
    CB_START("cblas_" #P "syrk");                                                                               \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    CB_DECODE(trans, cb_trans(Trans, row), 3, "Trans", Trans);                                                  \
    P##syrk_(&uplo, &trans, &N, &K, &alpha, A, &lda, &beta, C, &ldc, 1, 1);                                     \
    cb_end();                                                                                                   \
  }                                                                                                             \
  void cblas_##P##syr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans,         \
                        const int N, const int K, const T alpha, const T *A, const int lda, const T *B,         \
                        const int ldb, const T beta, T *C, const int ldc) {                                     \
    CB_START("cblas_" #P "syr2k");                                                                              \
    CB_DECODE(uplo, cb_uplo(Uplo, row), 2, "Uplo", Uplo);                                                       \
    CB_DECODE(trans, cb_trans(Trans, row), 3, "Trans", Trans);                                                  \
    P##syr2k_(&uplo, &trans, &N, &K, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);                           \
    cb_end();                                                                                                   \
  }                                                                                                             \
  CB_TRIANGULAR3(P, T, mm)                                                                                      \
  CB_TRIANGULAR3(P, T, sm)

CB_LEVEL1(s, float)
CB_LEVEL1(d, double)
CB_LEVEL2(s, float)
CB_LEVEL2(d, double)
CB_LEVEL3(s, float)
CB_LEVEL3(d, double)

float cblas_sdsdot(const int N, const float alpha, const float *X, const int incX, const float *Y, const int incY) {
  return sdsdot_(&N, &alpha, X, &incX, Y, &incY);
}
double cblas_dsdot(const int N, const float *X, const int incX, const float *Y, const int incY) {
  return dsdot_(&N, X, &incX, Y, &incY);
}
float cblas_scasum(const int N, const void *X, const int incX) { return scasum_(&N, (const float *)X, &incX); }
float cblas_scnrm2(const int N, const void *X, const int incX) { return scnrm2_(&N, (const float *)X, &incX); }
double cblas_dzasum(const int N, const void *X, const int incX) { return dzasum_(&N, (const double *)X, &incX); }
double cblas_dznrm2(const int N, const void *X, const int incX) { return dznrm2_(&N, (const double *)X, &incX); }
