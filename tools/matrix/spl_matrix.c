/* spl_matrix.c: the splmatrix library (see spl_matrix.h for the contract of each function).
 *
 * Sections, in order: small helpers; CSR construction and checking; reading files into lines
 * and numbers; the Matrix Market reader; the Harwell-Boeing reader; format detection and the
 * writer; the random generator; conversions to kernel formats; reference SpMV and errors.
 *
 * Readers never trust a count before checking it against the bytes or lines that remain in the
 * file, and never index a line beyond its length: every header value that sizes an allocation
 * is bounded first, so malformed files fail with a message instead of exhausting memory.
 */
#include "spl_matrix.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define SPL_PRINTF_LIKE(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define SPL_PRINTF_LIKE(fmt_index, first_arg)
#endif

/* ==== Small helpers ========================================================================= */

/* malloc for count elements; NULL when the byte count overflows. Never asks for 0 bytes, so a
 * successful empty allocation is distinguishable from failure. */
static void *alloc_array(int64_t count, size_t elem_size) {
  if (count < 0 || (uint64_t)count > SIZE_MAX / elem_size)
    return NULL;
  size_t bytes = (size_t)count * elem_size;
  return malloc(bytes ? bytes : 1);
}

static void *alloc_zeroed(int64_t count, size_t elem_size) {
  if (count < 0 || (uint64_t)count > SIZE_MAX / elem_size)
    return NULL;
  return calloc(count ? (size_t)count : 1, elem_size);
}

static void write_message(char *err, size_t errlen, const char *fmt, ...) SPL_PRINTF_LIKE(3, 4);
static void write_message(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0)
    return;
  va_list args;
  va_start(args, fmt);
  vsnprintf(err, errlen, fmt, args);
  va_end(args);
}

static int valid_dimension(int64_t n) { return n >= 0 && n <= SPL_MATRIX_MAX_DIM; }

static float *doubles_to_floats(const double *vals, int64_t n) {
  float *out = (float *)alloc_array(n, sizeof(float));
  if (!out)
    return NULL;
  for (int64_t k = 0; k < n; ++k)
    out[k] = (float)vals[k];
  return out;
}

/* ==== CSR construction and checking ========================================================= */

void spl_csr_free(spl_csr *m) {
  if (!m)
    return;
  free(m->offs);
  free(m->cols_idx);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

int spl_csr_check(const spl_csr *m, char *err, size_t errlen) {
  if (!m) {
    write_message(err, errlen, "matrix is NULL");
    return SPL_MATRIX_EINVAL;
  }
  if (!valid_dimension(m->rows) || !valid_dimension(m->cols) || m->nnz < 0) {
    write_message(err, errlen, "bad sizes %lld x %lld with %lld entries", (long long)m->rows,
                  (long long)m->cols, (long long)m->nnz);
    return SPL_MATRIX_EINVAL;
  }
  if (!m->offs || (m->nnz > 0 && (!m->cols_idx || !m->vals))) {
    write_message(err, errlen, "missing array");
    return SPL_MATRIX_EINVAL;
  }
  if (m->offs[0] != 0 || m->offs[m->rows] != m->nnz) {
    write_message(err, errlen, "offs[0] = %lld and offs[rows] = %lld, expected 0 and nnz = %lld",
                  (long long)m->offs[0], (long long)m->offs[m->rows], (long long)m->nnz);
    return SPL_MATRIX_EINVAL;
  }
  for (int64_t i = 0; i < m->rows; ++i) {
    if (m->offs[i + 1] < m->offs[i] || m->offs[i + 1] > m->nnz) {
      write_message(err, errlen, "row offsets not monotone at row %lld", (long long)i);
      return SPL_MATRIX_EINVAL;
    }
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k) {
      int32_t col = m->cols_idx[k];
      if (col < 0 || col >= m->cols) {
        write_message(err, errlen, "row %lld: column %ld out of range [0, %lld)", (long long)i,
                      (long)col, (long long)m->cols);
        return SPL_MATRIX_EINVAL;
      }
      if (k > m->offs[i] && col <= m->cols_idx[k - 1]) {
        write_message(err, errlen, "row %lld: columns not strictly increasing at position %lld",
                      (long long)i, (long long)k);
        return SPL_MATRIX_EINVAL;
      }
    }
  }
  return SPL_MATRIX_OK;
}

/* One triplet while a row is being sorted; `order` is the triplet's input position, the tie
 * break that makes duplicates sum in input order whatever qsort does with equal keys. */
typedef struct {
  int32_t col;
  int64_t order;
  double val;
} row_entry;

static int compare_row_entries(const void *a, const void *b) {
  const row_entry *x = (const row_entry *)a, *y = (const row_entry *)b;
  if (x->col != y->col)
    return x->col < y->col ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

/* Bucket the triplets by row (a stable counting scatter into `entries`); offs ends up holding
 * each row's start. */
static void scatter_by_row(int64_t rows, int64_t n, const int32_t *row_idx, const int32_t *col_idx,
                           const double *vals, int64_t *offs, row_entry *entries) {
  for (int64_t k = 0; k < n; ++k)
    ++offs[row_idx[k] + 1];
  for (int64_t i = 0; i < rows; ++i)
    offs[i + 1] += offs[i];
  for (int64_t k = 0; k < n; ++k) {
    row_entry *e = &entries[offs[row_idx[k]]++];
    e->col = col_idx[k];
    e->order = k;
    e->val = vals[k];
  }
  for (int64_t i = rows; i > 0; --i)
    offs[i] = offs[i - 1];
  offs[0] = 0;
}

/* Sorts each row, sums duplicates and writes the compacted rows; returns the final nnz. */
static int64_t compact_rows(int64_t rows, int64_t *offs, row_entry *entries, int32_t *cols_out,
                            double *vals_out) {
  int64_t written = 0, row_start = 0;
  for (int64_t i = 0; i < rows; ++i) {
    int64_t row_end = offs[i + 1];
    qsort(entries + row_start, (size_t)(row_end - row_start), sizeof(row_entry),
          compare_row_entries);
    int64_t first_of_row = written;
    for (int64_t k = row_start; k < row_end; ++k) {
      if (written > first_of_row && cols_out[written - 1] == entries[k].col) {
        vals_out[written - 1] += entries[k].val;
        continue;
      }
      cols_out[written] = entries[k].col;
      vals_out[written] = entries[k].val;
      ++written;
    }
    offs[i] = first_of_row;
    row_start = row_end;
  }
  offs[rows] = written;
  return written;
}

int spl_csr_from_coo(int64_t rows, int64_t cols, int64_t n, const int32_t *row_idx,
                     const int32_t *col_idx, const double *vals, spl_csr *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!valid_dimension(rows) || !valid_dimension(cols) || n < 0 ||
      (n > 0 && (!row_idx || !col_idx || !vals)))
    return SPL_MATRIX_EINVAL;
  for (int64_t k = 0; k < n; ++k)
    if (row_idx[k] < 0 || row_idx[k] >= rows || col_idx[k] < 0 || col_idx[k] >= cols)
      return SPL_MATRIX_EINVAL;

  int64_t *offs = (int64_t *)alloc_zeroed(rows + 1, sizeof(int64_t));
  row_entry *entries = (row_entry *)alloc_array(n, sizeof(row_entry));
  int32_t *cols_out = (int32_t *)alloc_array(n, sizeof(int32_t));
  double *vals_out = (double *)alloc_array(n, sizeof(double));
  if (!offs || !entries || !cols_out || !vals_out) {
    free(offs);
    free(entries);
    free(cols_out);
    free(vals_out);
    return SPL_MATRIX_ENOMEM;
  }
  scatter_by_row(rows, n, row_idx, col_idx, vals, offs, entries);
  int64_t nnz = compact_rows(rows, offs, entries, cols_out, vals_out);
  free(entries);

  out->rows = rows;
  out->cols = cols;
  out->nnz = nnz;
  out->offs = offs;
  out->cols_idx = cols_out;
  out->vals = vals_out;
  return SPL_MATRIX_OK;
}

int spl_csr_from_dense(int64_t rows, int64_t cols, const double *dense, spl_csr *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!valid_dimension(rows) || !valid_dimension(cols) || (rows * cols > 0 && !dense))
    return SPL_MATRIX_EINVAL;
  int64_t nnz = 0;
  for (int64_t k = 0; k < rows * cols; ++k)
    nnz += dense[k] != 0.0;
  out->offs = (int64_t *)alloc_array(rows + 1, sizeof(int64_t));
  out->cols_idx = (int32_t *)alloc_array(nnz, sizeof(int32_t));
  out->vals = (double *)alloc_array(nnz, sizeof(double));
  if (!out->offs || !out->cols_idx || !out->vals) {
    spl_csr_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  out->rows = rows;
  out->cols = cols;
  out->nnz = nnz;
  int64_t written = 0;
  out->offs[0] = 0;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double v = dense[i * cols + j];
      if (v == 0.0)
        continue;
      out->cols_idx[written] = (int32_t)j;
      out->vals[written] = v;
      ++written;
    }
    out->offs[i + 1] = written;
  }
  return SPL_MATRIX_OK;
}

/* ==== Reading files: lines, fields and numbers ============================================== */

typedef struct {
  const char *begin;
  size_t len;
} span;

/* A file held in memory and read line by line; also carries where error messages go. */
typedef struct {
  const char *path;
  const char *text; /* the whole file */
  size_t size;
  size_t next;  /* offset of the first byte of the next line */
  int64_t line; /* 1-based number of the line last returned by next_line (0: none yet) */
  char *err;
  size_t errlen;
} source;

static int fail_at(const source *src, int64_t line, const char *fmt, ...) SPL_PRINTF_LIKE(3, 4);
static int fail_at(const source *src, int64_t line, const char *fmt, ...) {
  if (src->err && src->errlen) {
    int used = snprintf(src->err, src->errlen, "%s:%lld: ", src->path, (long long)line);
    if (used >= 0 && (size_t)used < src->errlen) {
      va_list args;
      va_start(args, fmt);
      vsnprintf(src->err + used, src->errlen - (size_t)used, fmt, args);
      va_end(args);
    }
  }
  return SPL_MATRIX_EFORMAT;
}

static int fail_out_of_memory(const source *src, const char *what) {
  write_message(src->err, src->errlen, "%s: out of memory while reading %s", src->path, what);
  return SPL_MATRIX_ENOMEM;
}

/* Returns the next line without its terminator ("\n" or "\r\n"); 0 at the end of the file. */
static int next_line(source *src, span *line) {
  if (src->next >= src->size)
    return 0;
  const char *begin = src->text + src->next;
  size_t left = src->size - src->next;
  const char *newline = (const char *)memchr(begin, '\n', left);
  size_t len = newline ? (size_t)(newline - begin) : left;
  src->next += len + (newline ? 1 : 0);
  if (len > 0 && begin[len - 1] == '\r')
    --len;
  ++src->line;
  line->begin = begin;
  line->len = len;
  return 1;
}

