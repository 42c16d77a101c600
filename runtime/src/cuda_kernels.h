/* cuda_kernels.h: PTX modules the runtime itself launches (device-side Sigma precomputation).
 *
 * Internal; exposed to the tests so they can assemble the text with ptxas.
 */
#ifndef SPL_RT_CUDA_KERNELS_H
#define SPL_RT_CUDA_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Module with one kernel, spl_rt_sigma_prefix_i32(const int32 *lens, int64 n, int64 *out):
 * exclusive prefix sum of n lengths into n + 1 offsets. Launch as a single block of
 * SPL_RT_SCAN_BLOCK threads (any count up to that works), no dynamic shared memory. */
extern const char spl_rt_scan_ptx[];
#define SPL_RT_SCAN_KERNEL "spl_rt_sigma_prefix_i32"
#define SPL_RT_SCAN_BLOCK 1024

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPL_RT_CUDA_KERNELS_H */
