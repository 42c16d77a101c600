/* memory.cpp: spl_alloc and spl_free, 64-byte aligned buffers for kernel temporaries and the
 * runtime's copies; spl_temp_alloc and spl_temp_free, a generated kernel's temporaries.
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

/* A thread's scratch for kernel temporaries: kScratchBytes taken from the bottom, in lines, and
 * given back in stack order (loop IR frees a function's temporaries in the reverse order of their
 * allocation). `start` lists the live blocks' offsets; a block given back out of order is marked
 * and its bytes return with the blocks above it. 256 KB holds the temporaries of the calls whose
 * allocation would cost (symv's eight parts of 4000 sums); larger ones, or more than kBlocks at
 * once, come from the heap, whose cost their work repays. */
constexpr size_t kScratchBytes = size_t{256} << 10;
constexpr int kBlocks = 64;
struct Scratch {
  char *base = nullptr;
  size_t top = 0;
  int count = 0;
  size_t start[kBlocks];
  bool given[kBlocks];
  ~Scratch() { free(base); }
};
thread_local Scratch tls_scratch;
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

void *spl_temp_alloc(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  Scratch &s = tls_scratch;
  if (bytes <= kScratchBytes && s.count < kBlocks) {
    const size_t taken = (bytes + kAlignment - 1) & ~(kAlignment - 1);
    if (!s.base)
      s.base = static_cast<char *>(spl_alloc(kScratchBytes));
    if (s.base && taken <= kScratchBytes - s.top) {
      s.start[s.count] = s.top;
      s.given[s.count] = false;
      ++s.count;
      void *p = s.base + s.top;
      s.top += taken;
      return p;
    }
  }
  return spl_alloc(bytes);
}

void spl_temp_free(void *ptr) {
  if (!ptr)
    return;
  Scratch &s = tls_scratch;
  /* As integers: the pointer may come from the heap, outside the scratch. */
  const uintptr_t base = reinterpret_cast<uintptr_t>(s.base), p = reinterpret_cast<uintptr_t>(ptr);
  if (!s.base || p < base || p - base >= kScratchBytes) {
    spl_free(ptr);
    return;
  }
  const size_t offset = static_cast<size_t>(p - base);
  for (int i = s.count - 1; i >= 0; --i)
    if (s.start[i] == offset) {
      s.given[i] = true;
      break;
    }
  while (s.count > 0 && s.given[s.count - 1])
    s.top = s.start[--s.count];
}
