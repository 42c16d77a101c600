// End to end: ../shared/spec/examples/einsum.spl — taco's index notation over CSR, CSC, COO
// and dense operands, with dense and sparse (assembled) results, against dense double
// references. Sparse results are checked through their NAME_size function first.
#include <map>

#include "e2e_support.h"
#include "einsum.h"

namespace {

using spl_e2e::kF32Tolerance;

std::string testName(const ::testing::TestParamInfo<size_t> &i) {
  std::string n = spl_e2e::testMatrices()[i.param].name;
  for (char &c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

/// A dense row-major double copy of a CSR matrix.
std::vector<double> dense(const spl_csr &a) {
  std::vector<double> d(static_cast<size_t>(a.rows * a.cols) + 1, 0.0);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) d[i * a.cols + a.cols_idx[p]] += a.vals[p];
  return d;
}

/// A CSR result (offs n+1, vals, cols) as dense, checking the structure: offsets start at 0,
/// are monotone, and columns ascend strictly within each row.
std::vector<double> denseOfResult(int64_t n, int64_t m, const std::vector<int32_t> &offs, const std::vector<float> &vals,
                                  const std::vector<int32_t> &cols) {
  std::vector<double> d(static_cast<size_t>(n * m) + 1, 0.0);
  EXPECT_EQ(offs[0], 0);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_LE(offs[i], offs[i + 1]);
    for (int32_t p = offs[i]; p < offs[i + 1]; ++p) {
      EXPECT_GE(cols[p], 0);
      EXPECT_LT(cols[p], m);
      if (p > offs[i]) EXPECT_LT(cols[p - 1], cols[p]) << "row " << i;
      d[i * m + cols[p]] += vals[p];
    }
  }
  return d;
}

double maxRelDiff(const std::vector<double> &got, const std::vector<double> &want) {
  double scale = 1, err = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(got[i] - want[i]));
  return err / scale;
}

class Einsum : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    a_ = &spl_e2e::testMatrices()[GetParam()].m;
    ASSERT_EQ(spl_csr_to_f32(a_, &af_), 0);
  }
  void TearDown() override { spl_csr_f32_free(&af_); }
  const spl_csr *a_ = nullptr;
  spl_csr_f32 af_{};
};

