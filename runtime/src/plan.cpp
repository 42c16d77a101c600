/* plan.cpp: spl_spmv_plan_*, spl_spmv_t_plan_*, spl_spmv_run_*, spl_plan_explain,
 * spl_plan_kernel, spl_plan_bytes, spl_plan_free: an SpMV kernel chosen once per matrix (issue 25,
 * docs/plans.md), for y = A x and (plan_transposed, below) for y = A^T x.
 *
 * The caller gives the CSR arrays and the kernels it has compiled (a CSR SpMV and, optionally,
 * stdlib's SELL-C-sigma row kernels with their lanes and windows, its DIA kernel and BCSR
 * kernels with their block sizes). Planning:
 *   1. inspect_csr reads the row lengths and, in one chunk of rows in kColumnSample, the
 *      columns (a fraction of an SpMV: no choice below reads the columns' statistics, which the
 *      explanation reports);
 *   2. the CSR kernel is timed (best of two calls on x = 1);
 *   3. the candidates get an expected gain over CSR: DIA the bytes CSR moves over the bytes of
 *      the diagonals (tried from kDiaMinGain: stencils and banded matrices of full diagonals);
 *      BCSR the bytes CSR moves over the blocks' bytes, their fill counted on a sample of block
 *      rows after a cheap lower bound (tried from kBcsrMinGain: FEM matrices of dense blocks;
 *      kCachedBlockShare of that gain where CSR's bytes fit in the last-level cache);
 *      SELL-C-sigma kVaryingGain on rows whose lengths change from row to row
 *      (length_changes >= kVaryingRows: the CSR row loop's exit mispredicts) and are short
 *      (mean under kShortRows), kRegularGain on other rows but long rows of steady length
 *      (mean from kLongSteadyRows), where it is not tried;
 *   4. in order of that gain, a candidate is converted only when hint_calls could repay its
 *      conversion (kDiaConversionSpmvs, kBcsrConversionSpmvs, kConversionSpmvs CSR calls expected; SELL measured
 *      3.6-10 over the suite since its counting sort, 2026-11-28) and planning has time left
 *      for it. SELL-C-sigma is sized first and not filled when it would pad past kMaxSellFill
 *      slots an entry, whatever the time, its fill then estimated at kSellSpmvsPerFill CSR calls
 *      a slot an entry. A conversion that left less than two calls of budget is dropped untimed.
 *      After an untimed call of each kernel as the budget allows (the conversion leaves its copy
 *      in cache; a converted kernel's first calls run slow), the converted kernel and CSR are
 *      timed in turn, up to kComparisonRounds rounds, each kernel's best counting, fewer when
 *      one is clear after two or planning would pass its budget (kBudgetSpmvs warm CSR calls,
 *      at least kBudgetFloor on a matrix of microsecond calls, kReleaseSpmvs kept for freeing a
 *      copy). The conversion is kept only if it is faster by kKeepMargin, or no slower where its
 *      expected gain is kVaryingGain or more; otherwise the copy is freed and the next candidate
 *      tried. CSR runs when none is kept. SPL_PLAN_KERNEL names a kernel to take whenever the
 *      matrix's structure allows it, without the expected calls, the budget or the timing.
 * Every step is recorded in the explanation (spl_plan_explain; printed to stderr at planning
 * when SPL_PLAN_EXPLAIN is set). Timing inside the plan makes the choice the machine's own.
 *
 * Assumes: the CSR arrays outlive the plan and do not change (the plan keeps pointers to them,
 * as a sparse handle does); one spl_spmv_run_* at a time per plan (SELL writes its last window,
 * BCSR its padded x, into the plan's scratch). Nothing here assumes the CPU but the timing of the
 * kernels on the calling thread: a GPU plan would time its launches the same way.
 */
#include "export.h"

#include "bcsr.h"
#include "csr_arrays.h"
#include "dia.h"
#include "inspect.h"
#include "sell.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

struct spl_plan {
  /* Csr, Sell, Dia: y = A x. Transposed: y = A^T x by the caller's kernel over A's arrays;
   * Csc: the same by the caller's CSR kernel over A's transpose, converted once. */
  enum Kernel { Csr, Sell, Dia, Bcsr, Transposed, Csc } kernel = Csr;
  size_t element = 0; /* sizeof the precision planned for: a run in the other one is refused */
  int64_t n = 0, m = 0;
  bool transposed = false; /* a plan of y = A^T x: x has n entries, y m */
  const int32_t *offs = nullptr, *cols = nullptr;
  const void *vals = nullptr;
  void *csr = nullptr;  /* the caller's kernels, as untyped function pointers */
  void *sell = nullptr; /* the SELL kernel of the window chosen */
  void *dia = nullptr;
  void *bcsr = nullptr;   /* the BCSR kernel of the block size converted to */
  void *gather = nullptr; /* a transposed plan's CSR kernel, run over the transpose */
  spl_sell_operands operands{};
  spl_dia_operands diagonals{};
  spl_bcsr_operands blocked{};
  spl_csc_operands transpose{};
  std::vector<char> scratch; /* SELL's last window's output (a window of lanes); BCSR's padded x
                              * (block_cols * b elements) where b does not divide m */
  int64_t bytes = 0;
  std::string explanation;

  /* Drops a conversion that was not kept. */
  void release() {
    spl_sell_operands_free(&operands);
    spl_dia_operands_free(&diagonals);
    spl_bcsr_operands_free(&blocked);
    spl_csc_operands_free(&transpose);
    scratch.clear();
    scratch.shrink_to_fit();
    sell = dia = bcsr = gather = nullptr;
    kernel = transposed ? Transposed : Csr;
  }
};

