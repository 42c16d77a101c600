// End to end: kernels transformed by schedule blocks (split, reorder, fuse, parallelize with
// the no_races and atomics race strategies, unroll, vectorize) compute what the unscheduled
// programs compute.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "e2e_support.h"
#include "schedules.h"
#include "spl_runtime.h"

namespace {

std::vector<float> randomF(int64_t n, uint64_t seed) { return spl_e2e::randomVectorF(n, seed); }

TEST(Schedules, SplitParallelUnrollGemv) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {1, 1}, {15, 7}, {16, 16}, {17, 33}, {1000, 300}}) {
    std::vector<float> a = randomF(n * m, 1), x = randomF(m, 2), y(static_cast<size_t>(n) + 1, -1.0f);
    std::vector<double> want(static_cast<size_t>(n) + 1, 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) want[i] += static_cast<double>(a[i * m + j]) * x[j];
    ASSERT_EQ(spl_sched_gemv(n, m, a.data(), x.data(), y.data()), SPL_OK);
    EXPECT_LT(spl_e2e::relError(y.data(), want.data(), n), spl_e2e::kF32Tolerance) << n << "x" << m;
  }
}

TEST(Schedules, ReorderAndSplitAdd) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 9}, {10, 3}, {64, 65}}) {
    std::vector<float> a = randomF(n * m, 3), b = randomF(n * m, 4), c(static_cast<size_t>(n * m) + 1, -1.0f);
    ASSERT_EQ(spl_sched_add2(n, m, a.data(), b.data(), c.data()), SPL_OK);
    for (int64_t k = 0; k < n * m; ++k) ASSERT_FLOAT_EQ(c[k], a[k] + b[k]) << k;
  }
}

TEST(Schedules, FusedTuple) {
  std::vector<float> x = randomF(37, 5), y0(38, -1.0f), y1(38, -1.0f);
  ASSERT_EQ(spl_sched_twice(37, x.data(), y0.data(), y1.data()), SPL_OK);
  for (int k = 0; k < 37; ++k) {
    ASSERT_FLOAT_EQ(y0[k], x[k] * 2.0f);
    ASSERT_FLOAT_EQ(y1[k], x[k] + 1.0f);
  }
}

// Fused through isl: the count and the scan of dense2csr in one loop, and loops of different
// lengths (the shorter body guarded), against the unfused definitions computed here.
TEST(Schedules, IslFusedCountScanAndRaggedLoops) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {1, 1}, {5, 0}, {7, 9}, {300, 41}}) {
    std::vector<float> dense = randomF(n * m, 11);
    for (size_t k = 0; k < dense.size(); ++k)
      if (k % 3 != 0) dense[k] = 0.0f;  // some zeros, some empty rows when m is small
    std::vector<int32_t> offs(static_cast<size_t>(n) + 2, -1), want(static_cast<size_t>(n) + 1, 0);
    for (int64_t i = 0; i < n; ++i) {
      int32_t c = 0;
      for (int64_t j = 0; j < m; ++j) c += dense[i * m + j] != 0.0f;
      want[i + 1] = want[i] + c;
    }
    ASSERT_EQ(spl_sched_fuse_count_scan(n, m, dense.data(), offs.data()), SPL_OK);
    for (int64_t i = 0; i <= n; ++i) ASSERT_EQ(offs[i], want[i]) << n << "x" << m << " row " << i;
    EXPECT_EQ(offs[n + 1], -1) << "written past the offsets";
  }
  for (int64_t n : {0, 1, 2, 33}) {
    std::vector<float> x = randomF(n, 12), y = randomF(n + 2, 13), a(static_cast<size_t>(n) + 1, -1.0f),
                       b(static_cast<size_t>(n) + 3, -1.0f);
    ASSERT_EQ(spl_sched_fuse_ragged(n, x.data(), y.data(), a.data(), b.data()), SPL_OK);
    for (int64_t k = 0; k < n; ++k) ASSERT_FLOAT_EQ(a[k], x[k] * 2.0f) << k;
    for (int64_t k = 0; k < n + 2; ++k) ASSERT_FLOAT_EQ(b[k], y[k] + 1.0f) << k;
    EXPECT_EQ(a[n], -1.0f);
    EXPECT_EQ(b[n + 2], -1.0f);
    // The longer loop first: the rest of the range runs the first body only.
    std::vector<float> c(static_cast<size_t>(n) + 3, -1.0f), d(static_cast<size_t>(n) + 1, -1.0f);
    ASSERT_EQ(spl_sched_fuse_ragged_first(n, x.data(), y.data(), c.data(), d.data()), SPL_OK);
    for (int64_t k = 0; k < n + 2; ++k) ASSERT_FLOAT_EQ(c[k], y[k] + 1.0f) << k;
    for (int64_t k = 0; k < n; ++k) ASSERT_FLOAT_EQ(d[k], x[k] * 2.0f) << k;
    EXPECT_EQ(c[n + 2], -1.0f);
    EXPECT_EQ(d[n], -1.0f);
  }
}

