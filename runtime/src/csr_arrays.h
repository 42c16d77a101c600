/* csr_arrays.h: the check every runtime part that reads a caller's CSR arrays makes first
 * (inspect, sell, dia, csc, plan): sizes and pointers, and offsets that never decrease, so that
 * every row's entries offs[i] - offs[0] .. offs[i + 1] - offs[0] exist; and the blocked search
 * that check is made of (first_where), which dia.cpp's scan of shifted rows shares.
 *
 * Not installed; the public entry points are in spl_runtime.h.
 */
#ifndef SPL_RT_CSR_ARRAYS_H
#define SPL_RT_CSR_ARRAYS_H

#include <cstdint>

namespace spl_rt {

/* The first k of 0 .. count - 1 for which `holds(k)` is true, or count where none is: a block of
 * 4096 k's at a time, each block's tests or-ed together in one loop without a branch, which
 * vectorises, and only the block where one holds searched again for it. A loop that returned at
 * the first k ran a compare and a branch an element: 0.3 ms on 500,000 rows (the offsets'
 * check every plan's inspection and each conversion pays), 2.7 ms of a DIA count's scan for
 * rows that repeat the row before them shifted (dia.cpp). */
template <typename Holds> int64_t first_where(int64_t count, Holds holds) {
  constexpr int64_t kBlock = 4096;
  for (int64_t k0 = 0; k0 < count; k0 += kBlock) {
    const int64_t k1 = count - k0 < kBlock ? count : k0 + kBlock;
    int any = 0;
    for (int64_t k = k0; k < k1; ++k)
      any |= holds(k) ? 1 : 0;
    if (!any)
      continue;
    for (int64_t k = k0; k < k1; ++k)
      if (holds(k))
        return k;
  }
  return count;
}

/* n >= 0, offs given and non-decreasing (n + 1 entries). */
inline bool monotone_offsets(int64_t n, const int32_t *offs) {
  if (n < 0 || offs == nullptr)
    return false;
  return first_where(n, [offs](int64_t i) { return offs[i + 1] < offs[i]; }) == n;
}

/* Also m >= 0, and the columns given when there are entries. */
inline bool valid_csr(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols) {
  return m >= 0 && monotone_offsets(n, offs) && (offs[n] == offs[0] || cols != nullptr);
}

} // namespace spl_rt

#endif /* SPL_RT_CSR_ARRAYS_H */
