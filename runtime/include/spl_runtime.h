/* spl_runtime.h: the interface of libsplrt, the SPL runtime library.
 *
 * Objects written by splc call these functions; user programs call only spl_error_string (the
 * generated headers declare the exported kernels and repeat the error codes below). Everything
 * here has C linkage and a stable ABI: kernels compiled by one splc link against any libsplrt of
 * the same major version.
 *
 * Contents:
 *   - error codes and spl_error_string;
 *   - aligned allocation for kernel temporaries;
 *   - the CPU thread pool (spl_parallel_for) with nnz-balanced partitioning helpers;
 *   - Sigma precomputation: prefix sums of per-position lengths (LIL row offsets);
 *   - CUDA: libcuda.so.1 loaded with dlopen on first use, a module cache, kernel launch.
 */
#ifndef SPL_RUNTIME_H
#define SPL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Error codes (generated headers repeat these under the same guard) ------------------- */
#ifndef SPL_ERROR_CODES_DEFINED
#define SPL_ERROR_CODES_DEFINED
#define SPL_OK 0
#define SPL_ERR_BAD_INPUT 1   /* an argument is invalid (negative size, bad offsets, index out of range) */
#define SPL_ERR_ALLOC 2       /* a temporary buffer could not be allocated */
#define SPL_ERR_CUDA 3        /* the CUDA driver is missing or reported an error */
#define SPL_ERR_UNSUPPORTED 4 /* the operation is not supported on this machine */
#define SPL_ERR_INTERNAL 5    /* a broken invariant inside the runtime */
#endif

/* A static, human-readable name for an error code ("SPL_ERR_BAD_INPUT: ..."). Never NULL. */
const char *spl_error_string(int code);

/* ---- Memory -------------------------------------------------------------------------------- */
/* 64-byte aligned allocation for kernel temporaries. Returns NULL on failure or when bytes is 0
 * (kernels treat a NULL result with bytes > 0 as SPL_ERR_ALLOC). */
void *spl_alloc(size_t bytes);
void spl_free(void *ptr);
/* Freed buffers of 64 KiB or more stay mapped for the next spl_alloc of about their size (at most
 * 16 of them, 128 MB in all: a plan's copies and vectors, a kernel's large temporaries), so that
 * their pages are not faulted in again; spl_release_memory gives them back to the system now (as
 * malloc_trim does for the heap), for a program that has planned and wants its memory back. */
void spl_release_memory(void);
/* A generated kernel's temporaries: 64-byte aligned memory from the calling thread's scratch
 * (256 KB, taken and given back in stack order, no system call after the thread's first), else
 * from spl_alloc; the same NULL contract. spl_temp_free takes what spl_temp_alloc gave, on the
 * same thread (NULL does nothing). */
void *spl_temp_alloc(size_t bytes);
void spl_temp_free(void *ptr);

/* ---- CPU thread pool ---------------------------------------------------------------------- */
/* The body of a parallel loop: runs iterations [begin, end) with the kernel's captured state. */
typedef void (*spl_range_fn)(void *closure, int64_t begin, int64_t end);

/* Number of worker threads (including the caller). Taken from SPL_NUM_THREADS if set, else the
 * hardware concurrency. */
int spl_num_threads(void);
/* Overrides the thread count for later calls (n <= 0 restores the default). */
void spl_set_num_threads(int n);

/* Runs fn over [begin, end) split into contiguous chunks of at least `grain` iterations, on the
 * pool, and returns when all chunks are done. Runs inline when the range is small, when only one
 * thread is configured, or when called from inside a pool worker (no nested parallelism).
 * Chunks of 64 iterations or more (and 16 more than the grain) start a multiple of 16
 * iterations past `begin`, so that a loop whose first iteration starts a cache line has every
 * chunk start on one. Each thread first runs the chunks of its own part of the range, the same
 * part from call to call (the caller the first), then helps with the others'. */
void spl_parallel_for(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn, void *closure);
/* The same, with the chunks handed to threads from the last to the first: a loop whose later
 * iterations do more work (a triangle's lengthening rows) then starts with its heaviest chunks,
 * and the threads finish together instead of one running the last, heaviest chunk alone.
 * Kernels call it where their loop's work grows (cin::Stmt::workGrowth). */
void spl_parallel_for_from_end(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn,
                               void *closure);
/* The same, with the chunks handed to threads first to last from one counter, for a caller's
 * own loops whose iterations' work is uneven and whose data does not stay in a core's caches
 * from call to call. Generated kernels no longer call it (until session 27 they did where their
 * loop's work shrinks, a triangle's columns, which now run from homes as spl_parallel_for:
 * repeated calls on the same data then find each part in the cache of the core that ran it
 * before; dspr 400 on two threads ran 1.21x faster so). */
