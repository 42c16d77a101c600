/* level2.c: the Fortran BLAS level-2 entry points of libsplblas (issue 26, docs/blas.md).
 *
 * Takes: the reference BLAS's calling convention (arguments by pointer, INTEGER 32-bit, the
 * CHARACTER arguments' hidden lengths last).
 * Gives: the reference's results through stdlib/blas2.spl's exports, which hold all of the
 * arithmetic. Here: the reference's argument checks in its order, reported to xerbla_ with the
 * reference's INFO (the position of the first wrong argument), its quick returns, and the choice
 * of the export for (uplo, trans, diag): a transposed triangle is the export over the other case
 * (docs/blas.md), and among exports of one body by the call's size and threads (gemv N, trmv and
 * tpmv L N, the band sweeps: blocks of rows that give each thread some, or parts of columns;
 * where the threads choose, an element's operations run in the same order in each export, so the
 * bits do not depend on them; sgemv N also by lda), and trsv and tpsv U T on a large triangle by
 * blocks, each block two exports' calls (gemv's and the case's own). Each routine is written once
 * for both precisions (LEVEL2(P, T)). */
#include <stddef.h>
#include <stdint.h>

#include "blas2.h"
#include "blas_args.h"
#include "spl_runtime.h"

/* gemv N's sweep takes blocks of kGemvBlockRows rows; from kGemvSmallBlockRows + 1 rows to one
 * such block, on more than one thread, the export of blocks of kGemvSmallBlockRows instead, so
 * that each thread has some; past one such block, on one thread, the export of blocks of
 * 4096 rows (longer runs down each column; stdlib/blas2.spl). Up to one block of rows and from
 * kGemvPartsWork elements, on every thread count, the export whose threads share the columns
 * (_parts: its sums grouped by parts of columns, so one export for a shape whatever the
 * threads, and the same bits on each; kGemvPartsWork is at least poly::minPrivateWork on every
 * CPU, 900,000 with 512-bit vectors, so that its parts do run on threads). */
enum { kGemvBlockRows = 2048, kGemvSmallBlockRows = 256 };
static const int64_t kGemvPartsWork = 1000000;
/* The export of gemv N's blocks of kGemvBlockRows for m rows: sgemv's sweeps sixteen columns at a
 * time with 32 vector registers, eight up to one block (_short, below kGemvPartsWork elements
 * there, so A in the caches), as its _small export does, so that a shape gets one column count
 * (and one rounding) on every thread count; dgemv eight everywhere (stdlib/blas2.spl). */
#define sgemv_n_for(m, lda) ((m) <= kGemvBlockRows || sgemv_columns_alias(lda) ? spl_blas_sgemv_n_short : spl_blas_sgemv_n)
#define dgemv_n_for(m, lda) spl_blas_dgemv_n
/* sgemv's sweeps of sixteen columns (SGEMV_COLUMNS) keep seventeen streams in flight (the columns
 * and the sums); where the columns lie a multiple of 4 KB apart, give or take under two lines
 * (lda a multiple of 1024, as n = 1024, 2048, 3072, 4096, or one more), all sixteen fall in one
 * set of the L1 (64 sets of 12 ways on Zen 5) and evict each other's lines. There the sweeps of
 * eight columns (_short, _large_narrow, _parts_narrow). 2-core AMD EPYC Zen 5, 2026-12-02, one
 * thread, each export called in turn in one process: sgemv N 1024 0.57-0.65x OpenBLAS's speed
 * with sixteen, 1.03-1.10x with eight; 2048 0.48-0.50x / 0.82-0.99x, 2049 0.56-0.66x / 0.97-1.07x,
 * 3072 0.67-0.71x / 0.97-0.99x, 4096 0.46-0.54x / 0.69-0.83x, 4097 0.67-0.71x / 0.88-0.93x;
 * columns 64 bytes further apart (1040, 2064) still 0.84-0.90x with sixteen, 128 (2080)
 * 1.02x. The choice depends on lda alone (a shape), so not on the threads. */
static int sgemv_columns_alias(int64_t lda) {
  const int64_t apart = (lda * (int64_t)sizeof(float)) % 4096;
  return apart < 128 || 4096 - apart < 128;
}
#define sgemv_n_large_for(lda) (sgemv_columns_alias(lda) ? spl_blas_sgemv_n_large_narrow : spl_blas_sgemv_n_large)
#define dgemv_n_large_for(lda) spl_blas_dgemv_n_large
#define sgemv_n_parts_for(lda) (sgemv_columns_alias(lda) ? spl_blas_sgemv_n_parts_narrow : spl_blas_sgemv_n_parts)
#define dgemv_n_parts_for(lda) spl_blas_dgemv_n_parts

