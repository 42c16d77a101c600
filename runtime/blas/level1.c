/* level1.c: the Fortran BLAS level-1 entry points of libsplblas (issue 26, docs/blas.md).
 *
 * Takes: the reference BLAS's Fortran calling convention as gfortran compiles it (every argument
 * by pointer, INTEGER 32-bit, REAL functions returning float, a trailing underscore).
 * Gives: the same results through stdlib/blas1.spl's exports (spl_blas_*), which hold all of the
 * arithmetic. What is here only decodes: the reference's quick returns (n <= 0; a routine of one
 * vector returns at once when its increment is not positive; rotm with flag -2), and rotg/rotmg's
 * in-out scalars, passed by value and written back through the exports' outputs. Each routine is
 * written once for both precisions (LEVEL1(P, T): P the BLAS's prefix, s or d, T its type), with
 * the two real results of a complex vector (scasum/dzasum, scnrm2/dznrm2: PAIRS(P, C, T)).
 * iamax and axpy pick between exports of one body by the vectors' length and increment: the
 * cached one's 512-bit vectors, or from kStreamFrom elements on the streamed one's 256-bit
 * vectors (stdlib/blas1.spl says why); iamax up to kSmallIamaxUpTo elements with an increment of
 * 1 its short search's export (_small), and with an increment other than 1 its exports below
 * (_strided_short, _strided, _strided_blocks); dnrm2 with an increment other than 1 its squares
 * in order or its blocks' partial sums (below), snrm2 its squares summed in f64 at any length,
 * and dot its four partial sums' export (_strided). */
#include <stdint.h>

#include "blas1.h"
#include "blas_args.h"

/* Elements from which a vector is taken to come from memory rather than the caches (8 MB of f64,
 * beyond any L2 and most of an L3 slice). */
enum { kStreamFrom = 1 << 20 };
/* idamax and isamax with an increment other than 1: below kStridedIamaxCopyFrom elements two
 * passes of four partial maxima (the largest, then its first position) over the strided x
 * (_strided_short), as the copy's own cost, 10-15 ns, takes more than those save (idamax of 64
 * at increment 2: 34 ns against the copy's 39, of 128 64 against 52; 2-core AMD EPYC Zen 5,
 * 2026-12-02); then a contiguous copy first and the unit stride's vector loops (_strided); from
 * kStridedIamaxBlocksFrom_P on no copy, the blocks' export (_strided_blocks): each block's
 * largest in four partial maxima over the strided x, then the search for the first position in
 * the one block holding the largest, where the copy's search reads all of the copy again
 * (2-core AMD EPYC Zen 4, 2026-12-03, increment 2, one process: idamax of 1024 elements 295 ns
 * against the copy's 383 and OpenBLAS's 298-542, of 4096 851 against 1490 and 1140-1386;
 * isamax, whose copy moves half the bytes, 401 against 377 at 1024, 1066 against 1447 at 4096). */
enum { kStridedIamaxCopyFrom = 96, kStridedIamaxBlocksFrom_d = 1024, kStridedIamaxBlocksFrom_s = 2048 };
/* dnrm2 with an increment other than 1: below kStridedDnrm2BlocksFrom elements its squares in
 * order (the reference's bits, as a unit stride's) and its outliers in four partial sums
 * (_strided_short), from there its blocks' sums of squares, four partial sums over the strided x
 * (_strided_blocks; a contiguous copy first ran 1.3-1.6x slower from 64 to 2^16 elements on the
 * Zen 4, increment 2: 1024 elements 241 against 324 ns, OpenBLAS 556). snrm2 sums its squares in
 * f64 at any length (_strided, stdlib/blas1.spl's snrm2InF64). */
enum { kStridedDnrm2BlocksFrom = 64 };
/* Elements up to which idamax and isamax with an increment of 1 take their short search alone
 * (_small, stdlib/blas1.spl's iamaxShort, its vectors' width by the length), past which iamax's
 * blocks. */
