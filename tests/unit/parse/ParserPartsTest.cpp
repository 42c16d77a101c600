// A large file is parsed in parts cut where declarations start (parse/Parser.h, ParseOptions):
// the module, its source order and every location must be those of parsing the file at once,
// and a file with any error must give the same diagnostics. Checked on every .spl of the
// repository's contract examples and stdlib cut into the smallest parts (one declaration each),
// and on hostile cuts: keywords inside brackets and comments, an error in the middle of a file.
#include <gtest/gtest.h>

#include <dirent.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ast/AstPrinter.h"
#include "parse/Parser.h"

namespace {

struct Parsed {
  bool ok = false;
  std::string ast, diagnostics;
  size_t parts = 0;  // 0: parsed at once
};

/// Parses `text` at once (whole) or in parts of one declaration each.
Parsed parse(const std::string &text, bool inParts) {
  spl::SourceManager sm;
  uint32_t file = sm.addFile("input.spl", text);
  spl::Diagnostics diags(sm);
  spl::ParseOptions opts;
  opts.partsAbove = inParts ? 0 : static_cast<size_t>(-1);
  opts.partBytes = 1;
  Parsed p;
  opts.partsParsed = &p.parts;
  std::optional<spl::ast::Module> m = spl::parseFile(sm, file, diags, opts);
  p.ok = m.has_value();
  if (m) p.ast = spl::ast::printModule(*m);
  std::ostringstream os;
  diags.flush(os);
  p.diagnostics = os.str();
  return p;
}

Parsed expectSameParse(const std::string &text, const std::string &what) {
  Parsed whole = parse(text, false), parts = parse(text, true);
  EXPECT_EQ(whole.parts, 0u) << what;
  EXPECT_EQ(parts.ok, whole.ok) << what;
  EXPECT_EQ(parts.ast, whole.ast) << what;
  EXPECT_EQ(parts.diagnostics, whole.diagnostics) << what;
  return parts;
}

/// Top-level declarations in a printed module (lines "  Def ...", "  Type ...", ...).
size_t declarations(const std::string &ast) {
  std::istringstream in(ast);
  size_t n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && std::isupper(static_cast<unsigned char>(line[2]))) ++n;
  return n;
}

std::vector<std::string> splFiles(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".spl") == 0) out.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  return out;
}

TEST(ParserParts, EveryRepositoryProgramParsesTheSameInParts) {
  std::vector<std::string> files = splFiles(SPL_SOURCE_DIR "/tests/contract");
  for (const std::string &f : splFiles(SPL_SOURCE_DIR "/stdlib")) files.push_back(f);
  ASSERT_GT(files.size(), 10u);
  for (const std::string &path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    Parsed whole = parse(text.str(), false);
    EXPECT_TRUE(whole.ok) << path << "\n" << whole.diagnostics;
    // Declarations on lines of their own were parts of their own: the parts path ran, not the
    // fallback to one parse.
    Parsed parts = expectSameParse(text.str(), path);
    EXPECT_EQ(parts.parts, declarations(whole.ast)) << path;
  }
}

TEST(ParserParts, KeywordsInsideBracketsAndCommentsAreNotCuts) {
  const std::string text =
      "// def in a comment at the start of a line\n"
      "def f {n: nat} (x: n.f32) : n.f32 =\n"
      "  x |> map(v =>\n"
      "/* a block comment\n"
      "def g = 1;\n"
      "*/\n"
      "   v * 2.0);\n"
      "schedule f for cpu {\n"
      "  parallelize(i);\n"
      "}\n"
      "  type t = f32;\n"
      "export f as spl_f for cpu;\n";
  EXPECT_EQ(expectSameParse(text, "keywords in brackets and comments").parts, 4u) << "f, the schedule, t, the export";
}

TEST(ParserParts, ErrorsAreReportedAsForTheWholeFile) {
  std::string good;
  for (int i = 0; i < 50; ++i) good += "def f" + std::to_string(i) + " (x: f32) : f32 = x * 2.0;\n";
  // A missing `;` at a cut: the part alone would end early, the file says what follows.
  expectSameParse(good + "def broken (x: f32) : f32 = x\n" + good.substr(0, 200) + "export f0 as spl_f0 for cpu;\n",
                  "a missing semicolon");
  expectSameParse(good + "def g (x: f32) : f32 = x @@ 1;\n" + good, "a syntax error in the middle");
  expectSameParse(good + "def h (x: i32) : i32 = x + 99999999999999999999;\n", "an integer literal out of range");
  expectSameParse(good + "def k (x: f32) : f32 = x; /* unterminated\n", "an unterminated comment");
  Parsed p = parse(good + "def g (x: f32) : f32 = x @@ 1;\n", true);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.diagnostics.find("input.spl:51:"), std::string::npos) << p.diagnostics;
}

}  // namespace
