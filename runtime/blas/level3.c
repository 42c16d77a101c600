/* level3.c: the Fortran BLAS level-3 entry points of libsplblas (issue 26, docs/blas.md).
 *
 * Takes: the reference BLAS's calling convention (arguments by pointer, INTEGER 32-bit, the
 * CHARACTER arguments' hidden lengths last).
 * Gives: the reference's results through stdlib/blas3.spl's exports, which hold all of the
 * arithmetic: the reference's argument checks in its order, reported to xerbla_ with its INFO,
 * its quick returns, and the export of each (side, uplo, trans) case (docs/blas.md). Each routine
 * is written once for both precisions (LEVEL3(P, T, UP)). */
#include <stddef.h>
#include <stdint.h>

#include "blas3.h"
#include "blas_args.h"

/* trmm/trsm: B := alpha op(A) B (side L) applies M = op(A) to B's columns; B := alpha B op(A)
 * (side R) applies M = op(A)' to B's rows. M is A or A' (the export's colmajor or rowmajor
 * view: A' for side L with a transposed A and for side R with a plain one), lower or upper. */
#define TRI3_CASE(fn, left, lower, rowView, ...)                                                                \
  do {                                                                                                          \
    if (left) {                                                                                                 \
      if (lower) BLAS_RUN(rowView ? fn##_llo_row(__VA_ARGS__) : fn##_llo_col(__VA_ARGS__));                     \
      else BLAS_RUN(rowView ? fn##_lup_row(__VA_ARGS__) : fn##_lup_col(__VA_ARGS__));                           \
    } else {                                                                                                    \
      if (lower) BLAS_RUN(rowView ? fn##_rlo_row(__VA_ARGS__) : fn##_rlo_col(__VA_ARGS__));                     \
      else BLAS_RUN(rowView ? fn##_rup_row(__VA_ARGS__) : fn##_rup_col(__VA_ARGS__));                           \
    }                                                                                                           \
  } while (0)

#define TRIANGULAR3(P, T, UP, OP, OPU)                                                                          \
  void P##tr##OP##_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,     \
                    const int *n, const T *alpha, const T *a, const int *lda, T *b, const int *ldb, size_t l1,  \
                    size_t l2, size_t l3, size_t l4) {                                                          \
    (void)l1; (void)l2; (void)l3; (void)l4;                                                                     \
    int info = 0, left = blas_is(side, 'L');                                                                    \
    BLAS_CHECK(!left && !blas_is(side, 'R'), 1); BLAS_CHECK(blas_bad_uplo(uplo), 2);                            \
    BLAS_CHECK(blas_bad_trans(transa), 3); BLAS_CHECK(blas_bad_diag(diag), 4); BLAS_CHECK(*m < 0, 5);           \
    BLAS_CHECK(*n < 0, 6); BLAS_CHECK(*lda < blas_max1(left ? *m : *n), 9); BLAS_CHECK(*ldb < blas_max1(*m), 11); \
    BLAS_REPORT(UP "TR" #OPU " ");                                                                              \
    if (*m == 0 || *n == 0) return;                                                                             \
    int rowView = left == !blas_is(transa, 'N');                                                                \
    int lower = blas_is(uplo, 'L') == !rowView;                                                                 \
    TRI3_CASE(spl_blas_##P##tr##OP, left, lower, rowView, left ? N64(m) : N64(n), left ? N64(n) : N64(m),       \
              blas_is(diag, 'U'), *alpha, a, N64(lda), b, N64(ldb));                                            \
  }

#define LEVEL3(P, T, UP)                                                                                        \
  void P##gemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,               \
                const T *alpha, const T *a, const int *lda, const T *b, const int *ldb, const T *beta, T *c,    \
                const int *ldc, size_t la, size_t lb) {                                                         \
    (void)la; (void)lb;                                                                                         \
    int info = 0, nota = blas_is(transa, 'N'), notb = blas_is(transb, 'N');                                     \
    BLAS_CHECK(blas_bad_trans(transa), 1); BLAS_CHECK(blas_bad_trans(transb), 2); BLAS_CHECK(*m < 0, 3);        \
    BLAS_CHECK(*n < 0, 4); BLAS_CHECK(*k < 0, 5); BLAS_CHECK(*lda < blas_max1(nota ? *m : *k), 8);              \
    BLAS_CHECK(*ldb < blas_max1(notb ? *k : *n), 10); BLAS_CHECK(*ldc < blas_max1(*m), 13);                     \
    BLAS_REPORT(UP "GEMM ");                                                                                    \
    if (*m == 0 || *n == 0 || ((*alpha == 0 || *k == 0) && *beta == 1)) return;                                 \
    int64_t args_m = N64(m), args_n = N64(n), args_k = N64(k);                                                  \
    if (nota && notb)                                                                                           \
      BLAS_RUN(spl_blas_##P##gemm_nn(args_m, args_n, args_k, *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
    else if (nota)                                                                                              \
      BLAS_RUN(spl_blas_##P##gemm_nt(args_m, args_n, args_k, *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
    else if (notb)                                                                                              \
      BLAS_RUN(spl_blas_##P##gemm_tn(args_m, args_n, args_k, *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
    else                                                                                                        \
      BLAS_RUN(spl_blas_##P##gemm_tt(args_m, args_n, args_k, *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
  }                                                                                                             \
  /* The symmetric A read from its lower triangle, or from the upper one transposed. */                         \
  void P##symm_(const char *side, const char *uplo, const int *m, const int *n, const T *alpha, const T *a,     \
                const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc, size_t ls,     \
                size_t lu) {                                                                                    \
    (void)ls; (void)lu;                                                                                         \
    int info = 0, left = blas_is(side, 'L'), low = blas_is(uplo, 'L');                                          \
    BLAS_CHECK(!left && !blas_is(side, 'R'), 1); BLAS_CHECK(blas_bad_uplo(uplo), 2); BLAS_CHECK(*m < 0, 3);     \
    BLAS_CHECK(*n < 0, 4); BLAS_CHECK(*lda < blas_max1(left ? *m : *n), 7); BLAS_CHECK(*ldb < blas_max1(*m), 9); \
    BLAS_CHECK(*ldc < blas_max1(*m), 12);                                                                       \
    BLAS_REPORT(UP "SYMM ");                                                                                    \
    if (*m == 0 || *n == 0 || (*alpha == 0 && *beta == 1)) return;                                              \
    if (left && low) BLAS_RUN(spl_blas_##P##symm_ll(N64(m), N64(n), *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
    else if (left) BLAS_RUN(spl_blas_##P##symm_lu(N64(m), N64(n), *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
    else if (low) BLAS_RUN(spl_blas_##P##symm_rl(N64(m), N64(n), *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
    else BLAS_RUN(spl_blas_##P##symm_ru(N64(m), N64(n), *alpha, a, N64(lda), b, N64(ldb), *beta, c, N64(ldc))); \
  }                                                                                                             \
  void P##syrk_(const char *uplo, const char *trans, const int *n, const int *k, const T *alpha, const T *a,    \
                const int *lda, const T *beta, T *c, const int *ldc, size_t lu, size_t lt) {                    \
    (void)lu; (void)lt;                                                                                         \
    int info = 0, notr = blas_is(trans, 'N');                                                                   \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(blas_bad_trans(trans), 2); BLAS_CHECK(*n < 0, 3);            \
    BLAS_CHECK(*k < 0, 4); BLAS_CHECK(*lda < blas_max1(notr ? *n : *k), 7); BLAS_CHECK(*ldc < blas_max1(*n), 10); \
    BLAS_REPORT(UP "SYRK ");                                                                                    \
    if (*n == 0 || ((*alpha == 0 || *k == 0) && *beta == 1)) return;                                            \
    if (notr) BLAS_RUN(spl_blas_##P##syrk_n(N64(n), N64(k), blas_is(uplo, 'U'), *alpha, a, N64(lda), *beta, c, N64(ldc))); \
    else BLAS_RUN(spl_blas_##P##syrk_t(N64(n), N64(k), blas_is(uplo, 'U'), *alpha, a, N64(lda), *beta, c, N64(ldc))); \
  }                                                                                                             \
  void P##syr2k_(const char *uplo, const char *trans, const int *n, const int *k, const T *alpha, const T *a,   \
                 const int *lda, const T *b, const int *ldb, const T *beta, T *c, const int *ldc, size_t lu,    \
                 size_t lt) {                                                                                   \
    (void)lu; (void)lt;                                                                                         \
    int info = 0, notr = blas_is(trans, 'N');                                                                   \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(blas_bad_trans(trans), 2); BLAS_CHECK(*n < 0, 3);            \
    BLAS_CHECK(*k < 0, 4); BLAS_CHECK(*lda < blas_max1(notr ? *n : *k), 7);                                     \
    BLAS_CHECK(*ldb < blas_max1(notr ? *n : *k), 9); BLAS_CHECK(*ldc < blas_max1(*n), 12);                      \
    BLAS_REPORT(UP "SYR2K");                                                                                    \
    if (*n == 0 || ((*alpha == 0 || *k == 0) && *beta == 1)) return;                                            \
    if (notr)                                                                                                   \
      BLAS_RUN(spl_blas_##P##syr2k_n(N64(n), N64(k), blas_is(uplo, 'U'), *alpha, a, N64(lda), b, N64(ldb), *beta, c, \
                            N64(ldc)));                                                                         \
    else                                                                                                        \
      BLAS_RUN(spl_blas_##P##syr2k_t(N64(n), N64(k), blas_is(uplo, 'U'), *alpha, a, N64(lda), b, N64(ldb), *beta, c, \
                            N64(ldc)));                                                                         \
  }                                                                                                             \
  TRIANGULAR3(P, T, UP, mm, MM)                                                                                 \
  TRIANGULAR3(P, T, UP, sm, SM)

LEVEL3(s, float, "S")
LEVEL3(d, double, "D")
