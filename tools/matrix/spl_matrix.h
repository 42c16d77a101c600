/* spl_matrix.h: sparse matrices for SPL kernels (library splmatrix, installed with SPL:
 * CMake SPL::splmatrix or SPL::splmatrix_shared, pkg-config splmatrix; docs/matrices.md).
 *
 * A program that links SPL kernels needs its matrices in the kernels' arrays: read from a
 * Matrix Market or Harwell-Boeing file, converted to the storage format its kernel's type names
 * (CSR, LIL, COO, CSC, ELL, DIA, BCSR, SELL-C-sigma, dense), laid out exactly as the C ABI of
 * the generated kernels expects them; the compiler's own tests and benchmarks also need random
 * matrices and a double-precision reference result to compare against. This library provides
 * that, and nothing else:
 *   - spl_csr, the one in-memory form everything is converted from;
 *   - readers for Matrix Market and Harwell-Boeing files that reject malformed input with a
 *     located message instead of crashing;
 *   - a seeded random generator whose output is the same on every machine;
 *   - conversions to the kernel formats (int32 indices, double and float values);
 *   - reference SpMV in double precision and a relative-error helper.
 *
 * Plain C99, usable from C and C++. No global state; every function is thread-safe as long as
 * the threads use different objects. Memory returned by the library is owned by the caller and
 * released with the matching *_free function (or free() for the bare arrays of the dense
 * conversions). Every *_free accepts a zero-initialised or already-freed object.
 *
 * Return codes: functions returning int give SPL_MATRIX_OK (0) on success and one of the other
 * SPL_MATRIX_* codes otherwise; on failure every output object is left zeroed (safe to free).
 */
#ifndef SPL_MATRIX_H
#define SPL_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Return codes ---------------------------------------------------------------------------
 * Distinct from the runtime's SPL_ERR_* codes on purpose: these are the library's own, not the
 * kernels' C ABI. */
#define SPL_MATRIX_OK 0
#define SPL_MATRIX_EINVAL 1  /* an argument is invalid (NULL pointer, negative size, bad kind) */
#define SPL_MATRIX_ENOMEM 2  /* an allocation failed, or the result would exceed the limits */
#define SPL_MATRIX_EFORMAT 3 /* the file is malformed or uses an unsupported variant */
#define SPL_MATRIX_EIO 4     /* the file could not be opened, read or written */

/* ---- Limits ---------------------------------------------------------------------------------
 * Indices are stored as int32 (the kernels' default index type), so no dimension may exceed
 * INT32_MAX. Readers and the generator also refuse dimensions above SPL_MATRIX_MAX_DIM so that a
 * tiny file declaring an absurd size cannot make the library allocate gigabytes: a CSR with
 * 2^27 rows already needs 1 GiB of row offsets. Define SPL_MATRIX_MAX_DIM when compiling the
 * library to move the limit (at most INT32_MAX). Entry counts read from a file are also checked
 * against the number of bytes that could hold them before anything is allocated. */
#ifndef SPL_MATRIX_MAX_DIM
#define SPL_MATRIX_MAX_DIM (INT64_C(1) << 27)
#endif

/* ---- The central form: compressed sparse rows ------------------------------------------------
 * Invariants (spl_csr_check verifies them):
 *   0 <= rows, cols <= SPL_MATRIX_MAX_DIM;
 *   offs has rows + 1 entries, offs[0] == 0, non-decreasing, offs[rows] == nnz;
 *   row i's entries are cols_idx[offs[i] .. offs[i+1]) with values vals[...] at the same
 *   positions; column indices are in [0, cols) and strictly increasing within a row (sorted,
 *   no duplicates: readers sum duplicate entries of a file in file order).
 * Explicitly stored zeros are kept: they are part of the sparsity structure. */
typedef struct {
  int64_t rows, cols, nnz;
  int64_t *offs;     /* rows + 1 row offsets */
  int32_t *cols_idx; /* nnz column indices, 0-based */
  double *vals;      /* nnz values */
} spl_csr;

void spl_csr_free(spl_csr *m);

/* Checks the invariants above. Returns SPL_MATRIX_OK, or SPL_MATRIX_EINVAL with a message in err
 * (err may be NULL; the message is truncated to errlen bytes including the terminator). */
int spl_csr_check(const spl_csr *m, char *err, size_t errlen);

/* Builds a CSR from n (row, column, value) triplets, 0-based, in any order. Duplicates are
 * summed in the order given. Fails with SPL_MATRIX_EINVAL on an index out of range. */
int spl_csr_from_coo(int64_t rows, int64_t cols, int64_t n, const int32_t *row_idx,
                     const int32_t *col_idx, const double *vals, spl_csr *out);