// The CSC product scatters each column into y: with the columns on the thread pool the adds
// race, and the atomics strategy must keep every one of them (compared with a double reference
// on the real matrices read by columns, at 1 and 2 threads).
TEST(Schedules, AtomicScatterCsc) {
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) {
    spl_e2e::ScatterCase c(nm.m);
    for (int threads : {1, 2}) c.run(spl_sched_csc, nm.m, threads, nm.name);
  }
  spl_set_num_threads(0);
}

TEST(Schedules, AtomicDotAndColumnMax) {
  for (int64_t n : {0, 1, 7, 1000, 100000}) {
    std::vector<double> x(static_cast<size_t>(n) + 1), y(static_cast<size_t>(n) + 1);
    spl_random_vector(1, n, x.data());
    spl_random_vector(2, n, y.data());
    double want = 0, scale = 0;
    for (int64_t k = 0; k < n; ++k) want += x[k] * y[k], scale += std::fabs(x[k] * y[k]);
    double got = -7;
    ASSERT_EQ(spl_sched_dot(n, x.data(), y.data(), &got), SPL_OK);
    EXPECT_LE(std::fabs(got - want), 1e-12 * (scale + 1e-300)) << n;
  }
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 1}, {5, 4}, {3000, 7}}) {
    std::vector<int32_t> a(static_cast<size_t>(n * m) + 1);
    for (int64_t k = 0; k < n * m; ++k) a[k] = static_cast<int32_t>((k * 2654435761u) % 100003) - 50000;
    std::vector<int32_t> out(static_cast<size_t>(m) + 1, 7);
    ASSERT_EQ(spl_sched_colmax(n, m, a.data(), out.data()), SPL_OK);
    for (int64_t i = 0; i < m; ++i) {
      int32_t want = INT32_MIN;
      for (int64_t k = 0; k < n; ++k) want = std::max(want, a[k * m + i]);
      ASSERT_EQ(out[i], want) << n << "x" << m << " column " << i;
    }
    EXPECT_EQ(out[m], 7);
  }
}

TEST(Schedules, PrecomputedLetMatchesReference) {
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) {
    const spl_csr &a = nm.m;
    spl_csr_f32 a32;  // for its int32 offsets
    ASSERT_EQ(spl_csr_to_f32(&a, &a32), 0);
    std::vector<double> x(static_cast<size_t>(a.cols) + 1), t(x.size()), want(static_cast<size_t>(a.rows) + 1, 0.0),
        scale(want.size(), 0.0);
    spl_random_vector(4, a.cols, x.data());
    for (int64_t j = 0; j < a.cols; ++j) t[j] = x[j] * x[j] + 1.0;
    for (int64_t i = 0; i < a.rows; ++i)
      for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) {
        want[i] += a.vals[p] * t[a.cols_idx[p]];
        scale[i] += std::fabs(a.vals[p] * t[a.cols_idx[p]]);
      }
    std::vector<double> y(static_cast<size_t>(a.rows) + 1, -7.0);
    ASSERT_EQ(spl_sched_sq(a.rows, a.cols, a32.offs, a.vals, a.cols_idx, x.data(), y.data()), SPL_OK);
    for (int64_t i = 0; i < a.rows; ++i) ASSERT_LE(std::fabs(y[i] - want[i]), 1e-13 * (scale[i] + 1e-300)) << nm.name << " row " << i;
    EXPECT_EQ(y[a.rows], -7.0);
    spl_csr_f32_free(&a32);
  }
}