static int64_t lines_left(const source *src) {
  int64_t count = 0;
  const char *p = src->text + src->next, *end = src->text + src->size;
  while (p < end) {
    const char *newline = (const char *)memchr(p, '\n', (size_t)(end - p));
    ++count;
    if (!newline)
      break;
    p = newline + 1;
  }
  return count;
}

static int is_blank_char(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static span trim(span s) {
  while (s.len > 0 && is_blank_char(s.begin[0])) {
    ++s.begin;
    --s.len;
  }
  while (s.len > 0 && is_blank_char(s.begin[s.len - 1]))
    --s.len;
  return s;
}

/* Splits a line at blanks. Stores at most max_fields fields but returns how many there are. */
static int split_fields(span line, span *fields, int max_fields) {
  int count = 0;
  size_t i = 0;
  while (i < line.len) {
    while (i < line.len && is_blank_char(line.begin[i]))
      ++i;
    if (i == line.len)
      break;
    size_t start = i;
    while (i < line.len && !is_blank_char(line.begin[i]))
      ++i;
    if (count < max_fields) {
      fields[count].begin = line.begin + start;
      fields[count].len = i - start;
    }
    if (count < 1000000)
      ++count;
  }
  return count;
}

static char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c; }

static int equals_nocase(span s, const char *word) {
  size_t n = strlen(word);
  if (s.len != n)
    return 0;
  for (size_t i = 0; i < n; ++i)
    if (ascii_upper(s.begin[i]) != ascii_upper(word[i]))
      return 0;
  return 1;
}

/* Skips blank lines and % comments; returns 0 at the end of the file. */
static int next_content_line(source *src, span *line) {
  while (next_line(src, line)) {
    span t = trim(*line);
    if (t.len > 0 && t.begin[0] != '%')
      return 1;
  }
  return 0;
}

/* A field quoted for a message into the caller's buffer of QUOTE_SIZE bytes: at most 24
 * characters, unprintable bytes shown as '?'. (A caller buffer rather than a returned struct: in
 * C99 a struct returned by value dies at the next sequence point, before printf reads it.) */
enum { QUOTE_SIZE = 32 };

static const char *quote(span s, char *buffer) {
  size_t n = s.len < 24 ? s.len : 24, i;
  for (i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)s.begin[i];
    buffer[i] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  if (s.len > n) {
    memcpy(buffer + i, "...", 3);
    i += 3;
  }
  buffer[i] = '\0';
  return buffer;
}

typedef enum { NUMBER_OK, NUMBER_SYNTAX, NUMBER_RANGE } number_status;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A decimal integer filling the whole span: [+-]digits. */
static number_status parse_int_text(span s, int64_t *out) {
  size_t i = 0;
  int negative = 0;
  if (i < s.len && (s.begin[i] == '+' || s.begin[i] == '-'))
    negative = s.begin[i++] == '-';
  if (i == s.len)
    return NUMBER_SYNTAX;
  uint64_t magnitude = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  int overflow = 0;
  for (; i < s.len; ++i) {
    if (!is_digit(s.begin[i]))
      return NUMBER_SYNTAX;
    unsigned digit = (unsigned)(s.begin[i] - '0');
    if (magnitude > (limit - digit) / 10)
      overflow = 1;
    else
      magnitude = magnitude * 10 + digit;
  }
  if (overflow)
    return NUMBER_RANGE;
  *out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
  return NUMBER_OK;
}

/* How a real number is spelled in the file. Matrix Market allows the usual decimal forms only;
 * Fortran fields also allow a bare signed exponent ("1.5-03"), an implied decimal point
 * (`implied_decimals` digits from the right when the field has no '.') and a kP scale factor
 * (divides by 10^k when the field has no exponent). */
typedef struct {
  int fortran;
  int implied_decimals;
  int scale;
} real_syntax;

enum { MAX_NUMBER_CHARS = 256 };

static number_status parse_exponent_digits(span s, size_t *i, long *exponent) {
  int negative = 0;
  if (*i < s.len && (s.begin[*i] == '+' || s.begin[*i] == '-'))
    negative = s.begin[(*i)++] == '-';
  size_t first = *i;
  long value = 0;
  for (; *i < s.len && is_digit(s.begin[*i]); ++*i)
    if (value < 1000000)
      value = value * 10 + (s.begin[*i] - '0');
  if (*i == first)
    return NUMBER_SYNTAX;
  *exponent = negative ? -value : value;
  return NUMBER_OK;
}

/* Validates the spelling by hand, then lets strtod do the correctly rounded conversion of a
 * normalised copy ("<sign><mantissa>e<exponent>"), so D exponents, implied points and scale
 * factors all reach strtod in its own syntax. Rejects inf, nan, hex and non-finite results. */
static number_status parse_real_text(span s, real_syntax syntax, double *out) {
  if (s.len == 0 || s.len > MAX_NUMBER_CHARS)
    return NUMBER_SYNTAX;
  char buffer[MAX_NUMBER_CHARS + 32];
  size_t i = 0, w = 0;
  if (s.begin[i] == '+' || s.begin[i] == '-')
    buffer[w++] = s.begin[i++];
  int digits = 0, has_point = 0;
  for (; i < s.len; ++i) {
    char c = s.begin[i];
    if (is_digit(c))
      ++digits;
    else if (c == '.' && !has_point)
      has_point = 1;
    else
      break;
    buffer[w++] = c;
  }
  if (digits == 0)
    return NUMBER_SYNTAX;
  long exponent = 0;
  int has_exponent = 0;
  if (i < s.len) {
    char c = ascii_upper(s.begin[i]);
    int letter = c == 'E' || c == 'D' || (syntax.fortran && c == 'Q');
    int bare_sign = syntax.fortran && (c == '+' || c == '-');
    if (!letter && !bare_sign)
      return NUMBER_SYNTAX;
    if (letter)
      ++i;
    if (parse_exponent_digits(s, &i, &exponent) != NUMBER_OK)
      return NUMBER_SYNTAX;
    has_exponent = 1;
  }
  if (i != s.len)
    return NUMBER_SYNTAX;
  if (syntax.fortran && !has_point)
    exponent -= syntax.implied_decimals;
  if (syntax.fortran && !has_exponent)
    exponent -= syntax.scale;
  snprintf(buffer + w, sizeof buffer - w, "e%ld", exponent);
  char *end = NULL;
  double value = strtod(buffer, &end);
  if (!end || *end != '\0')
    return NUMBER_SYNTAX;
  if (!isfinite(value))
    return NUMBER_RANGE;
  *out = value;
  return NUMBER_OK;
}

/* ==== Loading a whole file ================================================================== */

static int load_file(const char *path, char **text, size_t *size, char *err, size_t errlen) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    write_message(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return SPL_MATRIX_EIO;
  }
  size_t capacity = 1 << 16, used = 0;
  char *buffer = (char *)malloc(capacity + 1);
  while (buffer) {
    used += fread(buffer + used, 1, capacity - used, file);
    if (used < capacity)
      break;
    char *grown = capacity <= SIZE_MAX / 4 ? (char *)realloc(buffer, capacity * 2 + 1) : NULL;
    if (!grown) {
      free(buffer);
      buffer = NULL;
      break;
    }
    buffer = grown;
    capacity *= 2;
  }
  int read_failed = ferror(file);
  int saved_errno = errno;
  fclose(file);
  if (!buffer) {
    write_message(err, errlen, "%s: out of memory reading the file", path);
    return SPL_MATRIX_ENOMEM;
  }
  if (read_failed) {
    free(buffer);
    write_message(err, errlen, "%s: cannot read: %s", path, strerror(saved_errno));
    return SPL_MATRIX_EIO;
  }
  buffer[used] = '\0';
  *text = buffer;
  *size = used;
  return SPL_MATRIX_OK;
}

static int64_t line_of_offset(const char *text, size_t offset) {
  int64_t line = 1;
  for (size_t i = 0; i < offset; ++i)
    line += text[i] == '\n';
  return line;
}

/* ==== Triplets collected by the readers ===================================================== */

typedef struct {
  int64_t count, capacity;
  int32_t *rows, *cols;
  double *vals;
} triplets;

static int triplets_init(triplets *t, int64_t capacity) {
  memset(t, 0, sizeof *t);
  t->capacity = capacity;
  t->rows = (int32_t *)alloc_array(capacity, sizeof(int32_t));
  t->cols = (int32_t *)alloc_array(capacity, sizeof(int32_t));
  t->vals = (double *)alloc_array(capacity, sizeof(double));
  return t->rows && t->cols && t->vals;
}

static void triplets_free(triplets *t) {
  free(t->rows);
  free(t->cols);
  free(t->vals);
  memset(t, 0, sizeof *t);
}

typedef enum { SYMMETRY_GENERAL, SYMMETRY_SYMMETRIC, SYMMETRY_SKEW } symmetry;

/* Adds A(row, col) = val and, for symmetric storage, its mirror. Capacity was reserved for two
 * triplets per stored entry. */
static void add_entry(triplets *t, symmetry sym, int32_t row, int32_t col, double val) {
  t->rows[t->count] = row;
  t->cols[t->count] = col;
  t->vals[t->count] = val;
  ++t->count;
  if (sym == SYMMETRY_GENERAL || row == col)
    return;
  t->rows[t->count] = col;
  t->cols[t->count] = row;
  t->vals[t->count] = sym == SYMMETRY_SKEW ? -val : val;
  ++t->count;
}

static int finish_triplets(const source *src, int64_t rows, int64_t cols, triplets *t,
                           spl_csr *out) {
  int status = spl_csr_from_coo(rows, cols, t->count, t->rows, t->cols, t->vals, out);
  triplets_free(t);
  if (status == SPL_MATRIX_ENOMEM)
    return fail_out_of_memory(src, "the entries");
  return status;
}

/* ==== Matrix Market ========================================================================= */

typedef enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN } value_field;

typedef struct {
  int is_array;
  value_field field;
  symmetry sym;
} mm_banner;

