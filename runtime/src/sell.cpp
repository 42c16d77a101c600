/* sell.cpp: spl_sell_sizes and spl_sell_build_*, the inspector that turns a CSR matrix into the
 * SELL-C-sigma operands of stdlib/spmv.spl's spmv_sell_rows (Kreutzer et al., SISC 2014), and
 * spl_sell_pick_sigma, which of two windows to build with (by their padding).
 *
 * Rows are sorted by decreasing length (ties in row order) within windows of sigma rows; each
 * window's sorted rows are cut into slices of `lanes` rows, each slice as wide as its first
 * (longest) row, stored slot-major. sigma must be a multiple of lanes, so that a window is whole
 * slices: spmv_sell_rows gathers a window's slice results back to its rows through wpos (a row's
 * lane counted from its window's first lane) and needs them in the window.
 *
 * Two calls, as for generated NAME_size functions: spl_sell_sizes gives the slices and slots to
 * allocate, spl_sell_build_* fills them. Both sort only lengths or row indices of one window at a
 * time; windows are independent, so the build runs them on the pool (the slot offsets, a prefix
 * over all slices, come first, on the calling thread).
 *
 * Assumes: offs has n + 1 entries; cols and vals hold the entries offs[0] .. offs[n] (row i at
 * offs[i] - offs[0] + k, as the CSR kernels read them). Checked: sizes and arguments, monotone
 * offsets (SPL_ERR_BAD_INPUT), total slots within int32 (SPL_ERR_ALLOC). Columns are copied, not
 * checked (the kernels' --checked builds check them).
 */
#include "export.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <numeric>
#include <vector>

namespace spl_rt {
namespace {

constexpr int64_t kMaxLanes = 1024;

bool valid_shape(int64_t n, const int32_t *offs, int64_t lanes, int64_t sigma) {
  return n >= 0 && offs != nullptr && lanes >= 1 && lanes <= kMaxLanes && sigma >= lanes && sigma % lanes == 0;
}

bool monotone(int64_t n, const int32_t *offs) {
  for (int64_t i = 0; i < n; ++i)
    if (offs[i + 1] < offs[i])
      return false;
  return true;
}

/* The widths of the slices of window [w0, w1): its lengths sorted longest first, every lanes-th. */
void window_widths(const int32_t *offs, int64_t w0, int64_t w1, int64_t lanes, std::vector<int64_t> &lens,
                   int64_t *width_out) {
  lens.clear();
  for (int64_t i = w0; i < w1; ++i) /* in 64 bits: offsets may span the whole int32 range */
    lens.push_back(static_cast<int64_t>(offs[i + 1]) - offs[i]);
  std::sort(lens.begin(), lens.end(), [](int64_t a, int64_t b) { return a > b; });
  for (size_t k = 0; k < lens.size(); k += static_cast<size_t>(lanes))
    width_out[k / static_cast<size_t>(lanes)] = lens[k];
}

/* Slot offsets of every slice into soffs (slices + 1 entries); false when they pass INT32_MAX. */
bool slot_offsets(int64_t n, const int32_t *offs, int64_t lanes, int64_t sigma, int32_t *soffs) {
  const int64_t per_window = sigma / lanes;
  std::vector<int64_t> lens, widths(static_cast<size_t>(per_window));
  int64_t total = 0;
  soffs[0] = 0;
  for (int64_t w0 = 0, s = 0; w0 < n; w0 += sigma) {
    const int64_t w1 = std::min(n, w0 + sigma);
    window_widths(offs, w0, w1, lanes, lens, widths.data());
    for (int64_t k = 0; k < (w1 - w0 + lanes - 1) / lanes; ++k, ++s) {
      total += widths[static_cast<size_t>(k)];
      if (total > INT32_MAX)
        return false;
      soffs[s + 1] = static_cast<int32_t>(total);
    }
  }
  return true;
}

template <typename T> struct Build {
  int64_t n, lanes, sigma;
  const int32_t *offs, *cols;
  const T *vals;
  const int32_t *soffs;
  int32_t *scols;
  T *svals;
  int32_t *wpos;
  std::atomic<bool> out_of_memory{false};

  /* Fills windows [begin, end): sorts the window's rows, writes their slots and wpos. Runs on
   * pool threads, where an exception must not escape: a failed allocation is recorded. */
  static void run(void *closure, int64_t begin, int64_t end) {
    Build &b = *static_cast<Build *>(closure);
    try {
      std::vector<int64_t> rows;
      for (int64_t w = begin; w < end; ++w)
        b.window(w, rows);
    } catch (...) {
      b.out_of_memory = true;
    }
  }

  void window(int64_t w, std::vector<int64_t> &rows) const {
    const int64_t w0 = w * sigma, w1 = std::min(n, w0 + sigma);
    rows.resize(static_cast<size_t>(w1 - w0));
    std::iota(rows.begin(), rows.end(), w0);
    auto len = [&](int64_t r) { return static_cast<int64_t>(offs[r + 1]) - offs[r]; };
    std::stable_sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) { return len(a) > len(b); });
    const int64_t lanes_in_window = (w1 - w0 + lanes - 1) / lanes * lanes;
    for (int64_t q = 0; q < lanes_in_window; ++q) {
      const int64_t s = (w0 + q) / lanes, l = (w0 + q) % lanes;
      const int64_t width = soffs[s + 1] - soffs[s];
      T *sv = svals + static_cast<int64_t>(soffs[s] - soffs[0]) * lanes + l;
      int32_t *sc = scols + static_cast<int64_t>(soffs[s] - soffs[0]) * lanes + l;
      int64_t filled = 0;
      if (q < w1 - w0) {
        const int64_t r = rows[static_cast<size_t>(q)], at = static_cast<int64_t>(offs[r]) - offs[0];
        filled = len(r);
        for (int64_t t = 0; t < filled; ++t) {
          sv[t * lanes] = vals[at + t];
          sc[t * lanes] = cols[at + t];
        }
        wpos[r] = static_cast<int32_t>(q);
      } else {
        wpos[w0 + q] = static_cast<int32_t>(q); /* a lane past the last row: its own place */
      }
      for (int64_t t = filled; t < width; ++t) {
        sv[t * lanes] = T(0);
        sc[t * lanes] = 0;
      }
    }
  }
};

