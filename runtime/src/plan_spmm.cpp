/* plan_spmm.cpp: spl_spmm_plan_*, spl_spmm_run_*: C = A B for a CSR matrix A and a dense B of k
 * columns (row-major), with a kernel chosen once per matrix and k (issue 25 item 4,
 * docs/plans.md).
 *
 * The caller gives its CSR arrays, k and the kernels it compiled (stdlib/spmm.spl): one for any
 * k and, for some widths, a CSR kernel of that k and BCSR kernels of it. A kernel of fixed k
 * keeps a row's k sums in registers across the row's entries, where the kernel of any k adds
 * each term into C in memory (pwtk, f64, one thread, 2026-11-28: 1.9-2.3x at k = 1 to 16); a
 * BCSR kernel also meets each block's values with b rows of B and of C in registers (2.4-3.3x
 * the kernel of any k at k = 1 to 8 on pwtk's dense blocks). Planning:
 *   1. the matrix is inspected (plan.h's inspect_csr: it also checks the arrays); when there is
 *      nothing to compute, or no entry of the table has width k and no panels are tried (3b),
 *      the caller's kernel is the plan, untimed;
 *   2. the caller's kernel is timed (best of two calls on B = 1, into a C the plan owns);
 *   3b. without kernels of width k: B's and C's columns in panels of the widths the table has
 *      (the fewest panels, widest first: k = 9 as 8 + 1, 100 as 64 + 32 + 4), each run in place
 *      by its width's CSR kernel (row strides ldb = ldc = k), tried where rows hold at least
 *      kPanelsMinMeanRow entries on average, compared in rounds and kept if faster by
 *      kKeepMargin;
 *   3. the CSR kernel of width k, which needs no conversion, is compared with it in rounds
 *      (plan.h's compare) and becomes the kernel to beat if faster by kKeepMargin;
 *   4. BCSR: plan.h's bcsr_candidate counts blocks on a sample and expects the bytes' gain of
 *      the size that moves the fewest (B and C counted, and no discount where the matrix fits in
 *      the last-level cache: the gain held there measures 1.2-1.5x over the CSR kernel of the
 *      same width, from registers, not bytes); it is converted when hint_calls repay its
 *      conversion (kBcsrConversionSpmvs SpMVs, an SpMV's bytes against this product's) and the
 *      budget (kBudgetSpmvs calls of the caller's kernel) holds it, compared with the kernel to
 *      beat, and kept if faster by kKeepMargin.
 * SPL_PLAN_KERNEL (csr, csr-w, csr-panels, bcsr, bcsrB) forces a kernel where it exists, as for an SpMV.
 *
 * Assumes: what plan.cpp assumes (the arrays outlive the plan, one run at a time per plan: BCSR
 * pads B in the plan's scratch where b does not divide m). Planning times the kernels on a B and
 * a C of its own, as large as the caller's (m x k and n x k), freed when it returns.
 */
#include "plan.h"

#include <cstdlib>

#include "inspect.h"

