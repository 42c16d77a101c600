/* bcsr.cpp: spl_csr_blocks and spl_bcsr_convert_*, a CSR matrix turned into the BCSR operands of
 * stdlib/spmv.spl's spmv_bcsr2/3 kernels (dense b x b blocks, one column index a block), the
 * conversion a plan makes for matrices of dense blocks (issue 25, docs/plans.md); and
 * sample_blocks (bcsr.h), the count a plan makes first to estimate the copy's fill.
 *
 * Block row I holds rows b*I .. b*I + b - 1 (the last one fewer when b does not divide n); its
 * blocks are the distinct block columns J = j / b of those rows' entries, in increasing J, and
 * block k of the copy holds A(b*I + r, b*J + c) at vals[(k * b + r) * b + c], 0 where A has no
 * entry. Two passes over block rows: the first counts each one's blocks and notes its shape
 * (dense blocks in order, aligned rows, sorted rows, or none of these), the offsets follow from
 * the counts, the second lists, orders and fills them as the shape allows: a block row of dense
 * blocks is a copy of its values, with no clearing first and no sum an entry (3 x 3, one / two
 * threads, 2026-11-29: pdb1HYS 19.6 -> 11.3 / 14.6 -> 7.5 ms, pwtk 59 -> 32 / 28 -> 20 ms,
 * shipsec1 46 -> 27 / 17 -> 14 ms, dense2 15.4 -> 9.1 ms on one; what is left is mostly the first touch of the copy's pages,
 * 0.5 ms a MB on this VM). A block row's block columns are found in a small open-addressing
 * table sized by its own entries (BlockColumns) rather than in a table over all m columns: its
 * memory stays bounded by the longest block row whatever m is (a web graph's 10^7 columns would
 * otherwise cost each thread 40 MB of first touches before the first entry). Both passes run on the pool over runs of block rows of equal work; a run
 * writes only its block rows' offsets, columns and values.
 *
 * Assumes: offs has n + 1 entries; cols and vals hold the entries offs[0] .. offs[n] (row i at
 * offs[i] - offs[0] + k, as the CSR kernels read them). Checked: pointers, monotone offsets,
 * 1 <= b <= kMaxBlock (SPL_ERR_BAD_INPUT); a copy the int32 offsets or memory cannot hold
 * (SPL_ERR_ALLOC). A duplicate entry adds up, as the CSR kernels sum it; an entry whose column
 * lies outside [0, m) is left out, as the DIA conversion leaves it.
 */
#include "export.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "bcsr.h"
#include "csr_arrays.h"

namespace spl_rt {
namespace {

constexpr int64_t kMaxBlock = 64;     /* b at most: a block's b * b values stay a few pages */
constexpr int64_t kSampleRun = 64;    /* block rows in one run of sample_blocks (a few 10 KB of
                                       * columns: long enough for the prefetchers, short enough
                                       * that a matrix of a few thousand rows has runs to skip) */

/* The distinct block columns of one block row, each with a number (its slot): open addressing
 * with linear probing over a power of two of at least twice the block row's entries, cleared
 * for every block row. */
class BlockColumns {
public:
  void reset(int64_t entries) {
    size_t size = 16;
    while (size < static_cast<size_t>(2 * entries))
      size <<= 1;
    if (keys_.size() < size) {
      keys_.assign(size, -1);
      slots_.resize(size);
    } else {
      std::fill(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(size), -1);
    }
    mask_ = size - 1;
  }

  /* Block column J's place in the table: a new one gets `slot`, and `added` tells. */
  int32_t &insert(int32_t block_column, int32_t slot, bool &added) {
    size_t at = hash(block_column);
    while (keys_[at] != -1 && keys_[at] != block_column)
      at = (at + 1) & mask_;
    added = keys_[at] == -1;
    if (added) {
      keys_[at] = block_column;
      slots_[at] = slot;
    }
    return slots_[at];
  }

private:
  size_t hash(int32_t block_column) const {
    return static_cast<size_t>((static_cast<uint64_t>(static_cast<uint32_t>(block_column)) * 0x9E3779B97F4A7C15ull) >> 32) &
           mask_;
  }