/* gemv N's export for an m x n call (the choice above; Fortran's gemv N and trsv's blocks). */
#define GEMV_N_RUN(P, T)                                                                                        \
  static int P##gemv_n_run(int64_t m, int64_t n, T alpha, const T *a, int64_t lda, const T *x, int64_t incx,    \
                           T beta, T *y, int64_t incy) {                                                        \
    if (m <= kGemvBlockRows && m * n >= kGemvPartsWork)                                                         \
      return P##gemv_n_parts_for(lda)(m, n, alpha, a, lda, x, incx, beta, y, incy);                           \
    if (m > kGemvSmallBlockRows && m <= kGemvBlockRows && spl_num_threads() > 1)                                \
      return spl_blas_##P##gemv_n_small(m, n, alpha, a, lda, x, incx, beta, y, incy);                           \
    if (m > kGemvBlockRows && spl_num_threads() == 1)                                                           \
      return P##gemv_n_large_for(lda)(m, n, alpha, a, lda, x, incx, beta, y, incy);                           \
    return P##gemv_n_for(m, lda)(m, n, alpha, a, lda, x, incx, beta, y, incy);                                  \
  }
GEMV_N_RUN(s, float)
GEMV_N_RUN(d, double)

/* ger from kGerStreamFrom elements of A (8 MB of f64, as level 1's kStreamFrom): the export whose
 * columns run in 256-bit vectors, which read x on fewer lines' edges from memory; below it, A
 * in the caches, 512-bit ones (stdlib/blas2.spl). Each element's update is the same either way. */
static const int64_t kGerStreamFrom = (int64_t)1 << 20;

/* Triangular x := op(A) x or op(A)^-1 x: the export of the case (lower: (L, N) and (U, T)), each
 * of the four (uplo, trans) cases named apart. */
#define TRI_CASE(ln, un, lt, ut, lower, notrans, ...)                                                           \
  do {                                                                                                          \
    if (lower) {                                                                                                \
      BLAS_RUN(notrans ? ln(__VA_ARGS__) : lt(__VA_ARGS__));                                                    \
    } else {                                                                                                    \
      BLAS_RUN(notrans ? un(__VA_ARGS__) : ut(__VA_ARGS__));                                                    \
    }                                                                                                           \
  } while (0)

/* The (L, N) export of trmv and tpmv (full and packed storage) for n: dtrmv and dtpmv sweep blocks
 * of kTrmvBlockRows rows, one of which a thread runs; from kTrmvSmallBlockRows + 1 rows to one
 * such block, on more than one thread, the export of blocks of kTrmvSmallBlockRows instead (the
 * blocks do not change a row's sum, which runs over the columns in order either way). strmv U N
 * past two such blocks: the export whose threads share eight parts of the columns (_parts: the
 * sums grouped by parts, the same on every thread count; stdlib/blas2.spl); strmv L N and stpmv
 * L N take their loops for that many rows from their own schedules' specialize (eight parts;
 * sixteen columns at a time). Chosen by n alone. */
enum { kTrmvBlockRows = 1024, kTrmvSmallBlockRows = 256 };
static int small_triangle(int n) { return n > kTrmvSmallBlockRows && n <= kTrmvBlockRows && spl_num_threads() > 1; }
#define strmv_ln_for(n) spl_blas_strmv_ln
#define stpmv_ln_for(n) spl_blas_stpmv_ln
#define dtrmv_ln_for(n) (small_triangle(n) ? spl_blas_dtrmv_ln_small : spl_blas_dtrmv_ln)
#define dtpmv_ln_for(n) (small_triangle(n) ? spl_blas_dtpmv_ln_small : spl_blas_dtpmv_ln)
/* The (U, N) export of trmv and tpmv: blocks of kTrmvBlockRows rows on one thread; on more, from
 * kTrmvSmallBlockRows + 1 rows at every size, blocks of kTrmvSmallBlockRows (_small): the upper
 * triangle's work lies in its first blocks, which left one thread most of it (stdlib/blas2.spl). */
static int upper_on_threads(int n) { return n > kTrmvSmallBlockRows && spl_num_threads() > 1; }
#define strmv_un_for(n)                                                                                         \
  ((n) > 2 * kTrmvBlockRows ? spl_blas_strmv_un_parts : upper_on_threads(n) ? spl_blas_strmv_un_small : spl_blas_strmv_un)
