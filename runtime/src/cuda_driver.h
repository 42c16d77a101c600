/* cuda_driver.h: the slice of the CUDA driver API the runtime uses, loaded with dlopen.
 *
 * The runtime must build without the CUDA toolkit and run on machines without a GPU (the CPU
 * parts of an SPL object work anywhere), so it never includes cuda.h or links libcuda. Instead
 * it declares the handful of types, constants and entry points it calls (taken from cuda.h of
 * CUDA 13; the driver ABI is stable across versions) and resolves them from libcuda.so.1 on
 * first use, as Halide's runtime does. Where cuda.h maps a name to a versioned symbol
 * (cuMemAlloc -> cuMemAlloc_v2) we resolve the versioned one, which is what code compiled
 * against cuda.h would call.
 *
 * Not installed; used by cuda.cpp only.
 */
#ifndef SPL_RT_CUDA_DRIVER_H
#define SPL_RT_CUDA_DRIVER_H

#include <stddef.h>

/* The driver's opaque handle types, declared at global scope exactly as cuda.h declares them,
 * so that they are the same types if a program also includes cuda.h. */
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;

namespace spl_rt {
namespace cuda {

typedef int CUresult;
typedef int CUdevice;
typedef int CUjit_option;
typedef int CUdevice_attribute;
typedef unsigned long long CUdeviceptr;
typedef ::CUctx_st *CUcontext;
typedef ::CUmod_st *CUmodule;
typedef ::CUfunc_st *CUfunction;
typedef ::CUstream_st *CUstream;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115;

/* Entry points resolved from libcuda.so.1. All are present once driver() returns non-null,
 * except the stream-ordered allocator, which has_async_alloc reports. */
struct Driver {
  CUresult (*cuInit)(unsigned int flags);
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetAttribute)(int *value, CUdevice_attribute attribute, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice device);
  CUresult (*cuCtxGetCurrent)(CUcontext *ctx);
  CUresult (*cuCtxSetCurrent)(CUcontext ctx);
  CUresult (*cuCtxGetDevice)(CUdevice *device);
  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image, unsigned int num_options,
                                 CUjit_option *options, void **option_values);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                             unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                             unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                             void **params, void **extra);
  CUresult (*cuMemAlloc)(CUdeviceptr *dptr, size_t bytes);  /* cuMemAlloc_v2 */
  CUresult (*cuMemFree)(CUdeviceptr dptr);                  /* cuMemFree_v2 */
  CUresult (*cuMemAllocAsync)(CUdeviceptr *dptr, size_t bytes, CUstream stream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr dptr, CUstream stream);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                                CUstream stream);           /* cuMemcpyHtoDAsync_v2 */
  CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                                CUstream stream);           /* cuMemcpyDtoHAsync_v2 */
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                CUstream stream);           /* cuMemcpyDtoDAsync_v2 */
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction function,
                                                          int block_size, size_t dynamic_shared);

  /* cuMemAllocAsync/cuMemFreeAsync exist and every device supports memory pools. */
  bool has_async_alloc;
};

/* The driver, loaded and initialised (cuInit, at least one device) on the first call from any
 * thread; nullptr when that failed, in which case the reason is recorded as the calling
 * thread's last error. */
const Driver *driver();

/* Records a failed call as this thread's last error ("<call>: <CUDA error name>[: detail]")
 * and returns false; returns true when result is CUDA_SUCCESS. */
bool check(const Driver &d, CUresult result, const char *call, const char *detail = nullptr);

/* Records a free-form message as this thread's last error. */
void set_last_error(const char *message);

/* Makes sure a context is current on the calling thread: keeps the current one if any,
 * otherwise makes the primary context of device 0 current (retained once per process, never
 * released, like the CUDA runtime's implicit context). Writes the context to *ctx. */
bool ensure_context(const Driver &d, CUcontext *ctx);

/* The driver with a context current on this thread (ensure_context), or nullptr with the last
 * error set: how every entry point of the runtime that talks to the device starts. */
const Driver *ready_driver(CUcontext *ctx);

} // namespace cuda
} // namespace spl_rt

#endif /* SPL_RT_CUDA_DRIVER_H */
