/* blas_bench.c: libsplblas against OpenBLAS, in one process (issue 26, docs/blas.md).
 *
 * usage: spl-blas-bench LIBSPLBLAS LIBOPENBLAS THREADS [--quick] [--only NAME,NAME...] [--sizes N,N...]
 * (--only: the routines named as the CSV names them, spaces as underscores: gemm_NN,trsm_LLN;
 * --sizes: level 1 and 2 alone, at these sizes in place of their defaults, at most eight:
 * 32,64,128,256 times the small operands LAPACK's unblocked routines hand to level 2)
 *
 * Both libraries are loaded with dlopen (RTLD_LOCAL) and called through their Fortran entry
 * points on the same operands; the thread counts come from SPL_NUM_THREADS and
 * OPENBLAS_NUM_THREADS, which benchmarks/run-blas.sh sets to THREADS. Every routine is checked
 * against the other library's result before it is timed (relative difference below 1e-9 in
 * f64, 1e-3 in f32, on the output's largest element), so a ratio is never of a wrong result.
 * An output that a routine updates is restored before each call (x and y by memcpy, C of
 * level 3), except the matrices of the rank updates (ger, syr, syr2, spr: A += alpha x y'): a
 * restore of theirs would copy as many bytes as the update moves (128 MB at n = 4000) inside
 * the timed calls; A drifts by alpha x y' a call instead, which changes no timing.
 * A group (a routine at a size) runs both libraries in rounds, alternating which goes first,
 * one sample each per round (a sample: back-to-back calls for at least 20 ms, or one call when
 * a call takes longer, the clock read between batches of calls that double up to a millisecond);
 * the median sample is the time. dot, nrm2 and iamax also run at increment 2 ("dot inc2": n
 * elements two apart). Beside each group, a STREAM triad of the
 * same thread count (a[i] = b[i] + s c[i] over 3 x 32 MB, OpenMP) gives the machine's bandwidth,
 * and level 1 and 2 report the bandwidth each library reached (the bytes the routine must move
 * once). Output: CSV rows on stdout (the header first), progress on stderr. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*fn_t)(void);
static void *lib[2];
static const char *libName[2] = {"spl", "openblas"};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static fn_t sym(int l, const char *name) {
  fn_t f = (fn_t)dlsym(lib[l], name);
  if (!f) {
    fprintf(stderr, "blas_bench: %s has no %s\n", libName[l], name);
    exit(1);
  }
  return f;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Operands: A, B, C (n x n), x, y (n). For the check each library writes its own outputs (y, C),
 * restored before every call that writes them from y0 and C0; the inputs (A, B, x, y0, C0) are
 * one copy that both read, and the timed calls run on one set of operands. With a copy each, 2 x
 * 64 MB of x and y at n = 4M (2 x 128 MB of A at 4000) did not stay in this machine's 260 MB L3
 * together, and which library's copy the cache kept decided up to 0.8x of a ddot (a C harness:
 * OpenBLAS's ddot took 2.3 ms on arrays a plain loop also read, 3.6-3.9 ms on a copy of its own). */
typedef struct {
  int n;
  size_t elem;
  void *A, *B, *C, *x, *y, *C0, *y0;
  void *P; /* a packed upper triangle with a dominant diagonal (tpsv), where asked for */
  int ownsInputs;
} Ops;

static void fill(void *p, size_t count, size_t elem, int diagN, double scale) {
  for (size_t i = 0; i < count; ++i) {
    double v = scale * (double)((i * 2654435761u) % 1000) / 1000.0 - scale / 2;
    if (diagN > 0 && i % (size_t)(diagN + 1) == 0) v = 2.0 + (double)(i % 3);  /* a dominant diagonal */
    if (elem == 8) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
  }
}

/* The band routines' diagonals on each side of the main one (A's first (2k + 1) n elements hold
 * gbmv's band, the first (k + 1) n sbmv's and tbmv's; packed routines A's first n(n+1)/2). */
enum { kBand = 32 };