#define stpmv_un_for(n) (upper_on_threads(n) ? spl_blas_stpmv_un_small : spl_blas_stpmv_un)
#define dtrmv_un_for(n) (upper_on_threads(n) ? spl_blas_dtrmv_un_small : spl_blas_dtrmv_un)
#define dtpmv_un_for(n) (upper_on_threads(n) ? spl_blas_dtpmv_un_small : spl_blas_dtpmv_un)
#define stpsv_un_for(n) spl_blas_stpsv_un
#define dtpsv_un_for(n) spl_blas_dtpsv_un
#define stpsv_ln_for(n) spl_blas_stpsv_ln
#define dtpsv_ln_for(n) spl_blas_dtpsv_ln

/* trsv by blocks of kTrsvBlock steps, each of two exports' calls (LAPACK's and OpenBLAS's blocked
 * sweeps; no arithmetic here). The transposed cases (U, T) and (L, T), whose exports solve over
 * the row-major view (a row of op(A) a stored column, contiguous), from kTrsvRowsBlocked steps,
 * left-looking: for each block K of x in the solve's order, gemv T's export subtracts the block's
 * rows' products with the part S of x already solved, x[K] -= M[K, S] x[S] (eight rows' dot
 * products at a time), then the case's export solves the diagonal block. Their unblocked export
 * takes one row's dot product at a time, each waiting for the x_i before it: from the memory,
 * dtrsv U T 4000 ran 0.70-0.74x OpenBLAS's speed (one thread), L T 0.63-0.70x, strsv 0.66-0.84x,
 * and on two threads gemv T shares a block's rows. Paired in one process (a C harness calling
 * the exports, 2-core AMD EPYC Zen 5, 2026-12-02), blocked against unblocked: f64 4000 1.6-1.8x
 * faster on one thread, 2.2-2.8x on two, 3000 1.3-1.6x / 2.2-2.9x, 1500 0.95-1.1x / 1.2-1.3x,
 * 1000 0.90-0.97x / 1.1-1.3x (still 1.07-1.24x OpenBLAS's speed there on one thread), 400
 * 0.7-0.9x (not taken); f32 the same way. Blocks of 128 and 512 came within 10% of 256.
 * strsv's plain cases (L, N) and (U, N) past kTrsvColumnsBlocked steps, right-looking: the
 * case's export solves block K, then gemv N's export (gemv_n_run) subtracts M[R, K] x[K] from the
 * rest R still to solve (after K where lower, before it where upper). Their unblocked export
 * sweeps the later rows eight steps at a time (cin/Schedule.cpp's rightLookingRecurrence), which
 * from the memory ran strsv L N and U N 4000 at 0.75-0.88x OpenBLAS's speed. Paired against it
 * in one process (the library before, 2026-12-02): 4000 1.13-1.29x faster on one and two threads
 * (0.90-1.00x OpenBLAS's speed), 2600 1.04-1.09x, 2049 0.72x on two threads (not taken); where
 * sgemv's columns alias (sgemv_columns_alias: 3072, 4096) 0.86-1.06x, so the unblocked export
 * there. dtrsv N keeps its unblocked export (1.31x OpenBLAS's speed at 4000, blocked 1.17-1.22x
 * on one thread).
 * The sums are grouped by blocks, which n alone chooses: a shape's bits do not depend on the
 * threads. */
enum { kTrsvBlock = 256, kTrsvRowsBlocked = 1024, kTrsvColumnsBlocked = 2560 };
/* Elements [first, first + len) of the n of x (Fortran's increment: a negative one stores x
 * backwards from x's pointer), as a vector of their own with the same increment. */
