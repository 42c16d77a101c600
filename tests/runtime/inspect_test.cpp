// inspect_test.cpp: spl_csr_inspect (what a plan reads of a matrix, issue 25) against a
// reference computed here row by row: every field on random matrices of every shape (empty
// rows, skewed rows, 1 x N, N x 1, nnz = 0, no rows, rectangular), with offsets that do not
// start at 0, and the same result on 1, 2 and 4 threads for a matrix of many row chunks; a
// plan's inspection (spl_rt::inspect_csr reading the columns of a sample of chunks): exact row
// statistics, the columns' share estimated; then the cases a plan tells apart (a band of equal
// rows against random lengths), and bad input.
#include "spl_runtime.h"
#include "spl_matrix.h"
#include "csr_shapes.h"
#include "inspect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

class Inspect : public ::testing::Test {
 protected:
  void TearDown() override { spl_set_num_threads(0); }
};

using spl_test::Csr32;
using spl_test::narrow;

Csr32 fromLengths(const std::vector<int32_t> &lengths, int64_t cols, int band) {
  Csr32 c;
  c.rows = static_cast<int64_t>(lengths.size());
  c.columns = cols;
  c.offs.push_back(0);
  for (size_t i = 0; i < lengths.size(); ++i) {
    for (int32_t k = 0; k < lengths[i]; ++k)
      c.cols.push_back(static_cast<int32_t>(std::min<int64_t>(cols - 1, std::max<int64_t>(0, static_cast<int64_t>(i) - band + k))));
    c.offs.push_back(static_cast<int32_t>(c.cols.size()));
  }
  c.cols.push_back(0);
  return c;
}

/// Every field of the profile, computed the obvious way.
void expectAsReference(const Csr32 &c) {
  spl_csr_profile p;
  ASSERT_EQ(spl_csr_inspect(c.rows, c.columns, c.offs.data(), c.cols.data(), &p), SPL_OK);
  const int64_t n = c.rows, m = c.columns, base = c.offs[0];
  const int64_t entries = c.offs[static_cast<size_t>(n)] - base;
  EXPECT_EQ(p.rows, n);
  EXPECT_EQ(p.cols, m);
  EXPECT_EQ(p.entries, entries);
  int64_t empty = 0, lo = n > 0 ? INT64_MAX : 0, hi = 0, changes = 0, band = 0, scattered = 0;
  double sumSq = 0;
  std::vector<int64_t> buckets(SPL_CSR_LENGTH_BUCKETS, 0);
  const double mean = n > 0 ? static_cast<double>(entries) / n : 0;
  const int64_t near = 64 + 4 * static_cast<int64_t>(std::ceil(mean));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = c.offs[static_cast<size_t>(i + 1)] - c.offs[static_cast<size_t>(i)];
    empty += len == 0;
    lo = std::min(lo, len);
    hi = std::max(hi, len);
    sumSq += static_cast<double>(len) * len;
    int b = 0;
    while (b + 1 < SPL_CSR_LENGTH_BUCKETS && (int64_t(1) << b) <= len) ++b;  // 0 | [1,2) -> 1 | [2,4) -> 2 ...
    buckets[static_cast<size_t>(b)]++;
    if (i > 0 && len != c.offs[static_cast<size_t>(i)] - c.offs[static_cast<size_t>(i - 1)]) ++changes;
    const int64_t diagonal = static_cast<int64_t>(static_cast<long double>(i) * m / n);
    for (int64_t k = c.offs[static_cast<size_t>(i)] - base; k < c.offs[static_cast<size_t>(i + 1)] - base; ++k) {
      const int64_t d = std::llabs(static_cast<int64_t>(c.cols[static_cast<size_t>(k)]) - diagonal);
      band = std::max(band, d);
      scattered += d > near;
    }
  }
  EXPECT_EQ(p.empty_rows, empty);
  EXPECT_EQ(p.min_row, lo);
  EXPECT_EQ(p.max_row, hi);
  EXPECT_DOUBLE_EQ(p.mean_row, mean);
  const double cv = n > 0 && mean > 0 ? std::sqrt(std::max(0.0, sumSq / n - mean * mean)) / mean : 0.0;
  EXPECT_NEAR(p.cv_row, cv, 1e-9 * (1 + cv));
  EXPECT_DOUBLE_EQ(p.length_changes, n > 1 ? static_cast<double>(changes) / (n - 1) : 0.0);
  EXPECT_EQ(std::vector<int64_t>(p.length_buckets, p.length_buckets + SPL_CSR_LENGTH_BUCKETS), buckets);
  EXPECT_EQ(p.bandwidth, band);
  EXPECT_EQ(p.near, near);
  EXPECT_DOUBLE_EQ(p.scattered, entries > 0 ? static_cast<double>(scattered) / entries : 0.0);
  EXPECT_EQ(p.spmv_bytes_f64, entries * 12 + (n + 1) * 4 + m * 8 + n * 8);
  EXPECT_EQ(p.spmv_bytes_f32, entries * 8 + (n + 1) * 4 + m * 4 + n * 4);
  EXPECT_GE(p.llc_bytes, 0);
  EXPECT_EQ(p.l2_bytes, spl_rt::l2_cache());
  EXPECT_EQ(p.threads, spl_num_threads());
}

