/* cuda_workspace.cpp: device scratch memory for the calls of generated cuda functions, owned by
 * the runtime per (context, stream), so that a call in steady state allocates and frees nothing.
 *
 * A generated stub that needs device temporaries (a LIL matrix's Sigma offsets, the carries of
 * the merge-path row kernels) opens a call on its stream (spl_cuda_call_begin), takes its
 * temporaries from it (spl_cuda_call_alloc, spl_cuda_call_counters) and closes it on every
 * return (spl_cuda_call_end). What the call's kernels do with that memory is ordered by the
 * stream: a later call on the same stream runs its kernels after this call's, so it may reuse the
 * same bytes as soon as this call has *queued* its work, and the host never waits.
 *
 * Each workspace holds:
 *   - an arena, one device block handed out by bumping an offset. The offset returns to 0 when
 *     no call of the workspace is open (several host threads may drive one stream; their open
 *     calls get disjoint bytes). A request that does not fit retires the block and allocates a
 *     larger one; retired blocks are freed, stream-ordered, when the last open call closes, so
 *     after a few calls the block holds what a call needs and nothing more is allocated;
 *   - a block of counter words for kernels that count arrivals across blocks (the merge-path
 *     row kernels' carries, CodeGenCuda.cpp). A counter word is (epoch << 32 | count): every
 *     call gets a larger epoch than the calls before it, so a word left by an earlier call
 *     counts 0 (kernels lift it with an atomic max before adding) and nothing ever clears the
 *     words. The block is zeroed when allocated and again when the 32-bit
 *     epoch would wrap, so no stale word can carry the current epoch. Only such tagged words are
 *     ever written there (the arena's temporaries live elsewhere).
 * Memory comes from the stream-ordered allocator when the driver has it (cuMemAllocAsync on the
 * workspace's stream), else from cuMemAlloc. spl_cuda_release_workspaces frees the workspaces of
 * the calling thread's context; at exit the driver frees what is left with the context.
 */
#include "export.h"
#include "cuda_driver.h"

#include <stdint.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

namespace spl_rt {
namespace cuda {
namespace {

constexpr size_t kAlign = 256;               /* what cuMemAlloc guarantees, kept per region */
constexpr size_t kMinArenaBytes = 1u << 20;  /* the first block; doubled as needed */

struct Workspace {
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  std::mutex mutex;
  CUdeviceptr arena = 0;
  size_t arena_bytes = 0, offset = 0;
  std::vector<CUdeviceptr> retired; /* blocks still used by open calls; freed at the last close */
  int open_calls = 0;
  CUdeviceptr counters = 0;
  size_t counter_words = 0;
  uint32_t epoch = 0;
};

std::mutex registry_mutex;
std::vector<Workspace *> registry; /* a handful (contexts x streams): linear search */

bool allocate(const Driver &d, Workspace &w, size_t bytes, CUdeviceptr *out) {
  if (d.has_async_alloc)
    return check(d, d.cuMemAllocAsync(out, bytes, w.stream), "cuMemAllocAsync");
  return check(d, d.cuMemAlloc(out, bytes), "cuMemAlloc_v2");
}

/* Frees a block once the work queued on the workspace's stream so far is done with it. */
void release(const Driver &d, Workspace &w, CUdeviceptr block) {
  if (block == 0)
    return;
  if (d.has_async_alloc) {
    (void)d.cuMemFreeAsync(block, w.stream);
  } else {
    (void)d.cuStreamSynchronize(w.stream);
    (void)d.cuMemFree(block);
  }
}

/* A fresh block of `bytes` in *block_slot; the one it replaces goes to the retired blocks
 * (calls still open may use it: they run before this one on the stream), freed at the last
 * close. Returns an SPL_* code. */
int replace_block(const Driver &d, Workspace &w, CUdeviceptr *block_slot, size_t bytes) {
  CUdeviceptr block = 0;
  if (!allocate(d, w, bytes, &block))
    return SPL_ERR_CUDA;
  if (*block_slot != 0) {
    try {
      w.retired.push_back(*block_slot);
    } catch (...) {
      release(d, w, block);
      set_last_error("out of host memory for a CUDA workspace");
      return SPL_ERR_ALLOC;
    }
  }
  *block_slot = block;
  return SPL_OK;
}

size_t round_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

Workspace *workspace_of(CUcontext ctx, CUstream stream) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (Workspace *w : registry)
    if (w->ctx == ctx && w->stream == stream)
      return w;
  auto *fresh = new (std::nothrow) Workspace;
  if (fresh == nullptr)
    return nullptr;
  fresh->ctx = ctx;
  fresh->stream = stream;
  try {
    registry.push_back(fresh);
  } catch (...) {
    delete fresh;
    return nullptr;
  }
  return fresh;
}

} // namespace
} // namespace cuda
} // namespace spl_rt

using namespace spl_rt::cuda;

int spl_cuda_call_begin(void *stream, void **call) {
  if (call == nullptr) {
    set_last_error("spl_cuda_call_begin: NULL call");
    return SPL_ERR_BAD_INPUT;
  }
  *call = nullptr;
  CUcontext ctx = nullptr;
  if (ready_driver(&ctx) == nullptr)
    return SPL_ERR_CUDA;
  Workspace *w = workspace_of(ctx, static_cast<CUstream>(stream));
  if (w == nullptr) {
    set_last_error("out of host memory for a CUDA workspace");
    return SPL_ERR_ALLOC;
  }
  std::lock_guard<std::mutex> lock(w->mutex);
  ++w->open_calls;
  *call = w;
  return SPL_OK;
}