/* Level 1 needs x and y, level 2 A too, the updates and level 3 C (and gemm B); the inputs are
 * `inputs`'s where given. */
static Ops makeOps(int n, size_t elem, int needA, int needB, int needC, int needP, int stride, const Ops *inputs) {
  Ops o = {n, elem, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, inputs == NULL};
  size_t mat = (size_t)n * (size_t)n;
  if (inputs) {
    o.A = inputs->A, o.B = inputs->B, o.C0 = inputs->C0, o.x = inputs->x, o.y0 = inputs->y0, o.P = inputs->P;
  } else {
    /* A holds n x n, or a band's 2 kBand + 1 stored rows where n is smaller (--sizes under 63:
     * gbmv's band then reads past n x n). */
    size_t amat = mat > (size_t)(2 * kBand + 1) * (size_t)n ? mat : (size_t)(2 * kBand + 1) * (size_t)n;
    o.A = needA ? malloc(amat * elem) : NULL;
    o.B = needB ? malloc(mat * elem) : NULL;
    o.C0 = needC ? malloc(mat * elem) : NULL;
    o.x = malloc((size_t)n * (size_t)stride * elem);
    o.y0 = malloc((size_t)n * (size_t)stride * elem);
    if (needA) fill(o.A, amat, elem, n, 1.0 / n);
    if (needP) {
      size_t packed = (size_t)n * (size_t)(n + 1) / 2;
      o.P = malloc(packed * elem);
      fill(o.P, packed, elem, 0, 1.0 / n);
      for (size_t j = 0; j < (size_t)n; ++j) { /* column j's diagonal element, at j + j(j+1)/2 */
        size_t at = j + j * (j + 1) / 2;
        if (elem == 8) ((double *)o.P)[at] = 2.0 + (double)(j % 3);
        else ((float *)o.P)[at] = 2.0f + (float)(j % 3);
      }
    }
    if (needB) fill(o.B, mat, elem, 0, 1.0);
    if (needC) fill(o.C0, mat, elem, 0, 1.0);
    fill(o.x, (size_t)n * (size_t)stride, elem, 0, 2.0);
    fill(o.y0, (size_t)n * (size_t)stride, elem, 0, 1.0);
  }
  o.C = needC ? malloc(mat * elem) : NULL;
  o.y = malloc((size_t)n * elem);
  if (needC) memcpy(o.C, o.C0, mat * elem);
  memcpy(o.y, o.y0, (size_t)n * elem);
  return o;
}

static void freeOps(Ops *o) {
  free(o->C), free(o->y);
  if (o->ownsInputs) free(o->A), free(o->B), free(o->C0), free(o->x), free(o->y0), free(o->P);
}

/* The routines: each a call of library l on o, restoring what it writes first. */
enum { DOT, AXPY, NRM2, ASUM, SCAL, IAMAX, DOT_INC2, NRM2_INC2, IAMAX_INC2, GEMV_N, GEMV_T, SYMV_U, SYMV_L, SPMV_U, SPMV_L, TRMV_LN, TRMV_UT, TRMV_UN, TRSV_LN, TRSV_UN,
       TRSV_UT, TRSV_LT, GBMV_N, GBMV_T, SBMV_L, SBMV_U, TPMV_LN, TPSV_UN, TBMV_LN, TBMV_UN, GER, SYR_L, SYR2_L, SPR_L, GEMM_NN, GEMM_TN, GEMM_TT, SYMM_LL, TRSM_LLN, TRSM_RLN, TRMM_RUT, SYRK_LN, ROUTINES };
static const char *routineName[] = {"dot", "axpy", "nrm2", "asum", "scal", "iamax", "dot inc2", "nrm2 inc2", "iamax inc2", "gemv N", "gemv T", "symv U", "symv L",
                                    "spmv U", "spmv L",
                                    "trmv LN", "trmv UT", "trmv UN", "trsv LN", "trsv UN", "trsv UT", "trsv LT", "gbmv N", "gbmv T", "sbmv L", "sbmv U", "tpmv LN",
                                    "tpsv UN", "tbmv LN", "tbmv UN",
                                    "ger", "syr L", "syr2 L", "spr L", "gemm NN", "gemm TN", "gemm TT",
                                    "symm LL", "trsm LLN", "trsm RLN", "trmm RUT", "syrk LN"};
