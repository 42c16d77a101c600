/* cuda.cpp: the spl_cuda_* entry points: availability, kernel launch with a per-object module
 * cache, device memory, copies, and the device-side Sigma prefix sum.
 *
 * Every entry first asks driver() for the dlopen-ed driver and returns SPL_ERR_CUDA when there
 * is none, so objects with GPU kernels still link and run their CPU parts on machines without
 * CUDA. Each call then makes sure a context is current (the caller's, or the primary context of
 * device 0), which is also what the CUDA runtime does implicitly.
 *
 * Module cache: generated objects own one void* cell per PTX module (module_slot, initially
 * NULL). The first launch installs a ModuleCache there with a compare-and-swap; the cache maps
 * each context the module was used under to its CUmodule and the functions looked up in it, so
 * one object works under several contexts (threads driving different GPUs). Lookups take the
 * cache's mutex; loading happens under it too, so a module is loaded once per context even when
 * threads race. Modules and caches live until the process exits: objects have no teardown hook.
 * A context destroyed and then re-created at the same address would find a stale entry; the
 * runtime does not guard against that.
 */
#include "export.h"
#include "cuda_driver.h"
#include "cuda_kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace spl_rt {
namespace cuda {
namespace {

struct KnownFunction {
  std::string name;
  CUfunction function;
  /* Blocks of resident_block_x threads that the whole device holds at once (0: not asked):
   * resident_per_sm on each of resident_sms multiprocessors. */
  uint32_t resident_block_x = 0, resident_sms = 0, resident_per_sm = 0;
};

struct ContextModule {
  CUcontext ctx;
  CUmodule module;
  std::vector<KnownFunction> functions;
};

struct ModuleCache {
  std::mutex mutex;
  std::vector<ContextModule> per_context; /* a handful of contexts at most: linear search */
};

/* The cache in *slot, installing a fresh one if the cell is still empty. */
ModuleCache *cache_in_slot(void **slot) {
  void *existing = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (existing != nullptr)
    return static_cast<ModuleCache *>(existing);
  auto *fresh = new (std::nothrow) ModuleCache;
  if (fresh == nullptr)
    return nullptr;
  void *expected = nullptr;
  if (__atomic_compare_exchange_n(slot, &expected, static_cast<void *>(fresh), false,
                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return fresh;
  delete fresh; /* another thread installed one first */
  return static_cast<ModuleCache *>(expected);
}

bool load_module(const Driver &d, const char *ptx, CUmodule *module) {
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(static_cast<uintptr_t>(sizeof log))};
  return check(d, d.cuModuleLoadDataEx(module, ptx, 2, options, values), "cuModuleLoadDataEx",
               log);
}

/* Finds (loading if needed) kernel `name` of `ptx` for context ctx. Returns an SPL_* code.
 * With `resident_block_x`, also writes to *resident_blocks how many blocks of that many threads
 * the device holds at once (SMs x the occupancy calculator's blocks per SM, at least 1; at most
 * `at_most_per_sm` per SM where that is not 0; at most 65535), asked of the driver once per
 * function and block size. */
int find_function(const Driver &d, ModuleCache &cache, CUcontext ctx, const char *ptx,
                  const char *name, CUfunction *function, uint32_t resident_block_x = 0,
                  uint32_t *resident_blocks = nullptr, uint32_t at_most_per_sm = 0) {
  try {
    std::lock_guard<std::mutex> lock(cache.mutex);
    ContextModule *entry = nullptr;
    for (ContextModule &candidate : cache.per_context)
      if (candidate.ctx == ctx)
        entry = &candidate;
    if (entry == nullptr) {
      CUmodule module = nullptr;
      if (!load_module(d, ptx, &module))
        return SPL_ERR_CUDA;
      cache.per_context.push_back(ContextModule{ctx, module, {}});
      entry = &cache.per_context.back();
    }
    KnownFunction *known = nullptr;
    for (KnownFunction &candidate : entry->functions)
      if (candidate.name == name)
        known = &candidate;
    if (known == nullptr) {
      if (!check(d, d.cuModuleGetFunction(function, entry->module, name), "cuModuleGetFunction",
                 name))
        return SPL_ERR_CUDA;
      entry->functions.push_back(KnownFunction{name, *function});
      known = &entry->functions.back();
    }
    *function = known->function;
    if (resident_block_x == 0)
      return SPL_OK;
    if (known->resident_block_x != resident_block_x) {
      CUdevice device = 0;
      int sms = 0, per_sm = 0;
      if (!check(d, d.cuCtxGetDevice(&device), "cuCtxGetDevice") ||
          !check(d, d.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
                 "cuDeviceGetAttribute") ||
          !check(d,
                 d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                     &per_sm, known->function, static_cast<int>(resident_block_x), 0),
                 "cuOccupancyMaxActiveBlocksPerMultiprocessor", name))
        return SPL_ERR_CUDA;
      known->resident_sms = static_cast<uint32_t>(sms > 0 ? sms : 1);
      known->resident_per_sm = static_cast<uint32_t>(per_sm > 0 ? per_sm : 1);
      known->resident_block_x = resident_block_x;
    }
    uint32_t per_sm = known->resident_per_sm;
    if (at_most_per_sm > 0 && at_most_per_sm < per_sm)
      per_sm = at_most_per_sm;
    int64_t blocks = static_cast<int64_t>(known->resident_sms) * per_sm;
    *resident_blocks = static_cast<uint32_t>(blocks < 65535 ? blocks : 65535);
    return SPL_OK;
  } catch (...) {
    set_last_error("out of host memory in the CUDA module cache");
    return SPL_ERR_ALLOC;
  }
}

/* Kernel `name` of `ptx` for the context current on this thread, through the module cache in
 * *module_slot (find_function; with `resident_block_x`, the resident blocks too): what
 * spl_cuda_launch and spl_cuda_resident_blocks share. `bad_arguments` is the caller's own check;
 * `who` names it in the last error. Writes the driver to *driver_out. Returns an SPL_* code. */
int kernel_function(const char *who, bool bad_arguments, const char *ptx, const char *name,
                    void **module_slot, const Driver **driver_out, CUfunction *function,
                    uint32_t resident_block_x = 0, uint32_t *resident_blocks = nullptr,
                    uint32_t at_most_per_sm = 0) {
  CUcontext ctx = nullptr;
  const Driver *d = ready_driver(&ctx);
  if (d == nullptr)
    return SPL_ERR_CUDA;
  if (bad_arguments || ptx == nullptr || name == nullptr || module_slot == nullptr) {
    char message[128];
    snprintf(message, sizeof message, "%s: NULL ptx, kernel name or module slot, or a bad argument", who);
    set_last_error(message);
    return SPL_ERR_BAD_INPUT;
  }
  ModuleCache *cache = cache_in_slot(module_slot);
  if (cache == nullptr) {
    set_last_error("out of host memory in the CUDA module cache");
    return SPL_ERR_ALLOC;
  }
  *driver_out = d;
  return find_function(*d, *cache, ctx, ptx, name, function, resident_block_x, resident_blocks,
                       at_most_per_sm);
}

CUdeviceptr device_address(const void *ptr) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr));
}

} // namespace
} // namespace cuda
} // namespace spl_rt

