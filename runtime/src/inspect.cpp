/* inspect.cpp: spl_csr_inspect, what a plan reads of a CSR matrix before it chooses a kernel
 * (issue 25, docs/plans.md): row lengths (their histogram, mean, spread and how often a row's
 * length differs from the row before it, which is what makes a row loop's exit mispredict),
 * where the entries lie against the diagonal (bandwidth, the share of scattered entries), the
 * bytes an SpMV moves against the last-level cache, and the threads.
 *
 * One pass over the offsets and one over the columns, split into row chunks of about equal work
 * (rows plus entries) on the thread pool;
 * each chunk keeps its own sums, merged in chunk order afterwards, so the result does not
 * depend on the thread count (floating-point sums are formed from integer counts at the end).
 *
 * Assumes: offs has n + 1 entries, cols the entries offs[0] .. offs[n] (row i at offs[i] -
 * offs[0] + k). Checked: sizes, pointers, monotone offsets (SPL_ERR_BAD_INPUT). Columns are not
 * checked against m (a column past m counts as far from the diagonal).
 */
#include "export.h"

#include "csr_arrays.h"
#include "inspect.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace spl_rt {
namespace {

/* Work per chunk, in rows plus entries (spl_balance_rows' weight): enough that the pool's overhead
 * is nothing against a chunk's work. Chunks of a fixed row count left a matrix of few long rows
 * (dense2's 1414 rows of 1414 entries) in one chunk, inspected on one thread. */
constexpr int64_t kWorkPerChunk = 1 << 16;

/* v clamped to the int32 range (a band's edge past it excludes no column). */
int32_t clamp32(int64_t v) { return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)); }

/* The bucket of a row length: 0 for empty rows, then 1 + floor(log2(len)). */
int bucket_of(int64_t len) {
  if (len <= 0)
    return 0;
  return std::min(64 - __builtin_clzll(static_cast<unsigned long long>(len)), SPL_CSR_LENGTH_BUCKETS - 1);
}

struct Partial {
  int64_t empty = 0, min_len = INT64_MAX, max_len = 0, changes = 0;
  unsigned __int128 sum_sq = 0; /* of lengths, exact (a long double per row made the pass x87-bound) */
  int64_t buckets[SPL_CSR_LENGTH_BUCKETS] = {};
  int64_t bandwidth = 0, scattered = 0, sampled = 0; /* sampled: entries whose columns were read */
};

struct Inspection {
  int64_t n, m;
  const int32_t *offs, *cols;
  int64_t near; /* an entry with |j - i'| above this is scattered */
  int64_t column_stride; /* the columns of every column_stride-th chunk are read */
  std::vector<int64_t> bounds; /* chunk c: rows bounds[c] .. bounds[c + 1] */
  std::vector<Partial> parts;

  static void run(void *closure, int64_t begin, int64_t end) {
    Inspection &in = *static_cast<Inspection *>(closure);
    for (int64_t c = begin; c < end; ++c)
      in.chunk(c);
  }

