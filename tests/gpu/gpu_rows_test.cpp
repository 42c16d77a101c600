// GPU tests of the row mappings of a reduction over CSR rows, on rows of every length (ctest
// labels gpu and gpu_emulated): the default (a merge path over row ends and nonzeros) and each
// mapping a schedule asks for (gpu_rows: thread, vector, vector of 2, merge; gpu_merge's knobs),
// for sums, a maximum, products and a row suffix. Matrices: the real and random test matrices,
// one dense row among short ones, long rows around and across the old chunk size (512) and its
// multiples, rows of over a million entries, and hubs among short rows (the merge path's
// whole-warp pass). Results are compared with a double-precision reference computed here; the
// row lengths (an i32 sum) must be exact, and the products are poisoned before each mapping runs.
#include <cmath>
#include <random>

#include "e2e_support.h"
#include "gpu_rows.h"
#include "gpu_support.h"
#include "spl_runtime.h"

namespace {

struct Csr {
  std::string name;
  int64_t n = 0, m = 0;
  std::vector<int32_t> offs{0}, cols;
  std::vector<double> vals;
  void addRow(int64_t length, std::mt19937_64 &rng) {
    std::uniform_int_distribution<int64_t> col(0, m - 1);
    std::uniform_real_distribution<double> val(0.999, 1.001);
    std::uniform_int_distribution<int> sign(0, 1);
    for (int64_t k = 0; k < length; ++k) {
      cols.push_back(static_cast<int32_t>(length >= m ? k % m : col(rng)));
      vals.push_back(val(rng) * (sign(rng) ? 1 : -1));
    }
    offs.push_back(static_cast<int32_t>(cols.size()));
    ++n;
  }
};

Csr fromLengths(const std::string &name, int64_t m, const std::vector<int64_t> &lengths, uint64_t seed) {
  Csr a;
  a.name = name;
  a.m = m;
  std::mt19937_64 rng(seed);
  for (int64_t len : lengths) a.addRow(len, rng);
  return a;
}

Csr fromSplCsr(const spl_e2e::NamedMatrix &nm) {
  Csr a;
  a.name = nm.name;
  a.n = nm.m.rows;
  a.m = nm.m.cols;
  a.offs.assign(nm.m.offs, nm.m.offs + nm.m.rows + 1);
  a.cols.assign(nm.m.cols_idx, nm.m.cols_idx + nm.m.nnz);
  a.vals.assign(nm.m.vals, nm.m.vals + nm.m.nnz);
  return a;
}

const std::vector<Csr> &rowMatrices() {
  static std::vector<Csr> all;
  if (!all.empty()) return all;
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) all.push_back(fromSplCsr(nm));
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> shortRow(0, 3);
  {
    std::vector<int64_t> lengths(3000);
    for (int64_t &l : lengths) l = shortRow(rng);
    lengths[1500] = 3000;  // one dense row
    all.push_back(fromLengths("one_dense_row", 3000, lengths, 1));
  }
  {
    // Lengths around the chunk size (512) and its multiples, between short and empty rows, so
    // that rows begin and end on, just before and just after chunk boundaries.
    std::vector<int64_t> lengths;
    const int64_t longOnes[] = {511, 512, 513, 1023, 1024, 1025, 1536, 2047, 2048, 2049, 4100, 9000, 20000, 513, 513};
    for (int64_t l : longOnes) {
      for (int k = 0; k < 40; ++k) lengths.push_back(shortRow(rng));
      lengths.push_back(l);
      lengths.push_back(0);
    }
    all.push_back(fromLengths("long_rows_at_chunk_edges", 5000, lengths, 2));
  }
  {
    // Long rows back to back: every chunk meets a continuing and a head row. The average is
    // 14, so T = 512: the rows of 512 and 513 sit on either side of the threshold.
    std::vector<int64_t> lengths(600, 1);
    lengths.push_back(512);
    lengths.push_back(513);
    for (int k = 0; k < 12; ++k) lengths.push_back(700 + 97 * k);
    for (int k = 0; k < 600; ++k) lengths.push_back(1);
    all.push_back(fromLengths("adjacent_long_rows", 800, lengths, 3));
  }
  {
    // 2.6 M nonzeros: the chunk grows to ceil(nnz / 4096) > 512.
    std::vector<int64_t> lengths(4000, 40);
    lengths[7] = 1000000;
    lengths[2000] = 1400000;
    all.push_back(fromLengths("chunks_past_the_minimum", 100000, lengths, 4));
  }
  all.push_back(fromLengths("one_long_row_only", 10000, {10000}, 5));
  {
    // A power-law graph's rows: mostly 1 to 6 entries, hubs of up to 600 (some side by side)
    // among them. A merge-path warp gives each lane its own rows here, and its hubs need more
    // than kMergeLongRowSteps steps of that one lane: the whole warp sums them afterwards.
    std::mt19937_64 hubRng(6);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<int64_t> lengths(6000);
    for (int64_t &l : lengths) l = std::min<int64_t>(600, static_cast<int64_t>(1.0 / std::pow(u(hubRng) + 1e-9, 1.6)));
    for (int k = 0; k < 4; ++k) lengths[3000 + k] = 300 + 50 * k;
    all.push_back(fromLengths("hubs_among_short_rows", 4000, lengths, 6));
  }
  return all;
}

