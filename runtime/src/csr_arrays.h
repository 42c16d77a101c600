/* csr_arrays.h: the check every runtime part that reads a caller's CSR arrays makes first
 * (inspect, sell, dia, csc, plan): sizes and pointers, and offsets that never decrease, so that
 * every row's entries offs[i] - offs[0] .. offs[i + 1] - offs[0] exist.
 *
 * Not installed; the public entry points are in spl_runtime.h.
 */
#ifndef SPL_RT_CSR_ARRAYS_H
#define SPL_RT_CSR_ARRAYS_H

#include <cstdint>

namespace spl_rt {

/* n >= 0, offs given and non-decreasing (n + 1 entries). Checked a block at a time, each block's
 * comparisons or-ed together, so that the loop vectorises: a loop that returned at the first
 * decrease ran a compare and a branch an offset, 0.3 ms on 500,000 rows, paid by every plan's
 * inspection and again by each conversion's check. */
inline bool monotone_offsets(int64_t n, const int32_t *offs) {
  if (n < 0 || offs == nullptr)
    return false;
  constexpr int64_t kBlock = 4096;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t i1 = n - i0 < kBlock ? n : i0 + kBlock;
    int decreases = 0;
    for (int64_t i = i0; i < i1; ++i)
      decreases |= offs[i + 1] < offs[i];
    if (decreases)
      return false;
  }
  return true;
}

/* Also m >= 0, and the columns given when there are entries. */
inline bool valid_csr(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols) {
  return m >= 0 && monotone_offsets(n, offs) && (offs[n] == offs[0] || cols != nullptr);
}

} // namespace spl_rt

#endif /* SPL_RT_CSR_ARRAYS_H */