namespace spl_rt {
namespace {

/* Panels: at most this many (each reads A once more; with widths up to 64, k up to 1024 is
 * covered). */
constexpr int64_t kMaxPanels = 16;
/* Panels are tried where rows hold this many entries on average: a panel keeps a row's sums in
 * registers across its entries, which pays for reading A once a panel only over long rows
 * (2026-11-29, k = 9 and 13, both precisions, one and two threads: kept in all 16 configurations
 * of pwtk and cant, 53 and 64 entries a row, 1.1-1.9x; in none of thermal2, ecology1,
 * web-Google and roadNet-CA, 3 to 7, where their planning also cost up to 45 calls at k = 100). */
constexpr double kPanelsMinMeanRow = 16;

/* BCSR over the whole block rows, from a padded copy of B where b does not divide m; the rows
 * past the last whole block row by a CSR kernel over the caller's arrays (of width k if given). */
template <typename T> int run_spmm_bcsr(const spl_plan *p, const T *B, T *C) {
  using K = Kernels<T>;
  const spl_bcsr_operands &o = p->blocked;
  const int64_t k = p->width, whole = p->n / o.block, rest = whole * o.block;
  const T *B_read = B;
  if (!p->scratch.empty()) {
    T *padded = reinterpret_cast<T *>(const_cast<char *>(p->scratch.data()));
    std::copy(B, B + p->m * k, padded); /* the rows past m stay zero */
    B_read = padded;
  }
  int rc = SPL_OK;
  if (whole > 0)
    rc = reinterpret_cast<typename K::BcsrFn>(p->bcsr)(whole, o.block_cols, o.offs, static_cast<const T *>(o.vals), o.bcols,
                                                       B_read, C);
  if (rc != SPL_OK || rest == p->n)
    return rc;
  const int64_t first = static_cast<int64_t>(p->offs[rest]) - p->offs[0];
  const T *vals = static_cast<const T *>(p->vals) + first;
  if (p->fixed != nullptr)
    return reinterpret_cast<typename K::SpmmWidthFn>(p->fixed)(p->n - rest, p->m, p->offs + rest, vals, p->cols + first, B, k,
                                                              C + rest * k, k);
  return reinterpret_cast<typename K::SpmmFn>(p->csr)(p->n - rest, p->m, k, p->offs + rest, vals, p->cols + first, B,
                                                      C + rest * k);
}

/* C = A B by panels of B's and C's columns, each by the CSR kernel of its width in place (its
 * rows w wide at a stride of k). */
template <typename T> int run_spmm_panels(const spl_plan *p, const T *B, T *C) {
  using K = Kernels<T>;
  const int64_t k = p->width;
  int64_t first = 0;
  for (const spl_plan::Panel &panel : p->panels) {
    const int rc = reinterpret_cast<typename K::SpmmWidthFn>(panel.kernel)(p->n, p->m, p->offs, static_cast<const T *>(p->vals),
                                                                          p->cols, B + first, k, C + first, k);
    if (rc != SPL_OK)
      return rc;
    first += panel.width;
  }
  return SPL_OK;
}

/* The panels of k columns by the table's CSR kernels: the fewest (each reads A once more),
 * wider ones first; none where their widths cannot add up to k or more than kMaxPanels would. */
template <typename Set> std::vector<spl_plan::Panel> panels_for(const Set &kernels, int64_t k) {
  std::vector<spl_plan::Panel> given;
  for (const auto &e : kernels.widths)
    if (e.width > 0 && e.csr != nullptr)
      given.push_back({e.width, reinterpret_cast<void *>(e.csr)});
  std::sort(given.begin(), given.end(), [](const spl_plan::Panel &a, const spl_plan::Panel &b) { return a.width > b.width; });
  if (given.empty() || k < 2 || k > kMaxPanels * given.front().width)
    return {};
  /* fewest[r]: the fewest panels that add up to r columns; step[r]: the widest first panel of
   * those (an index into given) */
  const size_t columns = static_cast<size_t>(k);
  std::vector<int64_t> fewest(columns + 1, INT64_MAX);
  std::vector<size_t> step(columns + 1, 0);
  fewest[0] = 0;
  for (size_t r = 1; r <= columns; ++r)
    for (size_t g = 0; g < given.size(); ++g) {
      const size_t w = static_cast<size_t>(given[g].width);
      if (w <= r && fewest[r - w] != INT64_MAX && fewest[r - w] + 1 < fewest[r]) {
        fewest[r] = fewest[r - w] + 1;
        step[r] = g;
      }
    }
  std::vector<spl_plan::Panel> out;
  if (fewest[columns] > kMaxPanels)
    return out;
  for (size_t r = columns; r > 0; r -= static_cast<size_t>(out.back().width))
    out.push_back(given[step[r]]);
  std::sort(out.begin(), out.end(), [](const spl_plan::Panel &a, const spl_plan::Panel &b) { return a.width > b.width; });
  return out;
}

template <typename T> int run_spmm(const spl_plan *p, const T *B, T *C) {
  using K = Kernels<T>;
  if (p == nullptr || p->element != sizeof(T) || !p->spmm)
    return SPL_ERR_BAD_INPUT;
  const int64_t k = p->width;
  if ((p->n > 0 && k > 0 && C == nullptr) || (p->m > 0 && k > 0 && B == nullptr))
    return SPL_ERR_BAD_INPUT;
  switch (p->kernel) {
  case spl_plan::CsrWidth:
    return reinterpret_cast<typename K::SpmmWidthFn>(p->fixed)(p->n, p->m, p->offs, static_cast<const T *>(p->vals), p->cols,
                                                              B, k, C, k);
  case spl_plan::Bcsr:
    return run_spmm_bcsr(p, B, C);
  case spl_plan::CsrPanels:
    return run_spmm_panels(p, B, C);
  default:
    return reinterpret_cast<typename K::SpmmFn>(p->csr)(p->n, p->m, k, p->offs, static_cast<const T *>(p->vals), p->cols,
                                                        B, C);
  }
}

/* The widths of the table's entries, for the explanation ("1 2 4"; "none"). */
template <typename Set> std::string widths_given(const Set &kernels) {
  std::string out;
  for (const auto &e : kernels.widths)
    if (e.width > 0)
      out += (out.empty() ? "" : " ") + std::to_string(e.width);
  return out.empty() ? "none" : out;
}

template <typename T>
int plan_spmm(int64_t n, int64_t m, int64_t k, const int32_t *offs, const int32_t *cols, const T *vals, int64_t hint_calls,
              const typename Kernels<T>::SpmmSet *kernels, spl_plan **out) {
  using K = Kernels<T>;
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  *out = nullptr;
  if (kernels == nullptr || kernels->csr == nullptr || hint_calls < 0 || k < 0)
    return SPL_ERR_BAD_INPUT;
  for (const auto &e : kernels->widths) {
    if (e.width < 0)
      return SPL_ERR_BAD_INPUT;
    for (const auto &bk : e.bcsr)
      if (bk.kernel != nullptr && (bk.block < 1 || bk.block > kMaxPlanBlock))
        return SPL_ERR_BAD_INPUT;
  }
  const PlanClock clock;
  spl_csr_profile prof;
  if (int rc = inspect_csr(n, m, offs, cols, kColumnSample, &prof); rc != SPL_OK)
    return rc;
  if (prof.entries > 0 && vals == nullptr)
    return SPL_ERR_BAD_INPUT;
  if (k > 0 && (n > INT64_MAX / k || m > INT64_MAX / k))
    return SPL_ERR_BAD_INPUT;
  spl_plan *p = new_plan(n, m, offs, cols, vals, reinterpret_cast<void *>(kernels->csr), false);
  if (p == nullptr)
    return SPL_ERR_ALLOC;
  p->spmm = true;
  p->width = k;
  char line[512];
  try {
    std::snprintf(line, sizeof line,
                  "spmm plan (%s): C = A B, A %lld x %lld with %lld entries (rows %lld..%lld long, mean %.1f), B of %lld "
                  "columns; %d threads; inspected in %.3f ms\n",
                  K::name, (long long)n, (long long)m, (long long)prof.entries, (long long)prof.min_row,
                  (long long)prof.max_row, prof.mean_row, (long long)k, prof.threads, clock.spent() * 1e3);
    p->explanation = line;
    const Forced forced = forced_kernel();
    if (forced.set && !forced.known)
      p->explanation += "SPL_PLAN_KERNEL=" + forced.text + " names no kernel (csr, csr-w, csr-panels, bcsr, bcsrB): ignored\n";
    const bool forcing = forced.set && forced.known;
    auto wanted = [&](spl_plan::Kernel kind) { return !forcing || forced.kernel == kind; };
    /* The table's entry of width k: its kernels are the candidates. */
    const typename K::SpmmWidth *entry = nullptr;
    for (const auto &e : kernels->widths)
      if (k > 0 && e.width == k && entry == nullptr)
        entry = &e;
    bool bcsr_available = false;
    for (int b = 0; entry != nullptr && b < SPL_PLAN_BLOCK_SIZES; ++b)
      bcsr_available = bcsr_available || (entry->bcsr[b].kernel != nullptr && entry->bcsr[b].block >= 1);
    const bool own_kernels = entry != nullptr && (entry->csr != nullptr || bcsr_available);
    /* Without kernels of width k: the CSR kernels of narrower widths over panels of B. */
    std::vector<spl_plan::Panel> panels = own_kernels ? std::vector<spl_plan::Panel>{} : panels_for(*kernels, k);
    std::string panels_skipped;
    if (!panels.empty() && prof.mean_row < kPanelsMinMeanRow && !(forcing && forced.kernel == spl_plan::CsrPanels)) {
      std::snprintf(line, sizeof line, ", and panels of narrower widths were not tried (rows of %.1f entries on average)",
                    prof.mean_row);
      panels_skipped = line;
      panels.clear();
    }
    std::string chosen = "CSR of any width", why;
    if (k == 0 || n == 0 || prof.entries == 0) {
      why = "nothing to compute";
    } else if (!own_kernels && (panels.empty() || !wanted(spl_plan::CsrPanels))) {
      std::snprintf(line, sizeof line, "no kernels of width %lld were given (widths given: %s)%s", (long long)k,
                    widths_given(*kernels).c_str(),
                    !panels_skipped.empty() ? panels_skipped.c_str() : panels.empty() ? ", nor widths that add up to it" : "");
      why = line;
    } else {
      PlanVector<T> B(static_cast<size_t>(m * k), T(1)), C(static_cast<size_t>(n * k), T(0));
      auto any_call = [&] { return kernels->csr(n, m, k, offs, vals, cols, B.data(), C.data()); };
      auto plan_call = [&] { return run_spmm<T>(p, B.data(), C.data()); };
      double any_time = best_of_two(any_call);
      if (any_time < 0) {
        delete p;
        return SPL_ERR_BAD_INPUT;
      }
      std::snprintf(line, sizeof line, "CSR of any width: %.3f ms a call\n", any_time * 1e3);
      p->explanation += line;
      /* The kernel to beat: the caller's, or the CSR kernel of width k once it won. */
      spl_plan::Kernel best = spl_plan::Csr;
      double best_time = any_time;
      std::string declined;
      auto decline = [&](const std::string &d) { declined += (declined.empty() ? "" : "; ") + d; };
      if (!panels.empty()) {
        std::string widths;
        for (const spl_plan::Panel &panel : panels)
          widths += (widths.empty() ? "" : " + ") + std::to_string(panel.width);
        p->panels = panels;
        p->kernel = spl_plan::CsrPanels;
        const Comparison cmp = compare_unless_forced(forcing, plan_call, any_call, any_time, clock);
        std::snprintf(line, sizeof line,
                      "CSR in panels of B's and C's columns %s wide (no kernels of width %lld; A read once a panel): %.3f "
                      "ms a call against %.3f in the same rounds (%d)\n",
                      widths.c_str(), (long long)k, cmp.candidate * 1e3, any_time * 1e3, cmp.rounds);
        p->explanation += line;
        if (cmp.candidate >= 0 && (forcing || cmp.candidate <= kKeepMargin * any_time)) {
          best = spl_plan::CsrPanels;
          best_time = cmp.candidate;
          chosen = "CSR in panels " + widths;
          std::snprintf(line, sizeof line, "%.2fx the speed of CSR of any width", any_time / cmp.candidate);
          why = line;
        } else {
          p->release();
          decline(cmp.candidate < 0 ? "the panels' kernels failed on this matrix" : "CSR in panels " + widths + " was not faster here");
        }
      }
      if (own_kernels && entry->csr != nullptr && wanted(spl_plan::CsrWidth)) {
        p->fixed = reinterpret_cast<void *>(entry->csr);
        p->kernel = spl_plan::CsrWidth;
        const Comparison cmp = compare_unless_forced(forcing, plan_call, any_call, any_time, clock);
        std::snprintf(line, sizeof line, "CSR of width %lld (a row's sums in registers): %.3f ms a call against %.3f in the "
                      "same rounds (%d)\n", (long long)k, cmp.candidate * 1e3, any_time * 1e3, cmp.rounds);
        p->explanation += line;
        if (cmp.candidate >= 0 && (forcing || cmp.candidate <= kKeepMargin * any_time)) {
          best = spl_plan::CsrWidth;
          best_time = cmp.candidate;
          chosen = "CSR of width " + std::to_string(k);
          std::snprintf(line, sizeof line, "%.2fx the speed of CSR of any width", any_time / cmp.candidate);
          why = line;
        } else {
          p->kernel = spl_plan::Csr;
          decline(cmp.candidate < 0 ? "the CSR kernel of width " + std::to_string(k) + " failed on this matrix"
                                    : "the CSR kernel of width " + std::to_string(k) + " was not faster here");
        }
      }
      if (own_kernels && bcsr_available && wanted(spl_plan::Bcsr)) {
        Candidate c{spl_plan::Bcsr, "BCSR", 0, kBcsrConversionSpmvs, ""};
        std::string not_tried;
        if (int rc = bcsr_candidate<T>(n, m, offs, cols, prof, entry->bcsr, k, forcing, forced.block, c, not_tried);
            rc != SPL_OK) {
          delete p;
          return rc;
        }
        if (!not_tried.empty()) {
          not_tried.pop_back(); /* its line's end */
          decline(not_tried);
        }
        if (c.block > 0) {
          /* The conversion costs kBcsrConversionSpmvs SpMVs; an SpMV moves the matrix and two
           * vectors, this product the matrix and k columns of each: in calls of the kernel to
           * beat, as if both ran at the same bandwidth (an SpMM call that runs slower than its
           * bytes makes the conversion cheaper still). */
          const double vector_bytes = static_cast<double>(n + m) * sizeof(T);
          const double spmv_bytes = static_cast<double>(K::csr_bytes(prof));
          const double conversion_calls = kBcsrConversionSpmvs * spmv_bytes / (spmv_bytes + vector_bytes * static_cast<double>(k - 1));
          const double repay_calls = conversion_calls / (1 - 1 / c.gain);
          std::snprintf(line, sizeof line, "BCSR: %s: expected %.2fx, a conversion repaid after about %.0f calls\n",
                        c.expectation.c_str(), c.gain, repay_calls);
          p->explanation += line;
          if (!forcing && static_cast<double>(hint_calls) < repay_calls) {
            std::snprintf(line, sizeof line, "%lld expected calls would not repay a conversion to BCSR", (long long)hint_calls);
            decline(line);
          } else if (!forcing && clock.over((conversion_calls + 2 + kReleaseSpmvs) * best_time, any_time)) {
            decline("no planning time left to try BCSR");
          } else {
            const Deadline timed(clock.conversion_deadline(any_time, best_time));
            const auto c0 = std::chrono::steady_clock::now();
            int rc = K::convert_bcsr(n, m, offs, cols, vals, c.block, forcing ? Deadline::none() : timed, &p->blocked);
            if (rc == SPL_OK && m % c.block != 0) /* B padded with zero rows, which the runs keep */
              p->scratch.assign(static_cast<size_t>(p->blocked.block_cols * c.block * k) * sizeof(T), 0);
            const double convert_time = seconds_since(c0);
            if (rc == kStoppedAtDeadline) {
              p->release();
              p->kernel = best;
              std::snprintf(line, sizeof line, "BCSR's conversion stopped at planning's deadline, after %.3f ms (%.1f calls)",
                            convert_time * 1e3, convert_time / best_time);
              decline(line);
            } else if (rc == SPL_ERR_ALLOC) {
              p->release();
              p->kernel = best;
              decline("BCSR cannot hold this matrix (over 2^31 blocks, or no memory for the copy)");
            } else if (rc != SPL_OK) {
              p->release();
              delete p;
              return rc;
            } else {
              p->bcsr = c.block_kernel;
              p->kernel = spl_plan::Bcsr;
              const spl_plan::Kernel beaten = best;
              auto best_call = [&] {
                spl_plan::Kernel now = p->kernel;
                p->kernel = beaten;
                const int r = run_spmm<T>(p, B.data(), C.data());
                p->kernel = now;
                return r;
              };
              /* Calls until the copy settles in the cache (plan.h's settle), untimed for the rounds. */
              const int settling = forcing ? 0 : std::abs(settle(plan_call, best_time, clock));
              const Comparison cmp = compare_unless_forced(forcing, plan_call, best_call, best_time, clock);
              std::snprintf(line, sizeof line,
                            "BCSR (%lld x %lld blocks, %.2f values an entry): converted in %.3f ms (%.1f calls), %.3f ms a "
                            "call against %.3f in the same rounds (%d, after %d calls to settle)\n",
                            (long long)c.block, (long long)c.block,
                            static_cast<double>(p->blocked.blocks * c.block * c.block) / prof.entries, convert_time * 1e3,
                            convert_time / best_time, cmp.candidate * 1e3, best_time * 1e3, cmp.rounds, settling);
              p->explanation += line;
              if (cmp.candidate >= 0 && (forcing || cmp.candidate <= kKeepMargin * best_time)) {
                p->bytes = p->blocked.bytes + static_cast<int64_t>(p->scratch.size());
                chosen = "BCSR";
                std::snprintf(line, sizeof line, "%.2fx the speed of CSR of any width; its conversion is repaid %s; it holds %.1f MB",
                              any_time / cmp.candidate,
                              forcing ? "whenever it is (forced)"
                                      : (std::string("after ") + std::to_string(static_cast<long long>(
                                                                   convert_time / (best_time - cmp.candidate) + 0.5)) +
                                         " calls").c_str(),
                              p->bytes / 1e6);
                why = line;
              } else {
                p->release();
                p->kernel = best;
                decline(cmp.candidate < 0 ? "the BCSR kernel failed on this matrix" : "BCSR was not faster here (the copy is freed)");
              }
            }
          }
        }
      }
      if (p->kernel == spl_plan::Csr)
        why = declined.empty() ? "no other kernel fits this matrix" : declined;
      else if (!declined.empty())
        why += "; passed over: " + declined;
    }
    if (forcing && forced.kernel != p->kernel)
      why = "SPL_PLAN_KERNEL=" + forced.text + " does not fit here: " + why;
    p->explanation += "chose " + chosen + ": " + why + "\n";
  } catch (...) {
    p->release();
    delete p;
    return SPL_ERR_ALLOC;
  }
  return finish(p, clock, out);
}

} // namespace
} // namespace spl_rt

int spl_spmm_plan_f64(int64_t n, int64_t m, int64_t k, const int32_t *offs, const int32_t *cols, const double *vals,
                      int64_t hint_calls, const spl_spmm_kernels_f64 *kernels, spl_plan **plan) {
  return spl_rt::plan_spmm<double>(n, m, k, offs, cols, vals, hint_calls, kernels, plan);
}

int spl_spmm_plan_f32(int64_t n, int64_t m, int64_t k, const int32_t *offs, const int32_t *cols, const float *vals,
                      int64_t hint_calls, const spl_spmm_kernels_f32 *kernels, spl_plan **plan) {
  return spl_rt::plan_spmm<float>(n, m, k, offs, cols, vals, hint_calls, kernels, plan);
}

int spl_spmm_run_f64(const spl_plan *plan, const double *B, double *C) { return spl_rt::run_spmm<double>(plan, B, C); }

int spl_spmm_run_f32(const spl_plan *plan, const float *B, float *C) { return spl_rt::run_spmm<float>(plan, B, C); }
