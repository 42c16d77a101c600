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
 *      (mean from kLongSteadyRows) and, in f64, matrices whose rows mostly hold kShortRows or
 *      more when the CSR kernel runs rows as masked vectors (csr_masked_rows), where it is
 *      not tried;
 *   4. in order of that gain, a candidate is converted only when hint_calls could repay its
 *      conversion (kDiaConversionSpmvs, kBcsrConversionSpmvs, kConversionSpmvs CSR calls expected; SELL measured
 *      3.6-10 over the suite since its counting sort, 2026-11-28) and planning has time left
 *      for it. SELL-C-sigma is sized first and not filled when it would pad past kMaxSellFill
 *      slots an entry (kMaxLongRowsSellFill where only kRegularGain is expected), whatever the
 *      time, its fill then estimated at kSellSpmvsPerFill CSR calls
 *      a slot an entry. A conversion that left less than two calls of budget is dropped untimed.
 *      After calls of the converted kernel until its time settles (its first calls run slow
 *      while its copy settles in the cache: plan.h's settle) and an untimed call of CSR (the
 *      conversion leaves its copy in cache, dirty), as the budget allows, the converted kernel and CSR are
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
#include "plan.h"

#include "csr_arrays.h"
#include "inspect.h"

#include <cstdlib>

namespace spl_rt {
namespace {

constexpr double kVaryingRows = 0.3;     /* length_changes at which row exits mispredict */
constexpr double kShortRows = 32;        /* mean row under which a mispredicted exit weighs */
constexpr double kVaryingGain = 1.3;     /* SELL over CSR expected on short rows of changing length */
constexpr double kRegularGain = 1.05;    /* and on rows of predictable length */
constexpr double kConversionSpmvs = 8;   /* a SELL conversion in CSR calls, expected before its sizing (3.6-10 measured) */
constexpr double kDiaMinGain = 1.15;     /* DIA tried when CSR moves this many times its bytes */
constexpr double kDiaConversionSpmvs = 6;/* a DIA conversion in CSR calls, expected (count, mark, fill) */
constexpr double kLongSteadyRows = 256;  /* rows of steady length this long leave SELL nothing to gain */
constexpr double kSellSpmvsPerFill = 4; /* a SELL fill, in CSR calls per slot an entry (4.4-6.7 measured on
                                          * the Xeon: roadNet-CA, webbase-1M, web-Google, kron_g500, dense-row;
                                          * 2.5-3.1 on the Zen 5: varied-powerlaw, where 6 left no time to try
                                          * the copy that ran 1.8-2.3x CSR's speed). On the low side: a fill
                                          * that runs longer stops at planning's deadline (deadline.h) */
constexpr double kMaxSellFill = 2.5;     /* SELL padded past this many slots an entry is not filled */
constexpr double kMaxLongRowsSellFill = 1.25; /* nor, on rows expected at kRegularGain, past this many */
constexpr double kMaxBasisOverRows = 1.5; /* the caller's CSR call counted at most this many row kernel calls */
constexpr double kShortRowsRevert = 1.25; /* a kernel of short rows chosen by the structure, kept unless this much slower in rounds */
constexpr int64_t kRowKernelCalls = 20; /* a CSR row kernel timed from this many expected calls (its rounds
                                          * cost 2-6 calls, which a gain of 3-30% a call repays) */
constexpr int64_t kUnknownL2Bytes = 1 << 20; /* a core's L2 where the system does not tell (x larger
                                              * than the L2 misses it where rows gather it at
                                              * scattered columns: csr_prefetch is timed) */
constexpr double kScatteredGathers = 0.5; /* the share of entries scattered from which, with x larger than
                                           * a core's L2, the scalar row loops are timed on long rows too */


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
  if (p == nullptr || p->element != sizeof(T) || p->spmm)
    return SPL_ERR_BAD_INPUT;
  const int64_t x_len = p->transposed ? p->n : p->m, y_len = p->transposed ? p->m : p->n;
  if ((y_len > 0 && y == nullptr) || (x_len > 0 && x == nullptr))
    return SPL_ERR_BAD_INPUT;
  switch (p->kernel) {
  case spl_plan::Csr:
  case spl_plan::CsrWidth: /* an SpMM's only: refused above */
  case spl_plan::CsrPanels:
  case spl_plan::Transposed: /* the same C type: the caller's kernel over A's arrays */
    return reinterpret_cast<typename K::CsrFn>(p->csr)(p->n, p->m, p->offs, p->cols, static_cast<const T *>(p->vals), x, y);
  case spl_plan::Csc: {
    if (p->copy_plan != nullptr) /* the copy's own plan: x has n entries and y m, as its A's m and n */
      return run<T>(p->copy_plan, x, y);
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


template <typename T>
int plan(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, int64_t hint_calls,
         const typename Kernels<T>::Set *kernels, spl_plan **out, double cap = -1, bool quiet = false) {
  using K = Kernels<T>;
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  *out = nullptr;
  if (kernels == nullptr || kernels->csr == nullptr || hint_calls < 0)
    return SPL_ERR_BAD_INPUT;
  for (const auto &bk : kernels->bcsr)
    if (bk.kernel != nullptr && (bk.block < 1 || bk.block > kMaxPlanBlock))
      return SPL_ERR_BAD_INPUT;
  PlanClock clock;
  clock.cap = cap;
  spl_csr_profile prof;
  if (int rc = inspect_csr(n, m, offs, cols, kColumnSample, &prof); rc != SPL_OK)
    return rc;
  const double inspect_time = clock.spent();
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
                  "L2 %lld KB%s; inspected in %.3f ms\n",
                  K::name, (long long)n, (long long)m, (long long)prof.entries, (long long)prof.min_row,
                  (long long)prof.max_row, prof.mean_row, prof.cv_row, 100 * prof.length_changes, 100 * prof.scattered,
                  (long long)kColumnSample, prof.threads,
                  (long long)((prof.l2_bytes > 0 ? prof.l2_bytes : kUnknownL2Bytes) >> 10),
                  prof.l2_bytes > 0 ? "" : " (not told: assumed)", inspect_time * 1e3);
    p->explanation = line;
    const bool sell_available = kernels->sell_narrow != nullptr && kernels->sell_wide != nullptr;
    const bool dia_available = kernels->dia != nullptr;
    bool bcsr_available = false;
    for (const auto &bk : kernels->bcsr)
      bcsr_available = bcsr_available || (bk.kernel != nullptr && bk.block >= 1);
    const bool short_available = kernels->csr_short != nullptr;
    auto decide_csr = [&](const std::string &why) {
      p->kernel = spl_plan::Csr;
      p->explanation += std::string("chose ") + spl_plan::csr_rows_name(p->csr_rows) + ": " + why + "\n";
    };
    const Forced forced = forced_kernel();
    if (forced.set && !forced.known)
      p->explanation += "SPL_PLAN_KERNEL=" + forced.text + " names no kernel (csr, csr-short, csr-two-sums, csr-prefetch, sell, dia, bcsr, bcsrB; csr-w, csr-panels for an SpMM): ignored\n";
    const bool forcing = forced.set && forced.known;
    auto wanted = [&](spl_plan::Kernel k) { return !forcing || forced.kernel == k; };
    const bool two_sums_available = kernels->csr_two_sums != nullptr;
    const bool prefetch_available = kernels->csr_prefetch != nullptr;
    const int64_t l2_bytes = prof.l2_bytes > 0 ? prof.l2_bytes : kUnknownL2Bytes;
    const bool x_outgrows_l2 = m * static_cast<int64_t>(sizeof(T)) > l2_bytes;
    const bool scattered_gathers = x_outgrows_l2 && prof.scattered >= kScatteredGathers;
    const bool scalar_rows = prof.mean_row < kShortRows || scattered_gathers; /* the row kernels' rows (below) */
    const bool any_available =
        short_available || two_sums_available || prefetch_available || sell_available || dia_available || bcsr_available;
    if (!any_available || n == 0 || prof.entries == 0) {
      decide_csr(!any_available ? "no other kernel was given" : "nothing to convert");
    } else {
      /* The kernel of short rows (csr_short: each row one plain scalar loop) is CSR's from the
       * start where rows hold under kShortRows entries on average and the CSR kernel does not run
       * them as masked vectors: there the versions of the row loop (loopir/SegmentVersioning.h)
       * cost more per row than they save, as most rows never reach their vector or partial sums.
       * On a 2-core AMD EPYC (Zen 5, 2026-11-30; stdlib's kernels, f64, one thread, calls back to
       * back, in the same process) every matrix of the suite with rows that short ran faster so:
       * email-Enron 0.13 against 0.18 ms, varied-uniform 13.1 against 15.7, roadNet-CA 7.6
       * against 8.3, ecology1 1.14 against 1.26, cop20k_A 0.89 against 0.96, cit-Patents 21.3
       * against 22.0, while rows of 50 entries and more lost 10-80% (pwtk 2.41 against 2.10,
       * dense2 1.14 against 0.63). Decided by the structure, not by timing: a plan's single
       * calls, one kernel after the other, did not show what calls back to back do on a small
       * matrix (email-Enron: 0.193 ms each), and the candidates below are then timed against it;
       * only a kernel of short rows that its first calls show far slower is timed in rounds
       * against CSR (kShortRowsRevert, below). */
      if (short_available &&
          (forcing ? forced.rows == spl_plan::ShortRows : !kernels->csr_masked_rows && prof.mean_row < kShortRows)) {
        p->csr = reinterpret_cast<void *>(kernels->csr_short);
        p->csr_rows = spl_plan::ShortRows;
        if (forcing)
          std::snprintf(line, sizeof line, "CSR of short rows (each row one scalar loop): SPL_PLAN_KERNEL=csr-short\n");
        else
          std::snprintf(line, sizeof line, "CSR of short rows (each row one scalar loop): rows of %.1f entries on average, under "
                        "%.0f, on a CSR kernel without masked rows: its versions of the row loop cost more than they save\n",
                        prof.mean_row, kShortRows);
        p->explanation += line;
      } else if (two_sums_available && forcing && forced.rows == spl_plan::TwoSumRows) {
        p->csr = reinterpret_cast<void *>(kernels->csr_two_sums);
        p->csr_rows = spl_plan::TwoSumRows;
        p->explanation += "CSR of two partial sums (each row one scalar loop): SPL_PLAN_KERNEL=csr-two-sums\n";
      } else if (prefetch_available && forcing && forced.rows == spl_plan::PrefetchRows) {
        p->csr = reinterpret_cast<void *>(kernels->csr_prefetch);
        p->csr_rows = spl_plan::PrefetchRows;
        p->explanation += "CSR of short rows, gathers prefetched (each row one scalar loop): SPL_PLAN_KERNEL=csr-prefetch\n";
      } else if (short_available && !forcing && !kernels->csr_masked_rows) {
        std::snprintf(line, sizeof line, "CSR of short rows not taken: rows of %.1f entries on average (from %.0f CSR's versions of "
                      "the row loop run them faster)%s\n", prof.mean_row, kShortRows,
                      scattered_gathers ? "; timed against it, as most entries are scattered and x is larger than the L2" : "");
        p->explanation += line;
      }
      /* One CSR call's time, on x = 1 (and a y the plan owns). */
      const double before_vectors = clock.spent();
      PlanVector<T> x(static_cast<size_t>(m), T(1)), y(static_cast<size_t>(n), T(0));
      const double vectors_time = clock.spent() - before_vectors;
      auto csr_call = [&] { return reinterpret_cast<typename K::CsrFn>(p->csr)(n, m, offs, cols, vals, x.data(), y.data()); };
      double csr_time = best_of_two(csr_call);
      if (csr_time < 0) {
        delete p;
        return SPL_ERR_BAD_INPUT;
      }
      /* Planning's budget stays in calls of the caller's CSR kernel when the plan runs the
       * kernel of short rows (budget's basis): one call of it, after the short kernel's, which
       * warmed x, y and the matrix. Counted in the faster kernel's calls, the budget had shrunk
       * by as much as that kernel gained, and left no time to convert to SELL-C-sigma
       * (varied-scattered on two threads, 2-core EPYC: 0.98x Eigen in CSR of short rows, where
       * the run before it had kept SELL-C-sigma at 1.43x). */
      double basis = 0, measured_basis = 0;
      if (p->csr_rows != spl_plan::CallersRows) {
        basis = measured_basis = timed([&] { return kernels->csr(n, m, offs, cols, vals, x.data(), y.data()); });
        if (basis < 0) {
          delete p;
          return SPL_ERR_BAD_INPUT;
        }
        /* One timed call, where a disturbance of the machine weighs whole: CSR's own call took
         * 124 ms once where its calls take 17 (varied-powerlaw f64, one thread, the 2-core
         * EPYC), and the budget grew 7x with it. The row kernels gain 10-25% over it. */
        basis = std::min(basis, kMaxBasisOverRows * csr_time);
        clock.basis = basis;
        std::snprintf(line, sizeof line,
                      "%s: %.3f ms a call (CSR's own %.3f ms, the budget's unit; the plan's x and y written in %.3f ms)\n",
                      spl_plan::csr_rows_name(p->csr_rows), csr_time * 1e3, basis * 1e3, vectors_time * 1e3);
      } else {
        std::snprintf(line, sizeof line, "CSR: %.3f ms a call (the plan's x and y written in %.3f ms)\n", csr_time * 1e3,
                      vectors_time * 1e3);
      }
      p->explanation += line;
      /* The structure's choice, checked: where the kernel of short rows took more than
       * kShortRowsRevert times the caller's CSR call, the two are timed in rounds (a plan's
       * first calls also wake the pool's threads and fault the plan's vectors in, which the
       * kernel timed first pays), and the rows go back to CSR where those keep it that much
       * slower. Rows of 8 entries on average beside one of all 250,000 columns (the suite's
       * dense-row, f64, 2-core AMD EPYC Zen 4, 2026-12-03): the short rows' kernel ran 5.37 ms a
       * call against CSR's 3.59 on one thread, 4.32 against 2.44 on two, and the plan had kept
       * it (0.58x Eigen's speed). */
      bool short_rows_timed = false;
      if (!forcing && p->csr_rows == spl_plan::ShortRows && measured_basis > 0 && csr_time > kShortRowsRevert * measured_basis) {
        auto callers_call = [&] { return kernels->csr(n, m, offs, cols, vals, x.data(), y.data()); };
        double callers_time = measured_basis;
        const Comparison cmp = compare(csr_call, callers_call, callers_time, clock, FirstInRound::Csr);
        short_rows_timed = true;
        std::snprintf(line, sizeof line, "%s: %.3f ms a call against %.3f of CSR in the same rounds (%d)\n",
                      spl_plan::csr_rows_name(p->csr_rows), cmp.candidate * 1e3, callers_time * 1e3, cmp.rounds);
        p->explanation += line;
        if (cmp.candidate < 0) {
          delete p;
          return SPL_ERR_BAD_INPUT;
        }
        if (cmp.candidate > kShortRowsRevert * callers_time) {
          std::snprintf(line, sizeof line, "%s not kept: %.2fx CSR's time (over %.2fx)\n", spl_plan::csr_rows_name(p->csr_rows),
                        cmp.candidate / callers_time, kShortRowsRevert);
          p->explanation += line;
          p->csr = reinterpret_cast<void *>(kernels->csr);
          p->csr_rows = spl_plan::CallersRows;
          clock.basis = 0;
          csr_time = callers_time;
        } else {
          csr_time = std::min(csr_time, cmp.candidate);
        }
      }

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
        if (int rc = bcsr_candidate<T>(n, m, offs, cols, prof, kernels->bcsr, 0, forcing, forced.block, best, not_tried);
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
      /* In f64, where most rows hold kShortRows entries or more and the CSR kernel runs them as
       * masked vectors (loopir/SegmentVersioning.h; kernels->csr_masked_rows), SELL-C-sigma's
       * 8 lanes ran no faster on any of them, changing length or not (2-core Xeon, 2026-11-28, in the
       * plans' own rounds: rma10 0.72x, cant 0.62x, consph 0.67x, shipsec1 0.90x, pwtk 0.99x,
       * pdb1HYS 0.61x, conf5_4-8x8-05 0.58x; the suite's plans kept it twice, pwtk 1.16x Eigen
       * against CSR's 1.18x and rma10 0.91x against 1.08x), while its conversion took 6-10 of
       * planning's 20 calls. In f32 its 16 lanes gain there (rma10: 1.67x CSR), and so do its 8
       * where the CSR kernel's rows are not masked vectors (2-core EPYC, Zen 5, where splc
       * compiles them scalar: rma10 in f64 0.42 ms in SELL against 0.59 in CSR). */
      int64_t long_rows = 0; /* rows of kShortRows (32 = 2^5: length bucket 6 on) entries or more */
      for (int b = 6; b < SPL_CSR_LENGTH_BUCKETS; ++b)
        long_rows += prof.length_buckets[b];
      const bool long_f64_rows = sizeof(T) == sizeof(double) && 2 * long_rows >= n && kernels->csr_masked_rows;
      if (sell_wanted && !forcing && !changing && prof.mean_row >= kLongSteadyRows) {
        std::snprintf(line, sizeof line, "SELL-C-sigma not tried: rows of steady length, %.0f entries on average\n",
                      prof.mean_row);
        p->explanation += line;
      } else if (sell_wanted && !forcing && long_f64_rows) {
        std::snprintf(line, sizeof line, "SELL-C-sigma not tried: %.0f%% of rows hold %.0f entries or more, in f64 (CSR's masked "
                      "rows run them as fast)\n", 100.0 * static_cast<double>(long_rows) / static_cast<double>(n), kShortRows);
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
      /* Where CSR stays and its own kernel runs, the row kernels the structure did not decide
       * are timed against it in rounds (compare) and run in its place when faster by
       * kKeepMargin, from kRowKernelCalls expected calls: the kernel of short rows where CSR runs
       * masked rows (an Intel AVX-512 CPU) and rows hold under kShortRows entries on average;
       * the kernel of two partial sums where they hold kShortRows to kLongSteadyRows. Two
       * partial sums on every row, without versions, ran rows of 50 to 100 entries faster on a
       * 2-core AMD EPYC (Zen 5, f64, one thread, 2026-11-30: kron_g500-logn18 10.1 against
       * 11.2 ms, consph 1.02 against 1.15, pwtk 1.97 against 2.10, shipsec1 1.31 against 1.46;
       * rma10 0.54 against 0.61), and rows of thousands slower (rail4284 6.3 against 5.0).
       * Last, where rows are short and x larger than a core's L2, the kernel of short rows
       * whose gathers prefetch x 128 entries ahead (csr_prefetch), against whichever CSR kernel
       * runs then: their misses overlap where x misses the caches (Zen 5, f64, against csr_short:
       * cit-Patents, soc-LiveJournal1, wiki-Talk 1.11-1.19x), and the hints cost where it does
       * not (hollywood-2009, x 1.3 MB: 0.83x; varied-powerlaw in a C loop 0.83x), which only a
       * timing tells apart. Where most entries lie far from the diagonal and x is larger than a
       * core's L2, the kernels of one scalar loop a row are timed on rows of any length: each
       * gather misses the L2 there, and the vector row loop of a CPU without fast gathers
       * (AVX2's inserts, two loads a lane) waits on more of them at once than the scalar loop
       * (rail4284, rows of 2,633 entries over 546,305 columns, 96% scattered, f64, 2-core AMD
       * EPYC Zen 3, 2026-12-01: CSR 0.85-0.88x Eigen's speed on one and two threads, the short
       * rows' kernel 0.96-0.97x, its prefetching one 0.95-0.97x). The sample's share decides
       * only whether they are timed; their rounds decide whether they run. There the kernel of
       * short rows is timed before the conversions, which are then compared against the kernel
       * chosen (a SELL-C-sigma conversion tried first on those long rows, 1.05x expected, ran
       * into planning's deadline and left the row kernels no time: rail4284, f64, one thread),
       * and the prefetching one after them, as time allows (timed before them too, its rounds
       * had left SELL-C-sigma no time in f32, where it ran 1.44x CSR's speed). */
      struct RowKernel {
        typename K::CsrFn fn;
        spl_plan::CsrRows rows;
        bool fits;
        bool over_short; /* timed against the kernel of short rows too, not only the caller's */
      };
      const RowKernel row_kernels[] = {
          {kernels->csr_short, spl_plan::ShortRows, scalar_rows, false},
          {kernels->csr_two_sums, spl_plan::TwoSumRows, prof.mean_row >= kShortRows && prof.mean_row < kLongSteadyRows, false},
          {kernels->csr_prefetch, spl_plan::PrefetchRows, scalar_rows && x_outgrows_l2, true}};
      bool row_kernel_timed[3] = {short_rows_timed, false, false};
      auto time_row_kernels = [&](size_t count) { /* the first `count` of row_kernels */
        for (size_t i = 0; i < count; ++i) {
          const RowKernel &r = row_kernels[i];
          const char *const name = spl_plan::csr_rows_name(r.rows);
          const bool against_current =
              p->csr_rows == spl_plan::CallersRows || (r.over_short && p->csr_rows == spl_plan::ShortRows);
          if (p->kernel != spl_plan::Csr || !against_current || forcing || r.fn == nullptr || !r.fits || row_kernel_timed[i])
            continue;
          row_kernel_timed[i] = true;
          if (hint_calls < kRowKernelCalls) {
            std::snprintf(line, sizeof line, "%lld expected calls would not repay timing %s (from %lld)", (long long)hint_calls,
                          name, (long long)kRowKernelCalls);
            decline(line);
            continue;
          }
          if (clock.over(2 * csr_time, csr_time)) {
            decline(std::string("no planning time left to time ") + name);
            continue;
          }
          auto row_call = [&] { return r.fn(n, m, offs, cols, vals, x.data(), y.data()); };
          const Comparison cmp = compare(row_call, csr_call, csr_time, clock, FirstInRound::Csr);
          std::snprintf(line, sizeof line, "%s (each row one scalar loop): %.3f ms a call against %.3f of %s in the same rounds (%d)\n",
                        name, cmp.candidate * 1e3, csr_time * 1e3, spl_plan::csr_rows_name(p->csr_rows),
                        cmp.rounds);
          p->explanation += line;
          if (cmp.candidate >= 0 && cmp.candidate <= kKeepMargin * csr_time) {
            /* The budget stays in calls of the kernel timed first (the caller's CSR, or its basis). */
            clock.basis = std::max(clock.basis, csr_time);
            p->csr = reinterpret_cast<void *>(r.fn);
            p->csr_rows = r.rows;
            csr_time = cmp.candidate; /* what the conversions after it must beat */
          } else {
            decline(std::string(name) + (cmp.candidate < 0 ? " failed on this matrix" : " was not faster here"));
          }
        }
      };
      if (p->kernel == spl_plan::Csr && prof.mean_row >= kShortRows && scattered_gathers)
        time_row_kernels(1);
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
          /* Long rows gain little from SELL-C-sigma (kRegularGain), and its padding costs more:
           * kron_g500-logn18's power-law rows (mean 81) padded to 1.69 slots an entry ran 0.63x CSR
           * in f64 after a conversion of 9.4 CSR calls; where SELL won on long rows (rma10 in f32,
           * pwtk in f64 once) it stored 1.04-1.05. */
          if (!forcing && c.gain < kVaryingGain && fill > kMaxLongRowsSellFill) {
            std::snprintf(line, sizeof line,
                          "SELL-C-sigma would store %.2f slots an entry (over %.2f, which rows this long do not repay), not "
                          "converted", fill, kMaxLongRowsSellFill);
            decline(line);
            continue;
          }
          /* The fill writes every slot: its own estimate in place of kConversionSpmvs. */
          conversion_calls = kSellSpmvsPerFill * fill;
        }
        /* The conversion and a round should fit the budget (checked again after the
         * conversion, whose time is then known, before the untimed calls). */
        if (!forcing && clock.over((conversion_calls + 2 + kReleaseSpmvs) * csr_time, csr_time)) {
          std::snprintf(line, sizeof line, "no planning time left to try %s (about %.0f CSR calls to convert, %.1f of the "
                        "budget's %.1f ms spent)", c.name, conversion_calls, clock.spent() * 1e3, clock.budget(csr_time) * 1e3);
          decline(line);
          continue;
        }
        /* The conversion gives up where it would leave no time for a round and the copy's
         * release (deadline.h: its first touch can cost several times the estimate). */
        const Deadline timed(clock.conversion_deadline(csr_time, csr_time));
        const Deadline &deadline = forcing ? Deadline::none() : timed;
        const auto c0 = std::chrono::steady_clock::now();
        int rc;
        if (c.kernel == spl_plan::Dia) {
          rc = K::convert_dia(n, m, offs, cols, vals, dia_offsets, deadline, &p->diagonals);
          p->dia = reinterpret_cast<void *>(kernels->dia);
        } else if (c.kernel == spl_plan::Bcsr) {
          rc = K::convert_bcsr(n, m, offs, cols, vals, c.block, deadline, &p->blocked);
          p->bcsr = c.block_kernel;
          if (rc == SPL_OK && m % c.block != 0) /* x padded with zeros, which the runs keep */
            p->scratch.assign(static_cast<size_t>(p->blocked.block_cols * c.block) * sizeof(T), 0);
          if (rc == SPL_ERR_ALLOC) {
            p->release();
            decline("BCSR cannot hold this matrix (over 2^31 blocks, or no memory for the copy)");
            continue;
          }
        } else {
          rc = sell_fill(n, offs, cols, vals, shape, &p->operands, deadline);
          const spl_sell_operands &s = p->operands;
          p->sell = reinterpret_cast<void *>(s.sigma == kernels->narrow ? kernels->sell_narrow : kernels->sell_wide);
          if (rc == SPL_OK)
            p->scratch.resize(static_cast<size_t>(std::max<int64_t>(std::min(s.slices * s.lanes, s.sigma), 1)) * sizeof(T));
        }
        const double convert_time = seconds_since(c0);
        if (rc == kStoppedAtDeadline) {
          p->release();
          std::snprintf(line, sizeof line, "%s's conversion stopped at planning's deadline, after %.3f ms (%.1f CSR calls)",
                        c.name, convert_time * 1e3, convert_time / csr_time);
          decline(line);
          continue;
        }
        if (rc != SPL_OK) {
          p->release();
          delete p;
          return rc;
        }
        p->kernel = c.kernel;
        /* What the budget still holds once the conversion's real time is known, in CSR calls
         * (a copy's release kept aside). Not a round: the copy is dropped untimed. */
        const double calls_left = clock.calls_left(csr_time) - kReleaseSpmvs;
        if (!forcing && calls_left < 2) {
          p->release();
          std::snprintf(line, sizeof line, "%s converted in %.3f ms (%.1f CSR calls), no planning time left to time it",
                        c.name, convert_time * 1e3, convert_time / csr_time);
          decline(line);
          continue;
        }
        /* The converted kernel's calls until they settle (plan.h's settle), then an untimed
         * call of CSR, as the budget allows. The conversion leaves the cache full of the copy
         * it wrote, dirty: CSR's first call would pay its write-back (thermal2's 510 MB mirror
         * against this VM's 260 MiB L3: one round chose CSR on 2 threads where SELL ran 1.6x
         * faster). */
        int settling = 0;
        if (!forcing)
          settling = std::abs(settle([&] { return run<T>(p, x.data(), y.data()); }, csr_time, clock));
        if (!forcing && clock.calls_left(csr_time) - kReleaseSpmvs >= 3)
          csr_call();
        const Comparison cmp = compare_unless_forced(forcing, [&] { return run<T>(p, x.data(), y.data()); }, csr_call, csr_time,
                                                     clock); /* y: scratch */
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
                      "%s (%s): converted in %.3f ms (%.1f CSR calls), %.3f ms a call against CSR's %.3f in the same rounds (%d, "
                      "after %d calls to settle)\n",
                      c.name, form, convert_time * 1e3, convert_time / csr_time, cmp.candidate * 1e3, csr_time * 1e3,
                      cmp.rounds, settling);
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
        time_row_kernels(3);
      if (p->kernel == spl_plan::Csr)
        decide_csr((forcing ? "SPL_PLAN_KERNEL=" + forced.text + (forced.kernel == spl_plan::Csr ? "" : " does not fit here") +
                                  (declined.empty() ? "" : ": ")
                            : std::string()) +
                   (declined.empty() ? (forcing ? "" : p->csr_rows != spl_plan::CallersRows ? "faster than CSR here, and no other kernel fits this matrix"
                                                                      : "no other kernel fits this matrix")
                                     : declined));
    }
  } catch (...) {
    p->release();
    delete p;
    return SPL_ERR_ALLOC;
  }
  return finish(p, clock, out, quiet);
}

/* A plan of y = A^T x. Over A's own arrays the product is a scatter into y (the compiler runs
 * it on one thread: rows of A add into the same entries of y); over A's transpose, converted once
 * (spl_csc_convert_*), it is a CSR SpMV, a gather that runs on the pool. So: the caller's
 * transposed kernel is timed; with calls enough to repay the conversion (kCscGain expected,
 * kCscConversionSpmvs calls of that kernel) and time left, the transpose is made and the CSR
 * kernel over it compared in rounds, as plan() does, and kept if faster. Where the caller gave
 * the kernels of a plan of the copy (TSet::copy), plan() runs on the copy first, within what is
 * left of this budget (its `cap`), and its chosen kernel is the one compared. */
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
  const PlanClock clock;
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
      PlanVector<T> x(static_cast<size_t>(n), T(1)), y(static_cast<size_t>(m), T(0));
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
      /* SPL_PLAN_KERNEL naming a kernel of the copy's plan (sell, dia, bcsr[B]) converts
       * whatever the calls or the time, and the copy's plan takes that kernel. */
      const Forced forced = forced_kernel();
      const bool forcing = kernels->copy != nullptr && forced.set && forced.known &&
                           (forced.kernel == spl_plan::Sell || forced.kernel == spl_plan::Dia || forced.kernel == spl_plan::Bcsr);
      if (!forcing && static_cast<double>(hint_calls) < repay_calls) {
        std::snprintf(line, sizeof line, "%lld expected calls would not repay a conversion to CSC", (long long)hint_calls);
        decide_transposed(line);
      } else if (!forcing && clock.over((kCscConversionSpmvs + 2) * own_time, own_time)) {
        decide_transposed("no planning time left to try CSC");
      } else {
        const Deadline timed(clock.conversion_deadline(own_time, own_time));
        const auto c0 = std::chrono::steady_clock::now();
        const int rc = K::convert_csc(n, m, offs, cols, vals, forcing ? Deadline::none() : timed, &p->transpose);
        const double convert_time = seconds_since(c0);
        if (rc == kStoppedAtDeadline) {
          p->release();
          std::snprintf(line, sizeof line,
                        "CSC's conversion stopped at planning's deadline, after %.3f ms (%.1f calls of A^T x over A)",
                        convert_time * 1e3, convert_time / own_time);
          decide_transposed(line);
        } else if (rc != SPL_OK) {
          p->release();
          delete p;
          return rc;
        } else {
          p->gather = reinterpret_cast<void *>(kernels->csr);
          p->kernel = spl_plan::Csc;
          std::snprintf(line, sizeof line, "CSC: converted in %.3f ms (%.1f calls of A^T x over A)\n", convert_time * 1e3,
                        convert_time / own_time);
          p->explanation += line;
          /* The copy is a CSR matrix of its own (m x n): where the caller gave the kernels, its
           * own plan chooses among CSR, SELL-C-sigma, DIA and BCSR for it, within what is left of
           * this plan's budget (a round against A^T x over A and a release kept aside). */
          if (kernels->copy != nullptr) {
            typename K::Set copy = *kernels->copy;
            if (copy.csr == nullptr)
              copy.csr = kernels->csr;
            const double cap = clock.budget(own_time) - clock.spent() - (2 + kReleaseSpmvs) * own_time;
            if (forcing || cap > 0) {
              const spl_csc_operands &t = p->transpose;
              if (int rc = plan<T>(m, n, t.offs, t.rows_idx, static_cast<const T *>(t.vals), hint_calls, &copy, &p->copy_plan,
                                   forcing ? -1 : cap, /*quiet=*/true);
                  rc != SPL_OK) {
                p->release();
                delete p;
                return rc;
              }
              p->explanation += "the copy's own plan:\n";
              const std::string &nested = p->copy_plan->explanation;
              for (size_t at = 0; at < nested.size();) { /* its lines, indented */
                const size_t end = std::min(nested.find('\n', at), nested.size());
                p->explanation += "  " + nested.substr(at, end - at) + "\n";
                at = end + 1;
              }
            } else {
              p->explanation += "no planning time left for the copy's own plan: CSR over it\n";
            }
          }
          const Comparison cmp =
              compare_unless_forced(forcing, [&] { return run<T>(p, x.data(), y.data()); }, own_call, own_time, clock);
          std::snprintf(line, sizeof line, "CSC (%s over the copy): %.3f ms a call against %.3f in the same rounds (%d)\n",
                        p->copy_plan != nullptr ? spl_plan_kernel(p->copy_plan) : "csr", cmp.candidate * 1e3, own_time * 1e3,
                        cmp.rounds);
          p->explanation += line;
          if (cmp.candidate >= 0 && (forcing || cmp.candidate <= kKeepMargin * own_time)) {
            p->bytes = p->transpose.bytes + (p->copy_plan != nullptr ? p->copy_plan->bytes : 0);
            char repaid[80] = "whenever it is (SPL_PLAN_KERNEL)";
            if (!forcing || cmp.candidate < own_time)
              std::snprintf(repaid, sizeof repaid, "after %.0f calls", convert_time / (own_time - cmp.candidate));
            std::snprintf(line, sizeof line,
                          "chose CSC: %.2fx the speed of A^T x over A; its conversion is repaid %s; it holds %.1f MB\n",
                          own_time / cmp.candidate, repaid, p->bytes / 1e6);
            p->explanation += line;
          } else {
            p->release();
            decide_transposed(cmp.candidate < 0 ? "the kernel over the transpose failed"
                                                : "the kernel over the transpose was not faster here (the copy is freed)");
          }
        }
      }
    }
  } catch (...) {
    p->release();
    delete p;
    return SPL_ERR_ALLOC;
  }
  return finish(p, clock, out);
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
  if (plan->kernel == spl_plan::Csr && plan->csr_rows != spl_plan::CallersRows)
    return plan->csr_rows == spl_plan::ShortRows ? "csr-short" : plan->csr_rows == spl_plan::TwoSumRows ? "csr-two-sums" : "csr-prefetch";
  switch (plan->kernel) {
  case spl_plan::Sell: return "sell";
  case spl_plan::Dia: return "dia";
  case spl_plan::Bcsr: return "bcsr";
  case spl_plan::Transposed: return "csr-t";
  case spl_plan::Csc: return "csc";
  case spl_plan::CsrWidth: return "csr-w";
  case spl_plan::CsrPanels: return "csr-panels";
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