void spl_parallel_for_shared(int64_t begin, int64_t end, int64_t grain, spl_range_fn fn,
                             void *closure);

/* Runs fn(closure, c, c + 1) for each chunk c in [0, nchunks), one chunk per task. Kernels that
 * balance work themselves (nnz-balanced rows) compute their own chunk boundaries and use this.
 * As in spl_parallel_for, each thread first runs the chunks of its own part (4 chunks or more a
 * part: fewer come from one counter). */
void spl_parallel_chunks(int64_t nchunks, spl_range_fn fn, void *closure);

/* nnz-balanced partition of rows [0, n) given row offsets (n + 1 entries, monotone): writes
 * nparts + 1 row boundaries to `bounds` (bounds[0] = 0, bounds[nparts] = n) so that each part
 * holds about the same number of nonzeros plus rows. Boundaries are nondecreasing (parts may be
 * empty when one row outweighs a share); a part exceeds its share by at most one row. Writes
 * nothing when n < 0 or nparts < 1. */
void spl_balance_rows_i32(const int32_t *offs, int64_t n, int64_t nparts, int64_t *bounds);
void spl_balance_rows_i64(const int64_t *offs, int64_t n, int64_t nparts, int64_t *bounds);

/* ---- Sigma precomputation ----------------------------------------------------------------- */
/* Exclusive prefix sum of n lengths: out[0] = 0, out[i + 1] = out[i] + lens[i]; out has n + 1
 * entries. Returns SPL_ERR_BAD_INPUT if a length is negative (out is then unspecified). Large n
 * runs in parallel on the pool. */
int spl_sigma_prefix_i32(const int32_t *lens, int64_t n, int64_t *out);
int spl_sigma_prefix_i64(const int64_t *lens, int64_t n, int64_t *out);

/* ---- SELL-C-sigma inspector --------------------------------------------------------------- */
/* The operands of stdlib/spmv.spl's spmv_sell_rows (and spmv_sell) from a CSR matrix of n rows
 * (offs: n + 1 monotone int32 offsets; row i's entries at offs[i] - offs[0] + k of cols, vals).
 * Rows are sorted by decreasing length (ties in row order) within windows of sigma rows, cut into
 * slices of `lanes` rows, each slice as wide as its longest row, stored slot-major: slot t of
 * slice s's l-th row at (soffs[s] + t) * lanes + l; padding holds value 0, column 0. wpos[r] is
 * the lane holding row r counted from the first lane of r's window (lanes past the last row: r's
 * own place in its window). lanes in [1, 1024]; sigma a multiple of lanes (the kernel's
 * SELL_WINDOW slices: sigma = SELL_WINDOW * lanes). Call spl_sell_sizes for the slices
 * (= ceil(n / lanes)) and slots (= soffs[slices]), then spl_sell_build_* with soffs (slices + 1),
 * scols and svals (slots * lanes) and wpos (slices * lanes). SPL_ERR_BAD_INPUT for bad sizes or
 * decreasing offsets, SPL_ERR_ALLOC when the slots pass INT32_MAX or memory runs out. Windows
 * run in parallel on the pool. */
int spl_sell_sizes(int64_t n, const int32_t *offs, int64_t lanes, int64_t sigma, int64_t *slices, int64_t *slots);
int spl_sell_build_f32(int64_t n, const int32_t *offs, const int32_t *cols, const float *vals, int64_t lanes,
                       int64_t sigma, int32_t *soffs, int32_t *scols, float *svals, int32_t *wpos);
int spl_sell_build_f64(int64_t n, const int32_t *offs, const int32_t *cols, const double *vals, int64_t lanes,
                       int64_t sigma, int32_t *soffs, int32_t *scols, double *svals, int32_t *wpos);
/* Of two windows (in rows, multiples of lanes, narrow <= wide), the one to build with: the narrow
 * one unless it stores more than SPL_SELL_WIDE_FILL times the wide one's slots. Rows of like
 * length side by side (banded and FEM matrices) pad little in any window, and a narrow window
 * keeps a slice's x accesses close; rows of very different lengths (power-law graphs) pad 2-3x
 * in a narrow window, which costs more than a wide one's scattered accesses. Checked against the
 * 31 matrices of the benchmark suite (benchmarks/results/2026-11-21-amd-epyc-2c-format-choice.md,
 * C = 8, windows of 8 and 64 slices): it picks the faster window on 27, every power-law graph
 * included (where 8 slices pad 1.8-3.3x and lose by 20-45%); the other 4 are small matrices held
 * in the cache, where 64 slices beat 8 by 3-9%. Costs two spl_sell_sizes. */
