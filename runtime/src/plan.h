/* plan.h: what the plans of plan.cpp (SpMV, y = A x and y = A^T x) and plan_spmm.cpp (SpMM,
 * C = A B) share: the plan object, the timing of kernels in rounds within a budget, the kernel
 * forced by SPL_PLAN_KERNEL, and the BCSR candidate (its block count and expected gain).
 *
 * Not installed; the public entry points are in spl_runtime.h.
 */
#ifndef SPL_RT_PLAN_H
#define SPL_RT_PLAN_H

#include "export.h"

#include "bcsr.h"
#include "csc.h"
#include "dia.h"
#include "sell.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

struct spl_plan {
  /* Csr, Sell, Dia, Bcsr: y = A x. Transposed: y = A^T x by the caller's kernel over A's arrays;
   * Csc: the same by the caller's CSR kernel over A's transpose, converted once. An SpMM plan
   * (width > 0): Csr, the caller's kernel of any width; CsrWidth, the CSR kernel of the plan's
   * width; Bcsr, the BCSR kernel of that width; CsrPanels, CSR kernels of narrower widths over
   * panels of B's columns (a width without kernels of its own: plan_spmm.cpp). */
  enum Kernel { Csr, Sell, Dia, Bcsr, Transposed, Csc, CsrWidth, CsrPanels } kernel = Csr;
  size_t element = 0; /* sizeof the precision planned for: a run in the other one is refused */
  int64_t n = 0, m = 0;
  bool transposed = false; /* a plan of y = A^T x: x has n entries, y m */
  bool spmm = false;       /* a plan of C = A B (plan_spmm.cpp) */
  int64_t width = 0;       /* its B's and C's columns */
  const int32_t *offs = nullptr, *cols = nullptr;
  const void *vals = nullptr;
  void *csr = nullptr;  /* the caller's kernels, as untyped function pointers (csr: the CSR kernel
                         * chosen, the table's csr, csr_short, csr_two_sums or csr_prefetch) */
  /* Which of the table's CSR kernels csr is: its own (csr), or one whose rows run as one scalar
   * loop (csr_short; csr_two_sums: two partial sums; csr_prefetch: csr_short with its gathers
   * prefetched). */
  enum CsrRows { CallersRows, ShortRows, TwoSumRows, PrefetchRows } csr_rows = CallersRows;
  /* The name a plan's explanation gives each of them. */
  static const char *csr_rows_name(CsrRows rows) {
    switch (rows) {
    case ShortRows: return "CSR of short rows";
    case TwoSumRows: return "CSR of two partial sums";
    case PrefetchRows: return "CSR of short rows, gathers prefetched";
    case CallersRows: break;
    }
    return "CSR";
  }
  void *sell = nullptr; /* the SELL kernel of the window chosen */
  void *dia = nullptr;
  void *bcsr = nullptr;   /* the BCSR kernel of the block size converted to */
  void *gather = nullptr; /* a transposed plan's CSR kernel, run over the transpose */
  void *fixed = nullptr;  /* an SpMM plan's CSR kernel of its width (CsrWidth; BCSR's rows past its last block) */
  struct Panel {
    int64_t width;
    void *kernel; /* the CSR kernel of that width */
  };
  std::vector<Panel> panels; /* CsrPanels: B's columns from the first, in these widths */
  spl_sell_operands operands{};
  spl_dia_operands diagonals{};
  spl_bcsr_operands blocked{};
  spl_csc_operands transpose{};
  spl_plan *copy_plan = nullptr; /* Csc: the plan of the transposed copy (its kernel among CSR,
                                  * SELL-C-sigma, DIA and BCSR), where the caller gave its kernels */
  std::vector<char> scratch; /* SELL's last window's output (a window of lanes); BCSR's padded x
                              * (block_cols * b elements) where b does not divide m */
  int64_t bytes = 0;
  std::string explanation;

  /* Drops a conversion that was not kept. */
  void release() {
    if (copy_plan != nullptr) { /* it points into the transpose: freed first */
      copy_plan->release();
      delete copy_plan;
      copy_plan = nullptr;
    }
    spl_sell_operands_free(&operands);
    spl_dia_operands_free(&diagonals);
    spl_bcsr_operands_free(&blocked);
    spl_csc_operands_free(&transpose);
    scratch.clear();
    scratch.shrink_to_fit();
    panels.clear();
    sell = dia = bcsr = gather = nullptr;
    kernel = transposed ? Transposed : Csr;
  }
};