namespace spl_rt {
namespace {

constexpr int64_t kColumnSample = 8;     /* the inspection reads the columns of one row chunk in this many */
constexpr double kVaryingRows = 0.3;     /* length_changes at which row exits mispredict */
constexpr double kShortRows = 32;        /* mean row under which a mispredicted exit weighs */
constexpr double kVaryingGain = 1.3;     /* SELL over CSR expected on short rows of changing length */
constexpr double kRegularGain = 1.05;    /* and on rows of predictable length */
constexpr double kConversionSpmvs = 8;   /* a SELL conversion in CSR calls, expected before its sizing (3.6-10 measured) */
constexpr double kDiaMinGain = 1.15;     /* DIA tried when CSR moves this many times its bytes */
constexpr double kDiaConversionSpmvs = 6;/* a DIA conversion in CSR calls, expected (count, mark, fill) */
constexpr double kBcsrMinGain = 1.15;    /* BCSR tried when CSR moves this many times its bytes */
constexpr double kBcsrConversionSpmvs = 10;/* a BCSR conversion in CSR calls, expected (count, fill, first touch
                                          * of the copy: 6.0-11.6 over pwtk, cant, consph, pdb1HYS, dense2
                                          * on 1 and 2 threads, 2026-11-28) */
constexpr double kCachedBlockShare = 0.3; /* the share of BCSR's byte gain expected when CSR's bytes fit in
                                          * the last-level cache (measured 1.0-1.3x there against a
                                          * byte gain of 1.36-1.79; 1.28-1.44x beyond it, pwtk at scale 4) */
constexpr double kNoBlocksFill = 2;       /* blocks of a size under half full: larger sizes are not counted
                                          * (3 x 3 dense blocks fill 2 x 2 ones at 1.78 at worst) */
constexpr int64_t kMaxPlanBlock = 64;     /* a BCSR kernel's block at most (spl_bcsr_convert_*'s bound) */
constexpr double kLongSteadyRows = 256;  /* rows of steady length this long leave SELL nothing to gain */
constexpr double kReleaseSpmvs = 1;      /* freeing a copy not kept, in CSR calls (munmap of ~50 MB: 2.6 ms) */
constexpr double kSellSpmvsPerFill = 6; /* a SELL fill, in CSR calls per slot an entry (4.4-6.7 measured:
                                          * roadNet-CA, webbase-1M, web-Google, kron_g500, dense-row) */
constexpr double kMaxSellFill = 2.5;     /* SELL padded past this many slots an entry is not filled */
constexpr double kKeepMargin = 0.97;     /* a conversion kept when it takes at most this much of CSR */
constexpr double kBudgetSpmvs = 20;      /* planning's whole cost, in CSR calls, at most (issue 25) */
constexpr double kWarmCall = 0.85;       /* a warm CSR call against the ones planning times: its calls
                                          * meet a matrix still settling in the cache (pdb1HYS: planning
                                          * took 19.3 of its own calls, 24.3 of the benchmark's warm ones) */
constexpr double kBudgetFloor = 5e-4;    /* but never less than this many seconds: on a matrix whose
                                          * call takes microseconds, the pool's and the allocator's
                                          * fixed costs would leave no time to try anything */
constexpr double kClearGap = 0.15;       /* a comparison round this decisive ends the comparison */

/* Planning's time budget in seconds, given one CSR call's. */
double budget(double csr_time) { return std::max(kBudgetSpmvs * kWarmCall * csr_time, kBudgetFloor); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

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
constexpr int kComparisonRounds = 3;

struct Comparison {
  double candidate = -1; /* its best time, negative when it failed */
  int rounds = 0;
};

template <typename Candidate, typename Csr>
Comparison compare(const Candidate &candidate, const Csr &csr_call, double &csr_time,
                   std::chrono::steady_clock::time_point plan_t0) {
  Comparison c;
  for (; c.rounds < kComparisonRounds; ++c.rounds) {
    if (c.rounds > 0) {
      /* Clearly faster, or slower by twice the margin, after two rounds at least: a converted
       * kernel's first calls run slower than its later ones (its copy settling in the cache:
       * SELL-C-sigma on rma10 1.39, 1.39, 1.02, 0.77 ms in its first four calls against CSR's
       * 1.0-1.2), so one round must not decide alone. */
      const bool clear = c.rounds > 1 && (c.candidate < (1 - kClearGap) * csr_time ||
                                          c.candidate > (1 + 2 * kClearGap) * csr_time);
      const bool over_budget = seconds_since(plan_t0) + c.candidate + (1 + kReleaseSpmvs) * csr_time > budget(csr_time);
      if (c.candidate < 0 || clear || over_budget)
        break;
    }
    const double t = timed(candidate);
    c.candidate = t < 0 ? -1 : (c.candidate < 0 ? t : std::min(c.candidate, t));
    if (const double c_time = timed(csr_call); c_time >= 0)
      csr_time = std::min(csr_time, c_time);
  }
  return c;
}

/* The end of planning: its time in the explanation, which SPL_PLAN_EXPLAIN prints; the plan out. */
int finish(spl_plan *p, std::chrono::steady_clock::time_point plan_t0, spl_plan **out) {
  char line[64];
  std::snprintf(line, sizeof line, "planning took %.3f ms\n", seconds_since(plan_t0) * 1e3);
  p->explanation += line;
  if (std::getenv("SPL_PLAN_EXPLAIN") != nullptr)
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
  using CsrFn = spl_csr_spmv_f64_fn;
  using SellFn = spl_sell_spmv_f64_fn;
  using DiaFn = spl_dia_spmv_f64_fn;
  using BcsrFn = spl_bcsr_spmv_f64_fn;
  static constexpr auto convert_dia = convert_listed_f64;
  static constexpr auto convert_bcsr = spl_bcsr_convert_f64;
  static constexpr auto convert_csc = spl_csc_convert_f64;
  static int64_t csr_bytes(const spl_csr_profile &p) { return p.spmv_bytes_f64; }
  static constexpr const char *name = "f64";
};
template <> struct Kernels<float> {
  using Set = spl_spmv_kernels_f32;
  using TSet = spl_spmv_t_kernels_f32;
  using CsrFn = spl_csr_spmv_f32_fn;
  using SellFn = spl_sell_spmv_f32_fn;
  using DiaFn = spl_dia_spmv_f32_fn;
  using BcsrFn = spl_bcsr_spmv_f32_fn;
  static constexpr auto convert_dia = convert_listed_f32;
  static constexpr auto convert_bcsr = spl_bcsr_convert_f32;
  static constexpr auto convert_csc = spl_csc_convert_f32;
  static int64_t csr_bytes(const spl_csr_profile &p) { return p.spmv_bytes_f32; }
  static constexpr const char *name = "f32";
};

/* BCSR over the whole block rows, from a padded copy of x where b does not divide m (the kernel
 * reads block_cols * b entries); the rows past the last whole block row by the caller's CSR
 * kernel over its own arrays, so that y needs no padding. */
template <typename T> int run_bcsr(const spl_plan *p, const T *x, T *y) {
  using K = Kernels<T>;
  const spl_bcsr_operands &o = p->blocked;
  const int64_t whole = p->n / o.block, rest = whole * o.block;
  const T *x_read = x;
  if (!p->scratch.empty()) {
    T *padded = reinterpret_cast<T *>(const_cast<char *>(p->scratch.data()));
    std::copy(x, x + p->m, padded);
    x_read = padded;
  }
  int rc = SPL_OK;
  if (whole > 0)
    rc = reinterpret_cast<typename K::BcsrFn>(p->bcsr)(whole, o.block_cols, o.offs, static_cast<const T *>(o.vals), o.bcols,
                                                       x_read, y);
  if (rc == SPL_OK && rest < p->n) {
    const int64_t first = static_cast<int64_t>(p->offs[rest]) - p->offs[0];
    rc = reinterpret_cast<typename K::CsrFn>(p->csr)(p->n - rest, p->m, p->offs + rest, p->cols + first,
                                                     static_cast<const T *>(p->vals) + first, x, y + rest);
  }
  return rc;
}

/* SELL-C-sigma writes its rows in order first, then the lanes of the last slice past row n.
 * Every window but the last writes straight into y (it holds only rows); the last window, which
 * holds the padding, writes into the plan's scratch (a window's lanes at most), and its rows are
 * copied. A copy of all of y cost a sixth of a call on thermal2's rows of 7 entries (2 x 8 bytes a
 * row against CSR's 12 an entry read; benchmark 2026-11-28: the plan's SELL ran 15% slower than
 * the same kernel writing its own padded vector). */
template <typename T> int run_sell(const spl_plan *p, const T *x, T *y) {
  using K = Kernels<T>;
  const spl_sell_operands &s = p->operands;
  const auto kernel = reinterpret_cast<typename K::SellFn>(p->sell);
  const int64_t window = s.sigma / s.lanes, head = (s.slices - 1) / window * window; /* slices of the whole windows */
  int rc = SPL_OK;
  if (head > 0)
    rc = kernel(head, p->m, s.soffs, s.scols, static_cast<const T *>(s.svals), s.wpos, x, y);
  if (rc != SPL_OK || head == s.slices)
    return rc;
  T *padded = reinterpret_cast<T *>(const_cast<char *>(p->scratch.data()));
  const int64_t first = (static_cast<int64_t>(s.soffs[head]) - s.soffs[0]) * s.lanes;
  rc = kernel(s.slices - head, p->m, s.soffs + head, s.scols + first, static_cast<const T *>(s.svals) + first,
              s.wpos + head * s.lanes, x, padded);
  if (rc == SPL_OK)
    std::copy(padded, padded + (p->n - head * s.lanes), y + head * s.lanes);
  return rc;
}

template <typename T> int run(const spl_plan *p, const T *x, T *y) {
  using K = Kernels<T>;
  if (p == nullptr || p->element != sizeof(T))
    return SPL_ERR_BAD_INPUT;
  const int64_t x_len = p->transposed ? p->n : p->m, y_len = p->transposed ? p->m : p->n;
  if ((y_len > 0 && y == nullptr) || (x_len > 0 && x == nullptr))
    return SPL_ERR_BAD_INPUT;
  switch (p->kernel) {
  case spl_plan::Csr:
  case spl_plan::Transposed: /* the same C type: the caller's kernel over A's arrays */
    return reinterpret_cast<typename K::CsrFn>(p->csr)(p->n, p->m, p->offs, p->cols, static_cast<const T *>(p->vals), x, y);
  case spl_plan::Csc: {
    const spl_csc_operands &c = p->transpose;
    return reinterpret_cast<typename K::CsrFn>(p->gather)(p->m, p->n, c.offs, c.rows_idx, static_cast<const T *>(c.vals), x, y);
  }
  case spl_plan::Dia: {
    const spl_dia_operands &d = p->diagonals;
    return reinterpret_cast<typename K::DiaFn>(p->dia)(p->n, p->m, d.diagonals, d.offsets, static_cast<const T *>(d.diags), x, y);
  }
  case spl_plan::Bcsr:
    return run_bcsr(p, x, y);
  case spl_plan::Sell:
    break;
  }
  return run_sell(p, x, y);
}

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
 * "sell", "dia", "bcsr" for the block size that would move the fewest bytes, "bcsrB" for blocks
 * of B), without regard to the expected calls, the budget or the timing: for tests that must
 * run each kernel, and for comparing kernels on one's own matrices. The structure still rules:
 * DIA within its bound of diagonals, SELL-C-sigma within kMaxSellFill. */
struct Forced {
  bool set = false, known = false;
  spl_plan::Kernel kernel = spl_plan::Csr;
  int64_t block = 0; /* bcsrB: B */
  std::string text;
};

Forced forced_kernel() {
  Forced f;
  const char *env = std::getenv("SPL_PLAN_KERNEL");
  if (env == nullptr || *env == 0)
    return f;
  f.set = true;
  f.text = env;
  f.known = true;
  if (f.text == "csr")
    f.kernel = spl_plan::Csr;
  else if (f.text == "sell")
    f.kernel = spl_plan::Sell;
  else if (f.text == "dia")
    f.kernel = spl_plan::Dia;
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
template <typename T>
int bcsr_candidate(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const spl_csr_profile &prof,
                   const typename Kernels<T>::Set &kernels, bool forcing, int64_t forced_block, double vector_bytes,
                   Candidate &best, std::string &not_tried) {
  using K = Kernels<T>;
  char line[512];
  const auto b0 = std::chrono::steady_clock::now();
  std::string fills;
  double smaller_fill = 0; /* the last size counted: over kNoBlocksFill, larger ones are not */
  /* Held in the last-level cache, a matrix's bytes weigh less: BCSR's gain there comes from
   * fewer index loads and unrolled blocks (kCachedBlockShare of the byte gain). */
  const bool in_cache = prof.llc_bytes > 0 && K::csr_bytes(prof) <= prof.llc_bytes;
  for (const auto &bk : kernels.bcsr) {
    if (bk.kernel == nullptr || bk.block < 1 || bk.block > n || (forced_block != 0 && bk.block != forced_block))
      continue;
    if (!forcing && smaller_fill > kNoBlocksFill)
      break;
    /* The fill past which this size could not move kBcsrMinGain times fewer bytes than CSR: the
     * count gives up once a cheap lower bound passes it. */
    const double b = static_cast<double>(bk.block), per_value = sizeof(T) + sizeof(int32_t) / (b * b);
    const double fixed_bytes = (static_cast<double>(n) / b + 1) * sizeof(int32_t) + vector_bytes +
                               (m % bk.block != 0 ? 2.0 * static_cast<double>(m) * sizeof(T) : 0.0);
    const double min_byte_gain = in_cache ? 1 + (kBcsrMinGain - 1) / kCachedBlockShare : kBcsrMinGain;
    const double useful_fill = (static_cast<double>(K::csr_bytes(prof)) / min_byte_gain - fixed_bytes) /
                               (per_value * static_cast<double>(prof.entries));
    if (!forcing && useful_fill < 1) { /* not even full blocks (fill 1): nothing to count */
      const double best_bytes = static_cast<double>(prof.entries) * per_value + fixed_bytes;
      std::snprintf(line, sizeof line, "%s%lld x %lld: full blocks would move %.0f%% of CSR's bytes", fills.empty() ? "" : "; ",
                    (long long)bk.block, (long long)bk.block, 100 * best_bytes / static_cast<double>(K::csr_bytes(prof)));
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
    const double byte_gain = static_cast<double>(K::csr_bytes(prof)) / bytes;
    const double gain = in_cache ? 1 + (byte_gain - 1) * kCachedBlockShare : byte_gain;
    smaller_fill = fill;
    std::snprintf(line, sizeof line, "%s%lld x %lld: %s%.2f values an entry, %s%.0f%% of CSR's bytes", fills.empty() ? "" : "; ",
                  (long long)bk.block, (long long)bk.block, at_least ? "at least " : "", fill, at_least ? "at least " : "",
                  100 / byte_gain);
    fills += line;
    if (gain > best.gain) {
      best.gain = gain;
      best.block = bk.block;
      best.block_kernel = reinterpret_cast<void *>(bk.kernel);
    }
  }
  const double count_time = seconds_since(b0);
  if (best.block > 0 && (forcing || best.gain >= kBcsrMinGain)) {
    std::snprintf(line, sizeof line, "blocks (counted in %.3f ms on the rows of one chunk in %lld): %s%s", count_time * 1e3,
                  (long long)kColumnSample, fills.c_str(), in_cache ? " (CSR's bytes fit in the last-level cache)" : "");
    best.expectation = line;
    return SPL_OK;
  }
  best.block = 0;
  if (!fills.empty()) {
    std::snprintf(line, sizeof line, "BCSR not tried: blocks (counted in %.3f ms on the rows of one chunk in %lld): %s%s\n",
                  count_time * 1e3, (long long)kColumnSample, fills.c_str(),
                  in_cache ? " (CSR's bytes fit in the last-level cache, where fewer bytes gain less)" : "");
    not_tried = line;
  }
  return SPL_OK;
}

template <typename T>
int plan(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, int64_t hint_calls,
         const typename Kernels<T>::Set *kernels, spl_plan **out) {
  using K = Kernels<T>;
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  *out = nullptr;
  if (kernels == nullptr || kernels->csr == nullptr || hint_calls < 0)
    return SPL_ERR_BAD_INPUT;
  for (const auto &bk : kernels->bcsr)
    if (bk.kernel != nullptr && (bk.block < 1 || bk.block > kMaxPlanBlock))
      return SPL_ERR_BAD_INPUT;
  const auto plan_t0 = std::chrono::steady_clock::now();
  spl_csr_profile prof;
  if (int rc = inspect_csr(n, m, offs, cols, kColumnSample, &prof); rc != SPL_OK)
    return rc;
  const double inspect_time = seconds_since(plan_t0);
  if (prof.entries > 0 && vals == nullptr)
    return SPL_ERR_BAD_INPUT;
  spl_plan *p = new_plan(n, m, offs, cols, vals, reinterpret_cast<void *>(kernels->csr), false);
  if (p == nullptr)
    return SPL_ERR_ALLOC;
  char line[512];
  try {
    std::snprintf(line, sizeof line,
                  "spmv plan (%s): %lld x %lld, %lld entries; rows %lld..%lld long (mean %.1f, cv %.2f), length changes "
                  "at %.0f%% of rows, %.1f%% of entries scattered (of the columns read in one chunk in %lld); %d threads; "
                  "inspected in %.3f ms\n",
                  K::name, (long long)n, (long long)m, (long long)prof.entries, (long long)prof.min_row,
                  (long long)prof.max_row, prof.mean_row, prof.cv_row, 100 * prof.length_changes, 100 * prof.scattered,
                  (long long)kColumnSample, prof.threads, inspect_time * 1e3);
    p->explanation = line;
    const bool sell_available = kernels->sell_narrow != nullptr && kernels->sell_wide != nullptr;
    const bool dia_available = kernels->dia != nullptr;
    bool bcsr_available = false;
    for (const auto &bk : kernels->bcsr)
      bcsr_available = bcsr_available || (bk.kernel != nullptr && bk.block >= 1);
    auto decide_csr = [&](const std::string &why) {
      p->kernel = spl_plan::Csr;
      p->explanation += "chose CSR: " + why + "\n";
    };
    const Forced forced = forced_kernel();
    if (forced.set && !forced.known)
      p->explanation += "SPL_PLAN_KERNEL=" + forced.text + " names no kernel (csr, sell, dia, bcsr, bcsrB): ignored\n";
    const bool forcing = forced.set && forced.known;
    auto wanted = [&](spl_plan::Kernel k) { return !forcing || forced.kernel == k; };
    const bool any_available = sell_available || dia_available || bcsr_available;
    if (!any_available || n == 0 || prof.entries == 0) {
      decide_csr(!any_available ? "no other kernel was given" : "nothing to convert");
    } else {
      /* One CSR call's time, on x = 1 (and a y the plan owns). */
      std::vector<T> x(static_cast<size_t>(std::max<int64_t>(m, 1)), T(1)), y(static_cast<size_t>(n));
      auto csr_call = [&] { return kernels->csr(n, m, offs, cols, vals, x.data(), y.data()); };
      double csr_time = best_of_two(csr_call);
      if (csr_time < 0) {
        delete p;
        return SPL_ERR_BAD_INPUT;
      }
      std::snprintf(line, sizeof line, "CSR: %.3f ms a call\n", csr_time * 1e3);
      p->explanation += line;

      std::vector<Candidate> candidates;
      std::vector<int32_t> dia_offsets; /* the diagonals, once counted */
      const double vector_bytes = static_cast<double>(n + m) * sizeof(T);
      /* DIA reads its diagonals whole (padding included) and no column, so the bytes decide:
       * it is tried when CSR moves kDiaMinGain times the diagonals' bytes, which bounds their
       * number. Counting them takes a pass over the columns (stopped soon after the bound),
       * made only for rows of steady length, as full diagonals make them (a stencil's far
       * diagonals count as scattered entries: that share does not tell). */
      if (wanted(spl_plan::Dia) && dia_available && (forcing || prof.length_changes < kVaryingRows) && n <= INT32_MAX &&
          m <= INT32_MAX) {
        const int64_t bound = static_cast<int64_t>(
            std::max(0.0, (static_cast<double>(K::csr_bytes(prof)) / kDiaMinGain - vector_bytes) / (static_cast<double>(n) * sizeof(T))));
        const auto d0 = std::chrono::steady_clock::now();
        bool within = false;
        if (int rc = list_diagonals(n, m, offs, cols, bound, dia_offsets, within); rc != SPL_OK) {
          delete p;
          return rc;
        }
        const double count_time = seconds_since(d0);
        const int64_t diagonals = static_cast<int64_t>(dia_offsets.size());
        if (!within) {
          std::snprintf(line, sizeof line, "DIA not tried: over %lld diagonals, which would move more than CSR's bytes / %.2f "
                        "(counted in %.3f ms)\n", (long long)bound, kDiaMinGain, count_time * 1e3);
          p->explanation += line;
        } else if (diagonals > 0) {
          const double dia_bytes = static_cast<double>(diagonals) * n * sizeof(T) + vector_bytes;
          std::snprintf(line, sizeof line, "%lld diagonals (counted in %.3f ms) store %.2f slots an entry and move %.0f%% of CSR's bytes",
                        (long long)diagonals, count_time * 1e3, static_cast<double>(diagonals) * n / prof.entries,
                        100 * dia_bytes / K::csr_bytes(prof));
          candidates.push_back({spl_plan::Dia, "DIA", K::csr_bytes(prof) / dia_bytes, kDiaConversionSpmvs, line});
        }
      }
      if (wanted(spl_plan::Bcsr) && bcsr_available) {
        Candidate best{spl_plan::Bcsr, "BCSR", 0, kBcsrConversionSpmvs, ""};
        std::string not_tried;
        if (int rc = bcsr_candidate<T>(n, m, offs, cols, prof, *kernels, forcing, forced.block, vector_bytes, best, not_tried);
            rc != SPL_OK) {
          delete p;
          return rc;
        }
        if (best.block > 0)
          candidates.push_back(best);
        p->explanation += not_tried;
      }
      /* A mispredicted row exit costs about as much as a few entries: it weighs on short rows
       * (cant's rows of 20 to 111 entries change length at 31% of rows, and SELL-C-sigma ran
       * 1.2x slower than CSR there), and not at all on long rows of one length, where CSR's row
       * loop runs whole vectors (dense2's rows of 1414: SELL 2.6x slower, its conversion 13 of
       * planning's 20 calls). */
      const bool changing = prof.length_changes >= kVaryingRows;
      const bool varying = changing && prof.mean_row < kShortRows;
      const bool sell_wanted = sell_available && wanted(spl_plan::Sell);
      if (sell_wanted && !forcing && !changing && prof.mean_row >= kLongSteadyRows) {
        std::snprintf(line, sizeof line, "SELL-C-sigma not tried: rows of steady length, %.0f entries on average\n",
                      prof.mean_row);
        p->explanation += line;
      } else if (sell_wanted) {
        candidates.push_back({spl_plan::Sell, "SELL-C-sigma", varying ? kVaryingGain : kRegularGain, kConversionSpmvs,
                              std::string("rows ") + (varying    ? "of changing length"
                                                      : changing ? "of changing but long length"
                                                                 : "of steady length")});
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate &a, const Candidate &b) { return a.gain > b.gain; });
      std::string declined; /* why each candidate was not kept, for the explanation */
      auto decline = [&](const std::string &why) { declined += (declined.empty() ? "" : "; ") + why; };
      for (const Candidate &c : candidates) {
        const double repay_calls = c.conversion / (1 - 1 / c.gain);
        std::snprintf(line, sizeof line, "%s: %s: expected %.2fx, a conversion repaid after about %.0f calls\n", c.name,
                      c.expectation.c_str(), c.gain, repay_calls);
        p->explanation += line;
        if (!forcing && static_cast<double>(hint_calls) < repay_calls) {
          std::snprintf(line, sizeof line, "%lld expected calls would not repay a conversion to %s", (long long)hint_calls,
                        c.name);
          decline(line);
          continue;
        }
        /* SELL-C-sigma's padding is known before its fill (a sort of row lengths per window, a
         * fraction of a call): one long row in a window of short ones pads its slice to its
         * length (dense-row's rows of 8 and one of 250,000: 3 slots an entry in f32, a
         * conversion of 18-22 CSR calls that ran no faster). Decided before the budget, so
         * that what the structure rules out does not depend on the machine's timing. */
        SellShape shape;
        double conversion_calls = c.conversion;
        if (c.kernel == spl_plan::Sell) {
          if (int rc = sell_shape(n, offs, kernels->lanes, kernels->narrow, kernels->wide, shape); rc != SPL_OK) {
            if (rc != SPL_ERR_ALLOC) {
              p->release();
              delete p;
              return rc;
            }
            decline("SELL-C-sigma cannot hold this matrix (over 2^31 slots, or no memory to size it)");
            continue;
          }
          const double fill = static_cast<double>(shape.slots * shape.lanes) / static_cast<double>(prof.entries);
          if (fill > kMaxSellFill) {
            std::snprintf(line, sizeof line, "SELL-C-sigma would store %.2f slots an entry (over %.1f), not converted", fill,
                          kMaxSellFill);
            decline(line);
            continue;
          }
          /* The fill writes every slot: its own estimate in place of kConversionSpmvs. */
          conversion_calls = kSellSpmvsPerFill * fill;
        }
        /* The conversion and a round should fit the budget (checked again after the
         * conversion, whose time is then known, before the untimed calls). */
        if (!forcing && seconds_since(plan_t0) + (conversion_calls + 2 + kReleaseSpmvs) * csr_time > budget(csr_time)) {
          std::snprintf(line, sizeof line, "no planning time left to try %s (about %.0f CSR calls to convert)", c.name,
                        conversion_calls);
          decline(line);
          continue;
        }
        const auto c0 = std::chrono::steady_clock::now();
        int rc;
        if (c.kernel == spl_plan::Dia) {
          rc = K::convert_dia(n, m, offs, cols, vals, dia_offsets, &p->diagonals);
          p->dia = reinterpret_cast<void *>(kernels->dia);
        } else if (c.kernel == spl_plan::Bcsr) {
          rc = K::convert_bcsr(n, m, offs, cols, vals, c.block, &p->blocked);
          p->bcsr = c.block_kernel;
          if (rc == SPL_OK && m % c.block != 0) /* x padded with zeros, which the runs keep */
            p->scratch.assign(static_cast<size_t>(p->blocked.block_cols * c.block) * sizeof(T), 0);
          if (rc == SPL_ERR_ALLOC) {
            p->release();
            decline("BCSR cannot hold this matrix (over 2^31 blocks, or no memory for the copy)");
            continue;
          }
        } else {
          rc = sell_fill(n, offs, cols, vals, shape, &p->operands);
          const spl_sell_operands &s = p->operands;
          p->sell = reinterpret_cast<void *>(s.sigma == kernels->narrow ? kernels->sell_narrow : kernels->sell_wide);
          if (rc == SPL_OK)
            p->scratch.resize(static_cast<size_t>(std::max<int64_t>(std::min(s.slices * s.lanes, s.sigma), 1)) * sizeof(T));
        }
        const double convert_time = seconds_since(c0);
        if (rc != SPL_OK) {
          p->release();
          delete p;
          return rc;
        }
        p->kernel = c.kernel;
        /* What the budget still holds once the conversion's real time is known, in CSR calls
         * (a copy's release kept aside). Not a round: the copy is dropped untimed. */
        const double calls_left = (budget(csr_time) - seconds_since(plan_t0)) / csr_time - kReleaseSpmvs;
        if (!forcing && calls_left < 2) {
          p->release();
          std::snprintf(line, sizeof line, "%s converted in %.3f ms (%.1f CSR calls), no planning time left to time it",
                        c.name, convert_time * 1e3, convert_time / csr_time);
          decline(line);
          continue;
        }
        /* An untimed call of each first, as the budget allows. The conversion leaves the cache
         * full of the copy it wrote, dirty: CSR's first call would pay its write-back
         * (thermal2's 510 MB mirror against this VM's 260 MiB L3: one round chose CSR on 2
         * threads where SELL ran 1.6x faster); and the converted kernel's first calls run
         * slower than its later ones. */
        if (!forcing && calls_left >= 4)
          run<T>(p, x.data(), y.data());
        if (!forcing && calls_left >= 3)
          csr_call();
        /* Forced: one timed call, for the explanation (and to run the kernel once before the caller). */
        Comparison cmp;
        if (forcing) {
          cmp.candidate = timed([&] { return run<T>(p, x.data(), y.data()); });
          cmp.rounds = 1;
        } else {
          cmp = compare([&] { return run<T>(p, x.data(), y.data()); }, csr_call, csr_time, plan_t0); /* y: scratch */
        }
        char form[160];
        if (c.kernel == spl_plan::Dia)
          std::snprintf(form, sizeof form, "%lld diagonals", (long long)p->diagonals.diagonals);
        else if (c.kernel == spl_plan::Bcsr)
          std::snprintf(form, sizeof form, "%lld x %lld blocks, %.2f values an entry", (long long)c.block, (long long)c.block,
                        static_cast<double>(p->blocked.blocks * c.block * c.block) / prof.entries);
        else
          std::snprintf(form, sizeof form, "C = %lld, window %lld rows, %.2f slots an entry", (long long)p->operands.lanes,
                        (long long)p->operands.sigma,
                        static_cast<double>(p->operands.slots * p->operands.lanes) / prof.entries);
        std::snprintf(line, sizeof line,
                      "%s (%s): converted in %.3f ms (%.1f CSR calls), %.3f ms a call against CSR's %.3f in the same rounds (%d)\n",
                      c.name, form, convert_time * 1e3, convert_time / csr_time, cmp.candidate * 1e3, csr_time * 1e3,
                      cmp.rounds);
        p->explanation += line;
        /* Kept when clearly faster, or when no slower where its gain is expected on the rows'
         * structure (a round of a noisy machine must not overrule a 1.3x expectation). */
        const bool kept = cmp.candidate >= 0 && (forcing || cmp.candidate <= kKeepMargin * csr_time ||
                                                 (c.gain >= kVaryingGain && cmp.candidate <= csr_time));
        if (kept) {
          p->bytes = (c.kernel == spl_plan::Dia    ? p->diagonals.bytes
                      : c.kernel == spl_plan::Bcsr ? p->blocked.bytes
                                                   : p->operands.bytes) +
                     static_cast<int64_t>(p->scratch.size());
          char repaid[80] = "never by its timing here, kept for its expected gain";
          if (forcing)
            std::snprintf(repaid, sizeof repaid, "whenever it is (SPL_PLAN_KERNEL=%s)", forced.text.c_str());
          else if (cmp.candidate < csr_time)
            std::snprintf(repaid, sizeof repaid, "after %.0f calls", convert_time / (csr_time - cmp.candidate));
          std::snprintf(line, sizeof line, "chose %s: %.2fx CSR's speed; its conversion is repaid %s; it holds %.1f MB\n",
                        c.name, csr_time / cmp.candidate, repaid, p->bytes / 1e6);
          p->explanation += line;
          if (!declined.empty()) /* what was passed over before it, as a plan of CSR says */
            p->explanation += "passed over before it: " + declined + "\n";
          break;
        }
        p->release();
        std::snprintf(line, sizeof line, cmp.candidate < 0 ? "the %s kernel failed on this matrix"
                                                           : "%s was not faster here (the copy is freed)", c.name);
        decline(line);
      }
      if (p->kernel == spl_plan::Csr)
        decide_csr((forcing ? "SPL_PLAN_KERNEL=" + forced.text + (forced.kernel == spl_plan::Csr ? "" : " does not fit here") +
                                  (declined.empty() ? "" : ": ")
                            : std::string()) +
                   (declined.empty() ? (forcing ? "" : "no other kernel fits this matrix") : declined));
    }
  } catch (...) {
    p->release();
    delete p;
    return SPL_ERR_ALLOC;
  }
  return finish(p, plan_t0, out);
}

/* A plan of y = A^T x. Over A's own arrays the product is a scatter into y (the compiler runs
 * it on one thread: rows of A add into the same entries of y); over A's transpose, converted once
 * (spl_csc_convert_*), it is a CSR SpMV, a gather that runs on the pool. So: the caller's
 * transposed kernel is timed; with calls enough to repay the conversion (kCscGain expected,
 * kCscConversionSpmvs calls of that kernel) and time left, the transpose is made and the CSR
 * kernel over it compared in rounds, as plan() does, and kept if faster. */
constexpr double kCscGain = 1.5;
constexpr double kCscConversionSpmvs = 4;

template <typename T>
int plan_transposed(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, int64_t hint_calls,
                    const typename Kernels<T>::TSet *kernels, spl_plan **out) {
  using K = Kernels<T>;
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  *out = nullptr;
  if (kernels == nullptr || kernels->transposed == nullptr || hint_calls < 0 || !valid_csr(n, m, offs, cols) ||
      (offs[n] != offs[0] && vals == nullptr))
    return SPL_ERR_BAD_INPUT;
  const int64_t entries = static_cast<int64_t>(offs[n]) - offs[0];
  const auto plan_t0 = std::chrono::steady_clock::now();
  spl_plan *p = new_plan(n, m, offs, cols, vals, reinterpret_cast<void *>(kernels->transposed), true);
  if (p == nullptr)
    return SPL_ERR_ALLOC;
  char line[512];
  try {
    std::snprintf(line, sizeof line, "spmv^T plan (%s): y = A^T x for A %lld x %lld, %lld entries; %d threads\n", K::name,
                  (long long)n, (long long)m, (long long)entries, spl_num_threads());
    p->explanation = line;
    auto decide_transposed = [&](const std::string &why) {
      p->kernel = spl_plan::Transposed;
      p->explanation += "chose A^T x over A: " + why + "\n";
    };
    if (kernels->csr == nullptr || n == 0 || m == 0 || entries == 0) {
      decide_transposed(kernels->csr == nullptr ? "no CSR kernel was given for a transposed copy" : "nothing to convert");
    } else {
      std::vector<T> x(static_cast<size_t>(n), T(1)), y(static_cast<size_t>(m));
      auto own_call = [&] { return kernels->transposed(n, m, offs, cols, vals, x.data(), y.data()); };
      double own_time = best_of_two(own_call);
      if (own_time < 0) {
        delete p;
        return SPL_ERR_BAD_INPUT;
      }
      const double repay_calls = kCscConversionSpmvs / (1 - 1 / kCscGain);
      std::snprintf(line, sizeof line,
                    "A^T x over A: %.3f ms a call; CSR over the transpose (CSC) expected %.2fx, a conversion repaid after "
                    "about %.0f calls\n",
                    own_time * 1e3, kCscGain, repay_calls);
      p->explanation += line;
      if (static_cast<double>(hint_calls) < repay_calls) {
        std::snprintf(line, sizeof line, "%lld expected calls would not repay a conversion to CSC", (long long)hint_calls);
        decide_transposed(line);
      } else if (seconds_since(plan_t0) + (kCscConversionSpmvs + 2) * own_time > budget(own_time)) {
        decide_transposed("no planning time left to try CSC");
      } else {
        const auto c0 = std::chrono::steady_clock::now();
        if (int rc = K::convert_csc(n, m, offs, cols, vals, &p->transpose); rc != SPL_OK) {
          p->release();
          delete p;
          return rc;
        }
        const double convert_time = seconds_since(c0);
        p->gather = reinterpret_cast<void *>(kernels->csr);
        p->kernel = spl_plan::Csc;
        const Comparison cmp = compare([&] { return run<T>(p, x.data(), y.data()); }, own_call, own_time, plan_t0);
        std::snprintf(line, sizeof line,
                      "CSC: converted in %.3f ms (%.1f calls of A^T x over A), %.3f ms a call against %.3f in the same "
                      "rounds (%d)\n",
                      convert_time * 1e3, convert_time / own_time, cmp.candidate * 1e3, own_time * 1e3, cmp.rounds);
        p->explanation += line;
        if (cmp.candidate >= 0 && cmp.candidate <= kKeepMargin * own_time) {
          p->bytes = p->transpose.bytes;
          std::snprintf(line, sizeof line,
                        "chose CSC: %.2fx the speed of A^T x over A; its conversion is repaid after %.0f calls; it holds "
                        "%.1f MB\n",
                        own_time / cmp.candidate, convert_time / (own_time - cmp.candidate), p->bytes / 1e6);
          p->explanation += line;
        } else {
          p->release();
          decide_transposed(cmp.candidate < 0 ? "the CSR kernel failed on the transpose"
                                              : "CSR over the transpose was not faster here (the copy is freed)");
        }
      }
    }
  } catch (...) {
    p->release();
    delete p;
    return SPL_ERR_ALLOC;
  }
  return finish(p, plan_t0, out);
}

} // namespace
} // namespace spl_rt

int spl_spmv_plan_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals, int64_t hint_calls,
                      const spl_spmv_kernels_f64 *kernels, spl_plan **plan) {
  return spl_rt::plan<double>(n, m, offs, cols, vals, hint_calls, kernels, plan);
}

