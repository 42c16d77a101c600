// convert_test.cpp: every conversion checked against the CSR it came from, on random matrices
// of each kind and shape and on the shared real matrices. Each format gets a structural check
// (its documented layout, padding and ordering) and an SpMV written here from the format's
// definition, compared with the double-precision reference; float arrays are checked as the
// rounding of the double ones. Also: the references and the relative-error helper themselves.
#include "matrix_test_support.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <utility>

using namespace spl_matrix_test;

namespace {

struct NamedMatrix {
  std::string name;
  std::shared_ptr<Csr> matrix;
  bool random; // float checks only make sense on the well-scaled random values
};

std::vector<NamedMatrix> test_matrices() {
  std::vector<NamedMatrix> all;
  auto add_random = [&](const char *name, int64_t rows, int64_t cols, double density,
                        spl_random_kind kind) {
    auto m = std::make_shared<Csr>();
    EXPECT_EQ(spl_random_csr(rows, cols, density, 77, kind, &m->m), SPL_MATRIX_OK) << name;
    all.push_back({name, m, true});
  };
  add_random("uniform 37x53", 37, 53, 0.1, SPL_RANDOM_UNIFORM);
  add_random("empty rows 64x64", 64, 64, 0.05, SPL_RANDOM_EMPTY_ROWS);
  add_random("skewed 100x80", 100, 80, 0.02, SPL_RANDOM_SKEWED);
  add_random("row 1x40", 1, 40, 0.3, SPL_RANDOM_UNIFORM);
  add_random("column 40x1", 40, 1, 0.5, SPL_RANDOM_UNIFORM);
  add_random("no entries 10x10", 10, 10, 0.0, SPL_RANDOM_UNIFORM);
  add_random("no rows 0x5", 0, 5, 0.5, SPL_RANDOM_UNIFORM);
  add_random("no columns 5x0", 5, 0, 0.5, SPL_RANDOM_UNIFORM);
  for (const char *file : {"pores_1.mtx", "lund_a.mtx", "jgl009.mtx", "utm300.rua", "g20.rua"}) {
    auto m = std::make_shared<Csr>();
    auto outcome = read_matrix(shared_matrix(file), &m->m);
    EXPECT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
    all.push_back({file, m, false});
  }
  return all;
}

std::vector<double> reference(const spl_csr &m, const std::vector<double> &x) {
  std::vector<double> y(static_cast<size_t>(m.rows));
  spl_ref_spmv(&m, x.data(), y.data());
  return y;
}

void expect_close(const std::vector<double> &got, const std::vector<double> &want,
                  double tolerance = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LE(spl_rel_error_f64(got.data(), want.data(), static_cast<int64_t>(got.size())),
            tolerance);
}

template <typename T> std::vector<T> to_vector(const T *data, int64_t n) {
  return std::vector<T>(data, data + n);
}

std::vector<float> rounded(const double *data, int64_t n) {
  std::vector<float> out;
  for (int64_t k = 0; k < n; ++k)
    out.push_back(static_cast<float>(data[k]));
  return out;
}

int64_t longest_row(const spl_csr &m) {
  int64_t longest = 0;
  for (int64_t i = 0; i < m.rows; ++i)
    longest = std::max(longest, m.offs[i + 1] - m.offs[i]);
  return longest;
}

} // namespace

TEST(Convert, DenseHoldsEveryEntryAndNothingElse) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    SCOPED_TRACE(name);
    const spl_csr &m = matrix->m;
    std::unique_ptr<double, decltype(&free)> dense(spl_csr_to_dense(&m), free);
    std::unique_ptr<float, decltype(&free)> dense_f32(spl_csr_to_dense_f32(&m), free);
    ASSERT_NE(dense, nullptr);
    ASSERT_NE(dense_f32, nullptr);
    int64_t nonzero_cells = 0;
    for (int64_t c = 0; c < m.rows * m.cols; ++c) {
      nonzero_cells += dense.get()[c] != 0.0;
      EXPECT_EQ(dense_f32.get()[c], static_cast<float>(dense.get()[c]));
    }
    EXPECT_LE(nonzero_cells, m.nnz);
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t k = m.offs[i]; k < m.offs[i + 1]; ++k)
        EXPECT_EQ(dense.get()[i * m.cols + m.cols_idx[k]], m.vals[k]);

    auto x = random_x(m.cols, 5);
    std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t j = 0; j < m.cols; ++j)
        y[i] += dense.get()[i * m.cols + j] * x[j];
    expect_close(y, reference(m, x));
  }
}

