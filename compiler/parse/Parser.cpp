/// \file Parser.cpp: drives the ANTLR lexer and parser and reports lexical and syntax errors.
/// The grammar (dsl-grammar/Spl.g4) turns every byte into some token (unknown ones become
/// STRAY, an unterminated comment runs to EOF), so lexical errors are found here by scanning
/// the token stream rather than inside ANTLR, where they would be printed to stderr.
#include "parse/Parser.h"

#include <antlr4-runtime.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <string>

#include "SplLexer.h"
#include "SplParser.h"
#include "parse/AstBuilder.h"
#include "support/Format.h"

namespace spl {
namespace {

using grammar::SplLexer;
using grammar::SplParser;

/// Thrown by the syntax-error listener to stop at the first error: recovery would only add
/// follow-on errors, and stopping bounds the work done on garbage input.
struct SyntaxAbort {};

/// Finds the first byte that is not part of valid UTF-8 (ANTLR's decoder throws on those).
size_t firstInvalidUtf8(const std::string &s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n) return i;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string::npos;
}

std::string describeToken(antlr4::Token *t) {
  if (!t || t->getType() == antlr4::Token::EOF) return "end of file";
  std::string text = t->getText();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return "'" + text + "'";
}

/// Shortens ANTLR's "{'(', '-', ID, ...}" expected sets into words a user can act on.
std::string describeExpected(const antlr4::misc::IntervalSet &set, const antlr4::dfa::Vocabulary &voc) {
  std::vector<std::string> names;
  for (ssize_t t : set.toList()) {
    if (t == static_cast<ssize_t>(antlr4::Token::EOF)) names.push_back("end of file");
    else if (t == SplLexer::ID) names.push_back("a name");
    else if (t == SplLexer::INT) names.push_back("an integer");
    else if (t == SplLexer::FLOAT) names.push_back("a number");
    else names.push_back(voc.getDisplayName(t));
  }
  if (names.empty()) return "";
  if (names.size() > 4) return "";
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

class SyntaxErrorListener : public antlr4::BaseErrorListener {
 public:
  SyntaxErrorListener(const SourceManager &sm, uint32_t file, Diagnostics &diags)
      : sm_(sm), file_(file), diags_(diags) {}

  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *offending, size_t line,
                   size_t charPositionInLine, const std::string &msg, std::exception_ptr) override {
    SourceLoc loc{file_, static_cast<uint32_t>(line), static_cast<uint32_t>(charPositionInLine + 1)};
    if (offending) loc = locOf(offending);
    std::string found = describeToken(offending);
    std::string expected;
    if (auto *parser = dynamic_cast<antlr4::Parser *>(recognizer)) {
      try {
        expected = describeExpected(parser->getExpectedTokens(), parser->getVocabulary());
      } catch (...) {
        expected.clear();
      }
    }
    std::string text;
    if (msg.rfind("missing ", 0) == 0 && !expected.empty())
      text = "expected " + expected + " before " + found;
    else if (!expected.empty())
      text = "expected " + expected + ", found " + found;
    else if (offending && offending->getType() == antlr4::Token::EOF)
      text = "unexpected end of file";
    else
      text = "unexpected " + found;
    diags_.error(loc, text);
    throw SyntaxAbort{};
  }

  SourceLoc locOf(antlr4::Token *t) const {
    if (t->getType() == antlr4::Token::EOF) {
      // Point just past the last byte of the file so the caret sits at the end.
      const std::string &text = sm_.text(file_);
      size_t end = text.size();
      while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
      return sm_.locOfOffset(file_, end);
    }
    return SourceLoc{file_, static_cast<uint32_t>(t->getLine()),
                     static_cast<uint32_t>(t->getCharPositionInLine() + 1)};
  }

 private:
  const SourceManager &sm_;
  uint32_t file_;
  Diagnostics &diags_;
};

/// Refuses bracket nesting deeper than kMaxNesting before parsing: ANTLR's adaptive prediction
/// is quadratic in the nesting depth of `(` (a tuple, a parenthesised expression and a lambda
/// pattern look alike until the matching `)`), so this bounds parse time on adversarial input.
bool checkNesting(antlr4::CommonTokenStream &tokens, uint32_t file, Diagnostics &diags) {
  int depth = 0;
  for (antlr4::Token *t : tokens.getTokens()) {
    const std::string text = t->getText();
    if (text == "(" || text == "[" || text == "{") {
      if (++depth > kMaxNesting) {
        diags.error(SourceLoc{file, static_cast<uint32_t>(t->getLine()), static_cast<uint32_t>(t->getCharPositionInLine() + 1)},
                    fmt::format("brackets nested too deeply (more than {} levels)", kMaxNesting));
        return false;
      }
    } else if (text == ")" || text == "]" || text == "}") {
      depth = depth > 0 ? depth - 1 : 0;
    }
  }
  return true;
}

/// Reports stray characters and unterminated comments; returns false if any.
bool checkTokens(antlr4::CommonTokenStream &tokens, uint32_t file, Diagnostics &diags) {
  bool ok = true;
  for (antlr4::Token *t : tokens.getTokens()) {
    SourceLoc loc{file, static_cast<uint32_t>(t->getLine()),
                  static_cast<uint32_t>(t->getCharPositionInLine() + 1)};
    if (t->getType() == SplLexer::STRAY) {
      std::string text = t->getText();
      unsigned char c = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
      std::string shown;
      if (c < 0x20 || c == 0x7F) {
        shown = fmt::format("\\x{:02X}", c);
      } else {
        shown = text;
      }
      diags.error(loc, "stray '" + shown + "' in program");
      ok = false;
    } else if (t->getType() == SplLexer::BLOCK_COMMENT) {
      const std::string text = t->getText();
      if (text.size() < 4 || text.compare(text.size() - 2, 2, "*/") != 0) {
        diags.error(loc, "unterminated comment");
        ok = false;
      }
    }
  }
  return ok;
}

/// Where a large file is cut to be parsed part by part: the offsets of lines whose first token
/// starts a declaration (import, type, def, export, tunable, schedule: keywords, never names)
/// outside every bracket and comment. A cut anywhere else would be a syntax error in one of the
/// parts, and then the whole file is parsed at once anyway (below).
std::vector<size_t> declarationLines(const std::string &text) {
  static const char *const kKeywords[] = {"import", "type", "def", "export", "tunable", "schedule"};
  std::vector<size_t> starts;
  int depth = 0;
  bool inBlock = false;
  size_t i = 0, n = text.size();
  bool lineStart = true;
  while (i < n) {
    char c = text[i];
    if (inBlock) {
      if (c == '*' && i + 1 < n && text[i + 1] == '/') inBlock = false, ++i;
      else if (c == '\n') lineStart = true;
      ++i;
      continue;
    }
    if (lineStart && (c == ' ' || c == '\t' || c == '\r')) {
      ++i;
      continue;
    }
    if (lineStart && depth == 0 && std::isalpha(static_cast<unsigned char>(c))) {
      size_t e = i;
      while (e < n && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
      for (const char *k : kKeywords)
        if (text.compare(i, e - i, k) == 0) {
          size_t line = text.rfind('\n', i);
          starts.push_back(line == std::string::npos ? 0 : line + 1);
        }
    }
    lineStart = false;
    if (c == '\n') lineStart = true;
    else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      inBlock = true;
      i += 2;
      continue;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      depth = depth > 0 ? depth - 1 : 0;
    }
    ++i;
  }
  return starts;
}

/// A text lexed and checked, then parsed in ANTLR's two stages: SLL prediction first, which
/// decides each choice from the local context alone (fast, and its DFA stays small) and gives up
/// at the first conflict or error; then, for a text SLL gave up on, full LL prediction, whose
/// first syntax error is the one reported. The whole file and each part of a large one
/// (parseInParts) are read this way.
class LexedText {
 public:
  LexedText(const char *data, size_t size) : input_(data, size), lexer_(&input_), tokens_(&lexer_) {
    lexer_.removeErrorListeners();
  }