  std::vector<int32_t> keys_, slots_;
  size_t mask_ = 0;
};

/* The block size as the passes divide by it: a constant for the sizes the plans use (a
 * division by a constant is a multiply), else a run-time value. */
template <uint32_t B> struct FixedWidth {
  uint32_t operator()() const { return B; }
};
struct RuntimeWidth {
  uint32_t b;
  uint32_t operator()() const { return b; }
};
template <typename Body> void with_width(int64_t b, const Body &body) {
  switch (b) {
  case 2: body(FixedWidth<2>{}); break;
  case 3: body(FixedWidth<3>{}); break;
  case 4: body(FixedWidth<4>{}); break;
  default: body(RuntimeWidth{static_cast<uint32_t>(b)}); break;
  }
}

/* How a block row's blocks are found and written, from the most regular (and cheapest) on: the
 * count decides it once, the fill follows it. */
enum class Shape : uint8_t { Dense, Aligned, Sorted, Unsorted };

/* A matrix's CSR arrays and the block size, read by both passes. */
struct Blocking {
  const int32_t *offs, *cols;
  int64_t n, m, b;

  int64_t row_end(int64_t block_row) const { return std::min(n, (block_row + 1) * b); }
  int64_t entries(int64_t block_row) const {
    return static_cast<int64_t>(offs[row_end(block_row)]) - offs[block_row * b];
  }
  /* Whether block row I's rows list their columns in nondecreasing order, as CSR matrices
   * usually do: then its blocks come from merging its rows, in order, without a table. */
  bool sorted(int64_t block_row) const {
    for (int64_t i = block_row * b; i < row_end(block_row); ++i)
      for (int64_t p = offs[i] - offs[0] + 1, end = offs[i + 1] - offs[0]; p < end; ++p)
        if (cols[p] < cols[p - 1])
          return false;
    return true;
  }

  /* Whether block row I is made of dense blocks stored in order, as FEM matrices are: b rows
   * that list the same columns, in runs of b consecutive columns from a multiple of b, the runs
   * increasing, all in [0, m); the last run may be shorter where it ends at column m - 1 (the
   * matrix's last block column is partial: a dense matrix of 1414 columns in 3 x 3 blocks).
   * Its blocks are then the runs of its first row, and their values the rows' values in order,
   * copied without a sum (equality tests only: the loops vectorise). */
  template <typename Width> bool dense(int64_t block_row, Width width) const {
    const int64_t r0 = block_row * b, length = offs[r0 + 1] - offs[r0], whole = length / b * b, tail = length - whole;
    if (row_end(block_row) - r0 != b)
      return false;
    for (int64_t i = r0 + 1; i < r0 + b; ++i)
      if (offs[i + 1] - offs[i] != length)
        return false;
    const uint32_t columns = static_cast<uint32_t>(std::min<int64_t>(m, UINT32_MAX));
    const uint32_t *first = reinterpret_cast<const uint32_t *>(cols + (offs[r0] - offs[0]));
    uint32_t failed = 0;
    for (int64_t q = 0; q < whole; q += b) {
      const uint32_t start = first[q];
      failed += (start >= columns) | (start % width() != 0) | (start + (width() - 1) >= columns) | (q > 0 && start <= first[q - 1]);
      for (int64_t c = 1; c < b; ++c)
        failed += first[q + c] != start + static_cast<uint32_t>(c);
    }
    if (tail > 0) {
      const uint32_t start = first[whole];
      failed += (start % width() != 0) | (static_cast<int64_t>(start) + tail != m) | (whole > 0 && start <= first[whole - 1]);
      for (int64_t c = 1; c < tail; ++c)
        failed += first[whole + c] != start + static_cast<uint32_t>(c);
    }
    for (int64_t i = r0 + 1; i < r0 + b && failed == 0; ++i) {
      const uint32_t *row = reinterpret_cast<const uint32_t *>(cols + (offs[i] - offs[0]));
      for (int64_t p = 0; p < length; ++p)
        failed += row[p] != first[p];
    }
    return failed == 0;
  }