TEST(Schedules, IslTiledSpmmMatchesReference) {
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) {
    const spl_csr &a = nm.m;
    spl_csr_f32 a32;  // for its int32 offsets
    ASSERT_EQ(spl_csr_to_f32(&a, &a32), 0);
    for (int64_t k : {1, 5, 8, 37}) {
      std::vector<double> bm(static_cast<size_t>(a.cols * k) + 1), want(static_cast<size_t>(a.rows * k) + 1, 0.0),
          scale(want.size(), 0.0);
      spl_random_vector(6, a.cols * k, bm.data());
      for (int64_t i = 0; i < a.rows; ++i)
        for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p)
          for (int64_t l = 0; l < k; ++l) {
            double v = a.vals[p] * bm[a.cols_idx[p] * k + l];
            want[i * k + l] += v;
            scale[i * k + l] += std::fabs(v);
          }
      std::vector<double> c(static_cast<size_t>(a.rows * k) + 1, -7.0);
      ASSERT_EQ(spl_sched_tile_spmm(a.rows, a.cols, k, a32.offs, a.vals, a.cols_idx, bm.data(), c.data()), SPL_OK);
      for (int64_t e = 0; e < a.rows * k; ++e)
        ASSERT_LE(std::fabs(c[e] - want[e]), 1e-13 * (scale[e] + 1e-300)) << nm.name << " k " << k << " entry " << e;
      EXPECT_EQ(c[a.rows * k], -7.0);
    }
    spl_csr_f32_free(&a32);
  }
}

TEST(Schedules, IslTiledBcsrSumAndOrderedFoldOverJoin) {
  // Random BCSR: block rows with 0 .. 6 blocks (some empty), b = 1, 2, 3 (tiles of 2 x 3 leave
  // partial tiles).
  for (int64_t b : {1, 2, 3}) {
    const int64_t nb = 23, mb = 9;
    std::vector<int32_t> offs = {0}, cols;
    uint64_t r = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(b);
    auto next = [&r]() { return (r = r * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    for (int64_t i = 0; i < nb; ++i) {
      int64_t cnt = static_cast<int64_t>(next() % 7);
      for (int64_t q = 0; q < cnt; ++q) cols.push_back(static_cast<int32_t>(next() % mb));
      offs.push_back(static_cast<int32_t>(cols.size()));
    }
    std::vector<double> blocks(cols.size() * b * b + 1), x(static_cast<size_t>(mb * b) + 1);
    spl_random_vector(7, static_cast<int64_t>(cols.size() * b * b), blocks.data());
    spl_random_vector(8, mb * b, x.data());
    std::vector<double> want(static_cast<size_t>(nb * b), 0.0), y(static_cast<size_t>(nb * b) + 1, -7.0);
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t p = offs[i]; p < offs[i + 1]; ++p)
        for (int64_t rr = 0; rr < b; ++rr)
          for (int64_t cc = 0; cc < b; ++cc) want[i * b + rr] += blocks[(p * b + rr) * b + cc] * x[cols[p] * b + cc];
    ASSERT_EQ(spl_sched_tile_bcsr(nb, mb, b, offs.data(), blocks.data(), cols.data(), x.data(), y.data()), SPL_OK);
    for (int64_t e = 0; e < nb * b; ++e) ASSERT_NEAR(y[e], want[e], 1e-12 * (1 + std::fabs(want[e]))) << "b " << b << " row " << e;
    EXPECT_EQ(y[nb * b], -7.0);
  }
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 1}, {7, 5}, {301, 17}}) {
    std::vector<double> a(static_cast<size_t>(n * m) + 1);
    spl_random_vector(9, n * m, a.data());
    double sum = 0, scale = 0, horner = 0;
    for (int64_t e = 0; e < n * m; ++e) sum += a[e], scale += std::fabs(a[e]), horner = horner * 0.5 + a[e];
    for (int threads : {1, 2}) {
      spl_set_num_threads(threads);
      double got = -7;
      ASSERT_EQ(spl_sched_tile_sum(n, m, a.data(), &got), SPL_OK);
      EXPECT_LE(std::fabs(got - sum), 1e-13 * (scale + 1e-300)) << n << "x" << m;
      ASSERT_EQ(spl_sched_fold_join(n, m, a.data(), &got), SPL_OK);
      EXPECT_NEAR(got, horner, 1e-12 * (1 + std::fabs(horner))) << n << "x" << m << " threads " << threads;
    }
  }
  spl_set_num_threads(0);
}

}  // namespace

