/* cuda_kernels.h: the PTX module of the runtime's own device kernels (device-side Sigma
 * precomputation), generated at build time from sigma_scan.ll (see runtime/CMakeLists.txt).
 *
 * Internal; exposed to the tests so they can assemble the text with ptxas.
 */
#ifndef SPL_RT_CUDA_KERNELS_H
#define SPL_RT_CUDA_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The three phases of spl_cuda_sigma_prefix_i32's exclusive prefix sum of n int32 lengths into
 * n + 1 int64 offsets, over G = ceil(n / seg) segments of seg lengths (sigma_scan.ll):
 *   SPL_RT_SCAN_REDUCE(lens, n, seg, out), G blocks of SPL_RT_SCAN_BLOCK threads;
 *   SPL_RT_SCAN_OFFSETS(out, n, seg, G), one block of SPL_RT_SCAN_MAX_SEGMENTS threads;
 *   SPL_RT_SCAN_WRITE(lens, n, seg, out), G blocks of SPL_RT_SCAN_BLOCK threads.
 * seg is a multiple of SPL_RT_SCAN_BLOCK and G <= SPL_RT_SCAN_MAX_SEGMENTS. */
extern const char spl_rt_scan_ptx[];
#define SPL_RT_SCAN_REDUCE "spl_rt_scan_reduce"
#define SPL_RT_SCAN_OFFSETS "spl_rt_scan_offsets"
#define SPL_RT_SCAN_WRITE "spl_rt_scan_write"
#define SPL_RT_SCAN_BLOCK 256
#define SPL_RT_SCAN_MAX_SEGMENTS 1024

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPL_RT_CUDA_KERNELS_H */
