// thread_pool_test.cpp: spl_parallel_for (and _from_end, _shared) and spl_parallel_chunks cover
// every index exactly once for many ranges, grains and thread counts; each thread runs the chunks
// of its home first; nested and concurrent calls finish.
#include "spl_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

/* Restores the default thread count after each test, so tests do not leak settings. */
class ThreadPool : public ::testing::Test {
protected:
  void TearDown() override { spl_set_num_threads(0); }
};

/* Counts visits per index and records the chunks and threads that ran them. */
struct Coverage {
  int64_t begin = 0;
  std::unique_ptr<std::atomic<int>[]> hits;
  int64_t size = 0;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::atomic<bool> out_of_range{false};

  Coverage(int64_t b, int64_t e) : begin(b), size(std::max<int64_t>(e - b, 0)) {
    hits.reset(new std::atomic<int>[static_cast<size_t>(size) + 1]);
    for (int64_t i = 0; i <= size; ++i)
      hits[i] = 0;
  }

  static void visit(void *self, int64_t lo, int64_t hi) {
    auto &c = *static_cast<Coverage *>(self);
    for (int64_t i = lo; i < hi; ++i) {
      if (i < c.begin || i >= c.begin + c.size) {
        c.out_of_range = true;
        continue;
      }
      c.hits[i - c.begin].fetch_add(1);
    }
    std::lock_guard<std::mutex> lock(c.mutex);
    c.threads.insert(std::this_thread::get_id());
    c.chunks.emplace_back(lo, hi);
  }

  void expect_each_once() const {
    EXPECT_FALSE(out_of_range.load());
    int64_t wrong = 0;
    for (int64_t i = 0; i < size; ++i)
      wrong += hits[i].load() != 1;
    EXPECT_EQ(wrong, 0) << "indices not visited exactly once";
  }
};

TEST_F(ThreadPool, NumThreadsDefaultAndOverride) {
  EXPECT_GE(spl_num_threads(), 1);
  spl_set_num_threads(3);
  EXPECT_EQ(spl_num_threads(), 3);
  spl_set_num_threads(0);
  EXPECT_GE(spl_num_threads(), 1);
  spl_set_num_threads(-5);
  EXPECT_GE(spl_num_threads(), 1);
}

TEST_F(ThreadPool, ParallelForCoversEveryIndexOnce) {
  struct Range {
    int64_t begin, end, grain;
  };
  const Range ranges[] = {
      {0, 0, 1},        {5, 5, 1},       {7, 3, 1},         {0, 1, 1},
      {10, 11, 4},      {0, 100, 1000},  {0, 100, 0},       {-50, 50, 1},
      {0, 1000, 1},     {3, 1003, 7},    {0, 1 << 20, 1024}, {1, (1 << 20) + 13, 1},
      {0, 100000, 33333}, {-1000000, -999000, 10},
  };
  for (int threads : {1, 2, 7}) {
    spl_set_num_threads(threads);
    for (const Range &r : ranges) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " range [" << r.begin << ", "
                                        << r.end << ") grain " << r.grain);
      Coverage cov(r.begin, r.end);
      spl_parallel_for(r.begin, r.end, r.grain, &Coverage::visit, &cov);
      cov.expect_each_once();
      // The same chunks handed out from the last (a loop whose work grows).
      Coverage backwards(r.begin, r.end);
      spl_parallel_for_from_end(r.begin, r.end, r.grain, &Coverage::visit, &backwards);
      backwards.expect_each_once();
      // From one counter, first to last (a loop whose work shrinks): the same chunks. A uniform
      // loop's threads start from homes of their own, and take smaller chunks (as many, or more).
      Coverage shared(r.begin, r.end);
      spl_parallel_for_shared(r.begin, r.end, r.grain, &Coverage::visit, &shared);
      shared.expect_each_once();
      EXPECT_EQ(shared.chunks.size(), backwards.chunks.size());
      EXPECT_GE(cov.chunks.size(), backwards.chunks.size());
      EXPECT_LE(cov.chunks.size(), 4 * std::max<size_t>(backwards.chunks.size(), 1));
      EXPECT_LE(cov.threads.size(), static_cast<size_t>(threads));
      if (r.end <= r.begin) {
        EXPECT_TRUE(cov.chunks.empty());
        continue;
      }
      const int64_t grain = std::max<int64_t>(r.grain, 1);
      for (auto &chunk : cov.chunks) {
        EXPECT_LT(chunk.first, chunk.second);
        if (cov.chunks.size() > 1)
          EXPECT_GE(chunk.second - chunk.first, std::min<int64_t>(grain, r.end - r.begin))
              << "chunk smaller than grain";
      }
      if (threads == 1)
        EXPECT_EQ(cov.chunks.size(), 1u) << "one thread runs the range inline";
      if (r.end - r.begin <= grain)
        EXPECT_EQ(cov.chunks.size(), 1u) << "grain larger than the range runs inline";
    }
  }
}

