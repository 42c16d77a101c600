/* dia.cpp: spl_dia_convert_*, a CSR matrix turned into the DIA operands of stdlib/spmv.spl's
 * spmv_dia (the diagonals that hold entries, each stored whole), the conversion a plan makes
 * for stencils and banded matrices of full diagonals (issue 25, docs/plans.md).
 *
 * Two passes over row chunks on the pool: the first marks the diagonals in one set
 * (dia.h), then their offsets are listed in increasing order with a table from offset to
 * diagonal over the span they cover; the second zeroes each chunk's part of every diagonal and
 * adds its entries in (a duplicate entry adds up, as the CSR kernels sum it). Chunks own
 * disjoint rows, so they write disjoint slots.
 *
 * Assumes: offs has n + 1 entries; cols and vals hold the entries offs[0] .. offs[n] (row i at
 * offs[i] - offs[0] + k, as the CSR kernels read them). Checked: sizes within int32 (the kernel
 * computes i + offset in 32 bits), pointers, monotone offsets (SPL_ERR_BAD_INPUT); memory
 * (SPL_ERR_ALLOC). An entry whose column lies outside [0, m) is left out, as spmv_dia ignores it.
 */
#include "export.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "csr_arrays.h"
#include "dia.h"

namespace spl_rt {
namespace {

constexpr int64_t kRowsPerChunk = 1 << 14;

/* A chunk's entries are marked first in a byte map of its own over kLocalSpan offsets around
 * its first entry's (a band's or a stencil's diagonals all fall in it): a plain store of a byte
 * per entry, where or-ing bits into words made chains of stores to one word and ran at half
 * the speed. Entries outside the window mark the shared set directly. Every kCheckEntries
 * entries marked the chunk counts its map (by entries, not rows: a chunk of a few long rows must
 * stop early too), so that it stops soon after the count passes the limit. */
constexpr int64_t kLocalSpan = 1 << 14;
constexpr int64_t kCheckEntries = 1 << 15;

struct Marking {
  const int32_t *offs, *cols;
  int64_t n, m, limit;
  DiagonalSet *set;
  std::atomic<int64_t> marked{0}; /* diagonals in the shared set so far, by all chunks */

  static void run(void *closure, int64_t begin, int64_t end) {
    Marking &mk = *static_cast<Marking *>(closure);
    for (int64_t c = begin; c < end; ++c)
      mk.chunk(c);
  }

  void chunk(int64_t c) {
    if (marked.load(std::memory_order_relaxed) > limit)
      return;
    const int64_t r0 = c * kRowsPerChunk, r1 = std::min(n, r0 + kRowsPerChunk), base = offs[0];
    std::vector<uint8_t> seen(static_cast<size_t>(kLocalSpan), 0);
    /* The window: centred on the chunk's first entry's offset (0 for a chunk without entries). */
    int64_t low = -kLocalSpan / 2;
    for (int64_t i = r0; i < r1; ++i)
      if (offs[i + 1] > offs[i]) {
        low = cols[offs[i] - base] - i - kLocalSpan / 2;
        break;
      }
    int64_t added = 0, unchecked = 0; /* unchecked: entries marked since the last count */
    /* Once kCheckEntries entries more are marked: false once the diagonals counted pass the
     * limit (entries of the rows a run skips add no diagonal). */
    auto within_limit = [&](int64_t row) {
      unchecked += static_cast<int64_t>(offs[row + 1]) - offs[row];
      if (unchecked < kCheckEntries)
        return true;
      unchecked = 0;
      int64_t local = added;
      for (uint8_t b : seen)
        local += b;
      if (local > limit || marked.load(std::memory_order_relaxed) > limit) {
        marked.fetch_add(limit + 1, std::memory_order_relaxed);
        return false;
      }
      return true;
    };
    /* Runs of rows of one length: where each row of a run holds the row before it shifted by one
     * column (a band's or a stencil's rows between the grid's edges), its diagonals are those of
     * the run's first row, which alone is marked: ecology1's count (500,000 rows of five) took
     * 2.7 ms marking every entry, longer than a CSR call. A row that breaks the shift starts the
     * next such run; a row with a column outside [0, m) vouches for no row after it. */
    for (int64_t i = r0; i < r1;) {
      const int64_t length = static_cast<int64_t>(offs[i + 1]) - offs[i];
      int64_t end = i + 1;
      while (end < r1 && static_cast<int64_t>(offs[end + 1]) - offs[end] == length)
        ++end;
      while (i < end) {
        const bool valid = mark_row(i, low, seen.data(), added);
        if (!within_limit(i))
          return;
        i = valid && length > 0 ? shifted_from(i, end, length) : i + 1;
      }
    }
    /* The window's marks into the set, eight bytes at a time (most are 0). */
    for (int64_t word = 0; word < kLocalSpan; word += 8) {
      uint64_t bytes;
      std::memcpy(&bytes, seen.data() + word, sizeof bytes);
      if (bytes == 0)
        continue;
      for (int64_t at = word; at < word + 8; ++at)
        if (seen[static_cast<size_t>(at)])
          added += set->mark_offset(low + at);
    }
    marked.fetch_add(added, std::memory_order_relaxed);
  }

