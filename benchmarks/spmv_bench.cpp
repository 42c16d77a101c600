// spl-spmv-bench: CPU SpMV of SPL kernels against Eigen, librsb, SuiteSparse and plain C loops,
// on every matrix of a manifest (written by benchmarks/run.sh), in one process, beside a STREAM
// triad measured in the same run.
//
// Per matrix: CSR f64 and f32 (stdlib/spmv.spl) against Eigen, librsb, the plain C loop, and for
// f64 CSparse cs_gaxpy and CHOLMOD sdmult; ELL, DIA and BCSR f32 (tests/contract/formats.spl)
// against plain C loops of the same formats (each only where the format stores at most a few
// times the entries). Every implementation runs on 1 thread and on all cores (the SuiteSparse
// ones are serial and run on 1 thread only). Every result is checked against a double-precision
// reference before it is timed; a mismatch aborts the run.
//
// Timing: after a warm-up (at least 2 calls and 10 ms), samples of back-to-back calls lasting at
// least 1 ms each are taken until the time budget is spent (at least 5, at most 200 samples); the
// median per-call time is reported. GB/s counts the compulsory traffic of the CSR form in the
// precision at hand: values, column indices, row offsets, x and y each once. For ELL, DIA and
// BCSR the same CSR bytes are used, so their GB/s is an effective rate comparable with CSR.
#include "baselines.h"
#include "plain_loops.h"
#include "spl_matrix.h"
#include "spl_runtime.h"

#include "formats.h"
#include "spmv.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef SPL_BENCH_FLAGS
#define SPL_BENCH_FLAGS "unknown"
#endif
#ifndef SPL_BENCH_C_FLAGS
#define SPL_BENCH_C_FLAGS "unknown"
#endif
#ifndef SPL_BENCH_COMPILER
#define SPL_BENCH_COMPILER "unknown"
#endif

namespace {

[[noreturn]] void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("spl-spmv-bench: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::exit(1);
}

// ---- Configuration and inputs -----------------------------------------------------------------

/// SELL-C-sigma: the lane counts and window (in slices) stdlib/spmv.spl was compiled with, from
/// its header. sigma is the window in rows: 64 in f64 by default, the best on the banded matrices
/// (wider windows spread a slice's x accesses; the power-law graphs want them, up to 1024 rows:
/// results/2026-11-21-amd-epyc-2c-format-choice.md), 128 in f32.
/// Each matrix takes the narrow window or the wide one (SELL_WINDOW_WIDE, spmv_sell_rows_wide) as
/// the runtime's spl_sell_pick_sigma says.
constexpr int64_t kSellLanesF64 = SPL_SPMV_SELL_LANES_F64, kSellLanesF32 = SPL_SPMV_SELL_LANES_F32,
                  kSellWindow = SPL_SPMV_SELL_WINDOW, kSellWindowWide = SPL_SPMV_SELL_WINDOW_WIDE;
/// The calls a plan is told to expect (spl-plan rows): an iterative solver's few hundred to
/// thousand SpMVs.
constexpr int64_t kPlanCalls = 1000;

struct MatrixSpec {
  std::string name, group, klass, path, origRows, origNnz, generator;
};

struct Config {
  std::vector<MatrixSpec> matrices;
  std::string csv, md, commit = "unknown", date, scale = "-", only;
  double budget = 0.2;
  int threads = 0;
};

const char *kUsage =
    "usage: spl-spmv-bench [options] (--manifest FILE | MATRIX.mtx ...)\n"
    "  --manifest FILE   tab-separated: name group class orig_rows orig_nnz path generator\n"
    "  --csv FILE        results, one line per measurement (default: none)\n"
    "  --md FILE         markdown report (default: none)\n"
    "  --budget SECONDS  timing budget per implementation and thread count (default 0.2)\n"
    "  --threads N       the 'all cores' thread count (default: hardware concurrency)\n"
    "  --commit TEXT  --date TEXT  --scale TEXT   recorded in the report\n"
    "  --only NAME       run only the manifest entry NAME\n";

Config parseArgs(int argc, char **argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die("option %s needs a value", a.c_str());
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--manifest") {
      std::ifstream f(value());
      if (!f)
        die("cannot read the manifest");
      std::string line;
      while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#')
          continue;
        std::vector<std::string> cols;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, '\t'))
          cols.push_back(cell);
        if (cols.size() < 6)
          die("manifest line has %zu fields: %s", cols.size(), line.c_str());
        cols.resize(7);
        c.matrices.push_back({cols[0], cols[1], cols[2], cols[5], cols[3], cols[4], cols[6]});
      }
    } else if (a == "--csv") {
      c.csv = value();
    } else if (a == "--md") {
      c.md = value();
    } else if (a == "--budget") {
      c.budget = std::atof(value().c_str());
    } else if (a == "--threads") {
      c.threads = std::atoi(value().c_str());
    } else if (a == "--commit") {
      c.commit = value();
    } else if (a == "--date") {
      c.date = value();
    } else if (a == "--scale") {
      c.scale = value();
    } else if (a == "--only") {
      c.only = value();
    } else if (!a.empty() && a[0] == '-') {
      die("unknown option %s", a.c_str());
    } else {
      std::string name = a.substr(a.find_last_of('/') + 1);
      name = name.substr(0, name.find('.'));
      c.matrices.push_back({name, "file", "-", a, "-", "-", "-"});
    }
  }
  if (c.matrices.empty())
    die("no matrices (see --help)");
  if (c.threads <= 0)
    c.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (c.date.empty()) {
    char buf[32];
    std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
    c.date = buf;
  }
  return c;
}

// ---- Machine -------------------------------------------------------------------------------------

std::string loadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  if (!(f >> a >> b >> c))
    return "unknown";
  return a + " " + b + " " + c;
}

struct Machine {
  std::string cpu = "unknown", memory = "unknown", l3 = "unknown", loadStart = "unknown", loadEnd = "unknown";
  int cores = 0;
  int64_t l3Bytes = 0;
};

Machine machine() {
  Machine m;
  m.cores = static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line))
    if (line.rfind("model name", 0) == 0) {
      m.cpu = line.substr(line.find(':') + 2);
      break;
    }
  std::ifstream mem("/proc/meminfo");
  while (std::getline(mem, line))
    if (line.rfind("MemTotal:", 0) == 0) {
      long long kb = std::atoll(line.c_str() + 9);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(kb) / (1024.0 * 1024.0));
      m.memory = buf;
    }
  for (int idx = 0; idx < 8; ++idx) {
    std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/";
    std::ifstream lvl(base + "level"), sz(base + "size");
    int level = 0;
    std::string size;
    if (lvl >> level && sz >> size && level == 3) {
      m.l3 = size;
      int64_t v = std::atoll(size.c_str());
      m.l3Bytes = v * (size.back() == 'K' ? 1024 : size.back() == 'M' ? 1024 * 1024 : 1);
    }
  }
  return m;
}

// ---- Timing ------------------------------------------------------------------------------------

struct Timing {
  double median = 0, min = 0;
  int samples = 0;
};

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

Timing measure(const std::function<void()> &fn, double budget) {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  int warm = 0;
  do {
    fn();
    ++warm;
  } while (warm < 2 || seconds(clock::now() - t0) < 0.01);
  double one = seconds(clock::now() - t0) / warm;
  int64_t reps = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(1e-3 / std::max(one, 1e-9))));
  std::vector<double> s;
  auto start = clock::now();
  while ((s.size() < 5 || seconds(clock::now() - start) < budget) && s.size() < 200) {
    auto t = clock::now();
    for (int64_t r = 0; r < reps; ++r)
      fn();
    s.push_back(seconds(clock::now() - t) / static_cast<double>(reps));
  }
  std::sort(s.begin(), s.end());
  Timing tm;
  tm.samples = static_cast<int>(s.size());
  tm.min = s.front();
  tm.median = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  return tm;
}

// ---- STREAM triad --------------------------------------------------------------------------------