static int mm_read_banner(source *src, mm_banner *banner) {
  char shown[QUOTE_SIZE];
  span line, words[6];
  if (!next_line(src, &line))
    return fail_at(src, 1, "empty file");
  int count = split_fields(line, words, 6);
  if (count < 1 || !equals_nocase(words[0], "%%MatrixMarket"))
    return fail_at(src, src->line, "expected a '%%%%MatrixMarket' banner, got '%s'",
                   quote(line, shown));
  if (count != 5)
    return fail_at(src, src->line,
                   "banner needs 4 words after %%%%MatrixMarket (object format field symmetry), "
                   "got %d",
                   count - 1);
  if (!equals_nocase(words[1], "matrix"))
    return fail_at(src, src->line, "unsupported object '%s' (only 'matrix')",
                   quote(words[1], shown));

  if (equals_nocase(words[2], "coordinate"))
    banner->is_array = 0;
  else if (equals_nocase(words[2], "array"))
    banner->is_array = 1;
  else
    return fail_at(src, src->line, "unknown format '%s' (expected coordinate or array)",
                   quote(words[2], shown));

  if (equals_nocase(words[3], "real") || equals_nocase(words[3], "double"))
    banner->field = FIELD_REAL;
  else if (equals_nocase(words[3], "integer"))
    banner->field = FIELD_INTEGER;
  else if (equals_nocase(words[3], "pattern"))
    banner->field = FIELD_PATTERN;
  else if (equals_nocase(words[3], "complex"))
    return fail_at(src, src->line, "complex matrices are not supported");
  else
    return fail_at(src, src->line, "unknown field '%s' (expected real, integer or pattern)",
                   quote(words[3], shown));

  if (equals_nocase(words[4], "general"))
    banner->sym = SYMMETRY_GENERAL;
  else if (equals_nocase(words[4], "symmetric"))
    banner->sym = SYMMETRY_SYMMETRIC;
  else if (equals_nocase(words[4], "skew-symmetric"))
    banner->sym = SYMMETRY_SKEW;
  else if (equals_nocase(words[4], "hermitian"))
    return fail_at(src, src->line, "hermitian matrices are not supported");
  else
    return fail_at(src, src->line,
                   "unknown symmetry '%s' (expected general, symmetric or skew-symmetric)",
                   quote(words[4], shown));

  if (banner->is_array && banner->field == FIELD_PATTERN)
    return fail_at(src, src->line, "an array matrix cannot be 'pattern'");
  return SPL_MATRIX_OK;
}

/* Reads one size from the size line; `what` names it in messages. */
static int mm_parse_size(const source *src, span word, const char *what, int64_t *out) {
  char shown[QUOTE_SIZE];
  number_status status = parse_int_text(word, out);
  if (status == NUMBER_SYNTAX)
    return fail_at(src, src->line, "%s '%s' is not an integer", what, quote(word, shown));
  if (status == NUMBER_RANGE || *out > SPL_MATRIX_MAX_DIM)
    return fail_at(src, src->line, "%s '%s' exceeds the limit of %lld", what, quote(word, shown),
                   (long long)SPL_MATRIX_MAX_DIM);
  if (*out < 0)
    return fail_at(src, src->line, "negative %s %lld", what, (long long)*out);
  return SPL_MATRIX_OK;
}

/* Reads "rows cols [nnz]". The entry count has no dimension limit of its own; the caller checks
 * it against the file's remaining bytes. */
static int mm_read_sizes(source *src, const mm_banner *banner, int64_t *rows, int64_t *cols,
                         int64_t *nnz) {
  char shown[QUOTE_SIZE];
  span line, words[4];
  if (!next_content_line(src, &line))
    return fail_at(src, src->line + 1, "file ends before the size line");
  int expected = banner->is_array ? 2 : 3;
  int count = split_fields(line, words, 4);
  if (count != expected)
    return fail_at(src, src->line, "size line needs %d numbers (%s), got %d", expected,
                   banner->is_array ? "rows cols" : "rows cols entries", count);
  int status = mm_parse_size(src, words[0], "row count", rows);
  if (status == SPL_MATRIX_OK)
    status = mm_parse_size(src, words[1], "column count", cols);
  if (status != SPL_MATRIX_OK)
    return status;
  if (banner->sym != SYMMETRY_GENERAL && *rows != *cols)
    return fail_at(src, src->line, "a %s matrix must be square, got %lld x %lld",
                   banner->sym == SYMMETRY_SKEW ? "skew-symmetric" : "symmetric", (long long)*rows,
                   (long long)*cols);
  if (banner->is_array) {
    *nnz = 0;
    return SPL_MATRIX_OK;
  }
  number_status parsed = parse_int_text(words[2], nnz);
  if (parsed == NUMBER_SYNTAX)
    return fail_at(src, src->line, "entry count '%s' is not an integer", quote(words[2], shown));
  if (parsed == NUMBER_RANGE)
    return fail_at(src, src->line, "entry count '%s' is absurdly large", quote(words[2], shown));
  if (*nnz < 0)
    return fail_at(src, src->line, "negative entry count %lld", (long long)*nnz);
  return SPL_MATRIX_OK;
}

/* Each value needs at least `fields` characters plus a separator or newline after each. */
static int mm_check_room(const source *src, int64_t count, int fields, const char *what) {
  int64_t room = (int64_t)((src->size - src->next + 1) / (size_t)(2 * fields));
  if (count > room)
    return fail_at(src, src->line,
                   "declares %lld %s but the rest of the file can hold at most %lld",
                   (long long)count, what, (long long)room);
  return SPL_MATRIX_OK;
}

static int mm_parse_index(const source *src, span word, const char *what, int64_t limit,
                          int32_t *out) {
  char shown[QUOTE_SIZE];
  int64_t value = 0;
  number_status status = parse_int_text(word, &value);
  if (status == NUMBER_SYNTAX)
    return fail_at(src, src->line, "%s index '%s' is not an integer", what, quote(word, shown));
  if (status == NUMBER_RANGE || value < 1 || value > limit)
    return fail_at(src, src->line, "%s index %s out of range [1, %lld]", what, quote(word, shown),
                   (long long)limit);
  *out = (int32_t)(value - 1);
  return SPL_MATRIX_OK;
}

static int mm_parse_value(const source *src, span word, value_field field, double *out) {
  char shown[QUOTE_SIZE];
  if (field == FIELD_PATTERN) {
    *out = 1.0;
    return SPL_MATRIX_OK;
  }
  if (field == FIELD_INTEGER) {
    int64_t value = 0;
    number_status status = parse_int_text(word, &value);
    if (status == NUMBER_SYNTAX)
      return fail_at(src, src->line, "value '%s' is not an integer", quote(word, shown));
    if (status == NUMBER_RANGE)
      return fail_at(src, src->line, "value '%s' is out of range", quote(word, shown));
    *out = (double)value;
    return SPL_MATRIX_OK;
  }
  real_syntax plain = {0, 0, 0};
  number_status status = parse_real_text(word, plain, out);
  if (status == NUMBER_SYNTAX)
    return fail_at(src, src->line, "value '%s' is not a number", quote(word, shown));
  if (status == NUMBER_RANGE)
    return fail_at(src, src->line, "value '%s' is out of range", quote(word, shown));
  return SPL_MATRIX_OK;
}

/* A symmetric or skew-symmetric file stores the lower triangle only (the Matrix Market and
 * Harwell-Boeing conventions): an entry above the diagonal would be mirrored onto one that may
 * also be stored and summed with it, silently doubling it, so it is an error. */
static int check_lower_triangle(const source *src, int64_t line, symmetry sym, int64_t row,
                                int64_t col) {
  if (sym != SYMMETRY_GENERAL && row < col)
    return fail_at(src, line,
                   "entry (%lld, %lld) lies above the diagonal: a %s file stores the lower "
                   "triangle only",
                   (long long)row + 1, (long long)col + 1,
                   sym == SYMMETRY_SKEW ? "skew-symmetric" : "symmetric");
  return SPL_MATRIX_OK;
}

static int mm_check_skew_diagonal(const source *src, int32_t row, int32_t col, double val) {
  if (row == col && val != 0.0)
    return fail_at(src, src->line, "skew-symmetric matrix has a nonzero diagonal entry (%ld, %ld)",
                   (long)row + 1, (long)col + 1);
  return SPL_MATRIX_OK;
}

/* After the declared entries only blank and comment lines may follow. */
static int mm_check_no_more_data(source *src, int64_t declared, const char *what) {
  span line;
  if (next_content_line(src, &line))
    return fail_at(src, src->line, "more %s than the %lld declared", what, (long long)declared);
  return SPL_MATRIX_OK;
}

static int mm_read_coordinate(source *src, const mm_banner *banner, int64_t rows, int64_t cols,
                              int64_t nnz, triplets *t) {
  int fields = banner->field == FIELD_PATTERN ? 2 : 3;
  const char *layout = fields == 2 ? "row column" : "row column value";
  for (int64_t k = 0; k < nnz; ++k) {
    span line, words[3];
    if (!next_content_line(src, &line))
      return fail_at(src, src->line, "file ends after %lld of %lld entries", (long long)k,
                     (long long)nnz);
    int count = split_fields(line, words, 3);
    if (count != fields)
      return fail_at(src, src->line, "expected %d entries per line (%s), got %d", fields, layout,
                     count);
    int32_t row = 0, col = 0;
    double val = 0.0;
    int status = mm_parse_index(src, words[0], "row", rows, &row);
    if (status == SPL_MATRIX_OK)
      status = mm_parse_index(src, words[1], "column", cols, &col);
    if (status == SPL_MATRIX_OK)
      status = mm_parse_value(src, words[2], banner->field, &val);
    if (status == SPL_MATRIX_OK)
      status = check_lower_triangle(src, src->line, banner->sym, row, col);
    if (status == SPL_MATRIX_OK && banner->sym == SYMMETRY_SKEW)
      status = mm_check_skew_diagonal(src, row, col, val);
    if (status != SPL_MATRIX_OK)
      return status;
    add_entry(t, banner->sym, row, col, val);
  }
  return mm_check_no_more_data(src, nnz, "entries");
}

/* Array files list A column by column: all of each column for general matrices, rows j..n-1 of
 * column j for symmetric ones, rows j+1..n-1 for skew-symmetric ones. */
static int64_t mm_array_count(const mm_banner *banner, int64_t rows, int64_t cols) {
  if (banner->sym == SYMMETRY_SYMMETRIC)
    return rows * (rows + 1) / 2;
  if (banner->sym == SYMMETRY_SKEW)
    return rows > 0 ? rows * (rows - 1) / 2 : 0;
  return rows * cols;
}

static int mm_read_array(source *src, const mm_banner *banner, int64_t rows, int64_t count,
                         triplets *t) {
  int64_t first_row_offset = banner->sym == SYMMETRY_SKEW ? 1 : 0;
  int64_t row = banner->sym == SYMMETRY_GENERAL ? 0 : first_row_offset, col = 0;
  for (int64_t k = 0; k < count; ++k) {
    span line, words[1];
    if (!next_content_line(src, &line))
      return fail_at(src, src->line, "file ends after %lld of %lld values", (long long)k,
                     (long long)count);
    int fields = split_fields(line, words, 1);
    if (fields != 1)
      return fail_at(src, src->line, "expected 1 value per line, got %d", fields);
    double val = 0.0;
    int status = mm_parse_value(src, words[0], banner->field, &val);
    if (status != SPL_MATRIX_OK)
      return status;
    add_entry(t, banner->sym, (int32_t)row, (int32_t)col, val);
    if (++row == rows) {
      ++col;
      row = banner->sym == SYMMETRY_GENERAL ? 0 : col + first_row_offset;
    }
  }
  return mm_check_no_more_data(src, count, "values");
}