TEST_P(Einsum, SpmvCsrCscCooResidual) {
  const spl_csr &a = *a_;
  std::vector<float> x = spl_e2e::randomVectorF(a.cols, 11), b = spl_e2e::randomVectorF(a.rows, 12);
  std::vector<double> xd = spl_e2e::toDouble(x), want(static_cast<size_t>(a.rows) + 1);
  spl_ref_spmv(&a, xd.data(), want.data());
  std::vector<float> y(static_cast<size_t>(a.rows) + 1, -5.0f);
  ASSERT_EQ(spl_ein_spmv(a.rows, a.cols, af_.offs, af_.vals, af_.cols_idx, x.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance);

  spl_csc csc;
  ASSERT_EQ(spl_csr_to_csc(&a, &csc), 0);
  std::fill(y.begin(), y.end(), -5.0f);
  ASSERT_EQ(spl_ein_spmv_csc(a.rows, a.cols, csc.offs, csc.vals_f32, csc.row_idx, x.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance);
  spl_csc_free(&csc);

  spl_coo coo;
  ASSERT_EQ(spl_csr_to_coo(&a, &coo), 0);
  std::fill(y.begin(), y.end(), -5.0f);
  ASSERT_EQ(spl_ein_spmv_coo(a.rows, a.cols, coo.nnz, coo.vals_f32, coo.row_idx, coo.col_idx, x.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), want.data(), a.rows), kF32Tolerance);
  spl_coo_free(&coo);

  std::vector<double> r(static_cast<size_t>(a.rows) + 1);
  for (int64_t i = 0; i < a.rows; ++i) r[i] = b[i] - want[i];
  std::fill(y.begin(), y.end(), -5.0f);
  ASSERT_EQ(spl_ein_residual(a.rows, a.cols, af_.offs, af_.vals, af_.cols_idx, x.data(), b.data(), y.data()), SPL_OK);
  EXPECT_LT(spl_e2e::relError(y.data(), r.data(), a.rows), kF32Tolerance);
}

TEST_P(Einsum, SpmmAndDense) {
  const spl_csr &a = *a_;
  for (int64_t k : {1, 3, 16}) {
    std::vector<float> bm = spl_e2e::randomVectorF(a.cols * k, 21);
    std::vector<double> ad = dense(a), want(static_cast<size_t>(a.rows * k) + 1, 0.0);
    for (int64_t i = 0; i < a.rows; ++i)
      for (int64_t j = 0; j < a.cols; ++j)
        if (ad[i * a.cols + j] != 0)
          for (int64_t l = 0; l < k; ++l) want[i * k + l] += ad[i * a.cols + j] * bm[j * k + l];
    std::vector<float> c(static_cast<size_t>(a.rows * k) + 1, -5.0f);
    ASSERT_EQ(spl_ein_spmm(a.rows, a.cols, k, af_.offs, af_.vals, af_.cols_idx, bm.data(), c.data()), SPL_OK);
    EXPECT_LT(spl_e2e::relError(c.data(), want.data(), a.rows * k), kF32Tolerance) << "k = " << k;
  }
  std::vector<float> d(static_cast<size_t>(a.rows * a.cols) + 1, -5.0f);
  ASSERT_EQ(spl_ein_csr2dense(a.rows, a.cols, af_.offs, af_.vals, af_.cols_idx, d.data()), SPL_OK);
  std::vector<double> want = dense(a);
  EXPECT_LT(spl_e2e::relError(d.data(), want.data(), a.rows * a.cols), kF32Tolerance);
}

TEST_P(Einsum, SddmmOnThePattern) {
  const spl_csr &s = *a_;
  const int64_t k = 5;
  std::vector<float> u = spl_e2e::randomVectorF(s.rows * k, 31), v = spl_e2e::randomVectorF(s.cols * k, 32);
  int64_t sizes[3] = {-1, -1, -1};
  ASSERT_EQ(spl_ein_sddmm_size(s.rows, s.cols, k, af_.offs, af_.vals, af_.cols_idx, u.data(), v.data(), sizes), SPL_OK);
  EXPECT_EQ(sizes[0], s.rows + 1);
  EXPECT_EQ(sizes[1], s.nnz);
  EXPECT_EQ(sizes[2], s.nnz);
  std::vector<int32_t> offs(static_cast<size_t>(sizes[0])), cols(static_cast<size_t>(sizes[2]) + 1);
  std::vector<float> vals(static_cast<size_t>(sizes[1]) + 1);
  ASSERT_EQ(spl_ein_sddmm(s.rows, s.cols, k, af_.offs, af_.vals, af_.cols_idx, u.data(), v.data(), offs.data(),
                          vals.data(), cols.data()),
            SPL_OK);
  for (int64_t i = 0; i <= s.rows; ++i) ASSERT_EQ(offs[i], af_.offs[i]);
  double scale = 1, err = 0;
  for (int64_t i = 0; i < s.rows; ++i)
    for (int32_t p = af_.offs[i]; p < af_.offs[i + 1]; ++p) {
      ASSERT_EQ(cols[p], af_.cols_idx[p]);
      double dotuv = 0;
      for (int64_t l = 0; l < k; ++l) dotuv += static_cast<double>(u[i * k + l]) * v[af_.cols_idx[p] * k + l];
      double want = af_.vals[p] * dotuv;
      scale = std::max(scale, std::fabs(want));
      err = std::max(err, std::fabs(vals[p] - want));
    }
  EXPECT_LT(err / scale, kF32Tolerance);
}

TEST_P(Einsum, AddMulTranspose) {
  const spl_csr &a = *a_;
  // B: a random matrix of the same shape with its own pattern.
  spl_csr b;
  ASSERT_EQ(spl_random_csr(a.rows, a.cols, 0.05, 99, SPL_RANDOM_UNIFORM, &b), 0);
  spl_csr_f32 bf;
  ASSERT_EQ(spl_csr_to_f32(&b, &bf), 0);
  std::vector<double> ad = dense(a), bd = dense(b);
  for (int op = 0; op < 2; ++op) {
    int64_t sizes[3] = {-1, -1, -1};
    auto sizeFn = op == 0 ? spl_ein_add_size : spl_ein_mul_size;
    auto fn = op == 0 ? spl_ein_add : spl_ein_mul;
    ASSERT_EQ(sizeFn(a.rows, a.cols, af_.offs, af_.vals, af_.cols_idx, bf.offs, bf.vals, bf.cols_idx, sizes), SPL_OK);
    EXPECT_EQ(sizes[0], a.rows + 1);
    // The union / intersection of the patterns.
    int64_t want = 0;
    for (int64_t i = 0; i < a.rows; ++i) {
      std::map<int32_t, int> seen;
      for (int64_t p = a.offs[i]; p < a.offs[i + 1]; ++p) seen[a.cols_idx[p]] |= 1;
      for (int64_t p = b.offs[i]; p < b.offs[i + 1]; ++p) seen[b.cols_idx[p]] |= 2;
      for (const auto &[c, bits] : seen) want += op == 0 ? 1 : bits == 3;
    }
    EXPECT_EQ(sizes[1], want);
    std::vector<int32_t> offs(static_cast<size_t>(sizes[0])), cols(static_cast<size_t>(sizes[2]) + 1);
    std::vector<float> vals(static_cast<size_t>(sizes[1]) + 1);
    ASSERT_EQ(fn(a.rows, a.cols, af_.offs, af_.vals, af_.cols_idx, bf.offs, bf.vals, bf.cols_idx, offs.data(), vals.data(),
                 cols.data()),
              SPL_OK);
    EXPECT_EQ(offs[a.rows], sizes[1]);
    std::vector<double> got = denseOfResult(a.rows, a.cols, offs, vals, cols), ref(ad.size());
    for (size_t i = 0; i < ad.size(); ++i)
      ref[i] = op == 0 ? static_cast<float>(ad[i]) + static_cast<double>(static_cast<float>(bd[i]))
                       : static_cast<double>(static_cast<float>(ad[i])) * static_cast<float>(bd[i]);
    EXPECT_LT(maxRelDiff(got, ref), kF32Tolerance) << (op == 0 ? "add" : "mul");
  }
  // Transposition: CSR -> CSC of A, i.e. the CSR of A^T.
  int64_t sizes[3] = {-1, -1, -1};
  ASSERT_EQ(spl_ein_transpose_size(a.rows, a.cols, af_.offs, af_.vals, af_.cols_idx, sizes), SPL_OK);
  EXPECT_EQ(sizes[0], a.cols + 1);
  EXPECT_EQ(sizes[1], a.nnz);
  std::vector<int32_t> offs(static_cast<size_t>(sizes[0])), cols(static_cast<size_t>(sizes[2]) + 1);
  std::vector<float> vals(static_cast<size_t>(sizes[1]) + 1);
  ASSERT_EQ(spl_ein_transpose(a.rows, a.cols, af_.offs, af_.vals, af_.cols_idx, offs.data(), vals.data(), cols.data()), SPL_OK);
  std::vector<double> got = denseOfResult(a.cols, a.rows, offs, vals, cols), ref(static_cast<size_t>(a.rows * a.cols) + 1, 0.0);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) ref[j * a.rows + i] = static_cast<float>(ad[i * a.cols + j]);
  EXPECT_LT(maxRelDiff(got, ref), kF32Tolerance) << "transpose";
  spl_csr_f32_free(&bf);
  spl_csr_free(&b);
}

INSTANTIATE_TEST_SUITE_P(Matrices, Einsum, ::testing::Range<size_t>(0, 13), testName);

}  // namespace