using namespace spl_rt::cuda;

int spl_cuda_available(void) { return driver() != nullptr ? 1 : 0; }

int spl_cuda_launch(const char *ptx, const char *name, void **module_slot, uint32_t grid_x,
                    uint32_t grid_y, uint32_t grid_z, uint32_t block_x, uint32_t block_y,
                    uint32_t block_z, uint32_t shared_bytes, void *stream, void **args) {
  const Driver *d = nullptr;
  CUfunction function = nullptr;
  int status = kernel_function("spl_cuda_launch", false, ptx, name, module_slot, &d, &function);
  if (status != SPL_OK)
    return status;
  CUresult result =
      d->cuLaunchKernel(function, grid_x, grid_y, grid_z, block_x, block_y, block_z,
                        shared_bytes, static_cast<CUstream>(stream), args, nullptr);
  return check(*d, result, "cuLaunchKernel", name) ? SPL_OK : SPL_ERR_CUDA;
}

int spl_cuda_resident_blocks(const char *ptx, const char *name, void **module_slot,
                             uint32_t block_x, uint32_t *blocks) {
  return spl_cuda_resident_blocks_at_most(ptx, name, module_slot, block_x, 0, blocks);
}

int spl_cuda_resident_blocks_at_most(const char *ptx, const char *name, void **module_slot,
                                     uint32_t block_x, uint32_t per_sm, uint32_t *blocks) {
  const Driver *d = nullptr;
  CUfunction function = nullptr;
  return kernel_function("spl_cuda_resident_blocks_at_most", blocks == nullptr || block_x == 0, ptx,
                         name, module_slot, &d, &function, block_x, blocks, per_sm);
}

int spl_cuda_alloc(void **dptr, size_t bytes, void *stream) {
  CUcontext ctx = nullptr;
  const Driver *d = ready_driver(&ctx);
  if (d == nullptr)
    return SPL_ERR_CUDA;
  if (dptr == nullptr)
    return SPL_ERR_BAD_INPUT;
  *dptr = nullptr;
  if (bytes == 0)
    return SPL_OK;
  CUdeviceptr address = 0;
  bool ok = d->has_async_alloc
                ? check(*d, d->cuMemAllocAsync(&address, bytes, static_cast<CUstream>(stream)),
                        "cuMemAllocAsync")
                : check(*d, d->cuMemAlloc(&address, bytes), "cuMemAlloc_v2");
  if (!ok)
    return SPL_ERR_CUDA;
  *dptr = reinterpret_cast<void *>(static_cast<uintptr_t>(address));
  return SPL_OK;
}

