// Loops whose streams start on a 64-byte line after a scalar head (loopir/AlignStreams, kernels
// in tests/e2e/align_streams.spl): on arrays at every element offset from a line, lengths on
// both sides of the head's threshold (512) and of a vector, increments 1 (the head), 2 and -1
// (one loop), on 1 to 3 threads, each result against a double reference, and nothing outside
// the elements a call may write changed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "align_streams.h"
#include "spl_runtime.h"

namespace {

const int64_t kLengths[] = {0, 1, 15, 511, 512, 513, 1000, 4099, 100003};
constexpr int64_t kPad = 64;  // elements around each array, holding a sentinel

/// An array of `count` elements starting `offset` elements past a 64-byte line, with kPad
/// sentinel elements on each side.
template <typename T> struct Placed {
  std::vector<T> storage;
  T *data = nullptr;
  int64_t count = 0;
  Placed(int64_t count_, int64_t offset, T sentinel) : count(count_) {
    storage.assign(static_cast<size_t>(count + 2 * kPad + 64), sentinel);
    uintptr_t p = reinterpret_cast<uintptr_t>(storage.data() + kPad);
    uintptr_t line = (p + 63) & ~uintptr_t{63};
    data = reinterpret_cast<T *>(line) + offset;
  }
  /// Element k of a vector of n with increment inc (Fortran's: a negative one from the end).
  T &at(int64_t n, int64_t inc, int64_t k) { return data[(inc < 0 ? (1 - n) * inc : 0) + k * inc]; }
  /// Is every element outside [data, data + count) still the sentinel?
  bool outsideUntouched(T sentinel) const {
    for (const T *q = storage.data(); q < storage.data() + storage.size(); ++q)
      if ((q < data || q >= data + count) && std::memcmp(q, &sentinel, sizeof(T)) != 0) return false;
    return true;
  }
};

double value(int64_t seed, int64_t k) { return static_cast<double>((k * 2654435761u + seed * 40503u) % 2001) / 1000.0 - 1.0; }

TEST(AlignStreams, DotOnEveryOffsetAndIncrement) {
  for (int threads : {1, 2, 3}) {
    spl_set_num_threads(threads);
    for (int64_t n : kLengths)
      for (int64_t inc : {1, 2, -1})
        for (int64_t offset = 0; offset < 8; ++offset) {
          const int64_t span = n == 0 ? 0 : 1 + (n - 1) * std::abs(inc);
          Placed<double> x(span, offset, 7.0), y(span, (offset * 3) % 8, 7.0);
          double want = 0, scale = 0;
          for (int64_t k = 0; k < n; ++k) {
            x.at(n, inc, k) = value(1, k);
            y.at(n, inc, k) = value(2, k);
            want += value(1, k) * value(2, k);
            scale += std::fabs(value(1, k) * value(2, k));
          }
          double got = -1;
          ASSERT_EQ(spl_align_ddot(n, x.data, inc, y.data, inc, &got), SPL_OK);
          EXPECT_NEAR(got, want, 4e-16 * (static_cast<double>(n) + 2) * scale)
              << "n " << n << " inc " << inc << " offset " << offset << " threads " << threads;
        }
  }
  spl_set_num_threads(0);
}

TEST(AlignStreams, InPlaceAxpyOnEveryOffsetAndIncrement) {
  const float alpha = 0.75f;
  for (int threads : {1, 2, 3}) {
    spl_set_num_threads(threads);
    for (int64_t n : kLengths)
      for (int64_t inc : {1, 2, -1})
        for (int64_t offset = 0; offset < 16; offset += (n > 4099 ? 5 : 1)) {
          const int64_t span = n == 0 ? 0 : 1 + (n - 1) * std::abs(inc);
          Placed<float> x(span, (offset + 7) % 16, 5.0f), y(span, offset, 5.0f);
          for (int64_t k = 0; k < span; ++k) y.data[k] = 3.0f;  // between the strides: untouched
          for (int64_t k = 0; k < n; ++k) {
            x.at(n, inc, k) = static_cast<float>(value(3, k));
            y.at(n, inc, k) = static_cast<float>(value(4, k));
          }
          ASSERT_EQ(spl_align_saxpy(n, alpha, x.data, inc, y.data, inc), SPL_OK);
          for (int64_t k = 0; k < n; ++k) {
            double want = alpha * static_cast<double>(static_cast<float>(value(3, k))) + static_cast<float>(value(4, k));
            ASSERT_NEAR(y.at(n, inc, k), want, 2.5e-7 * (std::fabs(want) + 1))
                << "element " << k << " of " << n << " inc " << inc << " offset " << offset << " threads " << threads;
          }
          int64_t between = 0;
          for (int64_t k = 0; k < span; ++k) between += std::abs(inc) > 1 && k % std::abs(inc) != 0 && y.data[k] != 3.0f;
          EXPECT_EQ(between, 0) << "elements between the strides written";
          EXPECT_TRUE(y.outsideUntouched(5.0f)) << "n " << n << " inc " << inc << " offset " << offset;
        }
  }
  spl_set_num_threads(0);
}

TEST(AlignStreams, ParallelMapOnEveryOffset) {
  for (int threads : {1, 2, 3}) {
    spl_set_num_threads(threads);
    for (int64_t n : kLengths)
      for (int64_t offset = 0; offset < 8; ++offset) {
        Placed<double> x(n, (offset + 5) % 8, 9.0), out(n, offset, 9.0);
        for (int64_t k = 0; k < n; ++k) x.data[k] = value(5, k);
        ASSERT_EQ(spl_align_scaled(n, -1.5, x.data, out.data), SPL_OK);
        for (int64_t k = 0; k < n; ++k)
          ASSERT_EQ(out.data[k], -1.5 * value(5, k)) << "element " << k << " of " << n << " offset " << offset << " threads " << threads;
        EXPECT_TRUE(out.outsideUntouched(9.0)) << "n " << n << " offset " << offset;
      }
  }
  spl_set_num_threads(0);
}

}  // namespace
