// Tests of spl-matgen (tools/matgen): determinism (same seed, same matrix and same file), and
// the structural properties each kind promises (stencil entry counts by formula, bandwidth,
// block fill, power-law skew, symmetry, adversarial shapes).
#include "matgen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using splmatgen::Kind;
using splmatgen::Options;

struct Csr {
  spl_csr m{};
  Csr() = default;
  Csr(const Csr &) = delete;
  Csr &operator=(const Csr &) = delete;
  ~Csr() { spl_csr_free(&m); }
};

void gen(const Options &o, Csr &out) {
  std::string err;
  ASSERT_TRUE(splmatgen::generate(o, &out.m, &err)) << err;
  char msg[256];
  ASSERT_EQ(spl_csr_check(&out.m, msg, sizeof msg), SPL_MATRIX_OK) << msg;
}

Options opts(Kind k, int64_t rows, double degree, uint64_t seed = 1) {
  Options o;
  o.kind = k;
  o.rows = rows;
  o.degree = degree;
  o.seed = seed;
  return o;
}

Options varied(int64_t rows, int64_t lo, int64_t hi, splmatgen::RowDist dist, uint64_t seed = 1) {
  Options o;
  o.kind = Kind::VariedRows;
  o.rows = rows;
  o.minRowLength = lo;
  o.maxRowLength = hi;
  o.rowDist = dist;
  o.seed = seed;
  return o;
}

bool sameMatrix(const spl_csr &a, const spl_csr &b) {
  return a.rows == b.rows && a.cols == b.cols && a.nnz == b.nnz &&
         std::equal(a.offs, a.offs + a.rows + 1, b.offs) &&
         std::equal(a.cols_idx, a.cols_idx + a.nnz, b.cols_idx) && std::equal(a.vals, a.vals + a.nnz, b.vals);
}

bool hasEntry(const spl_csr &m, int64_t i, int64_t j) {
  return std::binary_search(m.cols_idx + m.offs[i], m.cols_idx + m.offs[i + 1], static_cast<int32_t>(j));
}

bool isSymmetricPattern(const spl_csr &m) {
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t p = m.offs[i]; p < m.offs[i + 1]; ++p)
      if (!hasEntry(m, m.cols_idx[p], i))
        return false;
  return true;
}

std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/matgen_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" + name;
}

// ---- Determinism -----------------------------------------------------------------------------

TEST(MatgenDeterminism, SameSeedSameMatrixForEveryKind) {
  std::vector<Options> all = {
      opts(Kind::Uniform, 500, 7),     opts(Kind::Banded, 500, 9),   opts(Kind::Blocks, 500, 24),
      opts(Kind::RMat, 1024, 8),       opts(Kind::BarabasiAlbert, 800, 3),
      opts(Kind::DenseRow, 300, 4),    opts(Kind::EmptyRows, 300, 4), opts(Kind::Stencil3D27, 343, -1),
      varied(400, 0, 30, splmatgen::RowDist::PowerLaw),
  };
  for (const Options &o : all) {
    Csr a, b, c;
    gen(o, a);
    gen(o, b);
    EXPECT_TRUE(sameMatrix(a.m, b.m)) << splmatgen::kindName(o.kind);
    if (o.kind == Kind::Stencil3D27)
      continue; // no randomness in the stencil's structure or its Laplacian values
    Options other = o;
    other.seed = o.seed + 1;
    gen(other, c);
    EXPECT_FALSE(sameMatrix(a.m, c.m)) << splmatgen::kindName(o.kind) << ": another seed gave the same matrix";
  }
}