static int read_matrix_market(source *src, spl_csr *out) {
  mm_banner banner = {0, FIELD_REAL, SYMMETRY_GENERAL};
  int64_t rows = 0, cols = 0, nnz = 0;
  int status = mm_read_banner(src, &banner);
  if (status == SPL_MATRIX_OK)
    status = mm_read_sizes(src, &banner, &rows, &cols, &nnz);
  if (status != SPL_MATRIX_OK)
    return status;

  int64_t stored = banner.is_array ? mm_array_count(&banner, rows, cols) : nnz;
  int fields = banner.is_array ? 1 : (banner.field == FIELD_PATTERN ? 2 : 3);
  status = mm_check_room(src, stored, fields, banner.is_array ? "values" : "entries");
  if (status != SPL_MATRIX_OK)
    return status;

  triplets t;
  int64_t capacity = banner.sym == SYMMETRY_GENERAL ? stored : 2 * stored;
  if (!triplets_init(&t, capacity)) {
    triplets_free(&t);
    return fail_out_of_memory(src, "the entries");
  }
  status = banner.is_array ? mm_read_array(src, &banner, rows, stored, &t)
                           : mm_read_coordinate(src, &banner, rows, cols, nnz, &t);
  if (status != SPL_MATRIX_OK) {
    triplets_free(&t);
    return status;
  }
  return finish_triplets(src, rows, cols, &t, out);
}

/* ==== Harwell-Boeing ========================================================================
 * Card images: line 1 title and key; line 2 TOTCRD PTRCRD INDCRD VALCRD RHSCRD; line 3 MXTYPE
 * NROW NCOL NNZERO NELTVL; line 4 PTRFMT INDFMT VALFMT RHSFMT; line 5 (only if RHSCRD > 0) the
 * right-hand-side description. Then PTRCRD cards of column pointers (NCOL + 1, 1-based),
 * INDCRD cards of row indices, VALCRD cards of values, RHSCRD cards of right-hand sides. */

/* One repeated Fortran edit descriptor, e.g. (1P5E16.8): 5 fields of 16 characters, 8 digits
 * after an implied point, scale factor 1. */
typedef struct {
  int is_integer;
  int per_line, width, decimals, scale;
  char text[40]; /* as written, for messages */
} fortran_format;

static int read_unsigned(const char *s, size_t *i, int *out) {
  size_t first = *i;
  long value = 0;
  for (; is_digit(s[*i]); ++*i)
    if (value <= 1000000)
      value = value * 10 + (s[*i] - '0');
  if (*i == first)
    return 0;
  *out = value > 1000000 ? 1000001 : (int)value;
  return 1;
}

/* Accepts [kP[,]][r]X w[.d[Ee]] inside one pair of parentheses, X one of I E D F G ES EN; blanks
 * anywhere are ignored, as Fortran does inside formats. */
static int parse_fortran_format(span text, fortran_format *format) {
  char shown[QUOTE_SIZE];
  char compact[64];
  size_t n = 0;
  memset(format, 0, sizeof *format);
  snprintf(format->text, sizeof format->text, "%s", quote(text, shown));
  for (size_t i = 0; i < text.len; ++i) {
    if (is_blank_char(text.begin[i]))
      continue;
    if (n + 1 >= sizeof compact)
      return 0;
    compact[n++] = ascii_upper(text.begin[i]);
  }
  compact[n] = '\0';
  if (n < 2 || compact[0] != '(' || compact[n - 1] != ')')
    return 0;
  compact[n - 1] = '\0';

  size_t i = 1;
  int number = 0;
  size_t scale_start = i;
  int negative_scale = compact[i] == '-';
  if (compact[i] == '-' || compact[i] == '+')
    ++i;
  if (read_unsigned(compact, &i, &number) && compact[i] == 'P') {
    format->scale = negative_scale ? -number : number;
    ++i;
    if (compact[i] == ',')
      ++i;
  } else {
    i = scale_start;
  }

  format->per_line = 1;
  if (is_digit(compact[i]))
    read_unsigned(compact, &i, &format->per_line);
  char kind = compact[i++];
  if (kind == 'I') {
    format->is_integer = 1;
  } else if (kind == 'E' && (compact[i] == 'S' || compact[i] == 'N')) {
    ++i;
  } else if (kind != 'E' && kind != 'D' && kind != 'F' && kind != 'G') {
    return 0;
  }
  if (!read_unsigned(compact, &i, &format->width))
    return 0;
  if (compact[i] == '.') {
    ++i;
    if (!read_unsigned(compact, &i, &format->decimals))
      return 0;
    if (compact[i] == 'E') {
      int exponent_width = 0;
      ++i;
      if (!read_unsigned(compact, &i, &exponent_width))
        return 0;
    }
  }
  if (compact[i] != '\0')
    return 0;
  if (format->is_integer)
    format->decimals = 0;
  return format->per_line >= 1 && format->per_line <= 100000 && format->width >= 1 &&
         format->width <= 1000 && format->decimals <= format->width;
}

/* Finds the parenthesised groups of line 4 in order (PTRFMT, INDFMT, VALFMT, RHSFMT). Scanning
 * for parentheses instead of cutting at columns 16/32/52 accepts files whose writers did not
 * pad the fields exactly. */
static int split_format_line(span line, span *groups, int max_groups) {
  int count = 0;
  size_t i = 0;
  while (i < line.len && count < max_groups) {
    while (i < line.len && line.begin[i] != '(')
      ++i;
    if (i == line.len)
      break;
    size_t start = i;
    while (i < line.len && line.begin[i] != ')')
      ++i;
    if (i == line.len)
      return -1;
    ++i;
    groups[count].begin = line.begin + start;
    groups[count].len = i - start;
    ++count;
  }
  return count;
}

typedef struct {
  char type[4]; /* MXTYPE upper-cased, e.g. "RUA" */
  int64_t total_cards, pointer_cards, index_cards, value_cards, rhs_cards;
  int64_t rows, cols, nnz;
  fortran_format pointer_format, index_format, value_format;
  int has_values;
  symmetry sym;
} hb_header;

static int hb_parse_count(const source *src, span word, const char *what, int64_t *out) {
  char shown[QUOTE_SIZE];
  number_status status = parse_int_text(word, out);
  if (status == NUMBER_SYNTAX)
    return fail_at(src, src->line, "%s '%s' is not an integer", what, quote(word, shown));
  if (status == NUMBER_RANGE)
    return fail_at(src, src->line, "%s '%s' is absurdly large", what, quote(word, shown));
  if (*out < 0)
    return fail_at(src, src->line, "negative %s %lld", what, (long long)*out);
  return SPL_MATRIX_OK;
}

static int hb_read_card_counts(source *src, hb_header *h) {
  span line, words[6];
  if (!next_line(src, &line))
    return fail_at(src, src->line + 1, "file ends inside the Harwell-Boeing header");
  int count = split_fields(line, words, 6);
  if (count != 4 && count != 5)
    return fail_at(src, src->line,
                   "expected 4 or 5 card counts (TOTCRD PTRCRD INDCRD VALCRD [RHSCRD]), got %d",
                   count);
  int64_t *targets[5] = {&h->total_cards, &h->pointer_cards, &h->index_cards, &h->value_cards,
                         &h->rhs_cards};
  const char *names[5] = {"TOTCRD", "PTRCRD", "INDCRD", "VALCRD", "RHSCRD"};
  h->rhs_cards = 0;
  for (int k = 0; k < count; ++k) {
    int status = hb_parse_count(src, words[k], names[k], targets[k]);
    if (status != SPL_MATRIX_OK)
      return status;
  }
  int64_t lines = lines_left(src);
  if (h->pointer_cards > lines || h->index_cards > lines || h->value_cards > lines ||
      h->rhs_cards > lines)
    return fail_at(src, src->line, "card counts exceed the %lld lines left in the file",
                   (long long)lines);
  int64_t sum = h->pointer_cards + h->index_cards + h->value_cards + h->rhs_cards;
  if (sum != h->total_cards)
    return fail_at(src, src->line, "TOTCRD %lld is not PTRCRD + INDCRD + VALCRD + RHSCRD = %lld",
                   (long long)h->total_cards, (long long)sum);
  return SPL_MATRIX_OK;
}

static int hb_check_type(const source *src, hb_header *h) {
  char value = h->type[0], structure = h->type[1], assembly = h->type[2];
  if (value == 'C')
    return fail_at(src, src->line, "complex matrices are not supported (type %s)", h->type);
  if (value != 'R' && value != 'P' && value != 'I')
    return fail_at(src, src->line, "unknown value type '%c' in matrix type %s", value, h->type);
  if (structure == 'H')
    return fail_at(src, src->line, "hermitian matrices are not supported (type %s)", h->type);
  if (structure == 'U' || structure == 'R')
    h->sym = SYMMETRY_GENERAL;
  else if (structure == 'S')
    h->sym = SYMMETRY_SYMMETRIC;
  else if (structure == 'Z')
    h->sym = SYMMETRY_SKEW;
  else
    return fail_at(src, src->line, "unknown structure '%c' in matrix type %s", structure, h->type);
  if (assembly == 'E')
    return fail_at(src, src->line, "elemental matrices are not supported (type %s)", h->type);
  if (assembly != 'A')
    return fail_at(src, src->line, "unknown storage '%c' in matrix type %s", assembly, h->type);
  h->has_values = value != 'P';
  return SPL_MATRIX_OK;
}

static int hb_read_type_line(source *src, hb_header *h) {
  char shown[QUOTE_SIZE];
  span line, words[6];
  if (!next_line(src, &line))
    return fail_at(src, src->line + 1, "file ends inside the Harwell-Boeing header");
  int count = split_fields(line, words, 6);
  if (count < 4 || count > 5)
    return fail_at(src, src->line, "expected MXTYPE NROW NCOL NNZERO [NELTVL], got %d fields",
                   count);
  if (words[0].len != 3)
    return fail_at(src, src->line, "matrix type '%s' is not 3 letters", quote(words[0], shown));
  for (int k = 0; k < 3; ++k)
    h->type[k] = ascii_upper(words[0].begin[k]);
  h->type[3] = '\0';
  int status = hb_check_type(src, h);
  if (status == SPL_MATRIX_OK)
    status = hb_parse_count(src, words[1], "NROW", &h->rows);
  if (status == SPL_MATRIX_OK)
    status = hb_parse_count(src, words[2], "NCOL", &h->cols);
  if (status == SPL_MATRIX_OK)
    status = hb_parse_count(src, words[3], "NNZERO", &h->nnz);
  if (status != SPL_MATRIX_OK)
    return status;
  if (h->rows > SPL_MATRIX_MAX_DIM || h->cols > SPL_MATRIX_MAX_DIM)
    return fail_at(src, src->line, "matrix size %lld x %lld exceeds the limit of %lld",
                   (long long)h->rows, (long long)h->cols, (long long)SPL_MATRIX_MAX_DIM);
  if (h->sym != SYMMETRY_GENERAL && h->rows != h->cols)
    return fail_at(src, src->line, "a symmetric matrix must be square, got %lld x %lld",
                   (long long)h->rows, (long long)h->cols);
  return SPL_MATRIX_OK;
}

static int64_t cards_needed(int64_t count, int per_line) {
  return count / per_line + (count % per_line != 0);
}

