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
 * over all slices, come first, on the calling thread). spl_sell_convert_* is the one-call
 * conversion: both candidate windows sized in one pass over nested windows, the window picked
 * (sell_shape), the operands allocated uncleared and filled (sell_fill; issue 25: a conversion
 * must cost few SpMVs). A plan makes the two steps itself, to see the padding before the fill.
 *
 * Assumes: offs has n + 1 entries; cols and vals hold the entries offs[0] .. offs[n] (row i at
 * offs[i] - offs[0] + k, as the CSR kernels read them). Checked: sizes and arguments, monotone
 * offsets (SPL_ERR_BAD_INPUT), total slots within int32 (SPL_ERR_ALLOC). Columns are copied, not
 * checked (the kernels' --checked builds check them).
 */
#include "export.h"

#include "csr_arrays.h"
#include "sell.h"

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

/* The rows of a window [w0, w1) in SELL-C-sigma's order: longest first, ties in row order (what
 * a stable sort gives). A counting sort when the window's lengths span a range not much wider
 * than its rows (the common case: comparison sorts were two thirds of a conversion on roadNet's
 * rows of 1 to 12 entries), a comparison sort otherwise. Its buffers are reused across windows. */
class WindowOrder {
public:
  /* Sorts [w0, w1); rows() and length(q) then give the q-th row and its length. */
  void sort(const int32_t *offs, int64_t w0, int64_t w1) {
    if (count_lengths(offs, w0, w1))
      place_by_count(w0);
    else
      place_by_comparison(w0);
  }
  const std::vector<int64_t> &rows() const { return rows_; }
  int64_t length(size_t q) const { return lens_[static_cast<size_t>(rows_[q] - w0_)]; }

  /* The widths of the slices of [w0, w1) (its lengths longest first, every lanes-th) into
   * width_out, without placing the rows where the lengths are counted: the count of each length
   * says which length each lanes-th position holds. Sizing both windows' slices so took 2.9 ms
   * where the sort's placement had taken 6.9 (thermal2's 614,023 rows, one thread, 2-core AMD
   * EPYC Zen 3: more than a CSR call, 6.8 ms), and its rows were not needed. */
  void widths(const int32_t *offs, int64_t w0, int64_t w1, int64_t lanes, int64_t *width_out) {
    if (!count_lengths(offs, w0, w1)) {
      place_by_comparison(w0);
      for (size_t k = 0; k < rows_.size(); k += static_cast<size_t>(lanes))
        width_out[k / static_cast<size_t>(lanes)] = length(k);
      return;
    }
    /* Positions [at, at + by_[d + 1]) of the sorted window hold length longest_ - d. */
    int64_t at = 0, slice = 0;
    for (size_t d = 0; d + 1 < by_.size(); ++d) {
      at += by_[d + 1];
      for (; slice * lanes < at; ++slice)
        width_out[slice] = longest_ - static_cast<int64_t>(d);
    }
  }

private:
  /* Reads the window's lengths into lens_ and, where they span a range not much wider than its
   * rows, counts them (by_[d + 1]: the rows of length longest_ - d) and says so; false where a
   * comparison sort is the cheaper way. */
  bool count_lengths(const int32_t *offs, int64_t w0, int64_t w1) {
    const size_t count = static_cast<size_t>(w1 - w0);
    lens_.resize(count);
    int64_t shortest = INT64_MAX;
    longest_ = 0;
    for (size_t k = 0; k < count; ++k) { /* in 64 bits: offsets may span the whole int32 range */
      const int64_t r = w0 + static_cast<int64_t>(k);
      lens_[k] = static_cast<int64_t>(offs[r + 1]) - offs[r];
      shortest = std::min(shortest, lens_[k]);
      longest_ = std::max(longest_, lens_[k]);
    }
    const int64_t span = count == 0 ? 0 : longest_ - shortest + 1;
    if (span > 4 * static_cast<int64_t>(count) + 64)
      return false;
    by_.assign(static_cast<size_t>(span) + 1, 0);
    for (size_t k = 0; k < count; ++k)
      ++by_[static_cast<size_t>(longest_ - lens_[k]) + 1];
    return true;
  }
  /* rows_ from the counts: by_[d] becomes where the rows of length longest_ - d start. */
  void place_by_count(int64_t w0) {
    rows_.resize(lens_.size());
    for (size_t d = 1; d < by_.size(); ++d)
      by_[d] += by_[d - 1];
    for (size_t k = 0; k < lens_.size(); ++k)
      rows_[static_cast<size_t>(by_[static_cast<size_t>(longest_ - lens_[k])]++)] = w0 + static_cast<int64_t>(k);
    w0_ = w0;
  }
  void place_by_comparison(int64_t w0) {
    rows_.resize(lens_.size());
    std::iota(rows_.begin(), rows_.end(), w0);
    std::sort(rows_.begin(), rows_.end(), [&](int64_t a, int64_t b) {
      const int64_t la = lens_[static_cast<size_t>(a - w0)], lb = lens_[static_cast<size_t>(b - w0)];
      return la != lb ? la > lb : a < b;
    });
    w0_ = w0;
  }

  std::vector<int64_t> lens_, rows_, by_;
  int64_t longest_ = 0;
  int64_t w0_ = 0;
};

/* The widths of the slices of window [w0, w1): its lengths sorted longest first, every lanes-th. */
void window_widths(const int32_t *offs, int64_t w0, int64_t w1, int64_t lanes, WindowOrder &order, int64_t *width_out) {
  order.widths(offs, w0, w1, lanes, width_out);
}

/* Slot offsets of every slice into soffs (slices + 1 entries); false when they pass INT32_MAX. */
bool slot_offsets(int64_t n, const int32_t *offs, int64_t lanes, int64_t sigma, int32_t *soffs) {
  const int64_t per_window = sigma / lanes;
  WindowOrder order;
  std::vector<int64_t> widths(static_cast<size_t>(per_window));
  int64_t total = 0;
  soffs[0] = 0;
  for (int64_t w0 = 0, s = 0; w0 < n; w0 += sigma) {
    const int64_t w1 = std::min(n, w0 + sigma);
    window_widths(offs, w0, w1, lanes, order, widths.data());
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
  const Deadline *deadline;  /* a plan's (deadline.h; Deadline::none() else): windows past it are left unfilled */
  std::atomic<bool> out_of_memory{false};

  /* Fills windows [begin, end): sorts the window's rows, writes their slots and wpos. Runs on
   * pool threads, where an exception must not escape: a failed allocation is recorded. A plan's
   * fill looks at its deadline between windows. */
  static void run(void *closure, int64_t begin, int64_t end) {
    Build &b = *static_cast<Build *>(closure);
    try {
      WindowOrder order;
      std::vector<int64_t> place, length;
      DeadlineWatch watch(*b.deadline);
      for (int64_t w = begin; w < end; ++w) {
        const int64_t w0 = w * b.sigma, w1 = std::min(b.n, w0 + b.sigma);
        if (watch.passed(static_cast<int64_t>(b.offs[w1]) - b.offs[w0]))
          return;
        b.window(w, order, place, length);
      }
    } catch (...) {
      b.out_of_memory = true;
    }
  }

  void window(int64_t w, WindowOrder &order, std::vector<int64_t> &place, std::vector<int64_t> &length) const {
    const int64_t w0 = w * sigma, w1 = std::min(n, w0 + sigma);
    const int64_t rows_in_window = w1 - w0;
    order.sort(offs, w0, w1);
    auto len = [&](int64_t r) { return static_cast<int64_t>(offs[r + 1]) - offs[r]; };
    /* Each row's place in the window (its lane counted from the window's first), and each
     * place's row length (0 for the lanes past the last row). */
    const int64_t places = (rows_in_window + lanes - 1) / lanes * lanes;
    place.resize(static_cast<size_t>(rows_in_window));
    length.assign(static_cast<size_t>(places), 0);
    for (int64_t q = 0; q < places; ++q) {
      if (q < rows_in_window) {
        const int64_t r = order.rows()[static_cast<size_t>(q)];
        place[static_cast<size_t>(r - w0)] = q;
        length[static_cast<size_t>(q)] = order.length(static_cast<size_t>(q));
        wpos[r] = static_cast<int32_t>(q);
      } else {
        wpos[w0 + q] = static_cast<int32_t>(q); /* a lane past the last row: its own place */
      }
    }
    /* The entries in the order they are stored in CSR (the window's rows are contiguous there:
     * one stream read; reading a slice's rows side by side, the value loads took half of the
     * fill's profile on shipsec1); each goes to its row's lane of its slot, within the window's
     * slices, a block that stays in cache while it is written. Most of a fill's time is still
     * the first touch of the operands' pages (about 0.45 ms a MB on one thread here). */
    const int64_t base = offs[0];
    for (int64_t r = w0; r < w1; ++r) {
      const int64_t q = place[static_cast<size_t>(r - w0)], s = (w0 + q) / lanes;
      const int64_t first = static_cast<int64_t>(soffs[s] - soffs[0]) * lanes + q % lanes;
      const int64_t start = static_cast<int64_t>(offs[r]) - base, count = len(r);
      T *sv = svals + first;
      int32_t *sc = scols + first;
      for (int64_t t = 0; t < count; ++t) {
        sv[t * lanes] = vals[start + t];
        sc[t * lanes] = cols[start + t];
      }
    }
    /* Padding: value 0, column 0, from each lane's length to its slice's width. */
    for (int64_t q = 0; q < places; ++q) {
      const int64_t s = (w0 + q) / lanes, width = soffs[s + 1] - soffs[s];
      const int64_t first = static_cast<int64_t>(soffs[s] - soffs[0]) * lanes + q % lanes;
      for (int64_t t = length[static_cast<size_t>(q)]; t < width; ++t) {
        svals[first + t * lanes] = T(0);
        scols[first + t * lanes] = 0;
      }
    }
  }
};

/* Fills every window of b on the pool (or the calling thread for one window or one thread);
 * false when memory ran out. */
template <typename T> bool fill_windows(Build<T> &b) {
  const int64_t windows = (b.n + b.sigma - 1) / b.sigma;
  if (windows <= 1 || spl_num_threads() == 1) {
    Build<T>::run(&b, 0, windows);
  } else {
    spl_parallel_for(0, windows, 16, &Build<T>::run, &b);
  }
  return !b.out_of_memory;
}

template <typename T>
int build(int64_t n, const int32_t *offs, const int32_t *cols, const T *vals, int64_t lanes, int64_t sigma,
          int32_t *soffs, int32_t *scols, T *svals, int32_t *wpos) {
  if (!valid_shape(n, offs, lanes, sigma) || soffs == nullptr || (n > 0 && wpos == nullptr))
    return SPL_ERR_BAD_INPUT;
  if (!monotone_offsets(n, offs))
    return SPL_ERR_BAD_INPUT;
  try {
    if (!slot_offsets(n, offs, lanes, sigma, soffs))
      return SPL_ERR_ALLOC;
    const int64_t slices = (n + lanes - 1) / lanes;
    if (soffs[slices] > 0 && (scols == nullptr || svals == nullptr))
      return SPL_ERR_BAD_INPUT;
    if (offs[n] > offs[0] && (cols == nullptr || vals == nullptr))
      return SPL_ERR_BAD_INPUT;
    Build<T> b{n, lanes, sigma, offs, cols, vals, soffs, scols, svals, wpos, &Deadline::none()};
    if (!fill_windows(b))
      return SPL_ERR_ALLOC;
  } catch (...) {
    return SPL_ERR_ALLOC;
  }
  return SPL_OK;
}

/* The slice widths of both windows at once (spl_sell_convert_*, spl_sell_pick_sigma): narrow
 * windows nest in wide ones (wide a multiple of narrow), so one pass over the wide windows sorts
 * each one's lengths and each of its narrow windows', on the pool. */
struct BothWidths {
  int64_t n, lanes, narrow, wide;
  const int32_t *offs;
  int64_t *narrow_widths, *wide_widths; /* one per slice */
  std::atomic<bool> out_of_memory{false};

  static void run(void *closure, int64_t begin, int64_t end) {
    BothWidths &z = *static_cast<BothWidths *>(closure);
    try {
      WindowOrder order;
      for (int64_t w = begin; w < end; ++w) {
        const int64_t w0 = w * z.wide, w1 = std::min(z.n, w0 + z.wide);
        for (int64_t c0 = w0; c0 < w1; c0 += z.narrow)
          window_widths(z.offs, c0, std::min(w1, c0 + z.narrow), z.lanes, order, z.narrow_widths + c0 / z.lanes);
        window_widths(z.offs, w0, w1, z.lanes, order, z.wide_widths + w0 / z.lanes);
      }
    } catch (...) {
      z.out_of_memory = true;
    }
  }
};

/* Slices' widths for both windows; false when memory ran out. */
bool both_widths(int64_t n, const int32_t *offs, int64_t lanes, int64_t narrow, int64_t wide,
                 std::vector<int64_t> &narrow_widths, std::vector<int64_t> &wide_widths) {
  const int64_t slices = (n + lanes - 1) / lanes;
  narrow_widths.assign(static_cast<size_t>(slices), 0);
  wide_widths.assign(static_cast<size_t>(slices), 0);
  BothWidths z{n, lanes, narrow, wide, offs, narrow_widths.data(), wide_widths.data()};
  const int64_t windows = (n + wide - 1) / wide;
  if (windows <= 1 || spl_num_threads() == 1)
    BothWidths::run(&z, 0, windows);
  else
    spl_parallel_for(0, windows, 4, &BothWidths::run, &z);
  return !z.out_of_memory;
}

int64_t sum(const std::vector<int64_t> &v) { return std::accumulate(v.begin(), v.end(), int64_t(0)); }

/* The window the padding rule picks (see SPL_SELL_WIDE_FILL) from both windows' slot counts. */
int64_t pick(int64_t narrow, int64_t wide, int64_t narrow_slots, int64_t wide_slots) {
  return static_cast<double>(narrow_slots) > SPL_SELL_WIDE_FILL * static_cast<double>(wide_slots) ? wide : narrow;
}

} // namespace

int sell_shape(int64_t n, const int32_t *offs, int64_t lanes, int64_t narrow, int64_t wide, SellShape &shape) {
  if (!valid_shape(n, offs, lanes, narrow) || !valid_shape(n, offs, lanes, wide) || wide % narrow != 0)
    return SPL_ERR_BAD_INPUT;
  if (!monotone_offsets(n, offs))
    return SPL_ERR_BAD_INPUT;
  try {
    std::vector<int64_t> narrow_widths, wide_widths;
    if (!both_widths(n, offs, lanes, narrow, wide, narrow_widths, wide_widths))
      return SPL_ERR_ALLOC;
    shape.lanes = lanes;
    shape.sigma = pick(narrow, wide, sum(narrow_widths), sum(wide_widths));
    shape.widths = std::move(shape.sigma == narrow ? narrow_widths : wide_widths);
    shape.slots = sum(shape.widths);
  } catch (...) {
    return SPL_ERR_ALLOC;
  }
  return shape.slots > INT32_MAX ? SPL_ERR_ALLOC : SPL_OK;
}

template <typename T>
int sell_fill(int64_t n, const int32_t *offs, const int32_t *cols, const T *vals, const SellShape &shape,
              spl_sell_operands *out, const Deadline &deadline) {
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  *out = spl_sell_operands{};
  if (offs[n] > offs[0] && (cols == nullptr || vals == nullptr))
    return SPL_ERR_BAD_INPUT;
  const int64_t lanes = shape.lanes;
  spl_sell_operands s{};
  try {
    s.rows = n;
    s.lanes = lanes;
    s.sigma = shape.sigma;
    s.slices = static_cast<int64_t>(shape.widths.size());
    s.slots = shape.slots;
    /* Every slot and every lane's window position is written by the fill (padding included),
     * so the buffers are not cleared first; each window's are first touched by the thread that
     * fills it. At least one element each: the kernels take non-null pointers. */
    const size_t stored = static_cast<size_t>(std::max<int64_t>(s.slots * lanes, 1));
    const size_t lanes_total = static_cast<size_t>(std::max<int64_t>(s.slices * lanes, 1));
    s.soffs = static_cast<int32_t *>(spl_alloc(sizeof(int32_t) * static_cast<size_t>(s.slices + 1)));
    s.scols = static_cast<int32_t *>(spl_alloc(sizeof(int32_t) * stored));
    s.svals = spl_alloc(sizeof(T) * stored);
    s.wpos = static_cast<int32_t *>(spl_alloc(sizeof(int32_t) * lanes_total));
    s.bytes = static_cast<int64_t>(sizeof(int32_t) * static_cast<size_t>(s.slices + 1) + (sizeof(int32_t) + sizeof(T)) * stored +
                                   sizeof(int32_t) * lanes_total);
    if (s.soffs == nullptr || s.scols == nullptr || s.svals == nullptr || s.wpos == nullptr) {
      spl_sell_operands_free(&s);
      return SPL_ERR_ALLOC;
    }
    s.soffs[0] = 0;
    for (int64_t k = 0; k < s.slices; ++k)
      s.soffs[k + 1] = static_cast<int32_t>(s.soffs[k] + shape.widths[static_cast<size_t>(k)]);
    if (s.slices == 0)
      s.wpos[0] = 0;
    Build<T> b{n, lanes, s.sigma, offs, cols, vals, s.soffs, s.scols, static_cast<T *>(s.svals), s.wpos, &deadline};
    if (!fill_windows(b)) {
      spl_sell_operands_free(&s);
      return SPL_ERR_ALLOC;
    }
    if (deadline.stopped()) {
      spl_sell_operands_free(&s);
      return kStoppedAtDeadline;
    }
    if (s.slots == 0) {
      s.scols[0] = 0;
      static_cast<T *>(s.svals)[0] = T(0);
    }
  } catch (...) {
    spl_sell_operands_free(&s);
    return SPL_ERR_ALLOC;
  }
  *out = s;
  return SPL_OK;
}

template int sell_fill<float>(int64_t, const int32_t *, const int32_t *, const float *, const SellShape &, spl_sell_operands *,
                              const Deadline &);
template int sell_fill<double>(int64_t, const int32_t *, const int32_t *, const double *, const SellShape &,
                               spl_sell_operands *, const Deadline &);

namespace {

template <typename T>
int convert(int64_t n, const int32_t *offs, const int32_t *cols, const T *vals, int64_t lanes, int64_t narrow,
            int64_t wide, spl_sell_operands *out) {
  if (out == nullptr)
    return SPL_ERR_BAD_INPUT;
  *out = spl_sell_operands{};
  SellShape shape;
  if (int rc = sell_shape(n, offs, lanes, narrow, wide, shape); rc != SPL_OK)
    return rc;
  return sell_fill(n, offs, cols, vals, shape, out);
}

} // namespace
} // namespace spl_rt

