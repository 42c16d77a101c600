// random_test.cpp: the seeded generator. It must be the documented splitmix64, give the same
// matrix for the same seed on every machine (pinned here by a fingerprint), and give each kind
// the shape it promises: empty rows, a few dense rows, degenerate 1 x N / N x 1 / nnz = 0.
#include "matrix_test_support.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace spl_matrix_test;

namespace {

std::vector<int64_t> row_lengths(const spl_csr &m) {
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < m.rows; ++i)
    lengths.push_back(m.offs[i + 1] - m.offs[i]);
  return lengths;
}

// FNV-1a over the integer images of the arrays, so the fingerprint does not depend on byte
// order: it pins the generator's exact output across machines and compilers.
uint64_t fingerprint(const spl_csr &m) {
  uint64_t hash = 0xcbf29ce484222325u;
  auto mix = [&](uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (value >> (8 * byte)) & 0xff;
      hash *= 0x100000001b3u;
    }
  };
  mix(static_cast<uint64_t>(m.rows));
  mix(static_cast<uint64_t>(m.cols));
  for (int64_t i = 0; i <= m.rows; ++i)
    mix(static_cast<uint64_t>(m.offs[i]));
  for (int64_t k = 0; k < m.nnz; ++k) {
    uint64_t bits;
    std::memcpy(&bits, &m.vals[k], sizeof bits);
    mix(static_cast<uint64_t>(m.cols_idx[k]));
    mix(bits);
  }
  return hash;
}

bool same_matrix(const spl_csr &a, const spl_csr &b) {
  if (a.rows != b.rows || a.cols != b.cols || a.nnz != b.nnz)
    return false;
  return std::equal(a.offs, a.offs + a.rows + 1, b.offs) &&
         std::equal(a.cols_idx, a.cols_idx + a.nnz, b.cols_idx) &&
         std::equal(a.vals, a.vals + a.nnz, b.vals);
}

void expect_values_in_range(const spl_csr &m) {
  for (int64_t k = 0; k < m.nnz; ++k) {
    EXPECT_GE(m.vals[k], -1.0);
    EXPECT_LT(m.vals[k], 1.0);
  }
}

} // namespace

TEST(Splitmix64, MatchesPublishedSequence) {
  // The reference outputs of splitmix64 seeded with 1234567 (as in Vigna's splitmix64.c and the
  // test vectors quoted with it).
  uint64_t state = 1234567;
  const uint64_t expected[] = {6457827717110365317u, 3203168211198807973u, 9817491932198370423u,
                               4593380528125082431u, 16408922859458223821u};
  for (uint64_t want : expected)
    EXPECT_EQ(spl_splitmix64_next(&state), want);
}

TEST(RandomCsr, SameSeedSameMatrixDifferentSeedDifferent) {
  for (int kind = 0; kind < 3; ++kind) {
    auto k = static_cast<spl_random_kind>(kind);
    Csr a, b, c;
    ASSERT_EQ(spl_random_csr(120, 90, 0.05, 42, k, &a.m), SPL_MATRIX_OK);
    ASSERT_EQ(spl_random_csr(120, 90, 0.05, 42, k, &b.m), SPL_MATRIX_OK);
    ASSERT_EQ(spl_random_csr(120, 90, 0.05, 43, k, &c.m), SPL_MATRIX_OK);
    expect_valid(a.m);
    expect_valid(c.m);
    EXPECT_TRUE(same_matrix(a.m, b.m)) << "kind " << kind;
    EXPECT_FALSE(same_matrix(a.m, c.m)) << "kind " << kind;
    expect_values_in_range(a.m);
  }
}

TEST(RandomCsr, FingerprintsArePinned) {
  // If these change, every recorded benchmark input and golden result changes with them:
  // update only on purpose.
  struct Pinned {
    spl_random_kind kind;
    uint64_t fingerprint;
  };
  const Pinned pinned[] = {{SPL_RANDOM_UNIFORM, 0x9b6cac898fd27512u},
                           {SPL_RANDOM_EMPTY_ROWS, 0x8f02a88976a03a34u},
                           {SPL_RANDOM_SKEWED, 0x0c0c4ecd04df0753u}};
  for (const Pinned &p : pinned) {
    Csr a;
    ASSERT_EQ(spl_random_csr(64, 48, 0.1, 20240601, p.kind, &a.m), SPL_MATRIX_OK);
    EXPECT_EQ(fingerprint(a.m), p.fingerprint)
        << "kind " << p.kind << ": 0x" << std::hex << fingerprint(a.m);
  }
}

TEST(RandomCsr, UniformDensityIsRoughlyRight) {
  Csr a;
  ASSERT_EQ(spl_random_csr(400, 500, 0.05, 5, SPL_RANDOM_UNIFORM, &a.m), SPL_MATRIX_OK);
  expect_valid(a.m);
  double density = static_cast<double>(a.m.nnz) / (400.0 * 500.0);
  EXPECT_GT(density, 0.045);
  EXPECT_LT(density, 0.055);
  auto lengths = row_lengths(a.m);
  // Lengths vary uniformly in [0, 2 * 25].
  EXPECT_LE(*std::max_element(lengths.begin(), lengths.end()), 50);
  EXPECT_GT(*std::max_element(lengths.begin(), lengths.end()), 40);
  EXPECT_LT(*std::min_element(lengths.begin(), lengths.end()), 10);
}