#define SPL_SELL_WIDE_FILL 1.25
int spl_sell_pick_sigma(int64_t n, const int32_t *offs, int64_t lanes, int64_t narrow, int64_t wide, int64_t *sigma);

/* The whole conversion in one call, as a plan makes it once per matrix: the window picked by
 * spl_sell_pick_sigma's rule, the operands allocated (spl_alloc, 64-byte aligned) and filled.
 * The slices' widths of both windows come from one pass (narrow windows nest in wide ones: wide
 * must be a multiple of narrow), and the buffers are not cleared before the fill writes every
 * slot, so the conversion reads the matrix about twice and writes the operands once; windows
 * run on the pool. `bytes` is the memory the operands hold. On failure *out is zeroed and
 * nothing stays allocated. Release with spl_sell_operands_free (a zeroed struct is fine). */
typedef struct {
  int64_t rows, lanes, sigma; /* n, C and the window (in rows) chosen */
  int64_t slices, slots;      /* ceil(n / lanes) and soffs[slices] */
  int32_t *soffs;             /* slices + 1 */
  int32_t *scols;             /* slots * lanes (at least 1) */
  void *svals;                /* slots * lanes (at least 1) of the converted precision */
  int32_t *wpos;              /* slices * lanes (at least 1) */
  int64_t bytes;
} spl_sell_operands;
int spl_sell_convert_f32(int64_t n, const int32_t *offs, const int32_t *cols, const float *vals, int64_t lanes,
                         int64_t narrow, int64_t wide, spl_sell_operands *out);
int spl_sell_convert_f64(int64_t n, const int32_t *offs, const int32_t *cols, const double *vals, int64_t lanes,
                         int64_t narrow, int64_t wide, spl_sell_operands *out);
void spl_sell_operands_free(spl_sell_operands *s);

/* DIA operands of stdlib/spmv.spl's spmv_dia from a CSR matrix (the conversion of a plan, and
 * for callers of spl_spmv_dia_*): the diagonals holding an entry whose column lies in [0, m), in
 * increasing offset (j - i), each stored whole (n values, 0 where the diagonal has no entry:
 * diags[k * n + i] = A(i, i + offsets[k])); duplicate entries add up; entries with a column
 * outside [0, m) are left out, as spmv_dia ignores them. Memory: diagonals x n values, however
 * few entries a diagonal holds, so count them first: spl_csr_diagonals sets *count to the number
 * of diagonals holding such entries, or to limit + 1 as soon as it passes limit (a scattered
 * matrix costs a few rows). Both take one pass on the pool. SPL_ERR_BAD_INPUT for
 * bad sizes (n and m at most INT32_MAX), null pointers or decreasing offsets, SPL_ERR_ALLOC when
 * memory runs out; on error nothing stays allocated. Release with spl_dia_operands_free. */
int spl_csr_diagonals(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t limit, int64_t *count);
typedef struct {
  int64_t rows, cols, diagonals;
  int32_t *offsets; /* diagonals (at least 1) */
  void *diags;      /* diagonals * rows values of the converted precision (at least 1) */
  int64_t bytes;
} spl_dia_operands;
int spl_dia_convert_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                        spl_dia_operands *out);
int spl_dia_convert_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                        spl_dia_operands *out);
void spl_dia_operands_free(spl_dia_operands *d);

/* BCSR operands of stdlib/spmv.spl's spmv_bcsr2/3 kernels from a CSR matrix (the conversion of a
 * plan, and for callers of spl_spmv_bcsr2/3_*): block_rows = ceil(n / b) block rows, block row I
 * holding rows b*I .. b*I + b - 1; its blocks are the distinct block columns J = j / b of those
 * rows' entries, in increasing J (bcols), and block k holds A(b*I + r, b*J + c) at
 * vals[(k * b + r) * b + c], 0 where A has no entry. The kernels read x as block_cols * b
 * entries (pad x with zeros where b does not divide m) and write block_rows * b entries of y.
 * Duplicate entries add up; entries with a column outside [0, m) are left out. Memory: blocks
 * x b x b values, so count the blocks first: spl_csr_blocks sets *blocks to their number (a
 * pass over the columns; fill = blocks * b * b / entries). Both run on the pool.
 * SPL_ERR_BAD_INPUT for b outside [1, 64], null pointers or decreasing offsets, SPL_ERR_ALLOC
 * for a copy over 2^31 blocks or when memory runs out; on error nothing stays allocated.
 * Release with spl_bcsr_operands_free. */
