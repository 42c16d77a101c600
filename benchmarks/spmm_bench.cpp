// spl-spmm-bench: C = A B (A CSR, B dense of k columns, row-major) with SPL's kernels against
// Eigen's sparse x dense product, run in the same process, with a STREAM triad of the same thread
// count beside each group (issue 25 item 4: plans of SpMM).
//
//   spl-spmm-bench --manifest FILE --md OUT.md --csv OUT.csv [--widths 1,2,3,4,8,16,9]
//                  [--threads 1,2] [--budget SECONDS] [--calls N] [--git COMMIT]
//
// The manifest is benchmarks/run.sh's (name, group, class, rows, nnz, file, how made). For each
// matrix, precision (f64, f32), thread count and width k: SPL's kernel of any k (stdlib/spmm.spl's
// spmm_csr_T, what a caller without a plan runs), SPL's plan (spl_spmm_plan_* over stdlib spmm's
// kernels of widths 1-8, 10, 12, 16, 24, 32 and 64, for --calls expected calls; its kernel and its planning
// time in calls of the kernel of any k are reported), and Eigen (SparseMatrix<T, RowMajor> times
// a row-major dense matrix, OpenMP threads). Every implementation's C is checked against a
// double-precision reference (one SpMV a column, per row |C - ref| <= 4 eps (len + 2) sum |a b|)
// before it is timed. Timing: rounds of one sample of each implementation and of the triad in an
// order drawn anew each round, each sample after one untimed call, at least 1 ms of back-to-back
// calls; medians of at least 5 rounds. GB/s counts the compulsory bytes of the CSR form: values,
// column indices, offsets, B and C once each.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "baselines.h"
#include "plain_loops.h"
#include "spl_matrix.h"
#include "spl_runtime.h"
#include "spmm.h"

namespace {

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "spl-spmm-bench: %s\n", msg.c_str());
  std::exit(2);
}

double seconds_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// One sample: the mean time of back-to-back calls filling at least 1 ms, after an untimed call.
double sample(const std::function<void()> &fn) {
  fn();
  const double t0 = seconds_now();
  fn();
  const double one = std::max(seconds_now() - t0, 1e-9);
  const int reps = std::max(1, static_cast<int>(std::ceil(1e-3 / one)));
  const double t1 = seconds_now();
  for (int r = 0; r < reps; ++r) fn();
  return (seconds_now() - t1) / reps;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <typename T> struct Kernels;
template <> struct Kernels<double> {
  static spl_spmm_kernels_f64 table() { return SPL_SPMM_STDLIB_KERNELS(f64); }
  static constexpr auto any = spl_spmm_csr_f64;
  static constexpr auto plan = spl_spmm_plan_f64;
  static constexpr auto run = spl_spmm_run_f64;
  static constexpr auto eigen = eigen_spmm_f64;
  static constexpr const char *name = "f64";
};
template <> struct Kernels<float> {
  static spl_spmm_kernels_f32 table() { return SPL_SPMM_STDLIB_KERNELS(f32); }
  static constexpr auto any = spl_spmm_csr_f32;
  static constexpr auto plan = spl_spmm_plan_f32;
  static constexpr auto run = spl_spmm_run_f32;
  static constexpr auto eigen = eigen_spmm_f32;
  static constexpr const char *name = "f32";
};

struct Row {
  std::string matrix, klass, prec, kernel;
  int threads = 0;
  int64_t k = 0, nnz = 0;
  double eigen = 0, any = 0, planned = 0, planning_calls = 0, gbps = 0, triad = 0;
};

/// C against the double-precision reference, per row as spl-spmv-bench checks an SpMV.
template <typename T>
void check(const spl_csr &a, const std::vector<T> &B, const std::vector<T> &C, int64_t k, const char *what) {
  const double eps = sizeof(T) == 4 ? 1.2e-7 : 2.3e-16;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t l = 0; l < k; ++l) {
      double ref = 0, mag = 0;
      for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) {
        const double t = a.vals[p] * static_cast<double>(B[static_cast<size_t>(a.cols_idx[p] * k + l)]);
        ref += t;
        mag += std::fabs(t);
      }
      const double len = static_cast<double>(a.offs[i + 1] - a.offs[i]);
      if (std::fabs(static_cast<double>(C[static_cast<size_t>(i * k + l)]) - ref) > 4 * eps * (len + 2) * mag + 1e-300)
        die(std::string(what) + ": C differs from the reference at row " + std::to_string(i));
    }
}

