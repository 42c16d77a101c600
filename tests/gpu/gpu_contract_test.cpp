// GPU execution tests of the contract examples not covered by gpu_test.cpp (ctest labels gpu and
// gpu_emulated): formats.spl (ELL row- and column-major, DIA, BCSR), convert.spl (maximum row
// length, CSR to ELL), dense2csr.spl (offsets, then compression row- and column-major, with
// NAME_cuda_size), bfs.spl (write offsets, then the next frontier, with NAME_cuda_size),
// trmv.spl, spmv_deppair.spl, einsum.spl (CSC, COO, SpMM, SDDMM, residual, CSR to dense) and
// spmv_csr.spl (packed CSR, row sums). Every cuda function runs on device copies of its inputs
// and every output is compared with the CPU function of the same .spl file (itself checked
// against references in tests/e2e): integer outputs (offsets, columns, counts, sizes) and copied
// values exactly, computed f32 values to a relative 1e-5. Device outputs are allocated one entry
// longer than needed and filled with a sentinel (NaN for f32, -7 for integers), so that an entry
// left unwritten and a write past the end both show. The pipelines run on the device end to end:
// the offsets dense2csr_offsets_cuda computes feed dense2csr_cuda, and the write offsets
// bfs_count_cuda computes feed bfs_frontier_cuda. Functions taking a CSR also run with offsets
// that do not start at 0 (rows start at offs@i - offs@0, c-abi.md).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bfs.h"
#include "convert.h"
#include "dense2csr.h"
#include "e2e_support.h"
#include "einsum.h"
#include "formats.h"
#include "gpu_support.h"
#include "spl_runtime.h"
#include "spmv_csr.h"
#include "spmv_deppair.h"
#include "trmv.h"