template <typename T>
int build(int64_t n, const int32_t *offs, const int32_t *cols, const T *vals, int64_t lanes, int64_t sigma,
          int32_t *soffs, int32_t *scols, T *svals, int32_t *wpos) {
  if (!valid_shape(n, offs, lanes, sigma) || soffs == nullptr || (n > 0 && wpos == nullptr))
    return SPL_ERR_BAD_INPUT;
  if (!monotone(n, offs))
    return SPL_ERR_BAD_INPUT;
  try {
    if (!slot_offsets(n, offs, lanes, sigma, soffs))
      return SPL_ERR_ALLOC;
    const int64_t slices = (n + lanes - 1) / lanes;
    if (soffs[slices] > 0 && (scols == nullptr || svals == nullptr))
      return SPL_ERR_BAD_INPUT;
    if (offs[n] > offs[0] && (cols == nullptr || vals == nullptr))
      return SPL_ERR_BAD_INPUT;
    Build<T> b{n, lanes, sigma, offs, cols, vals, soffs, scols, svals, wpos};
    const int64_t windows = (n + sigma - 1) / sigma;
    if (windows <= 1 || spl_num_threads() == 1) {
      Build<T>::run(&b, 0, windows);
    } else {
      spl_parallel_for(0, windows, 16, &Build<T>::run, &b);
    }
    if (b.out_of_memory)
      return SPL_ERR_ALLOC;
  } catch (...) {
    return SPL_ERR_ALLOC;
  }
  return SPL_OK;
}

} // namespace
} // namespace spl_rt

int spl_sell_sizes(int64_t n, const int32_t *offs, int64_t lanes, int64_t sigma, int64_t *slices, int64_t *slots) {
  if (!spl_rt::valid_shape(n, offs, lanes, sigma) || slices == nullptr || slots == nullptr)
    return SPL_ERR_BAD_INPUT;
  if (!spl_rt::monotone(n, offs))
    return SPL_ERR_BAD_INPUT;
  try {
    const int64_t ns = (n + lanes - 1) / lanes;
    std::vector<int32_t> soffs(static_cast<size_t>(ns + 1));
    if (!spl_rt::slot_offsets(n, offs, lanes, sigma, soffs.data()))
      return SPL_ERR_ALLOC;
    *slices = ns;
    *slots = soffs[static_cast<size_t>(ns)];
  } catch (...) {
    return SPL_ERR_ALLOC;
  }
  return SPL_OK;
}

int spl_sell_pick_sigma(int64_t n, const int32_t *offs, int64_t lanes, int64_t narrow, int64_t wide, int64_t *sigma) {
  if (sigma == nullptr || narrow > wide || !spl_rt::valid_shape(n, offs, lanes, wide))
    return SPL_ERR_BAD_INPUT;
  int64_t slices = 0, narrowSlots = 0, wideSlots = 0;
  if (int rc = spl_sell_sizes(n, offs, lanes, narrow, &slices, &narrowSlots); rc != SPL_OK)
    return rc;
  if (int rc = spl_sell_sizes(n, offs, lanes, wide, &slices, &wideSlots); rc != SPL_OK)
    return rc;
  *sigma = static_cast<double>(narrowSlots) > SPL_SELL_WIDE_FILL * static_cast<double>(wideSlots) ? wide : narrow;
  return SPL_OK;
}

int spl_sell_build_f32(int64_t n, const int32_t *offs, const int32_t *cols, const float *vals, int64_t lanes,
                       int64_t sigma, int32_t *soffs, int32_t *scols, float *svals, int32_t *wpos) {
  return spl_rt::build(n, offs, cols, vals, lanes, sigma, soffs, scols, svals, wpos);
}

int spl_sell_build_f64(int64_t n, const int32_t *offs, const int32_t *cols, const double *vals, int64_t lanes,
                       int64_t sigma, int32_t *soffs, int32_t *scols, double *svals, int32_t *wpos) {
  return spl_rt::build(n, offs, cols, vals, lanes, sigma, soffs, scols, svals, wpos);
}