template <typename T>
Row group(const std::string &name, const std::string &klass, const spl_csr &a, int threads, int64_t k, int64_t calls,
          double budget, double *triad_a, double *triad_b, double *triad_c, int64_t triad_n, std::mt19937 &rng) {
  using K = Kernels<T>;
  spl_set_num_threads(threads);
  eigen_set_threads(threads);
  omp_set_num_threads(threads);
  std::vector<int32_t> offs(a.offs, a.offs + a.rows + 1), cols(a.cols_idx, a.cols_idx + a.nnz);
  std::vector<T> vals(a.vals, a.vals + a.nnz);
  cols.push_back(0), vals.push_back(0);
  std::vector<T> B(static_cast<size_t>(a.cols * k) + 1), C(static_cast<size_t>(a.rows * k) + 1);
  for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<T>(std::sin(0.37 * static_cast<double>(i)) + 0.5);
  const auto table = K::table();
  auto any = [&] { K::any(a.rows, a.cols, k, offs.data(), vals.data(), cols.data(), B.data(), C.data()); };
  Row r;
  r.matrix = name, r.klass = klass, r.prec = K::name, r.threads = threads, r.k = k, r.nnz = a.nnz;
  // Planning, in calls of the kernel of any k (its own time measured first, as a caller would).
  const double any_once = sample(any);
  spl_plan *plan = nullptr;
  const double p0 = seconds_now();
  if (K::plan(a.rows, a.cols, k, offs.data(), cols.data(), vals.data(), calls, &table, &plan) != SPL_OK) die("plan failed on " + name);
  r.planning_calls = (seconds_now() - p0) / any_once;
  r.kernel = spl_plan_kernel(plan);
  auto planned = [&] { K::run(plan, B.data(), C.data()); };
  auto eigen = [&] { K::eigen(a.rows, a.cols, a.nnz, offs.data(), cols.data(), vals.data(), k, B.data(), C.data()); };
  const std::vector<std::pair<const char *, std::function<void()>>> impls = {{"any", any}, {"planned", planned}, {"eigen", eigen}};
  for (const auto &[what, fn] : impls) {
    std::fill(C.begin(), C.end(), T(-1));
    fn();
    check(a, B, C, k, what);
  }
  auto triad = [&] {
    if (threads == 1) stream_triad(triad_n, triad_a, triad_b, triad_c, 3.0);
    else stream_triad_omp(triad_n, triad_a, triad_b, triad_c, 3.0);
  };
  std::vector<std::vector<double>> times(impls.size() + 1);
  const double g0 = seconds_now();
  for (int round = 0; round < 5 || (seconds_now() - g0 < budget * 4 && round < 40); ++round) {
    std::vector<size_t> order(impls.size() + 1);
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) times[i].push_back(sample(i < impls.size() ? impls[i].second : triad));
  }
  spl_plan_free(plan);
  r.any = median(times[0]), r.planned = median(times[1]), r.eigen = median(times[2]);
  r.triad = 3.0 * 8.0 * static_cast<double>(triad_n) / median(times[3]) * 1e-9;
  const double bytes = static_cast<double>(a.nnz) * (sizeof(T) + 4) + static_cast<double>(a.rows + 1) * 4 +
                       static_cast<double>(a.rows + a.cols) * static_cast<double>(k) * sizeof(T);
  r.gbps = bytes / r.planned * 1e-9;
  return r;
}