  /* Whether block row I is aligned, as the rows of dense blocks stored in order are: its rows
   * have one length and, place by place, entries in one block column, nondecreasing along the
   * rows, all in [0, m). Its blocks are then the changes of block column along any one row,
   * found without a merge (branch-free loops over the columns). */
  template <typename Width> bool aligned(int64_t block_row, Width width) const {
    const int64_t r0 = block_row * b, r1 = row_end(block_row), length = offs[r0 + 1] - offs[r0];
    for (int64_t i = r0 + 1; i < r1; ++i)
      if (offs[i + 1] - offs[i] != length)
        return false;
    const uint32_t columns = static_cast<uint32_t>(std::min<int64_t>(m, UINT32_MAX));
    /* Counts of failed tests in unsigned words, so that the loops vectorise. */
    const uint32_t *first = reinterpret_cast<const uint32_t *>(cols + (offs[r0] - offs[0]));
    uint32_t failed = length > 0 && first[0] >= columns;
    for (int64_t p = 1; p < length; ++p)
      failed += (first[p] >= columns) | (first[p] / width() < first[p - 1] / width());
    for (int64_t i = r0 + 1; i < r1 && failed == 0; ++i) {
      const uint32_t *row = reinterpret_cast<const uint32_t *>(cols + (offs[i] - offs[0]));
      for (int64_t p = 0; p < length; ++p)
        failed += (row[p] >= columns) | (row[p] / width() != first[p] / width());
    }
    return failed == 0;
  }

  /* The changes of block column from entry to entry over block rows [I0, I1), taken as one
   * stream of columns (row ends included). With rows in column order, a row meets each of its
   * blocks once, in one stretch, so each block is met at most b times and [I0, I1) holds at
   * least (changes + 1) / b blocks: a lower bound of the fill from a pass that vectorises. */
  template <typename Width> int64_t changes(int64_t I0, int64_t I1, Width width) const {
    const uint32_t *stream = reinterpret_cast<const uint32_t *>(cols + (offs[I0 * b] - offs[0]));
    const int64_t length = offs[row_end(I1 - 1)] - offs[I0 * b];
    uint32_t count = length > 0; /* a run holds under 2^31 entries */
    for (int64_t p = 1; p < length; ++p)
      count += stream[p] / width() != stream[p - 1] / width();
    return count;
  }

  /* The blocks of an aligned block row: the block column's changes along its first row. */
  template <typename Width> int64_t aligned_count(int64_t block_row, Width width) const {
    const int64_t r0 = block_row * b, length = offs[r0 + 1] - offs[r0];
    const uint32_t *first = reinterpret_cast<const uint32_t *>(cols + (offs[r0] - offs[0]));
    uint32_t blocks = length > 0;
    for (int64_t p = 1; p < length; ++p)
      blocks += first[p] / width() != first[p - 1] / width();
    return blocks;
  }

  /* Merges the rows of block row I (sorted) by block column: block(k, J) for its k-th block
   * column J in increasing order, then entry(k, r, c, p) for each of its entries (row b*I + r,
   * column b*J + c, at p in cols and vals). Entries outside [0, m) are skipped. Returns the
   * blocks. */
  template <typename Width, typename Block, typename Entry>
  int64_t merge(int64_t block_row, Width width, const Block &block, const Entry &entry) const {
    const int64_t r0 = block_row * b, rows = row_end(block_row) - r0;
    int64_t head[kMaxBlock], end[kMaxBlock];
    for (int64_t r = 0; r < rows; ++r) {
      head[r] = offs[r0 + r] - offs[0];
      end[r] = offs[r0 + r + 1] - offs[0];
      while (head[r] < end[r] && cols[head[r]] < 0)
        ++head[r];
      while (end[r] > head[r] && cols[end[r] - 1] >= m)
        --end[r];
    }
    int64_t k = 0;
    for (;; ++k) {
      uint32_t J = UINT32_MAX;
      for (int64_t r = 0; r < rows; ++r)
        if (head[r] < end[r])
          J = std::min(J, static_cast<uint32_t>(cols[head[r]]) / width());
      if (J == UINT32_MAX)
        return k;
      block(k, static_cast<int32_t>(J));
      for (int64_t r = 0; r < rows; ++r)
        for (; head[r] < end[r]; ++head[r]) {
          const uint32_t j = static_cast<uint32_t>(cols[head[r]]);
          if (j / width() != J)
            break;
          entry(k, r, j - J * width(), head[r]);
        }
    }
  }