static double result; /* a scalar result, kept so the call is not dropped */

static fn_t resolved[2][ROUTINES][2]; /* call()'s entry points, by library, routine and precision */
static fn_t remember(fn_t *slot, fn_t f) { return *slot = f; }

static void call(int l, int r, Ops *o) {
  char p = o->elem == 8 ? 'd' : 's';
  char name[32];
  int n = o->n, one = 1, two = 2;
  double ad = 0.7, bd = 0.3;
  float as = 0.7f, bs = 0.3f;
  const void *alpha = o->elem == 8 ? (void *)&ad : (void *)&as, *beta = o->elem == 8 ? (void *)&bd : (void *)&bs;
  size_t vec = (size_t)n * o->elem, mat = (size_t)n * (size_t)n * o->elem;
#define NAME(s) (snprintf(name, sizeof name, "%c%s_", p, s), name)
  /* Each (library, routine, precision) calls one entry point, looked up once: dlsym costs 0.1 us
   * in libsplblas and 0.2 us in OpenBLAS's libblas here, a sixth of a ddot of 4096. */
  fn_t *slot = &resolved[l][r][p == 'd'];
#define FN(s) (*slot ? *slot : remember(slot, sym(l, s)))
  switch (r) {
    case DOT:
      if (p == 'd') result += ((double (*)(const int *, const void *, const int *, const void *, const int *))FN(NAME("dot")))(&n, o->x, &one, o->y0, &one);
      else result += ((float (*)(const int *, const void *, const int *, const void *, const int *))FN(NAME("dot")))(&n, o->x, &one, o->y0, &one);
      break;
    case AXPY:
      memcpy(o->y, o->y0, vec);
      ((void (*)(const int *, const void *, const void *, const int *, void *, const int *))FN(NAME("axpy")))(&n, alpha, o->x, &one, o->y, &one);
      break;
    case NRM2:
    case ASUM:
      if (p == 'd') result += ((double (*)(const int *, const void *, const int *))FN(NAME(r == NRM2 ? "nrm2" : "asum")))(&n, o->x, &one);
      else result += ((float (*)(const int *, const void *, const int *))FN(NAME(r == NRM2 ? "nrm2" : "asum")))(&n, o->x, &one);
      break;
    case SCAL:
      memcpy(o->y, o->y0, vec);
      ((void (*)(const int *, const void *, void *, const int *))FN(NAME("scal")))(&n, alpha, o->y, &one);
      break;
    case IAMAX:
      result += ((int (*)(const int *, const void *, const int *))FN((snprintf(name, sizeof name, "i%camax_", p), name)))(&n, o->x, &one);
      break;
    /* Increment 2 (x and y hold 2n elements here, makeOps): a strided loop's one chain of sums
     * or maxima, which LLVM's loops for a unit stride do not have (runtime/blas/level1.c). */
    case DOT_INC2:
      if (p == 'd') result += ((double (*)(const int *, const void *, const int *, const void *, const int *))FN(NAME("dot")))(&n, o->x, &two, o->y0, &two);
      else result += ((float (*)(const int *, const void *, const int *, const void *, const int *))FN(NAME("dot")))(&n, o->x, &two, o->y0, &two);
      break;
    case NRM2_INC2:
      if (p == 'd') result += ((double (*)(const int *, const void *, const int *))FN(NAME("nrm2")))(&n, o->x, &two);
      else result += ((float (*)(const int *, const void *, const int *))FN(NAME("nrm2")))(&n, o->x, &two);
      break;
    case IAMAX_INC2:
      result += ((int (*)(const int *, const void *, const int *))FN((snprintf(name, sizeof name, "i%camax_", p), name)))(&n, o->x, &two);
      break;
    case GEMV_N:
    case GEMV_T:
      memcpy(o->y, o->y0, vec);
      ((void (*)(const char *, const int *, const int *, const void *, const void *, const int *, const void *, const int *,
                 const void *, void *, const int *, size_t))FN(NAME("gemv")))(r == GEMV_N ? "N" : "T", &n, &n, alpha, o->A, &n,
                                                                                 o->x, &one, beta, o->y, &one, 1);
      break;
    case SYMV_U:
    case SYMV_L:
      memcpy(o->y, o->y0, vec);
      ((void (*)(const char *, const int *, const void *, const void *, const int *, const void *, const int *, const void *, void *,
                 const int *, size_t))FN(NAME("symv")))(r == SYMV_U ? "U" : "L", &n, alpha, o->A, &n, o->x, &one, beta, o->y, &one, 1);
      break;
    case SPMV_U:
    case SPMV_L: /* A's first n(n+1)/2 elements as a packed triangle */
      memcpy(o->y, o->y0, vec);
      ((void (*)(const char *, const int *, const void *, const void *, const void *, const int *, const void *, void *, const int *,
                 size_t))FN(NAME("spmv")))(r == SPMV_U ? "U" : "L", &n, alpha, o->A, o->x, &one, beta, o->y, &one, 1);
      break;
    case TRMV_LN:
    case TRMV_UT:
    case TRMV_UN:
    case TRSV_LN:
    case TRSV_UN:
    case TRSV_UT:
    case TRSV_LT: {
      memcpy(o->y, o->y0, vec);
      const char *uplo = r == TRMV_LN || r == TRSV_LN || r == TRSV_LT ? "L" : "U";
      const char *trans = r == TRMV_UT || r == TRSV_UT || r == TRSV_LT ? "T" : "N";
      const int product = r == TRMV_LN || r == TRMV_UT || r == TRMV_UN;
      ((void (*)(const char *, const char *, const char *, const int *, const void *, const int *, void *, const int *, size_t, size_t,
                 size_t))FN(NAME(product ? "trmv" : "trsv")))(uplo, trans, "N", &n, o->A, &n, o->y, &one, 1, 1, 1);
      break;
    }
    case GBMV_N:
    case GBMV_T: {
      memcpy(o->y, o->y0, vec);
      int k = kBand < n ? kBand : n - 1, ld = 2 * k + 1;
      ((void (*)(const char *, const int *, const int *, const int *, const int *, const void *, const void *, const int *,
                 const void *, const int *, const void *, void *, const int *, size_t))FN(NAME("gbmv")))(
          r == GBMV_N ? "N" : "T", &n, &n, &k, &k, alpha, o->A, &ld, o->x, &one, beta, o->y, &one, 1);
      break;
    }
    case SBMV_L:
    case SBMV_U: {
      memcpy(o->y, o->y0, vec);
      int k = kBand < n ? kBand : n - 1, ld = k + 1;
      ((void (*)(const char *, const int *, const int *, const void *, const void *, const int *, const void *, const int *,
                 const void *, void *, const int *, size_t))FN(NAME("sbmv")))(r == SBMV_L ? "L" : "U", &n, &k, alpha, o->A, &ld,
                                                                             o->x, &one, beta, o->y, &one, 1);
      break;
    }
    case TPMV_LN:
      memcpy(o->y, o->y0, vec);
      ((void (*)(const char *, const char *, const char *, const int *, const void *, void *, const int *, size_t, size_t,
                 size_t))FN(NAME("tpmv")))("L", "N", "N", &n, o->A, o->y, &one, 1, 1, 1);
      break;
    case TPSV_UN:
      memcpy(o->y, o->y0, vec);
      ((void (*)(const char *, const char *, const char *, const int *, const void *, void *, const int *, size_t, size_t,
                 size_t))FN(NAME("tpsv")))("U", "N", "N", &n, o->P, o->y, &one, 1, 1, 1);
      break;
    case TBMV_LN:
    case TBMV_UN: {
      memcpy(o->y, o->y0, vec);
      int k = kBand < n ? kBand : n - 1, ld = k + 1;
      ((void (*)(const char *, const char *, const char *, const int *, const int *, const void *, const int *, void *, const int *,
                 size_t, size_t, size_t))FN(NAME("tbmv")))(r == TBMV_LN ? "L" : "U", "N", "N", &n, &k, o->A, &ld, o->y, &one, 1, 1,
                                                          1);
      break;
    }
    case GER:
      ((void (*)(const int *, const int *, const void *, const void *, const int *, const void *, const int *, void *, const int *))sym(
          l, NAME("ger")))(&n, &n, alpha, o->x, &one, o->y0, &one, o->C, &n);
      break;
    case SYR_L:
      ((void (*)(const char *, const int *, const void *, const void *, const int *, void *, const int *, size_t))FN(NAME("syr")))(
          "L", &n, alpha, o->x, &one, o->C, &n, 1);
      break;
    case SYR2_L:
      ((void (*)(const char *, const int *, const void *, const void *, const int *, const void *, const int *, void *, const int *,
                 size_t))FN(NAME("syr2")))("L", &n, alpha, o->x, &one, o->y0, &one, o->C, &n, 1);
      break;
    case SPR_L: /* C's first n(n+1)/2 elements as a packed triangle */
      ((void (*)(const char *, const int *, const void *, const void *, const int *, void *, size_t))FN(NAME("spr")))(
          "L", &n, alpha, o->x, &one, o->C, 1);
      break;
    case GEMM_NN:
    case GEMM_TN:
    case GEMM_TT:
      memcpy(o->C, o->C0, mat);
      ((void (*)(const char *, const char *, const int *, const int *, const int *, const void *, const void *, const int *, const void *,
                 const int *, const void *, void *, const int *, size_t, size_t))FN(NAME("gemm")))(
          r == GEMM_NN ? "N" : "T", r == GEMM_TT ? "T" : "N", &n, &n, &n, alpha, o->A, &n, o->B, &n, beta, o->C, &n, 1, 1);
      break;
    case SYMM_LL:
      memcpy(o->C, o->C0, mat);
      ((void (*)(const char *, const char *, const int *, const int *, const void *, const void *, const int *, const void *,
                 const int *, const void *, void *, const int *, size_t, size_t))FN(NAME("symm")))(
          "L", "L", &n, &n, alpha, o->A, &n, o->B, &n, beta, o->C, &n, 1, 1);
      break;
    case TRSM_LLN:
    case TRSM_RLN: /* B := alpha A^-1 B, B := alpha B A^-1 */
      memcpy(o->C, o->C0, mat);
      ((void (*)(const char *, const char *, const char *, const char *, const int *, const int *, const void *, const void *, const int *,
                 void *, const int *, size_t, size_t, size_t, size_t))FN(NAME("trsm")))(r == TRSM_LLN ? "L" : "R", "L", "N", "N", &n, &n,
                                                                                           alpha, o->A, &n, o->C, &n, 1, 1, 1, 1);
      break;
    case TRMM_RUT: /* B := alpha B A', A upper */
      memcpy(o->C, o->C0, mat);
      ((void (*)(const char *, const char *, const char *, const char *, const int *, const int *, const void *, const void *, const int *,
                 void *, const int *, size_t, size_t, size_t, size_t))FN(NAME("trmm")))("R", "U", "T", "N", &n, &n, alpha, o->A, &n,
                                                                                           o->C, &n, 1, 1, 1, 1);
      break;
    case SYRK_LN:
      memcpy(o->C, o->C0, mat);
      ((void (*)(const char *, const char *, const int *, const int *, const void *, const void *, const int *, const void *, void *,
                 const int *, size_t, size_t))FN(NAME("syrk")))("L", "N", &n, &n, alpha, o->A, &n, beta, o->C, &n, 1, 1);
      break;
  }
#undef NAME
#undef FN
}