static int hb_check_section(const source *src, int64_t header_line, const char *what, int64_t count,
                            int64_t cards, const fortran_format *format) {
  int64_t needed = cards_needed(count, format->per_line);
  if (cards != needed)
    return fail_at(src, header_line, "%lld %s in format %s need %lld cards, header says %lld",
                   (long long)count, what, format->text, (long long)needed, (long long)cards);
  return SPL_MATRIX_OK;
}

static int hb_read_formats(source *src, hb_header *h) {
  char shown[QUOTE_SIZE];
  span line, groups[4];
  if (!next_line(src, &line))
    return fail_at(src, src->line + 1, "file ends inside the Harwell-Boeing header");
  int count = split_format_line(line, groups, 4);
  int needed = h->has_values && h->nnz > 0 ? 3 : 2;
  if (count < needed)
    return fail_at(src, src->line, "expected at least %d parenthesised formats, found %d", needed,
                   count < 0 ? 0 : count);
  if (!parse_fortran_format(groups[0], &h->pointer_format) || !h->pointer_format.is_integer)
    return fail_at(src, src->line, "unsupported pointer format '%s'", quote(groups[0], shown));
  if (!parse_fortran_format(groups[1], &h->index_format) || !h->index_format.is_integer)
    return fail_at(src, src->line, "unsupported index format '%s'", quote(groups[1], shown));
  if (needed == 3 && !parse_fortran_format(groups[2], &h->value_format))
    return fail_at(src, src->line, "unsupported value format '%s'", quote(groups[2], shown));

  int status = hb_check_section(src, src->line, "column pointers", h->cols + 1, h->pointer_cards,
                                &h->pointer_format);
  if (status == SPL_MATRIX_OK)
    status =
        hb_check_section(src, src->line, "row indices", h->nnz, h->index_cards, &h->index_format);
  if (status == SPL_MATRIX_OK && needed == 3)
    status = hb_check_section(src, src->line, "values", h->nnz, h->value_cards, &h->value_format);
  if (status == SPL_MATRIX_OK && needed != 3 && h->value_cards != 0)
    return fail_at(src, src->line, "VALCRD is %lld but no values are expected (%s)",
                   (long long)h->value_cards, h->has_values ? "no entries" : "pattern matrix");
  return status;
}

/* Reads `count` fixed-width fields from `cards` card images, per_line fields per card. Columns
 * past per_line * width are ignored (old decks put sequence numbers there). `first_line` gets
 * the line number of the section's first card, for locating later errors. */
static int hb_read_section(source *src, const fortran_format *format, int64_t count, int64_t cards,
                           const char *what, int64_t *ints, double *reals, int64_t *first_line) {
  char shown[QUOTE_SIZE];
  real_syntax syntax = {1, format->decimals, format->scale};
  int64_t done = 0;
  *first_line = src->line + 1;
  for (int64_t card = 0; card < cards; ++card) {
    span line;
    if (!next_line(src, &line))
      return fail_at(src, src->line + 1, "file ends after %lld of %lld %s", (long long)done,
                     (long long)count, what);
    for (int slot = 0; slot < format->per_line && done < count; ++slot, ++done) {
      size_t start = (size_t)slot * (size_t)format->width;
      size_t end = start + (size_t)format->width;
      span field = {line.begin + (start < line.len ? start : line.len), 0};
      if (start < line.len)
        field.len = (end < line.len ? end : line.len) - start;
      field = trim(field);
      if (field.len == 0)
        return fail_at(src, src->line, "missing %s field %d (format %s expects %d per line)", what,
                       slot + 1, format->text, format->per_line);
      number_status status;
      if (format->is_integer) {
        int64_t value = 0;
        status = parse_int_text(field, &value);
        if (ints)
          ints[done] = value;
        if (reals)
          reals[done] = (double)value;
      } else {
        status = parse_real_text(field, syntax, &reals[done]);
      }
      if (status == NUMBER_SYNTAX)
        return fail_at(src, src->line, "%s field %d '%s' is not a number in format %s", what,
                       slot + 1, quote(field, shown), format->text);
      if (status == NUMBER_RANGE)
        return fail_at(src, src->line, "%s field %d '%s' is out of range", what, slot + 1,
                       quote(field, shown));
    }
  }
  return SPL_MATRIX_OK;
}

typedef struct {
  int64_t *col_ptr, *row_ind;
  double *vals;
  int64_t pointer_line, index_line, value_line;
} hb_sections;

static void hb_sections_free(hb_sections *s) {
  free(s->col_ptr);
  free(s->row_ind);
  free(s->vals);
}

static int hb_check_pointers(const source *src, const hb_header *h, const hb_sections *s) {
  int per_line = h->pointer_format.per_line;
  for (int64_t j = 0; j <= h->cols; ++j) {
    int64_t line = s->pointer_line + j / per_line;
    int64_t expected_min = j == 0 ? 1 : s->col_ptr[j - 1];
    if (j == 0 && s->col_ptr[0] != 1)
      return fail_at(src, line, "first column pointer is %lld, expected 1",
                     (long long)s->col_ptr[0]);
    if (s->col_ptr[j] < expected_min)
      return fail_at(src, line, "column pointer %lld (%lld) is less than the one before (%lld)",
                     (long long)j + 1, (long long)s->col_ptr[j], (long long)expected_min);
    if (s->col_ptr[j] > h->nnz + 1)
      return fail_at(src, line, "column pointer %lld (%lld) exceeds NNZERO + 1 = %lld",
                     (long long)j + 1, (long long)s->col_ptr[j], (long long)h->nnz + 1);
  }
  if (s->col_ptr[h->cols] != h->nnz + 1)
    return fail_at(src, s->pointer_line + h->cols / per_line,
                   "last column pointer is %lld, expected NNZERO + 1 = %lld",
                   (long long)s->col_ptr[h->cols], (long long)h->nnz + 1);
  return SPL_MATRIX_OK;
}

static int hb_collect(const source *src, const hb_header *h, const hb_sections *s, triplets *t) {
  for (int64_t j = 0; j < h->cols; ++j) {
    for (int64_t k = s->col_ptr[j] - 1; k < s->col_ptr[j + 1] - 1; ++k) {
      int64_t row = s->row_ind[k];
      if (row < 1 || row > h->rows)
        return fail_at(src, s->index_line + k / h->index_format.per_line,
                       "row index %lld out of range [1, %lld]", (long long)row, (long long)h->rows);
      double val = h->has_values ? s->vals[k] : 1.0;
      int64_t line = h->has_values ? s->value_line + k / h->value_format.per_line
                                   : s->index_line + k / h->index_format.per_line;
      int status = check_lower_triangle(src, line, h->sym, row - 1, j);
      if (status != SPL_MATRIX_OK)
        return status;
      if (h->sym == SYMMETRY_SKEW && row - 1 == j && val != 0.0)
        return fail_at(src, line, "skew-symmetric matrix has a nonzero diagonal entry (%lld, %lld)",
                       (long long)row, (long long)j + 1);
      add_entry(t, h->sym, (int32_t)(row - 1), (int32_t)j, val);
    }
  }
  return SPL_MATRIX_OK;
}

static int hb_read_body(source *src, const hb_header *h, hb_sections *s) {
  s->col_ptr = (int64_t *)alloc_array(h->cols + 1, sizeof(int64_t));
  s->row_ind = (int64_t *)alloc_array(h->nnz, sizeof(int64_t));
  s->vals = h->has_values ? (double *)alloc_array(h->nnz, sizeof(double)) : NULL;
  if (!s->col_ptr || !s->row_ind || (h->has_values && !s->vals))
    return fail_out_of_memory(src, "the Harwell-Boeing sections");
  int status = hb_read_section(src, &h->pointer_format, h->cols + 1, h->pointer_cards,
                               "column pointers", s->col_ptr, NULL, &s->pointer_line);
  if (status == SPL_MATRIX_OK)
    status = hb_read_section(src, &h->index_format, h->nnz, h->index_cards, "row indices",
                             s->row_ind, NULL, &s->index_line);
  if (status == SPL_MATRIX_OK && h->has_values)
    status = hb_read_section(src, &h->value_format, h->nnz, h->value_cards, "values", NULL, s->vals,
                             &s->value_line);
  if (status != SPL_MATRIX_OK)
    return status;
  int64_t rhs_left = lines_left(src);
  if (rhs_left < h->rhs_cards)
    return fail_at(src, src->line + rhs_left + 1,
                   "file ends inside the right-hand sides: %lld of %lld cards present",
                   (long long)rhs_left, (long long)h->rhs_cards);
  return hb_check_pointers(src, h, s);
}

static int read_harwell_boeing(source *src, spl_csr *out) {
  hb_header h;
  span title, rhs_line;
  memset(&h, 0, sizeof h);
  if (!next_line(src, &title))
    return fail_at(src, 1, "empty file");
  int status = hb_read_card_counts(src, &h);
  if (status == SPL_MATRIX_OK)
    status = hb_read_type_line(src, &h);
  if (status == SPL_MATRIX_OK)
    status = hb_read_formats(src, &h);
  if (status != SPL_MATRIX_OK)
    return status;
  if (h.rhs_cards > 0 && !next_line(src, &rhs_line))
    return fail_at(src, src->line + 1, "file ends before the right-hand-side line");
  /* Every pointer, index and value occupies at least one non-blank byte, so counts beyond the
   * file size are impossible; checking this bounds every allocation by the file's length. */
  if ((uint64_t)h.nnz > src->size || (uint64_t)h.cols + 1 > src->size)
    return fail_at(src, 3, "NCOL %lld / NNZERO %lld cannot fit in a file of %llu bytes",
                   (long long)h.cols, (long long)h.nnz, (unsigned long long)src->size);

  hb_sections sections;
  memset(&sections, 0, sizeof sections);
  status = hb_read_body(src, &h, &sections);
  triplets t;
  memset(&t, 0, sizeof t);
  if (status == SPL_MATRIX_OK) {
    int64_t capacity = h.sym == SYMMETRY_GENERAL ? h.nnz : 2 * h.nnz;
    if (!triplets_init(&t, capacity))
      status = fail_out_of_memory(src, "the entries");
  }
  if (status == SPL_MATRIX_OK)
    status = hb_collect(src, &h, &sections, &t);
  hb_sections_free(&sections);
  if (status != SPL_MATRIX_OK) {
    triplets_free(&t);
    return status;
  }
  return finish_triplets(src, h.rows, h.cols, &t, out);
}

/* ==== Format detection, reading and writing ================================================= */

static int starts_with_nocase(const char *text, size_t size, const char *prefix) {
  size_t n = strlen(prefix);
  if (size < n)
    return 0;
  for (size_t i = 0; i < n; ++i)
    if (ascii_upper(text[i]) != ascii_upper(prefix[i]))
      return 0;
  return 1;
}

static const char *extension_of(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  return dot ? dot + 1 : "";
}

static int extension_is(const char *ext, const char *want) {
  span s = {ext, strlen(ext)};
  return equals_nocase(s, want);
}

static int is_one_of(char c, const char *set) { return c != '\0' && strchr(set, c) != NULL; }

