// Generators of spl-matgen; see matgen.h for the contract. Every kind reduces to one of two
// shapes: a sorted list of unique (row, column) keys filled by random draws until it holds the
// target count (uniform, banded, blocks, R-MAT, adversarial), or a direct construction in row
// order (stencils, dense, Barabasi-Albert). The CSR is then built from the sorted keys and the
// values are drawn in CSR order from a stream of their own.
#include "matgen.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

namespace splmatgen {
namespace {

constexpr int64_t kMaxEntries = INT32_MAX; // the kernels' offsets are int32
constexpr int kMaxRounds = 100000;

struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() { return spl_splitmix64_next(&state); }
  /// Uniform in [0, n), n >= 1, by rejection (no modulo bias).
  uint64_t below(uint64_t n) {
    uint64_t rejectBelow = (0 - n) % n;
    for (;;) {
      uint64_t r = next();
      if (r >= rejectBelow)
        return r % n;
    }
  }
  /// Uniform in [0, 1) on the 2^-53 grid (exact in double).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// True with probability p (compared on the same 2^-53 grid).
  bool chance(double p) { return unit() < p; }
};

using Key = uint64_t;
inline Key makeKey(int64_t i, int64_t j) { return (static_cast<uint64_t>(i) << 32) | static_cast<uint64_t>(j); }
inline int64_t keyRow(Key k) { return static_cast<int64_t>(k >> 32); }
inline int64_t keyCol(Key k) { return static_cast<int64_t>(k & 0xffffffffu); }

using Draw = std::function<std::pair<int64_t, int64_t>(Rng &)>;

void sortUnique(std::vector<Key> &v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

/// Adds random draws to the sorted unique `keys` until they number at least `target`. Each round
/// draws exactly the deficit (with `symmetric`, half of it, each draw giving (i, j) and (j, i)),
/// so the result never overshoots except by one mirrored entry. New keys gather in a sorted side
/// list that is merged into `keys` only when it grows large, so late rounds (few draws, mostly
/// duplicates of hot entries) cost O(draws log n), not O(n).
bool fillUnique(std::vector<Key> &keys, uint64_t target, Rng &rng, const Draw &draw, bool symmetric,
                std::string *error, const std::function<void(double)> &progress) {
  std::vector<Key> pending, batch, merged;
  auto total = [&] { return keys.size() + pending.size(); };
  // Progress is the share of the target placed, including the draws of the round in hand.
  auto report = [&](uint64_t drawn) {
    if (progress && target > 0)
      progress(std::min(1.0, static_cast<double>(total() + drawn) / static_cast<double>(target)));
  };
  auto flush = [&] {
    merged.clear();
    merged.reserve(keys.size() + pending.size());
    std::merge(keys.begin(), keys.end(), pending.begin(), pending.end(), std::back_inserter(merged));
    keys.swap(merged);
    pending.clear();
  };
  for (int round = 0; round < kMaxRounds && total() < target; ++round) {
    uint64_t need = target - total();
    uint64_t draws = symmetric ? (need + 1) / 2 : need;
    batch.clear();
    batch.reserve(symmetric ? 2 * draws : draws);
    for (uint64_t k = 0; k < draws; ++k) {
      auto [i, j] = draw(rng);
      batch.push_back(makeKey(i, j));
      if (symmetric && i != j)
        batch.push_back(makeKey(j, i));
      if ((k & 0x3ffff) == 0x3ffff)
        report(symmetric ? 2 * k : k);
    }
    sortUnique(batch);
    batch.erase(std::remove_if(batch.begin(), batch.end(),
                               [&](Key k) {
                                 return std::binary_search(keys.begin(), keys.end(), k) ||
                                        std::binary_search(pending.begin(), pending.end(), k);
                               }),
                batch.end());
    if (batch.empty())
      continue;
    merged.clear();
    std::merge(pending.begin(), pending.end(), batch.begin(), batch.end(), std::back_inserter(merged));
    pending.swap(merged);
    if (pending.size() > keys.size() / 8)
      flush();
  }
  flush();
  report(0);
  if (keys.size() < target) {
    *error = "could place only " + std::to_string(keys.size()) + " of " + std::to_string(target) +
             " entries: the structure cannot hold the target (increase the size or bandwidth)";
    return false;
  }
  return true;
}

bool allocCsr(int64_t rows, int64_t cols, int64_t nnz, spl_csr *out, std::string *error) {
  std::memset(out, 0, sizeof *out);
  out->offs = static_cast<int64_t *>(std::calloc(static_cast<size_t>(rows) + 1, sizeof(int64_t)));
  out->cols_idx = static_cast<int32_t *>(std::malloc(static_cast<size_t>(std::max<int64_t>(nnz, 1)) * sizeof(int32_t)));
  out->vals = static_cast<double *>(std::malloc(static_cast<size_t>(std::max<int64_t>(nnz, 1)) * sizeof(double)));
  if (!out->offs || !out->cols_idx || !out->vals) {
    spl_csr_free(out);
    std::memset(out, 0, sizeof *out);
    *error = "out of memory";
    return false;
  }
  out->rows = rows;
  out->cols = cols;
  out->nnz = nnz;
  return true;
}

/// Builds the CSR structure from sorted unique keys (values are filled later).
bool csrFromKeys(int64_t rows, int64_t cols, const std::vector<Key> &keys, spl_csr *out, std::string *error) {
  if (!allocCsr(rows, cols, static_cast<int64_t>(keys.size()), out, error))
    return false;
  for (Key k : keys)
    ++out->offs[keyRow(k) + 1];
  for (int64_t i = 0; i < rows; ++i)
    out->offs[i + 1] += out->offs[i];
  for (size_t p = 0; p < keys.size(); ++p)
    out->cols_idx[p] = static_cast<int32_t>(keyCol(keys[p]));
  return true;
}

/// A nonzero multiple of 2^-8 in [-1, 1): exact in float and short in text.
double randomValue(Rng &rng) {
  int64_t k = static_cast<int64_t>(rng.below(511));
  if (k >= 256)
    ++k;
  return static_cast<double>(k - 256) / 256.0;
}

/// Integer floor of the r-th root of n (r = 2 or 3), then the closer of it and it + 1.
int64_t nearestRoot(int64_t n, int r) {
  auto pw = [r](int64_t x) { return r == 2 ? x * x : x * x * x; };
  int64_t lo = 0, hi = r == 2 ? 3037000499LL : 2097151LL;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (pw(mid) <= n)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo + 1 <= (r == 2 ? 3037000499LL : 2097151LL) && pw(lo + 1) - n < n - pw(lo))
    ++lo;
  return std::max<int64_t>(lo, 1);
}

bool validDim(int64_t d) { return d >= 0 && d <= SPL_MATRIX_MAX_DIM; }

struct Gen {
  const Options &o;
  std::string *error;
  Gen(const Options &opts, std::string *err) : o(opts), error(err) {}
  int64_t rows = 0, cols = 0;
  bool stencil = false;
  std::vector<int64_t> stencilDiag; // per row: the value of the diagonal for Laplacian values