/// The triad's arrays: 64 MiB each, 192 MiB in all (6x a 32 MiB L3), first touched by the same
/// OpenMP static partition the parallel triad uses.
struct TriadArrays {
  int64_t n = int64_t{1} << 23;
  double *a = nullptr, *b = nullptr, *c = nullptr;
  void init(int threads) {
    a = static_cast<double *>(spl_alloc(n * sizeof(double)));
    b = static_cast<double *>(spl_alloc(n * sizeof(double)));
    c = static_cast<double *>(spl_alloc(n * sizeof(double)));
    if (!a || !b || !c)
      die("cannot allocate the STREAM arrays");
    omp_set_num_threads(threads);
    stream_init_omp(n, a, b, c);
  }
  void run(int threads) {
    if (threads == 1)
      stream_triad(n, a, b, c, 3.0);
    else
      stream_triad_omp(n, a, b, c, 3.0);
  }
  double bytes() const { return 3.0 * 8.0 * static_cast<double>(n); }
  ~TriadArrays() {
    spl_free(a);
    spl_free(b);
    spl_free(c);
  }
};

struct Triad {
  double gbps1 = 0, gbpsAll = 0;
};

Triad streamTriad(TriadArrays &arr, int threads, double budget) {
  Triad t;
  omp_set_num_threads(1);
  t.gbps1 = arr.bytes() / measure([&] { arr.run(1); }, budget).median * 1e-9;
  omp_set_num_threads(threads);
  t.gbpsAll = arr.bytes() / measure([&] { arr.run(threads); }, budget).median * 1e-9;
  return t;
}

// ---- Results -------------------------------------------------------------------------------------

struct Result {
  std::string matrix, group, klass, format, prec, impl, note;
  int64_t rows = 0, cols = 0, nnz = 0, stored = 0;
  int threads = 0;
  Timing t;
  double bytes = 0, gbps = 0, frac = 0;
};

struct MatrixInfo {
  MatrixSpec spec;
  int64_t rows = 0, cols = 0, nnz = 0, maxRow = 0, ndiags = 0, ellWidth = 0, bcsrBlock = 0, bcsrStored = 0;
  double bytes64 = 0, bytes32 = 0;
  bool fitsL3 = false;
  double seconds = 0;
};

// ---- Checking -----------------------------------------------------------------------------------

/// Per-row bound for a sum of len products in precision eps: 4 eps (len + 2) sum |a x|. It covers
/// any summation order (SPL reassociates its reductions) and the rounding of values to float.
struct Checker {
  std::vector<double> ref, bound;
  std::string matrix;

  void init(const spl_csr &a, const double *x) {
    ref.assign(static_cast<size_t>(a.rows), 0.0);
    bound.assign(static_cast<size_t>(a.rows), 0.0);
    spl_ref_spmv(&a, x, ref.data());
    for (int64_t i = 0; i < a.rows; ++i) {
      double s = 0;
      for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p)
        s += std::fabs(a.vals[p] * x[a.cols_idx[p]]);
      bound[static_cast<size_t>(i)] = s * static_cast<double>(a.offs[i + 1] - a.offs[i] + 2);
    }
  }

  template <class T>
  void check(const T *y, const char *what) const {
    const double eps = std::numeric_limits<T>::epsilon();
    for (size_t i = 0; i < ref.size(); ++i) {
      double got = static_cast<double>(y[i]);
      double tol = 4.0 * eps * bound[i] + 1e-300;
      if (!(std::fabs(got - ref[i]) <= tol))
        die("%s: %s: row %zu is %.17g, the reference is %.17g (tolerance %.3g): wrong result, aborting",
            matrix.c_str(), what, i, got, ref[i], tol);
    }
  }
};

// ---- The benchmark of one matrix -----------------------------------------------------------------

/// One implementation of a group: its call, and the check of its result.
struct Impl {
  const char *impl;
  std::function<void()> fn;
  std::function<void()> check; // runs fn once on a poisoned output and compares with the reference
  int64_t stored = 0;
  std::string note;
};

struct Bench {
  const Config &cfg;
  Triad triad;       // at the start of the run
  TriadArrays arrays;
  std::vector<Result> results;
  std::vector<MatrixInfo> infos;

  /// Sets every library's thread count (librsb is re-initialised by rsb_bench_create).
  void setThreads(int n) {
    spl_set_num_threads(n);
    omp_set_num_threads(n);
    eigen_set_threads(n);
  }

  Result make(const MatrixInfo &mi, const char *format, const char *prec, const char *impl, int threads) {
    Result r;
    r.matrix = mi.spec.name;
    r.group = mi.spec.group;
    r.klass = mi.spec.klass;
    r.rows = mi.rows;
    r.cols = mi.cols;
    r.nnz = mi.nnz;
    r.format = format;
    r.prec = prec;
    r.impl = impl;
    r.threads = threads;
    return r;
  }

