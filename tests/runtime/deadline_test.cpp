// deadline_test.cpp: the conversions a plan makes give up at planning's deadline
// (runtime/src/deadline.h, issue 25: planning costs at most 20 CSR calls). A deadline already
// passed stops the BCSR conversion, the DIA conversion, the SELL-C-sigma fill and the transposed
// (CSC) copy before they finish, returns kStoppedAtDeadline and leaves nothing allocated; a deadline far ahead, or none,
// gives the same operands as the public spl_*_convert_* entries, on one and two threads; and a
// part's DeadlineWatch reads the clock before its first row, then once kDeadlineEntries entries
// have gone by.
#include "spl_runtime.h"
#include "bcsr.h"
#include "csc.h"
#include "deadline.h"
#include "dia.h"
#include "sell.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using spl_rt::Deadline;
using spl_rt::kStoppedAtDeadline;
using Clock = std::chrono::steady_clock;

class ConversionDeadline : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { spl_set_num_threads(GetParam()); }
  void TearDown() override { spl_set_num_threads(0); }
};

/* A banded matrix of 3 x 3 dense blocks (block row I holds block columns I - 1 .. I + 1), values
 * from the entry's place, so that every conversion has many rows and full blocks to write. */
struct Banded {
  int64_t n = 3 * 4000;
  std::vector<int32_t> offs, cols;
  std::vector<double> vals;
  Banded() {
    offs.push_back(0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t I = i / 3;
      for (int64_t J = std::max<int64_t>(0, I - 1); J <= std::min<int64_t>(n / 3 - 1, I + 1); ++J)
        for (int64_t c = 0; c < 3; ++c) {
          cols.push_back(static_cast<int32_t>(3 * J + c));
          vals.push_back(static_cast<double>(i) + 0.001 * static_cast<double>(3 * J + c));
        }
      offs.push_back(static_cast<int32_t>(cols.size()));
    }
  }
};

Clock::time_point past() { return Clock::now() - std::chrono::seconds(1); }
Clock::time_point ahead() { return Clock::now() + std::chrono::hours(1); }

TEST(Deadline, NoneNeverPasses) {
  const Deadline none;
  EXPECT_FALSE(none.passed());
  EXPECT_FALSE(none.stopped());
  spl_rt::DeadlineWatch watch(none);
  EXPECT_FALSE(watch.passed(1 << 30));
  EXPECT_FALSE(Deadline::none().passed());
}

TEST(Deadline, APassedOneIsSeenByEveryThread) {
  const Deadline gone(past());
  EXPECT_FALSE(gone.stopped()); // not looked at yet
  spl_rt::DeadlineWatch first(gone);
  EXPECT_TRUE(first.passed(1)); // a part looks before its first row
  EXPECT_TRUE(gone.stopped());
  const Deadline later(ahead());
  EXPECT_FALSE(later.passed());
  EXPECT_FALSE(later.stopped());
}

TEST(Deadline, AWatchLooksOnceEnoughEntriesHaveGoneBy) {
  const Deadline soon(Clock::now() + std::chrono::milliseconds(200));
  spl_rt::DeadlineWatch watch(soon), long_rows(soon);
  ASSERT_FALSE(watch.passed(10)); // looked: not yet
  // A row longer than kDeadlineEntries: the next row is looked at too.
  ASSERT_FALSE(long_rows.passed(10 * spl_rt::kDeadlineEntries));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The time has passed, but kDeadlineEntries - 10 entries are due before watch's next look.
  EXPECT_FALSE(watch.passed(spl_rt::kDeadlineEntries - 11));
  EXPECT_FALSE(soon.stopped());
  EXPECT_FALSE(watch.passed(1)); // the last of them
  EXPECT_TRUE(watch.passed(1));  // looks again
  EXPECT_TRUE(soon.stopped());
  EXPECT_TRUE(long_rows.passed(1));
}

TEST_P(ConversionDeadline, BcsrStopsAndFreesItsCopy) {
  const Banded a;
  spl_bcsr_operands out;
  std::memset(&out, 0xff, sizeof out);
  const Deadline gone(past());
  EXPECT_EQ(spl_rt::convert_bcsr<double>(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), 3, gone, &out),
            kStoppedAtDeadline);
  EXPECT_EQ(out.offs, nullptr);
  EXPECT_EQ(out.bcols, nullptr);
  EXPECT_EQ(out.vals, nullptr);
}

TEST_P(ConversionDeadline, BcsrBeforeItsDeadlineIsThePublicConversion) {
  const Banded a;
  spl_bcsr_operands timed, plain;
  const Deadline later(ahead());
  ASSERT_EQ(spl_rt::convert_bcsr<double>(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), 3, later, &timed), SPL_OK);
  ASSERT_EQ(spl_bcsr_convert_f64(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), 3, &plain), SPL_OK);
  EXPECT_FALSE(later.stopped());
  ASSERT_EQ(timed.blocks, plain.blocks);
  EXPECT_EQ(timed.blocks, 3 * (a.n / 3) - 2);
  EXPECT_EQ(std::memcmp(timed.offs, plain.offs, sizeof(int32_t) * static_cast<size_t>(plain.block_rows + 1)), 0);
  EXPECT_EQ(std::memcmp(timed.bcols, plain.bcols, sizeof(int32_t) * static_cast<size_t>(plain.blocks)), 0);
  EXPECT_EQ(std::memcmp(timed.vals, plain.vals, sizeof(double) * static_cast<size_t>(plain.blocks * 9)), 0);
  spl_bcsr_operands_free(&timed);
  spl_bcsr_operands_free(&plain);
}