TEST(MatgenDeterminism, SameSeedSameFileThroughTheCli) {
  std::string exe = SPL_MATGEN_EXE;
  std::string f1 = tempPath("a.mtx"), f2 = tempPath("b.mtx"), f3 = tempPath("c.mtx");
  std::string args = " rmat --rows 4096 --degree 8 --symmetric --permute --seed ";
  ASSERT_EQ(std::system((exe + args + "42 -o " + f1).c_str()), 0);
  ASSERT_EQ(std::system((exe + args + "42 -o " + f2).c_str()), 0);
  ASSERT_EQ(std::system((exe + args + "43 -o " + f3).c_str()), 0);
  std::string a = slurp(f1), b = slurp(f2), c = slurp(f3);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // The file reads back as the matrix generated in memory.
  spl_csr read{};
  char err[256];
  ASSERT_EQ(spl_read_matrix(f1.c_str(), &read, err, sizeof err), SPL_MATRIX_OK) << err;
  Options o = opts(Kind::RMat, 4096, 8, 42);
  o.symmetric = o.permute = true;
  Csr mem;
  gen(o, mem);
  EXPECT_TRUE(sameMatrix(read, mem.m));
  spl_csr_free(&read);
  std::remove(f1.c_str());
  std::remove(f2.c_str());
  std::remove(f3.c_str());
}

