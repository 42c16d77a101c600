// read_test.cpp: spl_read_matrix and spl_write_matrix_market on the shared real matrices, on
// hand-made valid variants of both formats, and on malformed inputs that must be rejected with
// a located message (never a crash: the fuzz cases below run the reader on damaged copies).
#include "matrix_test_support.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <sstream>
#include <utility>

using namespace spl_matrix_test;

namespace {

using EntryMap = std::map<std::pair<int64_t, int64_t>, double>;

// A second, deliberately simple Matrix Market reader (istringstream, no validation) used as
// ground truth for the well-formed shared files. Symmetric files are mirrored here too.
EntryMap parse_matrix_market_text(const std::string &text, int64_t *rows, int64_t *cols,
                                  int64_t *declared) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  bool symmetric = line.find("symmetric") != std::string::npos;
  bool pattern = line.find("pattern") != std::string::npos;
  while (std::getline(in, line) && line[0] == '%') {
  }
  std::istringstream sizes(line);
  sizes >> *rows >> *cols >> *declared;
  EntryMap entries;
  int64_t i, j;
  double v = 1.0;
  while (in >> i >> j) {
    if (!pattern)
      in >> v;
    entries[{i - 1, j - 1}] += v;
    if (symmetric && i != j)
      entries[{j - 1, i - 1}] += v;
  }
  return entries;
}

// Ground truth for the shared Harwell-Boeing files: fixed-width fields cut with substr, using
// formats hard-coded from the headers (the test checks that the header says so).
struct HarwellBoeingLayout {
  int header_lines;
  int pointer_cards, pointer_per_line, pointer_width;
  int index_cards, index_per_line, index_width;
  int value_per_line, value_width;
};

EntryMap parse_harwell_boeing_text(const std::string &text, const HarwellBoeingLayout &layout,
                                   int64_t cols, int64_t nnz) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  auto fields = [&](size_t first_line, int per_line, int width, int64_t count) {
    std::vector<std::string> out;
    for (size_t l = first_line; static_cast<int64_t>(out.size()) < count; ++l)
      for (int s = 0; s < per_line && static_cast<int64_t>(out.size()) < count; ++s)
        out.push_back(
            lines.at(l).substr(static_cast<size_t>(s * width), static_cast<size_t>(width)));
    return out;
  };
  size_t first = static_cast<size_t>(layout.header_lines);
  auto pointers = fields(first, layout.pointer_per_line, layout.pointer_width, cols + 1);
  first += static_cast<size_t>(layout.pointer_cards);
  auto indices = fields(first, layout.index_per_line, layout.index_width, nnz);
  first += static_cast<size_t>(layout.index_cards);
  auto values = fields(first, layout.value_per_line, layout.value_width, nnz);
  EntryMap entries;
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t k = std::stoll(pointers[j]) - 1; k < std::stoll(pointers[j + 1]) - 1; ++k) {
      std::string value = values[static_cast<size_t>(k)];
      std::replace(value.begin(), value.end(), 'D', 'E');
      entries[{std::stoll(indices[static_cast<size_t>(k)]) - 1, j}] += std::stod(value);
    }
  }
  return entries;
}

void expect_same_entries(const spl_csr &m, const EntryMap &truth) {
  ASSERT_EQ(m.nnz, static_cast<int64_t>(truth.size()));
  int64_t k = 0;
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t p = m.offs[i]; p < m.offs[i + 1]; ++p, ++k) {
      auto found = truth.find({i, m.cols_idx[p]});
      ASSERT_NE(found, truth.end()) << "unexpected entry (" << i << ", " << m.cols_idx[p] << ")";
      EXPECT_DOUBLE_EQ(m.vals[p], found->second) << "at (" << i << ", " << m.cols_idx[p] << ")";
    }
}

int64_t count_diagonal_lines(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  int64_t diagonal = 0, i, j;
  double v;
  while (in >> i >> j >> v)
    diagonal += i == j;
  return diagonal;
}

// Right-justifies text in a Fortran field of the given width.
std::string field(const std::string &text, size_t width) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

// Card images joined into a file, one line each.
std::string cards(std::initializer_list<std::string> lines) {
  std::string text;
  for (const std::string &line : lines)
    text += line + "\n";
  return text;
}

} // namespace

// ---- The shared real matrices ----------------------------------------------------------------