  /* The row statistics of rows r0 .. r1 whose lengths all fit 32 bits (the chunk holds at most
   * INT32_MAX entries): loops without a store an element, which vectorise (the library's
   * baseline x86-64 has SSE2's 32-bit compares and products of 32 into 64 bits). The histogram
   * counts the rows at or above each power of two up to the longest row, a pass each, where rows
   * are shorter than kCountedBuckets' lengths; with longer ones it is histogram's, whose passes
   * would outnumber its increments' cost. On 500,000 stencil rows (2-core Zen 5): 0.6 ms where
   * one loop of increments (any_rows) took 1.3. */
  static constexpr int kCountedBuckets = 9; /* rows under 256 entries */
  void short_rows(int64_t r0, int64_t r1, int64_t &empty, int64_t &min_len, int64_t &max_len, int64_t &changes,
                  uint64_t &sum_sq, int64_t *buckets) const {
    int32_t empties = 0, shortest = INT32_MAX, longest = 0;
    uint64_t squares = 0;
    for (int64_t i = r0; i < r1; ++i) {
      const int32_t len = offs[i + 1] - offs[i];
      empties += len == 0;
      shortest = std::min(shortest, len);
      longest = std::max(longest, len);
      squares += static_cast<uint64_t>(static_cast<uint32_t>(len)) * static_cast<uint32_t>(len);
    }
    /* A change: a row whose length differs from the row before it (the chunk's first row, from
     * the row before the chunk, or none at the matrix's first). */
    int32_t changed = 0;
    if (r0 > 0 && r1 > r0) /* the row before may lie outside the chunk's 32 bits */
      changed += static_cast<int64_t>(offs[r0 + 1]) - offs[r0] != static_cast<int64_t>(offs[r0]) - offs[r0 - 1];
    for (int64_t i = r0 + 1; i < r1; ++i)
      changed += (offs[i + 1] - offs[i]) != (offs[i] - offs[i - 1]);
    if (bucket_of(longest) >= kCountedBuckets) {
      histogram(r0, r1, buckets);
    } else {
      /* Bucket b >= 1 holds lengths 2^(b-1) .. 2^b - 1: the rows at or above 2^(b-1) less those
       * at or above 2^b. */
      int64_t at_or_above[kCountedBuckets + 1] = {};
      for (int b = 1; b <= bucket_of(longest); ++b) {
        const int32_t floor = int32_t{1} << (b - 1);
        int32_t count = 0;
        for (int64_t i = r0; i < r1; ++i)
          count += (offs[i + 1] - offs[i]) >= floor;
        at_or_above[b] = count;
      }
      buckets[0] = empties;
      for (int b = 1; b <= bucket_of(longest); ++b)
        buckets[b] = at_or_above[b] - at_or_above[b + 1];
    }
    empty = empties;
    min_len = r1 > r0 ? shortest : INT64_MAX;
    max_len = longest;
    changes = changed;
    sum_sq = squares;
  }

  /* The row-length histogram of rows r0 .. r1 in one loop of increments, for rows of any length.
   * Four histograms, taken in turn: rows of one length (a stencil's) hit one bucket, and a
   * single histogram made every row wait for the previous row's increment to reach memory (a
   * store-to-load chain). */
  void histogram(int64_t r0, int64_t r1, int64_t *buckets) const {
    int64_t histograms[4][SPL_CSR_LENGTH_BUCKETS] = {};
    for (int64_t i = r0; i < r1; ++i)
      histograms[i & 3][bucket_of(static_cast<int64_t>(offs[i + 1]) - offs[i])]++;
    for (int b = 0; b < SPL_CSR_LENGTH_BUCKETS; ++b)
      buckets[b] = histograms[0][b] + histograms[1][b] + histograms[2][b] + histograms[3][b];
  }

  /* The row statistics of rows r0 .. r1 in 64 bits, for a chunk of more than INT32_MAX entries.
   * The row statistics take loops of their own, apart from the columns' (which only every
   * column_stride-th chunk reads): together, with more values live than registers, the compiler
   * kept the change count in memory, another such chain (the inspection took as long as a CSR
   * call on G3_circuit's rows of 5). */
  void any_rows(int64_t r0, int64_t r1, int64_t &empty, int64_t &min_len, int64_t &max_len, int64_t &changes,
                uint64_t &sum_sq, int64_t *buckets) const {
    int64_t previous = r0 > 0 ? static_cast<int64_t>(offs[r0]) - offs[r0 - 1] : (r1 > r0 ? static_cast<int64_t>(offs[r0 + 1]) - offs[r0] : 0);
    empty = 0, min_len = INT64_MAX, max_len = 0, changes = 0, sum_sq = 0;
    for (int64_t i = r0; i < r1; ++i) {
      const int64_t len = static_cast<int64_t>(offs[i + 1]) - offs[i];
      empty += len == 0;
      min_len = std::min(min_len, len);
      max_len = std::max(max_len, len);
      sum_sq += static_cast<uint64_t>(len) * static_cast<uint64_t>(len);
      changes += len != previous;
      previous = len;
    }
    histogram(r0, r1, buckets);
  }