TEST(MatgenCli, HelpAndBadArguments) {
  std::string exe = SPL_MATGEN_EXE;
  EXPECT_EQ(std::system((exe + " --help > /dev/null").c_str()), 0);
  EXPECT_NE(std::system((exe + " nosuchkind -o /dev/null 2> /dev/null").c_str()), 0);
  EXPECT_NE(std::system((exe + " uniform --rows 10 2> /dev/null").c_str()), 0); // no output, no size
  EXPECT_EQ(std::system((exe + " --version | grep -q '^spl-matgen (SPL) '").c_str()), 0);
  // A negative size is a bad value of its option (it was "uniform needs --rows").
  EXPECT_EQ(std::system((exe + " uniform --rows -5 --degree 2 -o /dev/null 2>&1 | grep -q \"bad value '-5' for --rows\"").c_str()), 0);
  // -o - is standard output, not a file named "-".
  std::string dir = tempPath("stdout_dir");
  std::string cmd = "mkdir -p " + dir + " && cd " + dir + " && " + exe +
                    " uniform --rows 5 --degree 1 -o - | head -1 | grep -q '^%%MatrixMarket' && test ! -e -";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

// The varied kind from the command line: its options, and their bad values refused by name.
TEST(MatgenCli, VariedRowsFromTheCommandLine) {
  std::string exe = SPL_MATGEN_EXE;
  EXPECT_EQ(std::system((exe + " varied --rows 3000 --row-lengths 1:48 --row-dist powerlaw --exponent 1 --offband 0.1"
                               " --stats-only | grep -q '^row_length_max: 48$'")
                            .c_str()),
            0);
  EXPECT_EQ(std::system((exe + " varied --rows 10 --row-lengths 5:2 -o /dev/null 2>&1 | grep -q \"bad value '5:2' for --row-lengths\"").c_str()), 0);
  EXPECT_EQ(std::system((exe + " varied --rows 10 --row-lengths 1:2 --exponent 4 -o /dev/null 2>&1 | grep -q \"bad value '4' for --exponent\"").c_str()), 0);
  EXPECT_EQ(std::system((exe + " varied --rows 10 --row-lengths 1:2 --row-dist zipf -o /dev/null 2>&1 | grep -q \"bad value 'zipf' for --row-dist\"").c_str()), 0);
  EXPECT_EQ(std::system((exe + " varied --rows 10 -o /dev/null 2>&1 | grep -q 'varied needs --row-lengths MIN:MAX'").c_str()), 0);
}

// A long generation shows its progress on stderr when asked (by default when stderr is a
// terminal; a redirected run stays quiet): the share of entries placed, then the writing.
TEST(MatgenCli, ProgressOnRequest) {
  std::string exe = SPL_MATGEN_EXE, err = tempPath("progress.err"), out = tempPath("progress.mtx");
  ASSERT_EQ(std::system((exe + " rmat --rows 4096 --degree 160 --progress -o " + out + " 2> " + err).c_str()), 0);
  std::ifstream in(err);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("spl-matgen: rmat: drawing entries "), std::string::npos) << text;
  EXPECT_NE(text.find("drawing entries 100%"), std::string::npos) << text;
  EXPECT_NE(text.find("writing 655360 entries"), std::string::npos) << text;
  EXPECT_NE(text.find("done"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n') << "the progress line is finished";
  // Some step before the end: the progress moves.
  size_t first = text.find("drawing entries "), full = text.find("drawing entries 100%");
  EXPECT_LT(first, full) << text;
  ASSERT_EQ(std::system((exe + " rmat --rows 4096 --degree 160 -o " + out + " 2> " + err).c_str()), 0);
  std::ifstream quiet(err);
  EXPECT_EQ(quiet.peek(), std::ifstream::traits_type::eof()) << "no progress into a file unless asked";
  std::remove(err.c_str());
  std::remove(out.c_str());
}

// ---- Uniform and banded ----------------------------------------------------------------------

TEST(MatgenUniform, ExactNnzFromDegreeDensityAndNnz) {
  Csr a, b, c;
  gen(opts(Kind::Uniform, 2000, 12.5), a);
  EXPECT_EQ(a.m.nnz, 25000);
  Options o = opts(Kind::Uniform, 300, -1);
  o.cols = 700;
  o.density = 0.75; // dense-ish path
  gen(o, b);
  EXPECT_EQ(b.m.nnz, 157500);
  EXPECT_EQ(b.m.cols, 700);
  Options n = opts(Kind::Uniform, 100, -1);
  n.nnz = 10000; // every position
  gen(n, c);
  EXPECT_EQ(c.m.nnz, 10000);
}

TEST(MatgenUniform, ImpossibleTargetFails) {
  Options o = opts(Kind::Uniform, 10, -1);
  o.nnz = 101;
  spl_csr m{};
  std::string err;
  EXPECT_FALSE(splmatgen::generate(o, &m, &err));
  EXPECT_NE(err.find("exceeds"), std::string::npos) << err;
}

TEST(MatgenBanded, BandwidthDiagonalAndNnz) {
  Options o = opts(Kind::Banded, 5000, 9);
  o.bandwidth = 25;
  Csr a;
  gen(o, a);
  splmatgen::Stats s = splmatgen::stats(a.m);
  EXPECT_EQ(s.nnz, 45000);
  EXPECT_LE(s.bandwidth, 25);
  EXPECT_LE(s.diagonals, 51);
  for (int64_t i = 0; i < a.m.rows; ++i)
    ASSERT_TRUE(hasEntry(a.m, i, i)) << "row " << i << " lacks its diagonal";
  // A band that cannot hold the target is refused.
  o.bandwidth = 3;
  spl_csr m{};
  std::string err;
  EXPECT_FALSE(splmatgen::generate(o, &m, &err));
}

TEST(MatgenBanded, OffbandFractionReachesFarColumns) {
  Options o = opts(Kind::Banded, 20000, 6);
  o.bandwidth = 10;
  o.offband = 0.2;
  Csr a;
  gen(o, a);
  int64_t far = 0;
  for (int64_t i = 0; i < a.m.rows; ++i)
    for (int64_t p = a.m.offs[i]; p < a.m.offs[i + 1]; ++p)
      far += std::llabs(a.m.cols_idx[p] - i) > 10;
  double frac = static_cast<double>(far) / static_cast<double>(a.m.nnz);
  // 20% of the 100000 drawn (non-diagonal) entries, almost all of them far from the band.
  EXPECT_GT(frac, 0.10);
  EXPECT_LT(frac, 0.25);
}

// ---- Varied row lengths (issue 25's irregular classes) -----------------------------------------

TEST(MatgenVaried, UniformLengthsStayInTheirRangeAndBand) {
  Csr a, b, c;
  Options o = varied(20000, 2, 40, splmatgen::RowDist::Uniform);
  gen(o, a);
  gen(o, b);
  EXPECT_TRUE(sameMatrix(a.m, b.m));
  o.seed = 2;
  gen(o, c);
  EXPECT_FALSE(sameMatrix(a.m, c.m));
  splmatgen::Stats s = splmatgen::stats(a.m);
  EXPECT_EQ(s.minRow, 2);
  EXPECT_EQ(s.maxRow, 40);
  EXPECT_NEAR(s.avgRow, 21.0, 0.5);  // the mean of 2 .. 40
  EXPECT_LE(s.bandwidth, 40);         // the band defaults to the longest row
  // Every length in the range occurs (39 values over 20000 rows).
  std::set<int64_t> lengths;
  for (int64_t i = 0; i < a.m.rows; ++i) lengths.insert(a.m.offs[i + 1] - a.m.offs[i]);
  EXPECT_EQ(lengths.size(), 39u);
}

TEST(MatgenVaried, PowerLawMakesMostRowsShortWithALongTail) {
  Csr a;
  Options o = varied(50000, 1, 64, splmatgen::RowDist::PowerLaw);
  o.powerExponent = 2;
  gen(o, a);
  int64_t shortest = 0, longRows = 0;
  for (int64_t i = 0; i < a.m.rows; ++i) {
    int64_t len = a.m.offs[i + 1] - a.m.offs[i];
    ASSERT_GE(len, 1);
    ASSERT_LE(len, 64);
    shortest += len == 1;
    longRows += len >= 16;
  }
  // P(k = 1) = 1 / sum(1/k^2, k = 1..64), about 0.614; P(k >= 16) about 0.049 / 1.63 = 0.030.
  EXPECT_NEAR(static_cast<double>(shortest) / 50000, 0.61, 0.02);
  EXPECT_NEAR(static_cast<double>(longRows) / 50000, 0.030, 0.004);
  // A steeper exponent leaves fewer long rows.
  Csr b;
  o.powerExponent = 3;
  gen(o, b);
  EXPECT_LT(splmatgen::stats(b.m).avgRow, splmatgen::stats(a.m).avgRow);
}

TEST(MatgenVaried, OffbandShareLeavesTheBandAndRowsKeepTheirLengths) {
  Csr a, banded;
  Options o = varied(20000, 8, 8, splmatgen::RowDist::Uniform);
  o.bandwidth = 12;
  gen(o, banded);
  EXPECT_EQ(banded.m.nnz, 160000);
  EXPECT_LE(splmatgen::stats(banded.m).bandwidth, 12);
  o.offband = 0.3;
  gen(o, a);
  EXPECT_EQ(a.m.nnz, 160000);  // every row still has 8 distinct entries
  int64_t far = 0;
  for (int64_t i = 0; i < a.m.rows; ++i) {
    ASSERT_EQ(a.m.offs[i + 1] - a.m.offs[i], 8);
    for (int64_t p = a.m.offs[i]; p < a.m.offs[i + 1]; ++p) far += std::llabs(a.m.cols_idx[p] - i) > 12;
  }
  EXPECT_NEAR(static_cast<double>(far) / 160000, 0.3, 0.01);
}

TEST(MatgenVaried, EdgeShapesAndBadRangesAreRefused) {
  Csr rowsFull, empty, narrow;
  Options full = varied(50, 50, 50, splmatgen::RowDist::Uniform);  // every row holds every column
  gen(full, rowsFull);
  EXPECT_EQ(rowsFull.m.nnz, 2500);
  gen(varied(100, 0, 0, splmatgen::RowDist::PowerLaw), empty);
  EXPECT_EQ(empty.m.nnz, 0);
  Options tall = varied(1000, 1, 1, splmatgen::RowDist::Uniform);  // N x 1
  tall.cols = 1;
  gen(tall, narrow);
  EXPECT_EQ(narrow.m.nnz, 1000);
  spl_csr m{};
  std::string err;
  Options tooLong = varied(10, 1, 11, splmatgen::RowDist::Uniform);
  EXPECT_FALSE(splmatgen::generate(tooLong, &m, &err));
  EXPECT_NE(err.find("longer than the 10 columns"), std::string::npos) << err;
  Options noRange = varied(10, -1, -1, splmatgen::RowDist::Uniform);
  EXPECT_FALSE(splmatgen::generate(noRange, &m, &err));
  Options badExponent = varied(10, 1, 5, splmatgen::RowDist::PowerLaw);
  badExponent.powerExponent = 4;
  EXPECT_FALSE(splmatgen::generate(badExponent, &m, &err));
}

// ---- Stencils --------------------------------------------------------------------------------

TEST(MatgenStencil, TwoDimensionalFivePointCountsAndShape) {
  for (auto [nx, ny] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 7}, {30, 20}, {64, 64}}) {
    Options o;
    o.kind = Kind::Stencil2D5;
    o.nx = nx;
    o.ny = ny;
    Csr a;
    gen(o, a);
    splmatgen::Stats s = splmatgen::stats(a.m);
    EXPECT_EQ(s.rows, nx * ny);
    EXPECT_EQ(s.nnz, 5 * nx * ny - 2 * nx - 2 * ny) << nx << "x" << ny;
    EXPECT_LE(s.maxRow, 5);
    if (nx > 1 && ny > 1) {
      EXPECT_EQ(s.bandwidth, nx);
      EXPECT_EQ(s.diagonals, 5);
    }
    EXPECT_TRUE(isSymmetricPattern(a.m));
    // Laplacian values: 4 on the diagonal, -1 elsewhere; rows sum to 4 - neighbours.
    for (int64_t i = 0; i < a.m.rows; ++i)
      for (int64_t p = a.m.offs[i]; p < a.m.offs[i + 1]; ++p)
        ASSERT_EQ(a.m.vals[p], a.m.cols_idx[p] == i ? 4.0 : -1.0);
  }
}