  /* The blocks of block row I, in any column order (entries outside [0, m) left out), and the
   * shape that tells fill how to write them. */
  template <typename Width> int64_t count(int64_t block_row, Width width, BlockColumns &table, Shape &shape) const {
    if (dense(block_row, width)) {
      shape = Shape::Dense;
      return (offs[block_row * b + 1] - offs[block_row * b] + b - 1) / b;
    }
    if (aligned(block_row, width)) {
      shape = Shape::Aligned;
      return aligned_count(block_row, width);
    }
    if (sorted(block_row)) {
      shape = Shape::Sorted;
      return merge(block_row, width, [](int64_t, int32_t) {}, [](int64_t, int64_t, uint32_t, int64_t) {});
    }
    shape = Shape::Unsorted;
    table.reset(entries(block_row));
    const uint32_t columns = static_cast<uint32_t>(std::min<int64_t>(m, UINT32_MAX));
    int64_t blocks = 0;
    bool added = false;
    for (int64_t p = offs[block_row * b] - offs[0], end = offs[row_end(block_row)] - offs[0]; p < end; ++p) {
      const uint32_t j = static_cast<uint32_t>(cols[p]);
      if (j >= columns)
        continue;
      table.insert(static_cast<int32_t>(j / width()), 0, added);
      blocks += added;
    }
    return blocks;
  }