static int is_hb_type_code(const char *code) {
  return is_one_of(code[0], "RPICrpic") && is_one_of(code[1], "USRZHusrzh") &&
         is_one_of(code[2], "AEae");
}

/* The third line of a Harwell-Boeing file starts with the matrix type code. */
static int looks_like_harwell_boeing(const char *text, size_t size) {
  size_t offset = 0;
  for (int newlines = 0; newlines < 2; ++newlines) {
    const char *newline = (const char *)memchr(text + offset, '\n', size - offset);
    if (!newline)
      return 0;
    offset = (size_t)(newline - text) + 1;
  }
  return size - offset >= 3 && is_hb_type_code(text + offset);
}

int spl_read_matrix(const char *path, spl_csr *out, char *err, size_t errlen) {
  if (err && errlen)
    err[0] = '\0';
  if (!out || !path) {
    write_message(err, errlen, "spl_read_matrix: NULL %s", path ? "output" : "path");
    return SPL_MATRIX_EINVAL;
  }
  memset(out, 0, sizeof *out);
  char *text = NULL;
  size_t size = 0;
  int status = load_file(path, &text, &size, err, errlen);
  if (status != SPL_MATRIX_OK)
    return status;

  source src = {path, text, size, 0, 0, err, errlen};
  const char *nul = (const char *)memchr(text, '\0', size);
  const char *ext = extension_of(path);
  int hb_extension = extension_is(ext, "hb") || extension_is(ext, "rb") ||
                     (strlen(ext) == 3 && is_hb_type_code(ext));
  if (nul)
    status = fail_at(&src, line_of_offset(text, (size_t)(nul - text)),
                     "NUL byte: not a text matrix file");
  else if (size == 0)
    status = fail_at(&src, 1, "empty file");
  else if (starts_with_nocase(text, size, "%%MatrixMarket"))
    status = read_matrix_market(&src, out);
  else if (extension_is(ext, "mtx") || extension_is(ext, "mm"))
    status = read_matrix_market(&src, out);
  else if (hb_extension || looks_like_harwell_boeing(text, size))
    status = read_harwell_boeing(&src, out);
  else
    status = fail_at(&src, 1,
                     "unrecognised format: no %%%%MatrixMarket banner and no Harwell-Boeing "
                     "header");
  free(text);
  if (status != SPL_MATRIX_OK)
    spl_csr_free(out);
  return status;
}

int spl_write_matrix_market(const char *path, const spl_csr *m) {
  if (!path || spl_csr_check(m, NULL, 0) != SPL_MATRIX_OK)
    return SPL_MATRIX_EINVAL;
  FILE *file = fopen(path, "w");
  if (!file)
    return SPL_MATRIX_EIO;
  fprintf(file, "%%%%MatrixMarket matrix coordinate real general\n");
  fprintf(file, "%% written by splmatrix\n");
  fprintf(file, "%lld %lld %lld\n", (long long)m->rows, (long long)m->cols, (long long)m->nnz);
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k)
      fprintf(file, "%lld %ld %.17g\n", (long long)i + 1, (long)m->cols_idx[k] + 1, m->vals[k]);
  int failed = ferror(file);
  failed |= fclose(file) != 0;
  return failed ? SPL_MATRIX_EIO : SPL_MATRIX_OK;
}

/* ==== Random generation ===================================================================== */

uint64_t spl_splitmix64_next(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Uniform in [0, n), n >= 1. Draws below 2^64 mod n are rejected: without that, the low
 * residues would be slightly more likely than the high ones. */
static uint64_t random_below(uint64_t *state, uint64_t n) {
  uint64_t rejected_below = (0 - n) % n;
  for (;;) {
    uint64_t x = spl_splitmix64_next(state);
    if (x >= rejected_below)
      return x % n;
  }
}

static int64_t random_between(uint64_t *state, int64_t lo, int64_t hi) {
  return lo + (int64_t)random_below(state, (uint64_t)(hi - lo) + 1);
}

/* A 53-bit integer times 2^-52, minus 1: exact in double, so identical everywhere. */
static double random_value(uint64_t *state) {
  return (double)(spl_splitmix64_next(state) >> 11) * 0x1p-52 - 1.0;
}

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* A uniformly random k-subset of [0, universe), sorted, written to out. For k > universe / 2,
 * selection sampling (Knuth's Algorithm S) walks the universe once; otherwise values are drawn
 * with replacement, sorted and deduplicated until k distinct ones remain, which needs few rounds
 * because at least half of the universe is always free. */
static void random_subset(uint64_t *state, int64_t universe, int64_t k, int32_t *out) {
  if (2 * k > universe) {
    int64_t needed = k;
    for (int64_t c = 0; c < universe && needed > 0; ++c) {
      if ((int64_t)random_below(state, (uint64_t)(universe - c)) < needed) {
        out[k - needed] = (int32_t)c;
        --needed;
      }
    }
    return;
  }
  int64_t have = 0;
  while (have < k) {
    while (have < k)
      out[have++] = (int32_t)random_below(state, (uint64_t)universe);
    qsort(out, (size_t)have, sizeof(int32_t), compare_int32);
    int64_t distinct = 0;
    for (int64_t i = 0; i < have; ++i)
      if (distinct == 0 || out[distinct - 1] != out[i])
        out[distinct++] = out[i];
    have = distinct;
  }
}

static int64_t uniform_row_length(uint64_t *state, int64_t cols, int64_t mean) {
  int64_t lo = 2 * mean - cols, hi = 2 * mean;
  return random_between(state, lo < 0 ? 0 : lo, hi > cols ? cols : hi);
}

/* Draws every row's length into offs[i + 1]. Special rows (empty or dense, by kind) are a
 * random subset chosen first. */
static int draw_row_lengths(uint64_t *state, int64_t rows, int64_t cols, int64_t mean,
                            spl_random_kind kind, int64_t *offs) {
  int64_t special_count = 0;
  if (kind == SPL_RANDOM_EMPTY_ROWS && rows > 0)
    special_count = rows / 4 > 1 ? rows / 4 : 1;
  if (kind == SPL_RANDOM_SKEWED && rows > 0)
    special_count = rows / 32 > 1 ? rows / 32 : 1;
  int32_t *special = (int32_t *)alloc_array(special_count, sizeof(int32_t));
  if (!special)
    return SPL_MATRIX_ENOMEM;
  random_subset(state, rows, special_count, special);

  int64_t next_special = 0;
  for (int64_t i = 0; i < rows; ++i) {
    int is_special = next_special < special_count && special[next_special] == i;
    next_special += is_special;
    int64_t length;
    if (is_special && kind == SPL_RANDOM_EMPTY_ROWS)
      length = 0;
    else if (is_special)
      length = random_between(state, (cols + 1) / 2, cols);
    else
      length = uniform_row_length(state, cols, mean);
    if (kind == SPL_RANDOM_EMPTY_ROWS && !is_special && length == 0 && cols > 0)
      length = 1;
    offs[i + 1] = length;
  }
  free(special);
  return SPL_MATRIX_OK;
}

int spl_random_csr(int64_t rows, int64_t cols, double density, uint64_t seed, spl_random_kind kind,
                   spl_csr *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!valid_dimension(rows) || !valid_dimension(cols) || !(density >= 0.0 && density <= 1.0) ||
      (kind != SPL_RANDOM_UNIFORM && kind != SPL_RANDOM_EMPTY_ROWS && kind != SPL_RANDOM_SKEWED))
    return SPL_MATRIX_EINVAL;

  /* density in 32-bit fixed point (exact: a multiplication by a power of two), so the mean row
   * length is integer arithmetic on every machine. */
  uint64_t density_fixed = (uint64_t)(density * 4294967296.0);
  int64_t mean = (int64_t)((density_fixed * (uint64_t)cols + (UINT64_C(1) << 31)) >> 32);
  uint64_t state = seed;

  out->offs = (int64_t *)alloc_zeroed(rows + 1, sizeof(int64_t));
  if (!out->offs || draw_row_lengths(&state, rows, cols, mean, kind, out->offs) != 0) {
    spl_csr_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t i = 0; i < rows; ++i)
    out->offs[i + 1] += out->offs[i];
  int64_t nnz = out->offs[rows];
  if (nnz > INT32_MAX) {
    spl_csr_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  out->cols_idx = (int32_t *)alloc_array(nnz, sizeof(int32_t));
  out->vals = (double *)alloc_array(nnz, sizeof(double));
  if (!out->cols_idx || !out->vals) {
    spl_csr_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  out->rows = rows;
  out->cols = cols;
  out->nnz = nnz;
  for (int64_t i = 0; i < rows; ++i) {
    int64_t begin = out->offs[i], length = out->offs[i + 1] - begin;
    random_subset(&state, cols, length, out->cols_idx + begin);
    for (int64_t k = begin; k < begin + length; ++k)
      out->vals[k] = random_value(&state);
  }
  return SPL_MATRIX_OK;
}

void spl_random_vector(uint64_t seed, int64_t n, double *out) {
  uint64_t state = seed;
  for (int64_t i = 0; i < n; ++i)
    out[i] = random_value(&state);
}

void spl_random_vector_f32(uint64_t seed, int64_t n, float *out) {
  uint64_t state = seed;
  for (int64_t i = 0; i < n; ++i)
    out[i] = (float)random_value(&state);
}

/* ==== Conversions =========================================================================== */

static int usable(const spl_csr *m) { return spl_csr_check(m, NULL, 0) == SPL_MATRIX_OK; }

static double *dense_doubles(const spl_csr *m) {
  double *dense = (double *)alloc_zeroed(m->rows * m->cols, sizeof(double));
  if (!dense)
    return NULL;
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k)
      dense[i * m->cols + m->cols_idx[k]] = m->vals[k];
  return dense;
}

double *spl_csr_to_dense(const spl_csr *m) { return usable(m) ? dense_doubles(m) : NULL; }

float *spl_csr_to_dense_f32(const spl_csr *m) {
  if (!usable(m))
    return NULL;
  float *dense = (float *)alloc_zeroed(m->rows * m->cols, sizeof(float));
  if (!dense)
    return NULL;
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k)
      dense[i * m->cols + m->cols_idx[k]] = (float)m->vals[k];
  return dense;
}

/* Both CSR conversions (int32 offsets and columns; values in float when `as_float`, else
 * double): the arrays, or SPL_MATRIX_ENOMEM with whatever was allocated for the caller to free. */
static int csr_int32(const spl_csr *m, int as_float, int32_t **offs, int32_t **cols, void **vals) {
  if (m->nnz > INT32_MAX)
    return SPL_MATRIX_ENOMEM;
  *offs = (int32_t *)alloc_array(m->rows + 1, sizeof(int32_t));
  *cols = (int32_t *)alloc_array(m->nnz, sizeof(int32_t));
  *vals = as_float ? (void *)doubles_to_floats(m->vals, m->nnz) : alloc_array(m->nnz, sizeof(double));
  if (!*offs || !*cols || !*vals)
    return SPL_MATRIX_ENOMEM;
  for (int64_t i = 0; i <= m->rows; ++i)
    (*offs)[i] = (int32_t)m->offs[i];
  if (m->nnz > 0) {
    memcpy(*cols, m->cols_idx, (size_t)m->nnz * sizeof(int32_t));
    if (!as_float)
      memcpy(*vals, m->vals, (size_t)m->nnz * sizeof(double));
  }
  return SPL_MATRIX_OK;
}

/* spl_csr_to_f32 / spl_csr_to_f64 and their frees: one body, the value type its parameter. */
#define SPL_CSR_CONVERSION(SUFFIX, VALUE, AS_FLOAT)                                              \
  int spl_csr_to_##SUFFIX(const spl_csr *m, spl_csr_##SUFFIX *out) {                              \
    if (!out)                                                                                     \
      return SPL_MATRIX_EINVAL;                                                                   \
    memset(out, 0, sizeof *out);                                                                  \
    if (!usable(m))                                                                               \
      return SPL_MATRIX_EINVAL;                                                                   \
    void *vals = NULL;                                                                            \
    int status = csr_int32(m, AS_FLOAT, &out->offs, &out->cols_idx, &vals);                       \
    out->vals = (VALUE *)vals;                                                                    \
    if (status != SPL_MATRIX_OK) {                                                                \
      spl_csr_##SUFFIX##_free(out);                                                               \
      return status;                                                                              \
    }                                                                                             \
    out->rows = m->rows;                                                                          \
    out->cols = m->cols;                                                                          \
    out->nnz = m->nnz;                                                                            \
    return SPL_MATRIX_OK;                                                                         \
  }                                                                                               \
  void spl_csr_##SUFFIX##_free(spl_csr_##SUFFIX *m) {                                             \
    if (!m)                                                                                       \
      return;                                                                                     \
    free(m->offs);                                                                                \
    free(m->cols_idx);                                                                            \
    free(m->vals);                                                                                \
    memset(m, 0, sizeof *m);                                                                      \
  }

