/* memory.cpp: spl_alloc and spl_free, 64-byte aligned buffers for kernel temporaries.
 *
 * 64 bytes is a cache line on the CPUs we target and covers the widest vector loads (AVX-512),
 * so generated kernels may assume aligned temporaries. posix_memalign is used rather than
 * aligned_alloc because the latter requires the size to be a multiple of the alignment; the
 * result is released with plain free, which spl_free wraps so that callers never mix allocators.
 */
#include "export.h"

#include <stdlib.h>

namespace {
constexpr size_t kAlignment = 64;
} // namespace

void *spl_alloc(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  void *ptr = nullptr;
  if (posix_memalign(&ptr, kAlignment, bytes) != 0)
    return nullptr;
  return ptr;
}

void spl_free(void *ptr) { free(ptr); }