  /* Writes block row I's block columns (bcols) and values (vals, zeroed first) from block
   * `base` on; `table` and the vectors are the calling part's, reused from row to row. */
  template <typename T, typename Width>
  void fill(int64_t block_row, Shape shape, Width width, const T *vals, int64_t base, int64_t count, int32_t *bcols, T *bvals,
            BlockColumns &table, std::vector<int32_t> &listed, std::vector<int32_t> &slot_of, std::vector<int32_t> &order,
            std::vector<int32_t> &place) const {
    const int64_t area = b * b;
    T *block_vals = bvals + base * area;
    if (shape == Shape::Dense) {
      /* Block after block, its rows in order: the copy's stores run along it (the width a
       * constant where with_width made it one, so that a block's copy unrolls). */
      const int64_t r0 = block_row * b, w = width();
      const int32_t *first = cols + (offs[r0] - offs[0]);
      const T *rows = vals + (offs[r0] - offs[0]);
      const int64_t length = offs[r0 + 1] - offs[r0], whole = length / w;
      for (int64_t k = 0; k < whole; ++k) {
        bcols[base + k] = static_cast<int32_t>(static_cast<uint32_t>(first[k * w]) / width());
        T *block = block_vals + k * w * w;
        for (int64_t r = 0; r < w; ++r)
          for (int64_t c = 0; c < w; ++c)
            block[r * w + c] = rows[r * length + k * w + c];
      }
      if (whole < count) { /* the partial last block column: its columns past m stay 0 */
        const int64_t tail = length - whole * w;
        bcols[base + whole] = static_cast<int32_t>(static_cast<uint32_t>(first[whole * w]) / width());
        T *block = block_vals + whole * w * w;
        std::fill(block, block + w * w, T(0));
        for (int64_t r = 0; r < w; ++r)
          for (int64_t c = 0; c < tail; ++c)
            block[r * w + c] = rows[r * length + whole * w + c];
      }
      return;
    }
    std::fill(block_vals, block_vals + count * area, T(0));
    if (shape == Shape::Aligned) {
      const int64_t r0 = block_row * b, rows = row_end(block_row) - r0, length = offs[r0 + 1] - offs[r0];
      int64_t k = -1;
      uint32_t previous = UINT32_MAX;
      for (int64_t p = 0; p < length; ++p) {
        const uint32_t J = static_cast<uint32_t>(cols[offs[r0] - offs[0] + p]) / width();
        if (J != previous) {
          bcols[base + ++k] = static_cast<int32_t>(J);
          previous = J;
        }
        T *block = block_vals + k * area;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t at = offs[r0 + r] - offs[0] + p;
          block[r * b + (static_cast<uint32_t>(cols[at]) - J * width())] += vals[at];
        }
      }
      return;
    }
    if (shape == Shape::Sorted) {
      merge(block_row, width, [&](int64_t k, int32_t J) { bcols[base + k] = J; },
            [&](int64_t k, int64_t r, uint32_t c, int64_t p) { block_vals[(k * b + r) * b + c] += vals[p]; });
      return;
    }
    /* Unsorted rows: the block columns in the order the entries meet them (each entry's slot in
     * that order), then put in increasing order. */
    const int64_t first = offs[block_row * b] - offs[0], entries = this->entries(block_row);
    const uint32_t columns = static_cast<uint32_t>(std::min<int64_t>(m, UINT32_MAX));
    table.reset(entries);
    listed.clear();
    slot_of.assign(static_cast<size_t>(entries), -1);
    bool added = false;
    for (int64_t e = 0; e < entries; ++e) {
      const uint32_t j = static_cast<uint32_t>(cols[first + e]);
      if (j >= columns)
        continue;
      const int32_t J = static_cast<int32_t>(j / width());
      slot_of[static_cast<size_t>(e)] = table.insert(J, static_cast<int32_t>(listed.size()), added);
      if (added)
        listed.push_back(J);
    }
    const size_t listed_count = listed.size();
    order.resize(listed_count);
    for (size_t k = 0; k < listed_count; ++k)
      order[k] = static_cast<int32_t>(k);
    std::sort(order.begin(), order.end(),
              [&](int32_t a, int32_t c) { return listed[static_cast<size_t>(a)] < listed[static_cast<size_t>(c)]; });
    place.resize(listed_count); /* a slot's block in the copy */
    for (size_t k = 0; k < listed_count; ++k) {
      bcols[base + static_cast<int64_t>(k)] = listed[static_cast<size_t>(order[k])];
      place[static_cast<size_t>(order[k])] = static_cast<int32_t>(k);
    }
    for (int64_t i = block_row * b, e = 0; i < row_end(block_row); ++i)
      for (int64_t end = offs[i + 1] - offs[block_row * b]; e < end; ++e) {
        const int32_t slot = slot_of[static_cast<size_t>(e)];
        if (slot < 0)
          continue;
        const uint32_t j = static_cast<uint32_t>(cols[first + e]);
        block_vals[(place[static_cast<size_t>(slot)] * b + (i - block_row * b)) * b + j % width()] += vals[first + e];
      }
  }
};

/* Runs body(part) for part in [0, parts) on the pool (inline with one thread or one part). A part
 * that runs out of memory (its table) must not throw through the pool's C frames: it is noted
 * and the caller throws std::bad_alloc once all parts are done. */
template <typename Body> void on_pool(int64_t parts, const Body &body) {
  struct Closure {
    const Body *body;
    std::atomic<bool> out_of_memory{false};
    static void run(void *c, int64_t begin, int64_t end) {
      Closure &self = *static_cast<Closure *>(c);
      try {
        for (int64_t part = begin; part < end; ++part)
          (*self.body)(part);
      } catch (const std::bad_alloc &) {
        self.out_of_memory.store(true);
      }
    }
  } closure{&body};
  if (parts <= 1 || spl_num_threads() == 1)
    Closure::run(&closure, 0, parts);
  else
    spl_parallel_chunks(parts, &Closure::run, &closure);
  if (closure.out_of_memory.load())
    throw std::bad_alloc();
}

/* Block-row bounds of `parts` runs of about equal work (rows and entries), on whole block rows. */
std::vector<int64_t> block_row_parts(const Blocking &g, int64_t block_rows, int64_t parts) {
  std::vector<int64_t> rows(static_cast<size_t>(parts + 1));
  spl_balance_rows_i32(g.offs, g.n, parts, rows.data());
  std::vector<int64_t> bounds(static_cast<size_t>(parts + 1));
  for (int64_t p = 0; p <= parts; ++p)
    bounds[static_cast<size_t>(p)] = std::min(block_rows, (rows[static_cast<size_t>(p)] + g.b - 1) / g.b);
  bounds[static_cast<size_t>(parts)] = block_rows;
  return bounds;
}

bool valid(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t b) {
  return b >= 1 && b <= kMaxBlock && valid_csr(n, m, offs, cols);
}

} // namespace