int spl_csr_blocks(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t b, int64_t *blocks);
typedef struct {
  int64_t rows, cols, block;      /* n, m, b */
  int64_t block_rows, block_cols; /* ceil(n / b), ceil(m / b) */
  int64_t blocks;
  int32_t *offs;  /* block_rows + 1, from 0 */
  int32_t *bcols; /* blocks (at least 1) */
  void *vals;     /* blocks * b * b values of the converted precision (at least 1) */
  int64_t bytes;
} spl_bcsr_operands;
int spl_bcsr_convert_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals, int64_t b,
                         spl_bcsr_operands *out);
int spl_bcsr_convert_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals, int64_t b,
                         spl_bcsr_operands *out);
void spl_bcsr_operands_free(spl_bcsr_operands *b);

/* A CSR matrix's transpose in CSR form (the matrix in CSC; the conversion of a plan for
 * y = A^T x): offs (m + 1 entries), for each column of A the rows holding an entry in increasing
 * row (rows_idx) and their values, so that a CSR SpMV over (m, n, offs, rows_idx, vals) computes
 * A^T x, adding each column's terms in increasing row. SPL_ERR_BAD_INPUT for bad sizes (n at most
 * INT32_MAX, m below it), null pointers, decreasing offsets or a column outside [0, m);
 * SPL_ERR_ALLOC when memory runs out; on error nothing stays allocated. Release with
 * spl_csc_operands_free. */
typedef struct {
  int64_t rows, cols, entries; /* of A: n, m, nnz */
  int32_t *offs;               /* m + 1 */
  int32_t *rows_idx;           /* entries (at least 1) */
  void *vals;                  /* entries (at least 1) of the converted precision */
  int64_t bytes;
} spl_csc_operands;
int spl_csc_convert_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                        spl_csc_operands *out);
int spl_csc_convert_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                        spl_csc_operands *out);
void spl_csc_operands_free(spl_csc_operands *c);

/* ---- What a plan reads of a matrix (issue 25, docs/plans.md) ------------------------------- */
/* spl_csr_inspect: one pass over a CSR matrix's offsets and columns (on the pool; the result
 * does not depend on the thread count). Row lengths: their extremes, mean, coefficient of
 * variation (standard deviation over mean), a histogram by powers of two (bucket 0: empty rows,
 * bucket b: lengths in [2^(b-1), 2^b), the last bucket open), and length_changes, the share of
 * rows whose length differs from the row before (near 0 for stencils and FEM blocks, near 1 for
 * random lengths: a CSR row loop's exit then mispredicts). Entries: the largest distance of a
 * column from the row's diagonal place (i * m / n), and the share farther than `near` = 64 + 4
 * ceil(mean) from it (scattered). The compulsory bytes of an SpMV in either precision, the
 * last-level cache and a core's L2 in bytes (0 where the system does not tell) and
 * spl_num_threads(). SPL_ERR_BAD_INPUT for bad sizes, null pointers or decreasing offsets (*out
 * is then zeroed). */
#define SPL_CSR_LENGTH_BUCKETS 34
typedef struct {
  int64_t rows, cols, entries, empty_rows;
  int64_t min_row, max_row;
  double mean_row, cv_row, length_changes;
  int64_t length_buckets[SPL_CSR_LENGTH_BUCKETS];
  int64_t bandwidth, near;
  double scattered;
  int64_t spmv_bytes_f64, spmv_bytes_f32, llc_bytes, l2_bytes;
  int threads;
} spl_csr_profile;
int spl_csr_inspect(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, spl_csr_profile *out);

/* ---- Plans: an SpMV kernel chosen once per matrix (issue 25, docs/plans.md) ----------------- */
/* The caller gives its CSR matrix, the number of calls it expects (hint_calls) and the kernels it
 * compiled: a CSR SpMV (stdlib/spmv.spl's spmv_csr: spl_spmv_csr_f64 and the like) and,
 * optionally, the SELL-C-sigma row kernels of the narrow and the wide window (spmv_sell_rows,
 * spmv_sell_rows_wide) with their lanes and windows in rows (SPL_SPMV_SELL_LANES_F64, and
 * SPL_SPMV_SELL_WINDOW / _WINDOW_WIDE times the lanes), the DIA kernel (spmv_dia:
 * spl_spmv_dia_f64/f32) and BCSR kernels with their block sizes (spmv_bcsr2/3:
 * spl_spmv_bcsr2_f64 with block 2, ...); a NULL kernel is not a candidate. The plan inspects the
 * matrix (spl_csr_inspect), times the CSR kernel, converts to DIA, BCSR or SELL-C-sigma only when hint_calls
 * could repay it, keeps a conversion only if it runs faster here, and explains its choice
 * (spl_plan_explain; also on stderr at planning when SPL_PLAN_EXPLAIN is set). spl_spmv_run_*
 * computes y = A x (y: n entries) with the chosen kernel. The CSR arrays must outlive the plan
 * and stay unchanged; one run at a time per plan. spl_plan_bytes: the memory the plan holds
 * beyond the caller's arrays (a converted copy); spl_plan_kernel: "csr", "csr-short" (csr_short),
 * "csr-two-sums" (csr_two_sums), "sell", "dia" or "bcsr".
 * A plan is of one product: spl_spmv_run_* refuses an SpMM plan and spl_spmm_run_* an SpMV one. */
