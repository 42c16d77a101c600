/// \file Source.h: source files and locations.
/// A SourceManager owns the text of every file the compiler reads (the main file and imported
/// modules) and turns a location into "file:line:col" plus the text of its line. Locations are
/// small values carried by every AST, typed-IR, CIN and loop-IR node, so that a failure in any
/// stage can point at the source.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace spl {

/// A point in a source file. file == 0 means "no location" (compiler-made nodes).
/// line and col are 1-based; col counts Unicode code points, as editors do.
struct SourceLoc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return file != 0; }
};

/// The bytes of the file at `path` (false when it cannot be opened; the caller has checked
/// what kind of file it is: reading a directory "succeeds" with nothing in it).
bool readWholeFile(const std::string &path, std::string &text);

class SourceManager {
 public:
  /// Adds a file with its text; returns its id (>= 1). A `generated` one was written by the
  /// compiler (a plan's candidates, driver/Plans.h): no file on disk, so no dependency.
  uint32_t addFile(std::string path, std::string text, bool generated = false);
  bool generated(uint32_t file) const;
  const std::string &path(uint32_t file) const;
  const std::string &text(uint32_t file) const;
  /// The text of line `line` (1-based) without its newline; empty if out of range.
  std::string lineText(uint32_t file, uint32_t line) const;
  /// Location of byte offset `offset` in `file`.
  SourceLoc locOfOffset(uint32_t file, size_t offset) const;
  uint32_t numFiles() const { return static_cast<uint32_t>(files_.size()); }

 private:
  struct File {
    std::string path;
    std::string text;
    std::vector<size_t> lineStarts;  // byte offset of each line's first byte
    bool generated = false;
  };
  std::vector<File> files_;
};

}  // namespace spl