namespace spl_rt {

inline constexpr int64_t kColumnSample = 8;     /* the inspection reads the columns of one row chunk in this many */
inline constexpr double kBcsrMinGain = 1.15;    /* BCSR tried when CSR moves this many times its bytes */
inline constexpr double kBcsrConversionSpmvs = 7; /* a BCSR conversion in CSR calls, expected (count, fill, first touch
                                          * of the copy: 6.0-11.6 over pwtk, cant, consph, pdb1HYS, dense2
                                          * on 1 and 2 threads, 2026-11-28; 2.7-10.7 of the plan's own calls,
                                          * 4.7 in the middle, since dense blocks are copied, 2026-11-29,
                                          * while masked rows made CSR's calls faster) */
inline constexpr double kCachedBlockShare = 0.3; /* the share of BCSR's byte gain expected when CSR's bytes fit in
                                          * the last-level cache (measured 1.0-1.3x there against a
                                          * byte gain of 1.36-1.79 on two threads, 1.35x for 1.37 on one
                                          * core; 1.28-1.44x beyond it, pwtk at scale 4): it sets the
                                          * calls that repay a conversion, not whether a size is tried */
inline constexpr double kNoBlocksFill = 2;       /* blocks of a size under half full: larger sizes are not counted
                                          * (3 x 3 dense blocks fill 2 x 2 ones at 1.78 at worst) */
inline constexpr int64_t kMaxPlanBlock = 64;     /* a BCSR kernel's block at most (spl_bcsr_convert_*'s bound) */
inline constexpr double kReleaseSpmvs = 1;      /* freeing a copy not kept, in CSR calls (munmap of ~50 MB: 2.6 ms) */
inline constexpr double kKeepMargin = 0.97;     /* a conversion kept when it takes at most this much of CSR */
inline constexpr double kBudgetSpmvs = 20;      /* planning's whole cost, in CSR calls, at most (issue 25) */
inline constexpr double kWarmCall = 0.75;       /* a warm CSR call against the ones planning times: its calls
                                          * meet a matrix still settling in the cache (pdb1HYS: planning
                                          * took 19.3 of its own calls, 24.3 of the benchmark's warm ones;
                                          * 2026-11-29, masked rows: the plan's best CSR call ran 0.8-1.8x
                                          * the benchmark's median, 1.15x in the middle, over the blocked
                                          * matrices, dense2 and email-Enron in f32/f64 on 1 and 2 threads) */
inline constexpr double kBudgetFloor = 5e-4;    /* but never less than this many seconds: on a matrix whose
                                          * call takes microseconds, the pool's and the allocator's
                                          * fixed costs would leave no time to try anything */
inline constexpr double kClearGap = 0.15;       /* a comparison round this decisive ends the comparison */

/* A vector planning runs its kernels on (x, y; an SpMM's B and C), from spl_alloc: a buffer of
 * 2 MiB or more starts on a huge page, so that its first touch costs a fault every 2 MiB, not
 * every 4 KiB. On a 2-core EPYC VM whose faults cost 4 ms a MB, a std::vector x and y of 8 MB
 * each took 42-52 ms to fill (3 calls of a CSR SpMV of 13.5M entries, out of planning's 20),
 * spl_alloc's 5 ms once the VM had backed huge pages. Filled with `value` (std::bad_alloc
 * without memory: planning reports SPL_ERR_ALLOC). */
template <typename T> class PlanVector {
public:
  PlanVector(size_t count, T value) : count_(std::max<size_t>(count, 1)) {
    data_ = static_cast<T *>(spl_alloc(count_ * sizeof(T)));
    if (data_ == nullptr)
      throw std::bad_alloc();
    std::fill(data_, data_ + count_, value);
  }
  PlanVector(const PlanVector &) = delete;
  PlanVector &operator=(const PlanVector &) = delete;
  ~PlanVector() { spl_free(data_); }
  T *data() const { return data_; }

private:
  size_t count_;
  T *data_ = nullptr;
};

/* Planning's time budget in seconds, given one CSR call's; no more than `cap` seconds where a
 * plan made inside another must end in time for the outer one (the transposed copy's plan of
 * y = A^T x; a negative cap: none). `basis`, where positive, is a call of the caller's CSR
 * kernel when the plan runs another as its CSR (csr_short): the budget is counted in calls of
 * the kernel a caller would run without a plan. */
inline double budget(double csr_time, double cap, double basis) {
  const double own = std::max(kBudgetSpmvs * kWarmCall * std::max(csr_time, basis), kBudgetFloor);
  return cap >= 0 ? std::min(own, cap) : own;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/* Planning's clock: when it started, and what bounds its budget besides the CSR call's time
 * (budget's cap, for a plan made inside another, and basis, where the plan's CSR kernel is not
 * the caller's). Every step asks it for the time left, so that each counts the budget alike. */
struct PlanClock {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double cap = -1;
  double basis = 0;

  /* Planning's whole budget in seconds, given a call of the CSR kernel it runs then. */
  double budget(double csr_time) const { return spl_rt::budget(csr_time, cap, basis); }
  double spent() const { return seconds_since(t0); }
  /* Would `seconds` more of planning take it past its budget? */
  bool over(double seconds, double csr_time) const { return spent() + seconds > budget(csr_time); }
  /* The budget's seconds left, in calls of the CSR kernel it runs then. */
  double calls_left(double csr_time) const { return (budget(csr_time) - spent()) / csr_time; }
  /* The time by which a conversion must end: what the budget leaves once a comparison round (two
   * calls of call_time) and the copy's release (kReleaseSpmvs calls) are kept aside. */
  std::chrono::steady_clock::time_point conversion_deadline(double csr_time, double call_time) const {
    const double seconds = budget(csr_time) - (2 + kReleaseSpmvs) * call_time;
    return t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(std::max(seconds, 0.0)));
  }
};

/* The time of one call of `call` (an SpMV), or a negative time when it fails. */
template <typename Call> double timed(const Call &call) {
  const auto t0 = std::chrono::steady_clock::now();
  return call() == SPL_OK ? seconds_since(t0) : -1;
}

/* The best of two timed calls of `call`, or a negative time when it fails. */
template <typename Call> double best_of_two(const Call &call) {
  const double a = timed(call);
  if (a < 0)
    return -1;
  const double b = timed(call);
  return b < 0 ? -1 : std::min(a, b);
}

/* Rounds of the comparison: one call of each kernel in turn, so that a disturbance of the
 * machine (other processes, a frequency change) hits both alike; each kernel's best counts. A
 * best of two calls taken one kernel after the other decided wrongly on a noisy 2-core VM
 * (SELL-C-sigma measured within 3% of CSR where it ran 1.65x faster in the benchmark). At most
 * kComparisonRounds, fewer when two rounds leave no doubt (kClearGap) or the next would take
 * planning past its budget (kBudgetSpmvs CSR calls, at least kBudgetFloor). */
inline constexpr int kComparisonRounds = 3;

struct Comparison {
  double candidate = -1; /* its best time, negative when it failed */
  int rounds = 0;
};

/* Which kernel a round calls first: the candidate (a converted copy, whose first calls settle
 * before the rounds), or CSR, for a candidate over CSR's own arrays timed after a conversion
 * that stopped or was freed: that conversion's writes have pushed the matrix out of the caches,
 * and the round's first call pays for bringing it back (cit-Patents on two threads: the kernel
 * of short rows with gathers prefetched timed at 36.8 ms, first in its round, where its calls
 * take 11-13 and CSR's 14.7). CSR's time keeps its best, so a slow first call of it costs none. */
enum class FirstInRound { Candidate, Csr };

template <typename Candidate, typename Csr>
Comparison compare(const Candidate &candidate, const Csr &csr_call, double &csr_time, const PlanClock &clock,
                   FirstInRound first = FirstInRound::Candidate) {
  Comparison c;
  for (; c.rounds < kComparisonRounds; ++c.rounds) {
    if (c.rounds > 0) {
      /* Clearly faster, or slower by twice the margin, after two rounds at least: a converted
       * kernel's first calls run slower than its later ones (its copy settling in the cache:
       * SELL-C-sigma on rma10 1.39, 1.39, 1.02, 0.77 ms in its first four calls against CSR's
       * 1.0-1.2), so one round must not decide alone. */
      const bool clear = c.rounds > 1 && (c.candidate < (1 - kClearGap) * csr_time ||
                                          c.candidate > (1 + 2 * kClearGap) * csr_time);
      const bool over_budget = clock.over(c.candidate + (1 + kReleaseSpmvs) * csr_time, csr_time);
      if (c.candidate < 0 || clear || over_budget)
        break;
    }
    if (first == FirstInRound::Csr)
      if (const double c_time = timed(csr_call); c_time >= 0)
        csr_time = std::min(csr_time, c_time);
    const double t = timed(candidate);
    c.candidate = t < 0 ? -1 : (c.candidate < 0 ? t : std::min(c.candidate, t));
    if (first == FirstInRound::Candidate)
      if (const double c_time = timed(csr_call); c_time >= 0)
        csr_time = std::min(csr_time, c_time);
  }
  return c;
}

/* A converted kernel's first calls run slower than its later ones while its fresh copy settles
 * in the memory system: cant's 3 x 3 BCSR copy (17 MB at scale 0.5) ran 2.4, 2.0, 1.1, 0.96,
 * 0.9 ms in its first calls on the 2-core Xeon VM, whatever was read or slept before, against
 * CSR's 0.9-1.3 (a copy into new pages ran its first two or three calls as slowly, the same
 * pages rewritten much less so; the cause is not pinned down), and after one untimed call two
 * rounds measured it at 2.2-2.4 ms: the plan kept CSR, and PETSc's MatMult tied SPL's. So before the
 * rounds it is called until a call runs within kSettled of the one before, at most kSettleCalls
 * times, while the budget still holds the next call and a round after it (as the one untimed
 * call it replaces asked: a first call where four CSR calls of budget are left). Returns the
 * calls made (negative when one failed). */
inline constexpr int kSettleCalls = 5;
inline constexpr double kSettled = 0.9;

/* How settle times a call: `timed` (a test gives the times it wants). */
struct TimedCall {
  template <typename Call> double operator()(const Call &call) const { return timed(call); }
};

template <typename Candidate, typename Timer = TimedCall>
int settle(const Candidate &candidate, double csr_time, const PlanClock &clock, const Timer &time_call = Timer{}) {
  double last = -1;
  int calls = 0;
  while (calls < kSettleCalls) {
    const double next = last < 0 ? csr_time : last; /* the next call's time, expected */
    if (clock.over(next + (next + csr_time) + kReleaseSpmvs * csr_time, csr_time))
      break;
    const double t = time_call(candidate);
    ++calls;
    if (t < 0)
      return -calls;
    if (last >= 0 && t > kSettled * last)
      break;
    last = t;
  }
  return calls;
}

/* The comparison of a converted kernel with the one it would replace, or, where SPL_PLAN_KERNEL
 * forces it, one timed call of it (for the explanation, and to run it once before the caller). */
template <typename Candidate, typename Csr>
Comparison compare_unless_forced(bool forcing, const Candidate &candidate, const Csr &csr_call, double &csr_time,
                                 const PlanClock &clock) {
  if (!forcing)
    return compare(candidate, csr_call, csr_time, clock);
  Comparison c;
  c.candidate = timed(candidate);
  c.rounds = 1;
  return c;
}

/* The end of planning: its time in the explanation, which SPL_PLAN_EXPLAIN prints; the plan out. */
inline int finish(spl_plan *p, const PlanClock &clock, spl_plan **out, bool quiet = false) {
  char line[64];
  std::snprintf(line, sizeof line, "planning took %.3f ms\n", clock.spent() * 1e3);
  p->explanation += line;
  if (!quiet && std::getenv("SPL_PLAN_EXPLAIN") != nullptr)
    std::fputs(p->explanation.c_str(), stderr);
  *out = p;
  return SPL_OK;
}

/* Per precision: the kernel types and the conversions of the runtime (plain function pointers,
 * so that the plans below are written once for both). */
template <typename T> struct Kernels;
template <> struct Kernels<double> {
  using Set = spl_spmv_kernels_f64;
  using TSet = spl_spmv_t_kernels_f64;
  using SpmmSet = spl_spmm_kernels_f64;
  using SpmmWidth = spl_spmm_width_f64;
  using SpmmFn = spl_csr_spmm_f64_fn;
  using SpmmWidthFn = spl_csr_spmm_width_f64_fn;
  using CsrFn = spl_csr_spmv_f64_fn;
  using SellFn = spl_sell_spmv_f64_fn;
  using DiaFn = spl_dia_spmv_f64_fn;
  using BcsrFn = spl_bcsr_spmv_f64_fn;
  static constexpr auto convert_dia = convert_listed_f64;
  static constexpr auto convert_bcsr = spl_rt::convert_bcsr<double>;
  static constexpr auto convert_csc = spl_rt::convert_csc<double>;
  static int64_t csr_bytes(const spl_csr_profile &p) { return p.spmv_bytes_f64; }
  static constexpr const char *name = "f64";
};
template <> struct Kernels<float> {
  using Set = spl_spmv_kernels_f32;
  using TSet = spl_spmv_t_kernels_f32;
  using SpmmSet = spl_spmm_kernels_f32;
  using SpmmWidth = spl_spmm_width_f32;
  using SpmmFn = spl_csr_spmm_f32_fn;
  using SpmmWidthFn = spl_csr_spmm_width_f32_fn;
  using CsrFn = spl_csr_spmv_f32_fn;
  using SellFn = spl_sell_spmv_f32_fn;
  using DiaFn = spl_dia_spmv_f32_fn;
  using BcsrFn = spl_bcsr_spmv_f32_fn;
  static constexpr auto convert_dia = convert_listed_f32;
  static constexpr auto convert_bcsr = spl_rt::convert_bcsr<float>;
  static constexpr auto convert_csc = spl_rt::convert_csc<float>;
  static int64_t csr_bytes(const spl_csr_profile &p) { return p.spmv_bytes_f32; }
  static constexpr const char *name = "f32";
};

/* A plan of A's arrays running the caller's kernel (y = A x, or y = A^T x when transposed) until
 * planning picks another; nullptr without memory. */
template <typename T>
spl_plan *new_plan(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, void *kernel,
                   bool transposed) {
  spl_plan *p = new (std::nothrow) spl_plan;
  if (p == nullptr)
    return nullptr;
  p->element = sizeof(T);
  p->n = n;
  p->m = m;
  p->transposed = transposed;
  p->kernel = transposed ? spl_plan::Transposed : spl_plan::Csr;
  p->offs = offs;
  p->cols = cols;
  p->vals = vals;
  p->csr = kernel;
  return p;
}

/* SPL_PLAN_KERNEL: the kernel a plan takes whenever the matrix's structure allows it ("csr",
 * "csr-short", "csr-two-sums" and "csr-prefetch" where the caller gave csr_short, csr_two_sums
 * and csr_prefetch,
 * "sell", "dia", "bcsr" for the block size that would move the fewest bytes, "bcsrB" for blocks
 * of B; "csr-w", an SpMM's CSR kernel of its width), without regard to the expected calls, the budget or the timing: for tests that must
 * run each kernel, and for comparing kernels on one's own matrices. The structure still rules:
 * DIA within its bound of diagonals, SELL-C-sigma within kMaxSellFill. */
struct Forced {
  bool set = false, known = false;
  spl_plan::Kernel kernel = spl_plan::Csr;
  spl_plan::CsrRows rows = spl_plan::CallersRows; /* csr-short, csr-two-sums, csr-prefetch: that CSR kernel */
  int64_t block = 0; /* bcsrB: B */
  std::string text;
};

inline Forced forced_kernel() {
  Forced f;
  const char *env = std::getenv("SPL_PLAN_KERNEL");
  if (env == nullptr || *env == 0)
    return f;
  f.set = true;
  f.text = env;
  f.known = true;
  if (f.text == "csr")
    f.kernel = spl_plan::Csr;
  else if (f.text == "csr-short" || f.text == "csr-two-sums" || f.text == "csr-prefetch") {
    f.kernel = spl_plan::Csr;
    f.rows = f.text == "csr-short" ? spl_plan::ShortRows : f.text == "csr-two-sums" ? spl_plan::TwoSumRows : spl_plan::PrefetchRows;
  }
  else if (f.text == "sell")
    f.kernel = spl_plan::Sell;
  else if (f.text == "dia")
    f.kernel = spl_plan::Dia;
  else if (f.text == "csr-w")
    f.kernel = spl_plan::CsrWidth;
  else if (f.text == "csr-panels")
    f.kernel = spl_plan::CsrPanels;
  else if (f.text.rfind("bcsr", 0) == 0) {
    f.kernel = spl_plan::Bcsr;
    const std::string digits = f.text.substr(4);
    if (!digits.empty()) {
      f.known = digits.size() <= 2 && digits.find_first_not_of("0123456789") == std::string::npos;
      f.block = f.known ? std::atoi(digits.c_str()) : 0;
      f.known = f.known && f.block >= 1;
    }
  } else {
    f.known = false;
  }
  return f;
}

/* A conversion the plan may try: what it expects, and how to make it. */
struct Candidate {
  spl_plan::Kernel kernel;
  const char *name;
  double gain;            /* over CSR, expected */
  double conversion;      /* in CSR calls, expected */
  std::string expectation; /* why that gain */
  int64_t block = 0;      /* BCSR: b, and its kernel */
  void *block_kernel = nullptr;
};

/* BCSR stores one column index a block of b x b values: on a matrix of dense blocks (a FEM
 * matrix with several unknowns a node) it moves fewer bytes than CSR (pwtk's 6 x 6 blocks as
 * 3 x 3 ones: 70% of CSR's bytes in f64, 1.2x CSR's speed on this Xeon, 2026-11-28), on any
 * other many more (a block holds zeros). So the bytes decide, as for DIA: each block size given
 * is counted on one run of block rows in kColumnSample (a fraction of a call: a small table a
 * block row, no pass over x), its fill (values stored an entry) estimated from that, and the
 * size that would move the fewest bytes is tried from kBcsrMinGain (the padded copy of x counted
 * where b does not divide m). Sets `best` (its gain, block and kernel; block 0 when no size is
 * worth trying, which `not_tried` then explains, or nothing when no size was counted). Forcing,
 * the best size is taken at any gain; forced_block (not 0) keeps that size only. Returns an
 * error code only when a count refuses its input. */
template <typename T, typename BlockKernels>
int bcsr_candidate(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const spl_csr_profile &prof,
                   const BlockKernels &sizes, int64_t width, bool forcing, int64_t forced_block, Candidate &best,
                   std::string &not_tried) {
  using K = Kernels<T>;
  char line[512];
  const auto b0 = std::chrono::steady_clock::now();
  std::string fills;
  double smaller_fill = 0; /* the last size counted: over kNoBlocksFill, larger ones are not */
  const double s = sizeof(T), k = static_cast<double>(width), entries = static_cast<double>(prof.entries);
  /* An SpMV (width 0) moves the matrix, x and y once each. An SpMM of k columns reads a row of B
   * for each entry (CSR) or for each column of a block (BCSR: one row of B serves the b rows of
   * the block, in registers), mostly from the caches: what the kernel loads, not what DRAM
   * moves, is what a block saves there (pwtk, f64, k = 4: 3 x 3 blocks 1.5x the CSR kernel of the
   * same width in a matrix held by the L3). So an SpMM counts the loads, B's rows included, with
   * no discount for the cache. */
  const bool spmm = width > 0;
  const double csr_bytes = spmm ? entries * (s + sizeof(int32_t) + k * s) + static_cast<double>(n) * k * s +
                                      (static_cast<double>(n) + 1) * sizeof(int32_t)
                                : static_cast<double>(K::csr_bytes(prof));
  const double vector_bytes = spmm ? static_cast<double>(n) * k * s : static_cast<double>(n + m) * s;
  /* Held in the last-level cache, an SpMV's bytes weigh less, by how much depends on the
   * machine: BCSR gained 1.0-1.3x there against byte gains of 1.36-1.79 with two threads, and
   * 1.35x for 1.37 on one core of the same Xeon (cant, 2026-11-28, ranks of a PETSc run). So a
   * size is tried, as beyond the cache, from kBcsrMinGain of bytes, but expected at
   * kCachedBlockShare of that gain, which decides whether the calls repay its conversion; the
   * timing then keeps it or not. */
  const bool in_cache = !spmm && prof.llc_bytes > 0 && csr_bytes <= static_cast<double>(prof.llc_bytes);
  double best_byte_gain = 0;
  for (const auto &bk : sizes) {
    if (bk.kernel == nullptr || bk.block < 1 || bk.block > n || (forced_block != 0 && bk.block != forced_block))
      continue;
    if (!forcing && smaller_fill > kNoBlocksFill)
      break;
    /* The fill past which this size could not move kBcsrMinGain times fewer bytes than CSR: the
     * count gives up once a cheap lower bound passes it. */
    const double b = static_cast<double>(bk.block);
    const double per_value = s + sizeof(int32_t) / (b * b) + (spmm ? k * s / b : 0.0);
    const double fixed_bytes = (static_cast<double>(n) / b + 1) * sizeof(int32_t) + vector_bytes +
                               (m % bk.block != 0 ? 2.0 * static_cast<double>(m) * std::max(k, 1.0) * s : 0.0);
    const double useful_fill = (csr_bytes / kBcsrMinGain - fixed_bytes) /
                               (per_value * static_cast<double>(prof.entries));
    if (!forcing && useful_fill < 1) { /* not even full blocks (fill 1): nothing to count */
      const double best_bytes = entries * per_value + fixed_bytes;
      std::snprintf(line, sizeof line, "%s%lld x %lld: full blocks would move %.0f%% of CSR's bytes", fills.empty() ? "" : "; ",
                    (long long)bk.block, (long long)bk.block, 100 * best_bytes / csr_bytes);
      fills += line;
      continue;
    }
    int64_t blocks = 0, sampled = 0;
    bool at_least = false;
    const int rc = sample_blocks(n, m, offs, cols, bk.block, kColumnSample, forcing ? 0.0 : std::max(useful_fill, 1e-9), blocks,
                                 sampled, at_least);
    if (rc == SPL_ERR_ALLOC)
      continue;
    if (rc != SPL_OK)
      return rc;
    if (sampled == 0)
      continue;
    const double fill = static_cast<double>(blocks) * b * b / static_cast<double>(sampled);
    const double bytes = fill * static_cast<double>(prof.entries) * per_value + fixed_bytes;
    const double byte_gain = csr_bytes / bytes;
    const double gain = in_cache ? 1 + (byte_gain - 1) * kCachedBlockShare : byte_gain;
    smaller_fill = fill;
    std::snprintf(line, sizeof line, "%s%lld x %lld: %s%.2f values an entry, %s%.0f%% of CSR's bytes", fills.empty() ? "" : "; ",
                  (long long)bk.block, (long long)bk.block, at_least ? "at least " : "", fill, at_least ? "at least " : "",
                  100 / byte_gain);
    fills += line;
    if (gain > best.gain) {
      best.gain = gain;
      best_byte_gain = byte_gain;
      best.block = bk.block;
      best.block_kernel = reinterpret_cast<void *>(bk.kernel);
    }
  }
  const double count_time = seconds_since(b0);
  if (best.block > 0 && (forcing || best_byte_gain >= kBcsrMinGain)) {
    std::snprintf(line, sizeof line, "blocks (counted in %.3f ms on the rows of one chunk in %lld): %s%s", count_time * 1e3,
                  (long long)kColumnSample, fills.c_str(),
                  in_cache ? " (CSR's bytes fit in the last-level cache: expected at a share of the byte gain)" : "");
    best.expectation = line;
    return SPL_OK;
  }
  best.block = 0;
  if (!fills.empty()) {
    std::snprintf(line, sizeof line, "BCSR not tried: blocks (counted in %.3f ms on the rows of one chunk in %lld): %s%s\n",
                  count_time * 1e3, (long long)kColumnSample, fills.c_str(),
                  in_cache ? " (CSR's bytes fit in the last-level cache)" : "");
    not_tried = line;
  }
  return SPL_OK;
}

} // namespace spl_rt

#endif /* SPL_RT_PLAN_H */