/* A plan's conversion gives up at `deadline` (deadline.h): every part stops at its next look at
 * the clock, and what was written is freed. */
template <typename T>
int convert_bcsr(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, int64_t b,
                 const Deadline &deadline, spl_bcsr_operands *out) {
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  std::memset(out, 0, sizeof *out);
  if (!valid(n, m, offs, cols, b) || (offs[n] != offs[0] && vals == nullptr))
    return SPL_ERR_BAD_INPUT;
  const Blocking g{offs, cols, n, m, b};
  const int64_t block_rows = (n + b - 1) / b, block_cols = (m + b - 1) / b, area = b * b;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(spl_num_threads(), block_rows));
  try {
    const std::vector<int64_t> bounds = block_row_parts(g, block_rows, parts);
    std::vector<int64_t> counts(static_cast<size_t>(block_rows));
    std::vector<Shape> shapes(static_cast<size_t>(block_rows));
    with_width(b, [&](auto width) {
      on_pool(parts, [&](int64_t part) {
        BlockColumns table;
        DeadlineWatch watch(deadline);
        for (int64_t I = bounds[static_cast<size_t>(part)]; I < bounds[static_cast<size_t>(part) + 1]; ++I) {
          if (watch.passed(g.entries(I)))
            return;
          counts[static_cast<size_t>(I)] = g.count(I, width, table, shapes[static_cast<size_t>(I)]);
        }
      });
    });
    if (deadline.stopped())
      return kStoppedAtDeadline;
    int64_t blocks = 0;
    for (int64_t c : counts)
      blocks += c;
    if (blocks > INT32_MAX || blocks > PTRDIFF_MAX / static_cast<int64_t>(sizeof(T)) / area)
      return SPL_ERR_ALLOC;
    out->rows = n;
    out->cols = m;
    out->block = b;
    out->block_rows = block_rows;
    out->block_cols = block_cols;
    out->blocks = blocks;
    out->offs = static_cast<int32_t *>(spl_alloc(static_cast<size_t>(block_rows + 1) * sizeof(int32_t)));
    out->bcols = static_cast<int32_t *>(spl_alloc(static_cast<size_t>(std::max<int64_t>(blocks, 1)) * sizeof(int32_t)));
    out->vals = spl_alloc(static_cast<size_t>(std::max<int64_t>(blocks * area, 1)) * sizeof(T));
    if (out->offs == nullptr || out->bcols == nullptr || out->vals == nullptr) {
      spl_bcsr_operands_free(out);
      return SPL_ERR_ALLOC;
    }
    out->offs[0] = 0;
    for (int64_t I = 0; I < block_rows; ++I)
      out->offs[I + 1] = static_cast<int32_t>(out->offs[I] + counts[static_cast<size_t>(I)]);
    with_width(b, [&](auto width) {
      on_pool(parts, [&](int64_t part) {
        BlockColumns table;
        std::vector<int32_t> listed, slot_of, order, place;
        DeadlineWatch watch(deadline);
        for (int64_t I = bounds[static_cast<size_t>(part)]; I < bounds[static_cast<size_t>(part) + 1]; ++I) {
          if (watch.passed(g.entries(I)))
            return;
          g.fill(I, shapes[static_cast<size_t>(I)], width, vals, out->offs[I], counts[static_cast<size_t>(I)], out->bcols,
                 static_cast<T *>(out->vals), table, listed, slot_of, order, place);
        }
      });
    });
    if (deadline.stopped()) {
      spl_bcsr_operands_free(out);
      return kStoppedAtDeadline;
    }
    out->bytes = (block_rows + 1 + blocks) * static_cast<int64_t>(sizeof(int32_t)) + blocks * area * static_cast<int64_t>(sizeof(T));
  } catch (const std::bad_alloc &) {
    spl_bcsr_operands_free(out);
    return SPL_ERR_ALLOC;
  }
  return SPL_OK;
}

template int convert_bcsr<float>(int64_t, int64_t, const int32_t *, const int32_t *, const float *, int64_t, const Deadline &,
                                 spl_bcsr_operands *);
template int convert_bcsr<double>(int64_t, int64_t, const int32_t *, const int32_t *, const double *, int64_t,
                                  const Deadline &, spl_bcsr_operands *);