namespace {

constexpr double kTolerance = 1e-5;
constexpr int32_t kIntSentinel = -7;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

#define CPU_OK(call) ASSERT_EQ((call), SPL_OK) << "CPU: " #call
#define CUDA_OK(call) ASSERT_EQ((call), SPL_OK) << "cuda: " #call << ": " << spl_cuda_last_error()

using Dev = spl_gpu_test::DeviceBuffer;

template <typename T>
bool sameBits(const T &a, const T &b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
T sentinelOf() {
  if constexpr (std::is_same_v<T, float>)
    return kNaN;
  else
    return static_cast<T>(kIntSentinel);
}

/// An output of n entries, on the host (for the CPU function) or the device (for the cuda one),
/// with one extra entry; all n + 1 start as the sentinel. read() returns the n entries and checks
/// that the extra one is untouched.
template <typename T>
class HostOut {
 public:
  explicit HostOut(size_t n) : n_(n), data_(n + 1, sentinelOf<T>()) {}
  T *ptr() { return data_.data(); }
  std::vector<T> read(const std::string &what) const {
    EXPECT_TRUE(sameBits(data_[n_], sentinelOf<T>())) << what << ": the CPU wrote past its " << n_ << " outputs";
    return std::vector<T>(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(n_));
  }

 private:
  size_t n_;
  std::vector<T> data_;
};

template <typename T>
class DevOut {
 public:
  explicit DevOut(size_t n) : n_(n), dev_(std::vector<T>(n + 1, sentinelOf<T>())) {}
  T *ptr() { return dev_.as<T>(); }
  std::vector<T> read(const std::string &what) const {
    std::vector<T> all = dev_.download<T>(n_ + 1);
    EXPECT_TRUE(sameBits(all[n_], sentinelOf<T>())) << what << ": the device wrote past its " << n_ << " outputs";
    all.pop_back();
    return all;
  }

 private:
  size_t n_;
  Dev dev_;
};

/// Integer outputs and copied values: equal entry by entry (a NaN sentinel left unwritten
/// differs from everything).
template <typename T>
void expectSame(const std::vector<T> &got, const std::vector<T> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(got[i] == want[i]) && ++bad <= 5)
      ADD_FAILURE() << what << ": entry " << i << " is " << got[i] << " on the device, " << want[i] << " on the CPU";
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << want.size() << " entries differ";
}

/// Computed f32 outputs: |got - want| <= 1e-5 * max(1, max |want|) for every entry (the
/// summation order differs between the CPU and the GPU); NaN fails.
void expectClose(const std::vector<float> &got, const std::vector<float> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1;
  for (float w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    if (!(err <= kTolerance * scale) && ++bad <= 5)
      ADD_FAILURE() << what << ": entry " << i << " is " << got[i] << " on the device, " << want[i]
                    << " on the CPU (scale " << scale << ")";
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << want.size() << " entries differ";
}

/// A host vector with one spare element (so that .data() is never null for empty data).
template <typename T>
std::vector<T> withSpare(std::vector<T> v) {
  v.push_back(T{});
  return v;
}

std::vector<float> randomF(int64_t n, uint64_t seed) { return spl_e2e::randomVectorF(n, seed); }

/// An f32 CSR on the host whose offsets start at `base` (the arrays hold offs@n - offs@0
/// entries, plus a spare one).
struct HostCsr {
  int64_t n = 0, m = 0, nnz = 0;
  std::vector<int32_t> offs, cols;
  std::vector<float> vals;
};

HostCsr hostCsr(const spl_csr &a, int32_t base) {
  HostCsr h;
  h.n = a.rows;
  h.m = a.cols;
  h.nnz = a.nnz;
  for (int64_t i = 0; i <= a.rows; ++i) h.offs.push_back(static_cast<int32_t>(a.offs[i] - a.offs[0]) + base);
  h.cols.assign(a.cols_idx, a.cols_idx + a.nnz);
  for (int64_t k = 0; k < a.nnz; ++k) h.vals.push_back(static_cast<float>(a.vals[k]));
  h.cols.push_back(0);
  h.vals.push_back(0.0f);
  return h;
}

/// Device copies of a HostCsr.
struct DevCsr {
  explicit DevCsr(const HostCsr &h) : offs(h.offs), cols(h.cols), vals(h.vals) {}
  Dev offs, cols, vals;
};

std::string matrixName(size_t i) { return spl_e2e::testMatrices()[i].name; }

using spl_e2e::padded;

class GpuTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
  const spl_csr &matrix() const { return spl_e2e::testMatrices()[GetParam()].m; }
  std::string name() const { return matrixName(GetParam()); }
};

// ---- formats.spl ------------------------------------------------------------------------------

using EllFn = int (*)(int64_t, int64_t, int64_t, const float *, const int32_t *, const float *, float *);
using EllCudaFn = int (*)(void *, int64_t, int64_t, int64_t, const float *, const int32_t *, const float *, float *);

class GpuFormats : public GpuTest {
 protected:
  /// Runs an ELL SpMV with w slots per row (vals/cols already laid out for the layout).
  void runEll(EllFn cpu, EllCudaFn cuda, int64_t w, const std::vector<float> &vals, const std::vector<int32_t> &cols,
              const std::string &what) {
    const spl_csr &a = matrix();
    const std::vector<float> x = randomF(a.cols, 11);
    HostOut<float> want(static_cast<size_t>(a.rows));
    CPU_OK(cpu(a.rows, a.cols, w, vals.data(), cols.data(), x.data(), want.ptr()));
    Dev dv(vals), dc(cols), dx(x);
    DevOut<float> got(static_cast<size_t>(a.rows));
    CUDA_OK(cuda(nullptr, a.rows, a.cols, w, dv.as<float>(), dc.as<int32_t>(), dx.as<float>(), got.ptr()));
    expectClose(got.read(what), want.read(what), what);
  }
};

TEST_P(GpuFormats, EllRowMajor) {
  const spl_csr &a = matrix();
  spl_ell ell{};
  ASSERT_EQ(spl_csr_to_ell(&a, SPL_ELL_ROW_MAJOR, &ell), SPL_MATRIX_OK);
  // The library's width (the longest row), then 3 more slots of value 0 / column 0 per row.
  for (int64_t w : {ell.width, ell.width + 3}) {
    std::vector<float> vals;
    std::vector<int32_t> cols;
    spl_e2e::widenEllRows(ell, a.rows, w, vals, cols);
    runEll(spl_spmv_ell, spl_spmv_ell_cuda, w, vals, cols, name() + " ELL width " + std::to_string(w));
  }
  spl_ell_free(&ell);
}

TEST_P(GpuFormats, EllColumnMajor) {
  const spl_csr &a = matrix();
  spl_ell ell{};
  ASSERT_EQ(spl_csr_to_ell(&a, SPL_ELL_COL_MAJOR, &ell), SPL_MATRIX_OK);
  // Slot k of row i at k * n + i: extra slots are whole extra slot rows at the end.
  for (int64_t w : {ell.width, ell.width + 2}) {
    std::vector<float> vals(static_cast<size_t>(a.rows * w) + 1, 0.0f);
    std::vector<int32_t> cols(static_cast<size_t>(a.rows * w) + 1, 0);
    std::copy(ell.vals_f32, ell.vals_f32 + a.rows * ell.width, vals.begin());
    std::copy(ell.cols_idx, ell.cols_idx + a.rows * ell.width, cols.begin());
    runEll(spl_spmv_ell_colmajor, spl_spmv_ell_colmajor_cuda, w, vals, cols,
           name() + " column-major ELL width " + std::to_string(w));
  }
  spl_ell_free(&ell);
}

TEST_P(GpuFormats, Dia) {
  // DIA's x has n entries (a square matrix): pad to N x N. Diagonal entries that fall outside
  // the matrix hold NaN, which both versions must ignore.
  const int64_t n = std::max(matrix().rows, matrix().cols);
  spl_csr a = padded(matrix(), n, n);
  spl_dia dia{};
  ASSERT_EQ(spl_csr_to_dia(&a, &dia), SPL_MATRIX_OK);
  std::vector<float> data(dia.data_f32, dia.data_f32 + dia.ndiags * n);
  for (int64_t k = 0; k < dia.ndiags; ++k)
    for (int64_t i = 0; i < n; ++i)
      if (i + dia.offsets[k] < 0 || i + dia.offsets[k] >= n) data[k * n + i] = kNaN;
  data.push_back(0.0f);
  std::vector<int32_t> offsets = withSpare(std::vector<int32_t>(dia.offsets, dia.offsets + dia.ndiags));
  const std::vector<float> x = randomF(n, 13);
  const std::string what = name() + " DIA, " + std::to_string(dia.ndiags) + " diagonals";

  HostOut<float> want(static_cast<size_t>(n));
  CPU_OK(spl_spmv_dia(n, dia.ndiags, offsets.data(), data.data(), x.data(), want.ptr()));
  Dev doffs(offsets), ddata(data), dx(x);
  DevOut<float> got(static_cast<size_t>(n));
  CUDA_OK(spl_spmv_dia_cuda(nullptr, n, dia.ndiags, doffs.as<int32_t>(), ddata.as<float>(), dx.as<float>(), got.ptr()));
  expectClose(got.read(what), want.read(what), what);
  spl_dia_free(&dia);
  spl_csr_free(&a);
}

TEST_P(GpuFormats, Bcsr) {
  for (int64_t b : {1, 2, 3, 4}) {
    spl_bcsr bc{};
    ASSERT_EQ(spl_csr_to_bcsr(&matrix(), b, &bc), SPL_MATRIX_OK);
    const int64_t rows = bc.block_rows * b, cols = bc.block_cols * b;
    // Block offsets from 0 and from 4 (blocks start at offs@I - offs@0).
    for (int32_t base : {0, 4}) {
      std::vector<int32_t> offs;
      for (int64_t i = 0; i <= bc.block_rows; ++i) offs.push_back(bc.offs[i] - bc.offs[0] + base);
      std::vector<int32_t> bcols = withSpare(std::vector<int32_t>(bc.block_cols_idx, bc.block_cols_idx + bc.nblocks));
      std::vector<float> blocks = withSpare(std::vector<float>(bc.blocks_f32, bc.blocks_f32 + bc.nblocks * b * b));
      const std::vector<float> x = randomF(cols, 14 + b);
      const std::string what = name() + " BCSR b=" + std::to_string(b) + " offsets from " + std::to_string(base);

      HostOut<float> want(static_cast<size_t>(rows));
      CPU_OK(spl_spmv_bcsr(bc.block_rows, bc.block_cols, b, offs.data(), blocks.data(), bcols.data(), x.data(), want.ptr()));
      Dev doffs(offs), dblocks(blocks), dbcols(bcols), dx(x);
      DevOut<float> got(static_cast<size_t>(rows));
      CUDA_OK(spl_spmv_bcsr_cuda(nullptr, bc.block_rows, bc.block_cols, b, doffs.as<int32_t>(), dblocks.as<float>(),
                                 dbcols.as<int32_t>(), dx.as<float>(), got.ptr()));
      expectClose(got.read(what), want.read(what), what);
    }
    spl_bcsr_free(&bc);
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuFormats, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

// ---- convert.spl ------------------------------------------------------------------------------

class GpuConvert : public GpuTest {};

TEST_P(GpuConvert, MaxRowAndCsr2Ell) {
  for (int32_t base : {0, 5}) {
    const HostCsr h = hostCsr(matrix(), base);
    const DevCsr d(h);
    const std::string what = name() + " offsets from " + std::to_string(base);

    HostOut<int32_t> wantW(1);
    CPU_OK(spl_csr_max_row(h.n, h.offs.data(), wantW.ptr()));
    DevOut<int32_t> gotW(1);
    CUDA_OK(spl_csr_max_row_cuda(nullptr, h.n, d.offs.as<int32_t>(), gotW.ptr()));
    const std::vector<int32_t> w = wantW.read(what + " max row");
    expectSame(gotW.read(what + " max row"), w, what + " max row");

    for (int64_t width : {static_cast<int64_t>(w[0]), static_cast<int64_t>(w[0]) + 3}) {
      const size_t slots = static_cast<size_t>(h.n * width);
      const std::string ew = what + " csr2ell w=" + std::to_string(width);
      HostOut<float> wantV(slots);
      HostOut<int32_t> wantC(slots);
      CPU_OK(spl_csr2ell(h.n, h.m, width, h.offs.data(), h.vals.data(), h.cols.data(), wantV.ptr(), wantC.ptr()));
      DevOut<float> gotV(slots);
      DevOut<int32_t> gotC(slots);
      CUDA_OK(spl_csr2ell_cuda(nullptr, h.n, h.m, width, d.offs.as<int32_t>(), d.vals.as<float>(), d.cols.as<int32_t>(),
                               gotV.ptr(), gotC.ptr()));
      expectSame(gotV.read(ew + " vals"), wantV.read(ew + " vals"), ew + " vals");  // copies: exact
      expectSame(gotC.read(ew + " cols"), wantC.read(ew + " cols"), ew + " cols");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuConvert, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

// ---- dense2csr.spl ----------------------------------------------------------------------------

/// Offsets on the device, then the compression (row-major, and column-major on the transpose)
/// fed with those device offsets; the CPU runs the same two phases on the host.
void checkDense2Csr(int64_t n, int64_t m, const std::vector<float> &dense, const std::string &what) {
  std::vector<float> rowMajor(dense.begin(), dense.begin() + n * m), colMajor(static_cast<size_t>(n * m));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) colMajor[j * n + i] = rowMajor[i * m + j];
  rowMajor.push_back(0.0f);
  colMajor.push_back(0.0f);
  Dev dRow(rowMajor), dCol(colMajor);

  // Phase 1.
  HostOut<int32_t> wantOffsOut(static_cast<size_t>(n) + 1);
  CPU_OK(spl_dense2csr_offsets(n, m, rowMajor.data(), wantOffsOut.ptr()));
  const std::vector<int32_t> offsets = wantOffsOut.read(what + " offsets");
  DevOut<int32_t> dOffsets(static_cast<size_t>(n) + 1);
  CUDA_OK(spl_dense2csr_offsets_cuda(nullptr, n, m, dRow.as<float>(), dOffsets.ptr()));
  expectSame(dOffsets.read(what + " offsets"), offsets, what + " offsets");
  if (::testing::Test::HasFailure()) return;  // phase 2 needs the right offsets

  // Phase 2, both layouts.
  for (bool colMaj : {false, true}) {
    const std::string w = what + (colMaj ? " column-major" : " row-major");
    const std::vector<float> &in = colMaj ? colMajor : rowMajor;
    const Dev &dIn = colMaj ? dCol : dRow;
    int64_t wantSizes[4] = {-1, -1, -1, -99}, gotSizes[4] = {-1, -1, -1, -99};
    if (colMaj) {
      CPU_OK(spl_dense2csr_colmajor_size(n, m, offsets.data(), in.data(), wantSizes));
      CUDA_OK(spl_dense2csr_colmajor_cuda_size(nullptr, n, m, dOffsets.ptr(), dIn.as<float>(), gotSizes));
    } else {
      CPU_OK(spl_dense2csr_size(n, m, offsets.data(), in.data(), wantSizes));
      CUDA_OK(spl_dense2csr_cuda_size(nullptr, n, m, dOffsets.ptr(), dIn.as<float>(), gotSizes));
    }
    expectSame(std::vector<int64_t>(gotSizes, gotSizes + 4), std::vector<int64_t>(wantSizes, wantSizes + 4), w + " sizes");
    ASSERT_EQ(wantSizes[0], n + 1) << w;
    ASSERT_EQ(wantSizes[1], offsets[n] - offsets[0]) << w;
    const size_t nnz = static_cast<size_t>(wantSizes[1]);

    HostOut<int32_t> wantO(static_cast<size_t>(n) + 1), wantC(nnz);
    HostOut<float> wantV(nnz);
    DevOut<int32_t> gotO(static_cast<size_t>(n) + 1), gotC(nnz);
    DevOut<float> gotV(nnz);
    if (colMaj) {
      CPU_OK(spl_dense2csr_colmajor(n, m, offsets.data(), in.data(), wantO.ptr(), wantV.ptr(), wantC.ptr()));
      CUDA_OK(spl_dense2csr_colmajor_cuda(nullptr, n, m, dOffsets.ptr(), dIn.as<float>(), gotO.ptr(), gotV.ptr(),
                                          gotC.ptr()));
    } else {
      CPU_OK(spl_dense2csr(n, m, offsets.data(), in.data(), wantO.ptr(), wantV.ptr(), wantC.ptr()));
      CUDA_OK(spl_dense2csr_cuda(nullptr, n, m, dOffsets.ptr(), dIn.as<float>(), gotO.ptr(), gotV.ptr(), gotC.ptr()));
    }
    expectSame(gotO.read(w + " out_offs"), wantO.read(w + " out_offs"), w + " out_offs");
    expectSame(gotV.read(w + " out_vals"), wantV.read(w + " out_vals"), w + " out_vals");  // copies: exact
    expectSame(gotC.read(w + " out_cols"), wantC.read(w + " out_cols"), w + " out_cols");
  }
}

class GpuDense2Csr : public GpuTest {};

TEST_P(GpuDense2Csr, OffsetsThenCompress) {
  const spl_csr &a = matrix();
  float *d = spl_csr_to_dense_f32(&a);
  ASSERT_NE(d, nullptr);
  std::vector<float> dense(d, d + a.rows * a.cols);
  free(d);
  checkDense2Csr(a.rows, a.cols, dense, name());
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuDense2Csr, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

TEST(GpuDense2CsrShapes, EdgeShapes) {
  if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  struct Shape {
    const char *name;
    int64_t n, m;
    double keep;  // fraction of entries kept (by |value|)
    int64_t fullRow;
  };
  const Shape shapes[] = {{"all_zero_7x5", 7, 5, 0.0, -1},     {"one_full_row_6x9", 6, 9, 0.0, 2},
                          {"row_1x700", 1, 700, 0.4, -1},       {"col_700x1", 700, 1, 0.4, -1},
                          {"no_cols_4x0", 4, 0, 0.5, -1},       {"no_rows_0x4", 0, 4, 0.5, -1},
                          {"wide_rows_5x2000", 5, 2000, 0.7, 3}};
  uint64_t seed = 71;
  for (const Shape &s : shapes) {
    std::vector<float> r = randomF(s.n * s.m, seed++), dense(static_cast<size_t>(s.n * s.m), 0.0f);
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t j = 0; j < s.m; ++j) {
        const float v = r[i * s.m + j];
        if (i == s.fullRow)
          dense[i * s.m + j] = v != 0.0f ? v : 0.5f;
        else if (std::fabs(v) < s.keep)
          dense[i * s.m + j] = v;
      }
    checkDense2Csr(s.n, s.m, dense, s.name);
  }
}

// ---- bfs.spl ----------------------------------------------------------------------------------

/// A graph from a matrix pattern (children = column indices), square: max(rows, cols) nodes.
struct Graph {
  int64_t n = 0;
  std::vector<int32_t> nodes, edges;
};

Graph graphOf(const spl_csr &a) {
  Graph g;
  g.n = std::max(a.rows, a.cols);
  for (int64_t i = 0; i <= a.rows; ++i) g.nodes.push_back(static_cast<int32_t>(a.offs[i]));
  g.nodes.resize(static_cast<size_t>(g.n) + 1, static_cast<int32_t>(a.nnz));
  g.edges.assign(a.cols_idx, a.cols_idx + a.nnz);
  g.edges.push_back(0);
  return g;
}

class GpuBfs : public GpuTest {
 protected:
  /// Count, size and frontier on the device (the write offsets from count_cuda feed the
  /// other two) against the same on the CPU.
  void expand(const Graph &g, const std::unique_ptr<bool[]> &seen, std::vector<int32_t> frontier, const std::string &what) {
    const int64_t m = static_cast<int64_t>(frontier.size());
    frontier.push_back(0);
    Dev dNodes(g.nodes), dEdges(g.edges), dSeen(seen.get(), static_cast<size_t>(g.n) * sizeof(bool)), dFrontier(frontier);

    HostOut<int32_t> woOut(static_cast<size_t>(m) + 1);
    CPU_OK(spl_bfs_count(g.n, g.nodes.data(), g.edges.data(), seen.get(), m, frontier.data(), woOut.ptr()));
    const std::vector<int32_t> wo = woOut.read(what + " write offsets");
    DevOut<int32_t> dWo(static_cast<size_t>(m) + 1);
    CUDA_OK(spl_bfs_count_cuda(nullptr, g.n, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), m,
                               dFrontier.as<int32_t>(), dWo.ptr()));
    expectSame(dWo.read(what + " write offsets"), wo, what + " write offsets");
    if (HasFailure()) return;

    // Two sizes ({1, k}); what the cuda version writes past them is checked in
    // GpuBfsSizes.CudaSizeWritesOnlyTwoSizes (8 spare entries here, so that it stays harmless).
    int64_t wantSizes[10], gotSizes[10];
    std::fill(wantSizes, wantSizes + 10, -99);
    std::fill(gotSizes, gotSizes + 10, -99);
    CPU_OK(spl_bfs_frontier_size(g.n, g.nodes.data(), g.edges.data(), seen.get(), m, frontier.data(), wo.data(), wantSizes));
    CUDA_OK(spl_bfs_frontier_cuda_size(nullptr, g.n, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), m,
                                       dFrontier.as<int32_t>(), dWo.ptr(), gotSizes));
    expectSame(std::vector<int64_t>(gotSizes, gotSizes + 2), std::vector<int64_t>(wantSizes, wantSizes + 2),
               what + " sizes");
    EXPECT_EQ(wantSizes[2], -99) << what << ": the CPU wrote past its 2 sizes";
    ASSERT_EQ(wantSizes[0], 1) << what;
    const size_t k = static_cast<size_t>(wantSizes[1]);

    HostOut<int64_t> wantK(1);
    HostOut<int32_t> wantNext(k);
    CPU_OK(spl_bfs_frontier(g.n, g.nodes.data(), g.edges.data(), seen.get(), m, frontier.data(), wo.data(), wantK.ptr(),
                            wantNext.ptr()));
    DevOut<int64_t> gotK(1);
    DevOut<int32_t> gotNext(k);
    CUDA_OK(spl_bfs_frontier_cuda(nullptr, g.n, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), m,
                                  dFrontier.as<int32_t>(), dWo.ptr(), gotK.ptr(), gotNext.ptr()));
    expectSame(gotK.read(what + " k"), wantK.read(what + " k"), what + " k");
    expectSame(gotNext.read(what + " next frontier"), wantNext.read(what + " next frontier"), what + " next frontier");
  }
};

TEST_P(GpuBfs, FrontierExpansion) {
  const Graph g = graphOf(matrix());
  uint64_t s = 7 + GetParam();
  // A random third of the nodes in random order, about 30% of the nodes seen.
  {
    std::unique_ptr<bool[]> seen(new bool[static_cast<size_t>(g.n) + 1]());
    for (int64_t i = 0; i < g.n; ++i) seen[i] = spl_splitmix64_next(&s) % 10 < 3;
    std::vector<int32_t> ids(static_cast<size_t>(g.n));
    for (int64_t i = 0; i < g.n; ++i) ids[i] = static_cast<int32_t>(i);
    for (int64_t i = 0; i + 1 < g.n; ++i)
      std::swap(ids[i], ids[i + static_cast<int64_t>(spl_splitmix64_next(&s) % static_cast<uint64_t>(g.n - i))]);
    ids.resize(static_cast<size_t>((g.n + 2) / 3));
    expand(g, seen, ids, name() + " random frontier");
  }
  // Every node, in reverse order, nothing seen; then everything seen; then an empty frontier.
  std::vector<int32_t> all(static_cast<size_t>(g.n));
  for (int64_t i = 0; i < g.n; ++i) all[i] = static_cast<int32_t>(g.n - 1 - i);
  {
    std::unique_ptr<bool[]> seen(new bool[static_cast<size_t>(g.n) + 1]());
    expand(g, seen, all, name() + " all nodes, none seen");
    for (int64_t i = 0; i < g.n; ++i) seen[i] = true;
    expand(g, seen, all, name() + " all nodes, all seen");
    expand(g, seen, {}, name() + " empty frontier");
  }
}

TEST_P(GpuBfs, NodeOffsetsNotStartingAtZero) {
  // Child lists start at nodes@v - nodes@0.
  Graph g = graphOf(matrix());
  for (int32_t &o : g.nodes) o += 9;
  std::unique_ptr<bool[]> seen(new bool[static_cast<size_t>(g.n) + 1]());
  for (int64_t i = 0; i < g.n; i += 4) seen[i] = true;
  std::vector<int32_t> frontier;
  for (int64_t i = 0; i < g.n; i += 2) frontier.push_back(static_cast<int32_t>(i));
  expand(g, seen, frontier, name() + " node offsets from 9");
}

// The stub copied a fixed 3 sizes back to the host; (k: nat ** k.idx[n]) has 2 output pointers.
TEST(GpuBfsSizes, CudaSizeWritesExactlyItsTwoSizes) {
  if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  // 0 -> {1, 2}, 1 -> {2}, 2 -> {}; frontier {0, 1}, nothing seen: sizes {1, 3}.
  const std::vector<int32_t> nodes{0, 2, 3, 3}, edges{1, 2, 2}, frontier{0, 1}, wo{0, 2, 3};
  bool seen[3] = {false, false, false};
  Dev dNodes(nodes), dEdges(edges), dSeen(seen, sizeof seen), dFrontier(frontier), dWo(wo);
  int64_t want[3] = {-99, -99, -99}, got[3] = {-99, -99, -99};
  CPU_OK(spl_bfs_frontier_size(3, nodes.data(), edges.data(), seen, 2, frontier.data(), wo.data(), want));
  CUDA_OK(spl_bfs_frontier_cuda_size(nullptr, 3, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), 2,
                                     dFrontier.as<int32_t>(), dWo.as<int32_t>(), got));
  EXPECT_EQ(want[0], 1);
  EXPECT_EQ(want[1], 3);
  EXPECT_EQ(want[2], -99) << "the CPU wrote past its 2 sizes";
  expectSame(std::vector<int64_t>(got, got + 3), std::vector<int64_t>(want, want + 3), "bfs_frontier_cuda_size sizes");
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuBfs, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

// ---- trmv.spl ---------------------------------------------------------------------------------

class GpuTrmv : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    if (!spl_cuda_available()) GTEST_SKIP() << "no CUDA driver";
  }
};