#define BLAS_SUBVECTOR(x, n, inc, first, len) ((inc) > 0 ? (x) + (first) * (inc) : (x) + ((n) - (first) - (len)) * -(inc))
/* op(A) lower (forward) or upper (backward); rowView: the transposed cases (left-looking). */
#define TRSV_BLOCKED(P, T)                                                                                      \
  static int P##trsv_blocked(int lower, int rowView, int64_t n, bool unit, const T *a, int64_t lda, T *x,        \
                             int64_t incx) {                                                                    \
    const int64_t blocks = (n + kTrsvBlock - 1) / kTrsvBlock;                                                   \
    int status = 0;                                                                                             \
    for (int64_t t = 0; t < blocks && status == 0; ++t) {                                                       \
      const int64_t k0 = (lower ? t : blocks - 1 - t) * kTrsvBlock;                                             \
      const int64_t nk = n - k0 < kTrsvBlock ? n - k0 : kTrsvBlock;                                             \
      const T *akk = a + k0 + k0 * lda;                                                                         \
      T *xk = BLAS_SUBVECTOR(x, n, incx, k0, nk);                                                               \
      if (rowView) {                                                                                            \
        const int64_t s0 = lower ? 0 : k0 + nk, ns = lower ? k0 : n - k0 - nk;                                 \
        if (ns > 0)                                                                                             \
          status = spl_blas_##P##gemv_t(nk, ns, (T)-1, a + s0 + k0 * lda, lda, BLAS_SUBVECTOR(x, n, incx, s0, ns), \
                                        incx, (T)1, xk, incx);                                                  \
        if (status == 0) status = (lower ? spl_blas_##P##trsv_ut : spl_blas_##P##trsv_lt)(nk, unit, akk, lda, xk, incx); \
      } else {                                                                                                  \
        const int64_t r0 = lower ? k0 + nk : 0, nr = lower ? n - k0 - nk : k0;                                  \
        status = (lower ? spl_blas_##P##trsv_ln : spl_blas_##P##trsv_un)(nk, unit, akk, lda, xk, incx);         \
        if (status == 0 && nr > 0)                                                                              \
          status = P##gemv_n_run(nr, nk, (T)-1, a + r0 + k0 * lda, lda, xk, incx, (T)1,                         \
                                 BLAS_SUBVECTOR(x, n, incx, r0, nr), incx);                                     \
      }                                                                                                         \
    }                                                                                                           \
    return status;                                                                                              \
  }                                                                                                             \
  static int P##trsv_ut_by_blocks(int64_t n, bool unit, const T *a, int64_t lda, T *x, int64_t incx) {         \
    return P##trsv_blocked(1, 1, n, unit, a, lda, x, incx);                                                     \
  }                                                                                                             \
  static int P##trsv_lt_by_blocks(int64_t n, bool unit, const T *a, int64_t lda, T *x, int64_t incx) {         \
    return P##trsv_blocked(0, 1, n, unit, a, lda, x, incx);                                                     \
  }
/* tpsv U T the same way, left-looking from kTpsvRowsBlocked steps: a row of op(A) is a stored
 * column of the packed upper triangle, so the rows above a block are not lda apart but each a
 * column longer than the one before; their exports read the block's columns as rows
 * (stdlib/blas2.spl's packedColumnsFrom, from the block's first column, k0 (k0 + 1) / 2 elements
 * into ap): _rows the part above the block (eight rows' dot products at a time, as gemv T), _block
 * the block's own triangle. The unblocked export ran dtpsv U T 4000 at 0.71-0.91x OpenBLAS's
 * speed, stpsv 0.74-0.89x. Paired against it in one process (2-core AMD EPYC Zen 5, 2026-12-02,
 * one / two threads): dtpsv 4000 1.25x / 1.73x faster, 3000 1.35x / 1.53x, stpsv 4000 1.03x /
 * 1.53x, 3000 0.94x / 1.04x; at 1024-2000 0.57-1.00x as fast (so not below 2560 steps). */
enum { kTpsvRowsBlocked = 2560 };
#define TPSV_UT_BLOCKED(P, T)                                                                                   \
  static int P##tpsv_ut_by_blocks(int64_t n, bool unit, const T *ap, T *x, int64_t incx) {                      \
    int status = 0;                                                                                             \
    for (int64_t k0 = 0; k0 < n && status == 0; k0 += kTrsvBlock) {                                             \
      const int64_t nk = n - k0 < kTrsvBlock ? n - k0 : kTrsvBlock;                                             \
      const T *columns = ap + k0 * (k0 + 1) / 2;                                                                \
      T *xk = BLAS_SUBVECTOR(x, n, incx, k0, nk);                                                               \
      if (k0 > 0)                                                                                               \
        status = spl_blas_##P##tpsv_ut_rows(nk, k0, (T)-1, columns, BLAS_SUBVECTOR(x, n, incx, 0, k0), incx, (T)1, \
                                            xk, incx);                                                          \
      if (status == 0) status = spl_blas_##P##tpsv_ut_block(nk, k0, unit, columns, xk, incx);                   \
    }                                                                                                           \
    return status;                                                                                              \
  }
