/// \file Diagnostics.cpp: formatting of located diagnostics with the source line and a caret.
#include "support/Diagnostics.h"

#include <algorithm>
#include <ostream>

#include "support/Format.h"

namespace spl {

Diagnostic &Diagnostics::error(SourceLoc loc, std::string message) {
  ++numErrors_;
  if (numErrors_ > errorLimit_) {
    dropped_ = Diagnostic{};
    return dropped_;
  }
  diags_.push_back(Diagnostic{Severity::Error, loc, std::move(message), {}});
  return diags_.back();
}

Diagnostic &Diagnostics::warning(SourceLoc loc, std::string message) {
  diags_.push_back(Diagnostic{Severity::Warning, loc, std::move(message), {}});
  return diags_.back();
}

void Diagnostics::note(SourceLoc loc, std::string message) {
  if (numErrors_ > errorLimit_ || diags_.empty()) return;
  diags_.back().notes.emplace_back(loc, std::move(message));
}

std::string Diagnostics::formatOne(Severity sev, SourceLoc loc, const std::string &msg) const {
  const char *label = sev == Severity::Error ? "error" : sev == Severity::Warning ? "warning" : "note";
  std::string out = loc.valid() ? fmt::format("{}:{}:{}: {}: {}\n", sm_.path(loc.file), loc.line, loc.col, label, msg)
                                : fmt::format("splc: {}: {}\n", label, msg);
  if (!loc.valid()) return out;
  std::string line = sm_.lineText(loc.file, loc.line);
  // Very long lines (generated or garbage input) are shown as a window around the caret.
  constexpr size_t kWindow = 120;
  if (line.size() > 2 * kWindow) {
    size_t byteOfCol = 0;
    for (uint32_t c = 1; byteOfCol < line.size() && c < loc.col; ++byteOfCol)
      if ((static_cast<unsigned char>(line[byteOfCol + 1]) & 0xC0) != 0x80) ++c;
    size_t begin = byteOfCol > kWindow / 2 ? byteOfCol - kWindow / 2 : 0;
    while (begin > 0 && (static_cast<unsigned char>(line[begin]) & 0xC0) == 0x80) --begin;
    size_t end = std::min(line.size(), begin + kWindow);
    while (end < line.size() && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) ++end;
    uint32_t skipped = 0;
    for (size_t i = 0; i < begin; ++i)
      if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++skipped;
    line = std::string(begin > 0 ? "..." : "") + line.substr(begin, end - begin) + (end < line.size() ? "..." : "");
    loc.col = loc.col - skipped + (begin > 0 ? 3 : 0);
  }
  // Print the line with control bytes made visible so the caret lines up in a terminal.
  std::string shown, caret;
  uint32_t col = 1;
  bool caretPlaced = false;
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    bool startsCodePoint = (c & 0xC0) != 0x80;
    if (startsCodePoint && col == loc.col && !caretPlaced) {
      caret += '^';
      caretPlaced = true;
    }
    if (c == '\t') {
      shown += '\t';
      if (!caretPlaced) caret += '\t';
    } else if (c < 0x20 || c == 0x7F) {
      shown += '?';
      if (!caretPlaced) caret += ' ';
    } else {
      shown += static_cast<char>(c);
      if (startsCodePoint && !caretPlaced) caret += ' ';
    }
    if (startsCodePoint) ++col;
  }
  if (!caretPlaced) caret += '^';  // at end of line (e.g. a missing token at EOF)
  return out + fmt::format("{}\n{}\n", shown, caret);
}

std::string Diagnostics::format(const Diagnostic &d) const {
  std::string out = formatOne(d.severity, d.loc, d.message);
  for (const auto &n : d.notes) out += formatOne(Severity::Note, n.first, n.second);
  return out;
}

void Diagnostics::flush(std::ostream &os) {
  for (const Diagnostic &d : diags_) os << format(d);
  if (numErrors_ > errorLimit_)
    os << fmt::format("splc: note: {} more errors not shown\n", numErrors_ - errorLimit_);
  os.flush();
  diags_.clear();
}

}  // namespace spl