TEST_P(GpuTrmv, MatchesTheCpu) {
  // Row i of the lower triangle holds i + 1 entries, rows back to back.
  const int64_t n = GetParam();
  const std::vector<float> l = randomF(n * (n + 1) / 2, 61);  // with a spare element
  const std::vector<float> v = randomF(n, 62);
  const std::string what = "trmv n=" + std::to_string(n);
  HostOut<float> want(static_cast<size_t>(n));
  CPU_OK(spl_trmv(n, l.data(), v.data(), want.ptr()));
  Dev dl(l), dv(v);
  DevOut<float> got(static_cast<size_t>(n));
  CUDA_OK(spl_trmv_cuda(nullptr, n, dl.as<float>(), dv.as<float>(), got.ptr()));
  expectClose(got.read(what), want.read(what), what);
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuTrmv, ::testing::Values<int64_t>(0, 1, 2, 17, 31, 32, 33, 300, 1000));

// ---- spmv_deppair.spl and spmv_csr.spl --------------------------------------------------------

using CsrSpmvFn = int (*)(int64_t, int64_t, const int32_t *, const float *, const int32_t *, const float *, float *);
using CsrSpmvCudaFn = int (*)(void *, int64_t, int64_t, const int32_t *, const float *, const int32_t *, const float *,
                              float *);

