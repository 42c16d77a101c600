/* sigma.cpp: spl_sigma_prefix_*, the exclusive prefix sums that turn per-position lengths into
 * ragged row offsets (the Sigma precomputation of a LIL structure).
 *
 * Below kParallelThreshold elements, or with one thread, or inside a parallel region, a single
 * sequential pass is fastest. Above it, a two-pass scan on the pool: pass 1 sums each chunk and
 * checks for negative lengths, a short sequential scan over the chunk sums gives each chunk its
 * starting offset, and pass 2 writes the offsets. Both passes read the lengths once each, so the
 * parallel version does about twice the memory traffic and only pays off on large inputs.
 *
 * Returns SPL_ERR_BAD_INPUT for n < 0, a NULL array with n > 0, or a negative length (out is
 * then partially written). n = 0 writes out[0] = 0.
 */
#include "export.h"
#include "thread_pool.h"

#include <algorithm>
#include <vector>

namespace spl_rt {
namespace {

constexpr int64_t kParallelThreshold = int64_t(1) << 16;
/* Smallest chunk worth a task: keeps per-chunk overhead well under the scan itself. */
constexpr int64_t kMinChunk = int64_t(1) << 14;
constexpr int64_t kChunksPerThread = 4;

template <typename Len> int sequential_prefix(const Len *lens, int64_t n, int64_t *out) {
  int64_t sum = 0;
  out[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = static_cast<int64_t>(lens[i]);
    if (len < 0)
      return SPL_ERR_BAD_INPUT;
    sum += len;
    out[i + 1] = sum;
  }
  return SPL_OK;
}

template <typename Len> struct ParallelScan {
  const Len *lens;
  int64_t n;
  int64_t *out;
  int64_t chunk;
  std::vector<int64_t> chunk_sums; /* pass 1: sum of chunk c; then its starting offset */
  std::vector<char> chunk_negative;

  int64_t lo(int64_t c) const { return c * chunk; }
  int64_t hi(int64_t c) const { return std::min(n, (c + 1) * chunk); }

  static void sum_chunk(void *self, int64_t c, int64_t) {
    auto &scan = *static_cast<ParallelScan *>(self);
    int64_t sum = 0;
    bool negative = false;
    for (int64_t i = scan.lo(c), e = scan.hi(c); i < e; ++i) {
      int64_t len = static_cast<int64_t>(scan.lens[i]);
      negative |= len < 0;
      sum += len;
    }
    scan.chunk_sums[c] = sum;
    scan.chunk_negative[c] = negative;
  }

  static void write_chunk(void *self, int64_t c, int64_t) {
    auto &scan = *static_cast<ParallelScan *>(self);
    int64_t sum = scan.chunk_sums[c];
    for (int64_t i = scan.lo(c), e = scan.hi(c); i < e; ++i) {
      sum += static_cast<int64_t>(scan.lens[i]);
      scan.out[i + 1] = sum;
    }
  }
};

template <typename Len> int parallel_prefix(const Len *lens, int64_t n, int64_t *out) {
  const int64_t threads = spl_num_threads();
  const int64_t nchunks_wanted = std::max<int64_t>(
      1, std::min<int64_t>(threads * kChunksPerThread, n / kMinChunk));
  ParallelScan<Len> scan;
  scan.lens = lens;
  scan.n = n;
  scan.out = out;
  scan.chunk = (n + nchunks_wanted - 1) / nchunks_wanted;
  const int64_t nchunks = (n + scan.chunk - 1) / scan.chunk;
  try {
    scan.chunk_sums.assign(static_cast<size_t>(nchunks), 0);
    scan.chunk_negative.assign(static_cast<size_t>(nchunks), 0);
  } catch (...) {
    return sequential_prefix(lens, n, out); /* no memory for the bookkeeping: do it in place */
  }

  spl_parallel_chunks(nchunks, &ParallelScan<Len>::sum_chunk, &scan);
  int64_t offset = 0;
  for (int64_t c = 0; c < nchunks; ++c) {
    if (scan.chunk_negative[c])
      return SPL_ERR_BAD_INPUT;
    int64_t sum = scan.chunk_sums[c];
    scan.chunk_sums[c] = offset;
    offset += sum;
  }
  out[0] = 0;
  spl_parallel_chunks(nchunks, &ParallelScan<Len>::write_chunk, &scan);
  return SPL_OK;
}

template <typename Len> int sigma_prefix(const Len *lens, int64_t n, int64_t *out) {
  if (n < 0 || out == nullptr || (n > 0 && lens == nullptr))
    return SPL_ERR_BAD_INPUT;
  if (n < kParallelThreshold || spl_num_threads() == 1 || in_parallel_region())
    return sequential_prefix(lens, n, out);
  return parallel_prefix(lens, n, out);
}

} // namespace
} // namespace spl_rt

int spl_sigma_prefix_i32(const int32_t *lens, int64_t n, int64_t *out) {
  return spl_rt::sigma_prefix(lens, n, out);
}

int spl_sigma_prefix_i64(const int64_t *lens, int64_t n, int64_t *out) {
  return spl_rt::sigma_prefix(lens, n, out);
}