constexpr size_t kNumRowMatrices = spl_e2e::kNumTestMatrices + 6;

using spl_gpu_test::download;
using spl_gpu_test::upload;

/// Device copies of a matrix and of x, freed at the end of the test.
struct DeviceCsr {
  explicit DeviceCsr(const Csr &a, const std::vector<double> &x)
      : offs(upload(a.offs)), cols(upload(a.cols)), vals(upload(a.vals)), dx(upload(x)), out(upload(std::vector<double>(a.n + 1, -7.0))) {}
  ~DeviceCsr() {
    for (void *p : {offs, cols, vals, dx, out}) spl_cuda_free(p, nullptr);
  }
  void *offs, *cols, *vals, *dx, *out;
};

class GpuRows : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
};

TEST_P(GpuRows, EveryRowReductionMatchesTheReference) {
  const Csr &a = rowMatrices()[GetParam()];
  std::vector<double> x(static_cast<size_t>(a.m));
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (double &v : x) v = dist(rng);
  DeviceCsr d(a, x);
  auto *offs = static_cast<const int32_t *>(d.offs);
  auto *vals = static_cast<const double *>(d.vals);
  auto *out = static_cast<double *>(d.out);
  size_t n = static_cast<size_t>(a.n);

  // The default mapping, and each one a schedule asks for (gpu_rows): the same products.
  using Spmv = int (*)(void *, int64_t, int64_t, const int32_t *, const int32_t *, const double *, const double *, double *);
  const std::pair<const char *, Spmv> mappings[] = {{"default", spl_rows_spmv64_cuda},
                                                    {"gpu_rows(i, thread)", spl_rows_spmv64_thread_cuda},
                                                    {"gpu_rows(i, vector)", spl_rows_spmv64_vector_cuda},
                                                    {"gpu_rows(i, merge)", spl_rows_spmv64_merge_cuda},
                                                    {"gpu_rows(i, vector, 2)", spl_rows_spmv64_vector2_cuda},
                                                    {"gpu_merge(i, 1, 2)", spl_rows_spmv64_merge_tuned_cuda}};
  std::vector<double> y;
  for (const auto &[mapping, spmv] : mappings) {
    const std::vector<double> poison(n + 1, std::nan(""));  // a row left unwritten fails
    ASSERT_EQ(spl_cuda_memcpy(d.out, poison.data(), poison.size() * sizeof(double), 0, nullptr), SPL_OK);
    ASSERT_EQ(spmv(nullptr, a.n, a.m, offs, static_cast<const int32_t *>(d.cols), vals, static_cast<const double *>(d.dx), out),
              SPL_OK)
        << mapping;
    y = download<double>(d.out, n);
    for (size_t i = 0; i < n; ++i) {
      double want = 0, scale = 1;
      for (int32_t k = a.offs[i]; k < a.offs[i + 1]; ++k) {
        want += a.vals[k] * x[a.cols[k]];
        scale += std::fabs(a.vals[k] * x[a.cols[k]]);
      }
      ASSERT_NEAR(y[i], want, 1e-12 * scale)
          << a.name << " spmv (" << mapping << ") row " << i << " of length " << a.offs[i + 1] - a.offs[i];
    }
  }

  ASSERT_EQ(spl_rows_lengths_cuda(nullptr, a.n, offs, vals, reinterpret_cast<int32_t *>(out)), SPL_OK);
  std::vector<int32_t> lengths = download<int32_t>(d.out, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(lengths[i], a.offs[i + 1] - a.offs[i]) << a.name << " row " << i;

  ASSERT_EQ(spl_rows_max_cuda(nullptr, a.n, offs, vals, out), SPL_OK);
  y = download<double>(d.out, n);
  for (size_t i = 0; i < n; ++i) {
    double want = -1.0e300;
    for (int32_t k = a.offs[i]; k < a.offs[i + 1]; ++k) want = std::max(want, a.vals[k]);
    ASSERT_EQ(y[i], want) << a.name << " max of row " << i;
  }

  ASSERT_EQ(spl_rows_products_cuda(nullptr, a.n, offs, vals, out), SPL_OK);
  y = download<double>(d.out, n);
  for (size_t i = 0; i < n; ++i) {
    double want = 1;
    for (int32_t k = a.offs[i]; k < a.offs[i + 1]; ++k) want *= a.vals[k];
    ASSERT_NEAR(y[i], want, 1e-9 * std::max(1.0, std::fabs(want))) << a.name << " product of row " << i;
  }

  ASSERT_EQ(spl_rows_half_sum_plus_one_cuda(nullptr, a.n, offs, vals, out), SPL_OK);
  y = download<double>(d.out, n);
  for (size_t i = 0; i < n; ++i) {
    double sum = 0, scale = 1;
    for (int32_t k = a.offs[i]; k < a.offs[i + 1]; ++k) {
      sum += a.vals[k];
      scale += std::fabs(a.vals[k]);
    }
    ASSERT_NEAR(y[i], 0.5 * sum + 1.0, 1e-12 * scale) << a.name << " suffix of row " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuRows, ::testing::Range<size_t>(0, kNumRowMatrices),
                         [](const ::testing::TestParamInfo<size_t> &info) {
                           std::string name = rowMatrices()[info.param].name;
                           for (char &c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
