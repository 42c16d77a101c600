/* cuda_driver.cpp: loads libcuda.so.1 with dlopen, keeps the per-thread last error, and finds
 * a context for the calling thread. See cuda_driver.h for why the toolkit is not used.
 *
 * SPL_CUDA_DRIVER, when set, names the library to load instead of libcuda.so.1: the tests point
 * it at libspl_cuda_emulator.so, which runs objects built with `splc --gpu-emulator` on the CPU.
 *
 * Loading runs once per process under std::call_once; its outcome (the function table or the
 * reason it failed) is immutable afterwards, so readers need no lock. The library handle is
 * never closed: modules and contexts created through it live until the process exits.
 */
#include "export.h"
#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>

namespace spl_rt {
namespace cuda {
namespace {

thread_local char tls_last_error[1024];

Driver loaded_driver;
bool driver_ok = false;
char load_failure[512];

const char *driver_path = "libcuda.so.1";

template <typename Fn> bool resolve(void *lib, const char *symbol, Fn *&fn) {
  fn = reinterpret_cast<Fn *>(dlsym(lib, symbol));
  if (fn != nullptr)
    return true;
  snprintf(load_failure, sizeof load_failure, "%s lacks %s", driver_path, symbol);
  return false;
}

bool all_devices_support_memory_pools(const Driver &d, int device_count) {
  for (int ordinal = 0; ordinal < device_count; ++ordinal) {
    CUdevice device = 0;
    int supported = 0;
    if (d.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS ||
        d.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                               device) != CUDA_SUCCESS ||
        supported == 0)
      return false;
  }
  return true;
}

void load_driver() {
  const char *override_path = getenv("SPL_CUDA_DRIVER");
  if (override_path != nullptr && override_path[0] != '\0')
    driver_path = override_path;
  void *lib = dlopen(driver_path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char *why = dlerror();
    snprintf(load_failure, sizeof load_failure, "%s could not be loaded: %s", driver_path,
             why ? why : "unknown reason");
    return;
  }
  Driver &d = loaded_driver;
  bool ok = resolve(lib, "cuInit", d.cuInit) && resolve(lib, "cuGetErrorName", d.cuGetErrorName) &&
            resolve(lib, "cuDeviceGetCount", d.cuDeviceGetCount) &&
            resolve(lib, "cuDeviceGet", d.cuDeviceGet) &&
            resolve(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute) &&
            resolve(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain) &&
            resolve(lib, "cuCtxGetCurrent", d.cuCtxGetCurrent) &&
            resolve(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent) &&
            resolve(lib, "cuCtxGetDevice", d.cuCtxGetDevice) &&
            resolve(lib, "cuModuleLoadDataEx", d.cuModuleLoadDataEx) &&
            resolve(lib, "cuModuleGetFunction", d.cuModuleGetFunction) &&
            resolve(lib, "cuLaunchKernel", d.cuLaunchKernel) &&
            resolve(lib, "cuMemAlloc_v2", d.cuMemAlloc) &&
            resolve(lib, "cuMemFree_v2", d.cuMemFree) &&
            resolve(lib, "cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync) &&
            resolve(lib, "cuMemcpyDtoHAsync_v2", d.cuMemcpyDtoHAsync) &&
            resolve(lib, "cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync) &&
            resolve(lib, "cuMemsetD8Async", d.cuMemsetD8Async) &&
            resolve(lib, "cuStreamSynchronize", d.cuStreamSynchronize) &&
            resolve(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                    d.cuOccupancyMaxActiveBlocksPerMultiprocessor);
  if (!ok)
    return;
  d.cuMemAllocAsync = reinterpret_cast<decltype(d.cuMemAllocAsync)>(dlsym(lib, "cuMemAllocAsync"));
  d.cuMemFreeAsync = reinterpret_cast<decltype(d.cuMemFreeAsync)>(dlsym(lib, "cuMemFreeAsync"));

  CUresult result = d.cuInit(0);
  if (result != CUDA_SUCCESS) {
    const char *name = nullptr;
    if (d.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr)
      name = "unknown CUDA error";
    snprintf(load_failure, sizeof load_failure, "cuInit: %s (%d)", name, result);
    return;
  }
  int device_count = 0;
  if (d.cuDeviceGetCount(&device_count) != CUDA_SUCCESS || device_count < 1) {
    snprintf(load_failure, sizeof load_failure, "no CUDA device found");
    return;
  }
  d.has_async_alloc = d.cuMemAllocAsync != nullptr && d.cuMemFreeAsync != nullptr &&
                      all_devices_support_memory_pools(d, device_count);
  driver_ok = true;
}

std::once_flag primary_once;
CUcontext primary_context = nullptr;
CUresult primary_result = CUDA_SUCCESS;

} // namespace

const Driver *driver() {
  static std::once_flag load_once;
  std::call_once(load_once, load_driver);
  if (driver_ok)
    return &loaded_driver;
  set_last_error(load_failure);
  return nullptr;
}

void set_last_error(const char *message) {
  snprintf(tls_last_error, sizeof tls_last_error, "%s", message ? message : "");
}

bool check(const Driver &d, CUresult result, const char *call, const char *detail) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = nullptr;
  if (d.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr)
    name = "unknown CUDA error";
  if (detail != nullptr && detail[0] != '\0')
    snprintf(tls_last_error, sizeof tls_last_error, "%s: %s (%d): %s", call, name, result,
             detail);
  else
    snprintf(tls_last_error, sizeof tls_last_error, "%s: %s (%d)", call, name, result);
  return false;
}

bool ensure_context(const Driver &d, CUcontext *ctx) {
  *ctx = nullptr;
  if (!check(d, d.cuCtxGetCurrent(ctx), "cuCtxGetCurrent"))
    return false;
  if (*ctx != nullptr)
    return true;
  std::call_once(primary_once, [&d] {
    CUdevice device = 0;
    primary_result = d.cuDeviceGet(&device, 0);
    if (primary_result == CUDA_SUCCESS)
      primary_result = d.cuDevicePrimaryCtxRetain(&primary_context, device);
  });
  if (!check(d, primary_result, "cuDevicePrimaryCtxRetain"))
    return false;
  if (!check(d, d.cuCtxSetCurrent(primary_context), "cuCtxSetCurrent"))
    return false;
  *ctx = primary_context;
  return true;
}

const Driver *ready_driver(CUcontext *ctx) {
  const Driver *d = driver();
  if (d == nullptr || !ensure_context(*d, ctx))
    return nullptr;
  return d;
}

} // namespace cuda
} // namespace spl_rt

/* Defined here because the buffer is private to this file. */
const char *spl_cuda_last_error(void) { return spl_rt::cuda::tls_last_error; }
