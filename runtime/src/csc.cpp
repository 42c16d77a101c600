/* csc.cpp: spl_csc_convert_*, a CSR matrix's transpose in CSR form (the matrix in CSC), the
 * conversion of a plan for y = A^T x (issue 25, docs/plans.md): over the copy, A^T x is a CSR
 * SpMV, a gather that runs in parallel, where over A it is a scatter into y.
 *
 * A counting sort by column, on the pool: the rows are cut into parts of about equal entries
 * (spl_balance_rows_i32), one per thread up to kMaxParts; each part counts its entries per
 * column, the column offsets and each part's start within each column follow on the calling
 * thread, then each part places its entries. Parts hold increasing rows, so each column lists
 * its entries in increasing row, and the sum of a row of A^T adds them in the order a scatter
 * over A does: the result does not depend on the thread count.
 *
 * A plan's conversion (convert_csc, csc.h) gives up at planning's deadline (each part looks at
 * it between rows, deadline.h).
 *
 * Assumes: offs has n + 1 entries; cols and vals hold the entries offs[0] .. offs[n] (row i at
 * offs[i] - offs[0] + k). Checked: sizes, pointers, monotone offsets, columns in [0, m)
 * (SPL_ERR_BAD_INPUT: a column outside would be written outside the copy); memory (SPL_ERR_ALLOC).
 */
#include "export.h"

#include "csc.h"
#include "csr_arrays.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <new>
#include <vector>

