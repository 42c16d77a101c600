// spl-gpu-bench: GPU CSR SpMV and dense-to-CSR of SPL against cuSPARSE, in one process, beside
// the device's measured copy bandwidth (issue 7's GPU part; run it on a machine with a device).
//
//   spl-gpu-bench [--runs N] [--csv FILE] MATRIX.mtx ...
//
// Per matrix:
//   - CSR SpMV f32 and f64: SPL's spl_spmv_csr_{f32,f64}_cuda (stdlib/spmv.spl, the default GPU
//     schedule; and the SELL-C-sigma kernel on operands converted once) against cusparseSpMV with
//     CUSPARSE_SPMV_ALG_DEFAULT and CUSPARSE_SPMV_CSR_ALG2;
//   - dense to CSR f32 (the matrix as a dense array, when it has at most 2^28 entries): SPL's
//     two-kernel pipeline spl_dense2csr_offsets_cuda + spl_dense2csr_cuda
//     (tests/contract/dense2csr.spl) against cusparseDenseToSparse (analysis + convert, the
//     offsets and the entries);
//   - the BFS frontier step (square matrices, read as graphs: row i's columns are i's children;
//     tests/contract/bfs.spl's spl_bfs_count_cuda + spl_bfs_frontier_cuda) with every fourth
//     vertex in the frontier and a seeded half of the vertices seen, as edges examined per second,
//     beside two limits measured in the same run: coalesced (the device-to-device copy) and
//     uncoalesced (cusparseGather of 4-byte values at random indices, GB/s of values and indices).
// Every result is copied back and checked against a double-precision reference on the host before
// anything is timed; a mismatch aborts. Timing: CUDA events around each call, `--runs` (default
// 200, at least 100) calls after 10 warm-up calls; the median is reported. Inputs rotate among
// copies so that each call reads data that is not in L2 (copies of x and y for SpMV until they
// exceed twice the L2 size, at most 64; the matrix itself once it is larger than the L2). GB/s
// counts compulsory traffic (values, column indices, offsets, x, y once). The bound beside it is
// a device-to-device copy of 256 MiB measured in the same run (read + write bytes / time).
//
// Without a CUDA device it prints why and exits 77.
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "bfs.h"
#include "dense2csr.h"
#include "spl_matrix.h"
#include "spl_runtime.h"
#include "spmv.h"
#include "spmv_lil.h"
#include "spmv_merge_long0.h"
#include "spmv_merge_long16.h"
#include "spmv_merge_long2.h"
#include "spmv_merge_long32.h"
#include "spmv_merge_long4.h"
#include "spmv_merge_long8.h"
#include "spmv_merge_mb2.h"
#include "spmv_merge_mb3.h"
#include "spmv_merge_mb4.h"
#include "spmv_merge_mb5.h"
#include "spmv_merge_mb6.h"
#include "spmv_merge_noprefetch.h"
#include "spmv_merge_u2.h"
#include "spmv_merge_u8.h"
#include "spmv_variants.h"