TEST_P(ConversionDeadline, DiaStopsAndFreesItsCopy) {
  const Banded a;
  std::vector<int32_t> offsets;
  bool within = false;
  ASSERT_EQ(spl_rt::list_diagonals(a.n, a.n, a.offs.data(), a.cols.data(), 16, offsets, within), SPL_OK);
  ASSERT_TRUE(within);
  spl_dia_operands out;
  const Deadline gone(past());
  EXPECT_EQ(spl_rt::convert_listed_f64(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), offsets, gone, &out),
            kStoppedAtDeadline);
  EXPECT_EQ(out.offsets, nullptr);
  EXPECT_EQ(out.diags, nullptr);
  // Before its deadline: the public conversion's diagonals.
  spl_dia_operands timed, plain;
  const Deadline later(ahead());
  ASSERT_EQ(spl_rt::convert_listed_f64(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), offsets, later, &timed),
            SPL_OK);
  ASSERT_EQ(spl_dia_convert_f64(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), &plain), SPL_OK);
  ASSERT_EQ(timed.diagonals, plain.diagonals);
  EXPECT_EQ(std::memcmp(timed.diags, plain.diags, sizeof(double) * static_cast<size_t>(plain.diagonals * a.n)), 0);
  spl_dia_operands_free(&timed);
  spl_dia_operands_free(&plain);
}

TEST_P(ConversionDeadline, SellFillStopsAndFreesItsCopy) {
  const Banded a;
  spl_rt::SellShape shape;
  ASSERT_EQ(spl_rt::sell_shape(a.n, a.offs.data(), 8, 64, 512, shape), SPL_OK);
  spl_sell_operands out;
  const Deadline gone(past());
  EXPECT_EQ(spl_rt::sell_fill(a.n, a.offs.data(), a.cols.data(), a.vals.data(), shape, &out, gone), kStoppedAtDeadline);
  EXPECT_EQ(out.scols, nullptr);
  EXPECT_EQ(out.svals, nullptr);
  spl_sell_operands timed, plain;
  const Deadline later(ahead());
  ASSERT_EQ(spl_rt::sell_fill(a.n, a.offs.data(), a.cols.data(), a.vals.data(), shape, &timed, later), SPL_OK);
  ASSERT_EQ(spl_rt::sell_fill(a.n, a.offs.data(), a.cols.data(), a.vals.data(), shape, &plain), SPL_OK);
  ASSERT_EQ(timed.slots, plain.slots);
  const size_t stored = static_cast<size_t>(plain.slots * plain.lanes);
  EXPECT_EQ(std::memcmp(timed.scols, plain.scols, sizeof(int32_t) * stored), 0);
  EXPECT_EQ(std::memcmp(timed.svals, plain.svals, sizeof(double) * stored), 0);
  spl_sell_operands_free(&timed);
  spl_sell_operands_free(&plain);
}

TEST_P(ConversionDeadline, CscStopsAndFreesItsCopy) {
  const Banded a;
  spl_csc_operands out;
  const Deadline gone(past());
  EXPECT_EQ(spl_rt::convert_csc<double>(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), gone, &out),
            kStoppedAtDeadline);
  EXPECT_EQ(out.offs, nullptr);
  EXPECT_EQ(out.rows_idx, nullptr);
  EXPECT_EQ(out.vals, nullptr);
  spl_csc_operands timed, plain;
  const Deadline later(ahead());
  ASSERT_EQ(spl_rt::convert_csc<double>(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), later, &timed), SPL_OK);
  ASSERT_EQ(spl_csc_convert_f64(a.n, a.n, a.offs.data(), a.cols.data(), a.vals.data(), &plain), SPL_OK);
  ASSERT_EQ(timed.entries, plain.entries);
  EXPECT_EQ(std::memcmp(timed.offs, plain.offs, sizeof(int32_t) * static_cast<size_t>(a.n + 1)), 0);
  EXPECT_EQ(std::memcmp(timed.rows_idx, plain.rows_idx, sizeof(int32_t) * static_cast<size_t>(plain.entries)), 0);
  EXPECT_EQ(std::memcmp(timed.vals, plain.vals, sizeof(double) * static_cast<size_t>(plain.entries)), 0);
  spl_csc_operands_free(&timed);
  spl_csc_operands_free(&plain);
}

INSTANTIATE_TEST_SUITE_P(Threads, ConversionDeadline, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int> &info) { return std::to_string(info.param) + "Threads"; });

} // namespace