class GpuCsrSpmv : public GpuTest {};

TEST_P(GpuCsrSpmv, DepPairAndSplit) {
  struct Fn {
    const char *name;
    CsrSpmvFn cpu;
    CsrSpmvCudaFn cuda;
  };
  const Fn fns[] = {{"spmv_deppair", spl_spmv_deppair, spl_spmv_deppair_cuda},
                    {"spmv_split", spl_spmv_split, spl_spmv_split_cuda}};
  for (int32_t base : {0, 5}) {
    const HostCsr h = hostCsr(matrix(), base);
    const DevCsr d(h);
    const std::vector<float> x = randomF(h.m, 52);
    Dev dx(x);
    for (const Fn &f : fns) {
      const std::string what = name() + " " + f.name + " offsets from " + std::to_string(base);
      HostOut<float> want(static_cast<size_t>(h.n));
      CPU_OK(f.cpu(h.n, h.m, h.offs.data(), h.vals.data(), h.cols.data(), x.data(), want.ptr()));
      DevOut<float> got(static_cast<size_t>(h.n));
      CUDA_OK(f.cuda(nullptr, h.n, h.m, d.offs.as<int32_t>(), d.vals.as<float>(), d.cols.as<int32_t>(), dx.as<float>(),
                     got.ptr()));
      expectClose(got.read(what), want.read(what), what);
    }
  }
}