TEST_F(ThreadPool, LongChunksStartSixteenIterationsApart) {
  /* Chunks of 64 iterations or more (16 above the grain) start a multiple of 16 past begin
   * (loopir/AlignStreams: a loop that starts on a cache line has each chunk start on one). */
  struct Range {
    int64_t begin, end, grain;
    bool aligned;
  };
  const Range ranges[] = {
      {0, 1000003, 1, true}, {5, 16400, 8, true}, {-77, 100000, 500, true},
      {0, 300, 1, false} /* 37 a chunk */, {0, 10000, 1240, false} /* within 16 of the grain */,
  };
  for (int threads : {2, 3, 7}) {
    spl_set_num_threads(threads);
    for (const Range &r : ranges) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " range [" << r.begin << ", " << r.end
                                        << ") grain " << r.grain);
      Coverage cov(r.begin, r.end);
      spl_parallel_for(r.begin, r.end, r.grain, &Coverage::visit, &cov);
      cov.expect_each_once();
      ASSERT_GT(cov.chunks.size(), 1u);
      bool all_aligned = true;
      for (auto &chunk : cov.chunks) {
        EXPECT_GE(chunk.second - chunk.first, r.grain) << "chunk smaller than grain";
        all_aligned = all_aligned && (chunk.first - r.begin) % 16 == 0;
      }
      EXPECT_EQ(all_aligned, r.aligned);
    }
  }
}

TEST_F(ThreadPool, LargeRangeUsesSeveralChunks) {
  spl_set_num_threads(4);
  Coverage cov(0, 1 << 16);
  spl_parallel_for(0, 1 << 16, 16, &Coverage::visit, &cov);
  cov.expect_each_once();
  EXPECT_GE(cov.chunks.size(), 4u);
  EXPECT_LE(cov.chunks.size(), 64u) << "about 16 chunks per thread";
}