/* The bytes a routine must move once (level 1 and 2) and its flops (level 3). */
static double bytesOf(int r, int n, size_t e) {
  double v = (double)n * (double)e, m = (double)n * (double)n * (double)e;
  switch (r) {
    case DOT: return 2 * v;
    case AXPY: return 3 * v;
    case NRM2: return v;
    case ASUM: case IAMAX: return v;
    case DOT_INC2: return 4 * v; /* strided: the lines they read, the skipped elements' too */
    case NRM2_INC2: case IAMAX_INC2: return 2 * v;
    case SCAL: return 2 * v;
    case GEMV_N: case GEMV_T: return m + 3 * v;
    case SYMV_U: case SYMV_L: case SPMV_U: case SPMV_L: case TRMV_LN: case TRMV_UT: case TRMV_UN: case TRSV_LN: case TRSV_UN: case TRSV_UT: case TRSV_LT: return m / 2 + 3 * v;
    case GBMV_N: case GBMV_T: return (2.0 * kBand + 1) * v + 3 * v;
    case SBMV_L: case SBMV_U: case TBMV_LN: case TBMV_UN: return (kBand + 1.0) * v + 3 * v;
    case TPMV_LN: case TPSV_UN: return m / 2 + 2 * v;
    case GER: return 2 * m;
    case SYR_L: case SYR2_L: case SPR_L: return m; /* the triangle read and written */
    default: return 0;
  }
}
static double flopsOf(int r, int n) {
  double c = (double)n * (double)n * (double)n;
  return r == GEMM_NN || r == GEMM_TN || r == GEMM_TT || r == SYMM_LL ? 2 * c : c; /* trsm, trmm, syrk: n^3 */
}