/* Builds a CSR from a rows x cols row-major dense array, storing the entries that are != 0. */
int spl_csr_from_dense(int64_t rows, int64_t cols, const double *dense, spl_csr *out);

/* ---- Files ----------------------------------------------------------------------------------
 * spl_read_matrix reads a Matrix Market or Harwell-Boeing file into *out.
 *
 * The format is decided by content: a file starting with "%%MatrixMarket" is Matrix Market;
 * otherwise the extension decides (.mtx/.mm: Matrix Market, so a missing banner is reported as
 * such; .rua/.rsa/.psa/... and .hb/.rb: Harwell-Boeing), and a file with another extension is
 * taken as Harwell-Boeing when its third line starts with a valid type code.
 *
 * Matrix Market: "%%MatrixMarket matrix coordinate|array real|integer|pattern
 * general|symmetric|skew-symmetric" (keywords case-insensitive). Comment (%) and blank lines are
 * skipped anywhere after the banner; each entry is alone on its line. Coordinate files: 1-based
 * indices, duplicates summed; pattern entries get value 1.0. Array files store every entry of
 * the matrix (column-major; the lower triangle for symmetric, the strict lower triangle for
 * skew-symmetric), and give a CSR in which every one of those entries is stored, zeros included.
 *
 * Harwell-Boeing: types R (real), P (pattern) and I (integer) with U/R (unsymmetric), S
 * (symmetric) or Z (skew-symmetric), assembled (third letter A). The header's Fortran formats
 * are honoured with fixed-width fields, as Fortran reads them: nIw, nEw.d, nDw.d, nFw.d, nGw.d,
 * nESw.d, optionally preceded by a scale factor kP (which, as in Fortran, applies only to fields
 * without an exponent). Exponents may use E or D, or be a bare signed number ("1.5-03"). The
 * right-hand-side line (line 5, present when RHSCRD > 0) is skipped, and the right-hand sides
 * themselves are not read (their cards must be present).
 *
 * Symmetric and skew-symmetric files store the lower triangle only (both formats' convention):
 * an entry above the diagonal is an error ("entry (1, 2) lies above the diagonal"), not mirrored
 * onto an entry the file may also hold. Symmetric matrices are expanded to both triangles
 * (diagonal entries once); skew-symmetric ones get the mirrored entry negated and may not have
 * a nonzero diagonal. Complex, Hermitian and elemental matrices are rejected as unsupported.
 *
 * Any malformed input (wrong header, counts that disagree, indices out of range, a truncated
 * file, non-numeric or non-finite values, negative or absurd sizes, NUL bytes) returns
 * SPL_MATRIX_EFORMAT and writes "PATH:LINE: message" into err, e.g.
 * "m.mtx:3: row index 0 out of range [1, 2]". Values are parsed with strtod, so the C numeric
 * locale ("." as the decimal point) must be in effect. */
int spl_read_matrix(const char *path, spl_csr *out, char *err, size_t errlen);

/* Writes m as "%%MatrixMarket matrix coordinate real general" with 1-based indices and values
 * printed with 17 significant digits, so that reading the file back gives the same doubles.
 * Returns SPL_MATRIX_EIO if the file cannot be written. */
int spl_write_matrix_market(const char *path, const spl_csr *m);

/* ---- Random matrices ------------------------------------------------------------------------
 * The generator is splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): state += 0x9E3779B97F4A7C15, then the output is the state mixed by
 * z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 * z ^ (z >> 31). Every random decision is made in integer arithmetic (bounded integers by
 * rejection sampling, values as multiples of 2^-52), so the matrix for a given seed is the same
 * on every machine, compiler and optimisation level. */
uint64_t spl_splitmix64_next(uint64_t *state);

typedef enum {
  /* Row i has a length drawn uniformly from [max(0, 2M - cols), min(cols, 2M)], where
   * M = round(density * cols): on average density * cols entries per row, lengths vary. */
  SPL_RANDOM_UNIFORM = 0,
  /* max(1, rows / 4) rows, chosen at random, are empty; every other row has at least one entry
   * (when cols > 0) and otherwise the UNIFORM length. */
  SPL_RANDOM_EMPTY_ROWS = 1,
  /* max(1, rows / 32) rows, chosen at random, are dense: a length uniform in
   * [ceil(cols / 2), cols]. The others have the UNIFORM length. With a small density this gives
   * the power-law-like imbalance that breaks naive row-per-thread kernels. */
  SPL_RANDOM_SKEWED = 2
} spl_random_kind;

/* Makes a rows x cols matrix of the given kind. The columns of each row are a uniformly chosen
 * subset of [0, cols); values are uniform in [-1, 1). density is in [0, 1] (M above). Shapes
 * 1 x N, N x 1 and 0 x N are fine; density 0 with SPL_RANDOM_UNIFORM gives nnz = 0. */