// Grid sides whose product passes int64 (2^32 x 2^32 wrapped to 0 and crashed) or the largest
// dimension are refused with a message, not generated.
TEST(MatgenStencil, GridsTooLargeAreRefused) {
  for (auto [nx, ny, nz] : std::vector<std::array<int64_t, 3>>{
           {int64_t{1} << 32, int64_t{1} << 32, 1}, {int64_t{1} << 62, 4, 1}, {1 << 20, 1 << 20, 1}, {1 << 11, 1 << 11, 1 << 11}}) {
    Options o;
    o.kind = nz > 1 ? Kind::Stencil3D7 : Kind::Stencil2D5;
    o.nx = nx;
    o.ny = ny;
    o.nz = nz;
    Csr a;
    std::string err;
    EXPECT_FALSE(splmatgen::generate(o, &a.m, &err)) << nx << " x " << ny << " x " << nz;
    EXPECT_NE(err.find("the grid has too many points"), std::string::npos) << err;
  }
}

TEST(MatgenStencil, ThreeDimensionalSevenAndTwentySevenPoint) {
  for (auto dims : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {2, 3, 4}, {10, 10, 10}, {17, 5, 9}}) {
    int64_t nx = dims[0], ny = dims[1], nz = dims[2];
    Options o;
    o.nx = nx;
    o.ny = ny;
    o.nz = nz;
    o.kind = Kind::Stencil3D7;
    Csr a;
    gen(o, a);
    EXPECT_EQ(a.m.nnz, 7 * nx * ny * nz - 2 * (ny * nz + nx * nz + nx * ny));
    o.kind = Kind::Stencil3D27;
    Csr b;
    gen(o, b);
    EXPECT_EQ(b.m.nnz, (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2));
    splmatgen::Stats s7 = splmatgen::stats(a.m), s27 = splmatgen::stats(b.m);
    if (nx > 1 && ny > 1 && nz > 1) {
      EXPECT_EQ(s7.bandwidth, nx * ny);
      EXPECT_EQ(s7.diagonals, 7);
      EXPECT_EQ(s27.bandwidth, nx * ny + nx + 1);
    }
    if (nx > 2 && ny > 2 && nz > 2) { // an interior point, and no two offsets on one diagonal
      EXPECT_EQ(s27.diagonals, 27);
      EXPECT_EQ(s27.maxRow, 27);
    }
    EXPECT_TRUE(isSymmetricPattern(b.m));
  }
}