TRSV_BLOCKED(s, float)
TRSV_BLOCKED(d, double)
TPSV_UT_BLOCKED(s, float)
TPSV_UT_BLOCKED(d, double)
#define stpsv_ut_for(n) ((n) > kTpsvRowsBlocked ? stpsv_ut_by_blocks : spl_blas_stpsv_ut)
#define dtpsv_ut_for(n) ((n) > kTpsvRowsBlocked ? dtpsv_ut_by_blocks : spl_blas_dtpsv_ut)
#define stpmv_ut_for(n) spl_blas_stpmv_ut
#define dtpmv_ut_for(n) spl_blas_dtpmv_ut
static int strsv_ln_by_blocks(int64_t n, bool unit, const float *a, int64_t lda, float *x, int64_t incx) {
  if (sgemv_columns_alias(lda)) return spl_blas_strsv_ln(n, unit, a, lda, x, incx);
  return strsv_blocked(1, 0, n, unit, a, lda, x, incx);
}
static int strsv_un_by_blocks(int64_t n, bool unit, const float *a, int64_t lda, float *x, int64_t incx) {
  if (sgemv_columns_alias(lda)) return spl_blas_strsv_un(n, unit, a, lda, x, incx);
  return strsv_blocked(0, 0, n, unit, a, lda, x, incx);
}
#define strsv_ut_for(n) ((n) >= kTrsvRowsBlocked ? strsv_ut_by_blocks : spl_blas_strsv_ut)
#define strsv_lt_for(n) ((n) >= kTrsvRowsBlocked ? strsv_lt_by_blocks : spl_blas_strsv_lt)
#define dtrsv_ut_for(n) ((n) >= kTrsvRowsBlocked ? dtrsv_ut_by_blocks : spl_blas_dtrsv_ut)
#define dtrsv_lt_for(n) ((n) >= kTrsvRowsBlocked ? dtrsv_lt_by_blocks : spl_blas_dtrsv_lt)
#define strsv_ln_for(n) ((n) > kTrsvColumnsBlocked ? strsv_ln_by_blocks : spl_blas_strsv_ln)
#define strsv_un_for(n) ((n) > kTrsvColumnsBlocked ? strsv_un_by_blocks : spl_blas_strsv_un)
#define dtrsv_ln_for(n) spl_blas_dtrsv_ln
#define dtrsv_un_for(n) spl_blas_dtrsv_un
#define strmv_ut_for(n) spl_blas_strmv_ut
#define strmv_lt_for(n) spl_blas_strmv_lt
#define dtrmv_ut_for(n) spl_blas_dtrmv_ut
#define dtrmv_lt_for(n) spl_blas_dtrmv_lt

/* The band sweeps by columns (gbmv N, tbmv L N and U N) take blocks of kBandBlockRows rows; up to
 * two such blocks, on more than one thread, the exports of blocks of kBandSmallBlockRows (_small):
 * one or two blocks of 1024 left a thread idle or unevenly loaded (the blocks do not change a
 * row's sum). */
enum { kBandBlockRows = 1024, kBandSmallBlockRows = 256 };
static int small_band(int rows) { return rows <= 2 * kBandBlockRows && spl_num_threads() > 1; }
#define stbmv_ln_for(n) (small_band(n) ? spl_blas_stbmv_ln_small : spl_blas_stbmv_ln)
#define stbmv_un_for(n) (small_band(n) ? spl_blas_stbmv_un_small : spl_blas_stbmv_un)
#define dtbmv_ln_for(n) (small_band(n) ? spl_blas_dtbmv_ln_small : spl_blas_dtbmv_ln)
#define dtbmv_un_for(n) (small_band(n) ? spl_blas_dtbmv_un_small : spl_blas_dtbmv_un)
#define stbsv_ln_for(n) spl_blas_stbsv_ln
#define stbsv_un_for(n) spl_blas_stbsv_un
#define dtbsv_ln_for(n) spl_blas_dtbsv_ln
#define dtbsv_un_for(n) spl_blas_dtbsv_un

