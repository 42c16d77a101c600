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

/* The two phases of spl_cuda_sigma_prefix_i32's exclusive prefix sum of n int32 lengths into
 * n + 1 int64 offsets, over G = ceil(n / seg) segments of seg lengths (sigma_scan.ll; G = 1 for
 * n = 0):
 *   SPL_RT_SCAN_REDUCE(lens, n, seg, sums), G blocks of SPL_RT_SCAN_BLOCK threads, only when
 *     G > 1: sums[b] is segment b's sum (G int64 of scratch);
 *   SPL_RT_SCAN_WRITE(lens, n, seg, sums, out), G blocks of SPL_RT_SCAN_BLOCK threads: block b
 *     adds sums[0 .. b) itself and writes its segment's offsets (block 0 also out[0]).
 * seg is a multiple of SPL_RT_SCAN_BLOCK, at least SPL_RT_SCAN_MIN_SEGMENT_TILES of them, and
 * G <= SPL_RT_SCAN_MAX_SEGMENTS. */
extern const char spl_rt_scan_ptx[];
#define SPL_RT_SCAN_REDUCE "spl_rt_scan_reduce"
#define SPL_RT_SCAN_WRITE "spl_rt_scan_write"
#define SPL_RT_SCAN_BLOCK 256
#define SPL_RT_SCAN_MIN_SEGMENT_TILES 4
#define SPL_RT_SCAN_MAX_SEGMENTS 1024

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPL_RT_CUDA_KERNELS_H */