TEST(MatgenStencil, RowsChooseANearCubicGrid) {
  Options o;
  o.kind = Kind::Stencil3D7;
  o.rows = 1000;
  Csr a;
  gen(o, a);
  EXPECT_EQ(a.m.rows, 1000);
  EXPECT_EQ(a.m.nnz, 6400);
  o.kind = Kind::Stencil2D5;
  o.rows = 1000000;
  Csr b;
  gen(o, b);
  EXPECT_EQ(b.m.rows, 1000000);
  EXPECT_EQ(b.m.nnz, 4996000); // the 1000 x 1000 grid (SuiteSparse's ecology1 has this count)
}

// ---- Dense blocks and dense ------------------------------------------------------------------

TEST(MatgenBlocks, BlocksAreFullSoBcsrHasNoFill) {
  for (int64_t b : {2, 3, 6}) {
    Options o = opts(Kind::Blocks, 600, 8.0 * static_cast<double>(b));
    o.block = b;
    Csr a;
    gen(o, a);
    spl_bcsr bc{};
    ASSERT_EQ(spl_csr_to_bcsr(&a.m, b, &bc), SPL_MATRIX_OK);
    EXPECT_EQ(bc.nblocks * b * b, a.m.nnz) << "block " << b;
    // Within a block row, all rows have the same columns.
    for (int64_t i = 0; i + 1 < a.m.rows; ++i) {
      if ((i + 1) % b == 0)
        continue;
      ASSERT_EQ(a.m.offs[i + 1] - a.m.offs[i], a.m.offs[i + 2] - a.m.offs[i + 1]);
      ASSERT_TRUE(std::equal(a.m.cols_idx + a.m.offs[i], a.m.cols_idx + a.m.offs[i + 1], a.m.cols_idx + a.m.offs[i + 1]));
    }
    EXPECT_NEAR(static_cast<double>(a.m.nnz), 600.0 * 8.0 * static_cast<double>(b), static_cast<double>(b * b));
    spl_bcsr_free(&bc);
  }
}

