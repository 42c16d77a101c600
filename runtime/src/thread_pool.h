/* thread_pool.h: internal queries on the CPU thread pool, shared by the other runtime parts.
 *
 * Not installed; the public entry points (spl_parallel_for, spl_parallel_chunks,
 * spl_num_threads) are in spl_runtime.h.
 */
#ifndef SPL_RT_THREAD_POOL_H
#define SPL_RT_THREAD_POOL_H

namespace spl_rt {

/* True while the calling thread runs chunks of a parallel loop (a pool worker, or a caller
 * helping with its own loop). Parallel calls made there run inline, so callers that would only
 * split work for the pool (the two-pass prefix sum) can pick their sequential version instead. */
bool in_parallel_region();

} // namespace spl_rt

#endif /* SPL_RT_THREAD_POOL_H */