SPL_CSR_CONVERSION(f32, float, 1)
SPL_CSR_CONVERSION(f64, double, 0)

int spl_csr_to_coo(const spl_csr *m, spl_coo *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m))
    return SPL_MATRIX_EINVAL;
  out->row_idx = (int32_t *)alloc_array(m->nnz, sizeof(int32_t));
  out->col_idx = (int32_t *)alloc_array(m->nnz, sizeof(int32_t));
  out->vals = (double *)alloc_array(m->nnz, sizeof(double));
  out->vals_f32 = doubles_to_floats(m->vals, m->nnz);
  if (!out->row_idx || !out->col_idx || !out->vals || !out->vals_f32) {
    spl_coo_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k) {
      out->row_idx[k] = (int32_t)i;
      out->col_idx[k] = m->cols_idx[k];
      out->vals[k] = m->vals[k];
    }
  out->rows = m->rows;
  out->cols = m->cols;
  out->nnz = m->nnz;
  return SPL_MATRIX_OK;
}

void spl_coo_free(spl_coo *m) {
  if (!m)
    return;
  free(m->row_idx);
  free(m->col_idx);
  free(m->vals);
  free(m->vals_f32);
  memset(m, 0, sizeof *m);
}

int spl_csr_transpose(const spl_csr *m, spl_csr *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m))
    return SPL_MATRIX_EINVAL;
  out->offs = (int64_t *)alloc_zeroed(m->cols + 1, sizeof(int64_t));
  out->cols_idx = (int32_t *)alloc_array(m->nnz, sizeof(int32_t));
  out->vals = (double *)alloc_array(m->nnz, sizeof(double));
  if (!out->offs || !out->cols_idx || !out->vals) {
    spl_csr_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t k = 0; k < m->nnz; ++k)
    ++out->offs[m->cols_idx[k] + 1];
  for (int64_t j = 0; j < m->cols; ++j)
    out->offs[j + 1] += out->offs[j];
  /* Walking rows in order and using offs[j] as column j's cursor keeps each column's rows
   * increasing; afterwards offs[j] holds column j's end, so shift it back by one column. */
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k) {
      int64_t slot = out->offs[m->cols_idx[k]]++;
      out->cols_idx[slot] = (int32_t)i;
      out->vals[slot] = m->vals[k];
    }
  for (int64_t j = m->cols; j > 0; --j)
    out->offs[j] = out->offs[j - 1];
  out->offs[0] = 0;
  out->rows = m->cols;
  out->cols = m->rows;
  out->nnz = m->nnz;
  return SPL_MATRIX_OK;
}

int spl_csr_to_csc(const spl_csr *m, spl_csc *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m))
    return SPL_MATRIX_EINVAL;
  if (m->nnz > INT32_MAX)
    return SPL_MATRIX_ENOMEM;
  spl_csr transposed;
  int status = spl_csr_transpose(m, &transposed);
  if (status != SPL_MATRIX_OK)
    return status;
  out->offs = (int32_t *)alloc_array(m->cols + 1, sizeof(int32_t));
  out->vals_f32 = doubles_to_floats(transposed.vals, m->nnz);
  if (!out->offs || !out->vals_f32) {
    spl_csr_free(&transposed);
    spl_csc_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t j = 0; j <= m->cols; ++j)
    out->offs[j] = (int32_t)transposed.offs[j];
  out->row_idx = transposed.cols_idx;
  out->vals = transposed.vals;
  free(transposed.offs);
  out->rows = m->rows;
  out->cols = m->cols;
  out->nnz = m->nnz;
  return SPL_MATRIX_OK;
}

void spl_csc_free(spl_csc *m) {
  if (!m)
    return;
  free(m->offs);
  free(m->row_idx);
  free(m->vals);
  free(m->vals_f32);
  memset(m, 0, sizeof *m);
}

static int64_t longest_row(const spl_csr *m) {
  int64_t longest = 0;
  for (int64_t i = 0; i < m->rows; ++i)
    if (m->offs[i + 1] - m->offs[i] > longest)
      longest = m->offs[i + 1] - m->offs[i];
  return longest;
}

int spl_csr_to_ell(const spl_csr *m, spl_ell_layout layout, spl_ell *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m) || (layout != SPL_ELL_ROW_MAJOR && layout != SPL_ELL_COL_MAJOR))
    return SPL_MATRIX_EINVAL;
  int64_t width = longest_row(m);
  if (width > 0 && m->rows > INT64_MAX / width)
    return SPL_MATRIX_ENOMEM;
  int64_t slots = m->rows * width;
  out->cols_idx = (int32_t *)alloc_zeroed(slots, sizeof(int32_t));
  out->vals = (double *)alloc_zeroed(slots, sizeof(double));
  if (!out->cols_idx || !out->vals) {
    spl_ell_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k) {
      int64_t slot = k - m->offs[i];
      int64_t at = layout == SPL_ELL_ROW_MAJOR ? i * width + slot : slot * m->rows + i;
      out->cols_idx[at] = m->cols_idx[k];
      out->vals[at] = m->vals[k];
    }
  out->vals_f32 = doubles_to_floats(out->vals, slots);
  if (!out->vals_f32) {
    spl_ell_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  out->rows = m->rows;
  out->cols = m->cols;
  out->width = width;
  out->layout = layout;
  return SPL_MATRIX_OK;
}

void spl_ell_free(spl_ell *m) {
  if (!m)
    return;
  free(m->cols_idx);
  free(m->vals);
  free(m->vals_f32);
  memset(m, 0, sizeof *m);
}

/* One row of a SELL window: its length and index, ordered longest first, then by index. */
typedef struct {
  int64_t len, row;
} sell_key;

static int sell_key_order(const void *a, const void *b) {
  const sell_key *x = (const sell_key *)a, *y = (const sell_key *)b;
  if (x->len != y->len)
    return x->len > y->len ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

int spl_csr_to_sell(const spl_csr *m, int64_t lanes, int64_t sigma, spl_sell *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m) || lanes < 1 || lanes > 1024 || sigma < 1)
    return SPL_MATRIX_EINVAL;
  int64_t slices = (m->rows + lanes - 1) / lanes;
  sell_key *keys = (sell_key *)alloc_zeroed(m->rows, sizeof(sell_key));
  out->soffs = (int32_t *)alloc_zeroed(slices + 1, sizeof(int32_t));
  out->perm = (int32_t *)alloc_zeroed(slices * lanes, sizeof(int32_t));
  out->pos = (int32_t *)alloc_zeroed(m->rows, sizeof(int32_t));
  if (!keys || !out->soffs || !out->perm || !out->pos) {
    free(keys);
    spl_sell_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t i = 0; i < m->rows; ++i) {
    keys[i].len = m->offs[i + 1] - m->offs[i];
    keys[i].row = i;
  }
  for (int64_t w = 0; w < m->rows; w += sigma) {
    int64_t count = m->rows - w < sigma ? m->rows - w : sigma;
    qsort(keys + w, (size_t)count, sizeof(sell_key), sell_key_order);
  }
  /* Slot offsets: each slice as wide as its longest row (its first, unless sigma is not a
   * multiple of lanes and the slice straddles two windows). */
  int64_t slots = 0;
  for (int64_t s = 0; s < slices; ++s) {
    int64_t width = 0;
    for (int64_t r = s * lanes; r < (s + 1) * lanes && r < m->rows; ++r)
      width = keys[r].len > width ? keys[r].len : width;
    slots += width;
    if (slots > INT32_MAX || (slots > 0 && slots > INT64_MAX / lanes)) {
      free(keys);
      spl_sell_free(out);
      return SPL_MATRIX_ENOMEM;
    }
    out->soffs[s + 1] = (int32_t)slots;
  }
  for (int64_t r = 0; r < slices * lanes; ++r) {
    out->perm[r] = r < m->rows ? (int32_t)keys[r].row : -1;
    if (r < m->rows)
      out->pos[keys[r].row] = (int32_t)r;
  }
  if (sigma % lanes == 0) {
    out->wpos = (int32_t *)alloc_zeroed(slices * lanes, sizeof(int32_t));
    if (!out->wpos) {
      free(keys);
      spl_sell_free(out);
      return SPL_MATRIX_ENOMEM;
    }
    for (int64_t r = 0; r < slices * lanes; ++r)
      out->wpos[r] = (int32_t)((r < m->rows ? out->pos[r] : r) % sigma);
  }
  out->cols_idx = (int32_t *)alloc_zeroed(slots * lanes, sizeof(int32_t));
  out->vals = (double *)alloc_zeroed(slots * lanes, sizeof(double));
  if (!out->cols_idx || !out->vals) {
    free(keys);
    spl_sell_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t r = 0; r < m->rows; ++r) {
    int64_t s = r / lanes, l = r % lanes, row = keys[r].row;
    for (int64_t k = m->offs[row]; k < m->offs[row + 1]; ++k) {
      int64_t at = (out->soffs[s] + (k - m->offs[row])) * lanes + l;
      out->cols_idx[at] = m->cols_idx[k];
      out->vals[at] = m->vals[k];
    }
  }
  free(keys);
  out->vals_f32 = doubles_to_floats(out->vals, slots * lanes);
  if (!out->vals_f32) {
    spl_sell_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  out->rows = m->rows;
  out->cols = m->cols;
  out->nnz = m->nnz;
  out->lanes = lanes;
  out->sigma = sigma;
  out->slices = slices;
  return SPL_MATRIX_OK;
}