namespace {

/// A position-split kernel against the double reference of row sums (or row maxima from
/// `init`), on the real and random matrices (empty rows, skewed rows, 1xN, Nx1, nnz = 0).
template <typename Kernel>
void checkPositionSplit(Kernel kernel, bool max, double init) {
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) {
    const spl_csr &a = nm.m;
    spl_csr_f32 a32;  // for its int32 offsets
    ASSERT_EQ(spl_csr_to_f32(&a, &a32), 0);
    std::vector<double> x(static_cast<size_t>(a.cols) + 1), want(static_cast<size_t>(a.rows) + 1, init),
        scale(want.size(), 0.0);
    spl_random_vector(11, a.cols, x.data());
    for (int64_t i = 0; i < a.rows; ++i)
      for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) {
        double v = a.vals[p] * x[a.cols_idx[p]];
        want[i] = max ? std::max(want[i], v) : want[i] + v;
        scale[i] += std::fabs(v);
      }
    std::vector<double> y(static_cast<size_t>(a.rows) + 1, -7.0);
    ASSERT_EQ(kernel(a.rows, a.cols, a32.offs, a.vals, a.cols_idx, x.data(), y.data()), SPL_OK);
    for (int64_t i = 0; i < a.rows; ++i) {
      if (max) ASSERT_EQ(y[i], want[i]) << nm.name << " row " << i;
      else ASSERT_LE(std::fabs(y[i] - want[i]), 1e-13 * (scale[i] + 1e-300)) << nm.name << " row " << i;
    }
    EXPECT_EQ(y[a.rows], -7.0);
    spl_csr_f32_free(&a32);
  }
}

TEST(Schedules, PositionSplitParallelAtomics) { checkPositionSplit(spl_sched_pos, false, 0.0); }
TEST(Schedules, PositionSplitSerial) { checkPositionSplit(spl_sched_pos_serial, false, 0.0); }
TEST(Schedules, PositionSplitAtomicMax) { checkPositionSplit(spl_sched_pos_max, true, -1.0e300); }

}  // namespace

namespace {

TEST(Schedules, IslTiledTransposeAndAdd) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {5, 0}, {1, 1}, {31, 17}, {32, 16}, {33, 65}, {100, 3}, {257, 129}}) {
    std::vector<float> a = randomF(n * m, 21), b = randomF(n * m, 22);
    std::vector<float> t(static_cast<size_t>(n * m) + 1, -1.0f), c(static_cast<size_t>(n * m) + 1, -1.0f);
    ASSERT_EQ(spl_sched_tile_tr(n, m, a.data(), t.data()), SPL_OK);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) ASSERT_EQ(t[j * n + i], a[i * m + j]) << n << "x" << m << " at " << i << "," << j;
    EXPECT_EQ(t[n * m], -1.0f);
    ASSERT_EQ(spl_sched_tile_add(n, m, a.data(), b.data(), c.data()), SPL_OK);
    for (int64_t k = 0; k < n * m; ++k) ASSERT_FLOAT_EQ(c[k], a[k] + b[k]) << k;
    EXPECT_EQ(c[n * m], -1.0f);
  }
}

}  // namespace

namespace {

TEST(Schedules, IslTiledGemvWithExpandedAccumulator) {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {3, 0}, {1, 1}, {15, 63}, {16, 64}, {17, 65}, {300, 1000}}) {
    std::vector<float> a = randomF(n * m, 31), x = randomF(m, 32), y(static_cast<size_t>(n) + 1, -1.0f);
    std::vector<double> want(static_cast<size_t>(n) + 1, 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) want[i] += static_cast<double>(a[i * m + j]) * x[j];
    ASSERT_EQ(spl_sched_tile_gemv(n, m, a.data(), x.data(), y.data()), SPL_OK);
    EXPECT_LT(spl_e2e::relError(y.data(), want.data(), n), spl_e2e::kF32Tolerance) << n << "x" << m;
    EXPECT_EQ(y[n], -1.0f);
  }
}

}  // namespace

