// How a plan lets a converted kernel settle before it is timed against CSR (runtime/src/plan.h's
// settle): calls until one runs within kSettled of the one before, at most kSettleCalls, while
// planning's budget holds the next call and a round after it; a failed call stops it. The calls'
// times are given by the test (a timer that replays them), so no case depends on the machine's
// load.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "plan.h"

namespace {

using Clock = std::chrono::steady_clock;

/* Replays `times` (seconds; a negative one is a failed call), one per call, and counts them. */
struct Replay {
  std::vector<double> times;
  mutable size_t next = 0;
  template <typename Call> double operator()(const Call &) const { return times.at(next++); }
};

constexpr double kCsr = 2e-3;  // one CSR call: planning's budget is 20 x 0.75 of it, 30 ms
const auto kCandidate = [] { return SPL_OK; };

TEST(PlanSettle, StopsOnceACallIsNoLongerMuchFaster) {
  // cant's 3 x 3 BCSR copy on the 2-core Xeon: slow first calls, then steady.
  Replay replay{{2.4e-3, 2.0e-3, 1.1e-3, 1.0e-3, 0.9e-3}};
  EXPECT_EQ(spl_rt::settle(kCandidate, kCsr, spl_rt::PlanClock{Clock::now()}, replay), 4);  // 1.0 > 0.9 x 1.1
  EXPECT_EQ(replay.next, 4u);
}

TEST(PlanSettle, ASteadyKernelTakesTwoCalls) {
  Replay replay{{1e-3, 1e-3, 1e-3}};
  EXPECT_EQ(spl_rt::settle(kCandidate, kCsr, spl_rt::PlanClock{Clock::now()}, replay), 2);
}

TEST(PlanSettle, AtMostkSettleCalls) {
  Replay replay{{4e-3, 2e-3, 1e-3, 0.5e-3, 0.25e-3, 0.1e-3}};
  EXPECT_EQ(spl_rt::settle(kCandidate, kCsr, spl_rt::PlanClock{Clock::now()}, replay), spl_rt::kSettleCalls);
}

TEST(PlanSettle, KeepsARoundOfTheBudget) {
  // 25 ms of the 30 spent: the next call (about a CSR call, 2 ms), a round after it (4) and a
  // copy's release (2) do not fit.
  Replay none{{1e-3}};
  EXPECT_EQ(spl_rt::settle(kCandidate, kCsr, spl_rt::PlanClock{Clock::now() - std::chrono::milliseconds(25)}, none), 0);
  EXPECT_EQ(none.next, 0u);
  // 20 ms spent: a first call fits (20 + 2 + 4 + 2 <= 30); after one of 6 ms, a second of that
  // length would not (20 + 6 + 8 + 2 > 30).
  Replay one{{6e-3, 3e-3}};
  EXPECT_EQ(spl_rt::settle(kCandidate, kCsr, spl_rt::PlanClock{Clock::now() - std::chrono::milliseconds(20)}, one), 1);
  // A cap below the budget (a plan made inside another) holds it too.
  Replay capped{{1e-3}};
  EXPECT_EQ(spl_rt::settle(kCandidate, kCsr, spl_rt::PlanClock{Clock::now(), 5e-3}, capped), 0);
}

TEST(PlanSettle, AFailedCallStopsIt) {
  Replay replay{{2e-3, -1, 1e-3}};
  EXPECT_EQ(spl_rt::settle(kCandidate, kCsr, spl_rt::PlanClock{Clock::now()}, replay), -2);
}

}  // namespace