int spl_random_csr(int64_t rows, int64_t cols, double density, uint64_t seed, spl_random_kind kind,
                   spl_csr *out);

/* Fills out[0..n) with values uniform in [-1, 1) from the same generator (for x vectors). The
 * float version rounds the double values, so both give the same vector up to float rounding. */
void spl_random_vector(uint64_t seed, int64_t n, double *out);
void spl_random_vector_f32(uint64_t seed, int64_t n, float *out);

/* ---- Conversions to kernel formats ----------------------------------------------------------
 * All index arrays are int32 (the kernels' default index type); a conversion whose offsets would
 * not fit fails with SPL_MATRIX_ENOMEM. Value arrays come in double (vals) and float (vals_f32,
 * each element rounded from vals), so a test passes whichever its kernel's scalar type needs. */

/* Dense row-major copy: out[i * cols + j] = A(i, j). Returns NULL if the allocation fails or
 * rows * cols overflows; a 0-sized result is still a valid (non-NULL) allocation. Free with
 * free(). */
double *spl_csr_to_dense(const spl_csr *m);
float *spl_csr_to_dense_f32(const spl_csr *m);

/* CSR with int32 offsets and float values: the arrays spl_spmv_csr(n, m, offs, cols, vals, x,
 * out) takes. */
typedef struct {
  int64_t rows, cols, nnz;
  int32_t *offs;     /* rows + 1 */
  int32_t *cols_idx; /* nnz */
  float *vals;       /* nnz */
} spl_csr_f32;
int spl_csr_to_f32(const spl_csr *m, spl_csr_f32 *out);
void spl_csr_f32_free(spl_csr_f32 *m);

/* The same with double values: the arrays an f64 CSR SpMV (stdlib's spmv_csr_f64) takes. */
typedef struct {
  int64_t rows, cols, nnz;
  int32_t *offs;     /* rows + 1 */
  int32_t *cols_idx; /* nnz */
  double *vals;      /* nnz */
} spl_csr_f64;
int spl_csr_to_f64(const spl_csr *m, spl_csr_f64 *out);
void spl_csr_f64_free(spl_csr_f64 *m);

/* Coordinate list in row-major order (the order of the CSR). */
typedef struct {
  int64_t rows, cols, nnz;
  int32_t *row_idx, *col_idx; /* nnz each */
  double *vals;
  float *vals_f32;
} spl_coo;
int spl_csr_to_coo(const spl_csr *m, spl_coo *out);
void spl_coo_free(spl_coo *m);

/* Compressed sparse columns: column j's entries are row_idx/vals[offs[j] .. offs[j+1]), rows
 * increasing. These are exactly the CSR arrays of the transpose (see spl_csr_transpose). */
typedef struct {
  int64_t rows, cols, nnz;
  int32_t *offs; /* cols + 1 */
  int32_t *row_idx;
  double *vals;
  float *vals_f32;
} spl_csc;
int spl_csr_to_csc(const spl_csr *m, spl_csc *out);
void spl_csc_free(spl_csc *m);

/* The transpose as a CSR (cols x rows). */
int spl_csr_transpose(const spl_csr *m, spl_csr *out);

/* ELL: every row padded to width = the longest row's length. Slot k of row i is at
 * i * width + k (row-major, "n.w.(T, idx)") or k * rows + i (column-major, "w.n", as GPU
 * libraries store it). Row i's entries fill slots 0 .. len(i) - 1 in column order; padding
 * slots hold value 0 and column 0. */
typedef enum { SPL_ELL_ROW_MAJOR = 0, SPL_ELL_COL_MAJOR = 1 } spl_ell_layout;
typedef struct {
  int64_t rows, cols, width;
  spl_ell_layout layout;
  int32_t *cols_idx; /* rows * width */
  double *vals;      /* rows * width */
  float *vals_f32;
} spl_ell;
int spl_csr_to_ell(const spl_csr *m, spl_ell_layout layout, spl_ell *out);
void spl_ell_free(spl_ell *m);

/* DIA: one stored diagonal per offset off = j - i that holds at least one entry, offsets in
 * increasing order. data[k * rows + i] = A(i, i + offsets[k]), and 0 where i + offsets[k] falls
 * outside [0, cols). */
typedef struct {
  int64_t rows, cols, ndiags;
  int32_t *offsets; /* ndiags */
  double *data;     /* ndiags * rows */
  float *data_f32;
} spl_dia;
int spl_csr_to_dia(const spl_csr *m, spl_dia *out);
void spl_dia_free(spl_dia *m);