TEST(MatgenDense, EveryEntry) {
  Options o = opts(Kind::Dense, 37, -1);
  o.cols = 11;
  Csr a;
  gen(o, a);
  EXPECT_EQ(a.m.nnz, 37 * 11);
  for (int64_t p = 0; p < a.m.nnz; ++p)
    ASSERT_NE(a.m.vals[p], 0.0); // random values are nonzero multiples of 2^-8
  for (int64_t p = 0; p < a.m.nnz; ++p)
    ASSERT_EQ(a.m.vals[p] * 256.0, static_cast<double>(static_cast<int>(a.m.vals[p] * 256.0)));
}

// ---- Graphs ----------------------------------------------------------------------------------

TEST(MatgenRMat, ExactNnzAndPowerLawSkew) {
  Csr r, u;
  gen(opts(Kind::RMat, 1 << 16, 16), r);
  gen(opts(Kind::Uniform, 1 << 16, 16), u);
  EXPECT_EQ(r.m.nnz, 16 << 16);
  splmatgen::Stats sr = splmatgen::stats(r.m), su = splmatgen::stats(u.m);
  // Graph500 parameters: the 1% longest rows hold a large share of the entries, many rows are
  // empty and the longest row is hundreds of times the average; uniform rows are near the mean.
  EXPECT_GT(sr.top1PercentShare, 0.25);
  EXPECT_LT(su.top1PercentShare, 0.03);
  EXPECT_GT(sr.maxRow, 50 * 16);
  EXPECT_LT(su.maxRow, 4 * 16);
  EXPECT_GT(sr.emptyRows, (1 << 16) / 10);
}

TEST(MatgenRMat, SymmetricPermutedAndNonPowerOfTwo) {
  Options o = opts(Kind::RMat, 3000, 10);
  o.symmetric = true;
  o.permute = true;
  Csr a;
  gen(o, a);
  EXPECT_TRUE(isSymmetricPattern(a.m));
  EXPECT_GE(a.m.nnz, 30000);
  EXPECT_LE(a.m.nnz, 30001);
  EXPECT_EQ(a.m.rows, 3000);
  // Without the permutation the hubs sit at the lowest vertex numbers; with it they are spread.
  Options p = opts(Kind::RMat, 1 << 14, 16);
  Csr plain;
  gen(p, plain);
  p.permute = true;
  Csr perm;
  gen(p, perm);
  int64_t firstRows = plain.m.offs[(1 << 14) / 64], firstRowsPerm = perm.m.offs[(1 << 14) / 64];
  EXPECT_GT(firstRows, 4 * firstRowsPerm);
}

