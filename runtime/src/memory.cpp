/* memory.cpp: spl_alloc and spl_free, 64-byte aligned buffers for kernel temporaries and the
 * runtime's copies; spl_temp_alloc and spl_temp_free, a generated kernel's temporaries.
 *
 * 64 bytes is a cache line on the CPUs we target and covers the widest vector loads (AVX-512),
 * so generated kernels may assume aligned temporaries. Below kOwnMappingFrom (64 KiB)
 * posix_memalign is used rather than aligned_alloc because the latter requires the size to be a
 * multiple of the alignment, and such a buffer goes back with plain free; spl_free tells it from
 * the mappings of larger ones (below), so that callers never mix allocators.
 *
 * A buffer of 64 KiB or more is a mapping of its own, and a freed one is kept a while for the
 * next (map_own, unmap_own): the first touch of memory new to the process is a page fault every
 * 4 KiB, about 10 microseconds each on a 2-core EPYC VM, and glibc gives the top of its heap back
 * to the system once 128 KB are free there, so that a buffer freed and taken again faulted anew:
 * a plan of email-Enron (18,346 rows) paid 0.3-0.55 ms of its 1 ms for its x and y (73 KB each,
 * 21-43 faults a plan) in every plan of the process (2026-12-02, two threads, where a CSR call
 * takes 0.05 ms).
 *
 * A buffer of 1 MiB or more (a plan's converted copy and its own x and y, a large temporary)
 * starts on a 2 MiB boundary, takes whole huge pages (its size rounded up to 2 MiB) and asks
 * Linux for transparent huge pages over all of them (MADV_HUGEPAGE: systems that enable them
 * only on request, Debian's default), because its first touch is otherwise a page fault every
 * 4 KiB: on a 2-core EPYC VM 4.0 ms a MB (a plan's BCSR copy of pwtk, 50 MB, took 207 ms to
 * convert, 58 CSR calls), 0.3 ms a MB with huge pages and 0.07 once the VM has backed them;
 * 0.45 ms a MB on a 2-core Xeon VM. The size is rounded up because only whole huge pages inside
 * the buffer had been asked for: a vector of 500,000 doubles (3.8 MiB) ran its last 1.8 MiB on
 * small pages, and a plan's x and y of ecology1 took 11-22 ms of its 22-ms budget (the 2-core EPYC
 * Zen 5 VM, 2026-12-02: 3.3 ms a MB on small pages against 0.08 on huge ones, whose first touch
 * costs one fault and the clearing of 2 MiB). A buffer of 1-2 MiB pays at most its own size
 * again in memory that its first touch clears; smaller ones keep small pages.
 */
#include "export.h"

#include <stdint.h>
#include <stdlib.h>

#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kSmallPage = size_t{4} << 10;
constexpr size_t kOwnMappingFrom = size_t{64} << 10;

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
  ~Scratch() { spl_free(base); }
};
thread_local Scratch tls_scratch;
} // namespace

#if defined(__linux__) && defined(MADV_HUGEPAGE)
namespace {
/* A freed mapping of at most kKeptBytes is kept for a later buffer that it holds at no more than
 * twice the size, up to kKeptMappings and kKeptTotal bytes in all (the oldest go back first;
 * sixteen, so that a plan's vectors and the arrays of its copies fit at once),
 * as glibc's heap had kept the freed buffers below its mmap threshold (32 MB at most) for the
 * next ones: a plan's converted copy freed at the end of one plan serves the next plan of the
 * matrix (pdb1HYS's BCSR copy, 18 MB, on two threads: its conversion stopped at the deadline
 * after 13 ms from fresh mappings on the 2-core Zen 5 VM, whose host backs memory new to the
 * process slowly, where the whole plan had taken 5.8 ms from glibc's heap), and a kernel that takes a temporary of a MB or more at
 * every call reuses one mapping instead of mapping, faulting and unmapping it each time (an unmap
 * on two threads stops the other one too, for its TLB: trsm on two threads ran 0.83-0.88x as
 * fast with a mapping a call, 2026-12-02, 1.00-1.10x with mappings kept). */
constexpr size_t kKeptMappings = 16;
constexpr size_t kKeptBytes = size_t{64} << 20;
constexpr size_t kKeptTotal = size_t{128} << 20;

/* The mappings of spl_alloc's buffers of kOwnMappingFrom bytes or more (each from mmap): the
 * address given out and its mapping's length, which spl_free gives back, and those kept for
 * reuse. Never destroyed, so that a buffer freed by another static's destructor still finds its
 * mapping. */
struct OwnMappings {
  std::mutex lock;
  std::unordered_map<uintptr_t, size_t> of;
  std::vector<std::pair<void *, size_t>> kept; /* oldest first; its room reserved at the start */
  size_t kept_bytes = 0;
  OwnMappings() { kept.reserve(kKeptMappings + 1); }
};
OwnMappings &own_mappings() {
  static OwnMappings *mappings = new OwnMappings;
  return *mappings;
}

/* The smallest kept mapping that holds `taken` bytes at no more than twice that, given out
 * again; nullptr where none is kept. */
void *reuse_kept(OwnMappings &m, size_t taken) {
  std::lock_guard<std::mutex> hold(m.lock);
  size_t best = m.kept.size();
  for (size_t k = 0; k < m.kept.size(); ++k) {
    const size_t length = m.kept[k].second;
    if (length >= taken && length / 2 <= taken && (best == m.kept.size() || length < m.kept[best].second))
      best = k;
  }
  if (best == m.kept.size())
    return nullptr;
  const auto [ptr, length] = m.kept[best];
  m.of.emplace(reinterpret_cast<uintptr_t>(ptr), length); /* may throw: the mapping stays kept */
  m.kept.erase(m.kept.begin() + static_cast<std::ptrdiff_t>(best));
  m.kept_bytes -= length;
  return ptr;
}

/* `taken` bytes (a multiple of kSmallPage) from a mapping of their own; where `taken` is a
 * multiple of kHugePage, starting on a huge page, with Linux asked for huge pages over all of
 * them. nullptr where there is no memory. */
void *map_own(size_t taken) {
  if (taken > SIZE_MAX - kHugePage)
    return nullptr;
  try {
    OwnMappings &m = own_mappings();
    if (void *ptr = reuse_kept(m, taken))
      return ptr;
    const bool huge = taken % kHugePage == 0;
    const size_t length = huge ? taken + kHugePage : taken; /* room to start on a huge page */
    void *mapping = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED)
      return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(mapping);
    const uintptr_t aligned = huge ? (start + kHugePage - 1) & ~uintptr_t(kHugePage - 1) : start;
    /* The pages before and after the aligned range go back at once. */
    if (aligned > start)
      (void)munmap(mapping, aligned - start);
    if (const uintptr_t end = start + length, used = aligned + taken; end > used)
      (void)munmap(reinterpret_cast<void *>(used), end - used);
    void *ptr = reinterpret_cast<void *>(aligned);
    /* A refusal (no THP) changes nothing. */
    if (huge)
      (void)madvise(ptr, taken, MADV_HUGEPAGE);
    try {
      std::lock_guard<std::mutex> hold(m.lock);
      m.of.emplace(aligned, taken);
    } catch (...) {
      (void)munmap(ptr, taken);
      return nullptr;
    }
    return ptr;
  } catch (...) { /* no memory for the table of mappings */
    return nullptr;
  }
}

