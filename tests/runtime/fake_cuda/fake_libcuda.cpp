// fake_libcuda.cpp: a stand-in libcuda.so.1 for testing the runtime's driver plumbing on
// machines without a GPU.
//
// It implements the driver entry points libsplrt resolves, with host memory as "device"
// memory, per-thread current contexts, modules that remember the .entry names of their PTX,
// and a CPU emulation of the two phases of the runtime's own prefix sum (what each kernel of
// runtime/src/sigma_scan.ll leaves in memory) so that argument passing can be checked end to
// end. Counters (fake_cuda_stats) let tests see how often modules were loaded,
// kernels launched and streams synchronised. It knows nothing about PTX beyond entry names, so
// the real kernels run only on a GPU machine and on the CUDA emulator of tests/gpu.
#include "fake_cuda.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern "C" {

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_NOT_FOUND = 500,
};

} // extern "C"

struct CUctx_st {
  int id;
};
struct CUfunc_st {
  std::string name;
};
struct CUmod_st {
  CUcontext ctx;
  std::vector<CUfunc_st *> functions;
};

namespace {

std::mutex mutex;
FakeCudaStats stats;
bool initialised = false;
CUctx_st primary{0};
thread_local CUcontext current = nullptr;

std::vector<std::string> entry_names(const char *ptx) {
  std::vector<std::string> names;
  const char *p = ptx;
  while ((p = std::strstr(p, ".entry ")) != nullptr) {
    p += 7;
    const char *end = p;
    while (*end && *end != '(' && *end != ' ' && *end != '\n')
      ++end;
    names.emplace_back(p, end);
  }
  return names;
}

/* The scan phases over segments [b * seg, min(n, (b + 1) * seg)), b < blocks. */
int64_t segment_end(int64_t b, int64_t n, int64_t seg) { return b * seg + seg < n ? b * seg + seg : n; }

void emulate_scan_reduce(void **args, unsigned blocks) {
  const int32_t *lens = *static_cast<const int32_t **>(args[0]);
  int64_t n = *static_cast<int64_t *>(args[1]), seg = *static_cast<int64_t *>(args[2]);
  int64_t *sums = *static_cast<int64_t **>(args[3]);
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t sum = 0;
    for (int64_t i = b * seg; i < segment_end(b, n, seg); ++i)
      sum += lens[i];
    sums[b] = sum;
  }
}

void emulate_scan_write(void **args, unsigned blocks) {
  const int32_t *lens = *static_cast<const int32_t **>(args[0]);
  int64_t n = *static_cast<int64_t *>(args[1]), seg = *static_cast<int64_t *>(args[2]);
  const int64_t *sums = *static_cast<const int64_t **>(args[3]);
  int64_t *out = *static_cast<int64_t **>(args[4]);
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t carry = 0;
    for (int64_t t = 0; t < b; ++t)
      carry += sums[t];
    if (b == 0)
      out[0] = 0;
    for (int64_t i = b * seg; i < segment_end(b, n, seg); ++i)
      out[i + 1] = carry += lens[i];
  }
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) FakeCudaStats fake_cuda_stats(void) {
  std::lock_guard<std::mutex> lock(mutex);
  return stats;
}

__attribute__((visibility("default"))) CUcontext fake_cuda_make_context(int id) {
  static auto *contexts = new std::vector<CUctx_st *>;
  std::lock_guard<std::mutex> lock(mutex);
  contexts->push_back(new CUctx_st{id});
  return contexts->back();
}

CUresult cuInit(unsigned int) {
  initialised = true;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_PTX: *name = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
  }
  *name = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceGetCount(int *count) {
  *count = initialised ? 1 : 0;
  return initialised ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice) {
  /* memory pools supported; 4 multiprocessors */
  *value = attribute == 115 ? 1 : attribute == 16 ? 4 : 0;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  std::lock_guard<std::mutex> lock(mutex);
  ++stats.primary_retains;
  *ctx = &primary;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *ctx) {
  *ctx = current;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int num_options,
                            int *options, void **values) {
  if (current == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  auto names = entry_names(static_cast<const char *>(image));
  if (names.empty()) {
    char *log = nullptr;
    size_t size = 0;
    for (unsigned i = 0; i < num_options; ++i) {
      if (options[i] == 5)
        log = static_cast<char *>(values[i]);
      if (options[i] == 6)
        size = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[i]));
    }
    if (log != nullptr && size > 0)
      std::snprintf(log, size, "fake ptxas: no .entry in module");
    return CUDA_ERROR_INVALID_PTX;
  }
  auto *m = new CUmod_st{current, {}};
  for (auto &name : names)
    m->functions.push_back(new CUfunc_st{name});
  std::lock_guard<std::mutex> lock(mutex);
  ++stats.module_loads;
  *module = m;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  for (CUfunc_st *f : module->functions)
    if (f->name == name) {
      *function = f;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned, CUstream, void **params, void **) {
  if (current == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (f->name == "spl_rt_scan_reduce")
    emulate_scan_reduce(params, gx);
  else if (f->name == "spl_rt_scan_write")
    emulate_scan_write(params, gx);
  std::lock_guard<std::mutex> lock(mutex);
  ++stats.launches;
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  std::memcpy(stats.last_grid, grid, sizeof grid);
  std::memcpy(stats.last_block, block, sizeof block);
  return CUDA_SUCCESS;
}

static CUresult fake_alloc(CUdeviceptr *dptr, size_t bytes, int *counter) {
  if (current == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  void *p = std::malloc(bytes);
  if (p == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *dptr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mutex);
  ++*counter;
  return CUDA_SUCCESS;
}

static CUresult fake_free(CUdeviceptr dptr, int *counter) {
  std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(dptr)));
  std::lock_guard<std::mutex> lock(mutex);
  ++*counter;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
  return fake_alloc(dptr, bytes, &stats.sync_allocs);
}
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream) {
  return fake_alloc(dptr, bytes, &stats.async_allocs);
}
CUresult cuMemFree_v2(CUdeviceptr dptr) { return fake_free(dptr, &stats.sync_frees); }
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream) {
  return fake_free(dptr, &stats.async_frees);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream) {
  std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), src, bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream) {
  std::memcpy(dst, reinterpret_cast<const void *>(static_cast<uintptr_t>(src)), bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream) {
  std::memmove(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)),
               reinterpret_cast<const void *>(static_cast<uintptr_t>(src)), bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream) {
  std::memset(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), value, bytes);
  std::lock_guard<std::mutex> lock(mutex);
  ++stats.memsets;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) {
  if (current == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = 0;
  return CUDA_SUCCESS;
}

/* Two blocks of any size per multiprocessor (the fake has 4 multiprocessors). */
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction, int, size_t) {
  *blocks = 2;
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream) {
  std::lock_guard<std::mutex> lock(mutex);
  ++stats.stream_syncs;
  return CUDA_SUCCESS;
}

} // extern "C"