typedef int (*spl_csr_spmv_f64_fn)(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                                   const double *x, double *y);
typedef int (*spl_csr_spmv_f32_fn)(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                                   const float *x, float *y);
typedef int (*spl_sell_spmv_f64_fn)(int64_t slices, int64_t m, const int32_t *soffs, const int32_t *scols,
                                    const double *svals, const int32_t *wpos, const double *x, double *y);
typedef int (*spl_sell_spmv_f32_fn)(int64_t slices, int64_t m, const int32_t *soffs, const int32_t *scols,
                                    const float *svals, const int32_t *wpos, const float *x, float *y);
typedef int (*spl_dia_spmv_f64_fn)(int64_t n, int64_t m, int64_t d, const int32_t *offsets, const double *diags,
                                   const double *x, double *y);
typedef int (*spl_dia_spmv_f32_fn)(int64_t n, int64_t m, int64_t d, const int32_t *offsets, const float *diags,
                                   const float *x, float *y);
typedef int (*spl_bcsr_spmv_f64_fn)(int64_t block_rows, int64_t block_cols, const int32_t *offs, const double *vals,
                                    const int32_t *bcols, const double *x, double *y);
typedef int (*spl_bcsr_spmv_f32_fn)(int64_t block_rows, int64_t block_cols, const int32_t *offs, const float *vals,
                                    const int32_t *bcols, const float *x, float *y);
typedef struct {
  int64_t block; /* b: the kernel's blocks are b x b */
  spl_bcsr_spmv_f64_fn kernel;
} spl_bcsr_kernel_f64;
typedef struct {
  int64_t block;
  spl_bcsr_spmv_f32_fn kernel;
} spl_bcsr_kernel_f32;
#define SPL_PLAN_BLOCK_SIZES 4
typedef struct {
  spl_csr_spmv_f64_fn csr;                       /* required */
  spl_sell_spmv_f64_fn sell_narrow, sell_wide;   /* optional (both or neither) */
  int64_t lanes, narrow, wide;                   /* C, and the windows in rows */
  spl_dia_spmv_f64_fn dia;                       /* optional */
  spl_bcsr_kernel_f64 bcsr[SPL_PLAN_BLOCK_SIZES]; /* optional, in increasing block size (blocks of a
                                                   * size under half full stop the count of larger
                                                   * ones); an entry of no kernel is none, a kernel
                                                   * with a block outside [1, 64] is refused */
  int64_t csr_masked_rows; /* 1: csr runs a row as masked whole vectors (what splc compiles for a
                            * CPU with AVX-512 and fast gathers; a header's SPL_<NAME>_MASKED_ROWS
                            * says it of its object), which in f64 runs long rows as fast as
                            * SELL-C-sigma, so the plan does not try SELL there; 0: it does */
  spl_csr_spmv_f64_fn csr_short; /* optional: the same product with each row one plain scalar loop
                                  * (stdlib's spl_spmv_csr_short_f64), which short rows run faster
                                  * than csr's versions of the row loop; taken where rows are
                                  * short (timed against csr where csr runs masked rows) */
  spl_csr_spmv_f64_fn csr_two_sums; /* optional: each row one scalar loop of two partial sums
                                     * (stdlib's spl_spmv_csr_two_sums_f64); timed against csr
                                     * where rows hold 32 to 255 entries on average, run in its
                                     * place when faster */
  spl_csr_spmv_f64_fn csr_prefetch; /* optional: csr_short whose gathers of x prefetch what they read
                                     * 128 entries ahead (stdlib's spl_spmv_csr_prefetch_f64); timed
                                     * against the CSR kernel where rows are short and x larger than
                                     * an L2, run in its place when faster */
} spl_spmv_kernels_f64;
typedef struct {
  spl_csr_spmv_f32_fn csr;
  spl_sell_spmv_f32_fn sell_narrow, sell_wide;
  int64_t lanes, narrow, wide;
  spl_dia_spmv_f32_fn dia;
  spl_bcsr_kernel_f32 bcsr[SPL_PLAN_BLOCK_SIZES];
  int64_t csr_masked_rows;
  spl_csr_spmv_f32_fn csr_short;
  spl_csr_spmv_f32_fn csr_two_sums;
  spl_csr_spmv_f32_fn csr_prefetch;
} spl_spmv_kernels_f32;
#ifndef SPL_PLAN_DECLARED /* also declared by an splc header with a plan */
#define SPL_PLAN_DECLARED
typedef struct spl_plan spl_plan;
#endif
int spl_spmv_plan_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals, int64_t hint_calls,
                      const spl_spmv_kernels_f64 *kernels, spl_plan **plan);
