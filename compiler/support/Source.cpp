/// \file Source.cpp: line tables for located diagnostics.
#include "support/Source.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace spl {

bool readWholeFile(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

uint32_t SourceManager::addFile(std::string path, std::string text, bool generated) {
  File f;
  f.generated = generated;
  f.path = std::move(path);
  f.text = std::move(text);
  f.lineStarts.push_back(0);
  for (size_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size());
}

bool SourceManager::generated(uint32_t file) const { return files_.at(file - 1).generated; }

const std::string &SourceManager::path(uint32_t file) const {
  static const std::string none = "<unknown>";
  return file >= 1 && file <= files_.size() ? files_[file - 1].path : none;
}

const std::string &SourceManager::text(uint32_t file) const {
  static const std::string none;
  return file >= 1 && file <= files_.size() ? files_[file - 1].text : none;
}

std::string SourceManager::lineText(uint32_t file, uint32_t line) const {
  if (file < 1 || file > files_.size()) return {};
  const File &f = files_[file - 1];
  if (line < 1 || line > f.lineStarts.size()) return {};
  size_t begin = f.lineStarts[line - 1];
  size_t end = f.text.find('\n', begin);
  if (end == std::string::npos) end = f.text.size();
  std::string s = f.text.substr(begin, end - begin);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

SourceLoc SourceManager::locOfOffset(uint32_t file, size_t offset) const {
  if (file < 1 || file > files_.size()) return {};
  const File &f = files_[file - 1];
  offset = std::min(offset, f.text.size());
  auto it = std::upper_bound(f.lineStarts.begin(), f.lineStarts.end(), offset);
  size_t line = static_cast<size_t>(it - f.lineStarts.begin());
  size_t begin = f.lineStarts[line - 1];
  uint32_t col = 1;
  for (size_t i = begin; i < offset; ++i)
    if ((static_cast<unsigned char>(f.text[i]) & 0xC0) != 0x80) ++col;  // count code points
  return SourceLoc{file, static_cast<uint32_t>(line), col};
}

}  // namespace spl
