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

/* n >= 0, offs given and non-decreasing (n + 1 entries). */
inline bool monotone_offsets(int64_t n, const int32_t *offs) {
  if (n < 0 || offs == nullptr)
    return false;
  for (int64_t i = 0; i < n; ++i)
    if (offs[i + 1] < offs[i])
      return false;
  return true;
}

/* Also m >= 0, and the columns given when there are entries. */
inline bool valid_csr(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols) {
  return m >= 0 && monotone_offsets(n, offs) && (offs[n] == offs[0] || cols != nullptr);
}

} // namespace spl_rt

#endif /* SPL_RT_CSR_ARRAYS_H */
