/* plain_loops.h: hand-written C baselines for spl-spmv-bench (see plain_loops.c). The *_omp
 * versions use OpenMP on omp_get_max_threads() threads. */
#ifndef SPL_BENCH_PLAIN_LOOPS_H
#define SPL_BENCH_PLAIN_LOOPS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void plain_csr_f64(int64_t n, const int32_t *offs, const int32_t *cols, const double *vals, const double *x, double *y);
void plain_csr_f64_omp(int64_t n, const int32_t *offs, const int32_t *cols, const double *vals, const double *x, double *y);
void plain_csr_f32(int64_t n, const int32_t *offs, const int32_t *cols, const float *vals, const float *x, float *y);
void plain_csr_f32_omp(int64_t n, const int32_t *offs, const int32_t *cols, const float *vals, const float *x, float *y);

/* ELL row-major: slot k of row i at i * w + k. */
void plain_ell_f32(int64_t n, int64_t w, const float *vals, const int32_t *cols, const float *x, float *y);
void plain_ell_f32_omp(int64_t n, int64_t w, const float *vals, const int32_t *cols, const float *x, float *y);

/* DIA (square n x n): data[k * n + i] = A(i, i + offsets[k]). */
void plain_dia_f32(int64_t n, int64_t d, const int32_t *offsets, const float *data, const float *x, float *y);
void plain_dia_f32_omp(int64_t n, int64_t d, const int32_t *offsets, const float *data, const float *x, float *y);

/* BCSR with b x b row-major blocks; x has mb * b entries, y has nb * b. */
void plain_bcsr_f32(int64_t nb, int64_t b, const int32_t *offs, const float *blocks, const int32_t *bcols,
                    const float *x, float *y);
void plain_bcsr_f32_omp(int64_t nb, int64_t b, const int32_t *offs, const float *blocks, const int32_t *bcols,
                        const float *x, float *y);

/* STREAM triad a = b + s c. */
void stream_triad(int64_t n, double *a, const double *b, const double *c, double s);
void stream_triad_omp(int64_t n, double *a, const double *b, const double *c, double s);
void stream_init_omp(int64_t n, double *a, double *b, double *c);

#ifdef __cplusplus
}
#endif

#endif