TEST(RandomCsr, FullDensityIsDense) {
  Csr a;
  ASSERT_EQ(spl_random_csr(7, 9, 1.0, 3, SPL_RANDOM_UNIFORM, &a.m), SPL_MATRIX_OK);
  EXPECT_EQ(a.m.nnz, 63);
  expect_valid(a.m);
}

TEST(RandomCsr, EmptyRowsKindHasExactlyAQuarterEmpty) {
  Csr a;
  ASSERT_EQ(spl_random_csr(200, 50, 0.02, 11, SPL_RANDOM_EMPTY_ROWS, &a.m), SPL_MATRIX_OK);
  expect_valid(a.m);
  auto lengths = row_lengths(a.m);
  // Exactly the chosen quarter: every other row got at least one entry.
  EXPECT_EQ(std::count(lengths.begin(), lengths.end(), 0), 50);
  // A single row is that quarter (rounded up to one row).
  Csr one;
  ASSERT_EQ(spl_random_csr(1, 10, 0.5, 11, SPL_RANDOM_EMPTY_ROWS, &one.m), SPL_MATRIX_OK);
  EXPECT_EQ(one.m.nnz, 0);
}

TEST(RandomCsr, SkewedKindHasFewDenseRows) {
  Csr a;
  ASSERT_EQ(spl_random_csr(320, 1000, 0.005, 17, SPL_RANDOM_SKEWED, &a.m), SPL_MATRIX_OK);
  expect_valid(a.m);
  auto lengths = row_lengths(a.m);
  int64_t dense_rows =
      std::count_if(lengths.begin(), lengths.end(), [](int64_t n) { return n >= 500; });
  EXPECT_EQ(dense_rows, 10); // 320 / 32
  std::vector<int64_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LE(sorted[sorted.size() / 2], 10); // the median row is short (mean 5)
  EXPECT_GE(sorted.back(), 500);
  expect_values_in_range(a.m);
}

TEST(RandomCsr, DegenerateShapes) {
  Csr row, column, none, no_rows, no_cols;
  ASSERT_EQ(spl_random_csr(1, 1000, 0.3, 1, SPL_RANDOM_UNIFORM, &row.m), SPL_MATRIX_OK);
  EXPECT_EQ(row.m.rows, 1);
  EXPECT_EQ(row.m.cols, 1000);
  EXPECT_GT(row.m.nnz, 0);
  expect_valid(row.m);

  ASSERT_EQ(spl_random_csr(1000, 1, 0.5, 1, SPL_RANDOM_SKEWED, &column.m), SPL_MATRIX_OK);
  EXPECT_EQ(column.m.rows, 1000);
  EXPECT_EQ(column.m.cols, 1);
  EXPECT_GT(column.m.nnz, 0);
  EXPECT_LE(column.m.nnz, 1000);
  expect_valid(column.m);

  ASSERT_EQ(spl_random_csr(50, 60, 0.0, 1, SPL_RANDOM_UNIFORM, &none.m), SPL_MATRIX_OK);
  EXPECT_EQ(none.m.nnz, 0);
  expect_valid(none.m);

  ASSERT_EQ(spl_random_csr(0, 60, 0.5, 1, SPL_RANDOM_SKEWED, &no_rows.m), SPL_MATRIX_OK);
  EXPECT_EQ(no_rows.m.nnz, 0);
  expect_valid(no_rows.m);

  ASSERT_EQ(spl_random_csr(60, 0, 0.5, 1, SPL_RANDOM_EMPTY_ROWS, &no_cols.m), SPL_MATRIX_OK);
  EXPECT_EQ(no_cols.m.nnz, 0);
  expect_valid(no_cols.m);
}

TEST(RandomCsr, InvalidArgumentsAreRejected) {
  spl_csr a{};
  EXPECT_EQ(spl_random_csr(-1, 5, 0.5, 1, SPL_RANDOM_UNIFORM, &a), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_random_csr(5, -1, 0.5, 1, SPL_RANDOM_UNIFORM, &a), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_random_csr(5, 5, -0.1, 1, SPL_RANDOM_UNIFORM, &a), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_random_csr(5, 5, 1.5, 1, SPL_RANDOM_UNIFORM, &a), SPL_MATRIX_EINVAL);
  EXPECT_EQ(
      spl_random_csr(5, 5, std::numeric_limits<double>::quiet_NaN(), 1, SPL_RANDOM_UNIFORM, &a),
      SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_random_csr(5, 5, 0.5, 1, static_cast<spl_random_kind>(7), &a), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_random_csr(int64_t{1} << 40, 5, 0.5, 1, SPL_RANDOM_UNIFORM, &a), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_random_csr(5, 5, 0.5, 1, SPL_RANDOM_UNIFORM, nullptr), SPL_MATRIX_EINVAL);
  EXPECT_EQ(a.offs, nullptr);
}

TEST(RandomVector, DeterministicInRangeAndFloatIsRounded) {
  std::vector<double> a(257), b(257), c(257);
  std::vector<float> f(257);
  spl_random_vector(9, 257, a.data());
  spl_random_vector(9, 257, b.data());
  spl_random_vector(10, 257, c.data());
  spl_random_vector_f32(9, 257, f.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a[i], -1.0);
    EXPECT_LT(a[i], 1.0);
    EXPECT_EQ(f[i], static_cast<float>(a[i]));
  }
}