TEST(Convert, CsrF32KeepsTheStructure) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    SCOPED_TRACE(name);
    const spl_csr &m = matrix->m;
    spl_csr_f32 f{};
    ASSERT_EQ(spl_csr_to_f32(&m, &f), SPL_MATRIX_OK);
    ASSERT_EQ(f.nnz, m.nnz);
    for (int64_t i = 0; i <= m.rows; ++i)
      EXPECT_EQ(f.offs[i], m.offs[i]);
    EXPECT_EQ(to_vector(f.cols_idx, f.nnz), to_vector(m.cols_idx, m.nnz));
    EXPECT_EQ(to_vector(f.vals, f.nnz), rounded(m.vals, m.nnz));
    if (random) {
      std::vector<float> xf(static_cast<size_t>(m.cols));
      spl_random_vector_f32(5, m.cols, xf.data());
      std::vector<float> y(static_cast<size_t>(m.rows), 0.0f);
      for (int64_t i = 0; i < m.rows; ++i)
        for (int32_t k = f.offs[i]; k < f.offs[i + 1]; ++k)
          y[i] += f.vals[k] * xf[f.cols_idx[k]];
      auto want = reference(m, random_x(m.cols, 5));
      EXPECT_LE(spl_rel_error(y.data(), want.data(), m.rows), 1e-4);
    }
    spl_csr_f32_free(&f);
  }
}

TEST(Convert, CooListsEntriesInRowOrder) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    SCOPED_TRACE(name);
    const spl_csr &m = matrix->m;
    spl_coo coo{};
    ASSERT_EQ(spl_csr_to_coo(&m, &coo), SPL_MATRIX_OK);
    ASSERT_EQ(coo.nnz, m.nnz);
    auto x = random_x(m.cols, 6);
    std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
    for (int64_t k = 0; k < coo.nnz; ++k) {
      if (k > 0)
        EXPECT_LE(coo.row_idx[k - 1], coo.row_idx[k]);
      y[coo.row_idx[k]] += coo.vals[k] * x[coo.col_idx[k]];
    }
    expect_close(y, reference(m, x));
    EXPECT_EQ(to_vector(coo.vals_f32, coo.nnz), rounded(coo.vals, coo.nnz));
    spl_coo_free(&coo);
  }
}

TEST(Convert, CscIsTheTranspose) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    SCOPED_TRACE(name);
    const spl_csr &m = matrix->m;
    spl_csc csc{};
    Csr t;
    ASSERT_EQ(spl_csr_to_csc(&m, &csc), SPL_MATRIX_OK);
    ASSERT_EQ(spl_csr_transpose(&m, &t.m), SPL_MATRIX_OK);
    expect_valid(t.m);
    ASSERT_EQ(t.m.rows, m.cols);
    ASSERT_EQ(t.m.cols, m.rows);
    ASSERT_EQ(csc.nnz, m.nnz);
    for (int64_t j = 0; j <= m.cols; ++j)
      EXPECT_EQ(csc.offs[j], t.m.offs[j]);
    EXPECT_EQ(to_vector(csc.row_idx, csc.nnz), to_vector(t.m.cols_idx, t.m.nnz));
    EXPECT_EQ(to_vector(csc.vals, csc.nnz), to_vector(t.m.vals, t.m.nnz));
    EXPECT_EQ(to_vector(csc.vals_f32, csc.nnz), rounded(csc.vals, csc.nnz));

    // A x from the columns.
    auto x = random_x(m.cols, 7);
    std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
    for (int64_t j = 0; j < m.cols; ++j)
      for (int32_t k = csc.offs[j]; k < csc.offs[j + 1]; ++k)
        y[csc.row_idx[k]] += csc.vals[k] * x[j];
    expect_close(y, reference(m, x));

    // A^T x three ways: the transposed reference, the transpose's reference, the dense form.
    auto xt = random_x(m.rows, 8);
    std::vector<double> yt(static_cast<size_t>(m.cols)), yt_dense(static_cast<size_t>(m.cols));
    spl_ref_spmv_transposed(&m, xt.data(), yt.data());
    expect_close(yt, reference(t.m, xt));
    std::unique_ptr<double, decltype(&free)> dense(spl_csr_to_dense(&m), free);
    for (int64_t j = 0; j < m.cols; ++j)
      for (int64_t i = 0; i < m.rows; ++i)
        yt_dense[j] += dense.get()[i * m.cols + j] * xt[i];
    expect_close(yt, yt_dense);
    spl_csc_free(&csc);
  }
}