  /// Measures a group (one format, precision and thread count) with its implementations and a
  /// STREAM triad of the same thread count interleaved: every round takes one sample of each, so
  /// load from other processes hits them alike, and "of triad" compares with the bandwidth
  /// available while the group ran. Each result is checked before anything is timed.
  void group(const MatrixInfo &mi, const char *format, const char *prec, int threads, double bytes,
             std::vector<Impl> &impls) {
    using clock = std::chrono::steady_clock;
    setThreads(threads);
    for (Impl &im : impls)
      im.check();
    std::vector<std::function<void()>> fns;
    for (Impl &im : impls)
      fns.push_back(im.fn);
    fns.push_back([this, threads] { arrays.run(threads); });
    std::vector<int64_t> reps;
    for (auto &fn : fns) {
      auto t0 = clock::now();
      int warm = 0;
      do {
        fn();
        ++warm;
      } while (warm < 2 || seconds(clock::now() - t0) < 0.005);
      double one = seconds(clock::now() - t0) / warm;
      reps.push_back(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(1e-3 / std::max(one, 1e-9)))));
    }
    std::vector<std::vector<double>> samples(fns.size());
    auto start = clock::now();
    const double budget = cfg.budget * static_cast<double>(impls.size());
    // Every sample follows one untimed call of the same implementation, and each round runs the
    // implementations in a new order drawn at random (the same sequence in every run): otherwise
    // one implementation would always start with the matrix and x evicted while the others find
    // them left in cache by their predecessor. A rotation was not enough: with it each
    // implementation always followed the same one, and the first (SPL's, listed first) always
    // followed the triad, which cost it up to 1.9x on matrices held in a large L3 (2026-11-28:
    // the same CSR call listed third ran that much faster; benchmarks/results/
    // 2026-11-28-intel-xeon-2c-cpu-plan.md).
    std::mt19937 order(12345);
    std::vector<size_t> sequence(fns.size());
    std::iota(sequence.begin(), sequence.end(), size_t(0));
    for (int round = 0; round < 200 && (round < 5 || seconds(clock::now() - start) < budget); ++round) {
      std::shuffle(sequence.begin(), sequence.end(), order);
      for (size_t k : sequence) {
        fns[k]();
        auto t = clock::now();
        for (int64_t r = 0; r < reps[k]; ++r)
          fns[k]();
        samples[k].push_back(seconds(clock::now() - t) / static_cast<double>(reps[k]));
      }
    }
    auto timing = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      Timing tm;
      tm.samples = static_cast<int>(v.size());
      tm.min = v.front();
      tm.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
      return tm;
    };
    Timing tt = timing(samples.back());
    double triadGbps = arrays.bytes() / tt.median * 1e-9;
    Result tr = make(mi, format, prec, "triad", threads);
    tr.t = tt;
    tr.bytes = arrays.bytes();
    tr.gbps = triadGbps;
    tr.frac = 1;
    results.push_back(tr);
    for (size_t k = 0; k < impls.size(); ++k) {
      Result r = make(mi, format, prec, impls[k].impl, threads);
      r.t = timing(samples[k]);
      r.bytes = bytes;
      r.stored = impls[k].stored;
      r.note = impls[k].note;
      r.gbps = bytes / r.t.median * 1e-9;
      r.frac = r.gbps / triadGbps;
      std::printf("  %-5s %-3s %-8s %2dT  %10.4f ms  %7.2f GB/s  %5.1f%% of triad (%.1f GB/s)%s%s\n", format, prec,
                  r.impl.c_str(), threads, r.t.median * 1e3, r.gbps, 100 * r.frac, triadGbps,
                  r.note.empty() ? "" : "  ", r.note.c_str());
      results.push_back(r);
    }
    std::fflush(stdout);
  }

  template <class T>
  std::function<void()> checker(const Checker &chk, const std::string &what, T *y, int64_t ylen,
                                const std::function<void()> &fn) {
    return [&chk, what, y, ylen, fn] {
      std::fill(y, y + ylen, std::numeric_limits<T>::quiet_NaN());
      fn();
      chk.check(y, what.c_str());
    };
  }

  template <class T>
  Impl impl(const Checker &chk, const char *format, const char *prec, const char *name, int threads, T *y,
            int64_t ylen, int64_t stored, std::function<void()> fn, std::string note = "") {
    std::string what = std::string(format) + " " + prec + " " + name + " " + std::to_string(threads) + "T";
    Impl im;
    im.impl = name;
    im.fn = fn;
    im.check = checker(chk, what, y, ylen, fn);
    im.stored = stored;
    im.note = std::move(note);
    return im;
  }

  void matrix(const MatrixSpec &spec, const Machine &m) {
    auto tStart = std::chrono::steady_clock::now();
    spl_csr a{};
    char err[512];
    if (spl_read_matrix(spec.path.c_str(), &a, err, sizeof err) != SPL_MATRIX_OK)
      die("%s", err);
    if (a.nnz > INT32_MAX - 1)
      die("%s: more than 2^31 entries", spec.path.c_str());
    MatrixInfo mi;
    mi.spec = spec;
    mi.rows = a.rows;
    mi.cols = a.cols;
    mi.nnz = a.nnz;
    const int64_t n = a.rows, mcols = a.cols, nnz = a.nnz;
    mi.bytes64 = static_cast<double>(nnz) * 12.0 + static_cast<double>(n + 1) * 4.0 + static_cast<double>(mcols + n) * 8.0;
    mi.bytes32 = static_cast<double>(nnz) * 8.0 + static_cast<double>(n + 1) * 4.0 + static_cast<double>(mcols + n) * 4.0;
    mi.fitsL3 = m.l3Bytes > 0 && mi.bytes64 <= static_cast<double>(m.l3Bytes);
    std::printf("%s (%s, %s): %lld x %lld, %lld entries, %.1f MB (f64 CSR)%s\n", spec.name.c_str(),
                spec.group.c_str(), spec.klass.c_str(), (long long)n, (long long)mcols, (long long)nnz,
                mi.bytes64 * 1e-6, mi.fitsL3 ? ", fits in L3" : "");

    // CSR arrays with int32 offsets, double and float values; x exactly representable in float.
    std::vector<int32_t> offs(static_cast<size_t>(n + 1));
    for (int64_t i = 0; i <= n; ++i)
      offs[static_cast<size_t>(i)] = static_cast<int32_t>(a.offs[i]);
    for (int64_t i = 0; i < n; ++i)
      mi.maxRow = std::max<int64_t>(mi.maxRow, a.offs[i + 1] - a.offs[i]);
    const int32_t *cols = a.cols_idx;
    const double *v64 = a.vals;
    std::vector<float> v32(static_cast<size_t>(nnz));
    for (int64_t p = 0; p < nnz; ++p)
      v32[static_cast<size_t>(p)] = static_cast<float>(v64[p]);
    std::vector<float> x32(static_cast<size_t>(std::max<int64_t>(mcols, 1)));
    spl_random_vector_f32(12345, mcols, x32.data());
    std::vector<double> x64(x32.begin(), x32.end());
    Checker chk;
    chk.matrix = spec.name;
    chk.init(a, x64.data());
    // One output per implementation, so the interleaved rounds never share a vector.
    std::vector<std::vector<double>> y64(7, std::vector<double>(static_cast<size_t>(std::max<int64_t>(n, 1))));
    std::vector<std::vector<float>> y32(5, std::vector<float>(static_cast<size_t>(std::max<int64_t>(n, 1))));
    const int all = cfg.threads;
    std::vector<int> threadCounts = {1};
    if (all > 1)
      threadCounts.push_back(all);
    const std::string name = spec.name;
    const std::string &name_of_a = name;
    const int32_t *cols_of_a = cols;
    spl_spmv_kernels_f64 kernels64 = {spl_spmv_csr_f64, spl_spmv_sell_rows_f64, spl_spmv_sell_rows_wide_f64, kSellLanesF64,
                                      kSellWindow * kSellLanesF64, kSellWindowWide * kSellLanesF64, spl_spmv_dia_f64,
                                      {{2, spl_spmv_bcsr2_f64}, {3, spl_spmv_bcsr3_f64}}, SPL_SPMV_MASKED_ROWS,
                                      spl_spmv_csr_short_f64, spl_spmv_csr_two_sums_f64, spl_spmv_csr_prefetch_f64};
    spl_spmv_kernels_f32 kernels32 = {spl_spmv_csr_f32, spl_spmv_sell_rows_f32, spl_spmv_sell_rows_wide_f32, kSellLanesF32,
                                      kSellWindow * kSellLanesF32, kSellWindowWide * kSellLanesF32, spl_spmv_dia_f32,
                                      {{2, spl_spmv_bcsr2_f32}, {3, spl_spmv_bcsr3_f32}}, SPL_SPMV_MASKED_ROWS,
                                      spl_spmv_csr_short_f32, spl_spmv_csr_two_sums_f32, spl_spmv_csr_prefetch_f32};
    // "spl-plan": the kernel a plan (runtime spl_spmv_plan_*, issue 25) chose for this matrix and
    // thread count among stdlib's CSR, SELL-C-sigma, DIA and BCSR kernels, for kPlanCalls expected calls;
    // its planning time (inspection, timings, conversion) goes in the note.
    auto planned = [&](auto kernels, auto plan, auto runFn, const auto *vals, const auto *x, auto *y, const char *prec, int t,
                       std::unique_ptr<spl_plan, void (*)(spl_plan *)> &owned, std::string &note) {
      setThreads(t);
      spl_plan *p = nullptr;
      // Planning is timed from the state every timed kernel starts from, the matrix read once
      // by a kernel: a first call's misses (page walks, lines not yet in the cache) are the
      // matrix's, paid by whichever kernel touches it first, and not planning's. The first
      // group (f64, 1 thread) otherwise charged the plan up to 1.8x a warm CSR call for each
      // of its first CSR calls (dense2, pdb1HYS: 29 and 21 calls instead of 16-17).
      if (kernels.csr(n, mcols, offs.data(), cols_of_a, vals, x, y) != SPL_OK)
        die("%s: the CSR kernel failed before planning", name_of_a.c_str());
      const auto c0 = std::chrono::steady_clock::now();
      if (plan(n, mcols, offs.data(), cols_of_a, vals, kPlanCalls, &kernels, &p) != SPL_OK)
        die("%s: spl_spmv_plan_%s failed", name_of_a.c_str(), prec);
      const double planning = seconds(std::chrono::steady_clock::now() - c0);
      owned.reset(p);
      char text[160];
      std::snprintf(text, sizeof text, "chose %s, planned in %.1f ms", spl_plan_kernel(p), planning * 1e3);
      note = text;
      return [&, p, runFn, x, y, prec] {
        if (runFn(p, x, y) != SPL_OK)
          die("%s: spl_spmv_run_%s failed", name_of_a.c_str(), prec);
      };
    };

    // ---- CSR f64
    spl_csc csc{};
    if (spl_csr_to_csc(&a, &csc) != SPL_MATRIX_OK)
      die("%s: cannot build the CSC form", name.c_str());
    for (int t : threadCounts) {
      std::vector<Impl> impls;
      impls.push_back(impl(chk, "csr", "f64", "spl", t, y64[0].data(), n, nnz, [&, t] {
        int rc = spl_spmv_csr_f64(n, mcols, offs.data(), cols, v64, x64.data(), y64[0].data());
        if (rc != SPL_OK)
          die("%s: spl_spmv_csr_f64 returned %d", name.c_str(), rc);
      }));
      impls.push_back(impl(chk, "csr", "f64", "eigen", t, y64[1].data(), n, nnz,
                           [&] { eigen_spmv_f64(n, mcols, nnz, offs.data(), cols, v64, x64.data(), y64[1].data()); }));
      std::unique_ptr<spl_plan, void (*)(spl_plan *)> plan64(nullptr, spl_plan_free);
      std::string planNote;
      auto runPlanned = planned(kernels64, spl_spmv_plan_f64, spl_spmv_run_f64, v64, x64.data(), y64[6].data(), "f64", t, plan64,
                                planNote);
      impls.push_back(impl(chk, "csr", "f64", "spl-plan", t, y64[6].data(), n, nnz, runPlanned, planNote));
      void *r = rsb_bench_create(1, t, n, mcols, nnz, offs.data(), cols, v64);
      if (r)
        impls.push_back(impl(chk, "csr", "f64", "rsb", t, y64[2].data(), n, nnz, [&, r] {
          if (rsb_bench_spmv(r, 1, x64.data(), y64[2].data()) != 0)
            die("%s: rsb_spmv failed", name.c_str());
        }));
      else
        std::printf("  librsb could not assemble the matrix; skipped\n");
      void *cm = nullptr, *cs = nullptr;
      if (t == 1) {
        cm = ss_cholmod_create(n, mcols, nnz, offs.data(), cols, v64);
        cs = ss_csparse_create(n, mcols, nnz, csc.offs, csc.row_idx, csc.vals);
        impls.push_back(impl(chk, "csr", "f64", "cholmod", t, y64[3].data(), n, nnz, [&, cm] {
          if (ss_cholmod_spmv(cm, x64.data(), y64[3].data()) != 0)
            die("%s: cholmod_sdmult failed", name.c_str());
        }));
        impls.push_back(impl(chk, "csr", "f64", "csparse", t, y64[4].data(), n, nnz,
                             [&, cs] { ss_csparse_spmv(cs, x64.data(), y64[4].data()); }));
      }
      impls.push_back(impl(chk, "csr", "f64", "c", t, y64[5].data(), n, nnz, [&, t] {
        if (t == 1)
          plain_csr_f64(n, offs.data(), cols, v64, x64.data(), y64[5].data());
        else
          plain_csr_f64_omp(n, offs.data(), cols, v64, x64.data(), y64[5].data());
      }));
      group(mi, "csr", "f64", t, mi.bytes64, impls);
      rsb_bench_destroy(r);
      if (cm)
        ss_cholmod_destroy(cm);
      if (cs)
        ss_csparse_destroy(cs);
    }
    spl_csc_free(&csc);

    // ---- CSR f32
    for (int t : threadCounts) {
      std::vector<Impl> impls;
      impls.push_back(impl(chk, "csr", "f32", "spl", t, y32[0].data(), n, nnz, [&] {
        int rc = spl_spmv_csr_f32(n, mcols, offs.data(), cols, v32.data(), x32.data(), y32[0].data());
        if (rc != SPL_OK)
          die("%s: spl_spmv_csr_f32 returned %d", name.c_str(), rc);
      }));
      impls.push_back(impl(chk, "csr", "f32", "eigen", t, y32[1].data(), n, nnz, [&] {
        eigen_spmv_f32(n, mcols, nnz, offs.data(), cols, v32.data(), x32.data(), y32[1].data());
      }));
      std::unique_ptr<spl_plan, void (*)(spl_plan *)> plan32(nullptr, spl_plan_free);
      std::string planNote;
      auto runPlanned = planned(kernels32, spl_spmv_plan_f32, spl_spmv_run_f32, v32.data(), x32.data(), y32[4].data(), "f32", t,
                                plan32, planNote);
      impls.push_back(impl(chk, "csr", "f32", "spl-plan", t, y32[4].data(), n, nnz, runPlanned, planNote));
      void *r = rsb_bench_create(0, t, n, mcols, nnz, offs.data(), cols, v32.data());
      if (r)
        impls.push_back(impl(chk, "csr", "f32", "rsb", t, y32[2].data(), n, nnz, [&, r] {
          if (rsb_bench_spmv(r, 0, x32.data(), y32[2].data()) != 0)
            die("%s: rsb_spmv failed", name.c_str());
        }));
      impls.push_back(impl(chk, "csr", "f32", "c", t, y32[3].data(), n, nnz, [&, t] {
        if (t == 1)
          plain_csr_f32(n, offs.data(), cols, v32.data(), x32.data(), y32[3].data());
        else
          plain_csr_f32_omp(n, offs.data(), cols, v32.data(), x32.data(), y32[3].data());
      }));
      group(mi, "csr", "f32", t, mi.bytes32, impls);
      rsb_bench_destroy(r);
    }

    sell(a, mi, chk, threadCounts, offs, x64, x32, v32);
    formats(a, mi, chk, threadCounts, x32);
    spl_csr_free(&a);
    mi.seconds = seconds(std::chrono::steady_clock::now() - tStart);
    std::printf("  (%.1f s)\n", mi.seconds);
    infos.push_back(mi);
  }

  /// SELL-C-sigma (f64 and f32): SPL's spmv_sell_rows or spmv_sell_rows_wide, the window the
  /// runtime picks by the padding of each (y in row order: each window's slices gathered back to
  /// its rows; "spl") and spmv_sell ("spl-slices": y left in slice
  /// order, as a solver that works in the permuted space uses it; checked through sell_rows), on
  /// operands converted once by the runtime's inspector (spl_sell_convert_*),
  /// against Eigen and the plain C loop on the CSR form, in the same rounds. The conversion (run
  /// once per matrix, on all threads) is timed apart and reported in the note with the slots
  /// stored over the entries.
  void sell(const spl_csr &a, MatrixInfo &mi, const Checker &chk, const std::vector<int> &threadCounts,
            const std::vector<int32_t> &offs, const std::vector<double> &x64, const std::vector<float> &x32,
            const std::vector<float> &v32) {
    const int64_t n = a.rows, mcols = a.cols, nnz = a.nnz;
    if (nnz == 0)
      return;
    const std::string name = mi.spec.name;
    auto run = [&](auto zero, const char *prec, int64_t lanes, auto convert, auto kernel, auto narrowKernel, auto wideKernel,
                   auto rows, auto eigen, auto plain, auto plainOmp, const auto *csrVals, const auto *x, double bytes) {
      using T = decltype(zero);
      // The runtime's inspector in the one call a plan makes (spl_sell_convert_*: the window's
      // choice, sizes, allocation and fill), timed once on all threads.
      setThreads(threadCounts.back());
      auto c0 = std::chrono::steady_clock::now();
      spl_sell_operands op{};
      if (convert(n, offs.data(), a.cols_idx, csrVals, lanes, kSellWindow * lanes, kSellWindowWide * lanes, &op) != SPL_OK)
        die("%s: spl_sell_convert_%s failed", name.c_str(), prec);
      double convertSeconds = seconds(std::chrono::steady_clock::now() - c0);
      std::unique_ptr<spl_sell_operands, void (*)(spl_sell_operands *)> owned(&op, spl_sell_operands_free);
      const int64_t sigma = op.sigma, nslices = op.slices, nslots = op.slots;
      const auto fused = sigma == kSellWindow * lanes ? narrowKernel : wideKernel;
      const int64_t stored = nslots * lanes, slots = nslices * lanes;
      const int32_t *soffs = op.soffs, *scols = op.scols, *wpos = op.wpos;
      // Each row's lane over all slices, for sell_rows after spmv_sell (the check of spl-slices).
      std::vector<int32_t> pos(static_cast<size_t>(std::max<int64_t>(n, 1)));
      for (int64_t r = 0; r < n; ++r)
        pos[static_cast<size_t>(r)] = static_cast<int32_t>(r / sigma * sigma + wpos[r]);
      char note[128];
      std::snprintf(note, sizeof note, "C=%lld sigma=%lld fill %.2f, converted in %.1f ms", (long long)lanes,
                    (long long)sigma, static_cast<double>(stored) / static_cast<double>(nnz), convertSeconds * 1e3);
      const T *sv = static_cast<const T *>(op.svals);
      const size_t len = static_cast<size_t>(std::max<int64_t>(n, 1)), slen = static_cast<size_t>(std::max<int64_t>(slots, 1));
      std::vector<T> ys(slen), ysk(slen);  // ys: the fused kernel's output (rows first, then padding lanes)
      std::vector<std::vector<T>> y(4, std::vector<T>(len));
      for (int t : threadCounts) {
        auto slices = [&, name](T *out) {
          int rc = kernel(nslices, mcols, soffs, scols, sv, x, out);
          if (rc != SPL_OK)
            die("%s: spl_spmv_sell_%s returned %d", name.c_str(), prec, rc);
        };
        auto inRows = [&, name](const T *in, T *out) {
          int rc = rows(n, slots, pos.data(), in, out);
          if (rc != SPL_OK)
            die("%s: spl_sell_rows_%s returned %d", name.c_str(), prec, rc);
        };
        std::vector<Impl> impls;
        impls.push_back(impl(chk, "sell", prec, "spl", t, ys.data(), n, stored, [&, name] {
          int rc = fused(nslices, mcols, soffs, scols, sv, wpos, x, ys.data());
          if (rc != SPL_OK)
            die("%s: spl_spmv_sell_rows_%s returned %d", name.c_str(), prec, rc);
        }, note));
        Impl kernelOnly = impl(chk, "sell", prec, "spl-slices", t, y[1].data(), n, stored, [&] {
          slices(ysk.data());
          inRows(ysk.data(), y[1].data());
        }, note);
        kernelOnly.fn = [&] { slices(ysk.data()); };
        impls.push_back(kernelOnly);
        impls.push_back(impl(chk, "sell", prec, "eigen", t, y[2].data(), n, nnz,
                             [&] { eigen(n, mcols, nnz, offs.data(), a.cols_idx, csrVals, x, y[2].data()); }));
        impls.push_back(impl(chk, "sell", prec, "c", t, y[3].data(), n, nnz, [&, t] {
          if (t == 1)
            plain(n, offs.data(), a.cols_idx, csrVals, x, y[3].data());
          else
            plainOmp(n, offs.data(), a.cols_idx, csrVals, x, y[3].data());
        }));
        group(mi, "sell", prec, t, bytes, impls);
      }
    };
    run(0.0, "f64", kSellLanesF64, spl_sell_convert_f64, spl_spmv_sell_f64, spl_spmv_sell_rows_f64, spl_spmv_sell_rows_wide_f64,
        spl_sell_rows_f64, eigen_spmv_f64, plain_csr_f64, plain_csr_f64_omp, a.vals, x64.data(), mi.bytes64);
    run(0.0f, "f32", kSellLanesF32, spl_sell_convert_f32, spl_spmv_sell_f32, spl_spmv_sell_rows_f32, spl_spmv_sell_rows_wide_f32,
        spl_sell_rows_f32, eigen_spmv_f32, plain_csr_f32, plain_csr_f32_omp, v32.data(), x32.data(), mi.bytes32);
  }

  /// ELL, DIA and BCSR (f32), each where it stores at most kMaxFill times the entries.
  void formats(const spl_csr &a, MatrixInfo &mi, const Checker &chk, const std::vector<int> &threadCounts,
               const std::vector<float> &x32) {
    const double kMaxFill = 3.0;
    const int64_t n = a.rows, m = a.cols, nnz = a.nnz;
    if (nnz == 0)
      return;
    std::vector<float> ys(static_cast<size_t>(n) + 64), yc(static_cast<size_t>(n) + 64);
    const std::string name = mi.spec.name;

    // ELL (row-major slots)
    mi.ellWidth = mi.maxRow;
    if (static_cast<double>(n) * static_cast<double>(mi.maxRow) <= kMaxFill * static_cast<double>(nnz)) {
      spl_ell e{};
      if (spl_csr_to_ell(&a, SPL_ELL_ROW_MAJOR, &e) == SPL_MATRIX_OK) {
        int64_t stored = n * e.width;
        for (int t : threadCounts) {
          std::vector<Impl> impls;
          impls.push_back(impl(chk, "ell", "f32", "spl", t, ys.data(), n, stored, [&] {
            int rc = spl_spmv_ell(n, m, e.width, e.vals_f32, e.cols_idx, x32.data(), ys.data());
            if (rc != SPL_OK)
              die("%s: spl_spmv_ell returned %d", name.c_str(), rc);
          }));
          impls.push_back(impl(chk, "ell", "f32", "c", t, yc.data(), n, stored, [&, t] {
            if (t == 1)
              plain_ell_f32(n, e.width, e.vals_f32, e.cols_idx, x32.data(), yc.data());
            else
              plain_ell_f32_omp(n, e.width, e.vals_f32, e.cols_idx, x32.data(), yc.data());
          }));
          group(mi, "ell", "f32", t, mi.bytes32, impls);
        }
        spl_ell_free(&e);
      }
    }

    // DIA (square only): count the diagonals before converting.
    if (n == m) {
      std::vector<char> seen(static_cast<size_t>(2 * n + 1), 0);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) {
          char &sn = seen[static_cast<size_t>(a.cols_idx[p] - i + n)];
          mi.ndiags += !sn;
          sn = 1;
        }
      if (static_cast<double>(mi.ndiags) * static_cast<double>(n) <= kMaxFill * static_cast<double>(nnz)) {
        spl_dia d{};
        if (spl_csr_to_dia(&a, &d) == SPL_MATRIX_OK) {
          int64_t stored = d.ndiags * n;
          for (int t : threadCounts) {
            std::vector<Impl> impls;
            impls.push_back(impl(chk, "dia", "f32", "spl", t, ys.data(), n, stored, [&] {
              int rc = spl_spmv_dia(n, d.ndiags, d.offsets, d.data_f32, x32.data(), ys.data());
              if (rc != SPL_OK)
                die("%s: spl_spmv_dia returned %d", name.c_str(), rc);
            }));
            impls.push_back(impl(chk, "dia", "f32", "c", t, yc.data(), n, stored, [&, t] {
              if (t == 1)
                plain_dia_f32(n, d.ndiags, d.offsets, d.data_f32, x32.data(), yc.data());
              else
                plain_dia_f32_omp(n, d.ndiags, d.offsets, d.data_f32, x32.data(), yc.data());
            }));
            group(mi, "dia", "f32", t, mi.bytes32, impls);
          }
          spl_dia_free(&d);
        }
      }
    }

    // BCSR: the block size among 2, 3, 4, 6, 8 that stores the fewest bytes.
    int64_t bestB = 0;
    double bestBytes = 0;
    int64_t bestStored = 0;
    for (int64_t b : {2, 3, 4, 6, 8}) {
      int64_t nbr = (n + b - 1) / b, nbc = (m + b - 1) / b, nblocks = 0;
      std::vector<int64_t> stamp(static_cast<size_t>(nbc), -1);
      for (int64_t bi = 0; bi < nbr; ++bi)
        for (int64_t i = bi * b; i < std::min(n, bi * b + b); ++i)
          for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) {
            int64_t &st = stamp[static_cast<size_t>(a.cols_idx[p] / b)];
            if (st != bi) {
              st = bi;
              ++nblocks;
            }
          }
      double bytes = static_cast<double>(nblocks) * (4.0 * static_cast<double>(b * b) + 4.0);
      if (bestB == 0 || bytes < bestBytes) {
        bestB = b;
        bestBytes = bytes;
        bestStored = nblocks * b * b;
      }
    }
    mi.bcsrBlock = bestB;
    mi.bcsrStored = bestStored;
    if (static_cast<double>(bestStored) <= kMaxFill * static_cast<double>(nnz)) {
      spl_bcsr bc{};
      if (spl_csr_to_bcsr(&a, bestB, &bc) == SPL_MATRIX_OK) {
        std::vector<float> xb(static_cast<size_t>(bc.block_cols * bc.block), 0.0f);
        std::copy(x32.begin(), x32.begin() + m, xb.begin());
        std::vector<float> ybs(static_cast<size_t>(bc.block_rows * bc.block) + 1), ybc(ybs.size());
        const int64_t ylen = static_cast<int64_t>(ybs.size());
        const int64_t stored = bc.nblocks * bc.block * bc.block;
        std::string note = "b=" + std::to_string(bestB);
        for (int t : threadCounts) {
          std::vector<Impl> impls;
          impls.push_back(impl(chk, "bcsr", "f32", "spl", t, ybs.data(), ylen, stored, [&] {
            int rc = spl_spmv_bcsr(bc.block_rows, bc.block_cols, bc.block, bc.offs, bc.blocks_f32, bc.block_cols_idx,
                                   xb.data(), ybs.data());
            if (rc != SPL_OK)
              die("%s: spl_spmv_bcsr returned %d", name.c_str(), rc);
          }, note));
          impls.push_back(impl(chk, "bcsr", "f32", "c", t, ybc.data(), ylen, stored, [&, t] {
            if (t == 1)
              plain_bcsr_f32(bc.block_rows, bc.block, bc.offs, bc.blocks_f32, bc.block_cols_idx, xb.data(), ybc.data());
            else
              plain_bcsr_f32_omp(bc.block_rows, bc.block, bc.offs, bc.blocks_f32, bc.block_cols_idx, xb.data(),
                                 ybc.data());
          }, note));
          group(mi, "bcsr", "f32", t, mi.bytes32, impls);
        }
        spl_bcsr_free(&bc);
      }
    }
  }
};