TEST(MatgenBarabasiAlbert, CountSymmetryAndDegreeSkew) {
  const int64_t n = 20000, m = 4;
  Csr a;
  gen(opts(Kind::BarabasiAlbert, n, m), a);
  EXPECT_EQ(a.m.nnz, 2 * m * (n - m));
  EXPECT_TRUE(isSymmetricPattern(a.m));
  splmatgen::Stats s = splmatgen::stats(a.m);
  EXPECT_EQ(s.minRow, m); // every vertex added with m edges; the first m get at least m
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FALSE(hasEntry(a.m, i, i)) << "self loop at " << i;
  // Preferential attachment: max degree grows like m sqrt(n) (about 570 here), far above the
  // average 2m; the degree tail is heavy (P(deg >= k) ~ k^-2).
  EXPECT_GT(s.maxRow, 20 * 2 * m);
  int64_t atLeast4x = 0, atLeast16x = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = a.m.offs[i + 1] - a.m.offs[i];
    atLeast4x += d >= 4 * m;
    atLeast16x += d >= 16 * m;
  }
  // Power law with exponent 3: 16x the degree is about 4^-2 = 1/16 as many vertices.
  double ratio = static_cast<double>(atLeast16x) / static_cast<double>(atLeast4x);
  EXPECT_GT(ratio, 1.0 / 40);
  EXPECT_LT(ratio, 1.0 / 6);
}

// ---- Adversarial shapes ----------------------------------------------------------------------

TEST(MatgenAdversarial, OneDenseRow) {
  Options o = opts(Kind::DenseRow, 3000, 3);
  o.denseRow = 17;
  Csr a;
  gen(o, a);
  EXPECT_EQ(a.m.offs[18] - a.m.offs[17], 3000);
  EXPECT_EQ(a.m.nnz, 9000);
  EXPECT_EQ(splmatgen::stats(a.m).maxRow, 3000);
}

TEST(MatgenAdversarial, ManyEmptyRows) {
  Options o = opts(Kind::EmptyRows, 10000, 2);
  o.emptyFraction = 0.95;
  Csr a;
  gen(o, a);
  splmatgen::Stats s = splmatgen::stats(a.m);
  EXPECT_EQ(s.emptyRows, 9500);
  EXPECT_EQ(s.nnz, 20000);
}

TEST(MatgenAdversarial, VectorsAndEmptyRoundTripThroughTheReader) {
  Options row;
  row.kind = Kind::RowVector;
  row.cols = 1000;
  Options col;
  col.kind = Kind::ColVector;
  col.rows = 1000;
  col.density = 0.3;
  Options empty;
  empty.kind = Kind::Empty;
  empty.rows = 50;
  empty.cols = 70;
  struct Case {
    Options o;
    int64_t rows, cols, nnz;
  } cases[] = {{row, 1, 1000, 1000}, {col, 1000, 1, 300}, {empty, 50, 70, 0}};
  for (const Case &c : cases) {
    Csr a;
    gen(c.o, a);
    EXPECT_EQ(a.m.rows, c.rows);
    EXPECT_EQ(a.m.cols, c.cols);
    EXPECT_EQ(a.m.nnz, c.nnz);
    std::string path = tempPath(std::string(splmatgen::kindName(c.o.kind)) + ".mtx");
    ASSERT_EQ(spl_write_matrix_market(path.c_str(), &a.m), SPL_MATRIX_OK);
    spl_csr back{};
    char err[256];
    ASSERT_EQ(spl_read_matrix(path.c_str(), &back, err, sizeof err), SPL_MATRIX_OK) << err;
    EXPECT_TRUE(sameMatrix(a.m, back));
    spl_csr_free(&back);
    std::remove(path.c_str());
  }
}

} // namespace