namespace {

[[noreturn]] void die(const std::string &why) {
  std::fprintf(stderr, "spl-gpu-bench: %s\n", why.c_str());
  std::exit(1);
}

void cudaCheck(cudaError_t e, const char *what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}
void sparseCheck(cusparseStatus_t s, const char *what) {
  if (s != CUSPARSE_STATUS_SUCCESS) die(std::string(what) + ": " + cusparseGetErrorString(s));
}
void splCheck(int rc, const char *what) {
  if (rc != SPL_OK) die(std::string(what) + ": " + spl_error_string(rc) + " " + spl_cuda_last_error());
}

/// Device memory freed on scope exit.
struct DeviceArray {
  void *p = nullptr;
  size_t bytes = 0;
  explicit DeviceArray(size_t n) : bytes(std::max<size_t>(n, 1)) { cudaCheck(cudaMalloc(&p, bytes), "cudaMalloc"); }
  template <typename T>
  explicit DeviceArray(const std::vector<T> &host) : DeviceArray(host.size() * sizeof(T)) {
    if (!host.empty()) cudaCheck(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray(DeviceArray &&o) noexcept : p(o.p), bytes(o.bytes) { o.p = nullptr; }
  ~DeviceArray() { cudaFree(p); }
  template <typename T>
  T *as() const {
    return static_cast<T *>(p);
  }
  template <typename T>
  std::vector<T> download(size_t n) const {
    std::vector<T> out(n);
    if (n) cudaCheck(cudaMemcpy(out.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return out;
  }
};

/// `copies` device copies of `host` (inputs rotated between calls, so none stays in the L2).
template <typename T>
std::vector<DeviceArray> deviceCopies(const std::vector<T> &host, int copies) {
  std::vector<DeviceArray> out;
  for (int c = 0; c < copies; ++c) out.emplace_back(host);
  return out;
}

/// Seconds that one median may take (--budget): a slow kernel gets fewer runs, at least 10.
double medianBudgetSeconds = 1.5;

double nowSeconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The median time in ms of `runs` calls of `call(k)` (k = the call's index, for rotating
/// inputs), each between two events, after 10 warm-up calls; fewer runs (at least 10) when the
/// warm-up says that `runs` would take more than medianBudgetSeconds.
double medianMs(cudaStream_t stream, int runs, const std::function<void(int)> &call) {
  double begin = nowSeconds();
  for (int k = 0; k < 10; ++k) call(k);
  cudaCheck(cudaStreamSynchronize(stream), "warm-up");
  double perCall = (nowSeconds() - begin) / 10;
  if (perCall * runs > medianBudgetSeconds) runs = std::max(10, static_cast<int>(medianBudgetSeconds / perCall));
  cudaEvent_t start, stop;
  cudaCheck(cudaEventCreate(&start), "cudaEventCreate");
  cudaCheck(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> ms;
  for (int k = 0; k < runs; ++k) {
    cudaCheck(cudaEventRecord(start, stream), "cudaEventRecord");
    call(k);
    cudaCheck(cudaEventRecord(stop, stream), "cudaEventRecord");
    cudaCheck(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    cudaCheck(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// The median wall-clock time in ms of one call of `call(k)` followed by a synchronisation of
/// the stream, as an application calling the kernel once would see it (launch and per-call
/// overhead included), after 10 warm-up calls.
double callAndSyncMs(cudaStream_t stream, int runs, const std::function<void(int)> &call) {
  for (int k = 0; k < 10; ++k) call(k);
  cudaCheck(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> ms;
  for (int k = 0; k < runs; ++k) {
    double t0 = nowSeconds();
    call(k);
    cudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    ms.push_back(1e3 * (nowSeconds() - t0));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// Device-to-device copy bandwidth in GB/s (bytes read + written per second).
double copyBandwidth(cudaStream_t stream, int runs) {
  size_t bytes = size_t(256) << 20;
  DeviceArray a(bytes), b(bytes);
  double ms = medianMs(stream, runs, [&](int k) {
    cudaCheck(cudaMemcpyAsync(k % 2 ? a.p : b.p, k % 2 ? b.p : a.p, bytes, cudaMemcpyDeviceToDevice, stream), "copy");
  });
  return 2.0 * static_cast<double>(bytes) / (ms * 1e6);
}

struct Row {
  std::string matrix, kernel, impl;
  double ms, gbs, ofBound;
};

/// Matrices up to this many entries also get the call-and-synchronise timing.
constexpr int64_t kSmallNnz = 200000;

/// --kernels: which measurements to run (all when empty).
std::vector<std::string> selectedKernels;
/// --dense2csr-sizes: square random inputs for dense2csr beside the matrices' dense forms.
std::vector<int64_t> dense2csrSizes;
bool wants(const std::string &kernel) {
  return selectedKernels.empty() || std::find(selectedKernels.begin(), selectedKernels.end(), kernel) != selectedKernels.end();
}

template <typename T>
double maxRelError(const std::vector<T> &got, const std::vector<double> &want) {
  double scale = 1, err = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
  return err / scale;
}

/// CSR SpMV in precision T: SPL and cuSPARSE (two algorithms).
template <typename T>
void spmv(const spl_csr &a, cudaStream_t stream, cusparseHandle_t handle, int runs, size_t l2, double bound,
          const std::string &name, std::vector<Row> &rows) {
  const bool f32 = std::is_same_v<T, float>;
  const char *prec = f32 ? "f32" : "f64";
  std::vector<int32_t> offs(a.offs, a.offs + a.rows + 1);
  std::vector<int32_t> cols(a.cols_idx, a.cols_idx + a.nnz);
  std::vector<T> vals(a.vals, a.vals + a.nnz);
  std::vector<double> x64(static_cast<size_t>(a.cols));
  spl_random_vector(7, a.cols, x64.data());
  std::vector<T> x(x64.begin(), x64.end());
  std::vector<double> want(static_cast<size_t>(a.rows), 0.0);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = offs[i]; k < offs[i + 1]; ++k) want[i] += static_cast<double>(vals[k]) * static_cast<double>(x[cols[k]]);
  double bytes = static_cast<double>(a.nnz) * (sizeof(T) + 4) + (a.rows + 1) * 4.0 + (a.rows + a.cols) * sizeof(T);

  // Copies: the matrix once it exceeds the L2 on its own, else copies of everything.
  double matrixBytes = static_cast<double>(a.nnz) * (sizeof(T) + 4) + (a.rows + 1) * 4.0;
  int copies = matrixBytes > l2 ? 1 : static_cast<int>(std::min<double>(64, std::ceil(2.0 * l2 / bytes)));
  std::vector<DeviceArray> dOffs = deviceCopies(offs, copies), dCols = deviceCopies(cols, copies),
                           dVals = deviceCopies(vals, copies), dx = deviceCopies(x, copies),
                           dy = deviceCopies(std::vector<T>(static_cast<size_t>(a.rows) + 1, T(-1)), copies);
  // The first a.rows values of y (dy[0] unless another layout's output is named) against want.
  auto check = [&](const char *impl, const DeviceArray *y = nullptr) {
    cudaCheck(cudaStreamSynchronize(stream), impl);
    double err = maxRelError((y ? *y : dy[0]).download<T>(static_cast<size_t>(a.rows)), want);
    double tol = f32 ? 1e-4 : 1e-12;
    if (err > tol) die(name + " " + prec + " " + impl + ": wrong result (relative error " + std::to_string(err) + ")");
  };
  auto record = [&](const char *impl, double ms) {
    double gbs = bytes / (ms * 1e6);
    rows.push_back({name, std::string("csr ") + prec, impl, ms, gbs, gbs / bound});
    std::printf("  csr %s %-16s %9.4f ms %8.1f GB/s %6.1f%% of copy bandwidth\n", prec, impl, ms, gbs, 100 * gbs / bound);
  };

  auto splCall = [&](int k) {
    int c = k % copies;
    int rc = f32 ? spl_spmv_csr_f32_cuda(stream, a.rows, a.cols, dOffs[c].as<int32_t>(), dCols[c].as<int32_t>(),
                                         reinterpret_cast<float *>(dVals[c].p), reinterpret_cast<float *>(dx[c].p),
                                         reinterpret_cast<float *>(dy[c].p))
                 : spl_spmv_csr_f64_cuda(stream, a.rows, a.cols, dOffs[c].as<int32_t>(), dCols[c].as<int32_t>(),
                                         reinterpret_cast<double *>(dVals[c].p), reinterpret_cast<double *>(dx[c].p),
                                         reinterpret_cast<double *>(dy[c].p));
    splCheck(rc, "spl_spmv_csr_cuda");
  };
  splCall(0);
  check("spl");
  record("spl", medianMs(stream, runs, splCall));
  // The same SpMV compiled otherwise: --gpu-rows=vector (benchmarks/spmv_variants.spl: a vector
  // of lanes per row, as wide as the average row), the merge path without prefetching its next
  // step's row ends (benchmarks/spmv_merge_noprefetch.spl), without its whole-warp pass
  // for long rows or with another threshold (benchmarks/spmv_merge_long*.spl), with other numbers
  // of reads at once per lane (benchmarks/spmv_merge_u*.spl) and on 2 to 6 blocks a
  // multiprocessor, registers capped for them (benchmarks/spmv_merge_mb*.spl).
  struct Variant {
    const char *label, *selector;
    int (*f32)(void *, int64_t, int64_t, const int32_t *, const int32_t *, const float *, const float *, float *);
    int (*f64)(void *, int64_t, int64_t, const int32_t *, const int32_t *, const double *, const double *, double *);
  };
  const Variant variants[] = {
      {"spl vector", "vector", spl_spmv_csr_vector_f32_cuda, spl_spmv_csr_vector_f64_cuda},
      {"spl prefetch off", "prefetch", spl_spmv_csr_noprefetch_f32_cuda, spl_spmv_csr_noprefetch_f64_cuda},
      {"spl long rows off", "longrows", spl_spmv_csr_long0_f32_cuda, spl_spmv_csr_long0_f64_cuda},
      {"spl long rows 2", "longrows", spl_spmv_csr_long2_f32_cuda, spl_spmv_csr_long2_f64_cuda},
      {"spl long rows 4 (copy)", "longrows", spl_spmv_csr_long4_f32_cuda, spl_spmv_csr_long4_f64_cuda},
      {"spl long rows 8", "longrows", spl_spmv_csr_long8_f32_cuda, spl_spmv_csr_long8_f64_cuda},
      {"spl long rows 16", "longrows", spl_spmv_csr_long16_f32_cuda, spl_spmv_csr_long16_f64_cuda},
      {"spl long rows 32", "longrows", spl_spmv_csr_long32_f32_cuda, spl_spmv_csr_long32_f64_cuda},
      {"spl unroll 2", "unroll", spl_spmv_csr_u2_f32_cuda, spl_spmv_csr_u2_f64_cuda},
      {"spl unroll 8", "unroll", spl_spmv_csr_u8_f32_cuda, spl_spmv_csr_u8_f64_cuda},
      {"spl min blocks 2", "occupancy", spl_spmv_csr_mb2_f32_cuda, spl_spmv_csr_mb2_f64_cuda},
      {"spl min blocks 3", "occupancy", spl_spmv_csr_mb3_f32_cuda, spl_spmv_csr_mb3_f64_cuda},
      {"spl min blocks 4", "occupancy", spl_spmv_csr_mb4_f32_cuda, spl_spmv_csr_mb4_f64_cuda},
      {"spl min blocks 5", "occupancy", spl_spmv_csr_mb5_f32_cuda, spl_spmv_csr_mb5_f64_cuda},
      {"spl min blocks 6", "occupancy", spl_spmv_csr_mb6_f32_cuda, spl_spmv_csr_mb6_f64_cuda},
  };
  for (const Variant &v : variants) {
    if (!wants(v.selector)) continue;
    auto variantCall = [&](int k) {
      int c = k % copies;
      int rc = f32 ? v.f32(stream, a.rows, a.cols, dOffs[c].as<int32_t>(), dCols[c].as<int32_t>(),
                           reinterpret_cast<float *>(dVals[c].p), reinterpret_cast<float *>(dx[c].p), reinterpret_cast<float *>(dy[c].p))
                   : v.f64(stream, a.rows, a.cols, dOffs[c].as<int32_t>(), dCols[c].as<int32_t>(),
                           reinterpret_cast<double *>(dVals[c].p), reinterpret_cast<double *>(dx[c].p),
                           reinterpret_cast<double *>(dy[c].p));
      splCheck(rc, v.label);
    };
    variantCall(0);
    check(v.label);
    record(v.label, medianMs(stream, runs, variantCall));
  }
  // LIL (tests/contract/spmv_lil.spl): the row lengths in place of the offsets; the Sigma
  // prefix of the lengths is computed on the device in every call.
  if (f32 && wants("lil")) {
    std::vector<int32_t> lens(static_cast<size_t>(a.rows) + 1, 0);
    for (int64_t i = 0; i < a.rows; ++i) lens[i] = offs[i + 1] - offs[i];
    std::vector<DeviceArray> dLens = deviceCopies(lens, copies);
    auto lilCall = [&](int k) {
      int c = k % copies;
      splCheck(spl_spmv_lil_cuda(stream, a.rows, a.cols, dLens[c].as<int32_t>(), dCols[c].as<int32_t>(),
                                 reinterpret_cast<float *>(dVals[c].p), reinterpret_cast<float *>(dx[c].p),
                                 reinterpret_cast<float *>(dy[c].p)),
               "spl_spmv_lil_cuda");
    };
    lilCall(0);
    check("spl lil");
    record("spl lil", medianMs(stream, runs, lilCall));
  }

  // SELL-C-sigma (stdlib/spmv.spl's spmv_sell_rows_gpu: a block per window, a thread per row),
  // converted once on the host by the runtime's inspector (not timed here), the same copies.
  if (wants("sell")) {
    // The lanes and the CUDA kernel's window spmv.spl was compiled with (its header).
    const int64_t lanes = f32 ? SPL_SPMV_SELL_LANES_F32 : SPL_SPMV_SELL_LANES_F64, sigma = SPL_SPMV_SELL_WINDOW_GPU * lanes;
    int64_t slices = 0, slots = 0;
    splCheck(spl_sell_sizes(a.rows, offs.data(), lanes, sigma, &slices, &slots), "spl_sell_sizes");
    std::vector<int32_t> soffs(static_cast<size_t>(slices) + 1), scols(static_cast<size_t>(slots * lanes) + 1),
        wpos(static_cast<size_t>(slices * lanes) + 1);
    std::vector<T> svals(static_cast<size_t>(slots * lanes) + 1);
    if constexpr (std::is_same_v<T, float>)
      splCheck(spl_sell_build_f32(a.rows, offs.data(), cols.data(), vals.data(), lanes, sigma, soffs.data(), scols.data(),
                                  svals.data(), wpos.data()),
               "spl_sell_build_f32");
    else
      splCheck(spl_sell_build_f64(a.rows, offs.data(), cols.data(), vals.data(), lanes, sigma, soffs.data(), scols.data(),
                                  svals.data(), wpos.data()),
               "spl_sell_build_f64");
    std::vector<DeviceArray> sOffs = deviceCopies(soffs, copies), sCols = deviceCopies(scols, copies),
                             sVals = deviceCopies(svals, copies), sWpos = deviceCopies(wpos, copies),
                             sY = deviceCopies(std::vector<T>(static_cast<size_t>(slices * lanes) + 1, T(-1)), copies);
    auto sellCall = [&](int k) {
      int c = k % copies;
      int rc;
      if constexpr (std::is_same_v<T, float>)
        rc = spl_spmv_sell_rows_gpu_f32_cuda(stream, slices, a.cols, sOffs[c].as<int32_t>(), sCols[c].as<int32_t>(),
                                             reinterpret_cast<float *>(sVals[c].p), sWpos[c].as<int32_t>(),
                                             reinterpret_cast<float *>(dx[c].p), reinterpret_cast<float *>(sY[c].p));
      else
        rc = spl_spmv_sell_rows_gpu_f64_cuda(stream, slices, a.cols, sOffs[c].as<int32_t>(), sCols[c].as<int32_t>(),
                                             reinterpret_cast<double *>(sVals[c].p), sWpos[c].as<int32_t>(),
                                             reinterpret_cast<double *>(dx[c].p), reinterpret_cast<double *>(sY[c].p));
      splCheck(rc, "spl_spmv_sell_rows_gpu_cuda");
    };
    sellCall(0);
    check("spl sell", &sY[0]);
    record("spl sell", medianMs(stream, runs, sellCall));
  }

  cudaDataType vt = f32 ? CUDA_R_32F : CUDA_R_64F;
  std::vector<cusparseSpMatDescr_t> mats(copies);
  std::vector<cusparseDnVecDescr_t> xs(copies), ys(copies);
  for (int c = 0; c < copies; ++c) {
    sparseCheck(cusparseCreateCsr(&mats[c], a.rows, a.cols, a.nnz, dOffs[c].p, dCols[c].p, dVals[c].p, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt),
                "cusparseCreateCsr");
    sparseCheck(cusparseCreateDnVec(&xs[c], a.cols, dx[c].p, vt), "cusparseCreateDnVec");
    sparseCheck(cusparseCreateDnVec(&ys[c], a.rows, dy[c].p, vt), "cusparseCreateDnVec");
  }
  T alpha = 1, beta = 0;
  for (auto [alg, label] : {std::pair{CUSPARSE_SPMV_ALG_DEFAULT, "cusparse default"}, std::pair{CUSPARSE_SPMV_CSR_ALG2, "cusparse alg2"}}) {
    size_t bufferBytes = 0;
    sparseCheck(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mats[0], xs[0], &beta, ys[0], vt, alg,
                                        &bufferBytes),
                "cusparseSpMV_bufferSize");
    DeviceArray buffer(bufferBytes);
    auto call = [&](int k) {
      int c = k % copies;
      sparseCheck(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mats[c], xs[c], &beta, ys[c], vt, alg, buffer.p),
                  "cusparseSpMV");
    };
    call(0);
    check(label);
    record(label, medianMs(stream, runs, call));
    // One call and its synchronisation, timed on the host, on the small matrices, where what a
    // call costs besides its kernel decides.
    if (alg == CUSPARSE_SPMV_ALG_DEFAULT && a.nnz <= kSmallNnz) {
      double cusparseMs = callAndSyncMs(stream, runs, call), splMs = callAndSyncMs(stream, runs, splCall);
      rows.push_back({name, std::string("csr ") + prec + " call+sync", "spl", splMs, 0, cusparseMs / splMs});
      rows.push_back({name, std::string("csr ") + prec + " call+sync", "cusparse default", cusparseMs, 0, 1});
      std::printf("  csr %s call+sync: spl %.4f ms, cusparse default %.4f ms (cusparse / spl %.2f)\n", prec, splMs, cusparseMs,
                  cusparseMs / splMs);
    }
  }
  for (int c = 0; c < copies; ++c) {
    cusparseDestroySpMat(mats[c]);
    cusparseDestroyDnVec(xs[c]);
    cusparseDestroyDnVec(ys[c]);
  }
}

/// Dense to CSR f32: SPL's count + scan + fill pipeline and cusparseDenseToSparse.
void denseToCsr(const spl_csr &a, cudaStream_t stream, cusparseHandle_t handle, int runs, double bound,
                const std::string &name, std::vector<Row> &rows) {
  float *dense = spl_csr_to_dense_f32(&a);
  if (!dense) die("out of memory for the dense form of " + name);
  std::vector<float> host(dense, dense + a.rows * a.cols);
  std::free(dense);
  DeviceArray dDense(host), offsets(static_cast<size_t>(a.rows + 1) * 4), outOffs(static_cast<size_t>(a.rows + 1) * 4),
      outVals(static_cast<size_t>(a.nnz) * 4), outCols(static_cast<size_t>(a.nnz) * 4);
  double bytes = static_cast<double>(a.rows) * a.cols * 4 + a.nnz * 8.0 + (a.rows + 1) * 4.0;
  auto record = [&](const char *impl, double ms) {
    double gbs = bytes / (ms * 1e6);
    rows.push_back({name, "dense2csr f32", impl, ms, gbs, gbs / bound});
    std::printf("  dense2csr f32 %-16s %9.4f ms %8.1f GB/s %6.1f%% of copy bandwidth\n", impl, ms, gbs, 100 * gbs / bound);
  };
  // The same matrix: the same offsets and, row by row, the same (column, value) pairs. SPL
  // writes a row's entries in column order; cuSPARSE does not promise an order within a row,
  // so each row's pairs are compared sorted.
  auto checkResult = [&](const char *impl) {
    cudaCheck(cudaStreamSynchronize(stream), impl);
    std::vector<int32_t> o = outOffs.download<int32_t>(static_cast<size_t>(a.rows + 1));
    std::vector<int32_t> c = outCols.download<int32_t>(static_cast<size_t>(a.nnz));
    std::vector<float> v = outVals.download<float>(static_cast<size_t>(a.nnz));
    for (int64_t i = 0; i <= a.rows; ++i)
      if (o[i] != a.offs[i]) die(name + " dense2csr " + impl + ": wrong offsets at row " + std::to_string(i));
    std::vector<std::pair<int32_t, float>> got, want;
    for (int64_t i = 0; i < a.rows; ++i) {
      got.clear();
      want.clear();
      for (int64_t k = a.offs[i]; k < a.offs[i + 1]; ++k) {
        got.emplace_back(c[k], v[k]);
        want.emplace_back(a.cols_idx[k], static_cast<float>(a.vals[k]));
      }
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      if (got != want) die(name + " dense2csr " + impl + ": wrong entries in row " + std::to_string(i));
    }
  };
  // SPL skips stored zeros (the dense form has none to find): compare on the nonzero pattern.
  for (int64_t k = 0; k < a.nnz; ++k)
    if (a.vals[k] == 0) die(name + ": stored zeros, dense2csr cannot reproduce the pattern");

  auto splCall = [&](int) {
    splCheck(spl_dense2csr_offsets_cuda(stream, a.rows, a.cols, dDense.as<float>(), offsets.as<int32_t>()), "offsets");
    splCheck(spl_dense2csr_cuda(stream, a.rows, a.cols, offsets.as<int32_t>(), dDense.as<float>(), outOffs.as<int32_t>(),
                                outVals.as<float>(), outCols.as<int32_t>()),
             "dense2csr");
  };
  splCall(0);
  checkResult("spl");
  record("spl", medianMs(stream, runs, splCall));

  cusparseDnMatDescr_t matA;
  cusparseSpMatDescr_t matB;
  sparseCheck(cusparseCreateDnMat(&matA, a.rows, a.cols, a.cols, dDense.p, CUDA_R_32F, CUSPARSE_ORDER_ROW), "cusparseCreateDnMat");
  sparseCheck(cusparseCreateCsr(&matB, a.rows, a.cols, 0, outOffs.p, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
              "cusparseCreateCsr");
  size_t bufferBytes = 0;
  sparseCheck(cusparseDenseToSparse_bufferSize(handle, matA, matB, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, &bufferBytes),
              "cusparseDenseToSparse_bufferSize");
  DeviceArray buffer(bufferBytes);
  auto call = [&](int) {
    sparseCheck(cusparseDenseToSparse_analysis(handle, matA, matB, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, buffer.p),
                "cusparseDenseToSparse_analysis");
    sparseCheck(cusparseCsrSetPointers(matB, outOffs.p, outCols.p, outVals.p), "cusparseCsrSetPointers");
    sparseCheck(cusparseDenseToSparse_convert(handle, matA, matB, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, buffer.p),
                "cusparseDenseToSparse_convert");
  };
  call(0);
  checkResult("cusparse");
  record("cusparse", medianMs(stream, runs, call));
  cusparseDestroyDnMat(matA);
  cusparseDestroySpMat(matB);
}

/// Uncoalesced bandwidth: cusparseGather of n floats at random indices (GB/s of the gathered
/// values, their indices and the written values).
double gatherBandwidth(cudaStream_t stream, cusparseHandle_t handle, int runs) {
  int64_t n = int64_t(1) << 25;
  std::vector<int32_t> idx(static_cast<size_t>(n));
  uint64_t state = 99;
  for (int64_t k = 0; k < n; ++k) idx[k] = static_cast<int32_t>(spl_splitmix64_next(&state) % static_cast<uint64_t>(n));
  DeviceArray dIdx(idx), src(static_cast<size_t>(n) * 4), dst(static_cast<size_t>(n) * 4);
  cudaCheck(cudaMemset(src.p, 0, src.bytes), "cudaMemset");
  cusparseDnVecDescr_t y;
  cusparseSpVecDescr_t x;
  sparseCheck(cusparseCreateDnVec(&y, n, src.p, CUDA_R_32F), "cusparseCreateDnVec");
  sparseCheck(cusparseCreateSpVec(&x, n, n, dIdx.p, dst.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
              "cusparseCreateSpVec");
  double ms = medianMs(stream, runs, [&](int) { sparseCheck(cusparseGather(handle, y, x), "cusparseGather"); });
  cusparseDestroyDnVec(y);
  cusparseDestroySpVec(x);
  return 12.0 * static_cast<double>(n) / (ms * 1e6);
}

/// One BFS frontier step (count + expand) on the graph of a square matrix.
void bfsStep(const spl_csr &a, cudaStream_t stream, int runs, double coalesced, double uncoalesced, const std::string &name,
             std::vector<Row> &rows) {
  int64_t n = a.rows;
  std::vector<int32_t> nodes(a.offs, a.offs + n + 1), edges(a.cols_idx, a.cols_idx + a.nnz), frontier;
  std::vector<uint8_t> seen(static_cast<size_t>(n));
  uint64_t state = 5;
  for (int64_t v = 0; v < n; ++v) seen[v] = spl_splitmix64_next(&state) & 1;
  for (int64_t v = 0; v < n; v += 4) frontier.push_back(static_cast<int32_t>(v));
  int64_t m = static_cast<int64_t>(frontier.size());
  // The CPU result first: the counts' scan and the next frontier.
  std::vector<int32_t> wantOffsets(static_cast<size_t>(m + 1));
  const bool *seenHost = reinterpret_cast<const bool *>(seen.data());
  splCheck(spl_bfs_count(n, nodes.data(), edges.data(), seenHost, m, frontier.data(), wantOffsets.data()), "spl_bfs_count");
  int64_t k = wantOffsets[m] - wantOffsets[0];
  std::vector<int32_t> wantNext(static_cast<size_t>(k) + 1);
  int64_t wantK = -1;
  splCheck(spl_bfs_frontier(n, nodes.data(), edges.data(), seenHost, m, frontier.data(), wantOffsets.data(), &wantK, wantNext.data()),
           "spl_bfs_frontier");
  int64_t examined = 0;
  for (int32_t v : frontier) examined += nodes[v + 1] - nodes[v];

  DeviceArray dNodes(nodes), dEdges(edges), dSeen(seen), dFrontier(frontier), dOffsets(static_cast<size_t>(m + 1) * 4),
      dK(8), dNext(static_cast<size_t>(k + 1) * 4);
  auto call = [&](int) {
    splCheck(spl_bfs_count_cuda(stream, n, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), m, dFrontier.as<int32_t>(),
                                dOffsets.as<int32_t>()),
             "spl_bfs_count_cuda");
    splCheck(spl_bfs_frontier_cuda(stream, n, dNodes.as<int32_t>(), dEdges.as<int32_t>(), dSeen.as<bool>(), m,
                                   dFrontier.as<int32_t>(), dOffsets.as<int32_t>(), dK.as<int64_t>(), dNext.as<int32_t>()),
             "spl_bfs_frontier_cuda");
  };
  call(0);
  cudaCheck(cudaStreamSynchronize(stream), "bfs");
  if (dOffsets.download<int32_t>(static_cast<size_t>(m + 1)) != wantOffsets) die(name + " bfs: wrong write offsets");
  if (dK.download<int64_t>(1)[0] != wantK) die(name + " bfs: wrong frontier length");
  std::vector<int32_t> next = dNext.download<int32_t>(static_cast<size_t>(k));
  if (!std::equal(next.begin(), next.end(), wantNext.begin())) die(name + " bfs: wrong next frontier");
  double ms = medianMs(stream, runs, call);
  // The limits: the frontier's vertices, offsets (2 per vertex) and edges read coalesced, twice
  // (count, then expand), the new frontier written once; one random read of a seen flag per edge,
  // twice, each costing what one element of the random gather costs (12 bytes at its GB/s).
  double coalescedBytes = 2.0 * (m * 12.0 + examined * 4.0) + k * 4.0, randomReads = 2.0 * examined;
  double limitMs = coalescedBytes / (coalesced * 1e6) + randomReads * 12.0 / (uncoalesced * 1e6);
  double edgesPerSecond = examined / (ms * 1e-3);
  rows.push_back({name, "bfs step", "spl", ms, edgesPerSecond / 1e9, limitMs / ms});
  std::printf("  bfs step %-16s %9.4f ms %8.2f Gedges/s (%lld edges, %lld new); %.0f%% of the bandwidth limits' time\n", "spl", ms,
              edgesPerSecond / 1e9, static_cast<long long>(examined), static_cast<long long>(k), 100 * limitMs / ms);
}

}  // namespace

int main(int argc, char **argv) {
  int runs = 200;
  std::string csvPath;
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(20, std::atoi(argv[++i]));
    } else if (arg == "--csv" && i + 1 < argc) {
      csvPath = argv[++i];
    } else if (arg == "--kernels" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        size_t comma = list.find(',', at);
        if (comma == std::string::npos) comma = list.size();
        if (comma > at) selectedKernels.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (arg == "--dense2csr-sizes" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        size_t comma = list.find(',', at);
        if (comma == std::string::npos) comma = list.size();
        if (comma > at) dense2csrSizes.push_back(std::atoll(list.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    } else if (arg == "--budget" && i + 1 < argc) {
      medianBudgetSeconds = std::max(0.05, std::atof(argv[++i]));
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: spl-gpu-bench [--runs N (>= 100)] [--budget SECONDS per median] [--kernels spmv,vector,prefetch,longrows,unroll,occupancy,lil,sell,dense2csr,bfs]\n"
                  "                     [--dense2csr-sizes N,N,...] [--csv FILE] MATRIX.mtx ...\n");
      return 0;
    } else {
      matrices.push_back(arg);
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || !spl_cuda_available()) {
    std::printf("spl-gpu-bench: no CUDA device: nothing measured\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaCheck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  cudaStream_t stream;
  cudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");
  cusparseHandle_t handle;
  sparseCheck(cusparseCreate(&handle), "cusparseCreate");
  sparseCheck(cusparseSetStream(handle, stream), "cusparseSetStream");
  size_t l2 = static_cast<size_t>(prop.l2CacheSize);
  double bound = copyBandwidth(stream, runs);
  double gather = gatherBandwidth(stream, handle, runs);
  std::printf("device: %s, %d SMs, L2 %zu MiB; device-to-device copy %.1f GB/s, random gather %.1f GB/s; %d runs per median\n",
              prop.name, prop.multiProcessorCount, l2 >> 20, bound, gather, runs);

  std::vector<Row> rows;
  // dense2csr on square random inputs of the sizes asked for: all entries nonzero (up to 8192, so
  // that the CSR result stays under 1 GB) and 1% nonzero.
  for (int64_t n : dense2csrSizes) {
    for (double density : {1.0, 0.01}) {
      if (density == 1.0 && n > 8192) continue;
      spl_csr a{};
      if (spl_random_csr(n, n, density, 11 + static_cast<uint64_t>(n), SPL_RANDOM_UNIFORM, &a) != 0) die("cannot generate a dense2csr input");
      std::string name = "random_" + std::to_string(n) + "x" + std::to_string(n) + (density == 1.0 ? "_dense" : "_1pct");
      std::printf("%s: %lld x %lld, %lld entries\n", name.c_str(), static_cast<long long>(n), static_cast<long long>(n),
                  static_cast<long long>(a.nnz));
      denseToCsr(a, stream, handle, runs, bound, name, rows);
      spl_csr_free(&a);
    }
  }
  for (const std::string &path : matrices) {
    spl_csr a;
    char err[256];
    if (spl_read_matrix(path.c_str(), &a, err, sizeof err) != SPL_MATRIX_OK) die(path + ": " + err);
    std::string name = path.substr(path.find_last_of('/') + 1);
    std::printf("%s: %lld x %lld, %lld entries\n", name.c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                static_cast<long long>(a.nnz));
    if (wants("spmv")) {
      spmv<float>(a, stream, handle, runs, l2, bound, name, rows);
      spmv<double>(a, stream, handle, runs, l2, bound, name, rows);
    }
    bool hasZeros = false;
    for (int64_t k = 0; k < a.nnz; ++k) hasZeros = hasZeros || a.vals[k] == 0;
    if (wants("dense2csr") && a.rows * a.cols <= (int64_t(1) << 28) && !hasZeros) denseToCsr(a, stream, handle, runs, bound, name, rows);
    if (wants("bfs") && a.rows == a.cols) bfsStep(a, stream, runs, bound, gather, name, rows);
    spl_csr_free(&a);
  }
  if (!csvPath.empty()) {
    FILE *f = std::fopen(csvPath.c_str(), "w");
    if (!f) die("cannot write " + csvPath);
    // bfs step rows: gbs holds Gedges/s and of_copy_bandwidth the bandwidth limits' time over the step's.
    std::fprintf(f, "# device=%s copy_gbs=%.2f gather_gbs=%.2f runs=%d\nmatrix,kernel,impl,ms,gbs,of_copy_bandwidth\n", prop.name, bound,
                 gather, runs);
    for (const Row &r : rows)
      std::fprintf(f, "%s,%s,%s,%.6f,%.3f,%.4f\n", r.matrix.c_str(), r.kernel.c_str(), r.impl.c_str(), r.ms, r.gbs, r.ofBound);
    std::fclose(f);
  }
  cusparseDestroy(handle);
  cudaStreamDestroy(stream);
  return 0;
}