int sample_blocks(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t b, int64_t stride,
                  double give_up_fill, int64_t &blocks, int64_t &entries, bool &at_least) {
  blocks = entries = 0;
  at_least = false;
  if (b < 1 || b > kMaxBlock || stride < 1 || n < 0 || m < 0)
    return SPL_ERR_BAD_INPUT;
  const Blocking g{offs, cols, n, m, b};
  const int64_t block_rows = (n + b - 1) / b, runs = (block_rows + kSampleRun - 1) / kSampleRun;
  const int64_t sampled = (runs + stride - 1) / stride;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(spl_num_threads(), sampled));
  try {
    std::vector<int64_t> part_blocks(static_cast<size_t>(parts)), part_entries(static_cast<size_t>(parts));
    /* First the lower bound, whose pass costs a fraction of the count's merges (web-Google's
     * rows of a few scattered entries: 6 ns an entry merged). */
    if (give_up_fill > 0) {
      with_width(b, [&](auto width) {
        on_pool(parts, [&](int64_t part) {
          for (int64_t s = sampled * part / parts; s < sampled * (part + 1) / parts; ++s) {
            const int64_t I0 = s * stride * kSampleRun, I1 = std::min(block_rows, I0 + kSampleRun);
            part_blocks[static_cast<size_t>(part)] += g.changes(I0, I1, width);
            part_entries[static_cast<size_t>(part)] += static_cast<int64_t>(offs[g.row_end(I1 - 1)]) - offs[I0 * b];
          }
        });
      });
      int64_t changed = 0;
      for (int64_t p = 0; p < parts; ++p) {
        changed += part_blocks[static_cast<size_t>(p)];
        entries += part_entries[static_cast<size_t>(p)];
      }
      if (entries > 0 && static_cast<double>(changed) * static_cast<double>(b) > give_up_fill * static_cast<double>(entries)) {
        blocks = (changed + b - 1) / b;
        at_least = true;
        return SPL_OK;
      }
      entries = 0;
      std::fill(part_blocks.begin(), part_blocks.end(), 0);
      std::fill(part_entries.begin(), part_entries.end(), 0);
    }
    with_width(b, [&](auto width) {
      on_pool(parts, [&](int64_t part) {
        BlockColumns table;
        Shape shape;
        for (int64_t s = sampled * part / parts; s < sampled * (part + 1) / parts; ++s)
          for (int64_t I = s * stride * kSampleRun, end = std::min(block_rows, I + kSampleRun); I < end; ++I) {
            part_blocks[static_cast<size_t>(part)] += g.count(I, width, table, shape);
            part_entries[static_cast<size_t>(part)] += g.entries(I);
          }
      });
    });
    for (int64_t p = 0; p < parts; ++p) {
      blocks += part_blocks[static_cast<size_t>(p)];
      entries += part_entries[static_cast<size_t>(p)];
    }
  } catch (const std::bad_alloc &) {
    return SPL_ERR_ALLOC;
  }
  return SPL_OK;
}

} // namespace spl_rt

int spl_csr_blocks(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t b, int64_t *blocks) {
  if (blocks == nullptr)
    return SPL_ERR_BAD_INPUT;
  *blocks = 0;
  int64_t entries = 0;
  bool at_least = false;
  if (!spl_rt::valid(n, m, offs, cols, b))
    return SPL_ERR_BAD_INPUT;
  return spl_rt::sample_blocks(n, m, offs, cols, b, 1, 0, *blocks, entries, at_least);
}

int spl_bcsr_convert_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals, int64_t b,
                         spl_bcsr_operands *out) {
  return spl_rt::convert_bcsr<float>(n, m, offs, cols, vals, b, spl_rt::Deadline::none(), out);
}

int spl_bcsr_convert_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals, int64_t b,
                         spl_bcsr_operands *out) {
  return spl_rt::convert_bcsr<double>(n, m, offs, cols, vals, b, spl_rt::Deadline::none(), out);
}

void spl_bcsr_operands_free(spl_bcsr_operands *o) {
  if (o == nullptr)
    return;
  spl_free(o->offs);
  spl_free(o->bcols);
  spl_free(o->vals);
  std::memset(o, 0, sizeof *o);
}
