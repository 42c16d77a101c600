/* dia.h: the set of a matrix's diagonals (the distinct j - i of its entries), which dia.cpp
 * marks from row chunks on the pool, and the internal calls a plan makes (plan.cpp).
 *
 * A bit per possible diagonal, -(n - 1) .. m - 1, set with atomics so that row chunks on the
 * pool mark one set: a bit is read before it is set, so the cache lines of a banded matrix's few
 * diagonals stay shared between the threads instead of bouncing on every entry.
 *
 * Not installed; the public entry points are in spl_runtime.h.
 */
#ifndef SPL_RT_DIA_H
#define SPL_RT_DIA_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "deadline.h"
#include "export.h"

namespace spl_rt {

class DiagonalSet {
public:
  /* Throws std::bad_alloc when the bits do not fit in memory. */
  DiagonalSet(int64_t n, int64_t m)
      : n_(n), m_(m), words_((n + m + 63) / 64), bits_(new std::atomic<uint64_t>[static_cast<size_t>(words_)]) {
    for (int64_t w = 0; w < words_; ++w)
      bits_[w].store(0, std::memory_order_relaxed);
  }

  /* Marks the diagonal of entry (i, j); true when it was not marked before. A column outside
   * [0, m) marks nothing (DIA's kernel ignores such entries). */
  bool mark(int64_t i, int64_t j) { return j >= 0 && j < m_ && mark_offset(j - i); }

  /* Marks diagonal `offset` (j - i, within -(n - 1) .. m - 1); true when it was not marked. */
  bool mark_offset(int64_t offset) {
    const uint64_t at = static_cast<uint64_t>(offset + n_ - 1);
    const uint64_t bit = uint64_t{1} << (at & 63);
    std::atomic<uint64_t> &word = bits_[at >> 6];
    if (word.load(std::memory_order_relaxed) & bit)
      return false;
    return (word.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
  }

  /* The marked diagonals' offsets (j - i) in increasing order, through `out(offset)`. */
  template <typename Out> void each(Out out) const {
    for (int64_t w = 0; w < words_; ++w)
      for (uint64_t bits = bits_[w].load(std::memory_order_relaxed); bits != 0; bits &= bits - 1)
        out(w * 64 + __builtin_ctzll(bits) - (n_ - 1));
  }

private:
  int64_t n_, m_, words_;
  std::unique_ptr<std::atomic<uint64_t>[]> bits_;
};

/* What a plan calls (dia.cpp): the diagonals listed once, then the conversion with that list
 * (spl_dia_convert_* lists them itself). list_diagonals sets `within` to whether there are at
 * most `limit`, and then lists them in increasing offset; it checks its input as
 * spl_csr_diagonals does. convert_listed_* take the list of the same matrix, and give up at
 * `deadline` (kStoppedAtDeadline, nothing left allocated). */
int list_diagonals(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t limit,
                   std::vector<int32_t> &offsets, bool &within);
int convert_listed_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                       const std::vector<int32_t> &offsets, const Deadline &deadline, spl_dia_operands *out);
int convert_listed_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                       const std::vector<int32_t> &offsets, const Deadline &deadline, spl_dia_operands *out);

} // namespace spl_rt

#endif /* SPL_RT_DIA_H */