TEST(Convert, EllPadsEveryRowToTheLongest) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    for (spl_ell_layout layout : {SPL_ELL_ROW_MAJOR, SPL_ELL_COL_MAJOR}) {
      SCOPED_TRACE(name + (layout == SPL_ELL_ROW_MAJOR ? " row-major" : " column-major"));
      const spl_csr &m = matrix->m;
      spl_ell ell{};
      ASSERT_EQ(spl_csr_to_ell(&m, layout, &ell), SPL_MATRIX_OK);
      ASSERT_EQ(ell.width, longest_row(m));
      auto slot = [&](int64_t i, int64_t s) {
        return layout == SPL_ELL_ROW_MAJOR ? i * ell.width + s : s * ell.rows + i;
      };
      auto x = random_x(m.cols, 9);
      std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
      for (int64_t i = 0; i < m.rows; ++i) {
        int64_t length = m.offs[i + 1] - m.offs[i];
        for (int64_t s = 0; s < ell.width; ++s) {
          int64_t at = slot(i, s);
          if (s >= length) {
            EXPECT_EQ(ell.vals[at], 0.0);
            EXPECT_EQ(ell.cols_idx[at], 0);
          } else {
            EXPECT_EQ(ell.cols_idx[at], m.cols_idx[m.offs[i] + s]);
          }
          y[i] += ell.vals[at] * x[ell.cols_idx[at]];
        }
      }
      expect_close(y, reference(m, x));
      EXPECT_EQ(to_vector(ell.vals_f32, m.rows * ell.width), rounded(ell.vals, m.rows * ell.width));
      spl_ell_free(&ell);
    }
  }
}

TEST(Convert, SellSortsWindowsAndPadsEachSliceToItsLongestRow) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    const spl_csr &m = matrix->m;
    for (int64_t lanes : {1, 4, 8}) {
      for (int64_t sigma : {int64_t{1}, lanes + 3, int64_t{64}, std::max<int64_t>(m.rows, 1)}) {
        SCOPED_TRACE(name + " lanes " + std::to_string(lanes) + " sigma " + std::to_string(sigma));
        spl_sell s{};
        ASSERT_EQ(spl_csr_to_sell(&m, lanes, sigma, &s), SPL_MATRIX_OK);
        ASSERT_EQ(s.slices, (m.rows + lanes - 1) / lanes);
        ASSERT_EQ(s.soffs[0], 0);
        auto len = [&](int64_t row) { return m.offs[row + 1] - m.offs[row]; };
        // perm: every row once, each window's rows longest first (ties in row order), -1 after.
        std::vector<int> seen(static_cast<size_t>(m.rows), 0);
        for (int64_t r = 0; r < s.slices * lanes; ++r) {
          int32_t row = s.perm[r];
          if (r >= m.rows) {
            EXPECT_EQ(row, -1);
            continue;
          }
          ASSERT_GE(row, 0);
          ASSERT_LT(row, m.rows);
          ++seen[static_cast<size_t>(row)];
          EXPECT_EQ(s.pos[row], r);
          EXPECT_EQ(row / sigma, r / sigma) << "a row left its window";
          if (sigma == 1) EXPECT_EQ(row, r);
          if (r % sigma != 0) {
            int32_t prev = s.perm[r - 1];
            EXPECT_TRUE(len(prev) > len(row) || (len(prev) == len(row) && prev < row));
          }
        }
        EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), m.rows);
        // wpos: a row's lane counted from its window's first lane, when windows are whole slices.
        if (sigma % lanes == 0) {
          ASSERT_NE(s.wpos, nullptr);
          for (int64_t r = 0; r < s.slices * lanes; ++r)
            EXPECT_EQ(s.wpos[r], r < m.rows ? s.pos[r] - (r / sigma) * sigma : r % sigma) << r;
        } else {
          EXPECT_EQ(s.wpos, nullptr);
        }
        // Each slice is as wide as its longest row; its rows fill their first slots in column
        // order, padding is value 0 and column 0; A x through the slots is the reference.
        auto x = random_x(m.cols, 11);
        std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
        for (int64_t sl = 0; sl < s.slices; ++sl) {
          int64_t width = s.soffs[sl + 1] - s.soffs[sl], longest = 0;
          for (int64_t l = 0; l < lanes; ++l) {
            int32_t row = s.perm[sl * lanes + l];
            if (row < 0) continue;
            longest = std::max<int64_t>(longest, len(row));
            for (int64_t t = 0; t < width; ++t) {
              int64_t at = (s.soffs[sl] + t) * lanes + l;
              if (t >= len(row)) {
                EXPECT_EQ(s.vals[at], 0.0);
                EXPECT_EQ(s.cols_idx[at], 0);
              } else {
                EXPECT_EQ(s.cols_idx[at], m.cols_idx[m.offs[row] + t]);
              }
              y[static_cast<size_t>(row)] += s.vals[at] * x[static_cast<size_t>(s.cols_idx[at])];
            }
          }
          EXPECT_EQ(width, longest);
        }
        expect_close(y, reference(m, x));
        int64_t stored = s.soffs[s.slices] * lanes;
        EXPECT_EQ(to_vector(s.vals_f32, stored), rounded(s.vals, stored));
        // spl_sell_unpermute puts lane r's value at row perm[r].
        std::vector<double> ys(static_cast<size_t>(s.slices * lanes)), back(static_cast<size_t>(m.rows), -1.0);
        for (size_t r = 0; r < ys.size(); ++r) ys[r] = static_cast<double>(r);
        spl_sell_unpermute(&s, ys.data(), back.data());
        for (int64_t r = 0; r < m.rows; ++r) EXPECT_EQ(back[static_cast<size_t>(s.perm[r])], static_cast<double>(r));
        spl_sell_free(&s);
      }
    }
  }
}