int spl_spmv_plan_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals, int64_t hint_calls,
                      const spl_spmv_kernels_f32 *kernels, spl_plan **plan);
/* y = A^T x for the same CSR arrays (y: m entries, x: n), planned: `transposed` is the caller's
 * kernel of that product over A's arrays (the C type of a CSR kernel: n, m, offs, cols, vals, x,
 * y), `csr` (optional) a CSR SpMV, which the plan may run over A's transpose, converted once
 * (spl_csc_convert_*) when hint_calls repay it and it runs faster here. `copy` (optional): the
 * kernels of a plan of that transpose (as spl_spmv_plan_*'s; its csr may be null, `csr` then),
 * which then chooses the copy's kernel among CSR, SELL-C-sigma, DIA and BCSR within this plan's
 * budget (SPL_PLAN_KERNEL=sell, dia or bcsr[B] forces the copy and its kernel). spl_spmv_run_*
 * runs either plan; spl_plan_kernel: "csr-t" (the caller's kernel) or "csc" (the copy; the
 * explanation names its kernel). */
typedef struct {
  spl_csr_spmv_f64_fn transposed;     /* required */
  spl_csr_spmv_f64_fn csr;            /* optional */
  const spl_spmv_kernels_f64 *copy;   /* optional */
} spl_spmv_t_kernels_f64;
typedef struct {
  spl_csr_spmv_f32_fn transposed;
  spl_csr_spmv_f32_fn csr;
  const spl_spmv_kernels_f32 *copy;
} spl_spmv_t_kernels_f32;
int spl_spmv_t_plan_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                        int64_t hint_calls, const spl_spmv_t_kernels_f64 *kernels, spl_plan **plan);
int spl_spmv_t_plan_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                        int64_t hint_calls, const spl_spmv_t_kernels_f32 *kernels, spl_plan **plan);
/* C = A B for the same CSR arrays and a dense B of k columns (m x k, row-major; C n x k),
 * planned for that k (issue 25 item 4, docs/plans.md). The kernels take the operands in the
 * order of stdlib/spmm.spl's einsums (the values before the columns): `csr` the caller's kernel
 * for any k (spmm_csr_T: spl_spmm_csr_f64), and, optionally, for up to SPL_SPMM_WIDTHS widths,
 * a CSR kernel of that fixed k (spmm_csr_w_T: spl_spmm_csr_w4_f64, which keeps a row's k sums in
 * registers) and BCSR kernels of that k with their block sizes (spmm_bcsr2_w_T, spmm_bcsr3_w_T:
 * block_rows, block_cols, offs, vals, bcols, B of block_cols * b rows, C of block_rows * b rows).
 * Planning times the caller's kernel, then, when an entry's width is k, its CSR kernel (no
 * conversion) and, where the blocks' bytes promise a gain that hint_calls repay, a BCSR copy
 * (spl_bcsr_convert_*), keeping the fastest; spl_plan_explain says why. spl_spmm_run_* computes
 * C = A B with the choice (B: m * k entries, C: n * k). Without an entry of width k, the CSR
 * kernels of the entries' widths over panels of B's and C's columns in place (k = 9 as 8 + 1).
 * spl_plan_kernel: "csr"
 * (the caller's), "csr-w" (the CSR kernel of width k), "csr-panels" or "bcsr". */
typedef int (*spl_csr_spmm_f64_fn)(int64_t n, int64_t m, int64_t k, const int32_t *offs, const double *vals,
                                   const int32_t *cols, const double *B, double *C);
typedef int (*spl_csr_spmm_f32_fn)(int64_t n, int64_t m, int64_t k, const int32_t *offs, const float *vals,
                                   const int32_t *cols, const float *B, float *C);
/* A CSR kernel of fixed width w reads B's rows at B + j * ldb and writes C's at C + i * ldc (w
 * columns each; C's others are left as they are): a plan runs it on panels of a wider B and C. */
