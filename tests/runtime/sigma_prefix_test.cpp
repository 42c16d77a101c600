// sigma_prefix_test.cpp: spl_sigma_prefix_* against a plain sequential reference, on the
// sequential path (small n) and the parallel two-pass path (n > 1 << 16, several threads).
#include "spl_runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

class SigmaPrefix : public ::testing::Test {
protected:
  void TearDown() override { spl_set_num_threads(0); }
};

template <typename Len> std::vector<int64_t> reference(const std::vector<Len> &lens) {
  std::vector<int64_t> out(lens.size() + 1, 0);
  for (size_t i = 0; i < lens.size(); ++i)
    out[i + 1] = out[i] + static_cast<int64_t>(lens[i]);
  return out;
}

int prefix(const std::vector<int32_t> &lens, std::vector<int64_t> &out) {
  return spl_sigma_prefix_i32(lens.data(), static_cast<int64_t>(lens.size()), out.data());
}
int prefix(const std::vector<int64_t> &lens, std::vector<int64_t> &out) {
  return spl_sigma_prefix_i64(lens.data(), static_cast<int64_t>(lens.size()), out.data());
}

template <typename Len> std::vector<Len> random_lengths(std::mt19937_64 &rng, size_t n, Len max) {
  std::vector<Len> lens(n);
  for (Len &len : lens)
    len = std::uniform_int_distribution<Len>(0, max)(rng);
  return lens;
}

template <typename Len> void check_random(uint64_t seed, std::initializer_list<size_t> sizes) {
  std::mt19937_64 rng(seed);
  for (int threads : {1, 2, 7}) {
    spl_set_num_threads(threads);
    for (size_t n : sizes) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " threads " << threads << " n " << n);
      auto lens = random_lengths<Len>(rng, n, Len(1000));
      std::vector<int64_t> out(n + 1, -1);
      ASSERT_EQ(prefix(lens, out), SPL_OK);
      ASSERT_EQ(out, reference(lens));
    }
  }
}

TEST_F(SigmaPrefix, EmptyWritesZero) {
  int64_t out = -1;
  EXPECT_EQ(spl_sigma_prefix_i32(nullptr, 0, &out), SPL_OK);
  EXPECT_EQ(out, 0);
  out = -1;
  EXPECT_EQ(spl_sigma_prefix_i64(nullptr, 0, &out), SPL_OK);
  EXPECT_EQ(out, 0);
}

TEST_F(SigmaPrefix, SingleLength) {
  int32_t len32 = 42;
  int64_t len64 = int64_t(1) << 40;
  int64_t out[2] = {-1, -1};
  EXPECT_EQ(spl_sigma_prefix_i32(&len32, 1, out), SPL_OK);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 42);
  EXPECT_EQ(spl_sigma_prefix_i64(&len64, 1, out), SPL_OK);
  EXPECT_EQ(out[1], int64_t(1) << 40);
}

TEST_F(SigmaPrefix, RandomSmallI32) { check_random<int32_t>(1, {2, 3, 17, 1000, 65535}); }
TEST_F(SigmaPrefix, RandomSmallI64) { check_random<int64_t>(2, {2, 5, 4096}); }

TEST_F(SigmaPrefix, RandomLargeI32UsesParallelPath) {
  check_random<int32_t>(3, {(1 << 16) + 1, 300007, 1 << 21});
}
TEST_F(SigmaPrefix, RandomLargeI64UsesParallelPath) {
  check_random<int64_t>(4, {(1 << 16) + 3, 1000003});
}

TEST_F(SigmaPrefix, SumsBeyondInt32) {
  spl_set_num_threads(4);
  std::vector<int32_t> lens(1 << 18, 1 << 30);
  std::vector<int64_t> out(lens.size() + 1);
  ASSERT_EQ(prefix(lens, out), SPL_OK);
  EXPECT_EQ(out.back(), int64_t(1 << 18) * (int64_t(1) << 30));
}

TEST_F(SigmaPrefix, NegativeCountIsBadInput) {
  int64_t out = 0;
  EXPECT_EQ(spl_sigma_prefix_i32(nullptr, -1, &out), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sigma_prefix_i64(nullptr, -5, &out), SPL_ERR_BAD_INPUT);
}

TEST_F(SigmaPrefix, NegativeLengthIsBadInput) {
  for (int threads : {1, 4}) {
    spl_set_num_threads(threads);
    for (size_t n : {size_t(10), size_t(1) << 17}) {
      for (size_t where : {size_t(0), n / 2, n - 1}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " n " << n << " at " << where);
        std::vector<int32_t> lens32(n, 3);
        std::vector<int64_t> lens64(n, 3);
        lens32[where] = -1;
        lens64[where] = -100;
        std::vector<int64_t> out(n + 1);
        EXPECT_EQ(prefix(lens32, out), SPL_ERR_BAD_INPUT);
        EXPECT_EQ(prefix(lens64, out), SPL_ERR_BAD_INPUT);
      }
    }
  }
}

TEST_F(SigmaPrefix, NullPointersAreBadInput) {
  int32_t len = 1;
  int64_t out[2];
  EXPECT_EQ(spl_sigma_prefix_i32(nullptr, 1, out), SPL_ERR_BAD_INPUT);
  EXPECT_EQ(spl_sigma_prefix_i32(&len, 1, nullptr), SPL_ERR_BAD_INPUT);
}

TEST_F(SigmaPrefix, CalledFromInsideAParallelLoop) {
  /* Kernels may compute offsets inside a parallel region; the nested call must run inline. */
  spl_set_num_threads(4);
  struct State {
    std::vector<int32_t> lens;
    std::vector<std::vector<int64_t>> outs;
    std::vector<int> status;
  } state;
  state.lens.assign((1 << 17) + 5, 2);
  state.outs.assign(8, std::vector<int64_t>(state.lens.size() + 1));
  state.status.assign(8, -1);
  spl_parallel_chunks(8, [](void *p, int64_t c, int64_t) {
    auto &s = *static_cast<State *>(p);
    s.status[c] = spl_sigma_prefix_i32(s.lens.data(), static_cast<int64_t>(s.lens.size()),
                                       s.outs[c].data());
  }, &state);
  auto expected = reference(state.lens);
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(state.status[c], SPL_OK);
    EXPECT_EQ(state.outs[c], expected) << "chunk " << c;
  }
}

} // namespace