  bool fail(const std::string &msg) {
    *error = msg;
    return false;
  }

  /// The target number of entries from --nnz, --degree or --density.
  bool target(int64_t &t, bool required = true) {
    if (o.nnz >= 0)
      t = o.nnz;
    else if (o.degree >= 0)
      t = std::llround(o.degree * static_cast<double>(rows));
    else if (o.density >= 0)
      t = std::llround(o.density * static_cast<double>(rows) * static_cast<double>(cols));
    else if (required)
      return fail(std::string(kindName(o.kind)) + " needs --nnz, --degree or --density");
    if (t < 0 || t > kMaxEntries)
      return fail("the number of entries must be in [0, 2^31)");
    return true;
  }

  bool capacity(int64_t t, double cap, const char *what) {
    if (static_cast<double>(t) > cap)
      return fail(std::string("target of ") + std::to_string(t) + " entries exceeds the " + what +
                  " (" + std::to_string(static_cast<long long>(cap)) + " positions)");
    return true;
  }

  bool uniform(spl_csr *out) {
    int64_t t = 0;
    if (!target(t))
      return false;
    double cap = static_cast<double>(rows) * static_cast<double>(cols);
    if (!capacity(t, cap, "matrix"))
      return false;
    Rng rng(o.seed);
    std::vector<Key> keys;
    if (2.0 * static_cast<double>(t) > cap) {
      // Dense-ish: every row gets floor or ceil of t / rows columns by a partial shuffle.
      std::vector<int32_t> perm(static_cast<size_t>(cols));
      keys.reserve(static_cast<size_t>(t));
      for (int64_t i = 0; i < rows; ++i) {
        int64_t len = t / rows + (i < t % rows ? 1 : 0);
        for (int64_t j = 0; j < cols; ++j)
          perm[static_cast<size_t>(j)] = static_cast<int32_t>(j);
        for (int64_t k = 0; k < len; ++k) {
          int64_t r = k + static_cast<int64_t>(rng.below(static_cast<uint64_t>(cols - k)));
          std::swap(perm[static_cast<size_t>(k)], perm[static_cast<size_t>(r)]);
          keys.push_back(makeKey(i, perm[static_cast<size_t>(k)]));
        }
      }
      sortUnique(keys);
    } else {
      Draw d = [&](Rng &g) {
        int64_t i = static_cast<int64_t>(g.below(static_cast<uint64_t>(rows)));
        return std::make_pair(i, static_cast<int64_t>(g.below(static_cast<uint64_t>(cols))));
      };
      if (t > 0 && !fillUnique(keys, static_cast<uint64_t>(t), rng, d, false, error, o.progress))
        return false;
    }
    return csrFromKeys(rows, cols, keys, out, error);
  }