  /// The tokens, checked (stray characters, nesting); false with the problem in `diags`.
  bool lex(uint32_t file, Diagnostics &diags) {
    try {
      tokens_.fill();
    } catch (const std::exception &e) {
      diags.error(SourceLoc{file, 1, 1}, std::string("cannot read the source: ") + e.what());
      return false;
    }
    if (!checkTokens(tokens_, file, diags) || !checkNesting(tokens_, file, diags)) return false;
    parser_.emplace(&tokens_);
    parser_->removeErrorListeners();
    return true;
  }

  /// The tree by SLL prediction, or null where it gave up (after lex).
  SplParser::ProgramContext *parseSll() {
    parser_->getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
    parser_->setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    try {
      return parser_->program();
    } catch (const std::exception &) {  // a bail-out (ParseCancellationException) or worse
      return nullptr;
    }
  }

  /// The tree by full LL prediction from the first token, its first syntax error reported
  /// (null then).
  SplParser::ProgramContext *parseLl(const SourceManager &sm, uint32_t file, Diagnostics &diags) {
    tokens_.seek(0);
    parser_->reset();
    parser_->setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
    parser_->getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
    SyntaxErrorListener listener(sm, file, diags);
    parser_->addErrorListener(&listener);
    SplParser::ProgramContext *tree = nullptr;
    try {
      tree = parser_->program();
    } catch (const SyntaxAbort &) {
      tree = nullptr;
    } catch (const std::exception &e) {
      diags.error(SourceLoc{file, 1, 1}, std::string("parser failure: ") + e.what());
      tree = nullptr;
    }
    parser_->removeErrorListener(&listener);  // it ends here; the parser may outlive it
    return tree;
  }