  void chunk(int64_t c) {
    Partial &p = parts[static_cast<size_t>(c)];
    const int64_t r0 = bounds[static_cast<size_t>(c)], r1 = bounds[static_cast<size_t>(c) + 1];
    /* Columns are compared with the row's place scaled to the columns (i * m / n), so that a
     * rectangular matrix's diagonal runs corner to corner. */
    const long double scale = n > 0 ? static_cast<long double>(m) / static_cast<long double>(n) : 1.0L;
    /* In locals: kept in the chunk's Partial, each entry's update went through memory, a chain
     * of stores and loads that made the pass several times slower than an SpMV. */
    const bool columns = c % column_stride == 0;
    int64_t bandwidth = 0, scattered = 0, empty = 0, min_len = INT64_MAX, max_len = 0, changes = 0;
    /* A chunk's sum of squared lengths fits 64 bits: with 32-bit offsets its rows hold under
     * 2^32 entries, and the sum is at most their count times the longest row, under 2^64. */
    uint64_t sum_sq = 0;
    int64_t buckets[SPL_CSR_LENGTH_BUCKETS] = {};
    if (static_cast<int64_t>(offs[r1]) - offs[r0] <= INT32_MAX)
      short_rows(r0, r1, empty, min_len, max_len, changes, sum_sq, buckets);
    else
      any_rows(r0, r1, empty, min_len, max_len, changes, sum_sq, buckets);
    for (int64_t i = r0; columns && i < r1; ++i) {
      const int64_t len = static_cast<int64_t>(offs[i + 1]) - offs[i];
      if (len == 0)
        continue;
      const int64_t diagonal = n == m ? i : static_cast<int64_t>(static_cast<long double>(i) * scale); /* x87 only when needed */
      /* Far from the diagonal: below lo or above hi. In 32 bits, with the row's smallest and
       * largest column, so that the loop vectorises on the baseline x86-64 the library is built
       * for (a 64-bit |j - i| per entry did not, and the pass took two SpMVs on dense rows). */
      const int32_t lo = clamp32(diagonal - near), hi = clamp32(diagonal + near);
      const int32_t *row = cols + (static_cast<int64_t>(offs[i]) - offs[0]);
      int32_t smallest = INT32_MAX, largest = INT32_MIN, far = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int32_t j = row[k];
        smallest = std::min(smallest, j);
        largest = std::max(largest, j);
        far += static_cast<int32_t>(j < lo) + static_cast<int32_t>(j > hi);
      }
      bandwidth = std::max({bandwidth, diagonal - smallest, static_cast<int64_t>(largest) - diagonal});
      scattered += far;
    }
    std::copy(buckets, buckets + SPL_CSR_LENGTH_BUCKETS, p.buckets);
    p.bandwidth = bandwidth;
    p.scattered = scattered;
    p.empty = empty;
    p.min_len = min_len;
    p.max_len = max_len;
    p.changes = changes;
    p.sum_sq = sum_sq;
    p.sampled = columns ? static_cast<int64_t>(offs[r1]) - offs[r0] : 0;
  }
};

/* sysfs's number for one cache of cpu0 (`index` its folder, `file` "level" or "size"), or -1. */
long long cache_field(int index, const char *file) {
  char path[96];
  std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, file);
  FILE *f = std::fopen(path, "r");
  if (!f)
    return -1;
  long long value = 0;
  char unit = 0;
  const int got = std::fscanf(f, "%lld%c", &value, &unit);
  std::fclose(f);
  if (got < 1 || value <= 0)
    return -1;
  return value * (unit == 'K' ? 1024LL : unit == 'M' ? 1024LL * 1024 : 1);
}

/* The data (or unified) cache of `level` (2 or 3) in bytes, as sysfs or else sysconf tells; 0
 * when neither does. sysfs first: it lists the cache that cpu0 shares with the CPUs named
 * beside it, the kernel's reading of the CPU; glibc's sysconf reads the L3 of the whole package
 * on AMD (CPUID 0x80000006), not the one a core reaches: on a 2-core AMD EPYC VM (Zen 3) 256 MB
 * against sysfs's 32 MB (lscpu's), and 532 MB on a Zen 5 one, so plans took a 64 MB matrix for
 * one held in the cache. */
int64_t cache_bytes(int level) {
  /* A folder a cache (level 1's data and instruction caches apart, listed data first); levels 2
   * and 3 are unified. */
  for (int index = 0; index < 8; ++index)
    if (cache_field(index, "level") == level) {
      const long long size = cache_field(index, "size");
      if (size > 0)
        return size;
      break;
    }
  long from_sysconf = -1;
#if defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  from_sysconf = sysconf(level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
#endif
  return from_sysconf > 0 ? from_sysconf : 0;
}

} // namespace