namespace spl_rt {
namespace {

constexpr int64_t kMaxParts = 8; /* counts take parts x m integers */

template <typename T> struct Transpose {
  int64_t n, m, parts;
  const int32_t *offs, *cols;
  const T *vals;
  const int64_t *bounds;           /* parts + 1 row boundaries */
  std::vector<int64_t> *counts;    /* per part: its entries per column, then its next slot */
  int32_t *rows_out;
  T *vals_out;
  const Deadline *deadline;        /* a plan's (deadline.h): rows past it are left out */
  std::atomic<bool> bad{false};    /* a column outside [0, m) */

  static void count_parts(void *closure, int64_t begin, int64_t end) {
    Transpose &t = *static_cast<Transpose *>(closure);
    for (int64_t q = begin; q < end; ++q) {
      std::vector<int64_t> &c = t.counts[q];
      const int64_t base = t.offs[0];
      DeadlineWatch watch(*t.deadline);
      for (int64_t i = t.bounds[q]; i < t.bounds[q + 1]; ++i) {
        if (watch.passed(static_cast<int64_t>(t.offs[i + 1]) - t.offs[i]))
          return;
        for (int64_t p = t.offs[i] - base; p < t.offs[i + 1] - base; ++p) {
          const int64_t j = t.cols[p];
          if (j < 0 || j >= t.m) {
            t.bad.store(true, std::memory_order_relaxed); /* read after the join */
            return;
          }
          c[static_cast<size_t>(j)]++;
        }
      }
    }
  }

  static void place_parts(void *closure, int64_t begin, int64_t end) {
    Transpose &t = *static_cast<Transpose *>(closure);
    for (int64_t q = begin; q < end; ++q) {
      std::vector<int64_t> &next = t.counts[q];
      const int64_t base = t.offs[0];
      DeadlineWatch watch(*t.deadline);
      for (int64_t i = t.bounds[q]; i < t.bounds[q + 1]; ++i) {
        if (watch.passed(static_cast<int64_t>(t.offs[i + 1]) - t.offs[i]))
          return;
        for (int64_t p = t.offs[i] - base; p < t.offs[i + 1] - base; ++p) {
          const int64_t at = next[static_cast<size_t>(t.cols[p])]++;
          t.rows_out[at] = static_cast<int32_t>(i);
          t.vals_out[at] = t.vals[p];
        }
      }
    }
  }
};

} // namespace

/* spl_csc_convert_*, giving up at `deadline` (kStoppedAtDeadline, nothing left allocated). */
template <typename T>
int convert_csc(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, const Deadline &deadline,
                spl_csc_operands *out) {
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  std::memset(out, 0, sizeof *out);
  if (n > INT32_MAX || m > INT32_MAX - 1 || !valid_csr(n, m, offs, cols) || (offs[n] != offs[0] && vals == nullptr))
    return SPL_ERR_BAD_INPUT;
  const int64_t entries = static_cast<int64_t>(offs[n]) - offs[0];
  out->rows = n;
  out->cols = m;
  out->entries = entries;
  out->offs = static_cast<int32_t *>(spl_alloc(sizeof(int32_t) * static_cast<size_t>(m + 1)));
  out->rows_idx = static_cast<int32_t *>(spl_alloc(sizeof(int32_t) * static_cast<size_t>(std::max<int64_t>(entries, 1))));
  out->vals = spl_alloc(sizeof(T) * static_cast<size_t>(std::max<int64_t>(entries, 1)));
  if (out->offs == nullptr || out->rows_idx == nullptr || out->vals == nullptr) {
    spl_csc_operands_free(out);
    return SPL_ERR_ALLOC;
  }
  try {
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>({kMaxParts, spl_num_threads(), std::max<int64_t>(n, 1)}));
    std::vector<int64_t> bounds(static_cast<size_t>(parts + 1), 0);
    spl_balance_rows_i32(offs, n, parts, bounds.data());
    std::vector<std::vector<int64_t>> counts(static_cast<size_t>(parts), std::vector<int64_t>(static_cast<size_t>(m), 0));
    Transpose<T> t{n, m, parts, offs, cols, vals, bounds.data(), counts.data(), out->rows_idx, static_cast<T *>(out->vals),
                   &deadline};
    auto each_part = [&](spl_range_fn fn) {
      if (parts == 1)
        fn(&t, 0, 1);
      else
        spl_parallel_for(0, parts, 1, fn, &t);
    };
    each_part(&Transpose<T>::count_parts);
    if (t.bad) {
      spl_csc_operands_free(out);
      return SPL_ERR_BAD_INPUT;
    }
    if (deadline.stopped()) {
      spl_csc_operands_free(out);
      return kStoppedAtDeadline;
    }
    /* Column offsets, and each part's first slot in each column (its counts become cursors). */
    int64_t at = 0;
    for (int64_t j = 0; j < m; ++j) {
      out->offs[j] = static_cast<int32_t>(at);
      for (int64_t q = 0; q < parts; ++q) {
        const int64_t c = counts[static_cast<size_t>(q)][static_cast<size_t>(j)];
        counts[static_cast<size_t>(q)][static_cast<size_t>(j)] = at;
        at += c;
      }
    }
    out->offs[m] = static_cast<int32_t>(at);
    each_part(&Transpose<T>::place_parts);
    if (deadline.stopped()) {
      spl_csc_operands_free(out);
      return kStoppedAtDeadline;
    }
  } catch (const std::bad_alloc &) {
    spl_csc_operands_free(out);
    return SPL_ERR_ALLOC;
  }
  out->bytes = static_cast<int64_t>(sizeof(int32_t)) * (m + 1) + (static_cast<int64_t>(sizeof(int32_t)) + static_cast<int64_t>(sizeof(T))) * entries;
  return SPL_OK;
}

template int convert_csc<float>(int64_t, int64_t, const int32_t *, const int32_t *, const float *, const Deadline &,
                                spl_csc_operands *);
template int convert_csc<double>(int64_t, int64_t, const int32_t *, const int32_t *, const double *, const Deadline &,
                                 spl_csc_operands *);

} // namespace spl_rt

int spl_csc_convert_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                        spl_csc_operands *out) {
  return spl_rt::convert_csc<float>(n, m, offs, cols, vals, spl_rt::Deadline::none(), out);
}

int spl_csc_convert_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                        spl_csc_operands *out) {
  return spl_rt::convert_csc<double>(n, m, offs, cols, vals, spl_rt::Deadline::none(), out);
}

void spl_csc_operands_free(spl_csc_operands *c) {
  if (c == nullptr)
    return;
  spl_free(c->offs);
  spl_free(c->rows_idx);
  spl_free(c->vals);
  std::memset(c, 0, sizeof *c);
}