namespace {

TEST(Schedules, IslInterchangedAndTiledTriangle) {
  for (int64_t n : {0, 1, 2, 3, 7, 33, 100}) {
    int64_t size = n * (n + 1) / 2;
    std::vector<float> l = randomF(size, 41);
    for (auto kernel : {spl_sched_tri_reorder, spl_sched_tri_tile}) {
      std::vector<float> out(static_cast<size_t>(size) + 1, -7.0f);
      ASSERT_EQ(kernel(n, l.data(), out.data()), SPL_OK);
      for (int64_t k = 0; k < size; ++k) ASSERT_FLOAT_EQ(out[k], l[k] * 2.0f + 1.0f) << "n = " << n << " at " << k;
      EXPECT_EQ(out[size], -7.0f) << "n = " << n;
    }
  }
}

// specialize's versions (schedules.spl): sizes on both sides of each condition (m = 15/16,
// n = 64/65, m = 255/256 within n <= 64) and the empty ones, against y = A x summed here in
// long double: each row within 1e-14 of the sum of its terms' magnitudes, nothing written past
// the rows.
TEST(Schedules, SpecializedVersionsMatchTheReferenceOnEverySide) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{0, 3},   {3, 0},    {1, 1},    {7, 15},  {7, 16},  {64, 15}, {64, 16},
                                                           {65, 15}, {65, 16},  {64, 255}, {64, 256}, {65, 256}, {1, 1000}, {300, 300}};
  for (auto [n, m] : shapes) {
    std::vector<double> a(static_cast<size_t>(n * m) + 1), x(static_cast<size_t>(m) + 1);
    spl_random_vector(static_cast<uint64_t>(n * 1000 + m), n * m, a.data());
    spl_random_vector(static_cast<uint64_t>(m + 7), m, x.data());
    std::vector<double> y(static_cast<size_t>(n) + 1, -3.0);
    ASSERT_EQ(spl_sched_versions(n, m, a.data(), x.data(), y.data()), SPL_OK);
    for (int64_t i = 0; i < n; ++i) {
      long double want = 0, scale = 0;
      for (int64_t j = 0; j < m; ++j) {
        want += static_cast<long double>(a[i * m + j]) * x[j];
        scale += std::fabs(static_cast<long double>(a[i * m + j]) * x[j]);
      }
      ASSERT_LE(std::fabs(static_cast<double>(y[i] - want)), 1e-14 * static_cast<double>(scale) + 1e-300) << n << "x" << m << " row " << i;
    }
    EXPECT_EQ(y[n], -3.0) << n << "x" << m;
  }
}

// The same on an export writing y in place (schedules.spl): n on both sides of its condition,
// increments of 1, 2 and -1 (Fortran's: y from its end); every element of y between the strides
// and past the last untouched.
TEST(Schedules, SpecializedVersionsUpdateTheirInputInPlace) {
  for (int64_t n : {0, 1, 7, 8, 63, 64, 65, 1000})
    for (int64_t incx : {1, 2, -1})
      for (int64_t incy : {1, 2, -1}) {
        const int64_t ax = std::abs(incx), ay = std::abs(incy), lenx = n * ax + 1, leny = n * ay + 3;
        std::vector<double> x(static_cast<size_t>(lenx)), y(static_cast<size_t>(leny));
        spl_random_vector(static_cast<uint64_t>(n + 11), lenx, x.data());
        spl_random_vector(static_cast<uint64_t>(n + 12), leny, y.data());
        std::vector<double> want = y, scale(y.size(), 0.0);
        const double a = 1.5, b = -0.25;
        for (int64_t i = 0; i < n; ++i) {
          const int64_t ix = incx > 0 ? i * ax : (n - 1 - i) * ax, iy = incy > 0 ? i * ay : (n - 1 - i) * ay;
          want[iy] = a * x[ix] + b * y[iy];
          scale[iy] = std::fabs(a * x[ix]) + std::fabs(b * y[iy]);
        }
        ASSERT_EQ(spl_sched_versions_in_place(n, a, x.data(), incx, b, y.data(), incy), SPL_OK);
        // An element written within an ulp of its terms (a multiply-add or not), any other as it was.
        for (int64_t e = 0; e < leny; ++e)
          ASSERT_LE(std::fabs(y[e] - want[e]), 2.3e-16 * scale[e]) << "n " << n << " incx " << incx << " incy " << incy << " element " << e;
      }
}

}  // namespace