// ---- Output --------------------------------------------------------------------------------------

std::string fmt(const char *f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string csvEscape(const std::string &s) {
  if (s.find_first_of(",\"") == std::string::npos)
    return s;
  std::string o = "\"";
  for (char c : s)
    o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

void writeCsv(const Config &cfg, const Machine &m, const Bench &b, const Triad &end) {
  std::ofstream f(cfg.csv);
  if (!f)
    die("cannot write %s", cfg.csv.c_str());
  f << "# date=" << cfg.date << ",commit=" << cfg.commit << ",cpu=" << csvEscape(m.cpu) << ",cores=" << m.cores
    << ",memory=" << m.memory << ",l3=" << m.l3 << ",load_start=" << m.loadStart << ",load_end=" << m.loadEnd << ",threads=" << cfg.threads << ",scale=" << cfg.scale << "\n";
  f << "matrix,group,class,rows,cols,nnz,stored,format,precision,impl,threads,median_s,min_s,samples,bytes,gbps,"
       "frac_triad,note\n";
  auto triadLine = [&](const char *name, int threads, double gbps) {
    f << name << ",stream,-,0,0,0,0,triad,f64,stream," << threads << ",0,0,0,0," << fmt("%.4f", gbps) << ",1,\n";
  };
  triadLine("triad_start", 1, b.triad.gbps1);
  triadLine("triad_start", cfg.threads, b.triad.gbpsAll);
  triadLine("triad_end", 1, end.gbps1);
  triadLine("triad_end", cfg.threads, end.gbpsAll);
  for (const Result &r : b.results)
    f << csvEscape(r.matrix) << "," << r.group << "," << r.klass << "," << r.rows << "," << r.cols << "," << r.nnz
      << "," << r.stored << "," << r.format << "," << r.prec << "," << r.impl << "," << r.threads << ","
      << fmt("%.9g", r.t.median) << "," << fmt("%.9g", r.t.min) << "," << r.t.samples << ","
      << fmt("%.0f", r.bytes) << "," << fmt("%.4f", r.gbps) << "," << fmt("%.4f", r.frac) << "," << r.note << "\n";
}

const Result *find(const Bench &b, const std::string &matrix, const char *format, const char *prec, const char *impl,
                   int threads) {
  for (const Result &r : b.results)
    if (r.matrix == matrix && r.format == format && r.prec == prec && r.impl == impl && r.threads == threads)
      return &r;
  return nullptr;
}

struct GeoMean {
  double logSum = 0;
  int count = 0;
  void add(double v) {
    if (v > 0 && std::isfinite(v)) {
      logSum += std::log(v);
      ++count;
    }
  }
  std::string str() const { return count ? fmt("%.2fx (%d)", std::exp(logSum / count), count) : "-"; }
};

std::string commas(int64_t v) {
  std::string s = std::to_string(v), o;
  int k = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (k && k % 3 == 0 && *it != '-')
      o += ',';
    o += *it;
    ++k;
  }
  return std::string(o.rbegin(), o.rend());
}

const char *implName(const std::string &i) {
  if (i == "eigen")
    return "Eigen";
  if (i == "rsb")
    return "librsb";
  if (i == "csparse")
    return "CSparse";
  if (i == "cholmod")
    return "CHOLMOD";
  if (i == "c")
    return "C loop";
  return i.c_str();
}

/// Geometric means leave out the tiny bundled real matrices (at most a few thousand entries: a
/// call takes microseconds and measures call and thread wake-up overhead, not SpMV).
bool averaged(const MatrixInfo &mi) { return mi.spec.group != "real"; }

bool isLargeBanded(const MatrixInfo &mi) {
  const std::string &k = mi.spec.klass;
  return !mi.fitsL3 && (k.rfind("banded", 0) == 0 || k.rfind("stencil", 0) == 0 || k.rfind("blocks", 0) == 0);
}

void writeMarkdown(const Config &cfg, const Machine &m, const Bench &b, const Triad &end) {
  std::ofstream f(cfg.md);
  if (!f)
    die("cannot write %s", cfg.md.c_str());
  const int all = cfg.threads;
  f << "# CPU SpMV: SPL against Eigen, librsb, SuiteSparse and plain C loops\n\n";
  f << "Written by `benchmarks/run.sh` (`spl-spmv-bench`); the CSV beside this file has every measurement, "
       "the PNG plots it.\n\n";
  f << "| | |\n|---|---|\n";
  f << "| date | " << cfg.date << " |\n";
  f << "| git commit | `" << cfg.commit << "` |\n";
  f << "| CPU | " << m.cpu << " |\n";
  f << "| cores | " << m.cores << " (threads used: 1 and " << all << ") |\n";
  f << "| memory | " << m.memory << " |\n";
  f << "| L3 cache | " << m.l3 << " |\n";
  f << "| load average (1, 5, 15 min) | " << m.loadStart << " at the start, " << m.loadEnd
    << " at the end (other work on the machine shows here, and hurts the multithreaded runs most) |\n";
  f << "| suite scale | " << cfg.scale << " (rows and entries of each mirrored matrix times the scale; see the last table) |\n";
  f << "| SPL kernels | `splc` default: -O3, host CPU (like -march=native); stdlib/spmv.spl (CSR), "
       "tests/contract/formats.spl (ELL, DIA, BCSR) |\n";
  f << "| baselines | " << SPL_BENCH_COMPILER << ", C++: `" << SPL_BENCH_FLAGS << "`, C loops: `" << SPL_BENCH_C_FLAGS
    << "`; Eigen " << eigen_version() << ", " << rsb_bench_version() << ", " << ss_version() << " |\n";
  f << "| threads | SPL: spl_set_num_threads; Eigen: Eigen::setNbThreads (OpenMP); librsb: "
       "RSB_IO_WANT_EXECUTING_THREADS (re-initialised per thread count); C loops: OpenMP `parallel for "
       "schedule(static)`; CSparse and CHOLMOD are serial. OMP_WAIT_POLICY="
    << (std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "(unset)") << ", GOMP_SPINCOUNT="
    << (std::getenv("GOMP_SPINCOUNT") ? std::getenv("GOMP_SPINCOUNT") : "(unset)") << " |\n";
  auto triadRange = [&](int t) {
    std::vector<double> v;
    for (const Result &r : b.results)
      if (r.impl == "triad" && r.threads == t)
        v.push_back(r.gbps);
    if (v.empty())
      return std::string("-");
    std::sort(v.begin(), v.end());
    return fmt("median %.2f GB/s (range %.2f to %.2f over %zu groups)", v[v.size() / 2], v.front(), v.back(), v.size());
  };
  f << "| STREAM triad beside each group, 1 thread | " << triadRange(1) << " |\n";
  if (all > 1)
    f << "| STREAM triad beside each group, " << all << " threads | " << triadRange(all) << " |\n";
  f << "| STREAM triad (start of run) | " << fmt("%.2f", b.triad.gbps1) << " GB/s on 1 thread, "
    << fmt("%.2f", b.triad.gbpsAll) << " GB/s on " << all << " |\n";
  f << "| STREAM triad (end of run) | " << fmt("%.2f", end.gbps1) << " GB/s on 1 thread, " << fmt("%.2f", end.gbpsAll)
    << " GB/s on " << all << " |\n\n";
  f << "Method: every implementation's result is checked against a double-precision reference "
       "(per row: |y - ref| <= 4 eps (len + 2) sum |a x|) before it is timed; the run aborts on a mismatch. "
       "Each group (a matrix, format, precision and thread count) runs its implementations and a STREAM triad "
       "of the same thread count interleaved, one sample of each per round in an order drawn anew each "
       "round, each sample right after one untimed call of the same implementation (none inherits a cache "
       "warmed or flushed by another), so that load from other processes hits them alike; times are medians of at least 5 rounds (each sample at least 1 ms of back-to-back "
       "calls, "
    << fmt("%.2f", cfg.budget)
    << " s budget per implementation) after a warm-up. GB/s counts the compulsory traffic of the CSR "
       "form: values, column indices, row offsets, x and y, each once (for ELL/DIA/BCSR the same CSR bytes, an "
       "effective rate). \"of triad\" divides by the triad bandwidth measured in the same group's rounds. "
       "\"vs X\" is X's time over SPL's: above 1, SPL is faster. Matrices whose f64 CSR "
       "fits in L3 (marked *) are timed warm in cache, so their GB/s can exceed the triad.\n\n";

  // Summary of geometric means.
  f << "## Summary: geometric mean of SPL's speedup (baseline time / SPL time; count of matrices)\n\n"
       "Over the generated matrices (the suite and the extras); the tiny bundled real matrices are listed in "
       "the tables but not averaged, as their calls take microseconds and measure call and thread wake-up "
       "overhead.\n\n";
  f << "| configuration | vs Eigen | vs librsb | vs CSparse | vs CHOLMOD | vs C loop | SPL of triad (median) |\n";
  f << "|---|---|---|---|---|---|---|\n";
  struct Cfg {
    const char *format, *prec;
    int threads;
    const char *impl = "spl";
  };
  std::vector<Cfg> configs;
  for (int t : all == 1 ? std::vector<int>{1} : std::vector<int>{1, all})
    for (const char *prec : {"f64", "f32"}) {
      configs.push_back({"csr", prec, t});
      configs.push_back({"csr", prec, t, "spl-plan"});
      configs.push_back({"sell", prec, t});
      configs.push_back({"sell", prec, t, "spl-slices"});
    }
  for (int t : all == 1 ? std::vector<int>{1} : std::vector<int>{1, all})
    for (const char *format : {"ell", "dia", "bcsr"})
      configs.push_back({format, "f32", t});
  const char *baselines[] = {"eigen", "rsb", "csparse", "cholmod", "c"};
  for (const Cfg &c : configs) {
    f << "| " << c.format << " " << c.prec << ", " << c.threads << (c.threads == 1 ? " thread" : " threads");
    if (std::string(c.format) == "sell")
      f << (std::string(c.impl) == "spl" ? ", y in row order" : ", y in slice order");
    if (std::string(c.impl) == "spl-plan")
      f << ", planned (the kernel a plan chose)";
    std::vector<double> fracs;
    for (const MatrixInfo &mi : b.infos)
      if (const Result *s = find(b, mi.spec.name, c.format, c.prec, c.impl, c.threads))
        if (!mi.fitsL3)
          fracs.push_back(s->frac);
    for (const char *base : baselines) {
      GeoMean g;
      for (const MatrixInfo &mi : b.infos) {
        const Result *s = find(b, mi.spec.name, c.format, c.prec, c.impl, c.threads);
        const Result *o = find(b, mi.spec.name, c.format, c.prec, base, c.threads);
        if (s && o && averaged(mi))
          g.add(o->t.median / s->t.median);
      }
      f << " | " << g.str();
    }
    std::sort(fracs.begin(), fracs.end());
    f << " | " << (fracs.empty() ? std::string("-") : fmt("%.0f%% (out of cache)", 100 * fracs[fracs.size() / 2]))
      << " |\n";
  }

  // The CPU targets on banded matrices larger than the cache: CSR, then SELL-C-sigma
  // (the same matrices converted once; of triad also with y left in slice order).
  auto targets = [&](const char *format, const std::string &title, const std::string &intro) {
    const bool sell = std::string(format) == "sell";
    f << "\n## " << title << "\n\n" << intro << "\n\n";
    f << "| matrix | class | nnz | f64 1T vs Eigen | f64 1T of triad | f64 " << all << "T vs Eigen | f64 " << all
      << "T of triad | f32 1T vs Eigen | f32 " << all << "T vs Eigen | f32 " << all << "T of triad |";
    if (sell)
      f << " f64 1T of triad, slice order | f64 " << all << "T of triad, slice order |";
    f << "\n|---|---|---|---|---|---|---|---|---|---|" << (sell ? "---|---|" : "") << "\n";
    int largeBanded = 0;
    for (const MatrixInfo &mi : b.infos) {
      if (!isLargeBanded(mi))
        continue;
      ++largeBanded;
      auto ratio = [&](const char *prec, int t) {
        const Result *s = find(b, mi.spec.name, format, prec, "spl", t), *e = find(b, mi.spec.name, format, prec, "eigen", t);
        return s && e ? fmt("%.2fx", e->t.median / s->t.median) : std::string("-");
      };
      auto frac = [&](const char *prec, int t, const char *impl = "spl") {
        const Result *s = find(b, mi.spec.name, format, prec, impl, t);
        return s ? fmt("%.0f%%", 100 * s->frac) : std::string("-");
      };
      f << "| " << mi.spec.name << " | " << mi.spec.klass << " | " << commas(mi.nnz) << " | " << ratio("f64", 1) << " | "
        << frac("f64", 1) << " | " << ratio("f64", all) << " | " << frac("f64", all) << " | " << ratio("f32", 1)
        << " | " << ratio("f32", all) << " | " << frac("f32", all) << " |";
      if (sell)
        f << " " << frac("f64", 1, "spl-slices") << " | " << frac("f64", all, "spl-slices") << " |";
      f << "\n";
    }
    if (!largeBanded)
      f << "| (none at this scale) | | | | | | | | | |" << (sell ? " | |" : "") << "\n";
  };
  targets("csr", "Targets on banded, stencil and block matrices larger than L3 (CSR)",
          "Issue 7 asks for CPU CSR SpMV at least 1.1x Eigen and at least 90% of the triad bound on banded "
          "matrices larger than the cache.");
  targets("sell", "The same matrices as SELL-C-sigma (converted once; Eigen runs the CSR form)",
          "SPL's `spmv_sell_rows` (y in row order) against Eigen on the CSR form; the last two columns are "
          "`spmv_sell`, its y left in slice order as a solver working in the permuted space uses it. GB/s "
          "still counts the CSR form's bytes.");

  // Per-configuration tables.
  // CSR (SPL against every baseline), or SELL (SPL with y in row order against Eigen and the C
  // loop on the CSR form, with the conversion's note).
  auto csrTable = [&](const char *format, const char *prec, int t) {
    const bool sell = std::string(format) == "sell";
    std::vector<std::string> bases = {"eigen"};
    if (!sell)
      bases.push_back("rsb");
    if (!sell && t == 1 && std::string(prec) == "f64") {
      bases.push_back("csparse");
      bases.push_back("cholmod");
    }
    bases.push_back("c");
    f << "\n## " << (sell ? "SELL-C-sigma " : "CSR ") << prec << ", " << t << (t == 1 ? " thread" : " threads") << "\n\n";
    f << "| matrix | class | rows | nnz | SPL ms | SPL GB/s | of triad";
    for (const auto &bs : bases)
      f << " | vs " << implName(bs);
    if (sell)
      f << " | slice order ms | slice order of triad | form";
    f << " |\n|---|---|---|---|---|---|---";
    for (size_t i = 0; i < bases.size() + (sell ? 3 : 0); ++i)
      f << "|---";
    f << "|\n";
    std::vector<GeoMean> g(bases.size());
    for (const MatrixInfo &mi : b.infos) {
      const Result *s = find(b, mi.spec.name, format, prec, "spl", t);
      if (!s)
        continue;
      f << "| " << mi.spec.name << (mi.fitsL3 ? "*" : "") << " | " << mi.spec.klass << " | " << commas(mi.rows) << " | "
        << commas(mi.nnz) << " | " << fmt("%.4g", s->t.median * 1e3) << " | " << fmt("%.2f", s->gbps) << " | "
        << fmt("%.0f%%", 100 * s->frac);
      for (size_t i = 0; i < bases.size(); ++i) {
        const Result *o = find(b, mi.spec.name, format, prec, bases[i].c_str(), t);
        if (o) {
          double r = o->t.median / s->t.median;
          if (averaged(mi))
            g[i].add(r);
          f << " | " << fmt("%.2f", r);
        } else {
          f << " | -";
        }
      }
      if (sell) {
        const Result *k = find(b, mi.spec.name, format, prec, "spl-slices", t);
        f << " | " << (k ? fmt("%.4g", k->t.median * 1e3) : std::string("-")) << " | "
          << (k ? fmt("%.0f%%", 100 * k->frac) : std::string("-")) << " | " << s->note;
      }
      f << " |\n";
    }
    f << "| **geometric mean** | | | | | |";
    for (const GeoMean &gm : g)
      f << " | **" << (gm.count ? fmt("%.2f", std::exp(gm.logSum / gm.count)) : std::string("-")) << "**";
    f << (sell ? " | | | |\n" : " |\n");
  };
  for (const char *format : {"csr", "sell"})
    for (const char *prec : {"f64", "f32"}) {
      csrTable(format, prec, 1);
      if (all > 1)
        csrTable(format, prec, all);
    }

  // The plans (issue 25): per matrix, precision and thread count, CSR and the planned kernel
  // against Eigen, the kernel chosen and what planning cost (in ms and in calls of SPL's CSR
  // kernel in the same group).
  {
    f << "\n## Plans: the kernel chosen per matrix (issue 25)\n\n"
      << "`planned` is the kernel a plan (runtime `spl_spmv_plan_*`, told to expect " << kPlanCalls
      << " calls) chose among stdlib's CSR, SELL-C-sigma, DIA and BCSR kernels, run as the plan runs it; \"planning\" "
         "is its whole cost (inspection, timings, conversions), also in calls of SPL's CSR kernel of the same "
         "group. Ratios are Eigen's time over SPL's.\n\n"
      << "| matrix | precision | threads | CSR vs Eigen | planned vs Eigen | chose | planning ms | = CSR calls |\n"
      << "|---|---|---|---|---|---|---|---|\n";
    GeoMean csrG, planG;
    int atLeast = 0, configs = 0;
    double fewest = 1e300, most = 0;
    std::vector<int> threadCounts = {1};
    if (all > 1)
      threadCounts.push_back(all);
    for (const MatrixInfo &mi : b.infos)
      for (const char *prec : {"f64", "f32"})
        for (int t : threadCounts) {
          const Result *s = find(b, mi.spec.name, "csr", prec, "spl", t), *pl = find(b, mi.spec.name, "csr", prec, "spl-plan", t),
                       *e = find(b, mi.spec.name, "csr", prec, "eigen", t);
          if (!s || !pl || !e)
            continue;
          const double csr = e->t.median / s->t.median, planned = e->t.median / pl->t.median;
          std::string chose = "-", planning = "-", calls = "-";
          double ms = 0;
          char word[32];
          if (std::sscanf(pl->note.c_str(), "chose %31s planned in %lf ms", word, &ms) == 2) {
            chose = std::string(word).substr(0, std::string(word).find(','));
            planning = fmt("%.1f", ms);
            const double c = ms / 1e3 / s->t.median;
            calls = fmt("%.1f", c);
            if (averaged(mi))
              fewest = std::min(fewest, c), most = std::max(most, c);
          }
          if (averaged(mi)) {
            csrG.add(csr);
            planG.add(planned);
            ++configs;
            atLeast += planned >= 1.0;
          }
          f << "| " << mi.spec.name << (mi.fitsL3 ? "*" : "") << " | " << prec << " | " << t << " | " << fmt("%.2f", csr) << " | "
            << fmt("%.2f", planned) << " | " << chose << " | " << planning << " | " << calls << " |\n";
        }
    if (configs > 0)
      f << "\nOver the generated matrices: planned at or above Eigen in " << atLeast << " of " << configs
        << " configurations; geometric mean against Eigen " << fmt("%.2f", std::exp(planG.logSum / planG.count))
        << "x planned, " << fmt("%.2f", std::exp(csrG.logSum / csrG.count)) << "x CSR alone; planning "
        << fmt("%.1f", fewest) << " to " << fmt("%.1f", most) << " CSR calls.\n";
  }

  // Formats.
  f << "\n## ELL, DIA and BCSR (f32) against plain C loops of the same format\n\n"
       "Run where the format stores at most 3x the entries (DIA: square matrices only; BCSR: the block size "
       "among 2, 3, 4, 6, 8 storing the fewest bytes). \"fill\" = stored slots / nnz.\n\n";
  f << "| matrix | format | fill | SPL 1T GB/s | vs C 1T";
  if (all > 1)
    f << " | SPL " << all << "T GB/s | vs C " << all << "T";
  f << " |\n|---|---|---|---|---";
  if (all > 1)
    f << "|---|---";
  f << "|\n";
  for (const MatrixInfo &mi : b.infos)
    for (const char *format : {"ell", "dia", "bcsr"}) {
      const Result *s1 = find(b, mi.spec.name, format, "f32", "spl", 1);
      if (!s1)
        continue;
      const Result *c1 = find(b, mi.spec.name, format, "f32", "c", 1);
      f << "| " << mi.spec.name << (mi.fitsL3 ? "*" : "") << " | " << format << (s1->note.empty() ? "" : " " + s1->note)
        << " | " << fmt("%.2f", static_cast<double>(s1->stored) / static_cast<double>(std::max<int64_t>(mi.nnz, 1)))
        << " | " << fmt("%.2f", s1->gbps) << " | " << (c1 ? fmt("%.2f", c1->t.median / s1->t.median) : "-");
      if (all > 1) {
        const Result *sa = find(b, mi.spec.name, format, "f32", "spl", all);
        const Result *ca = find(b, mi.spec.name, format, "f32", "c", all);
        f << " | " << (sa ? fmt("%.2f", sa->gbps) : "-") << " | "
          << (sa && ca ? fmt("%.2f", ca->t.median / sa->t.median) : "-");
      }
      f << " |\n";
    }

  // The suite.
  f << "\n## The matrices\n\n"
       "Mirrors are generated by `spl-matgen` with the structure class of the SuiteSparse matrix they stand "
       "for (see benchmarks/suite.tsv and benchmarks/README.md); \"original\" is the size they mirror, "
       "before scaling.\n\n";
  f << "| matrix | group | class | original rows | original nnz | rows | cols | nnz | max row | generator |\n";
  f << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const MatrixInfo &mi : b.infos)
    f << "| " << mi.spec.name << " | " << mi.spec.group << " | " << mi.spec.klass << " | " << mi.spec.origRows << " | "
      << mi.spec.origNnz << " | " << commas(mi.rows) << " | " << commas(mi.cols) << " | " << commas(mi.nnz) << " | "
      << commas(mi.maxRow) << " | `" << mi.spec.generator << "` |\n";
}

} // namespace