  bool banded(spl_csr *out) {
    int64_t t = 0;
    if (!target(t))
      return false;
    int64_t diag = std::min(rows, cols);
    if (t < diag)
      return fail("banded: the target (" + std::to_string(t) + ") is below the diagonal's " +
                  std::to_string(diag) + " entries");
    int64_t w = o.bandwidth >= 0 ? o.bandwidth
                                 : std::max<int64_t>(1, std::llround(2.0 * static_cast<double>(t) / std::max<int64_t>(rows, 1)));
    double cap = 0;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t lo = std::max<int64_t>(0, i - w), hi = std::min<int64_t>(cols - 1, i + w);
      if (hi >= lo)
        cap += static_cast<double>(hi - lo + 1);
    }
    if (o.offband > 0)
      cap = static_cast<double>(rows) * static_cast<double>(cols);
    if (!capacity(t, cap, "band"))
      return false;
    std::vector<Key> keys;
    keys.reserve(static_cast<size_t>(t));
    for (int64_t i = 0; i < diag; ++i)
      keys.push_back(makeKey(i, i));
    Rng rng(o.seed);
    Draw d = [&](Rng &g) {
      if (o.offband > 0 && g.chance(o.offband))
        return std::make_pair(static_cast<int64_t>(g.below(static_cast<uint64_t>(rows))),
                              static_cast<int64_t>(g.below(static_cast<uint64_t>(cols))));
      for (;;) {
        int64_t i = static_cast<int64_t>(g.below(static_cast<uint64_t>(rows)));
        int64_t j = i + static_cast<int64_t>(g.below(static_cast<uint64_t>(2 * w + 1))) - w;
        if (j >= 0 && j < cols)
          return std::make_pair(i, j);
      }
    };
    if (!fillUnique(keys, static_cast<uint64_t>(t), rng, d, false, error, o.progress))
      return false;
    return csrFromKeys(rows, cols, keys, out, error);
  }

  bool stencilGrid(int dims, int64_t &nx, int64_t &ny, int64_t &nz) {
    nx = o.nx, ny = o.ny, nz = dims == 3 ? o.nz : 1;
    bool given = nx > 0 && ny > 0 && (dims == 2 || nz > 0);
    if (!given) {
      if (o.rows < 1)
        return fail(std::string(kindName(o.kind)) + " needs --nx --ny" + (dims == 3 ? " --nz" : "") + " or --rows");
      if (dims == 2) {
        nx = nearestRoot(o.rows, 2);
        ny = std::max<int64_t>(1, (o.rows + nx / 2) / nx);
      } else {
        nx = ny = nearestRoot(o.rows, 3);
        nz = std::max<int64_t>(1, (o.rows + nx * ny / 2) / (nx * ny));
      }
    }
    // Each side, then the product, checked without overflowing (--nx 2^32 --ny 2^32 wrapped to 0).
    int64_t points = 0;
    if (!validDim(nx) || !validDim(ny) || !validDim(nz) || __builtin_mul_overflow(nx, ny, &points) ||
        __builtin_mul_overflow(points, nz, &points) || !validDim(points))
      return fail("the grid has too many points (at most " + std::to_string(SPL_MATRIX_MAX_DIM) + ")");
    rows = cols = points;
    return true;
  }