// sysfs's size of cpu0's cache of `level`, or 0 where it lists none.
static int64_t sysfsCache(int level) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    FILE *f = std::fopen((dir + "/level").c_str(), "r");
    if (!f) continue;
    int listed = 0;
    const bool read = std::fscanf(f, "%d", &listed) == 1;
    std::fclose(f);
    if (!read || listed != level) continue;
    FILE *g = std::fopen((dir + "/size").c_str(), "r");
    if (!g) return 0;
    long long size = 0;
    char unit = 0;
    const int got = std::fscanf(g, "%lld%c", &size, &unit);
    std::fclose(g);
    if (got < 1 || size <= 0) return 0;
    return size * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
  }
  return 0;
}

// The caches a plan weighs (the L2 decides whether gathers are prefetched, the last level where
// BCSR is tried): where sysfs lists one for cpu0, the plans take its size (glibc's sysconf gives
// the whole package's L3 on AMD: 256 MB where sysfs and lscpu say 32 MB on a Zen 3 VM), and no
// L2 exceeds the last-level cache.
TEST(InspectCaches, TheCachesAreReadWhereTheSystemListsThem) {
  const int64_t l2 = spl_rt::l2_cache(), llc = spl_rt::last_level_cache();
  const int64_t sysfsL2 = sysfsCache(2), sysfsL3 = sysfsCache(3);
  if (sysfsL2 > 0)
    EXPECT_EQ(l2, sysfsL2);
  if (sysfsL3 > 0)
    EXPECT_EQ(llc, sysfsL3);
  else if (sysfsL2 > 0 && sysconf(_SC_LEVEL3_CACHE_SIZE) <= 0)
    EXPECT_EQ(llc, sysfsL2);  // no L3 anywhere: the L2 is the last level
  EXPECT_GE(l2, 0);
  if (l2 > 0 && llc > 0)
    EXPECT_LE(l2, llc);
}

TEST_F(Inspect, EveryFieldMatchesTheReference) {
  std::vector<spl_test::RandomShape> shapes = spl_test::randomShapes();
  shapes.push_back({"none", 0, 10, 0.0, SPL_RANDOM_UNIFORM});
  shapes.push_back({"wide", 30, 3000, 0.1, SPL_RANDOM_UNIFORM});
  uint64_t seed = 5;
  for (const spl_test::RandomShape &s : shapes) {
    SCOPED_TRACE(s.name);
    spl_csr m{};
    ASSERT_EQ(spl_random_csr(s.rows, s.cols, s.density, seed++, s.kind, &m), SPL_MATRIX_OK);
    expectAsReference(narrow(m));
    expectAsReference(narrow(m, 7));  // offsets starting at 7
    spl_csr_free(&m);
  }
}

