/* level3.c: the Fortran BLAS level-3 entry points of libsplblas (issue 26, docs/blas.md).
 *
 * Takes: the reference BLAS's calling convention (arguments by pointer, INTEGER 32-bit, the
 * CHARACTER arguments' hidden lengths last).
 * Gives: the reference's results through stdlib/blas3.spl's exports, which hold all of the
 * arithmetic: the reference's argument checks in its order, reported to xerbla_ with its INFO,
 * its quick returns, and the export of each (side, uplo, trans) case (docs/blas.md); trsm and
 * trmm on a triangle of kTriangleBlocked steps or more by blocks, each an export's call (no
 * arithmetic on the elements here). Each routine is written once for both precisions
 * (LEVEL3(P, T, UP)). */
#include <stddef.h>
#include <stdint.h>

#include "blas3.h"
#include "blas_args.h"

/* trmm/trsm: B := alpha op(A) B (side L) applies M = op(A) to B's columns; B := alpha B op(A)
 * (side R) applies M = op(A)' to B's rows. M is A or A' (the export's colmajor or rowmajor
 * view: A' for side L with a transposed A and for side R with a plain one), lower or upper. */
#define TRI3_EXPORT(fn, left, lower, rowView)                                                                  \
  ((left) ? ((lower) ? ((rowView) ? fn##_llo_row : fn##_llo_col) : ((rowView) ? fn##_lup_row : fn##_lup_col))   \
          : ((lower) ? ((rowView) ? fn##_rlo_row : fn##_rlo_col) : ((rowView) ? fn##_rup_row : fn##_rup_col)))

/* trsm and trmm on a large triangle, by blocks of kTriangleBlock steps (LAPACK's and GotoBLAS's
 * blocked sweeps): the diagonal block's export (above) on its kTriangleBlock elements of every
 * vector, and gemm's export for the rest, V[R] := s M[R, K] V[K] + beta V[R], R the steps after
 * block K where M is lower, before it where M is upper (tri3_update). A solve (M V = alpha V;
 * forward where M is lower, backward where upper) takes block K's solution first, then subtracts
 * M[R, K] V[K] from the elements still to solve, scaling those by alpha in the first block's
 * update (beta). A product (V := alpha M V) runs the other way, so that V[K] is still the old one
 * when block K adds alpha M[R, K] V[K] to the blocks already multiplied, and then multiplies
 * block K. The unblocked exports stream the whole triangle for each group of 60 vectors: dtrsm
 * L L N 2000 on two threads of a 2-core Zen 3 ran at 0.48x OpenBLAS, its two threads sharing
 * the L3's bandwidth for it; gemm reads a block of M once per block of C. The sums run in another
 * order than the unblocked exports' (within the reference's and LAPACK's thresholds, blas/Level3's
 * large shapes), the same on every thread count. alpha = 0 stays with the unblocked export, which
 * writes zeros without reading A. Paired against the unblocked exports (2-core Zen 3, AVX2, one /
 * two threads), 2000: dtrsm LLN 1.05x / 1.16x as fast, RLN 1.18x / 0.97x, dtrmm RUT 1.52x /
 * 1.34x (a product gathering block K's rows from the rest, K ascending, ran 0.79x on two threads:
 * on the right side gemm's C was then block K's 256 columns, one thread's part). At 1000 the
 * blocks lost on two threads (RLN 0.87x, trmm RUT 0.80x) until gemm's blocks of A fit that CPU's
 * L2 (stdlib/blas3.spl's F64_BLOCK_DEPTH); since, against blocks from 1024 steps: one thread
 * 1.16-1.26x, two LLN 1.33-1.74x, RLN 1.00-1.04x, trmm RUT 0.91-1.37x (a noisy hour), and blocks
 * of 128 steps no faster: blocks of 256 from 512 steps.
 * trmm's right side (B's rows the vectors, lda apart) by blocks of kTrmmRightBlock steps from
 * kTrmmRightBlocked up to kTriangleBlocked: its unblocked exports ran dtrmm R at 0.47-0.74x
 * OpenBLAS's speed at 200-500 steps on the 2-core Zen 5 (2026-12-02, one thread; the left side
 * and trsm at 0.9-1.5x), where gemm takes most of the work in blocks. Paired in one process (a C
 * harness running the blocked sweep over the exports, each block size in turn, R U N and R U T):
 * blocks of 64 at 200-500 steps 1.2-1.7x faster than the unblocked export on one thread (dtrmm
 * 0.60-1.06x OpenBLAS's speed), strmm 1.2-1.5x; on two threads as fast in the geometric mean of
 * 256-511 steps (0.67-1.42x: the unblocked export's speed there swings with how its groups of
 * vectors fall to the threads, 0.45x OpenBLAS's at 448 and 0.85x at 511). blas_bench, dtrmm R U
 * T 300 against the build before, both orders: 1.23-1.26x on one thread (0.52x -> 0.94x
 * OpenBLAS's speed), 0.72-0.86x on two. The choice depends on the size alone, so a shape's bits
 * do not depend on the threads. Blocks of 32 to 128 came within 10% of 64 at 400-500 and fell
 * behind at 300; from 512 steps blocks of 64 gained on one thread (1.07x at 1000) and lost on
 * two (0.92x): 256 there. */
enum { kTriangleBlock = 256, kTriangleBlocked = 512, kTrmmRightBlock = 64, kTrmmRightBlocked = 256 };

/* V[I0, I0 + ni) := alpha M[I, J] V[J0, J0 + nj) + beta V[I], the vectors V being B's columns
 * (side L: V's step i is B's row i) or B's rows (side R: B's column i), M[i][j] = A(i, j) in the
 * column-major view and A(j, i) in the row-major one. Side L: gemm on B's rows, M[I, J] the first
 * operand (transposed where row-major); side R: V[I]' = alpha V[J]' M[I, J]' + beta V[I]', gemm
 * on B's columns with M[I, J]' the second operand. */
#define TRI3_UPDATE(P, T)                                                                                       \
  static int P##tri3_update(int left, int rowView, int64_t i0, int64_t ni, int64_t j0, int64_t nj, int64_t q,    \
                            T alpha, const T *a, int64_t lda, T beta, T *b, int64_t ldb) {                       \
    const T *mij = rowView ? a + j0 + i0 * lda : a + i0 + j0 * lda;                                              \
    if (left)                                                                                                    \
      return (rowView ? spl_blas_##P##gemm_tn : spl_blas_##P##gemm_nn)(ni, q, nj, alpha, mij, lda, b + j0, ldb,  \
                                                                        beta, b + i0, ldb);                     \
    return (rowView ? spl_blas_##P##gemm_nn : spl_blas_##P##gemm_nt)(q, ni, nj, alpha, b + j0 * ldb, ldb, mij,   \
                                                                      lda, beta, b + i0 * ldb, ldb);             \
  }

/* The blocked sweeps of trsm (solve) and trmm over p steps and q vectors; `diagonal` is the
 * unblocked export of the case, run on a block of steps (M and V taken at the block). */
#define TRI3_BLOCKED(P, T)                                                                                      \
  TRI3_UPDATE(P, T)                                                                                             \
  typedef int (*P##tri3_export)(int64_t, int64_t, bool, T, const T *, int64_t, T *, int64_t);                 \
  static int P##tri3_blocked(P##tri3_export diagonal, int solve, int left, int lower, int rowView, int64_t p,   \
                             int64_t q, int64_t block, int unit, T alpha, const T *a, int64_t lda, T *b,         \
                             int64_t ldb) {                                                                     \
    const int64_t blocks = (p + block - 1) / block, vectorStride = left ? 1 : ldb;                              \
    int status = 0;                                                                                             \
    for (int64_t t = 0; t < blocks && status == 0; ++t) {                                                       \
      const int64_t k0 = ((lower == solve) ? t : blocks - 1 - t) * block;                                       \
      const int64_t nk = p - k0 < block ? p - k0 : block;                                                       \
      const int64_t r0 = lower ? k0 + nk : 0, nr = lower ? p - k0 - nk : k0;                                     \
      const T *mkk = a + k0 + k0 * lda;                                                                         \
      T *vk = b + k0 * vectorStride;                                                                            \
      if (solve) {                                                                                              \
        const T scale = t == 0 ? alpha : (T)1;                                                                  \
        status = diagonal(nk, q, unit, scale, mkk, lda, vk, ldb);                                               \
        if (status == 0 && nr > 0) status = P##tri3_update(left, rowView, r0, nr, k0, nk, q, (T)-1, a, lda, scale, b, ldb); \
      } else {                                                                                                  \
        if (nr > 0) status = P##tri3_update(left, rowView, r0, nr, k0, nk, q, alpha, a, lda, (T)1, b, ldb);      \
        if (status == 0) status = diagonal(nk, q, unit, alpha, mkk, lda, vk, ldb);                              \
      }                                                                                                         \
    }                                                                                                           \
    return status;                                                                                              \
  }

#define TRIANGULAR3(P, T, UP, OP, OPU, SOLVE)                                                                   \
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
    P##tri3_export run = TRI3_EXPORT(spl_blas_##P##tr##OP, left, lower, rowView);                               \
    const int64_t p = left ? N64(m) : N64(n), q = left ? N64(n) : N64(m);                                      \
    const int rightProduct = !SOLVE && !left;                                                                   \
    if (p >= (rightProduct ? kTrmmRightBlocked : kTriangleBlocked) && *alpha != 0)                              \
      BLAS_RUN(P##tri3_blocked(run, SOLVE, left, lower, rowView, p, q,                                          \
                               rightProduct && p < kTriangleBlocked ? kTrmmRightBlock : kTriangleBlock,         \
                               blas_is(diag, 'U'), *alpha, a, N64(lda), b, N64(ldb)));                          \
    else                                                                                                        \
      BLAS_RUN(run(p, q, blas_is(diag, 'U'), *alpha, a, N64(lda), b, N64(ldb)));                               \
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
  TRI3_BLOCKED(P, T)                                                                                            \
  TRIANGULAR3(P, T, UP, mm, MM, 0)                                                                              \
  TRIANGULAR3(P, T, UP, sm, SM, 1)

LEVEL3(s, float, "S")
LEVEL3(d, double, "D")