 private:
  antlr4::ANTLRInputStream input_;
  SplLexer lexer_;
  antlr4::CommonTokenStream tokens_;
  std::optional<SplParser> parser_;  // made once the tokens are checked
};

/// Parses one part of a large file quietly: the module of its declarations, or nullopt at the
/// first problem of any kind (the caller then parses the whole file, which reports it).
std::optional<ast::Module> parsePart(const char *data, size_t size, uint32_t firstLine, const SourceManager &sm,
                                     uint32_t file) {
  Diagnostics scratch(sm);
  LexedText text(data, size);
  if (!text.lex(file, scratch)) return std::nullopt;
  SplParser::ProgramContext *tree = text.parseSll();
  if (!tree) return std::nullopt;
  std::optional<ast::Module> m = buildAst(tree, sm, file, scratch, firstLine);
  if (scratch.hasErrors() || !scratch.all().empty()) return std::nullopt;
  return m;
}

/// Appends the declarations of `part` to `m`, keeping their source order.
void appendModule(ast::Module &m, ast::Module &&part) {
  auto base = [](ast::DeclKind k, const ast::Module &x) -> size_t {
    switch (k) {
      case ast::DeclKind::Import: return x.imports.size();
      case ast::DeclKind::Type: return x.types.size();
      case ast::DeclKind::Def: return x.defs.size();
      case ast::DeclKind::Export: return x.exports.size();
      case ast::DeclKind::Tunable: return x.tunables.size();
      case ast::DeclKind::Schedule: return x.schedules.size();
    }
    return 0;
  };
  for (const auto &[kind, index] : part.order) m.order.emplace_back(kind, base(kind, m) + index);
  auto move = [](auto &to, auto &from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  move(m.imports, part.imports);
  move(m.types, part.types);
  move(m.defs, part.defs);
  move(m.exports, part.exports);
  move(m.tunables, part.tunables);
  move(m.schedules, part.schedules);
}

/// The file in parts of at least partBytes (Parser.h, ParseOptions).
std::optional<ast::Module> parseInParts(const std::string &text, const SourceManager &sm, uint32_t file,
                                        size_t partBytes, size_t &parts) {
  std::vector<size_t> starts = declarationLines(text);
  // The first part also holds what comes before the first declaration (comments).
  if (starts.empty()) starts.push_back(0);
  starts[0] = 0;
  ast::Module all;
  all.file = file;
  all.path = sm.path(file);
  uint32_t line = 1;
  size_t begin = 0;
  for (size_t k = 1; k <= starts.size(); ++k) {
    size_t end = k < starts.size() ? starts[k] : text.size();
    if (k < starts.size() && end - begin < partBytes) continue;
    std::optional<ast::Module> part = parsePart(text.data() + begin, end - begin, line, sm, file);
    if (!part) return std::nullopt;
    appendModule(all, std::move(*part));
    ++parts;
    line += static_cast<uint32_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(begin),
                                             text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    begin = end;
  }
  return all;
}

}  // namespace

std::optional<ast::Module> parseFile(const SourceManager &sm, uint32_t file, Diagnostics &diags,
                                     const ParseOptions &opts) {
  const std::string &text = sm.text(file);
  if (text.size() > (size_t(64) << 20)) {
    diags.error(SourceLoc{file, 1, 1}, "source file is larger than 64 MiB");
    return std::nullopt;
  }
  size_t bad = firstInvalidUtf8(text);
  if (bad != std::string::npos) {
    diags.error(sm.locOfOffset(file, bad),
                fmt::format("stray '\\x{:02X}' in program (invalid UTF-8)", static_cast<unsigned char>(text[bad])));
    return std::nullopt;
  }
  if (opts.partsParsed) *opts.partsParsed = 0;
  if (text.size() > opts.partsAbove) {
    size_t parts = 0;
    if (std::optional<ast::Module> m = parseInParts(text, sm, file, opts.partBytes, parts)) {
      if (opts.partsParsed) *opts.partsParsed = parts;
      return m;
    }
  }

  LexedText lexed(text.data(), text.size());
  if (!lexed.lex(file, diags)) return std::nullopt;
  SplParser::ProgramContext *tree = lexed.parseSll();
  if (!tree) tree = lexed.parseLl(sm, file, diags);
  if (!tree) return std::nullopt;
  return buildAst(tree, sm, file, diags);
}

}  // namespace spl