TEST(ReadShared, Pores1MatchesHeaderAndText) {
  Csr a;
  auto outcome = read_matrix(shared_matrix("pores_1.mtx"), &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  expect_valid(a.m);
  EXPECT_EQ(a.m.rows, 30);
  EXPECT_EQ(a.m.cols, 30);
  EXPECT_EQ(a.m.nnz, 180); // "30 30 180", general, no duplicate coordinates
  EXPECT_DOUBLE_EQ(entry(a.m, 0, 0), -9.4810113490000e+02);   // "1 1 -9.4810113490000e+02"
  EXPECT_DOUBLE_EQ(entry(a.m, 1, 0), -7.1785016460000e+06);   // "2 1 -7.1785016460000e+06"
  EXPECT_DOUBLE_EQ(entry(a.m, 11, 0), 7.1341308750000e+06);   // "12 1  7.1341308750000e+06"
  EXPECT_DOUBLE_EQ(entry(a.m, 28, 29), 4.4912526670000e+04);  // "29 30  4.4912526670000e+04"
  EXPECT_DOUBLE_EQ(entry(a.m, 29, 29), -6.3991790180000e+06); // last line of the file

  int64_t rows, cols, declared;
  auto truth = parse_matrix_market_text(read_text_file(shared_matrix("pores_1.mtx")), &rows, &cols,
                                        &declared);
  expect_same_entries(a.m, truth);
}

TEST(ReadShared, LundASymmetricExpandsToBothTriangles) {
  Csr a;
  auto outcome = read_matrix(shared_matrix("lund_a.mtx"), &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  expect_valid(a.m);
  EXPECT_EQ(a.m.rows, 147);
  EXPECT_EQ(a.m.cols, 147);
  // The header says 1298 stored entries (one triangle); every one of the 147 diagonal entries
  // is stored once, every other one twice.
  std::string text = read_text_file(shared_matrix("lund_a.mtx"));
  int64_t diagonal = count_diagonal_lines(text);
  EXPECT_EQ(diagonal, 147);
  EXPECT_EQ(a.m.nnz, 2 * 1298 - diagonal);
  EXPECT_EQ(a.m.nnz, 2449);

  EXPECT_DOUBLE_EQ(entry(a.m, 0, 0), 7.5000000000000e+07);  // "1 1  7.5000000000000e+07"
  EXPECT_DOUBLE_EQ(entry(a.m, 1, 0), 9.6153881000000e+05);  // "2 1  9.6153881000000e+05"
  EXPECT_DOUBLE_EQ(entry(a.m, 0, 1), 9.6153881000000e+05);  // its mirror
  EXPECT_DOUBLE_EQ(entry(a.m, 7, 0), -1.2179486000000e+07); // "8 1 -1.2179486000000e+07"
  EXPECT_DOUBLE_EQ(entry(a.m, 0, 7), -1.2179486000000e+07);
  EXPECT_DOUBLE_EQ(entry(a.m, 146, 145), 1.5405990000000e+06); // "147 146  1.5405990000000e+06"
  EXPECT_DOUBLE_EQ(entry(a.m, 145, 146), 1.5405990000000e+06);
  EXPECT_DOUBLE_EQ(entry(a.m, 146, 146), 1.2564106000000e+05);

  int64_t rows, cols, declared;
  auto truth = parse_matrix_market_text(text, &rows, &cols, &declared);
  EXPECT_EQ(declared, 1298);
  expect_same_entries(a.m, truth);
}

TEST(ReadShared, Jgl009PatternGetsOnes) {
  Csr a;
  auto outcome = read_matrix(shared_matrix("jgl009.mtx"), &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  expect_valid(a.m);
  EXPECT_EQ(a.m.rows, 9);
  EXPECT_EQ(a.m.cols, 9);
  EXPECT_EQ(a.m.nnz, 50);
  for (int64_t k = 0; k < a.m.nnz; ++k)
    EXPECT_EQ(a.m.vals[k], 1.0);
  bool stored = false;
  entry(a.m, 0, 0, &stored); // "1 1"
  EXPECT_TRUE(stored);
  entry(a.m, 3, 0, &stored); // "4 1"
  EXPECT_TRUE(stored);
  entry(a.m, 2, 0, &stored); // column 1 lists rows 1 2 4 5 6 7 ...: no "3 1"
  EXPECT_FALSE(stored);
  entry(a.m, 8, 8, &stored); // last line "9 9"
  EXPECT_TRUE(stored);

  int64_t rows, cols, declared;
  auto truth = parse_matrix_market_text(read_text_file(shared_matrix("jgl009.mtx")), &rows, &cols,
                                        &declared);
  expect_same_entries(a.m, truth);
}

TEST(ReadShared, Utm300HarwellBoeingWithRightHandSide) {
  std::string text = read_text_file(shared_matrix("utm300.rua"));
  // The layout the ground-truth parser assumes, as the header states it.
  ASSERT_NE(text.find("(20I4)          (26I3)          (3D21.15)"), std::string::npos);
  ASSERT_NE(text.find("\nFNN              1\n"), std::string::npos); // the RHS line

  Csr a;
  auto outcome = read_matrix(shared_matrix("utm300.rua"), &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  expect_valid(a.m);
  EXPECT_EQ(a.m.rows, 300);
  EXPECT_EQ(a.m.cols, 300);
  EXPECT_EQ(a.m.nnz, 3155);
  // Column 1 holds rows 1 and 51 ("   1   3" pointers, "  1 51" indices), column 2 starts with
  // row 1; values "-.707106816579618E+000.707106745793467E+00-.844334130890272E-01" are three
  // 21-character fields that touch.
  EXPECT_DOUBLE_EQ(entry(a.m, 0, 0), -0.707106816579618);
  EXPECT_DOUBLE_EQ(entry(a.m, 50, 0), 0.707106745793467);
  EXPECT_DOUBLE_EQ(entry(a.m, 0, 1), -0.0844334130890272);
  // The last index ("...295300") and the last value (line 1195, "...-.772876425427416E+00").
  EXPECT_DOUBLE_EQ(entry(a.m, 299, 299), -0.772876425427416);

  HarwellBoeingLayout layout{5, 16, 20, 4, 122, 26, 3, 3, 21};
  expect_same_entries(a.m, parse_harwell_boeing_text(text, layout, 300, 3155));
}

TEST(ReadShared, G20HarwellBoeingWithoutRightHandSide) {
  std::string text = read_text_file(shared_matrix("g20.rua"));
  ASSERT_NE(text.find("(16I5)          (16I5)          (5E15.8)"), std::string::npos);

  Csr a;
  auto outcome = read_matrix(shared_matrix("g20.rua"), &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  expect_valid(a.m);
  EXPECT_EQ(a.m.rows, 400);
  EXPECT_EQ(a.m.cols, 400);
  EXPECT_EQ(a.m.nnz, 1920); // type RUA: stored as given, although the title says SYM
  // Column 1: rows 1 9 32 391 395 with values 4 -1 -1 -1 -1.
  EXPECT_EQ(entry(a.m, 0, 0), 4.0);
  EXPECT_EQ(entry(a.m, 8, 0), -1.0);
  EXPECT_EQ(entry(a.m, 31, 0), -1.0);
  EXPECT_EQ(entry(a.m, 390, 0), -1.0);
  EXPECT_EQ(entry(a.m, 394, 0), -1.0);

  HarwellBoeingLayout layout{4, 26, 16, 5, 120, 16, 5, 5, 15};
  expect_same_entries(a.m, parse_harwell_boeing_text(text, layout, 400, 1920));
}

TEST(ReadShared, WrongMtxIsRejectedWithFileAndLine) {
  Csr a;
  auto outcome = read_matrix(shared_matrix("wrong.mtx"), &a.m);
  EXPECT_EQ(outcome.status, SPL_MATRIX_EFORMAT);
  // Line 3 is "0 1 1": Matrix Market indices are 1-based.
  EXPECT_NE(outcome.message.find("wrong.mtx:3: "), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("row index 0 out of range [1, 2]"), std::string::npos)
      << outcome.message;
  EXPECT_EQ(a.m.offs, nullptr); // failed reads leave the output empty
  EXPECT_EQ(a.m.nnz, 0);
}

// ---- Valid variants written by hand ------------------------------------------------------------

TEST(ReadVariants, DuplicatesAreSummedCommentsAndCrlfSkipped) {
  std::string path =
      write_temp_file("dups.mtx", "%%MatrixMarket matrix coordinate integer general\r\n"
                                  "% a comment\r\n"
                                  "\r\n"
                                  "2 3 4\r\n"
                                  "1 3 5\r\n"
                                  "% comments may sit between entries\r\n"
                                  "1 1 2\r\n"
                                  "1 3 -1\r\n"
                                  "2 2 7\r\n");
  Csr a;
  auto outcome = read_matrix(path, &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  expect_valid(a.m);
  EXPECT_EQ(a.m.nnz, 3);
  EXPECT_EQ(entry(a.m, 0, 0), 2.0);
  EXPECT_EQ(entry(a.m, 0, 2), 4.0);
  EXPECT_EQ(entry(a.m, 1, 1), 7.0);
  EXPECT_EQ(a.m.cols_idx[0], 0); // sorted within the row although the file was not
  EXPECT_EQ(a.m.cols_idx[1], 2);
}

TEST(ReadVariants, SkewSymmetricMirrorIsNegated) {
  std::string path =
      write_temp_file("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                                  "3 3 2\n"
                                  "2 1 1.5\n"
                                  "3 2 -2.0\n");
  Csr a;
  auto outcome = read_matrix(path, &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_EQ(a.m.nnz, 4);
  EXPECT_EQ(entry(a.m, 1, 0), 1.5);
  EXPECT_EQ(entry(a.m, 0, 1), -1.5);
  EXPECT_EQ(entry(a.m, 2, 1), -2.0);
  EXPECT_EQ(entry(a.m, 1, 2), 2.0);
}

TEST(ReadVariants, ArrayFormatsKeepEveryEntry) {
  Csr general, symmetric, skew;
  auto outcome =
      read_matrix(write_temp_file("general_array.mtx", "%%MatrixMarket matrix array real general\n"
                                                       "2 3\n1\n2\n0\n4\n5\n6\n"),
                  &general.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_EQ(general.m.nnz, 6); // the explicit 0 is stored
  // Column-major: column 1 = (1, 2), column 2 = (0, 4), column 3 = (5, 6).
  EXPECT_EQ(entry(general.m, 0, 0), 1.0);
  EXPECT_EQ(entry(general.m, 1, 0), 2.0);
  EXPECT_EQ(entry(general.m, 1, 1), 4.0);
  EXPECT_EQ(entry(general.m, 0, 2), 5.0);
  EXPECT_EQ(entry(general.m, 1, 2), 6.0);

  outcome = read_matrix(write_temp_file("symmetric_array.mtx",
                                        "%%MatrixMarket matrix array real symmetric\n"
                                        "3 3\n1\n2\n3\n4\n5\n6\n"),
                        &symmetric.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_EQ(symmetric.m.nnz, 9);
  EXPECT_EQ(entry(symmetric.m, 2, 0), 3.0); // lower triangle by columns: (1,1)(2,1)(3,1)(2,2)...
  EXPECT_EQ(entry(symmetric.m, 0, 2), 3.0);
  EXPECT_EQ(entry(symmetric.m, 1, 1), 4.0);
  EXPECT_EQ(entry(symmetric.m, 2, 1), 5.0);
  EXPECT_EQ(entry(symmetric.m, 2, 2), 6.0);

  outcome = read_matrix(write_temp_file("skew_array.mtx",
                                        "%%MatrixMarket matrix array real skew-symmetric\n"
                                        "3 3\n1\n2\n3\n"),
                        &skew.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_EQ(skew.m.nnz, 6);
  EXPECT_EQ(entry(skew.m, 1, 0), 1.0);
  EXPECT_EQ(entry(skew.m, 0, 1), -1.0);
  EXPECT_EQ(entry(skew.m, 2, 1), 3.0);
  EXPECT_EQ(entry(skew.m, 1, 2), -3.0);
}

TEST(ReadVariants, HarwellBoeingSymmetricWithScaleFactorAndFortranExponents) {
  // 3 x 3 symmetric, lower triangle: A(1,1)=1 (D exponent), A(3,1)=0.25 (no exponent, so the
  // 1P scale factor divides by 10), A(2,2)=-3 (exponent without a letter), A(3,3)=4.
  std::string text = cards({
      "Hand-made RSA with a right-hand side                                    HANDRSA ",
      "             5             1             1             2             1",
      "RSA                        3             3             4             0",
      "(4I3)           (4I3)           (1P3E16.8)          (3E16.8)            ",
      "F                          1             0",
      field("1", 3) + field("3", 3) + field("4", 3) + field("5", 3),
      field("1", 3) + field("3", 3) + field("2", 3) + field("3", 3),
      field("1.00000000D+00", 16) + field("2.50000000", 16) + field("-3.00000000+00", 16),
      field("4.00000000E+00", 16),
      field("1.0", 16) + field("2.0", 16) + field("3.0", 16), // the right-hand side
  });
  Csr a;
  auto outcome = read_matrix(write_temp_file("hand.rsa", text), &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  expect_valid(a.m);
  EXPECT_EQ(a.m.nnz, 5);
  EXPECT_DOUBLE_EQ(entry(a.m, 0, 0), 1.0);
  EXPECT_DOUBLE_EQ(entry(a.m, 2, 0), 0.25);
  EXPECT_DOUBLE_EQ(entry(a.m, 0, 2), 0.25);
  EXPECT_DOUBLE_EQ(entry(a.m, 1, 1), -3.0);
  EXPECT_DOUBLE_EQ(entry(a.m, 2, 2), 4.0);
}

TEST(ReadVariants, HarwellBoeingImpliedDecimalPointAndPatternType) {
  // (2F8.2): a field without '.' has its last 2 digits after an implied point.
  std::string real_text = cards({
      "Implied point                                                           IMPLIED ",
      "             3             1             1             1",
      "RUA                        2             2             2             0",
      "(3I4)           (2I4)           (2F8.2)             ",
      field("1", 4) + field("2", 4) + field("3", 4),
      field("2", 4) + field("1", 4),
      field("250", 8) + field("-1.5", 8),
  });
  Csr real;
  auto outcome = read_matrix(write_temp_file("implied.rua", real_text), &real.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_DOUBLE_EQ(entry(real.m, 1, 0), 2.5);
  EXPECT_DOUBLE_EQ(entry(real.m, 0, 1), -1.5);

  std::string pattern_text = cards({
      "Pattern, symmetric                                                      PSA     ",
      "             2             1             1             0",
      "PSA                        2             2             2             0",
      "(3I4)           (2I4)                                                ",
      field("1", 4) + field("3", 4) + field("3", 4),
      field("1", 4) + field("2", 4),
  });
  Csr pattern;
  outcome = read_matrix(write_temp_file("pattern.psa", pattern_text), &pattern.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_EQ(pattern.m.nnz, 3);
  EXPECT_EQ(entry(pattern.m, 1, 0), 1.0);
  EXPECT_EQ(entry(pattern.m, 0, 1), 1.0);
}

TEST(ReadVariants, SymmetricHarwellBoeingWithAnEntryAboveTheDiagonalIsAnError) {
  // Column 2 holds row 1: above the diagonal, which a symmetric file does not store.
  std::string text = cards({
      "Pattern, symmetric, upper entry                                         PSA     ",
      "             2             1             1             0",
      "PSA                        2             2             2             0",
      "(3I4)           (2I4)                                                ",
      field("1", 4) + field("2", 4) + field("3", 4),
      field("1", 4) + field("1", 4),
  });
  Csr m;
  auto outcome = read_matrix(write_temp_file("upper.psa", text), &m.m);
  EXPECT_EQ(outcome.status, SPL_MATRIX_EFORMAT);
  EXPECT_NE(outcome.message.find("upper.psa:6: entry (1, 2) lies above the diagonal"), std::string::npos)
      << outcome.message;
}

TEST(ReadVariants, FormatIsDetectedByContentWithoutExtension) {
  std::string mm = read_text_file(shared_matrix("pores_1.mtx"));
  std::string hb = read_text_file(shared_matrix("g20.rua"));
  Csr a, b;
  auto outcome = read_matrix(write_temp_file("pores_no_extension", mm), &a.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_EQ(a.m.nnz, 180);
  outcome = read_matrix(write_temp_file("g20_no_extension.dat", hb), &b.m);
  ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
  EXPECT_EQ(b.m.nnz, 1920);
}

// ---- Malformed inputs ---------------------------------------------------------------------------

struct MalformedCase {
  const char *file_name;
  std::string bytes;
  const char *location;  // "name:line:" expected in the message
  const char *complaint; // a phrase expected in the message
};

// Shown by GoogleTest instead of the struct's bytes.
void PrintTo(const MalformedCase &c, std::ostream *out) { *out << c.file_name; }

// Test names from the file names ("index_zero.mtx" -> "index_zero_mtx"), so that ctest lists
// stable, readable names.
std::string case_name(const ::testing::TestParamInfo<MalformedCase> &info) {
  std::string name = info.param.file_name;
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

class Malformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(Malformed, IsRejectedWithLocatedMessage) {
  const MalformedCase &c = GetParam();
  Csr a;
  auto outcome = read_matrix(write_temp_file(c.file_name, c.bytes), &a.m);
  EXPECT_NE(outcome.status, SPL_MATRIX_OK);
  EXPECT_NE(outcome.message.find(c.location), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find(c.complaint), std::string::npos) << outcome.message;
  EXPECT_EQ(a.m.offs, nullptr);
  EXPECT_EQ(a.m.cols_idx, nullptr);
  EXPECT_EQ(a.m.vals, nullptr);
}

const std::string kBanner = "%%MatrixMarket matrix coordinate real general\n";

std::string garbage_bytes(bool with_nul) {
  std::string bytes;
  uint64_t state = 99;
  for (int k = 0; k < 300; ++k) {
    char c = static_cast<char>(spl_splitmix64_next(&state) >> 56);
    bytes.push_back(c == '\0' ? '\x01' : c);
  }
  if (with_nul)
    bytes[100] = '\0';
  return bytes;
}

INSTANTIATE_TEST_SUITE_P(
    MatrixMarket, Malformed,
    ::testing::Values(
        MalformedCase{"truncated.mtx", kBanner + "3 3 3\n1 1 1.000000000\n2 2 2.000000000\n",
                      "truncated.mtx:4:", "file ends after 2 of 3 entries"},
        MalformedCase{"too_short_for_count.mtx", kBanner + "3 3 3\n1 1 1.0\n2 2 2.0\n",
                      "too_short_for_count.mtx:2:",
                      "declares 3 entries but the rest of the file can hold at most 2"},
        MalformedCase{"bad_header.mtx", "%%MatrixMarket matrix coordinat real general\n1 1 0\n",
                      "bad_header.mtx:1:", "unknown format 'coordinat'"},
        MalformedCase{"short_banner.mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n",
                      "short_banner.mtx:1:", "banner needs 4 words"},
        MalformedCase{"no_banner.mtx", "3 3 1\n1 1 1.0\n",
                      "no_banner.mtx:1:", "expected a '%%MatrixMarket' banner"},
        MalformedCase{"index_zero.mtx", kBanner + "3 3 1\n1 0 1.0\n",
                      "index_zero.mtx:3:", "column index 0 out of range [1, 3]"},
        MalformedCase{"row_too_big.mtx", kBanner + "3 3 2\n1 1 1.0\n4 1 1.0\n",
                      "row_too_big.mtx:4:", "row index 4 out of range [1, 3]"},
        MalformedCase{"col_too_big.mtx", kBanner + "3 2 1\n1 3 1.0\n",
                      "col_too_big.mtx:3:", "column index 3 out of range [1, 2]"},
        MalformedCase{"huge_nnz.mtx", kBanner + "3 3 1000000000000\n1 1 1.0\n",
                      "huge_nnz.mtx:2:", "declares 1000000000000 entries"},
        MalformedCase{"overflowing_nnz.mtx", kBanner + "3 3 99999999999999999999999\n",
                      "overflowing_nnz.mtx:2:", "absurdly large"},
        MalformedCase{"negative_rows.mtx", kBanner + "-3 3 1\n1 1 1.0\n",
                      "negative_rows.mtx:2:", "negative row count -3"},
        MalformedCase{"huge_rows.mtx", kBanner + "99999999999 5 1\n1 1 1.0\n",
                      "huge_rows.mtx:2:", "exceeds the limit"},
        MalformedCase{"size_words.mtx", kBanner + "3 3\n",
                      "size_words.mtx:2:", "size line needs 3 numbers"},
        MalformedCase{"no_size.mtx", kBanner + "% only a comment\n",
                      "no_size.mtx:3:", "file ends before the size line"},
        MalformedCase{"text_value.mtx", kBanner + "2 2 1\n1 1 abc\n",
                      "text_value.mtx:3:", "value 'abc' is not a number"},
        MalformedCase{"nan_value.mtx", kBanner + "2 2 1\n1 1 nan\n",
                      "nan_value.mtx:3:", "value 'nan' is not a number"},
        MalformedCase{"overflow_value.mtx", kBanner + "2 2 1\n1 1 1e999\n",
                      "overflow_value.mtx:3:", "out of range"},
        MalformedCase{"float_index.mtx", kBanner + "2 2 1\n1.5 1 1.0\n",
                      "float_index.mtx:3:", "row index '1.5' is not an integer"},
        MalformedCase{"two_fields.mtx", kBanner + "12 12 1\n12 12\n",
                      "two_fields.mtx:3:", "expected 3 entries per line (row column value), got 2"},
        MalformedCase{"four_fields.mtx", kBanner + "2 2 1\n1 1 1.0 2.0\n", "four_fields.mtx:3:",
                      "expected 3 entries per line (row column value), got 4"},
        MalformedCase{"extra_entries.mtx", kBanner + "2 2 1\n1 1 1.0\n2 2 1.0\n",
                      "extra_entries.mtx:4:", "more entries than the 1 declared"},
        MalformedCase{"integer_field.mtx",
                      "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
                      "integer_field.mtx:3:", "value '1.5' is not an integer"},
        MalformedCase{"nonsquare_symmetric.mtx",
                      "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n",
                      "nonsquare_symmetric.mtx:2:", "must be square"},
        MalformedCase{"symmetric_upper.mtx",
                      "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1.0\n1 2 1.0\n",
                      "symmetric_upper.mtx:4:", "entry (1, 2) lies above the diagonal"},
        MalformedCase{"skew_upper.mtx",
                      "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n1 3 2.0\n",
                      "skew_upper.mtx:3:", "a skew-symmetric file stores the lower triangle only"},
        MalformedCase{"skew_diagonal.mtx",
                      "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 3.0\n",
                      "skew_diagonal.mtx:3:", "nonzero diagonal entry (1, 1)"},
        MalformedCase{"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 0\n",
                      "complex.mtx:1:", "complex matrices are not supported"},
        MalformedCase{"pattern_array.mtx", "%%MatrixMarket matrix array pattern general\n1 1\n",
                      "pattern_array.mtx:1:", "cannot be 'pattern'"},
        MalformedCase{"short_array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n",
                      "short_array.mtx:2:", "declares 4 values"},
        MalformedCase{"empty.mtx", "", "empty.mtx:1:", "empty file"},
        MalformedCase{"empty_no_extension", "", "empty_no_extension:1:", "empty file"},
        MalformedCase{"garbage.mtx", garbage_bytes(true), "garbage.mtx:", "NUL byte"},
        MalformedCase{"garbage_text.mtx", garbage_bytes(false),
                      "garbage_text.mtx:1:", "expected a '%%MatrixMarket' banner"},
        MalformedCase{"garbage_no_extension", garbage_bytes(false), "garbage_no_extension:", ""}),
    case_name);

std::string g20_text() { return read_text_file(shared_matrix("g20.rua")); }

std::string first_lines(const std::string &text, size_t count) {
  size_t end = 0;
  for (size_t k = 0; k < count; ++k)
    end = text.find('\n', end) + 1;
  return text.substr(0, end);
}

std::string replace_line(const std::string &text, size_t line_number, const std::string &line) {
  size_t begin = 0;
  for (size_t k = 1; k < line_number; ++k)
    begin = text.find('\n', begin) + 1;
  size_t end = text.find('\n', begin);
  return text.substr(0, begin) + line + text.substr(end);
}

INSTANTIATE_TEST_SUITE_P(
    HarwellBoeing, Malformed,
    ::testing::Values(
        MalformedCase{"cut_in_values.rua", first_lines(g20_text(), 300),
                      "cut_in_values.rua:", "card counts exceed"},
        MalformedCase{"cut_in_indices.rua", first_lines(g20_text(), 100),
                      "cut_in_indices.rua:", "card counts exceed"},
        MalformedCase{"cut_last_value.rua", first_lines(g20_text(), 533),
                      "cut_last_value.rua:534:", "file ends after 1915 of 1920 values"},
        MalformedCase{
            "bad_total.rua",
            replace_line(g20_text(), 2,
                         "           531            26           120           384             0"),
            "bad_total.rua:2:", "TOTCRD 531 is not"},
        MalformedCase{"bad_format.rua",
                      replace_line(g20_text(), 4,
                                   "(16Q5)          (16I5)          (5E15.8)            (5E15.8)"),
                      "bad_format.rua:4:", "unsupported pointer format '(16Q5)'"},
        MalformedCase{"bad_card_count.rua",
                      replace_line(g20_text(), 4,
                                   "(10I5)          (16I5)          (5E15.8)            (5E15.8)"),
                      "bad_card_count.rua:4:", "need 41 cards, header says 26"},
        MalformedCase{
            "complex.cua",
            replace_line(g20_text(), 3,
                         "CUA                      400           400          1920             0"),
            "complex.cua:3:", "complex matrices are not supported"},
        MalformedCase{
            "huge_rows.rua",
            replace_line(g20_text(), 3,
                         "RUA               99999999999           400          1920             0"),
            "huge_rows.rua:3:", "exceeds the limit"},
        MalformedCase{
            "huge_nnz.rua",
            replace_line(g20_text(), 3,
                         "RUA                      400           400  999999999999             0"),
            "huge_nnz.rua:4:", "need 62500000000 cards, header says 120"},
        MalformedCase{
            "row_out_of_range.rua",
            replace_line(
                g20_text(), 31,
                "  999    9   32  391  395    2    9  392  395  400    3    8  389  393  394    4"),
            "row_out_of_range.rua:31:", "row index 999 out of range [1, 400]"},
        MalformedCase{
            "first_pointer.rua",
            replace_line(
                g20_text(), 5,
                "    2    6   11   16   21   26   31   36   41   46   51   56   61   66   71   76"),
            "first_pointer.rua:5:", "first column pointer is 2"},
        MalformedCase{
            "decreasing_pointer.rua",
            replace_line(
                g20_text(), 5,
                "    1    6   11   16   21   26   31   36   41   46   51   56   61   66   71   60"),
            "decreasing_pointer.rua:5:", "column pointer 16 (60) is less than the one before (71)"},
        MalformedCase{
            "text_in_values.rua",
            replace_line(
                g20_text(), 151,
                " 4.00000000E+00-1.000000x0E+00-1.00000000E+00-1.00000000E+00-1.00000000E+00"),
            "text_in_values.rua:151:", "values field 2 '-1.000000x0E+00' is not a number"},
        MalformedCase{"short_line.rua",
                      replace_line(g20_text(), 151, " 4.00000000E+00-1.00000000E+00"),
                      "short_line.rua:151:", "missing values field 3"},
        MalformedCase{"header_only.rua", first_lines(g20_text(), 2),
                      "header_only.rua:2:", "card counts exceed the 0 lines left in the file"},
        MalformedCase{"two_lines.rua", "Title\n 0 0 0 0\n",
                      "two_lines.rua:3:", "file ends inside the Harwell-Boeing header"}),
    case_name);

TEST(ReadErrors, MissingFileAndDirectoryAreIoErrors) {
  Csr a;
  std::string missing = (scratch_folder() / "does_not_exist.mtx").string();
  auto outcome = read_matrix(missing, &a.m);
  EXPECT_EQ(outcome.status, SPL_MATRIX_EIO);
  EXPECT_NE(outcome.message.find("does_not_exist.mtx: cannot open"), std::string::npos)
      << outcome.message;
  outcome = read_matrix(scratch_folder().string(), &a.m);
  EXPECT_NE(outcome.status, SPL_MATRIX_OK);
  EXPECT_FALSE(outcome.message.empty());
}

TEST(ReadErrors, NullArgumentsAndTinyMessageBuffers) {
  spl_csr a{};
  char message[8];
  EXPECT_EQ(spl_read_matrix(nullptr, &a, message, sizeof message), SPL_MATRIX_EINVAL);
  EXPECT_EQ(spl_read_matrix(shared_matrix("pores_1.mtx").c_str(), nullptr, nullptr, 0),
            SPL_MATRIX_EINVAL);
  // The message is truncated to the buffer, never written past it.
  EXPECT_EQ(spl_read_matrix(shared_matrix("wrong.mtx").c_str(), &a, message, sizeof message),
            SPL_MATRIX_EFORMAT);
  EXPECT_EQ(std::string(message).size(), sizeof message - 1);
  EXPECT_EQ(spl_read_matrix(shared_matrix("wrong.mtx").c_str(), &a, nullptr, 0),
            SPL_MATRIX_EFORMAT);
}

// Damaged copies of real files: every truncation point of a small file, and random byte
// changes in both formats. Each read must either succeed with a valid CSR or fail with a
// message that names the file; sanitizer builds turn any out-of-bounds access into a failure.
TEST(ReadFuzz, TruncationsAndMutationsNeverCrash) {
  const std::string sources[] = {read_text_file(shared_matrix("jgl009.mtx")),
                                 read_text_file(shared_matrix("pores_1.mtx")), g20_text()};
  const char *names[] = {"fuzz.mtx", "fuzz.mtx", "fuzz.rua"};
  uint64_t state = 2024;
  int accepted = 0, rejected = 0;
  auto check = [&](const char *name, const std::string &bytes) {
    Csr a;
    auto outcome = read_matrix(write_temp_file(name, bytes), &a.m);
    if (outcome.status == SPL_MATRIX_OK) {
      expect_valid(a.m);
      ++accepted;
    } else {
      EXPECT_EQ(outcome.message.rfind(scratch_folder().string(), 0), 0u) << outcome.message;
      ++rejected;
    }
  };
  for (size_t cut = 0; cut <= sources[0].size(); ++cut)
    check(names[0], sources[0].substr(0, cut));
  for (int s = 0; s < 3; ++s) {
    for (int round = 0; round < 150; ++round) {
      std::string bytes = sources[s];
      int changes = 1 + static_cast<int>(spl_splitmix64_next(&state) % 4);
      for (int c = 0; c < changes; ++c) {
        size_t at = static_cast<size_t>(spl_splitmix64_next(&state) % bytes.size());
        const char replacements[] = {'0', '9', '-', ' ', '\n', '.', 'E', 'x', '\0', '(', ')'};
        bytes[at] = replacements[spl_splitmix64_next(&state) % sizeof replacements];
      }
      check(names[s], bytes);
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);
}

// ---- Writing ------------------------------------------------------------------------------------

void expect_identical(const spl_csr &a, const spl_csr &b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  ASSERT_EQ(a.nnz, b.nnz);
  for (int64_t i = 0; i <= a.rows; ++i)
    ASSERT_EQ(a.offs[i], b.offs[i]) << "row " << i;
  for (int64_t k = 0; k < a.nnz; ++k) {
    ASSERT_EQ(a.cols_idx[k], b.cols_idx[k]) << "entry " << k;
    ASSERT_EQ(a.vals[k], b.vals[k]) << "entry " << k; // bit-exact: %.17g round-trips
  }
}

TEST(Write, RoundTripIsExact) {
  for (int kind = 0; kind < 3; ++kind) {
    Csr original, again;
    ASSERT_EQ(
        spl_random_csr(37, 53, 0.15, 7 + kind, static_cast<spl_random_kind>(kind), &original.m),
        SPL_MATRIX_OK);
    std::string path = (scratch_folder() / "round_trip.mtx").string();
    ASSERT_EQ(spl_write_matrix_market(path.c_str(), &original.m), SPL_MATRIX_OK);
    auto outcome = read_matrix(path, &again.m);
    ASSERT_EQ(outcome.status, SPL_MATRIX_OK) << outcome.message;
    expect_identical(original.m, again.m);
  }
  Csr lund, again;
  ASSERT_EQ(read_matrix(shared_matrix("lund_a.mtx"), &lund.m).status, SPL_MATRIX_OK);
  std::string path = (scratch_folder() / "lund_general.mtx").string();
  ASSERT_EQ(spl_write_matrix_market(path.c_str(), &lund.m), SPL_MATRIX_OK);
  ASSERT_EQ(read_matrix(path, &again.m).status, SPL_MATRIX_OK);
  expect_identical(lund.m, again.m);
}

TEST(Write, EmptyMatrixAndUnwritablePath) {
  Csr empty, again;
  ASSERT_EQ(spl_random_csr(4, 0, 0.5, 1, SPL_RANDOM_UNIFORM, &empty.m), SPL_MATRIX_OK);
  std::string path = (scratch_folder() / "empty_written.mtx").string();
  ASSERT_EQ(spl_write_matrix_market(path.c_str(), &empty.m), SPL_MATRIX_OK);
  ASSERT_EQ(read_matrix(path, &again.m).status, SPL_MATRIX_OK);
  expect_identical(empty.m, again.m);
  std::string bad = (scratch_folder() / "no_such_folder" / "x.mtx").string();
  EXPECT_EQ(spl_write_matrix_market(bad.c_str(), &empty.m), SPL_MATRIX_EIO);
  EXPECT_EQ(spl_write_matrix_market(path.c_str(), nullptr), SPL_MATRIX_EINVAL);
}
