/* memory.cpp: spl_alloc and spl_free, 64-byte aligned buffers for kernel temporaries.
 *
 * 64 bytes is a cache line on the CPUs we target and covers the widest vector loads (AVX-512),
 * so generated kernels may assume aligned temporaries. posix_memalign is used rather than
 * aligned_alloc because the latter requires the size to be a multiple of the alignment; the
 * result is released with plain free, which spl_free wraps so that callers never mix allocators.
 *
 * A buffer of 2 MiB or more (a plan's converted copy, a large temporary) starts on a 2 MiB
 * boundary and asks Linux for transparent huge pages (MADV_HUGEPAGE: systems that enable them
 * only on request, Debian's default), because its first touch is otherwise a page fault every
 * 4 KiB: on a 2-core EPYC VM 4.0 ms a MB (a plan's BCSR copy of pwtk, 50 MB, took 207 ms to
 * convert, 58 CSR calls), 0.3 ms a MB with huge pages and 0.07 once the VM has backed them;
 * 0.45 ms a MB on a 2-core Xeon VM.
 */
#include "export.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t{2} << 20;
} // namespace

void *spl_alloc(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  const bool huge = bytes >= kHugePage;
  void *ptr = nullptr;
  if (posix_memalign(&ptr, huge ? kHugePage : kAlignment, bytes) != 0)
    return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  /* Only the whole huge pages inside the buffer; a refusal (no THP) changes nothing. */
  if (huge)
    (void)madvise(ptr, bytes & ~(kHugePage - 1), MADV_HUGEPAGE);
#endif
  return ptr;
}

void spl_free(void *ptr) { free(ptr); }