#define LEVEL2(P, T, UP)                                                                                        \
  void P##gemv_(const char *trans, const int *m, const int *n, const T *alpha, const T *a, const int *lda,      \
                const T *x, const int *incx, const T *beta, T *y, const int *incy, size_t trans_len) {          \
    (void)trans_len;                                                                                            \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_trans(trans), 1); BLAS_CHECK(*m < 0, 2); BLAS_CHECK(*n < 0, 3); BLAS_CHECK(*lda < blas_max1(*m), 6); \
    BLAS_CHECK(*incx == 0, 8); BLAS_CHECK(*incy == 0, 11);                                                      \
    BLAS_REPORT(UP "GEMV ");                                                                                    \
    if (*m == 0 || *n == 0 || (*alpha == 0 && *beta == 1)) return;                                              \
    if (blas_is(trans, 'N'))                                                                                    \
      BLAS_RUN(P##gemv_n_run(N64(m), N64(n), *alpha, a, N64(lda), x, N64(incx), *beta, y, N64(incy)));         \
    else                                                                                                        \
      BLAS_RUN(spl_blas_##P##gemv_t(N64(n), N64(m), *alpha, a, N64(lda), x, N64(incx), *beta, y, N64(incy)));   \
  }                                                                                                             \
  void P##gbmv_(const char *trans, const int *m, const int *n, const int *kl, const int *ku, const T *alpha,    \
                const T *a, const int *lda, const T *x, const int *incx, const T *beta, T *y, const int *incy,  \
                size_t trans_len) {                                                                             \
    (void)trans_len;                                                                                            \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_trans(trans), 1); BLAS_CHECK(*m < 0, 2); BLAS_CHECK(*n < 0, 3); BLAS_CHECK(*kl < 0, 4); BLAS_CHECK(*ku < 0, 5); \
    BLAS_CHECK(*lda < *kl + *ku + 1, 8); BLAS_CHECK(*incx == 0, 10); BLAS_CHECK(*incy == 0, 13);                \
    BLAS_REPORT(UP "GBMV ");                                                                                    \
    if (*m == 0 || *n == 0 || (*alpha == 0 && *beta == 1)) return;                                              \
    int64_t b = N64(kl) + N64(ku) + 1;                                                                          \
    if (blas_is(trans, 'N'))                                                                                    \
      BLAS_RUN((small_band(*m) ? spl_blas_##P##gbmv_n_small : spl_blas_##P##gbmv_n)(b, N64(n), N64(m), N64(kl), N64(ku), \
                                                                                    *alpha, a, N64(lda), x, N64(incx), \
                                                                                    *beta, y, N64(incy)));       \
    else                                                                                                        \
      BLAS_RUN(spl_blas_##P##gbmv_t(b, N64(n), N64(m), N64(kl), N64(ku), *alpha, a, N64(lda), x, N64(incx), *beta, y, \
                           N64(incy)));                                                                         \
  }                                                                                                             \
  /* Symmetric: the lower triangle as stored, or the upper one read transposed (each export picks its           \
   * loops by n itself: stdlib/blas2.spl's specialize). */                                                      \
  void P##symv_(const char *uplo, const int *n, const T *alpha, const T *a, const int *lda, const T *x,         \
                const int *incx, const T *beta, T *y, const int *incy, size_t uplo_len) {                       \
    (void)uplo_len;                                                                                             \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*lda < blas_max1(*n), 5); BLAS_CHECK(*incx == 0, 7); \
    BLAS_CHECK(*incy == 0, 10);                                                                                 \
    BLAS_REPORT(UP "SYMV ");                                                                                    \
    if (*n == 0 || (*alpha == 0 && *beta == 1)) return;                                                         \
    if (blas_is(uplo, 'L'))                                                                                     \
      BLAS_RUN(spl_blas_##P##symv_l(N64(n), *alpha, a, N64(lda), x, N64(incx), *beta, y, N64(incy)));           \
    else                                                                                                        \
      BLAS_RUN(spl_blas_##P##symv_u(N64(n), *alpha, a, N64(lda), x, N64(incx), *beta, y, N64(incy)));           \
  }                                                                                                             \
  void P##sbmv_(const char *uplo, const int *n, const int *k, const T *alpha, const T *a, const int *lda,       \
                const T *x, const int *incx, const T *beta, T *y, const int *incy, size_t uplo_len) {           \
    (void)uplo_len;                                                                                             \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*k < 0, 3); BLAS_CHECK(*lda < *k + 1, 6); \
    BLAS_CHECK(*incx == 0, 8); BLAS_CHECK(*incy == 0, 11);                                                      \
    BLAS_REPORT(UP "SBMV ");                                                                                    \
    if (*n == 0 || (*alpha == 0 && *beta == 1)) return;                                                         \
    if (blas_is(uplo, 'L'))                                                                                     \
      BLAS_RUN(spl_blas_##P##sbmv_l(N64(k) + 1, N64(n), N64(k), *alpha, a, N64(lda), x, N64(incx), *beta, y, N64(incy))); \
    else                                                                                                        \
      BLAS_RUN(spl_blas_##P##sbmv_u(N64(k) + 1, N64(n), N64(k), *alpha, a, N64(lda), x, N64(incx), *beta, y, N64(incy))); \
  }                                                                                                             \
  void P##spmv_(const char *uplo, const int *n, const T *alpha, const T *ap, const T *x, const int *incx,       \
                const T *beta, T *y, const int *incy, size_t uplo_len) {                                        \
    (void)uplo_len;                                                                                             \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*incx == 0, 6); BLAS_CHECK(*incy == 0, 9); \
    BLAS_REPORT(UP "SPMV ");                                                                                    \
    if (*n == 0 || (*alpha == 0 && *beta == 1)) return;                                                         \
    if (blas_is(uplo, 'L')) BLAS_RUN(spl_blas_##P##spmv_l(N64(n), *alpha, ap, x, N64(incx), *beta, y, N64(incy))); \
    else BLAS_RUN(spl_blas_##P##spmv_u(N64(n), *alpha, ap, x, N64(incx), *beta, y, N64(incy)));                 \
  }                                                                                                             \
  TRIANGULAR(P, T, UP, mv, MV)                                                                                  \
  TRIANGULAR(P, T, UP, sv, SV)                                                                                  \
  void P##ger_(const int *m, const int *n, const T *alpha, const T *x, const int *incx, const T *y,             \
               const int *incy, T *a, const int *lda) {                                                         \
    int info = 0;                                                                                               \
    BLAS_CHECK(*m < 0, 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*incx == 0, 5); BLAS_CHECK(*incy == 0, 7); BLAS_CHECK(*lda < blas_max1(*m), 9); \
    BLAS_REPORT(UP "GER  ");                                                                                    \
    if (*m == 0 || *n == 0 || *alpha == 0) return;                                                              \
    if ((int64_t)*m * *n >= kGerStreamFrom)                                                                     \
      BLAS_RUN(spl_blas_##P##ger_stream(N64(m), N64(n), *alpha, x, N64(incx), y, N64(incy), a, N64(lda)));      \
    else                                                                                                        \
      BLAS_RUN(spl_blas_##P##ger(N64(m), N64(n), *alpha, x, N64(incx), y, N64(incy), a, N64(lda)));             \
  }                                                                                                             \
  void P##syr_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, T *a,               \
               const int *lda, size_t uplo_len) {                                                               \
    (void)uplo_len;                                                                                             \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*incx == 0, 5); BLAS_CHECK(*lda < blas_max1(*n), 7); \
    BLAS_REPORT(UP "SYR  ");                                                                                    \
    if (*n == 0 || *alpha == 0) return;                                                                         \
    BLAS_RUN(spl_blas_##P##syr(N64(n), blas_is(uplo, 'U'), *alpha, x, N64(incx), a, N64(lda)));                 \
  }                                                                                                             \
  void P##spr_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, T *ap,              \
               size_t uplo_len) {                                                                               \
    (void)uplo_len;                                                                                             \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*incx == 0, 5);                       \
    BLAS_REPORT(UP "SPR  ");                                                                                    \
    if (*n == 0 || *alpha == 0) return;                                                                         \
    if (blas_is(uplo, 'U')) BLAS_RUN(spl_blas_##P##spr_u(N64(n), *alpha, x, N64(incx), ap));                    \
    else BLAS_RUN(spl_blas_##P##spr_l(N64(n), *alpha, x, N64(incx), ap));                                       \
  }                                                                                                             \
  void P##syr2_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, const T *y,        \
                const int *incy, T *a, const int *lda, size_t uplo_len) {                                       \
    (void)uplo_len;                                                                                             \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*incx == 0, 5); BLAS_CHECK(*incy == 0, 7); \
    BLAS_CHECK(*lda < blas_max1(*n), 9);                                                                        \
    BLAS_REPORT(UP "SYR2 ");                                                                                    \
    if (*n == 0 || *alpha == 0) return;                                                                         \
    BLAS_RUN(spl_blas_##P##syr2(N64(n), blas_is(uplo, 'U'), *alpha, x, N64(incx), y, N64(incy), a, N64(lda)));  \
  }                                                                                                             \
  void P##spr2_(const char *uplo, const int *n, const T *alpha, const T *x, const int *incx, const T *y,        \
                const int *incy, T *ap, size_t uplo_len) {                                                      \
    (void)uplo_len;                                                                                             \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(*n < 0, 2); BLAS_CHECK(*incx == 0, 5); BLAS_CHECK(*incy == 0, 7); \
    BLAS_REPORT(UP "SPR2 ");                                                                                    \
    if (*n == 0 || *alpha == 0) return;                                                                         \
    if (blas_is(uplo, 'U')) BLAS_RUN(spl_blas_##P##spr2_u(N64(n), *alpha, x, N64(incx), y, N64(incy), ap));     \
    else BLAS_RUN(spl_blas_##P##spr2_l(N64(n), *alpha, x, N64(incx), y, N64(incy), ap));                        \
  }

/* trmv/trsv, tbmv/tbsv, tpmv/tpsv (OP mv or sv): full, band and packed storage. */
#define TRIANGULAR(P, T, UP, OP, OPU)                                                                           \
  void P##tr##OP##_(const char *uplo, const char *trans, const char *diag, const int *n, const T *a,            \
                    const int *lda, T *x, const int *incx, size_t l1, size_t l2, size_t l3) {                   \
    (void)l1; (void)l2; (void)l3;                                                                               \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(blas_bad_trans(trans), 2); BLAS_CHECK(blas_bad_diag(diag), 3); BLAS_CHECK(*n < 0, 4); \
    BLAS_CHECK(*lda < blas_max1(*n), 6); BLAS_CHECK(*incx == 0, 8);                                             \
    BLAS_REPORT(UP "TR" #OPU " ");                                                                              \
    if (*n == 0) return;                                                                                        \
    TRI_CASE(P##tr##OP##_ln_for(*n), P##tr##OP##_un_for(*n), P##tr##OP##_lt_for(*n), P##tr##OP##_ut_for(*n),      \
             blas_is(uplo, 'L'),                                                                                \
             blas_is(trans, 'N'), N64(n), blas_is(diag, 'U'), a, N64(lda), x, N64(incx));                       \
  }                                                                                                             \
  void P##tb##OP##_(const char *uplo, const char *trans, const char *diag, const int *n, const int *k,          \
                    const T *a, const int *lda, T *x, const int *incx, size_t l1, size_t l2, size_t l3) {       \
    (void)l1; (void)l2; (void)l3;                                                                               \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(blas_bad_trans(trans), 2); BLAS_CHECK(blas_bad_diag(diag), 3); BLAS_CHECK(*n < 0, 4); \
    BLAS_CHECK(*k < 0, 5); BLAS_CHECK(*lda < *k + 1, 7); BLAS_CHECK(*incx == 0, 9);                             \
    BLAS_REPORT(UP "TB" #OPU " ");                                                                              \
    if (*n == 0) return;                                                                                        \
    TRI_CASE(P##tb##OP##_ln_for(*n), P##tb##OP##_un_for(*n), spl_blas_##P##tb##OP##_lt, spl_blas_##P##tb##OP##_ut, \
             blas_is(uplo, 'L'),                                                                                \
             blas_is(trans, 'N'), N64(k) + 1, N64(n), N64(k), blas_is(diag, 'U'), a, N64(lda), x, N64(incx));   \
  }                                                                                                             \
  void P##tp##OP##_(const char *uplo, const char *trans, const char *diag, const int *n, const T *ap, T *x,     \
                    const int *incx, size_t l1, size_t l2, size_t l3) {                                         \
    (void)l1; (void)l2; (void)l3;                                                                               \
    int info = 0;                                                                                               \
    BLAS_CHECK(blas_bad_uplo(uplo), 1); BLAS_CHECK(blas_bad_trans(trans), 2); BLAS_CHECK(blas_bad_diag(diag), 3); BLAS_CHECK(*n < 0, 4); \
    BLAS_CHECK(*incx == 0, 7);                                                                                  \
    BLAS_REPORT(UP "TP" #OPU " ");                                                                              \
    if (*n == 0) return;                                                                                        \
    TRI_CASE(P##tp##OP##_ln_for(*n), P##tp##OP##_un_for(*n), spl_blas_##P##tp##OP##_lt, P##tp##OP##_ut_for(*n),  \
             blas_is(uplo, 'L'),                                                                                \
             blas_is(trans, 'N'), N64(n), blas_is(diag, 'U'), ap, x, N64(incx));                                \
  }

LEVEL2(s, float, "S")
LEVEL2(d, double, "D")