TEST_F(Inspect, TheSameOnEveryThreadCount) {
  spl_csr m{};
  ASSERT_EQ(spl_random_csr(100003, 100003, 0.00004, 17, SPL_RANDOM_EMPTY_ROWS, &m), SPL_MATRIX_OK);
  Csr32 c = narrow(m);
  spl_csr_profile one;
  spl_set_num_threads(1);
  ASSERT_EQ(spl_csr_inspect(c.rows, c.columns, c.offs.data(), c.cols.data(), &one), SPL_OK);
  expectAsReference(c);
  for (int threads : {2, 4}) {
    spl_set_num_threads(threads);
    spl_csr_profile p;
    ASSERT_EQ(spl_csr_inspect(c.rows, c.columns, c.offs.data(), c.cols.data(), &p), SPL_OK);
    p.threads = one.threads;
    EXPECT_EQ(0, std::memcmp(&p, &one, sizeof p)) << threads << " threads";
  }
  spl_csr_free(&m);
}

// A plan reads the columns of one chunk in 8: the row statistics are those of the whole
// inspection, bit for bit; the scattered share is the sample's (a matrix with the same share
// everywhere: close to the whole one's) and the bandwidth at most the whole one's.
TEST_F(Inspect, ASampleOfTheColumnsKeepsTheRowsExact) {
  spl_csr m{};
  ASSERT_EQ(spl_random_csr(400009, 400009, 0.00002, 23, SPL_RANDOM_UNIFORM, &m), SPL_MATRIX_OK);
  Csr32 c = narrow(m);
  spl_csr_profile all, sampled, one;
  ASSERT_EQ(spl_csr_inspect(c.rows, c.columns, c.offs.data(), c.cols.data(), &all), SPL_OK);
  ASSERT_EQ(spl_rt::inspect_csr(c.rows, c.columns, c.offs.data(), c.cols.data(), 1, &one), SPL_OK);
  EXPECT_EQ(0, std::memcmp(&one, &all, sizeof one));
  ASSERT_EQ(spl_rt::inspect_csr(c.rows, c.columns, c.offs.data(), c.cols.data(), 8, &sampled), SPL_OK);
  EXPECT_EQ(sampled.entries, all.entries);
  EXPECT_EQ(sampled.empty_rows, all.empty_rows);
  EXPECT_EQ(sampled.min_row, all.min_row);
  EXPECT_EQ(sampled.max_row, all.max_row);
  EXPECT_EQ(sampled.cv_row, all.cv_row);
  EXPECT_EQ(sampled.length_changes, all.length_changes);
  EXPECT_EQ(0, std::memcmp(sampled.length_buckets, all.length_buckets, sizeof all.length_buckets));
  EXPECT_EQ(sampled.spmv_bytes_f64, all.spmv_bytes_f64);
  EXPECT_LE(sampled.bandwidth, all.bandwidth);
  EXPECT_GT(all.scattered, 0.9);  // uniform columns: nearly all far from the diagonal
  EXPECT_NEAR(sampled.scattered, all.scattered, 0.01);
  // A band: no entry scattered, in the sample or not.
  Csr32 band = fromLengths(std::vector<int32_t>(300000, 5), 300000, 2);
  ASSERT_EQ(spl_rt::inspect_csr(band.rows, band.columns, band.offs.data(), band.cols.data(), 8, &sampled), SPL_OK);
  EXPECT_EQ(sampled.scattered, 0.0);
  EXPECT_EQ(sampled.bandwidth, 2);
  spl_csr_free(&m);
}