int main(int argc, char **argv) {
  bench_require_passive_openmp(argv);
  Config cfg = parseArgs(argc, argv);
  Machine mach = machine();
  mach.loadStart = loadAverage();
  if (rsb_bench_init() != 0)
    die("librsb failed to initialise");
  if (ss_init() != 0)
    die("CHOLMOD failed to start");
  Bench bench{cfg, {}, {}, {}, {}};
  bench.arrays.init(cfg.threads);
  std::printf("machine: %s, %d cores, %s, L3 %s; threads 1 and %d\n", mach.cpu.c_str(), mach.cores,
              mach.memory.c_str(), mach.l3.c_str(), cfg.threads);
  bench.triad = streamTriad(bench.arrays, cfg.threads, 0.5);
  std::printf("STREAM triad: %.2f GB/s (1 thread), %.2f GB/s (%d threads)\n", bench.triad.gbps1, bench.triad.gbpsAll,
              cfg.threads);
  for (const MatrixSpec &spec : cfg.matrices) {
    if (!cfg.only.empty() && spec.name != cfg.only)
      continue;
    bench.matrix(spec, mach);
  }
  Triad end = streamTriad(bench.arrays, cfg.threads, 0.5);
  mach.loadEnd = loadAverage();
  std::printf("STREAM triad at the end: %.2f GB/s (1 thread), %.2f GB/s (%d threads)\n", end.gbps1, end.gbpsAll,
              cfg.threads);
  if (!cfg.csv.empty())
    writeCsv(cfg, mach, bench, end);
  if (!cfg.md.empty())
    writeMarkdown(cfg, mach, bench, end);
  ss_exit();
  rsb_bench_exit();
  return 0;
}