TEST_F(ThreadPool, UsesMoreThanOneThreadWhenChunksBlock) {
  /* Each chunk waits until a second thread has entered some chunk, or gives up after a while,
   * so the test does not depend on scheduling luck on a loaded machine. */
  spl_set_num_threads(2);
  struct State {
    std::mutex mutex;
    std::set<std::thread::id> seen;
  } state;
  auto body = [](void *p, int64_t, int64_t) {
    auto &s = *static_cast<State *>(p);
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.seen.insert(std::this_thread::get_id());
    }
    for (int spin = 0; spin < 2000; ++spin) {
      {
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.seen.size() >= 2)
          return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  spl_parallel_chunks(8, body, &state);
  EXPECT_EQ(state.seen.size(), 2u);
}

/* Two threads over eight chunks of one index each: `caller` lists the chunks of the caller's
 * home in the order it claims them, `helper` its helper's. The chunks wait for each other (each
 * gives up after 10 s) so that both threads claim in a known order: the caller's first until
 * the helper's last has started, the helper's last until the caller's second has, the others
 * until the caller's first has. The helper then runs its whole home while the caller is in its
 * first chunk, and the caller's next claim is its second. Checked over three calls: a repeated
 * call runs each chunk on the core that ran it before. */
struct HomeOrder {
  std::mutex mutex;
  int64_t caller_first, caller_second, helper_last;
  std::vector<std::pair<int64_t, std::thread::id>> started;

  bool has_started(int64_t c) const {
    return std::any_of(started.begin(), started.end(), [&](const auto &s) { return s.first == c; });
  }
  static void body(void *p, int64_t lo, int64_t hi) {
    auto &s = *static_cast<HomeOrder *>(p);
    ASSERT_EQ(hi, lo + 1);
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.started.emplace_back(lo, std::this_thread::get_id());
    }
    const int64_t after = lo == s.caller_first ? s.helper_last : lo == s.helper_last ? s.caller_second : s.caller_first;
    for (int wait = 0; wait < 10000; ++wait) {
      {
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.has_started(after))
          return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
};

void expect_homes(std::vector<int64_t> caller, std::vector<int64_t> helper) {
  spl_set_num_threads(2);
  for (int call = 0; call < 3; ++call) {
    HomeOrder state;
    state.caller_first = caller[0];
    state.caller_second = caller[1];
    state.helper_last = helper.back();
    spl_parallel_for(0, 8, 1, &HomeOrder::body, &state);
    ASSERT_EQ(state.started.size(), 8u);
    std::map<int64_t, std::thread::id> ran;
    for (const auto &c : state.started)
      ran[c.first] = c.second;
    const std::thread::id self = std::this_thread::get_id(), other = ran[helper[0]];
    EXPECT_NE(other, self) << "call " << call;
    for (int64_t c : {caller[0], caller[1]})
      EXPECT_EQ(ran[c], self) << "call " << call << ": chunk " << c << " ran on the helper";
    for (int64_t c : helper)
      EXPECT_EQ(ran[c], other) << "call " << call << ": chunk " << c << " ran on the caller";
  }
}

TEST_F(ThreadPool, EachThreadRunsItsHomeOfNeighbouringChunks) {
  /* The caller's home is chunks 0-3, its helper's 4-7; with one shared counter the helper had
   * run chunk 1. */
  expect_homes({0, 1, 2, 3}, {4, 5, 6, 7});
}

TEST_F(ThreadPool, NestedCallsRunInlineWithoutDeadlock) {
  for (int threads : {2, 7}) {
    spl_set_num_threads(threads);
    constexpr int64_t kOuter = 64, kInner = 1000;
    struct State {
      std::unique_ptr<std::atomic<int>[]> hits{new std::atomic<int>[kOuter * kInner]};
    } state;
    for (int64_t i = 0; i < kOuter * kInner; ++i)
      state.hits[i] = 0;
    auto outer = [](void *p, int64_t lo, int64_t hi) {
      for (int64_t row = lo; row < hi; ++row) {
        struct Inner {
          State *state;
          int64_t row;
        } inner{static_cast<State *>(p), row};
        spl_parallel_for(0, kInner, 1, [](void *q, int64_t a, int64_t b) {
          auto &in = *static_cast<Inner *>(q);
          for (int64_t j = a; j < b; ++j)
            in.state->hits[in.row * kInner + j].fetch_add(1);
        }, &inner);
      }
    };
    spl_parallel_for(0, kOuter, 1, outer, &state);
    int64_t wrong = 0;
    for (int64_t i = 0; i < kOuter * kInner; ++i)
      wrong += state.hits[i].load() != 1;
    EXPECT_EQ(wrong, 0) << "threads " << threads;
  }
}

TEST_F(ThreadPool, ConcurrentCallersFromUserThreads) {
  spl_set_num_threads(3);
  constexpr int kCallers = 4;
  constexpr int64_t kSize = 200000;
  std::vector<std::unique_ptr<Coverage>> covs;
  for (int c = 0; c < kCallers; ++c)
    covs.emplace_back(new Coverage(0, kSize));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 5; ++round)
        spl_parallel_for(0, kSize, 100, &Coverage::visit, covs[c].get());
    });
  for (auto &t : callers)
    t.join();
  for (auto &cov : covs)
    for (int64_t i = 0; i < kSize; ++i)
      ASSERT_EQ(cov->hits[i].load(), 5) << i;
}

TEST_F(ThreadPool, ParallelChunksRunsEachChunkOnce) {
  for (int threads : {1, 2, 7}) {
    spl_set_num_threads(threads);
    for (int64_t nchunks : {int64_t(-3), int64_t(0), int64_t(1), int64_t(2), int64_t(7),
                            int64_t(100), int64_t(5000)}) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " nchunks " << nchunks);
      Coverage cov(0, nchunks);
      spl_parallel_chunks(nchunks, &Coverage::visit, &cov);
      cov.expect_each_once();
      EXPECT_EQ(static_cast<int64_t>(cov.chunks.size()), std::max<int64_t>(nchunks, 0));
      for (auto &chunk : cov.chunks)
        EXPECT_EQ(chunk.second, chunk.first + 1) << "one chunk per call";
      EXPECT_LE(cov.threads.size(), static_cast<size_t>(threads));
    }
  }
}

TEST_F(ThreadPool, ManySmallLoopsInARow) {
  spl_set_num_threads(7);
  for (int round = 0; round < 2000; ++round) {
    Coverage cov(0, 64 + round % 17);
    spl_parallel_for(0, 64 + round % 17, 1, &Coverage::visit, &cov);
    for (int64_t i = 0; i < cov.size; ++i)
      ASSERT_EQ(cov.hits[i].load(), 1) << "round " << round << " index " << i;
  }
}

} // namespace