/* The output a routine writes, to compare the libraries. */
static void *outputOf(int r, Ops *o, size_t *count) {
  if (r >= GER) { *count = (size_t)o->n * (size_t)o->n; return o->C; }
  if (r == DOT || r == NRM2 || r == ASUM || r == IAMAX || (r >= DOT_INC2 && r <= IAMAX_INC2)) { *count = 0; return NULL; }
  *count = (size_t)o->n;
  return o->y;
}

static double triadGBs(int threads) {
  size_t n = 4u << 20;
  double *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8), best = 0;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
  for (int k = 0; k < 10; ++k) {
    double t0 = now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    double t = now() - t0;
    if (24.0 * (double)n / t / 1e9 > best) best = 24.0 * (double)n / t / 1e9;
  }
  free(a), free(b), free(c);
  return best;
}

/* Is `name` (spaces read as underscores) one of the comma-separated names of `list`? */
static int listed(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t l = end ? (size_t)(end - p) : strlen(p);
    int same = l == len;
    for (size_t i = 0; same && i < len; ++i) same = p[i] == (name[i] == ' ' ? '_' : name[i]);
    if (same) return 1;
    p += l + (end ? 1 : 0);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s LIBSPLBLAS LIBOPENBLAS THREADS [--quick] [--only NAME,NAME...] [--sizes N,N...]\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[3]), quick = 0;
  const char *only = NULL;
  int sizes[8], nsizes = 0;
  for (int a = 4; a < argc; ++a) {
    if (strcmp(argv[a], "--quick") == 0) quick = 1;
    else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc) only = argv[++a];
    else if (strcmp(argv[a], "--sizes") == 0 && a + 1 < argc) {
      for (char *p = argv[++a]; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > (1 << 24) || nsizes == 8) {
          fprintf(stderr, "blas_bench: --sizes wants up to eight positive numbers separated by commas, found %s\n", argv[a]);
          return 2;
        }
        sizes[nsizes++] = (int)v;
        p = *end == ',' ? end + 1 : end;
      }
    }
    else {
      fprintf(stderr, "blas_bench: unknown argument %s\n", argv[a]);
      return 2;
    }
  }
  /* Both libraries share the machine's cores, so neither library's idle workers may spin
   * through the other's samples: OpenBLAS's spin for 2^28 cycles (about 0.1 s) after a call
   * by default, and on two cores SPL's samples that followed ran beside a spinning worker
   * (dgemv T 400 on two threads: 41 us in the suite, 19 us alone). 2^20 cycles (under 1 ms)
   * still covers the gaps between back-to-back calls, so OpenBLAS's own times do not change
   * (paired OpenBLAS-against-OpenBLAS runs with and without it agree within the noise); SPL's
   * pool spins 50 us. Read by OpenBLAS when it loads; a value in the environment wins. */
  setenv("OPENBLAS_THREAD_TIMEOUT", "20", 0);
  /* OpenBLAS (a DYNAMIC_ARCH build, as Debian's) chooses its kernels by the CPU's family and
   * model, and 0.3.21 does not know newer Xeons (family 6, model 207 here): it falls back to its
   * Prescott kernels (SSE3, two doubles a vector), which gemm runs at half of SPL's speed. The
   * baseline is OpenBLAS at its best on this machine: the kernels of the widest vectors the CPU
   * has (SkylakeX for AVX-512, Haswell for AVX2), as a user who sets OPENBLAS_CORETYPE gets; a
   * value in the environment wins (OPENBLAS_CORETYPE=Prescott measures what it detects). */
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  else if (__builtin_cpu_supports("avx2")) setenv("OPENBLAS_CORETYPE", "Haswell", 0);
  for (int l = 0; l < 2; ++l) {
    lib[l] = dlopen(argv[1 + l], RTLD_NOW | RTLD_LOCAL);
    if (!lib[l]) {
      fprintf(stderr, "blas_bench: %s\n", dlerror());
      return 1;
    }
  }
  printf("precision,routine,n,threads,spl_s,openblas_s,spl_speed,spl_GBs,openblas_GBs,spl_GFlops,openblas_GFlops,triad_GBs\n");
  {
    const char *(*corename)(void) = (const char *(*)(void))dlsym(lib[1], "openblas_get_corename");
    const char *asked = getenv("OPENBLAS_CORETYPE");
    printf("# OpenBLAS kernels: %s (OPENBLAS_CORETYPE=%s)\n", corename ? corename() : "unknown", asked ? asked : "unset");
  }
  /* (routine, size) groups: level 1 in cache (32 KB per vector) and beyond the last-level cache
   * (32 MB); level 2 at 400 (1.3 MB in f64) and 4000 (128 MB); level 3 at 1000, 2000, 4000. */
  struct Group { int r, n; } groups[400];
  int ng = 0;
  for (int r = DOT; r <= SPR_L; ++r) {
    if (nsizes) {
      for (int s = 0; s < nsizes; ++s) groups[ng++] = (struct Group){r, sizes[s]};
    } else if (r <= IAMAX_INC2) {
      groups[ng++] = (struct Group){r, 4096}, groups[ng++] = (struct Group){r, 4 << 20};
    } else {
      groups[ng++] = (struct Group){r, 400}, groups[ng++] = (struct Group){r, quick ? 1500 : 4000};
    }
  }
  for (int r = GEMM_NN; r <= SYRK_LN && nsizes == 0; ++r) {
    groups[ng++] = (struct Group){r, quick ? 300 : 1000};
    if (!quick && r != SYRK_LN) groups[ng++] = (struct Group){r, 2000};  /* syrk: 0.1x, 40 s a call at 2000 */
    if (!quick && r == GEMM_NN) groups[ng++] = (struct Group){r, 4000};
  }
  for (int prec = 0; prec < 2; ++prec) {
    size_t elem = prec == 0 ? 8 : 4;
    for (int g = 0; g < ng; ++g) {
      int r = groups[g].r, n = groups[g].n;
      if (only && !listed(only, routineName[r])) continue;
      if (prec == 1 && !(r == DOT || r == AXPY || (r >= DOT_INC2 && r <= IAMAX_INC2) || r == GEMV_N || r == GEMV_T || r == TRSV_LN || r == GEMM_NN || r == GEMM_TT)) continue;
      int needA = r >= GEMV_N, needB = r == GEMM_NN || r == GEMM_TN || r == GEMM_TT || r == SYMM_LL, needC = r >= GER;
      Ops ops[2];
      int stride = r >= DOT_INC2 && r <= IAMAX_INC2 ? 2 : 1;
      ops[0] = makeOps(n, elem, needA, needB, needC, r == TPSV_UN, stride, NULL);
      ops[1] = makeOps(n, elem, needA, needB, needC, r == TPSV_UN, stride, &ops[0]);
      /* Correctness first: both libraries on the same operands. */
      double scalar[2];
      for (int l = 0; l < 2; ++l) {
        result = 0;
        call(l, r, &ops[l]);
        scalar[l] = result;
      }
      size_t count;
      void *o0 = outputOf(r, &ops[0], &count), *o1 = outputOf(r, &ops[1], &count);
      double diff = fabs(scalar[0] - scalar[1]) / (fabs(scalar[1]) + 1e-300), big = 0, worst = 0;
      for (size_t i = 0; i < count; ++i) {
        double a = elem == 8 ? ((double *)o0)[i] : ((float *)o0)[i], b = elem == 8 ? ((double *)o1)[i] : ((float *)o1)[i];
        if (fabs(b) > big) big = fabs(b);
        if (fabs(a - b) > worst) worst = fabs(a - b);
      }
      if (count) diff = worst / (big + 1e-300);
      if (!(diff <= (elem == 8 ? 1e-9 : 1e-3))) {
        fprintf(stderr, "blas_bench: %c%s n=%d: libsplblas differs from OpenBLAS by %g (relative)\n", elem == 8 ? 'd' : 's',
                routineName[r], n, diff);
        return 1;
      }
      /* Timed on the same operands at the same addresses (ops[0]: its outputs restored before
       * each call as for one library): where y or C lies against A decides how a loop's stores
       * alias its loads 4 KB apart, which moved sgemv N 400 by 2.5x in either library. */
      int rounds = r >= GEMM_NN && n >= 2000 ? 3 : 7;
      double samples[2][7];
      for (int round = 0; round < rounds; ++round)
        for (int q = 0; q < 2; ++q) {
          int l = (round + q) % 2;
          /* Calls in batches that double until one takes a millisecond: a clock read after each
           * call cost about 35 ns on this VM, the time of a whole ddot of 32, and made every
           * routine of 32-256 elements look alike (0.97-1.03x of each other). */
          int calls = 0, batch = 1;
          double t0 = now(), t;
          do {
            for (int b = 0; b < batch; ++b) call(l, r, &ops[0]);
            calls += batch;
            t = now() - t0;
            if (t < 1e-3 && batch < (1 << 20)) batch *= 2;
          } while (t < 0.02);
          samples[l][round] = t / calls;
        }
      double med[2];
      for (int l = 0; l < 2; ++l) {
        qsort(samples[l], (size_t)rounds, sizeof(double), cmpd);
        med[l] = samples[l][rounds / 2];
      }
      double triad = triadGBs(threads), bytes = bytesOf(r, n, elem), flops = r >= GEMM_NN ? flopsOf(r, n) : 0;
      printf("%s,%s,%d,%d,%.9g,%.9g,%.4f,%.3f,%.3f,%.3f,%.3f,%.2f\n", elem == 8 ? "f64" : "f32", routineName[r], n, threads, med[0],
             med[1], med[1] / med[0], bytes / med[0] / 1e9, bytes / med[1] / 1e9, flops / med[0] / 1e9, flops / med[1] / 1e9, triad);
      fflush(stdout);
      fprintf(stderr, "%s %-9s n=%-8d %dT: spl %.3g s, openblas %.3g s, spl speed %.2fx\n", elem == 8 ? "f64" : "f32", routineName[r], n,
              threads, med[0], med[1], med[1] / med[0]);
      freeOps(&ops[1]);
      freeOps(&ops[0]);
    }
  }
  fprintf(stderr, "(result %g)\n", result);
  return 0;
}