TEST(Convert, DiaStoresOneRowPerOccupiedDiagonal) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    SCOPED_TRACE(name);
    const spl_csr &m = matrix->m;
    spl_dia dia{};
    ASSERT_EQ(spl_csr_to_dia(&m, &dia), SPL_MATRIX_OK);
    std::set<int64_t> occupied;
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t k = m.offs[i]; k < m.offs[i + 1]; ++k)
        occupied.insert(m.cols_idx[k] - i);
    ASSERT_EQ(dia.ndiags, static_cast<int64_t>(occupied.size()));
    EXPECT_EQ(to_vector(dia.offsets, dia.ndiags),
              std::vector<int32_t>(occupied.begin(), occupied.end())); // increasing

    auto x = random_x(m.cols, 10);
    std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t d = 0; d < dia.ndiags; ++d) {
        int64_t j = i + dia.offsets[d];
        double a = dia.data[d * m.rows + i];
        if (j < 0 || j >= m.cols) {
          EXPECT_EQ(a, 0.0);
          continue;
        }
        EXPECT_EQ(a, entry(m, i, j));
        y[i] += a * x[j];
      }
    expect_close(y, reference(m, x));
    EXPECT_EQ(to_vector(dia.data_f32, dia.ndiags * m.rows), rounded(dia.data, dia.ndiags * m.rows));
    spl_dia_free(&dia);
  }
}