int spl_spmv_plan_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals, int64_t hint_calls,
                      const spl_spmv_kernels_f32 *kernels, spl_plan **plan) {
  return spl_rt::plan<float>(n, m, offs, cols, vals, hint_calls, kernels, plan);
}

int spl_spmv_t_plan_f64(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const double *vals,
                        int64_t hint_calls, const spl_spmv_t_kernels_f64 *kernels, spl_plan **plan) {
  return spl_rt::plan_transposed<double>(n, m, offs, cols, vals, hint_calls, kernels, plan);
}

int spl_spmv_t_plan_f32(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const float *vals,
                        int64_t hint_calls, const spl_spmv_t_kernels_f32 *kernels, spl_plan **plan) {
  return spl_rt::plan_transposed<float>(n, m, offs, cols, vals, hint_calls, kernels, plan);
}

int spl_spmv_run_f64(const spl_plan *plan, const double *x, double *y) { return spl_rt::run<double>(plan, x, y); }

int spl_spmv_run_f32(const spl_plan *plan, const float *x, float *y) { return spl_rt::run<float>(plan, x, y); }

const char *spl_plan_explain(const spl_plan *plan) { return plan ? plan->explanation.c_str() : ""; }

int64_t spl_plan_bytes(const spl_plan *plan) { return plan ? plan->bytes : 0; }

const char *spl_plan_kernel(const spl_plan *plan) {
  if (!plan)
    return "";
  switch (plan->kernel) {
  case spl_plan::Sell: return "sell";
  case spl_plan::Dia: return "dia";
  case spl_plan::Bcsr: return "bcsr";
  case spl_plan::Transposed: return "csr-t";
  case spl_plan::Csc: return "csc";
  case spl_plan::Csr: break;
  }
  return "csr";
}

void spl_plan_free(spl_plan *plan) {
  if (!plan)
    return;
  plan->release();
  delete plan;
}