  bool stencilBuild(int dims, int points, spl_csr *out) {
    int64_t nx, ny, nz;
    if (!stencilGrid(dims, nx, ny, nz))
      return false;
    stencil = true;
    // Offsets (dx, dy, dz) in increasing column order: dz, then dy, then dx.
    std::vector<std::array<int, 3>> offs;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dims == 2 && dz != 0)
            continue;
          int manhattan = std::abs(dx) + std::abs(dy) + std::abs(dz);
          if (points != 27 && manhattan > 1)
            continue;
          offs.push_back({dx, dy, dz});
        }
    int64_t nnz = 0;
    if (points == 5)
      nnz = 5 * nx * ny - 2 * nx - 2 * ny;
    else if (points == 7)
      nnz = 7 * nx * ny * nz - 2 * (ny * nz + nx * nz + nx * ny);
    else
      nnz = (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2);
    if (nnz > kMaxEntries)
      return fail("the stencil has more than 2^31 entries");
    if (!allocCsr(rows, cols, nnz, out, error))
      return false;
    int64_t p = 0, r = 0;
    for (int64_t z = 0; z < nz; ++z)
      for (int64_t y = 0; y < ny; ++y)
        for (int64_t x = 0; x < nx; ++x, ++r) {
          for (const auto &d : offs) {
            int64_t xx = x + d[0], yy = y + d[1], zz = z + d[2];
            if (xx < 0 || xx >= nx || yy < 0 || yy >= ny || zz < 0 || zz >= nz)
              continue;
            out->cols_idx[p++] = static_cast<int32_t>(xx + nx * (yy + ny * zz));
          }
          out->offs[r + 1] = p;
        }
    if (p != nnz) {
      spl_csr_free(out);
      std::memset(out, 0, sizeof *out);
      return fail("internal: stencil entry count " + std::to_string(p) + " != formula " + std::to_string(nnz));
    }
    stencilDiag.assign(1, points - 1);
    return true;
  }

  bool blocks(spl_csr *out) {
    int64_t t = 0;
    if (!target(t))
      return false;
    int64_t b = o.block;
    if (b < 1)
      return fail("--block must be at least 1");
    int64_t nbr = (rows + b - 1) / b, nbc = (cols + b - 1) / b;
    int64_t diag = std::min(nbr, nbc);
    int64_t bt = std::max<int64_t>(diag, std::llround(static_cast<double>(t) / static_cast<double>(b * b)));
    int64_t perRow = (bt + std::max<int64_t>(nbr, 1) - 1) / std::max<int64_t>(nbr, 1);
    int64_t w = o.bandwidth >= 0 ? o.bandwidth : std::max<int64_t>(1, 2 * perRow);
    double cap = 0;
    for (int64_t i = 0; i < nbr; ++i) {
      int64_t lo = std::max<int64_t>(0, i - w), hi = std::min<int64_t>(nbc - 1, i + w);
      if (hi >= lo)
        cap += static_cast<double>(hi - lo + 1);
    }
    if (o.offband > 0)
      cap = static_cast<double>(nbr) * static_cast<double>(nbc);
    if (!capacity(bt, cap, "block band"))
      return false;
    std::vector<Key> bk;
    for (int64_t i = 0; i < diag; ++i)
      bk.push_back(makeKey(i, i));
    Rng rng(o.seed);
    Draw d = [&](Rng &g) {
      if (o.offband > 0 && g.chance(o.offband))
        return std::make_pair(static_cast<int64_t>(g.below(static_cast<uint64_t>(nbr))),
                              static_cast<int64_t>(g.below(static_cast<uint64_t>(nbc))));
      for (;;) {
        int64_t i = static_cast<int64_t>(g.below(static_cast<uint64_t>(nbr)));
        int64_t j = i + static_cast<int64_t>(g.below(static_cast<uint64_t>(2 * w + 1))) - w;
        if (j >= 0 && j < nbc)
          return std::make_pair(i, j);
      }
    };
    if (!fillUnique(bk, static_cast<uint64_t>(bt), rng, d, false, error, o.progress))
      return false;
    // Expand: the entries of block row I are the same columns for each of its b rows.
    int64_t nnz = 0;
    std::vector<int64_t> rowWidth(static_cast<size_t>(nbr), 0);
    for (Key k : bk) {
      int64_t w2 = std::min<int64_t>(b, cols - keyCol(k) * b);
      rowWidth[static_cast<size_t>(keyRow(k))] += w2;
    }
    for (int64_t bi = 0; bi < nbr; ++bi)
      nnz += rowWidth[static_cast<size_t>(bi)] * std::min<int64_t>(b, rows - bi * b);
    if (nnz > kMaxEntries)
      return fail("more than 2^31 entries");
    if (!allocCsr(rows, cols, nnz, out, error))
      return false;
    int64_t p = 0;
    size_t kb = 0;
    for (int64_t bi = 0; bi < nbr; ++bi) {
      size_t ke = kb;
      while (ke < bk.size() && keyRow(bk[ke]) == bi)
        ++ke;
      for (int64_t r = 0; r < b && bi * b + r < rows; ++r) {
        for (size_t k = kb; k < ke; ++k)
          for (int64_t c = 0; c < b && keyCol(bk[k]) * b + c < cols; ++c)
            out->cols_idx[p++] = static_cast<int32_t>(keyCol(bk[k]) * b + c);
        out->offs[bi * b + r + 1] = p;
      }
      kb = ke;
    }
    return true;
  }

  bool dense(spl_csr *out) {
    double cap = static_cast<double>(rows) * static_cast<double>(cols);
    if (cap > kMaxEntries)
      return fail("a dense matrix of that size has more than 2^31 entries");
    int64_t nnz = rows * cols;
    if (!allocCsr(rows, cols, nnz, out, error))
      return false;
    int64_t p = 0;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j)
        out->cols_idx[p++] = static_cast<int32_t>(j);
      out->offs[i + 1] = p;
    }
    return true;
  }

  bool rmat(spl_csr *out) {
    int64_t t = 0;
    if (!target(t))
      return false;
    if ((o.symmetric || o.permute) && rows != cols)
      return fail("rmat: --symmetric and --permute need a square matrix");
    if (o.a < 0 || o.b < 0 || o.c < 0 || o.a + o.b + o.c > 1)
      return fail("rmat: a, b, c must be >= 0 with a + b + c <= 1");
    if (!capacity(t, static_cast<double>(rows) * static_cast<double>(cols), "matrix"))
      return false;
    int levels = 0;
    while ((int64_t{1} << levels) < std::max(rows, cols))
      ++levels;
    const double ta = o.a, tab = o.a + o.b, tabc = o.a + o.b + o.c;
    Rng rng(o.seed);
    Draw d = [&](Rng &g) {
      for (;;) {
        int64_t i = 0, j = 0;
        for (int l = 0; l < levels; ++l) {
          double u = g.unit();
          int bi = 0, bj = 0;
          if (u < ta) {
          } else if (u < tab) {
            bj = 1;
          } else if (u < tabc) {
            bi = 1;
          } else {
            bi = 1;
            bj = 1;
          }
          i = 2 * i + bi;
          j = 2 * j + bj;
        }
        if (i < rows && j < cols)
          return std::make_pair(i, j);
      }
    };
    std::vector<Key> keys;
    if (t > 0 && !fillUnique(keys, static_cast<uint64_t>(t), rng, d, o.symmetric, error, o.progress))
      return false;
    if (o.permute) {
      std::vector<int64_t> perm(static_cast<size_t>(rows));
      for (int64_t i = 0; i < rows; ++i)
        perm[static_cast<size_t>(i)] = i;
      Rng prng(o.seed ^ UINT64_C(0x7065726d75746521));
      for (int64_t i = rows - 1; i > 0; --i)
        std::swap(perm[static_cast<size_t>(i)], perm[prng.below(static_cast<uint64_t>(i + 1))]);
      for (Key &k : keys)
        k = makeKey(perm[static_cast<size_t>(keyRow(k))], perm[static_cast<size_t>(keyCol(k))]);
      std::sort(keys.begin(), keys.end());
    }
    return csrFromKeys(rows, cols, keys, out, error);
  }

  bool barabasiAlbert(spl_csr *out) {
    if (rows != cols)
      return fail("ba: the graph's matrix is square (do not give --cols)");
    int64_t n = rows, m = 0;
    if (o.degree >= 0)
      m = std::llround(o.degree);
    else if (o.nnz >= 0)
      m = std::max<int64_t>(1, std::llround(static_cast<double>(o.nnz) / (2.0 * static_cast<double>(std::max<int64_t>(n, 1)))));
    else
      return fail("ba needs --degree M (edges added with each vertex) or --nnz");
    if (m < 1 || n <= m)
      return fail("ba: need 1 <= degree < rows");
    if (2 * m * (n - m) > kMaxEntries)
      return fail("ba: more than 2^31 entries");
    Rng rng(o.seed);
    std::vector<int32_t> repeated;
    repeated.reserve(static_cast<size_t>(2 * m * (n - m)));
    std::vector<Key> keys;
    keys.reserve(static_cast<size_t>(2 * m * (n - m)));
    std::vector<int32_t> targets;
    for (int64_t v = m; v < n; ++v) {
      targets.clear();
      if (v == m) {
        for (int64_t u = 0; u < m; ++u)
          targets.push_back(static_cast<int32_t>(u));
      } else {
        while (static_cast<int64_t>(targets.size()) < m) {
          int32_t u = repeated[rng.below(repeated.size())];
          if (std::find(targets.begin(), targets.end(), u) == targets.end())
            targets.push_back(u);
        }
      }
      for (int32_t u : targets) {
        keys.push_back(makeKey(v, u));
        keys.push_back(makeKey(u, v));
        repeated.push_back(u);
        repeated.push_back(static_cast<int32_t>(v));
      }
    }
    std::sort(keys.begin(), keys.end());
    return csrFromKeys(rows, cols, keys, out, error);
  }

  bool denseRow(spl_csr *out) {
    int64_t t = 0;
    if (!target(t))
      return false;
    if (rows < 1 || cols < 1)
      return fail("dense-row needs at least one row and one column");
    int64_t r = o.denseRow >= 0 ? o.denseRow : rows / 2;
    if (r >= rows)
      return fail("--dense-row is out of range");
    t = std::max(t, cols);
    if (!capacity(t, static_cast<double>(rows) * static_cast<double>(cols), "matrix"))
      return false;
    std::vector<Key> keys;
    for (int64_t j = 0; j < cols; ++j)
      keys.push_back(makeKey(r, j));
    Rng rng(o.seed);
    Draw d = [&](Rng &g) {
      int64_t i = rows == 1 ? 0 : static_cast<int64_t>(g.below(static_cast<uint64_t>(rows - 1)));
      if (rows > 1 && i >= r)
        ++i;
      return std::make_pair(i, static_cast<int64_t>(g.below(static_cast<uint64_t>(cols))));
    };
    if (!fillUnique(keys, static_cast<uint64_t>(t), rng, d, false, error, o.progress))
      return false;
    return csrFromKeys(rows, cols, keys, out, error);
  }

  bool emptyRows(spl_csr *out) {
    int64_t t = 0;
    if (!target(t))
      return false;
    if (o.emptyFraction < 0 || o.emptyFraction > 1)
      return fail("--empty-fraction must be in [0, 1]");
    int64_t nonEmpty = rows - std::llround(o.emptyFraction * static_cast<double>(rows));
    if (t > 0 && cols > 0 && rows > 0)
      nonEmpty = std::max<int64_t>(nonEmpty, 1);
    if (cols == 0 || t == 0)
      nonEmpty = 0;
    nonEmpty = std::min(nonEmpty, t);
    if (!capacity(t, static_cast<double>(nonEmpty) * static_cast<double>(cols), "non-empty rows"))
      return false;
    Rng rng(o.seed);
    std::vector<int64_t> all(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i)
      all[static_cast<size_t>(i)] = i;
    for (int64_t k = 0; k < nonEmpty; ++k)
      std::swap(all[static_cast<size_t>(k)], all[static_cast<size_t>(k + static_cast<int64_t>(rng.below(static_cast<uint64_t>(rows - k))))]);
    std::vector<int64_t> keep(all.begin(), all.begin() + nonEmpty);
    std::sort(keep.begin(), keep.end());
    std::vector<Key> keys;
    for (int64_t i : keep)
      keys.push_back(makeKey(i, static_cast<int64_t>(rng.below(static_cast<uint64_t>(cols)))));
    sortUnique(keys);
    Draw d = [&](Rng &g) {
      int64_t i = keep[g.below(keep.size())];
      return std::make_pair(i, static_cast<int64_t>(g.below(static_cast<uint64_t>(cols))));
    };
    if (static_cast<int64_t>(keys.size()) < t && !fillUnique(keys, static_cast<uint64_t>(t), rng, d, false, error, o.progress))
      return false;
    return csrFromKeys(rows, cols, keys, out, error);
  }

  bool empty(spl_csr *out) { return allocCsr(rows, cols, 0, out, error); }

  /// Each row's length drawn (uniform or power law), its entries within the band |i - j| <= W
  /// (W: --bandwidth, default the longest row), a share --offband of them anywhere outside
  /// it: the irregular matrices whose row lengths vary at random (issue 25).
  bool variedRows(spl_csr *out) {
    int64_t lo = o.minRowLength, hi = o.maxRowLength;
    if (lo < 0 || hi < lo) return fail("varied needs --row-lengths MIN:MAX with 0 <= MIN <= MAX");
    if (hi > cols) return fail("varied: the longest row (" + std::to_string(hi) + ") is longer than the " + std::to_string(cols) + " columns");
    if (o.offband < 0 || o.offband > 1) return fail("--offband must be in [0, 1]");
    if (o.rowDist == RowDist::PowerLaw && (o.powerExponent < 1 || o.powerExponent > 3))
      return fail("--exponent must be 1, 2 or 3");
    int64_t w = o.bandwidth >= 0 ? o.bandwidth : std::max<int64_t>(hi, 1);
    // The power law's cumulative integer weights over k = 1 .. hi - lo + 1.
    std::vector<uint64_t> cumulative;
    if (o.rowDist == RowDist::PowerLaw) {
      uint64_t sum = 0;
      for (int64_t k = 1; k <= hi - lo + 1; ++k) {
        unsigned __int128 power = 1;
        for (int e = 0; e < o.powerExponent; ++e) power *= static_cast<unsigned __int128>(k);
        uint64_t weight = static_cast<uint64_t>((static_cast<unsigned __int128>(1) << 40) / power);
        sum += std::max<uint64_t>(weight, 1);
        cumulative.push_back(sum);
      }
    }
    Rng rng(o.seed);
    std::vector<int64_t> lengths(static_cast<size_t>(rows));
    int64_t total = 0;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t len = lo;
      if (o.rowDist == RowDist::Uniform) {
        len = lo + static_cast<int64_t>(rng.below(static_cast<uint64_t>(hi - lo + 1)));
      } else {
        uint64_t r = rng.below(cumulative.back());
        len = lo + static_cast<int64_t>(std::upper_bound(cumulative.begin(), cumulative.end(), r) - cumulative.begin());
      }
      lengths[static_cast<size_t>(i)] = len;
      total += len;
      if (total > kMaxEntries) return fail("varied: more than 2^31 entries");
    }
    std::vector<Key> keys;
    keys.reserve(static_cast<size_t>(total));
    std::vector<int64_t> row;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t bandLo = std::max<int64_t>(0, i - w), bandHi = std::min<int64_t>(cols - 1, i + w);
      int64_t band = std::max<int64_t>(0, bandHi - bandLo + 1), outside = cols - band;
      int64_t len = lengths[static_cast<size_t>(i)], off = 0;
      for (int64_t k = 0; k < len; ++k)
        if (o.offband > 0 && rng.chance(o.offband)) ++off;
      // A row longer than its band takes the rest outside it, and the other way round.
      off = std::min(off, outside);
      int64_t in = std::min(len - off, band);
      off = std::min(len - in, outside);
      row.clear();
      // Floyd's sampling: `in` distinct columns of the band, then `off` distinct outside it.
      auto pick = [&](int64_t count, int64_t range, const std::function<int64_t(int64_t)> &column) {
        size_t first = row.size();
        for (int64_t j = range - count; j < range; ++j) {
          int64_t t = column(static_cast<int64_t>(rng.below(static_cast<uint64_t>(j + 1))));
          bool seen = std::find(row.begin() + static_cast<std::ptrdiff_t>(first), row.end(), t) != row.end();
          row.push_back(seen ? column(j) : t);
        }
      };
      pick(in, band, [&](int64_t k) { return bandLo + k; });
      pick(off, outside, [&](int64_t k) { return k < bandLo ? k : k + band; });
      for (int64_t j : row) keys.push_back(makeKey(i, j));
      if (o.progress && (i & 0xffff) == 0) o.progress(static_cast<double>(i) / static_cast<double>(std::max<int64_t>(rows, 1)));
    }
    sortUnique(keys);
    return csrFromKeys(rows, cols, keys, out, error);
  }

  void fillValues(spl_csr *m) {
    Values v = o.values;
    if (v == Values::Default)
      v = stencil ? Values::Laplacian : Values::Random;
    Rng rng(o.seed ^ UINT64_C(0x76616c7565735f31));
    for (int64_t i = 0; i < m->rows; ++i) {
      int64_t b = m->offs[i], e = m->offs[i + 1];
      for (int64_t p = b; p < e; ++p) {
        switch (v) {
        case Values::Ones:
          m->vals[p] = 1.0;
          break;
        case Values::Random:
        case Values::Default:
          m->vals[p] = randomValue(rng);
          break;
        case Values::Laplacian:
          if (m->cols_idx[p] != i)
            m->vals[p] = -1.0;
          else
            m->vals[p] = static_cast<double>(stencil ? stencilDiag[0] : (e - b - 1));
          break;
        }
      }
    }
  }

  bool run(spl_csr *out) {
    std::memset(out, 0, sizeof *out);
    bool isStencil = o.kind == Kind::Stencil2D5 || o.kind == Kind::Stencil3D7 || o.kind == Kind::Stencil3D27;
    if (!isStencil) {
      rows = o.rows;
      cols = o.cols;
      if (o.kind == Kind::RowVector) {
        if (cols < 0)
          cols = rows;
        rows = 1;
      } else if (o.kind == Kind::ColVector) {
        cols = 1;
      } else if (cols < 0) {
        cols = rows;
      }
      if (rows < 0 || cols < 0)
        return fail(std::string(kindName(o.kind)) + (o.kind == Kind::RowVector ? " needs --cols" : " needs --rows"));
      if (!validDim(rows) || !validDim(cols))
        return fail("a dimension is above the library's limit (SPL_MATRIX_MAX_DIM = " +
                    std::to_string(static_cast<long long>(SPL_MATRIX_MAX_DIM)) + ")");
      if (rows > INT32_MAX / 2 + 1 || cols > INT32_MAX / 2 + 1)
        return fail("dimensions must fit in 31 bits");
    }
    bool ok = false;
    switch (o.kind) {
    case Kind::Uniform:
    case Kind::RowVector:
    case Kind::ColVector: {
      if ((o.kind == Kind::RowVector || o.kind == Kind::ColVector) && o.nnz < 0 && o.degree < 0 && o.density < 0) {
        Options copy = o;
        copy.density = 1.0;
        Gen g(copy, error);
        g.rows = rows;
        g.cols = cols;
        ok = g.uniform(out);
      } else {
        ok = uniform(out);
      }
      break;
    }
    case Kind::Banded: ok = banded(out); break;
    case Kind::Stencil2D5: ok = stencilBuild(2, 5, out); break;
    case Kind::Stencil3D7: ok = stencilBuild(3, 7, out); break;
    case Kind::Stencil3D27: ok = stencilBuild(3, 27, out); break;
    case Kind::Blocks: ok = blocks(out); break;
    case Kind::Dense: ok = dense(out); break;
    case Kind::RMat: ok = rmat(out); break;
    case Kind::BarabasiAlbert: ok = barabasiAlbert(out); break;
    case Kind::DenseRow: ok = denseRow(out); break;
    case Kind::EmptyRows: ok = emptyRows(out); break;
    case Kind::Empty: ok = empty(out); break;
    case Kind::VariedRows: ok = variedRows(out); break;
    }
    if (!ok) {
      spl_csr_free(out);
      std::memset(out, 0, sizeof *out);
      return false;
    }
    fillValues(out);
    return true;
  }
};