/* Read once a process: the files cost 40-50 microseconds a plan, more than the whole inspection
 * of a matrix of a few hundred rows. */
int64_t last_level_cache() {
  static const int64_t bytes = [] {
    const int64_t l3 = cache_bytes(3);
    return l3 > 0 ? l3 : cache_bytes(2);
  }();
  return bytes;
}

int64_t l2_cache() {
  static const int64_t bytes = cache_bytes(2);
  return bytes;
}

int inspect_csr(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t column_stride,
                spl_csr_profile *out) {
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  std::memset(out, 0, sizeof *out);
  if (m < 0 || !monotone_offsets(n, offs))
    return SPL_ERR_BAD_INPUT;
  const int64_t entries = static_cast<int64_t>(offs[n]) - offs[0];
  if (entries > 0 && cols == nullptr)
    return SPL_ERR_BAD_INPUT;
  Inspection in{n, m, offs, cols, 0, std::max<int64_t>(column_stride, 1), {}, {}};
  const double mean = n > 0 ? static_cast<double>(entries) / static_cast<double>(n) : 0.0;
  /* Scattered: farther from the diagonal than a band a few rows wide could reach. */
  in.near = static_cast<int64_t>(64 + 4 * std::ceil(mean));
  /* The chunks depend on the matrix only, so the merged sums do not depend on the threads. */
  const int64_t chunks = std::max<int64_t>(1, (entries + n) / kWorkPerChunk);
  try {
    in.bounds.resize(static_cast<size_t>(chunks) + 1);
    spl_balance_rows_i32(offs, n, chunks, in.bounds.data());
    in.parts.resize(static_cast<size_t>(chunks));
  } catch (...) {
    return SPL_ERR_ALLOC;
  }
  if (chunks <= 1 || spl_num_threads() == 1)
    Inspection::run(&in, 0, chunks);
  else
    spl_parallel_for(0, chunks, 1, &Inspection::run, &in);

  Partial all;
  for (const Partial &p : in.parts) {
    all.empty += p.empty;
    all.min_len = std::min(all.min_len, p.min_len);
    all.max_len = std::max(all.max_len, p.max_len);
    all.changes += p.changes;
    all.sum_sq += p.sum_sq;
    for (int b = 0; b < SPL_CSR_LENGTH_BUCKETS; ++b)
      all.buckets[b] += p.buckets[b];
    all.bandwidth = std::max(all.bandwidth, p.bandwidth);
    all.scattered += p.scattered;
    all.sampled += p.sampled;
  }
  out->rows = n;
  out->cols = m;
  out->entries = entries;
  out->empty_rows = all.empty;
  out->min_row = n > 0 ? all.min_len : 0;
  out->max_row = all.max_len;
  out->mean_row = mean;
  if (n > 0 && mean > 0) {
    const long double variance = static_cast<long double>(all.sum_sq) / n - static_cast<long double>(mean) * mean;
    out->cv_row = static_cast<double>(std::sqrt(std::max<long double>(variance, 0)) / mean);
  }
  out->length_changes = n > 1 ? static_cast<double>(all.changes) / static_cast<double>(n - 1) : 0.0;
  std::memcpy(out->length_buckets, all.buckets, sizeof all.buckets);
  out->bandwidth = all.bandwidth;
  out->near = in.near;
  out->scattered = all.sampled > 0 ? static_cast<double>(all.scattered) / static_cast<double>(all.sampled) : 0.0;
  /* An SpMV's compulsory traffic: values, columns, offsets, x and y once each. */
  out->spmv_bytes_f64 = entries * (8 + 4) + (n + 1) * 4 + m * 8 + n * 8;
  out->spmv_bytes_f32 = entries * (4 + 4) + (n + 1) * 4 + m * 4 + n * 4;
  out->llc_bytes = last_level_cache();
  out->l2_bytes = l2_cache();
  out->threads = spl_num_threads();
  return SPL_OK;
}

} // namespace spl_rt

int spl_csr_inspect(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, spl_csr_profile *out) {
  return spl_rt::inspect_csr(n, m, offs, cols, 1, out);
}