typedef int (*spl_csr_spmm_width_f64_fn)(int64_t n, int64_t m, const int32_t *offs, const double *vals, const int32_t *cols,
                                         const double *B, int64_t ldb, double *C, int64_t ldc);
typedef int (*spl_csr_spmm_width_f32_fn)(int64_t n, int64_t m, const int32_t *offs, const float *vals, const int32_t *cols,
                                         const float *B, int64_t ldb, float *C, int64_t ldc);
#define SPL_SPMM_WIDTHS 16
typedef struct {
  int64_t width;                                  /* k of this entry's kernels (an entry of width 0 is none) */
  spl_csr_spmm_width_f64_fn csr;                  /* optional */
  spl_bcsr_kernel_f64 bcsr[SPL_PLAN_BLOCK_SIZES]; /* optional, as in spl_spmv_kernels_f64 (the kernel
                                                   * type is an SpMV's: its x and y hold width columns) */
} spl_spmm_width_f64;
typedef struct {
  int64_t width;
  spl_csr_spmm_width_f32_fn csr;
  spl_bcsr_kernel_f32 bcsr[SPL_PLAN_BLOCK_SIZES];
} spl_spmm_width_f32;
typedef struct {
  spl_csr_spmm_f64_fn csr; /* required */
  spl_spmm_width_f64 widths[SPL_SPMM_WIDTHS];
} spl_spmm_kernels_f64;
typedef struct {
  spl_csr_spmm_f32_fn csr;
  spl_spmm_width_f32 widths[SPL_SPMM_WIDTHS];
} spl_spmm_kernels_f32;
/* The table of stdlib/spmm.spl's kernels, T f32 or f64 (compile stdlib/spmm.spl with splc and
 * include its header): `spl_spmm_kernels_f64 k = SPL_SPMM_STDLIB_KERNELS(f64);` holds its
 * kernel of any k and, at widths 1-8, 10, 12, 16, 24, 32 and 64, its CSR kernels, with BCSR
 * ones of 2 x 2 blocks up to 16 and 3 x 3 up to 8 (the widths it exports). */
#define SPL_SPMM_W_(T, w, ...) {w, spl_spmm_csr_w##w##_##T, {__VA_ARGS__}}
#define SPL_SPMM_W23_(T, w) SPL_SPMM_W_(T, w, {2, spl_spmm_bcsr2_w##w##_##T}, {3, spl_spmm_bcsr3_w##w##_##T})
#define SPL_SPMM_W2_(T, w) SPL_SPMM_W_(T, w, {2, spl_spmm_bcsr2_w##w##_##T})
#define SPL_SPMM_STDLIB_KERNELS(T)                                                                                         \
  {spl_spmm_csr_##T,                                                                                                       \
   {SPL_SPMM_W23_(T, 1), SPL_SPMM_W23_(T, 2), SPL_SPMM_W23_(T, 3), SPL_SPMM_W23_(T, 4), SPL_SPMM_W23_(T, 5),             \
    SPL_SPMM_W23_(T, 6), SPL_SPMM_W23_(T, 7), SPL_SPMM_W23_(T, 8), SPL_SPMM_W2_(T, 10), SPL_SPMM_W2_(T, 12),              \
    SPL_SPMM_W2_(T, 16), SPL_SPMM_W_(T, 24, {0, 0}), SPL_SPMM_W_(T, 32, {0, 0}), SPL_SPMM_W_(T, 64, {0, 0})}}
int spl_spmm_plan_f64(int64_t n, int64_t m, int64_t k, const int32_t *offs, const int32_t *cols, const double *vals,
                      int64_t hint_calls, const spl_spmm_kernels_f64 *kernels, spl_plan **plan);
int spl_spmm_plan_f32(int64_t n, int64_t m, int64_t k, const int32_t *offs, const int32_t *cols, const float *vals,
                      int64_t hint_calls, const spl_spmm_kernels_f32 *kernels, spl_plan **plan);
int spl_spmm_run_f64(const spl_plan *plan, const double *B, double *C);
int spl_spmm_run_f32(const spl_plan *plan, const float *B, float *C);
int spl_spmv_run_f64(const spl_plan *plan, const double *x, double *y);
int spl_spmv_run_f32(const spl_plan *plan, const float *x, float *y);
const char *spl_plan_explain(const spl_plan *plan);
const char *spl_plan_kernel(const spl_plan *plan);
int64_t spl_plan_bytes(const spl_plan *plan);
void spl_plan_free(spl_plan *plan);