void spl_sell_free(spl_sell *m) {
  if (!m)
    return;
  free(m->soffs);
  free(m->cols_idx);
  free(m->vals);
  free(m->vals_f32);
  free(m->perm);
  free(m->pos);
  free(m->wpos);
  memset(m, 0, sizeof *m);
}

void spl_sell_unpermute(const spl_sell *m, const double *ys, double *y) {
  for (int64_t r = 0; r < m->slices * m->lanes; ++r)
    if (m->perm[r] >= 0)
      y[m->perm[r]] = ys[r];
}

void spl_sell_unpermute_f32(const spl_sell *m, const float *ys, float *y) {
  for (int64_t r = 0; r < m->slices * m->lanes; ++r)
    if (m->perm[r] >= 0)
      y[m->perm[r]] = ys[r];
}

/* Maps each diagonal offset j - i (shifted by rows - 1 to be non-negative) to its slot in the
 * result, -1 for diagonals without entries; returns the number of diagonals. */
static int64_t number_diagonals(const spl_csr *m, int64_t *slot_of) {
  int64_t span_count = m->rows + m->cols - 1;
  for (int64_t d = 0; d < span_count; ++d)
    slot_of[d] = -1;
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k)
      slot_of[m->cols_idx[k] - i + m->rows - 1] = 0;
  int64_t ndiags = 0;
  for (int64_t d = 0; d < span_count; ++d)
    if (slot_of[d] == 0)
      slot_of[d] = ndiags++;
  return ndiags;
}

int spl_csr_to_dia(const spl_csr *m, spl_dia *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m))
    return SPL_MATRIX_EINVAL;
  int64_t span_count = m->rows > 0 && m->cols > 0 ? m->rows + m->cols - 1 : 0;
  int64_t *slot_of = (int64_t *)alloc_array(span_count, sizeof(int64_t));
  if (!slot_of)
    return SPL_MATRIX_ENOMEM;
  int64_t ndiags = span_count > 0 ? number_diagonals(m, slot_of) : 0;
  if (ndiags > 0 && m->rows > INT64_MAX / ndiags) {
    free(slot_of);
    return SPL_MATRIX_ENOMEM;
  }
  out->offsets = (int32_t *)alloc_array(ndiags, sizeof(int32_t));
  out->data = (double *)alloc_zeroed(ndiags * m->rows, sizeof(double));
  if (!out->offsets || !out->data) {
    free(slot_of);
    spl_dia_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t d = 0; d < span_count; ++d)
    if (slot_of[d] >= 0)
      out->offsets[slot_of[d]] = (int32_t)(d - (m->rows - 1));
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k) {
      int64_t slot = slot_of[m->cols_idx[k] - i + m->rows - 1];
      out->data[slot * m->rows + i] = m->vals[k];
    }
  free(slot_of);
  out->data_f32 = doubles_to_floats(out->data, ndiags * m->rows);
  if (!out->data_f32) {
    spl_dia_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  out->rows = m->rows;
  out->cols = m->cols;
  out->ndiags = ndiags;
  return SPL_MATRIX_OK;
}

void spl_dia_free(spl_dia *m) {
  if (!m)
    return;
  free(m->offsets);
  free(m->data);
  free(m->data_f32);
  memset(m, 0, sizeof *m);
}

/* Lists the distinct block columns of block row I, sorted, in `list`; `seen[J]` records the
 * last block row that listed J, so no clearing is needed between block rows. */
static int64_t block_columns_of(const spl_csr *m, int64_t block, int64_t I, int64_t *seen,
                                int32_t *list) {
  int64_t count = 0;
  int64_t row_end = (I + 1) * block < m->rows ? (I + 1) * block : m->rows;
  for (int64_t i = I * block; i < row_end; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k) {
      int64_t J = m->cols_idx[k] / block;
      if (seen[J] != I) {
        seen[J] = I;
        list[count++] = (int32_t)J;
      }
    }
  qsort(list, (size_t)count, sizeof(int32_t), compare_int32);
  return count;
}

static void bcsr_fill(const spl_csr *m, spl_bcsr *out, int64_t *seen, int32_t *list,
                      int64_t *position_of) {
  int64_t b = out->block, written = 0;
  out->offs[0] = 0;
  for (int64_t I = 0; I < out->block_rows; ++I) {
    int64_t count = block_columns_of(m, b, I, seen, list);
    for (int64_t t = 0; t < count; ++t) {
      out->block_cols_idx[written + t] = list[t];
      position_of[list[t]] = written + t;
    }
    int64_t row_end = (I + 1) * b < m->rows ? (I + 1) * b : m->rows;
    for (int64_t i = I * b; i < row_end; ++i)
      for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k) {
        int64_t J = m->cols_idx[k] / b;
        int64_t r = i - I * b, c = m->cols_idx[k] - J * b;
        out->blocks[position_of[J] * b * b + r * b + c] = m->vals[k];
      }
    written += count;
    out->offs[I + 1] = (int32_t)written;
  }
}

int spl_csr_to_bcsr(const spl_csr *m, int64_t block, spl_bcsr *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m) || block < 1 || block > 65536)
    return SPL_MATRIX_EINVAL;
  int64_t block_rows = (m->rows + block - 1) / block, block_cols = (m->cols + block - 1) / block;
  int64_t *seen = (int64_t *)alloc_array(block_cols, sizeof(int64_t));
  int64_t *position_of = (int64_t *)alloc_array(block_cols, sizeof(int64_t));
  int32_t *list = (int32_t *)alloc_array(block_cols, sizeof(int32_t));
  int status = seen && position_of && list ? SPL_MATRIX_OK : SPL_MATRIX_ENOMEM;
  int64_t nblocks = 0;
  for (int64_t J = 0; status == SPL_MATRIX_OK && J < block_cols; ++J)
    seen[J] = -1;
  for (int64_t I = 0; status == SPL_MATRIX_OK && I < block_rows; ++I)
    nblocks += block_columns_of(m, block, I, seen, list);
  int64_t block_area = block * block;
  if (status == SPL_MATRIX_OK && (nblocks > INT32_MAX || nblocks > INT64_MAX / block_area))
    status = SPL_MATRIX_ENOMEM;
  if (status == SPL_MATRIX_OK) {
    out->offs = (int32_t *)alloc_array(block_rows + 1, sizeof(int32_t));
    out->block_cols_idx = (int32_t *)alloc_array(nblocks, sizeof(int32_t));
    out->blocks = (double *)alloc_zeroed(nblocks * block_area, sizeof(double));
    if (!out->offs || !out->block_cols_idx || !out->blocks)
      status = SPL_MATRIX_ENOMEM;
  }
  if (status == SPL_MATRIX_OK) {
    out->block = block;
    out->block_rows = block_rows;
    out->block_cols = block_cols;
    for (int64_t J = 0; J < block_cols; ++J)
      seen[J] = -1;
    bcsr_fill(m, out, seen, list, position_of);
    out->blocks_f32 = doubles_to_floats(out->blocks, nblocks * block_area);
    if (!out->blocks_f32)
      status = SPL_MATRIX_ENOMEM;
  }
  free(seen);
  free(position_of);
  free(list);
  if (status != SPL_MATRIX_OK) {
    spl_bcsr_free(out);
    return status;
  }
  out->rows = m->rows;
  out->cols = m->cols;
  out->nblocks = nblocks;
  return SPL_MATRIX_OK;
}

void spl_bcsr_free(spl_bcsr *m) {
  if (!m)
    return;
  free(m->offs);
  free(m->block_cols_idx);
  free(m->blocks);
  free(m->blocks_f32);
  memset(m, 0, sizeof *m);
}

int spl_csr_to_lil(const spl_csr *m, spl_lil *out) {
  if (!out)
    return SPL_MATRIX_EINVAL;
  memset(out, 0, sizeof *out);
  if (!usable(m))
    return SPL_MATRIX_EINVAL;
  out->lens = (int32_t *)alloc_array(m->rows, sizeof(int32_t));
  out->cols_idx = (int32_t *)alloc_array(m->nnz, sizeof(int32_t));
  out->vals = (double *)alloc_array(m->nnz, sizeof(double));
  out->vals_f32 = doubles_to_floats(m->vals, m->nnz);
  if (!out->lens || !out->cols_idx || !out->vals || !out->vals_f32) {
    spl_lil_free(out);
    return SPL_MATRIX_ENOMEM;
  }
  for (int64_t i = 0; i < m->rows; ++i)
    out->lens[i] = (int32_t)(m->offs[i + 1] - m->offs[i]);
  if (m->nnz > 0) {
    memcpy(out->cols_idx, m->cols_idx, (size_t)m->nnz * sizeof(int32_t));
    memcpy(out->vals, m->vals, (size_t)m->nnz * sizeof(double));
  }
  out->rows = m->rows;
  out->cols = m->cols;
  out->nnz = m->nnz;
  return SPL_MATRIX_OK;
}

void spl_lil_free(spl_lil *m) {
  if (!m)
    return;
  free(m->lens);
  free(m->cols_idx);
  free(m->vals);
  free(m->vals_f32);
  memset(m, 0, sizeof *m);
}

/* ==== References ============================================================================ */

void spl_ref_spmv(const spl_csr *m, const double *x, double *y) {
  for (int64_t i = 0; i < m->rows; ++i) {
    double sum = 0.0;
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k)
      sum += m->vals[k] * x[m->cols_idx[k]];
    y[i] = sum;
  }
}

void spl_ref_spmv_transposed(const spl_csr *m, const double *x, double *y) {
  for (int64_t j = 0; j < m->cols; ++j)
    y[j] = 0.0;
  for (int64_t i = 0; i < m->rows; ++i)
    for (int64_t k = m->offs[i]; k < m->offs[i + 1]; ++k)
      y[m->cols_idx[k]] += m->vals[k] * x[i];
}

double spl_rel_error_f64(const double *got, const double *want, int64_t n) {
  double largest_error = 0.0, largest_want = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (!isfinite(got[i]) || !isfinite(want[i]))
      return INFINITY;
    double error = fabs(got[i] - want[i]), magnitude = fabs(want[i]);
    if (error > largest_error)
      largest_error = error;
    if (magnitude > largest_want)
      largest_want = magnitude;
  }
  return largest_error / (largest_want > 1.0 ? largest_want : 1.0);
}

double spl_rel_error(const float *got, const double *want, int64_t n) {
  double largest_error = 0.0, largest_want = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double value = (double)got[i];
    if (!isfinite(value) || !isfinite(want[i]))
      return INFINITY;
    double error = fabs(value - want[i]), magnitude = fabs(want[i]);
    if (error > largest_error)
      largest_error = error;
    if (magnitude > largest_want)
      largest_want = magnitude;
  }
  return largest_error / (largest_want > 1.0 ? largest_want : 1.0);
}