/* BCSR with b x b blocks. The matrix is padded with zero rows and columns up to
 * block_rows * b by block_cols * b (block_rows = ceil(rows / b), block_cols = ceil(cols / b)).
 * Block row I holds the blocks offs[I] .. offs[I+1] - 1, one per block column that contains an
 * entry, in increasing block_cols_idx order. Block t is b * b values at blocks[t * b * b],
 * row-major inside the block: blocks[t*b*b + r*b + c] = A(I*b + r, J*b + c). */
typedef struct {
  int64_t rows, cols, block, block_rows, block_cols, nblocks;
  int32_t *offs;           /* block_rows + 1 */
  int32_t *block_cols_idx; /* nblocks */
  double *blocks;          /* nblocks * block * block */
  float *blocks_f32;
} spl_bcsr;
int spl_csr_to_bcsr(const spl_csr *m, int64_t block, spl_bcsr *out);
void spl_bcsr_free(spl_bcsr *m);

/* LIL as the language's `n..(i => toNat(lens@i).(T, idx[m]))`: a length per row, and the rows'
 * column indices and values stored back to back (row i starts after the lens[0..i) entries of
 * the rows before it; there is no offsets array). */
typedef struct {
  int64_t rows, cols, nnz;
  int32_t *lens;     /* rows */
  int32_t *cols_idx; /* nnz */
  double *vals;
  float *vals_f32;
} spl_lil;
int spl_csr_to_lil(const spl_csr *m, spl_lil *out);
void spl_lil_free(spl_lil *m);

/* SELL-C-sigma (Kreutzer, Hager, Wellein, Fehske, Bishop, SISC 2014): the rows, sorted by
 * decreasing length (ties in row order) within windows of `sigma` consecutive rows, are cut into
 * slices of `lanes` consecutive sorted rows. Slice s is as wide as its longest row: it holds
 * width(s) = soffs[s+1] - soffs[s] slots, stored slot-major, so the entry in slot t of the
 * slice's l-th row is at (soffs[s] + t) * lanes + l. A row fills its slots 0 .. len - 1 in column
 * order; padding holds value 0 and column 0. perm[s * lanes + l] is the original row of that
 * lane, -1 past the last row; pos is its inverse (pos[perm[r]] = r). When sigma is a multiple of
 * lanes (windows are whole slices), wpos[r] is pos[r] counted from the first lane of r's window,
 * for r < slices * lanes (lanes past the last row: r's own place in its window); otherwise NULL.
 * With sigma = 1 the rows keep their order and perm is the identity;
 * a larger sigma gathers rows of like length into a slice (less padding) and keeps x's accesses
 * within the window. These are stdlib/spmv.spl's `spmv_sell` operands; its result is in slice
 * order, which stdlib's `sell_rows` (out[i] = ys[pos[i]]) or spl_sell_unpermute puts back in
 * row order; `spmv_sell_rows` (with wpos, sigma = SELL_WINDOW * lanes) gives it in row order. */
typedef struct {
  int64_t rows, cols, nnz;
  int64_t lanes, sigma, slices;
  int32_t *soffs;    /* slices + 1 slot offsets, soffs[0] = 0 */
  int32_t *cols_idx; /* soffs[slices] * lanes */
  double *vals;      /* soffs[slices] * lanes */
  float *vals_f32;
  int32_t *perm;     /* slices * lanes */
  int32_t *pos;      /* rows */
  int32_t *wpos;     /* slices * lanes, or NULL */
} spl_sell;
int spl_csr_to_sell(const spl_csr *m, int64_t lanes, int64_t sigma, spl_sell *out);
void spl_sell_free(spl_sell *m);
/* y[perm[r]] = ys[r] for every lane r of the slices that holds a row (ys: slices * lanes). */
void spl_sell_unpermute(const spl_sell *m, const double *ys, double *y);
void spl_sell_unpermute_f32(const spl_sell *m, const float *ys, float *y);

/* ---- References -----------------------------------------------------------------------------
 * y = A x (x: cols entries, y: rows entries) and y = A^T x (x: rows, y: cols), in double
 * precision, summing each output in increasing index order of the CSR. y must not alias x. */
void spl_ref_spmv(const spl_csr *m, const double *x, double *y);
void spl_ref_spmv_transposed(const spl_csr *m, const double *x, double *y);

/* Relative error of a computed vector against a reference:
 *   max_i |got_i - want_i| / max(1, max_i |want_i|)
 * i.e. the largest absolute error, scaled down by the largest reference magnitude when that
 * exceeds 1 (so tiny references are compared absolutely, large ones relatively). Returns 0 for
 * n == 0, and +infinity if any got_i or want_i is NaN or infinite, so a broken kernel never
 * passes a "<= tolerance" check by producing NaN. */
double spl_rel_error(const float *got, const double *want, int64_t n);
double spl_rel_error_f64(const double *got, const double *want, int64_t n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPL_MATRIX_H */