/* ---- CUDA (driver API through dlopen) ------------------------------------------------------ */
/* 1 when libcuda.so.1 could be loaded and cuInit succeeded with at least one device, else 0. */
int spl_cuda_available(void);

/* Launches kernel `name` of the PTX module `ptx` (NUL-terminated text) on `stream` (a CUstream,
 * NULL = default stream). `module_slot` points at a per-object cache cell (initially NULL) that
 * the runtime uses to remember the loaded module for the current context. `args` is the usual
 * array of pointers to the kernel parameters. Asynchronous: returns after the launch is queued.
 * Returns SPL_OK, or SPL_ERR_CUDA when the driver is missing or any driver call fails.
 * (Also SPL_ERR_BAD_INPUT when ptx, name or module_slot is NULL, SPL_ERR_ALLOC when the host
 * memory for the cache runs out.) Every spl_cuda_* call uses the calling thread's current
 * context, or makes device 0's primary context current when the thread has none. */
int spl_cuda_launch(const char *ptx, const char *name, void **module_slot,
                    uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                    uint32_t block_x, uint32_t block_y, uint32_t block_z,
                    uint32_t shared_bytes, void *stream, void **args);

/* Device memory for temporaries of cuda kernels (stream-ordered when the driver supports it).
 * bytes = 0 sets *dptr = NULL; freeing NULL does nothing. Both return SPL_ERR_CUDA without a
 * driver. */
int spl_cuda_alloc(void **dptr, size_t bytes, void *stream);
int spl_cuda_free(void *dptr, void *stream);
/* Device scratch of one call of a generated cuda function, from the runtime's workspace of
 * (the current context, `stream`): allocated once and grown when a call needs more, so that a
 * call in steady state allocates nothing. spl_cuda_call_begin opens a call (*call is its
 * handle); spl_cuda_call_alloc gives it `bytes` (256-byte aligned, contents undefined; NULL for
 * 0 bytes), valid for the work the call queues on `stream` before spl_cuda_call_end; a later
 * call on the stream may reuse the bytes (its work runs after). spl_cuda_call_counters gives
 * `words` 64-bit counter words and an epoch for this call on them, larger than every epoch
 * handed out before on those words: a word is (epoch << 32 | count), and a word of an earlier
 * epoch counts 0 (kernels that count arrivals across blocks lift it with an atomic max, then add;
 * nothing needs clearing). Calls from several host threads on
 * one stream get disjoint bytes. spl_cuda_call_end(NULL) does nothing. */
int spl_cuda_call_begin(void *stream, void **call);
int spl_cuda_call_alloc(void *call, size_t bytes, void **dptr);
int spl_cuda_call_counters(void *call, size_t words, void **dptr, uint32_t *epoch);
int spl_cuda_call_end(void *call);
/* Frees every workspace of the calling thread's current context that no call holds open
 * (waiting for the device to finish with it). Later calls allocate afresh. */
int spl_cuda_release_workspaces(void);

/* How many blocks of block_x threads of kernel `name` the device holds at once (its SMs times
 * the occupancy calculator's blocks per SM; at least 1, at most 65535), asked of the driver once
 * per kernel and block size: the grid of kernels that stride over their work with a fixed set of
 * resident threads (the merge-path row kernels). */
int spl_cuda_resident_blocks(const char *ptx, const char *name, void **module_slot,
                             uint32_t block_x, uint32_t *blocks);
/* The same, at most `per_sm` blocks on each multiprocessor (0: as many as fit): a kernel
 * whose schedule asks for B blocks a multiprocessor (gpu_merge(i, R, B), --gpu-merge-min-blocks)
 * runs on that many, though more might fit. */
int spl_cuda_resident_blocks_at_most(const char *ptx, const char *name, void **module_slot,
                                     uint32_t block_x, uint32_t per_sm, uint32_t *blocks);

/* Copies between host and device on `stream`; kind 0 = host to device, 1 = device to host,
 * 2 = device to device. Device-to-host copies synchronize the stream before returning. */
int spl_cuda_memcpy(void *dst, const void *src, size_t bytes, int kind, void *stream);

/* Device-side Sigma precomputation: exclusive prefix sum of n int32 lengths into n + 1 int64
 * entries, all device pointers, queued on `stream`. SPL_ERR_BAD_INPUT for n < 0 or a NULL
 * pointer; negative lengths are not detected on the device (they enter the sum). */
int spl_cuda_sigma_prefix_i32(const int32_t *lens, int64_t n, int64_t *out, void *stream);

/* The last CUDA driver error of the calling thread as text (empty string when none). For
 * diagnostics in tests; later successful calls do not clear it. */
const char *spl_cuda_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPL_RUNTIME_H */
