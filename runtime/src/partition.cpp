/* partition.cpp: spl_balance_rows_*, nnz-balanced row partitions for parallel kernels.
 *
 * A kernel over a ragged (LIL/CSR) structure costs roughly one unit per nonzero plus one per
 * row (loop overhead, the output write), so rows are split by the cumulative weight
 * W(i) = offs[i] - offs[0] + i. Counting rows as well as nonzeros keeps stretches of empty rows
 * from piling into one part. Boundary p is the first row whose W reaches p/nparts of the total,
 * found by binary search over the monotone W, so the cost is O(nparts log n) and the offsets are
 * never scanned.
 *
 * Guarantees: bounds[0] = 0, bounds[nparts] = n, bounds is nondecreasing (also when offs is not
 * monotone, in which case the balance is simply worse). Each part's weight exceeds total/nparts
 * by at most the weight of one row. Does nothing when n < 0 or nparts < 1.
 */
#include "export.h"

#include <algorithm>

namespace spl_rt {
namespace {

template <typename Offset>
void balance_rows(const Offset *offs, int64_t n, int64_t nparts, int64_t *bounds) {
  if (n < 0 || nparts < 1 || bounds == nullptr)
    return;
  bounds[0] = 0;
  bounds[nparts] = n;
  if (n == 0 || offs == nullptr) {
    for (int64_t p = 1; p < nparts; ++p)
      bounds[p] = 0;
    return;
  }
  const int64_t base = static_cast<int64_t>(offs[0]);
  auto weight = [&](int64_t i) { return static_cast<int64_t>(offs[i]) - base + i; };
  const int64_t total = std::max<int64_t>(weight(n), 0);

  int64_t lo = 0;
  for (int64_t p = 1; p < nparts; ++p) {
    /* 128-bit product: total * p overflows int64 for large inputs split many ways. */
    const int64_t target = static_cast<int64_t>(static_cast<unsigned __int128>(total) *
                                                static_cast<unsigned __int128>(p) /
                                                static_cast<unsigned __int128>(nparts));
    int64_t first = lo, last = n; /* smallest i in [first, last] with weight(i) >= target */
    while (first < last) {
      int64_t mid = first + (last - first) / 2;
      if (weight(mid) < target)
        first = mid + 1;
      else
        last = mid;
    }
    bounds[p] = first;
    lo = first;
  }
}

} // namespace
} // namespace spl_rt

void spl_balance_rows_i32(const int32_t *offs, int64_t n, int64_t nparts, int64_t *bounds) {
  spl_rt::balance_rows(offs, n, nparts, bounds);
}

void spl_balance_rows_i64(const int64_t *offs, int64_t n, int64_t nparts, int64_t *bounds) {
  spl_rt::balance_rows(offs, n, nparts, bounds);
}