int spl_sell_sizes(int64_t n, const int32_t *offs, int64_t lanes, int64_t sigma, int64_t *slices, int64_t *slots) {
  if (!spl_rt::valid_shape(n, offs, lanes, sigma) || slices == nullptr || slots == nullptr)
    return SPL_ERR_BAD_INPUT;
  if (!spl_rt::monotone_offsets(n, offs))
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
  if (spl_rt::valid_shape(n, offs, lanes, narrow) && wide % narrow == 0) {
    /* Nested windows: both sized in one pass. */
    if (!spl_rt::monotone_offsets(n, offs))
      return SPL_ERR_BAD_INPUT;
    try {
      std::vector<int64_t> narrow_widths, wide_widths;
      if (!spl_rt::both_widths(n, offs, lanes, narrow, wide, narrow_widths, wide_widths))
        return SPL_ERR_ALLOC;
      *sigma = spl_rt::pick(narrow, wide, spl_rt::sum(narrow_widths), spl_rt::sum(wide_widths));
    } catch (...) {
      return SPL_ERR_ALLOC;
    }
    return SPL_OK;
  }
  int64_t slices = 0, narrowSlots = 0, wideSlots = 0;
  if (int rc = spl_sell_sizes(n, offs, lanes, narrow, &slices, &narrowSlots); rc != SPL_OK)
    return rc;
  if (int rc = spl_sell_sizes(n, offs, lanes, wide, &slices, &wideSlots); rc != SPL_OK)
    return rc;
  *sigma = spl_rt::pick(narrow, wide, narrowSlots, wideSlots);
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

int spl_sell_convert_f32(int64_t n, const int32_t *offs, const int32_t *cols, const float *vals, int64_t lanes,
                         int64_t narrow, int64_t wide, spl_sell_operands *out) {
  return spl_rt::convert(n, offs, cols, vals, lanes, narrow, wide, out);
}

int spl_sell_convert_f64(int64_t n, const int32_t *offs, const int32_t *cols, const double *vals, int64_t lanes,
                         int64_t narrow, int64_t wide, spl_sell_operands *out) {
  return spl_rt::convert(n, offs, cols, vals, lanes, narrow, wide, out);
}

void spl_sell_operands_free(spl_sell_operands *s) {
  if (s == nullptr)
    return;
  spl_free(s->soffs);
  spl_free(s->scols);
  spl_free(s->svals);
  spl_free(s->wpos);
  *s = spl_sell_operands{};
}