const struct {
  const char *name;
  Kind kind;
} kKinds[] = {
    {"uniform", Kind::Uniform},         {"banded", Kind::Banded},
    {"stencil2d-5", Kind::Stencil2D5},  {"stencil3d-7", Kind::Stencil3D7},
    {"stencil3d-27", Kind::Stencil3D27}, {"blocks", Kind::Blocks},
    {"dense", Kind::Dense},             {"rmat", Kind::RMat},
    {"ba", Kind::BarabasiAlbert},       {"dense-row", Kind::DenseRow},
    {"empty-rows", Kind::EmptyRows},    {"row", Kind::RowVector},
    {"col", Kind::ColVector},           {"empty", Kind::Empty},
    {"varied", Kind::VariedRows},
};

} // namespace

bool parseKind(const std::string &name, Kind &out) {
  for (const auto &k : kKinds)
    if (name == k.name) {
      out = k.kind;
      return true;
    }
  return false;
}

const char *kindName(Kind kind) {
  for (const auto &k : kKinds)
    if (k.kind == kind)
      return k.name;
  return "?";
}

bool generate(const Options &opts, spl_csr *out, std::string *error) {
  std::string dummy;
  Gen g(opts, error ? error : &dummy);
  return g.run(out);
}

Stats stats(const spl_csr &m) {
  Stats s;
  s.rows = m.rows;
  s.cols = m.cols;
  s.nnz = m.nnz;
  std::vector<int64_t> lens(static_cast<size_t>(m.rows));
  std::vector<char> seenDiag;
  int64_t span = m.rows + m.cols;
  seenDiag.assign(static_cast<size_t>(std::max<int64_t>(span, 1)), 0);
  s.minRow = m.rows > 0 ? INT64_MAX : 0;
  for (int64_t i = 0; i < m.rows; ++i) {
    int64_t len = m.offs[i + 1] - m.offs[i];
    lens[static_cast<size_t>(i)] = len;
    s.emptyRows += len == 0;
    s.minRow = std::min(s.minRow, len);
    s.maxRow = std::max(s.maxRow, len);
    for (int64_t p = m.offs[i]; p < m.offs[i + 1]; ++p) {
      int64_t off = m.cols_idx[p] - i;
      s.bandwidth = std::max<int64_t>(s.bandwidth, off < 0 ? -off : off);
      char &seen = seenDiag[static_cast<size_t>(off + m.rows)];
      s.diagonals += !seen;
      seen = 1;
    }
  }
  s.avgRow = m.rows > 0 ? static_cast<double>(m.nnz) / static_cast<double>(m.rows) : 0;
  if (m.rows > 0 && m.nnz > 0) {
    size_t k = static_cast<size_t>(std::max<int64_t>(1, m.rows / 100));
    std::nth_element(lens.begin(), lens.begin() + static_cast<std::ptrdiff_t>(k) - 1, lens.end(), std::greater<int64_t>());
    int64_t top = 0;
    for (size_t i = 0; i < k; ++i)
      top += lens[i];
    s.top1PercentShare = static_cast<double>(top) / static_cast<double>(m.nnz);
  }
  return s;
}

} // namespace splmatgen