int spl_cuda_call_alloc(void *call, size_t bytes, void **dptr) {
  if (call == nullptr || dptr == nullptr) {
    set_last_error("spl_cuda_call_alloc: NULL call or pointer");
    return SPL_ERR_BAD_INPUT;
  }
  *dptr = nullptr;
  if (bytes == 0)
    return SPL_OK;
  CUcontext ctx = nullptr;
  const Driver *d = ready_driver(&ctx);
  if (d == nullptr)
    return SPL_ERR_CUDA;
  auto *w = static_cast<Workspace *>(call);
  if (bytes > SIZE_MAX / 4) {
    set_last_error("spl_cuda_call_alloc: size overflows");
    return SPL_ERR_ALLOC;
  }
  size_t need = round_up(bytes);
  std::lock_guard<std::mutex> lock(w->mutex);
  /* Regions start 256-byte aligned in the address space, whatever the block's own alignment. */
  auto start_in = [&](CUdeviceptr block, size_t offset) {
    return static_cast<size_t>(round_up(static_cast<size_t>(block + offset)) - block);
  };
  if (w->arena == 0 || start_in(w->arena, w->offset) + need > w->arena_bytes) {
    /* The open calls keep their bytes in the old block until the last of them closes. */
    size_t grown = std::max({kMinArenaBytes, 2 * w->arena_bytes, 2 * (w->offset + need) + kAlign});
    int status = replace_block(*d, *w, &w->arena, grown);
    if (status != SPL_OK)
      return status;
    w->arena_bytes = grown;
    w->offset = 0;
  }
  size_t start = start_in(w->arena, w->offset);
  *dptr = reinterpret_cast<void *>(static_cast<uintptr_t>(w->arena + start));
  w->offset = start + need;
  return SPL_OK;
}

int spl_cuda_call_counters(void *call, size_t words, void **dptr, uint32_t *epoch) {
  if (call == nullptr || dptr == nullptr || epoch == nullptr) {
    set_last_error("spl_cuda_call_counters: NULL argument");
    return SPL_ERR_BAD_INPUT;
  }
  *dptr = nullptr;
  CUcontext ctx = nullptr;
  const Driver *d = ready_driver(&ctx);
  if (d == nullptr)
    return SPL_ERR_CUDA;
  auto *w = static_cast<Workspace *>(call);
  if (words > SIZE_MAX / 16) {
    set_last_error("spl_cuda_call_counters: size overflows");
    return SPL_ERR_ALLOC;
  }
  words = std::max<size_t>(words, 1);
  std::lock_guard<std::mutex> lock(w->mutex);
  bool zero = false;
  if (words > w->counter_words) {
    size_t grown = std::max(words, 2 * w->counter_words);
    int status = replace_block(*d, *w, &w->counters, grown * 8);
    if (status != SPL_OK)
      return status;
    w->counter_words = grown;
    w->epoch = 0;
    zero = true;
  }
  if (w->epoch == UINT32_MAX) {
    w->epoch = 0;
    zero = true;
  }
  if (zero &&
      !check(*d, d->cuMemsetD8Async(w->counters, 0, w->counter_words * 8, w->stream),
             "cuMemsetD8Async"))
    return SPL_ERR_CUDA;
  *epoch = ++w->epoch;
  *dptr = reinterpret_cast<void *>(static_cast<uintptr_t>(w->counters));
  return SPL_OK;
}

int spl_cuda_call_end(void *call) {
  if (call == nullptr)
    return SPL_OK;
  auto *w = static_cast<Workspace *>(call);
  const Driver *d = driver();
  std::lock_guard<std::mutex> lock(w->mutex);
  if (w->open_calls > 0)
    --w->open_calls;
  if (w->open_calls == 0) {
    w->offset = 0;
    if (d != nullptr)
      for (CUdeviceptr block : w->retired)
        release(*d, *w, block);
    w->retired.clear();
  }
  return SPL_OK;
}

int spl_cuda_release_workspaces(void) {
  CUcontext ctx = nullptr;
  const Driver *d = ready_driver(&ctx);
  if (d == nullptr)
    return SPL_ERR_CUDA;
  std::vector<Workspace *> mine;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto keep = std::stable_partition(registry.begin(), registry.end(),
                                      [&](Workspace *w) {
                                        std::lock_guard<std::mutex> busy(w->mutex);
                                        return w->ctx != ctx || w->open_calls > 0;
                                      });
    mine.assign(keep, registry.end());
    registry.erase(keep, registry.end());
  }
  int status = SPL_OK;
  for (Workspace *w : mine) {
    /* cuMemFree waits for the device to finish with the block (the stream may be gone). */
    for (CUdeviceptr block : {w->arena, w->counters})
      if (block != 0 && !check(*d, d->cuMemFree(block), "cuMemFree_v2"))
        status = SPL_ERR_CUDA;
    for (CUdeviceptr block : w->retired)
      if (!check(*d, d->cuMemFree(block), "cuMemFree_v2"))
        status = SPL_ERR_CUDA;
    delete w;
  }
  return status;
}