TEST(Convert, BcsrBlocksCoverThePaddedMatrix) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    for (int64_t b : {1, 2, 3, 4, 7}) {
      SCOPED_TRACE(name + " block " + std::to_string(b));
      const spl_csr &m = matrix->m;
      spl_bcsr bcsr{};
      ASSERT_EQ(spl_csr_to_bcsr(&m, b, &bcsr), SPL_MATRIX_OK);
      EXPECT_EQ(bcsr.block_rows, (m.rows + b - 1) / b);
      EXPECT_EQ(bcsr.block_cols, (m.cols + b - 1) / b);
      std::set<std::pair<int64_t, int64_t>> occupied;
      for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t k = m.offs[i]; k < m.offs[i + 1]; ++k)
          occupied.insert({i / b, m.cols_idx[k] / b});
      ASSERT_EQ(bcsr.nblocks, static_cast<int64_t>(occupied.size()));
      EXPECT_EQ(bcsr.offs[0], 0);
      EXPECT_EQ(bcsr.offs[bcsr.block_rows], bcsr.nblocks);

      // Padded x (zeros past cols) and padded y, as spl_spmv_bcsr sees them.
      auto x = random_x(m.cols, 11);
      std::vector<double> x_padded(static_cast<size_t>(bcsr.block_cols * b), 0.0);
      std::copy(x.begin(), x.end(), x_padded.begin());
      std::vector<double> y_padded(static_cast<size_t>(bcsr.block_rows * b), 0.0);
      for (int64_t I = 0; I < bcsr.block_rows; ++I)
        for (int32_t t = bcsr.offs[I]; t < bcsr.offs[I + 1]; ++t) {
          int64_t J = bcsr.block_cols_idx[t];
          if (t > bcsr.offs[I])
            EXPECT_LT(bcsr.block_cols_idx[t - 1], J);
          EXPECT_TRUE(occupied.count({I, J}));
          for (int64_t r = 0; r < b; ++r)
            for (int64_t c = 0; c < b; ++c) {
              double a = bcsr.blocks[t * b * b + r * b + c];
              int64_t i = I * b + r, j = J * b + c;
              EXPECT_EQ(a, i < m.rows && j < m.cols ? entry(m, i, j) : 0.0);
              y_padded[i] += a * x_padded[j];
            }
        }
      std::vector<double> y(y_padded.begin(), y_padded.begin() + m.rows);
      expect_close(y, reference(m, x));
      for (size_t i = static_cast<size_t>(m.rows); i < y_padded.size(); ++i)
        EXPECT_EQ(y_padded[i], 0.0);
      int64_t values = bcsr.nblocks * b * b;
      EXPECT_EQ(to_vector(bcsr.blocks_f32, values), rounded(bcsr.blocks, values));
      spl_bcsr_free(&bcsr);
    }
  }
}

TEST(Convert, LilRowsBackToBack) {
  for (const auto &[name, matrix, random] : test_matrices()) {
    SCOPED_TRACE(name);
    const spl_csr &m = matrix->m;
    spl_lil lil{};
    ASSERT_EQ(spl_csr_to_lil(&m, &lil), SPL_MATRIX_OK);
    auto x = random_x(m.cols, 12);
    std::vector<double> y(static_cast<size_t>(m.rows), 0.0);
    int64_t start = 0; // the running sum of lens: the Sigma precomputation a kernel does
    for (int64_t i = 0; i < m.rows; ++i) {
      EXPECT_EQ(lil.lens[i], m.offs[i + 1] - m.offs[i]);
      for (int64_t k = start; k < start + lil.lens[i]; ++k)
        y[i] += lil.vals[k] * x[lil.cols_idx[k]];
      start += lil.lens[i];
    }
    EXPECT_EQ(start, m.nnz);
    expect_close(y, reference(m, x));
    EXPECT_EQ(to_vector(lil.vals_f32, lil.nnz), rounded(lil.vals, lil.nnz));
    spl_lil_free(&lil);
  }
}

TEST(Convert, InvalidInputsAreRejected) {
  Csr good;
  ASSERT_EQ(spl_random_csr(6, 6, 0.5, 1, SPL_RANDOM_UNIFORM, &good.m), SPL_MATRIX_OK);
  spl_csr broken = good.m;
  int64_t bad_offs[7] = {0, 3, 2, 4, 5, 6, 7};
  broken.offs = bad_offs;
  char message[128] = "";
  EXPECT_EQ(spl_csr_check(&broken, message, sizeof message), SPL_MATRIX_EINVAL);
  EXPECT_NE(std::string(message).find("row"), std::string::npos) << message;

  spl_ell ell{};
  spl_bcsr bcsr{};
  spl_dia dia{};
  spl_coo coo{};
  EXPECT_EQ(spl_csr_to_ell(&broken, SPL_ELL_ROW_MAJOR, &ell), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_csr_to_ell(&good.m, static_cast<spl_ell_layout>(5), &ell), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_csr_to_bcsr(&good.m, 0, &bcsr), SPL_MATRIX_EINVAL);
  spl_sell sell{};
  EXPECT_EQ(spl_csr_to_sell(&broken, 8, 8, &sell), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_csr_to_sell(&good.m, 0, 8, &sell), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_csr_to_sell(&good.m, 8, 0, &sell), SPL_MATRIX_EINVAL);
  EXPECT_EQ(sell.perm, nullptr);
  EXPECT_EQ(spl_csr_to_dia(nullptr, &dia), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_csr_to_coo(&good.m, nullptr), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_csr_to_dense(&broken), nullptr);
  EXPECT_EQ(ell.vals, nullptr);
  spl_bcsr_free(&bcsr); // freeing zeroed objects is allowed
  spl_dia_free(&dia);
}