TEST_P(GpuCsrSpmv, PackedAndRowSums) {
  for (int32_t base : {0, 5}) {
    const HostCsr h = hostCsr(matrix(), base);
    const DevCsr d(h);
    const std::vector<float> x = randomF(h.m, 42);
    const std::string what = name() + " offsets from " + std::to_string(base);
    std::vector<spl_spmv_csr_packed_A_t> packed(static_cast<size_t>(h.nnz) + 1);
    for (int64_t k = 0; k < h.nnz; ++k) packed[k] = {h.vals[k], h.cols[k]};
    Dev dPacked(packed), dx(x);

    HostOut<float> want(static_cast<size_t>(h.n));
    CPU_OK(spl_spmv_csr_packed(h.n, h.m, h.offs.data(), packed.data(), x.data(), want.ptr()));
    DevOut<float> got(static_cast<size_t>(h.n));
    CUDA_OK(spl_spmv_csr_packed_cuda(nullptr, h.n, h.m, d.offs.as<int32_t>(), dPacked.as<spl_spmv_csr_packed_A_t>(),
                                     dx.as<float>(), got.ptr()));
    expectClose(got.read(what + " packed"), want.read(what + " packed"), what + " packed");

    HostOut<float> wantSums(static_cast<size_t>(h.n));
    CPU_OK(spl_row_sums(h.n, h.offs.data(), h.vals.data(), wantSums.ptr()));
    DevOut<float> gotSums(static_cast<size_t>(h.n));
    CUDA_OK(spl_row_sums_cuda(nullptr, h.n, d.offs.as<int32_t>(), d.vals.as<float>(), gotSums.ptr()));
    expectClose(gotSums.read(what + " row sums"), wantSums.read(what + " row sums"), what + " row sums");
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuCsrSpmv, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

// ---- einsum.spl -------------------------------------------------------------------------------

class GpuEinsum : public GpuTest {};

TEST_P(GpuEinsum, SpmvCsc) {
  const spl_csr &a = matrix();
  spl_csc csc{};
  ASSERT_EQ(spl_csr_to_csc(&a, &csc), SPL_MATRIX_OK);
  const std::vector<int32_t> offs(csc.offs, csc.offs + a.cols + 1);
  const std::vector<int32_t> rows = withSpare(std::vector<int32_t>(csc.row_idx, csc.row_idx + a.nnz));
  const std::vector<float> vals = withSpare(std::vector<float>(csc.vals_f32, csc.vals_f32 + a.nnz));
  const std::vector<float> x = randomF(a.cols, 11);
  const std::string what = name() + " spmv_csc";
  HostOut<float> want(static_cast<size_t>(a.rows));
  CPU_OK(spl_ein_spmv_csc(a.rows, a.cols, offs.data(), vals.data(), rows.data(), x.data(), want.ptr()));
  Dev dOffs(offs), dVals(vals), dRows(rows), dx(x);
  DevOut<float> got(static_cast<size_t>(a.rows));
  CUDA_OK(spl_ein_spmv_csc_cuda(nullptr, a.rows, a.cols, dOffs.as<int32_t>(), dVals.as<float>(), dRows.as<int32_t>(),
                                dx.as<float>(), got.ptr()));
  expectClose(got.read(what), want.read(what), what);
  spl_csc_free(&csc);
}

TEST_P(GpuEinsum, SpmvCoo) {
  const spl_csr &a = matrix();
  spl_coo coo{};
  ASSERT_EQ(spl_csr_to_coo(&a, &coo), SPL_MATRIX_OK);
  const std::vector<int32_t> rows = withSpare(std::vector<int32_t>(coo.row_idx, coo.row_idx + coo.nnz));
  const std::vector<int32_t> cols = withSpare(std::vector<int32_t>(coo.col_idx, coo.col_idx + coo.nnz));
  const std::vector<float> vals = withSpare(std::vector<float>(coo.vals_f32, coo.vals_f32 + coo.nnz));
  const std::vector<float> x = randomF(a.cols, 12);
  const std::string what = name() + " spmv_coo";
  HostOut<float> want(static_cast<size_t>(a.rows));
  CPU_OK(spl_ein_spmv_coo(a.rows, a.cols, coo.nnz, vals.data(), rows.data(), cols.data(), x.data(), want.ptr()));
  Dev dVals(vals), dRows(rows), dCols(cols), dx(x);
  DevOut<float> got(static_cast<size_t>(a.rows));
  CUDA_OK(spl_ein_spmv_coo_cuda(nullptr, a.rows, a.cols, coo.nnz, dVals.as<float>(), dRows.as<int32_t>(),
                                dCols.as<int32_t>(), dx.as<float>(), got.ptr()));
  expectClose(got.read(what), want.read(what), what);
  spl_coo_free(&coo);
}

TEST_P(GpuEinsum, Residual) {
  for (int32_t base : {0, 5}) {
    const HostCsr h = hostCsr(matrix(), base);
    const DevCsr d(h);
    const std::vector<float> x = randomF(h.m, 13), b = randomF(h.n, 14);
    const std::string what = name() + " residual, offsets from " + std::to_string(base);
    HostOut<float> want(static_cast<size_t>(h.n));
    CPU_OK(spl_ein_residual(h.n, h.m, h.offs.data(), h.vals.data(), h.cols.data(), x.data(), b.data(), want.ptr()));
    Dev dx(x), db(b);
    DevOut<float> got(static_cast<size_t>(h.n));
    CUDA_OK(spl_ein_residual_cuda(nullptr, h.n, h.m, d.offs.as<int32_t>(), d.vals.as<float>(), d.cols.as<int32_t>(),
                                  dx.as<float>(), db.as<float>(), got.ptr()));
    expectClose(got.read(what), want.read(what), what);
  }
}

TEST_P(GpuEinsum, Spmm) {
  const HostCsr h = hostCsr(matrix(), 0);
  const DevCsr d(h);
  for (int64_t k : {1, 3, 16}) {
    const std::vector<float> bm = randomF(h.m * k, 21 + k);
    const std::string what = name() + " spmm k=" + std::to_string(k);
    const size_t outN = static_cast<size_t>(h.n * k);
    HostOut<float> want(outN);
    CPU_OK(spl_ein_spmm(h.n, h.m, k, h.offs.data(), h.vals.data(), h.cols.data(), bm.data(), want.ptr()));
    Dev dB(bm);
    DevOut<float> got(outN);
    CUDA_OK(spl_ein_spmm_cuda(nullptr, h.n, h.m, k, d.offs.as<int32_t>(), d.vals.as<float>(), d.cols.as<int32_t>(),
                              dB.as<float>(), got.ptr()));
    expectClose(got.read(what), want.read(what), what);
  }
}

TEST_P(GpuEinsum, Sddmm) {
  const int64_t k = 5;
  for (int32_t base : {0, 5}) {
    const HostCsr h = hostCsr(matrix(), base);
    const DevCsr d(h);
    const std::vector<float> u = randomF(h.n * k, 31), v = randomF(h.m * k, 32);
    Dev dU(u), dV(v);
    const std::string what = name() + " sddmm, offsets from " + std::to_string(base);

    int64_t wantSizes[4] = {-1, -1, -1, -99}, gotSizes[4] = {-1, -1, -1, -99};
    CPU_OK(spl_ein_sddmm_size(h.n, h.m, k, h.offs.data(), h.vals.data(), h.cols.data(), u.data(), v.data(), wantSizes));
    CUDA_OK(spl_ein_sddmm_cuda_size(nullptr, h.n, h.m, k, d.offs.as<int32_t>(), d.vals.as<float>(), d.cols.as<int32_t>(),
                                    dU.as<float>(), dV.as<float>(), gotSizes));
    expectSame(std::vector<int64_t>(gotSizes, gotSizes + 4), std::vector<int64_t>(wantSizes, wantSizes + 4),
               what + " sizes");
    ASSERT_EQ(wantSizes[0], h.n + 1) << what;
    ASSERT_EQ(wantSizes[1], h.nnz) << what;
    ASSERT_EQ(wantSizes[2], h.nnz) << what;

    const size_t nnz = static_cast<size_t>(h.nnz);
    HostOut<int32_t> wantO(static_cast<size_t>(h.n) + 1), wantC(nnz);
    HostOut<float> wantV(nnz);
    CPU_OK(spl_ein_sddmm(h.n, h.m, k, h.offs.data(), h.vals.data(), h.cols.data(), u.data(), v.data(), wantO.ptr(),
                         wantV.ptr(), wantC.ptr()));
    DevOut<int32_t> gotO(static_cast<size_t>(h.n) + 1), gotC(nnz);
    DevOut<float> gotV(nnz);
    CUDA_OK(spl_ein_sddmm_cuda(nullptr, h.n, h.m, k, d.offs.as<int32_t>(), d.vals.as<float>(), d.cols.as<int32_t>(),
                               dU.as<float>(), dV.as<float>(), gotO.ptr(), gotV.ptr(), gotC.ptr()));
    const std::vector<int32_t> gotOffs = gotO.read(what + " out_offs");
    expectSame(gotOffs, wantO.read(what + " out_offs"), what + " out_offs");
    ASSERT_EQ(gotOffs.at(0), 0) << what << ": an assembled result's offsets start at 0 (LANGUAGE.md 6)";
    expectClose(gotV.read(what + " out_vals"), wantV.read(what + " out_vals"), what + " out_vals");
    expectSame(gotC.read(what + " out_cols"), wantC.read(what + " out_cols"), what + " out_cols");
  }
}

TEST_P(GpuEinsum, Csr2Dense) {
  for (int32_t base : {0, 5}) {
    const HostCsr h = hostCsr(matrix(), base);
    const DevCsr d(h);
    const std::string what = name() + " csr2dense, offsets from " + std::to_string(base);
    const size_t outN = static_cast<size_t>(h.n * h.m);
    HostOut<float> want(outN);
    CPU_OK(spl_ein_csr2dense(h.n, h.m, h.offs.data(), h.vals.data(), h.cols.data(), want.ptr()));
    DevOut<float> got(outN);
    CUDA_OK(spl_ein_csr2dense_cuda(nullptr, h.n, h.m, d.offs.as<int32_t>(), d.vals.as<float>(), d.cols.as<int32_t>(),
                                   got.ptr()));
    // Each entry is one stored value or 0 (no duplicates in the test matrices): exact.
    expectSame(got.read(what), want.read(what), what);
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, GpuEinsum, ::testing::Range<size_t>(0, spl_e2e::kNumTestMatrices),
                         spl_e2e::matrixParamName);

}  // namespace