  /* Marks row i's diagonals (in `seen` within the window from `low`, else in the shared set,
   * counting those new to it in `added`); true when every column lay within [0, m). */
  bool mark_row(int64_t i, int64_t low, uint8_t *seen, int64_t &added) {
    const uint64_t columns = static_cast<uint64_t>(m);
    const int64_t base = offs[0];
    bool valid = true;
    for (int64_t p = offs[i] - base, end = offs[i + 1] - base; p < end; ++p) {
      const int64_t j = cols[p];
      if (static_cast<uint64_t>(j) >= columns) {
        valid = false;
        continue;
      }
      const uint64_t at = static_cast<uint64_t>(j - i - low);
      if (at < static_cast<uint64_t>(kLocalSpan))
        seen[at] = 1;
      else
        added += set->mark_offset(j - i);
    }
    return valid;
  }

  /* The first row of first + 1 .. end (each `length` long, as row first is) that does not hold
   * the row before it shifted by one column, or end where all do: their columns as a flat array,
   * the entry `length` before each its match (csr_arrays.h's first_where, which vectorises).
   * The rows before that one hold row first's diagonals (their columns past m, which the kernel
   * ignores, lie on diagonals row first marked, whose columns were all within [0, m)). */
  int64_t shifted_from(int64_t first, int64_t end, int64_t length) const {
    const int64_t base = offs[0];
    const int32_t *const run = cols + (offs[first] - base);
    const int64_t count = static_cast<int64_t>(offs[end]) - offs[first + 1];
    const int64_t k = first_where(count, [run, length](int64_t e) {
      return static_cast<uint32_t>(run[e + length]) - static_cast<uint32_t>(run[e]) != 1u;
    });
    return k == count ? end : first + 1 + k / length; /* entry k + length lies in that row */
  }
};

template <typename T> struct Filling {
  const int32_t *offs, *cols;
  const T *vals;
  int64_t n, m, diagonals, low; /* low: the smallest offset, where `index` starts */
  const int32_t *index;         /* offset - low -> its diagonal */
  T *diags;
  const Deadline *deadline;     /* a plan's (deadline.h): chunks past it are left unfilled */

  static void run(void *closure, int64_t begin, int64_t end) {
    Filling &f = *static_cast<Filling *>(closure);
    DeadlineWatch watch(*f.deadline);
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * kRowsPerChunk, r1 = std::min(f.n, r0 + kRowsPerChunk);
      if (watch.passed(f.diagonals * (r1 - r0))) /* each chunk writes its rows of every diagonal */
        return;
      f.chunk(c);
    }
  }

  void chunk(int64_t c) {
    const int64_t r0 = c * kRowsPerChunk, r1 = std::min(n, r0 + kRowsPerChunk);
    for (int64_t k = 0; k < diagonals; ++k)
      std::fill(diags + k * n + r0, diags + k * n + r1, T(0));
    const int32_t base = offs[0];
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t p = static_cast<int64_t>(offs[i]) - base; p < static_cast<int64_t>(offs[i + 1]) - base; ++p) {
        const int64_t j = cols[p];
        if (j < 0 || j >= m)
          continue;
        diags[index[j - i - low] * n + i] += vals[p];
      }
  }
};

void run_chunks(int64_t n, spl_range_fn fn, void *closure) {
  const int64_t chunks = (n + kRowsPerChunk - 1) / kRowsPerChunk;
  if (chunks <= 1 || spl_num_threads() == 1)
    fn(closure, 0, chunks);
  else
    spl_parallel_for(0, chunks, 1, fn, closure);
}

/* The CSR arrays, and sizes the kernel's 32-bit i + offset can hold. */
bool valid(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols) {
  return n <= INT32_MAX && m <= INT32_MAX && valid_csr(n, m, offs, cols);
}

/* The diagonals' offsets in increasing order, or false when there are more than limit. */
bool diagonals_within(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t limit,
                      std::vector<int32_t> *offsets) {
  DiagonalSet set(n, m);
  Marking marking{offs, cols, n, m, limit, &set};
  run_chunks(n, &Marking::run, &marking);
  if (marking.marked.load() > limit)
    return false;
  if (offsets != nullptr) {
    offsets->clear();
    set.each([&](int64_t offset) { offsets->push_back(static_cast<int32_t>(offset)); });
  }
  return true;
}