TEST(Construct, FromCooSortsAndSumsDuplicates) {
  const int32_t rows[] = {1, 0, 1, 0, 1};
  const int32_t cols[] = {2, 1, 0, 1, 2};
  const double vals[] = {1.0, 2.0, 3.0, 4.0, 0.5};
  Csr a;
  ASSERT_EQ(spl_csr_from_coo(2, 3, 5, rows, cols, vals, &a.m), SPL_MATRIX_OK);
  expect_valid(a.m);
  EXPECT_EQ(a.m.nnz, 3);
  EXPECT_EQ(entry(a.m, 0, 1), 6.0);
  EXPECT_EQ(entry(a.m, 1, 0), 3.0);
  EXPECT_EQ(entry(a.m, 1, 2), 1.5);
  const int32_t bad_rows[] = {2};
  Csr b;
  EXPECT_EQ(spl_csr_from_coo(2, 3, 1, bad_rows, cols, vals, &b.m), SPL_MATRIX_EINVAL);
}

TEST(Construct, FromDenseInvertsToDense) {
  Csr a, back;
  ASSERT_EQ(spl_random_csr(23, 31, 0.2, 4, SPL_RANDOM_SKEWED, &a.m), SPL_MATRIX_OK);
  std::unique_ptr<double, decltype(&free)> dense(spl_csr_to_dense(&a.m), free);
  ASSERT_EQ(spl_csr_from_dense(23, 31, dense.get(), &back.m), SPL_MATRIX_OK);
  expect_valid(back.m);
  ASSERT_EQ(back.m.nnz, a.m.nnz); // random values are never exactly 0
  EXPECT_EQ(to_vector(back.m.cols_idx, back.m.nnz), to_vector(a.m.cols_idx, a.m.nnz));
  EXPECT_EQ(to_vector(back.m.vals, back.m.nnz), to_vector(a.m.vals, a.m.nnz));
}

TEST(Reference, SpmvOnAHandMadeMatrix) {
  // A = [[1, 0, 2], [0, 3, 0]]
  const int32_t rows[] = {0, 0, 1};
  const int32_t cols[] = {0, 2, 1};
  const double vals[] = {1.0, 2.0, 3.0};
  Csr a;
  ASSERT_EQ(spl_csr_from_coo(2, 3, 3, rows, cols, vals, &a.m), SPL_MATRIX_OK);
  const double x[] = {1.0, 2.0, 3.0};
  double y[2];
  spl_ref_spmv(&a.m, x, y);
  EXPECT_EQ(y[0], 7.0);
  EXPECT_EQ(y[1], 6.0);
  const double xt[] = {1.0, 2.0};
  double yt[3];
  spl_ref_spmv_transposed(&a.m, xt, yt);
  EXPECT_EQ(yt[0], 1.0);
  EXPECT_EQ(yt[1], 6.0);
  EXPECT_EQ(yt[2], 2.0);
}

TEST(Reference, RelativeErrorDefinition) {
  // max |got - want| / max(1, max |want|)
  const double small_want[] = {0.5, -0.25};
  const float small_got[] = {0.5f, -0.5f};
  EXPECT_DOUBLE_EQ(spl_rel_error(small_got, small_want, 2), 0.25); // denominator 1
  const double big_want[] = {100.0, -200.0};
  const float big_got[] = {101.0f, -200.0f};
  EXPECT_DOUBLE_EQ(spl_rel_error(big_got, big_want, 2), 1.0 / 200.0);
  const double big_got_f64[] = {100.0, -202.0};
  EXPECT_DOUBLE_EQ(spl_rel_error_f64(big_got_f64, big_want, 2), 2.0 / 200.0);
  EXPECT_EQ(spl_rel_error(nullptr, nullptr, 0), 0.0);

  const float nan_got[] = {0.5f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_TRUE(std::isinf(spl_rel_error(nan_got, small_want, 2)));
  const float inf_got[] = {std::numeric_limits<float>::infinity(), 0.0f};
  EXPECT_TRUE(std::isinf(spl_rel_error(inf_got, small_want, 2)));
  const double nan_want[] = {std::numeric_limits<double>::quiet_NaN(), 0.0};
  EXPECT_TRUE(std::isinf(spl_rel_error_f64(small_want, nan_want, 2)));
}