// What a plan tells apart: a band whose rows are all 5 long (a stencil's interior) changes
// length nowhere; lengths drawn at random from 1..41 change at almost every row.
TEST_F(Inspect, EqualRowsAgainstRandomLengths) {
  spl_csr_profile p;
  Csr32 band = fromLengths(std::vector<int32_t>(5000, 5), 5000, 2);
  ASSERT_EQ(spl_csr_inspect(band.rows, band.columns, band.offs.data(), band.cols.data(), &p), SPL_OK);
  EXPECT_EQ(p.length_changes, 0.0);
  EXPECT_EQ(p.cv_row, 0.0);
  EXPECT_EQ(p.length_buckets[3], 5000);  // 5 in [4, 8)
  EXPECT_LE(p.bandwidth, 2);
  EXPECT_EQ(p.scattered, 0.0);
  std::vector<int32_t> lengths;
  uint64_t state = 12345;
  for (int i = 0; i < 5000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    lengths.push_back(1 + static_cast<int32_t>((state >> 33) % 41));
  }
  Csr32 random = fromLengths(lengths, 5000, 20);
  ASSERT_EQ(spl_csr_inspect(random.rows, random.columns, random.offs.data(), random.cols.data(), &p), SPL_OK);
  EXPECT_GT(p.length_changes, 0.9);
  EXPECT_GT(p.cv_row, 0.5);
  EXPECT_EQ(p.min_row, 1);
  EXPECT_EQ(p.max_row, 41);
}

TEST_F(Inspect, RejectsBadInputAndZeroesTheProfile) {
  const int32_t good[] = {0, 1, 2, 3}, decreasing[] = {0, 2, 1, 3}, cols[] = {0, 1, 2};
  spl_csr_profile p;
  p.rows = 99;
  EXPECT_EQ(spl_csr_inspect(3, 3, decreasing, cols, &p), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(p.rows, 0);
  EXPECT_EQ(spl_csr_inspect(-1, 3, good, cols, &p), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_inspect(3, -1, good, cols, &p), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_inspect(3, 3, nullptr, cols, &p), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_inspect(3, 3, good, nullptr, &p), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_csr_inspect(3, 3, good, cols, nullptr), SPL_ERR_BAD_INPUT);
  const int32_t noEntries[] = {4, 4, 4};
  ASSERT_EQ(spl_csr_inspect(2, 3, noEntries, nullptr, &p), SPL_OK);  // no entries: no columns needed
  EXPECT_EQ(p.empty_rows, 2);
  EXPECT_EQ(p.length_buckets[0], 2);
  // The offsets are checked a block of 4096 at a time: a decrease at either side of a block's
  // edge, and at the very last offset, is found.
  for (int64_t at : {int64_t(4095), int64_t(4096), int64_t(4097), int64_t(10000)}) {
    std::vector<int32_t> offs(10001), many(10000, 0);
    for (int64_t i = 0; i <= 10000; ++i) offs[static_cast<size_t>(i)] = static_cast<int32_t>(i);
    offs[static_cast<size_t>(at)] -= 2;
    EXPECT_EQ(spl_csr_inspect(10000, 10000, offs.data(), many.data(), &p), SPL_ERR_BAD_INPUT) << at;
  }
}

// A plan's inspection of rows that vary from chunk to chunk: chunks of short rows (their
// histogram counted by powers of two) beside chunks with rows of 256 entries and more (a
// histogram of increments), empty rows, and lengths that change or not at the chunks' edges,
// every field as the reference gives it, on one thread and two.
TEST_F(Inspect, ChunksOfShortAndLongRowsMatchTheReference) {
  std::vector<int32_t> lengths;
  uint64_t state = 99;
  for (int64_t i = 0; i < 300000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t r = state >> 33;
    int32_t len = static_cast<int32_t>(r % 9);  // 0..8, empty rows among them
    if ((i / 20000) % 3 == 1 && r % 997 == 0) len = 255 + static_cast<int32_t>(r % 3000);  // some chunks' long rows
    if ((i / 50000) % 2 == 0) len = 5;  // runs of one length across chunk edges
    lengths.push_back(len);
  }
  Csr32 c = fromLengths(lengths, 300000, 4);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    spl_set_num_threads(threads);
    expectAsReference(c);
  }
}

}  // namespace
