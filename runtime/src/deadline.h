/* deadline.h: the time by which a conversion that a plan starts (BCSR, DIA, SELL-C-sigma, the
 * transposed CSC copy) must end, or give up (issue 25: planning costs at most 20 CSR calls).
 *
 * A plan expects a conversion to cost a few CSR calls (plan.h's kBcsrConversionSpmvs ...) and
 * checks the real time once it is done; but a copy's first touch costs what the machine's memory
 * makes of it: on the 2-core EPYC VM a BCSR copy of pwtk took 97.5 ms, 34.6 CSR calls, and
 * freshly mapped pages ran the same copy loop 1.4 ms or 20 ms from one allocation to the next
 * (the host backing the guest's pages). So the conversion itself watches the time: each of its
 * parts keeps a DeadlineWatch, which reads the clock once every kDeadlineEntries entries it has
 * gone over (rows are counted by their entries: rows of 1414 made a check every 256 rows a check
 * every 15 ms), and all parts stop at their next look once one has seen the time pass; the
 * conversion then frees what it wrote and returns kStoppedAtDeadline, which never leaves the
 * runtime (the public spl_*_convert_* entries run without a deadline).
 *
 * Assumes: one Deadline per conversion, read by the pool's threads while it runs (the flag is
 * atomic; the time point does not change); one DeadlineWatch per part (not shared).
 */
#ifndef SPL_RT_DEADLINE_H
#define SPL_RT_DEADLINE_H

#include <atomic>
#include <chrono>
#include <cstdint>

namespace spl_rt {

/* A conversion's return when it gave up at its deadline; not an SPL_ERR_ code: the plan that
 * set the deadline declines the conversion and goes on. */
inline constexpr int kStoppedAtDeadline = -1;

/* Entries a part goes over between two looks at the clock: some 10-50 microseconds of
 * conversion, against a clock read of about 20 ns. */
inline constexpr int64_t kDeadlineEntries = 16384;

class Deadline {
public:
  using Clock = std::chrono::steady_clock;

  /* No deadline (the public conversions', a forced plan's): passed() is always false and costs
   * a test. */
  static const Deadline &none() {
    static const Deadline unlimited;
    return unlimited;
  }
  explicit Deadline(Clock::time_point at) : at_(at), set_(true) {}
  Deadline() = default;
  Deadline(const Deadline &) = delete;
  Deadline &operator=(const Deadline &) = delete;

  /* Whether the time has come; once true for one thread, true for all. */
  bool passed() const {
    if (!set_)
      return false;
    if (passed_.load(std::memory_order_relaxed))
      return true;
    if (Clock::now() < at_)
      return false;
    passed_.store(true, std::memory_order_relaxed);
    return true;
  }
  /* Whether some thread saw the time pass (read once the conversion's loops are done). */
  bool stopped() const { return passed_.load(std::memory_order_relaxed); }
  bool set() const { return set_; }

private:
  Clock::time_point at_{};
  bool set_ = false;
  mutable std::atomic<bool> passed_{false};
};

/* One part's looks at a Deadline: before a row (block row, window, chunk) of `entries` entries,
 * whether the part should stop; the clock is read once kDeadlineEntries entries have gone by
 * since the last look (at the first row: a part that starts after the time has passed stops
 * before any work). */
class DeadlineWatch {
public:
  explicit DeadlineWatch(const Deadline &deadline) : deadline_(deadline) {}
  bool passed(int64_t entries) {
    if (!deadline_.set())
      return false;
    if (due_ > 0) {
      due_ -= entries;
      return false;
    }
    due_ = kDeadlineEntries - entries;
    return deadline_.passed();
  }

private:
  const Deadline &deadline_;
  int64_t due_ = 0; /* entries left before the next look */
};

} // namespace spl_rt

#endif /* SPL_RT_DEADLINE_H */