/* Gives back `ptr`'s mapping where spl_alloc mapped it (kept for reuse, or unmapped); false for
 * a buffer of the heap. */
bool unmap_own(void *ptr) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  if (address & (kSmallPage - 1))
    return false;
  OwnMappings *mappings = nullptr;
  try {
    mappings = &own_mappings(); /* made before, where spl_alloc mapped ptr */
  } catch (...) {
    return false; /* no table: nothing was mapped */
  }
  /* The mappings to give back: this one where it is not kept, or the oldest kept ones. */
  std::pair<void *, size_t> unmapped[kKeptMappings + 1];
  size_t count = 0;
  {
    OwnMappings &m = *mappings;
    std::lock_guard<std::mutex> hold(m.lock);
    auto it = m.of.find(address);
    if (it == m.of.end())
      return false;
    const size_t length = it->second;
    m.of.erase(it);
    if (length > kKeptBytes) {
      unmapped[count++] = {ptr, length};
    } else {
      m.kept.emplace_back(ptr, length); /* within the reserved room */
      m.kept_bytes += length;
      while (m.kept.size() > kKeptMappings || m.kept_bytes > kKeptTotal) {
        unmapped[count++] = m.kept.front();
        m.kept_bytes -= m.kept.front().second;
        m.kept.erase(m.kept.begin());
      }
    }
  }
  for (size_t k = 0; k < count; ++k)
    (void)munmap(unmapped[k].first, unmapped[k].second);
  return true;
}

/* Unmaps every kept mapping (spl_release_memory). */
void release_kept() {
  std::vector<std::pair<void *, size_t>> released, room;
  OwnMappings *mappings = nullptr;
  try {
    room.reserve(kKeptMappings + 1); /* the kept list's room, which unmap_own relies on */
    mappings = &own_mappings();
  } catch (...) {
    return; /* no memory: the mappings stay kept */
  }
  {
    std::lock_guard<std::mutex> hold(mappings->lock);
    released.swap(mappings->kept);
    mappings->kept.swap(room);
    mappings->kept_bytes = 0;
  }
  for (const auto &[ptr, length] : released)
    (void)munmap(ptr, length);
}
} // namespace
#endif

void *spl_alloc(size_t bytes) {
  if (bytes == 0)
    return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  /* Its own mapping rather than the heap's: a range of the heap that has held small pages keeps
   * their page table, and Linux may then fault it in small pages again whatever madvise asked (a
   * plan's x and y of 4 MB each took 10-17 ms from the benchmark process's heap, 0.3-2 ms from
   * mappings of their own); and a kept mapping's pages are not faulted again (the file's
   * opening). */
  if (bytes > SIZE_MAX - kHugePage)
    return nullptr;
  if (bytes >= kHugePage / 2)
    return map_own((bytes + kHugePage - 1) & ~(kHugePage - 1));
  if (bytes >= kOwnMappingFrom)
    return map_own((bytes + kSmallPage - 1) & ~(kSmallPage - 1));
#endif
  void *ptr = nullptr;
  if (posix_memalign(&ptr, kAlignment, bytes) != 0)
    return nullptr;
  return ptr;
}

void spl_free(void *ptr) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (ptr != nullptr && unmap_own(ptr))
    return;
#endif
  free(ptr);
}

void spl_release_memory(void) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  release_kept();
#endif
}

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
