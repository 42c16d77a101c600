/* spl-lanes-bench: a reduce over tuples that splc runs in vector lanes (the first position of
 * the largest |x_i|, benchmarks/lane_reduction.spl) against the same combination as a fold
 * (in order, what such a reduce ran as before) and against a C loop (gcc -O3 -march=native)
 * in the same process, on the same x; the median of 7 rounds of at least 20 ms each. Prints a
 * markdown table: time per call, elements per ns, and the speed of the lanes over each.
 * Environment: SPL_BENCH_MACHINE, SPL_BENCH_COMMIT (for the header). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lane_reduction.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What a C programmer writes: the first largest |x_i| (0 where every |x_i| is 0, as the
 * reduce's tie rule gives). */
#define C_FIRST_LARGEST(NAME, T, ABS)                                    \
  static int32_t __attribute__((noinline)) NAME(int64_t n, const T *x) { \
    T best = 0;                                                          \
    int32_t at = (int32_t)n;                                             \
    for (int64_t i = 0; i < n; ++i)                                      \
      if (ABS(x[i]) > best) best = ABS(x[i]), at = (int32_t)i;           \
    return best == 0 && n > 0 ? 0 : at;                                  \
  }
C_FIRST_LARGEST(c_first_largest_f64, double, fabs)
C_FIRST_LARGEST(c_first_largest_f32, float, fabsf)

enum { kRounds = 7 };
typedef int32_t (*call_fn)(int64_t n, const void *x);

static int32_t lanes64(int64_t n, const void *x) { int32_t r = -1; bench_lanes_f64(n, x, &r); return r; }
static int32_t order64(int64_t n, const void *x) { int32_t r = -1; bench_in_order_f64(n, x, &r); return r; }
static int32_t c64(int64_t n, const void *x) { return c_first_largest_f64(n, x); }
static int32_t lanes32(int64_t n, const void *x) { int32_t r = -1; bench_lanes_f32(n, x, &r); return r; }
static int32_t order32(int64_t n, const void *x) { int32_t r = -1; bench_in_order_f32(n, x, &r); return r; }
static int32_t c32(int64_t n, const void *x) { return c_first_largest_f32(n, x); }

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Seconds a call, the median of the rounds; the three kernels interleaved round by round. */
static void timeAll(call_fn fns[3], int64_t n, const void *x, double out[3]) {
  double samples[3][kRounds];
  long reps = 1;
  for (;;) { /* calls of the slowest kernel that take 20 ms */
    double t0 = now();
    for (long k = 0; k < reps; ++k) fns[1](n, x);
    if (now() - t0 > 0.02) break;
    reps *= 2;
  }
  for (int r = 0; r < kRounds; ++r)
    for (int f = 0; f < 3; ++f) {
      long mine = f == 1 ? reps : reps * 8;
      volatile int32_t sink = 0;
      double t0 = now();
      for (long k = 0; k < mine; ++k) sink += fns[f](n, x);
      samples[f][r] = (now() - t0) / (double)mine;
    }
  for (int f = 0; f < 3; ++f) {
    qsort(samples[f], kRounds, sizeof(double), cmp);
    out[f] = samples[f][kRounds / 2];
  }
}

int main(void) {
  const char *machine = getenv("SPL_BENCH_MACHINE"), *commit = getenv("SPL_BENCH_COMMIT");
  time_t t = time(NULL);
  char date[16];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
  printf("# A reduce over (value, position) pairs in vector lanes\n\n");
  printf("- machine: %s; date: %s; commit: %s\n", machine ? machine : "unknown", date, commit ? commit : "unknown");
  printf("- spl-lanes-bench (benchmarks/lane_reduction_bench.c): the first position of the largest |x_i| as a `reduce` "
         "over (|x_i|, i) with the tie rule (lanes), the same combination as a `fold` (in order) and a C loop "
         "(gcc -O3 -march=native), one thread, x in the caches from 32 to 65536 elements; medians of 7 rounds.\n\n");
  printf("| type | n | lanes | in order | C loop | lanes, elements/ns | lanes over in order | lanes over C |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  const int64_t sizes[] = {32, 256, 4096, 65536};
  for (int ty = 0; ty < 2; ++ty) {
    call_fn fns[3] = {ty ? lanes32 : lanes64, ty ? order32 : order64, ty ? c32 : c64};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
      int64_t n = sizes[s];
      void *x = aligned_alloc(64, (size_t)n * 8);
      uint64_t seed = 12345;
      for (int64_t i = 0; i < n; ++i) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = (double)(seed >> 40) / (double)(1 << 24) * 100.0 - 50.0;
        if (ty) ((float *)x)[i] = (float)v;
        else ((double *)x)[i] = v;
      }
      int32_t a = fns[0](n, x), b = fns[1](n, x), c = fns[2](n, x);
      if (a != b || a != c) {
        fprintf(stderr, "spl-lanes-bench: %s n=%lld: lanes %d, in order %d, C %d\n", ty ? "f32" : "f64", (long long)n, a, b, c);
        return 1;
      }
      double sec[3];
      timeAll(fns, n, x, sec);
      printf("| %s | %lld | %.1f ns | %.1f ns | %.1f ns | %.2f | %.1fx | %.1fx |\n", ty ? "f32" : "f64", (long long)n, sec[0] * 1e9,
             sec[1] * 1e9, sec[2] * 1e9, (double)n / (sec[0] * 1e9), sec[1] / sec[0], sec[2] / sec[0]);
      free(x);
    }
  }
  return 0;
}