enum { kSmallIamaxUpTo = 256 };
/* The export of iamax (prefix P) for n elements at an increment above 1, and at an increment of 1. */
#define iamax_strided_for(P, n)                                                                     \
  ((n) < kStridedIamaxCopyFrom          ? spl_blas_i##P##amax_strided_short                         \
   : (n) < kStridedIamaxBlocksFrom_##P ? spl_blas_i##P##amax_strided                               \
                                        : spl_blas_i##P##amax_strided_blocks)
#define iamax_unit_for(P, n)                                                                        \
  ((n) <= kSmallIamaxUpTo ? spl_blas_i##P##amax_small : (n) < kStreamFrom ? spl_blas_i##P##amax : spl_blas_i##P##amax_stream)
/* The export of nrm2 for n elements at an increment above 1. */
#define snrm2_strided_for(n) spl_blas_snrm2_strided
#define dnrm2_strided_for(n) ((n) < kStridedDnrm2BlocksFrom ? spl_blas_dnrm2_strided_short : spl_blas_dnrm2_strided_blocks)

#define LEVEL1(P, T)                                                                                    \
  void P##rotg_(T *a, T *b, T *c, T *s) { BLAS_RUN(spl_blas_##P##rotg(*a, *b, a, b, c, s)); }           \
                                                                                                        \
  void P##rotmg_(T *d1, T *d2, T *x1, const T *y1, T *p) {                                              \
    BLAS_RUN(spl_blas_##P##rotmg(*d1, *d2, *x1, *y1, p[0], p[1], p[2], p[3], p[4], d1, d2, x1, &p[0], &p[1], &p[2], \
                        &p[3], &p[4]));                                                                 \
  }                                                                                                     \
                                                                                                        \
  /* Two vectors: a negative increment walks its vector from the far end. */                            \
  void P##rot_(const int *n, T *x, const int *incx, T *y, const int *incy, const T *c, const T *s) {    \
    if (*n > 0) BLAS_RUN(spl_blas_##P##rot(N64(n), x, N64(incx), y, N64(incy), *c, *s));                \
  }                                                                                                     \
  void P##rotm_(const int *n, T *x, const int *incx, T *y, const int *incy, const T *p) {               \
    if (*n > 0 && p[0] != (T)-2) BLAS_RUN(spl_blas_##P##rotm(N64(n), x, N64(incx), y, N64(incy), p[0], p[1], p[2], p[3], p[4])); \
  }                                                                                                     \
  void P##swap_(const int *n, T *x, const int *incx, T *y, const int *incy) {                           \
    if (*n > 0) BLAS_RUN(spl_blas_##P##swap(N64(n), x, N64(incx), y, N64(incy)));                       \
  }                                                                                                     \
  void P##copy_(const int *n, const T *x, const int *incx, T *y, const int *incy) {                     \
    if (*n > 0) BLAS_RUN(spl_blas_##P##copy(N64(n), x, N64(incx), y, N64(incy)));                       \
  }                                                                                                     \
  void P##axpy_(const int *n, const T *alpha, const T *x, const int *incx, T *y, const int *incy) {     \
    if (*n >= kStreamFrom) BLAS_RUN(spl_blas_##P##axpy_stream(N64(n), *alpha, x, N64(incx), y, N64(incy))); \
    else if (*n > 0) BLAS_RUN(spl_blas_##P##axpy(N64(n), *alpha, x, N64(incx), y, N64(incy)));          \
  }                                                                                                     \
  T P##dot_(const int *n, const T *x, const int *incx, const T *y, const int *incy) {                   \
    T r = 0;                                                                                            \
    if (*n > 0 && (*incx != 1 || *incy != 1))                                                           \
      BLAS_RUN(spl_blas_##P##dot_strided(N64(n), x, N64(incx), y, N64(incy), &r));                      \
    else if (*n > 0) BLAS_RUN(spl_blas_##P##dot(N64(n), x, N64(incx), y, N64(incy), &r));               \
    return r;                                                                                           \
  }                                                                                                     \
                                                                                                        \
  /* One vector: nothing to do (0 returned) unless the increment is positive. */                        \
  void P##scal_(const int *n, const T *alpha, T *x, const int *incx) {                                  \
    if (*n > 0 && *incx > 0) BLAS_RUN(spl_blas_##P##scal(N64(n), *alpha, x, N64(incx)));                \
  }                                                                                                     \
  T P##nrm2_(const int *n, const T *x, const int *incx) {                                               \
    T r = 0;                                                                                            \
    if (*incx > 1 && *n > 0) BLAS_RUN(P##nrm2_strided_for(*n)(N64(n), x, N64(incx), &r));              \
    else if (*n > 0 && *incx > 0) BLAS_RUN(spl_blas_##P##nrm2(N64(n), x, N64(incx), &r));               \
    return r;                                                                                           \
  }                                                                                                     \
  T P##asum_(const int *n, const T *x, const int *incx) {                                               \
    T r = 0;                                                                                            \
    if (*n > 0 && *incx > 0) BLAS_RUN(spl_blas_##P##asum(N64(n), x, N64(incx), &r));                    \
    return r;                                                                                           \
  }                                                                                                     \
  int i##P##amax_(const int *n, const T *x, const int *incx) {                                          \
    int32_t r = 0;                                                                                      \
    if (*n > 0 && *incx > 1) BLAS_RUN(iamax_strided_for(P, *n)(N64(n), x, N64(incx), &r));               \
    else if (*n > 0 && *incx > 0) BLAS_RUN(iamax_unit_for(P, *n)(N64(n), x, N64(incx), &r));            \
    return r;                                                                                           \
  }

LEVEL1(s, float)
LEVEL1(d, double)

/* A complex vector is n (re, im) pairs, incx pairs apart: the exports read it as an n x 2
 * row-major matrix whose rows are 2 incx reals apart. */
#define PAIRS(P, C, T)                                                                                  \
  T P##C##asum_(const int *n, const T *x, const int *incx) {                                            \
    T r = 0;                                                                                            \
    if (*n > 0 && *incx > 0) BLAS_RUN(spl_blas_##P##C##asum(N64(n), x, 2 * N64(incx), &r));             \
    return r;                                                                                           \
  }                                                                                                     \
  T P##C##nrm2_(const int *n, const T *x, const int *incx) {                                            \
    T r = 0;                                                                                            \
    if (*n > 0 && *incx > 0) BLAS_RUN(spl_blas_##P##C##nrm2(N64(n), x, 2 * N64(incx), &r));             \
    return r;                                                                                           \
  }

PAIRS(s, c, float)
PAIRS(d, z, double)

/* The f32 dot products accumulated in f64. */
double dsdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy) {
  double r = 0.0;
  if (*n > 0) BLAS_RUN(spl_blas_dsdot(N64(n), x, N64(incx), y, N64(incy), &r));
  return r;
}
float sdsdot_(const int *n, const float *sb, const float *x, const int *incx, const float *y, const int *incy) {
  float r = *sb;
  if (*n > 0) BLAS_RUN(spl_blas_sdsdot(N64(n), *sb, x, N64(incx), y, N64(incy), &r));
  return r;
}