template <typename T>
int convert_listed(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals,
                   const std::vector<int32_t> &offsets, const Deadline &deadline, spl_dia_operands *out) {
  std::vector<int32_t> index;
  try {
    if (!offsets.empty()) {
      index.assign(static_cast<size_t>(offsets.back() - offsets.front() + 1), -1);
      for (size_t k = 0; k < offsets.size(); ++k)
        index[static_cast<size_t>(offsets[k] - offsets.front())] = static_cast<int32_t>(k);
    }
  } catch (const std::bad_alloc &) {
    return SPL_ERR_ALLOC;
  }
  const int64_t diagonals = static_cast<int64_t>(offsets.size());
  out->rows = n;
  out->cols = m;
  out->diagonals = diagonals;
  if (diagonals > 0 && n > PTRDIFF_MAX / static_cast<int64_t>(sizeof(T)) / diagonals)
    return SPL_ERR_ALLOC;
  out->offsets = static_cast<int32_t *>(spl_alloc(static_cast<size_t>(std::max<int64_t>(diagonals, 1)) * sizeof(int32_t)));
  out->diags = spl_alloc(static_cast<size_t>(std::max<int64_t>(diagonals * n, 1)) * sizeof(T));
  if (out->offsets == nullptr || out->diags == nullptr) {
    spl_dia_operands_free(out);
    return SPL_ERR_ALLOC;
  }
  std::copy(offsets.begin(), offsets.end(), out->offsets);
  Filling<T> filling{offs, cols, vals, n, m, diagonals, offsets.empty() ? 0 : offsets.front(), index.data(),
                     static_cast<T *>(out->diags), &deadline};
  run_chunks(n, &Filling<T>::run, &filling);
  if (deadline.stopped()) {
    spl_dia_operands_free(out);
    return kStoppedAtDeadline;
  }
  out->bytes = diagonals * (n * static_cast<int64_t>(sizeof(T)) + static_cast<int64_t>(sizeof(int32_t)));
  return SPL_OK;
}

template <typename T>
int convert(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, spl_dia_operands *out) {
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  std::memset(out, 0, sizeof *out);
  if (!valid(n, m, offs, cols) || (offs[n] != offs[0] && vals == nullptr))
    return SPL_ERR_BAD_INPUT;
  std::vector<int32_t> offsets;
  try {
    diagonals_within(n, m, offs, cols, INT64_MAX - 1, &offsets);
  } catch (const std::bad_alloc &) {
    return SPL_ERR_ALLOC;
  }
  return convert_listed(n, m, offs, cols, vals, offsets, Deadline::none(), out);
}

} // namespace

int list_diagonals(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t limit,
                   std::vector<int32_t> &offsets, bool &within) {
  if (!valid(n, m, offs, cols) || limit < 0 || limit == INT64_MAX)
    return SPL_ERR_BAD_INPUT;
  try {
    within = diagonals_within(n, m, offs, cols, limit, &offsets);
  } catch (const std::bad_alloc &) {
    return SPL_ERR_ALLOC;
  }
  return SPL_OK;
}

int convert_listed_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                       const std::vector<int32_t> &offsets, const Deadline &deadline, spl_dia_operands *out) {
  std::memset(out, 0, sizeof *out);
  return convert_listed(n, m, offs, cols, vals, offsets, deadline, out);
}

int convert_listed_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                       const std::vector<int32_t> &offsets, const Deadline &deadline, spl_dia_operands *out) {
  std::memset(out, 0, sizeof *out);
  return convert_listed(n, m, offs, cols, vals, offsets, deadline, out);
}

} // namespace spl_rt

int spl_csr_diagonals(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t limit, int64_t *count) {
  if (count == nullptr)
    return SPL_ERR_BAD_INPUT;
  *count = 0;
  std::vector<int32_t> offsets;
  bool within = false;
  if (int rc = spl_rt::list_diagonals(n, m, offs, cols, limit, offsets, within); rc != SPL_OK)
    return rc;
  *count = within ? static_cast<int64_t>(offsets.size()) : limit + 1;
  return SPL_OK;
}

int spl_dia_convert_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                        spl_dia_operands *out) {
  return spl_rt::convert<float>(n, m, offs, cols, vals, out);
}

int spl_dia_convert_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                        spl_dia_operands *out) {
  return spl_rt::convert<double>(n, m, offs, cols, vals, out);
}

void spl_dia_operands_free(spl_dia_operands *d) {
  if (d == nullptr)
    return;
  spl_free(d->offsets);
  spl_free(d->diags);
  std::memset(d, 0, sizeof *d);
}
