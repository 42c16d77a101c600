/* plain_loops.c: the hand-written baselines of spl-spmv-bench, as a user would write them in C:
 * CSR, ELL (row-major), DIA and BCSR SpMV, serial and OpenMP (`parallel for`, static schedule),
 * and the STREAM triad. Compiled with -O3 -march=native -fopenmp (splc also compiles for the host
 * CPU at -O3), accumulating in the element type like the SPL kernels. */
#include "plain_loops.h"

#include <string.h>

#define CSR_BODY(T)                                                                              \
  T acc = 0;                                                                                     \
  for (int32_t p = offs[i]; p < offs[i + 1]; ++p)                                                \
    acc += vals[p] * x[cols[p]];                                                                 \
  y[i] = acc;

void plain_csr_f64(int64_t n, const int32_t *restrict offs, const int32_t *restrict cols,
                   const double *restrict vals, const double *restrict x, double *restrict y) {
  for (int64_t i = 0; i < n; ++i) {
    CSR_BODY(double)
  }
}

void plain_csr_f64_omp(int64_t n, const int32_t *restrict offs, const int32_t *restrict cols,
                       const double *restrict vals, const double *restrict x, double *restrict y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    CSR_BODY(double)
  }
}

void plain_csr_f32(int64_t n, const int32_t *restrict offs, const int32_t *restrict cols,
                   const float *restrict vals, const float *restrict x, float *restrict y) {
  for (int64_t i = 0; i < n; ++i) {
    CSR_BODY(float)
  }
}

void plain_csr_f32_omp(int64_t n, const int32_t *restrict offs, const int32_t *restrict cols,
                       const float *restrict vals, const float *restrict x, float *restrict y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    CSR_BODY(float)
  }
}

#define ELL_BODY                                                                                 \
  float acc = 0;                                                                                 \
  const float *v = vals + i * w;                                                                 \
  const int32_t *c = cols + i * w;                                                               \
  for (int64_t k = 0; k < w; ++k)                                                                \
    acc += v[k] * x[c[k]];                                                                       \
  y[i] = acc;

void plain_ell_f32(int64_t n, int64_t w, const float *restrict vals, const int32_t *restrict cols,
                   const float *restrict x, float *restrict y) {
  for (int64_t i = 0; i < n; ++i) {
    ELL_BODY
  }
}

void plain_ell_f32_omp(int64_t n, int64_t w, const float *restrict vals, const int32_t *restrict cols,
                       const float *restrict x, float *restrict y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    ELL_BODY
  }
}

/* DIA in the textbook order, diagonal by diagonal, over row tiles so y stays in cache. */
enum { DIA_TILE = 4096 };

static void dia_tile(int64_t n, int64_t d, const int32_t *restrict offsets, const float *restrict data,
                     const float *restrict x, float *restrict y, int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i)
    y[i] = 0;
  for (int64_t k = 0; k < d; ++k) {
    int64_t off = offsets[k];
    int64_t lo = r0 > -off ? r0 : -off;
    int64_t hi = r1 < n - off ? r1 : n - off;
    const float *dk = data + k * n;
    for (int64_t i = lo; i < hi; ++i)
      y[i] += dk[i] * x[i + off];
  }
}

void plain_dia_f32(int64_t n, int64_t d, const int32_t *restrict offsets, const float *restrict data,
                   const float *restrict x, float *restrict y) {
  for (int64_t r0 = 0; r0 < n; r0 += DIA_TILE)
    dia_tile(n, d, offsets, data, x, y, r0, r0 + DIA_TILE < n ? r0 + DIA_TILE : n);
}

void plain_dia_f32_omp(int64_t n, int64_t d, const int32_t *restrict offsets, const float *restrict data,
                       const float *restrict x, float *restrict y) {
  int64_t tiles = (n + DIA_TILE - 1) / DIA_TILE;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t r0 = t * DIA_TILE;
    dia_tile(n, d, offsets, data, x, y, r0, r0 + DIA_TILE < n ? r0 + DIA_TILE : n);
  }
}

#define BCSR_BODY                                                                                \
  for (int64_t r = 0; r < b; ++r) {                                                              \
    float acc = 0;                                                                               \
    for (int32_t t = offs[bi]; t < offs[bi + 1]; ++t) {                                          \
      const float *blk = blocks + (int64_t)t * b * b + r * b;                                    \
      const float *xb = x + (int64_t)bcols[t] * b;                                               \
      for (int64_t c = 0; c < b; ++c)                                                            \
        acc += blk[c] * xb[c];                                                                   \
    }                                                                                            \
    y[bi * b + r] = acc;                                                                         \
  }

void plain_bcsr_f32(int64_t nb, int64_t b, const int32_t *restrict offs, const float *restrict blocks,
                    const int32_t *restrict bcols, const float *restrict x, float *restrict y) {
  for (int64_t bi = 0; bi < nb; ++bi) {
    BCSR_BODY
  }
}

void plain_bcsr_f32_omp(int64_t nb, int64_t b, const int32_t *restrict offs, const float *restrict blocks,
                        const int32_t *restrict bcols, const float *restrict x, float *restrict y) {
#pragma omp parallel for schedule(static)
  for (int64_t bi = 0; bi < nb; ++bi) {
    BCSR_BODY
  }
}

void stream_triad(int64_t n, double *restrict a, const double *restrict b, const double *restrict c, double s) {
  for (int64_t i = 0; i < n; ++i)
    a[i] = b[i] + s * c[i];
}

void stream_triad_omp(int64_t n, double *restrict a, const double *restrict b, const double *restrict c,
                      double s) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    a[i] = b[i] + s * c[i];
}

void stream_init_omp(int64_t n, double *a, double *b, double *c) {
  /* First touch in the same static partition the triad uses. */
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
}