int spl_cuda_free(void *dptr, void *stream) {
  CUcontext ctx = nullptr;
  const Driver *d = ready_driver(&ctx);
  if (d == nullptr)
    return SPL_ERR_CUDA;
  if (dptr == nullptr)
    return SPL_OK;
  bool ok = d->has_async_alloc
                ? check(*d, d->cuMemFreeAsync(device_address(dptr), static_cast<CUstream>(stream)),
                        "cuMemFreeAsync")
                : check(*d, d->cuMemFree(device_address(dptr)), "cuMemFree_v2");
  return ok ? SPL_OK : SPL_ERR_CUDA;
}

int spl_cuda_memcpy(void *dst, const void *src, size_t bytes, int kind, void *stream) {
  CUcontext ctx = nullptr;
  const Driver *d = ready_driver(&ctx);
  if (d == nullptr)
    return SPL_ERR_CUDA;
  if (kind < 0 || kind > 2 || (bytes > 0 && (dst == nullptr || src == nullptr))) {
    set_last_error("spl_cuda_memcpy: bad kind or NULL pointer");
    return SPL_ERR_BAD_INPUT;
  }
  if (bytes == 0)
    return SPL_OK;
  CUstream cu_stream = static_cast<CUstream>(stream);
  switch (kind) {
  case 0:
    return check(*d, d->cuMemcpyHtoDAsync(device_address(dst), src, bytes, cu_stream),
                 "cuMemcpyHtoDAsync_v2")
               ? SPL_OK
               : SPL_ERR_CUDA;
  case 1:
    /* The host buffer is the caller's to read as soon as we return, hence the synchronize. */
    return check(*d, d->cuMemcpyDtoHAsync(dst, device_address(src), bytes, cu_stream),
                 "cuMemcpyDtoHAsync_v2") &&
                   check(*d, d->cuStreamSynchronize(cu_stream), "cuStreamSynchronize")
               ? SPL_OK
               : SPL_ERR_CUDA;
  default:
    return check(*d, d->cuMemcpyDtoDAsync(device_address(dst), device_address(src), bytes,
                                          cu_stream),
                 "cuMemcpyDtoDAsync_v2")
               ? SPL_OK
               : SPL_ERR_CUDA;
  }
}

int spl_cuda_sigma_prefix_i32(const int32_t *lens, int64_t n, int64_t *out, void *stream) {
  static void *scan_module = nullptr;
  if (driver() == nullptr)
    return SPL_ERR_CUDA;
  if (n < 0 || out == nullptr || (n > 0 && lens == nullptr)) {
    set_last_error("spl_cuda_sigma_prefix_i32: negative length or NULL pointer");
    return SPL_ERR_BAD_INPUT;
  }
  /* Segments of whole tiles, at least SPL_RT_SCAN_MIN_SEGMENT_TILES (so that a small n is one
   * segment: one launch), as few as fill SPL_RT_SCAN_MAX_SEGMENTS blocks (sigma_scan.ll). n = 0
   * is one empty segment, whose block writes out[0]. */
  const int64_t block = SPL_RT_SCAN_BLOCK;
  const int64_t tiles = (n + block - 1) / block;
  int64_t tiles_per_segment = (tiles + SPL_RT_SCAN_MAX_SEGMENTS - 1) / SPL_RT_SCAN_MAX_SEGMENTS;
  if (tiles_per_segment < SPL_RT_SCAN_MIN_SEGMENT_TILES)
    tiles_per_segment = SPL_RT_SCAN_MIN_SEGMENT_TILES;
  int64_t seg = tiles_per_segment * block;
  int64_t segments = n > 0 ? (n + seg - 1) / seg : 1;
  const uint32_t grid = static_cast<uint32_t>(segments);
  /* The segments' sums, from the workspace of this stream's calls (nothing to read for one). */
  void *call = nullptr, *sums = nullptr;
  int status = SPL_OK;
  if (segments > 1) {
    status = spl_cuda_call_begin(stream, &call);
    if (status == SPL_OK)
      status = spl_cuda_call_alloc(call, static_cast<size_t>(segments) * sizeof(int64_t), &sums);
  }
  void *reduce_args[] = {&lens, &n, &seg, &sums};
  void *write_args[] = {&lens, &n, &seg, &sums, &out};
  if (status == SPL_OK && segments > 1)
    status = spl_cuda_launch(spl_rt_scan_ptx, SPL_RT_SCAN_REDUCE, &scan_module, grid, 1, 1,
                             SPL_RT_SCAN_BLOCK, 1, 1, 0, stream, reduce_args);
  if (status == SPL_OK)
    status = spl_cuda_launch(spl_rt_scan_ptx, SPL_RT_SCAN_WRITE, &scan_module, grid, 1, 1,
                             SPL_RT_SCAN_BLOCK, 1, 1, 0, stream, write_args);
  int ended = spl_cuda_call_end(call);
  return status != SPL_OK ? status : ended;
}