std::vector<int64_t> parseList(const std::string &s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoll(item.c_str()));
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  bench_require_passive_openmp(argv);
  std::string manifest, md, csv, git = "unknown";
  std::vector<int64_t> widths{1, 2, 3, 4, 8, 16, 9}, threadCounts{1, 2};
  double budget = 0.2;
  int64_t calls = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--manifest") manifest = next();
    else if (a == "--md") md = next();
    else if (a == "--csv") csv = next();
    else if (a == "--widths") widths = parseList(next());
    else if (a == "--threads") threadCounts = parseList(next());
    else if (a == "--budget") budget = std::atof(next().c_str());
    else if (a == "--calls") calls = std::atoll(next().c_str());
    else if (a == "--git") git = next();
    else die("unknown option " + a);
  }
  if (manifest.empty() || md.empty() || csv.empty()) die("usage: spl-spmm-bench --manifest FILE --md OUT.md --csv OUT.csv [...]");
  std::ifstream in(manifest);
  if (!in) die("cannot read " + manifest);
  const int64_t triad_n = int64_t{1} << 23;
  double *ta = static_cast<double *>(spl_alloc(triad_n * 8)), *tb = static_cast<double *>(spl_alloc(triad_n * 8)),
         *tc = static_cast<double *>(spl_alloc(triad_n * 8));
  if (!ta || !tb || !tc) die("cannot allocate the STREAM arrays");
  omp_set_num_threads(static_cast<int>(*std::max_element(threadCounts.begin(), threadCounts.end())));
  stream_init_omp(triad_n, ta, tb, tc);
  std::mt19937 rng(2026);
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string item; std::getline(ls, item, '\t');) f.push_back(item);
    if (f.size() < 6) continue;
    spl_csr a{};
    char err[512];
    if (spl_read_matrix(f[5].c_str(), &a, err, sizeof err) != 0) die("cannot read " + f[5] + ": " + err);
    for (int64_t k : widths)
      for (int64_t t : threadCounts) {
        for (int prec = 0; prec < 2; ++prec) {
          Row r = prec == 0 ? group<double>(f[0], f[2], a, static_cast<int>(t), k, calls, budget, ta, tb, tc, triad_n, rng)
                            : group<float>(f[0], f[2], a, static_cast<int>(t), k, calls, budget, ta, tb, tc, triad_n, rng);
          std::fprintf(stderr, "%s %s %dT k=%lld: eigen %.3f ms, any k %.3f ms, planned %.3f ms (%s, planning %.1f calls)\n",
                       r.matrix.c_str(), r.prec.c_str(), r.threads, (long long)r.k, r.eigen * 1e3, r.any * 1e3, r.planned * 1e3,
                       r.kernel.c_str(), r.planning_calls);
          rows.push_back(r);
        }
      }
    spl_csr_free(&a);
  }
  std::ofstream c(csv);
  c << "matrix,class,precision,threads,k,nnz,eigen_s,spl_any_k_s,spl_planned_s,planned_kernel,planning_calls_of_any_k,"
       "planned_gbps,triad_gbps\n";
  for (const Row &r : rows)
    c << r.matrix << ',' << r.klass << ',' << r.prec << ',' << r.threads << ',' << r.k << ',' << r.nnz << ',' << r.eigen << ','
      << r.any << ',' << r.planned << ',' << r.kernel << ',' << r.planning_calls << ',' << r.gbps << ',' << r.triad << '\n';
  std::ofstream o(md);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
  o << "# CPU SpMM, C = A B: SPL against Eigen\n\nWritten by `benchmarks/run-spmm.sh` (`spl-spmm-bench`); the CSV beside this "
       "file has every measurement.\n\n| | |\n|---|---|\n| date | "
    << date << " |\n| git commit | `" << git << "` |\n| Eigen | " << eigen_version() << " |\n| expected calls given to the plan | "
    << calls << " |\n\n";
  o << "Method: for each matrix, precision, thread count and width k of B, three implementations are checked against a "
       "double-precision reference and timed in rounds with a STREAM triad of the same thread count, in an order drawn "
       "anew each round (medians of at least 5 rounds, each sample at least 1 ms of calls after an untimed one): SPL's "
       "kernel of any k (`spmm_csr_T`), SPL's plan (`spl_spmm_plan_*` over stdlib/spmm.spl's kernels of widths 1-8, 10, 12, "
       "16, 24, 32 and 64; a k without kernels of its own runs the kernel of any k or, where the copies are cheap, panels of the others' widths) and Eigen's row-major sparse times a row-major "
       "dense matrix. \"vs Eigen\" is Eigen's time over SPL's (above 1: SPL faster). GB/s: values, columns, offsets, B and "
       "C once each over the planned time; \"planning\": the plan's time in calls of the kernel of any k.\n\n";
  std::vector<double> logAny, logPlanned;
  int atLeast = 0;
  o << "| matrix | class | prec | threads | k | any k vs Eigen | planned vs Eigen | kernel | planning (calls) | planned GB/s | "
       "triad GB/s |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row &r : rows) {
    char line[512];
    std::snprintf(line, sizeof line, "| %s | %s | %s | %d | %lld | %.2fx | %.2fx | %s | %.1f | %.1f | %.1f |\n", r.matrix.c_str(),
                  r.klass.c_str(), r.prec.c_str(), r.threads, (long long)r.k, r.eigen / r.any, r.eigen / r.planned,
                  r.kernel.c_str(), r.planning_calls, r.gbps, r.triad);
    o << line;
    logAny.push_back(std::log(r.eigen / r.any));
    logPlanned.push_back(std::log(r.eigen / r.planned));
    atLeast += r.eigen / r.planned >= 1.0;
  }
  auto geomean = [](const std::vector<double> &v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : std::exp(s / static_cast<double>(v.size()));
  };
  char summary[256];
  std::snprintf(summary, sizeof summary,
                "\n## Summary\n\nGeometric mean over %zu configurations: kernel of any k %.2fx Eigen, planned %.2fx Eigen; "
                "planned at or above Eigen in %d of %zu.\n",
                rows.size(), geomean(logAny), geomean(logPlanned), atLeast, rows.size());
  o << summary;
  spl_free(ta);
  spl_free(tb);
  spl_free(tc);
  return 0;
}
