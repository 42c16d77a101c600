/// \file Diagnostics.h: located user diagnostics.
/// Stages report user errors (bad programs) here instead of throwing across stage boundaries;
/// the driver decides the exit status. Each diagnostic prints as
///   FILE:LINE:COL: error: message
///   <the source line>
///   <spaces>^
/// followed by its notes (each located the same way when it has a location). Messages start in
/// lower case and carry no trailing period, as in LLVM.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "support/Source.h"

namespace spl {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
  std::vector<std::pair<SourceLoc, std::string>> notes;
};

class Diagnostics {
 public:
  explicit Diagnostics(const SourceManager &sm) : sm_(sm) {}

  Diagnostic &error(SourceLoc loc, std::string message);
  Diagnostic &warning(SourceLoc loc, std::string message);
  /// Attaches a note to the most recent diagnostic.
  void note(SourceLoc loc, std::string message);

  bool hasErrors() const { return numErrors_ > 0; }
  unsigned numErrors() const { return numErrors_; }
  const std::vector<Diagnostic> &all() const { return diags_; }

  /// Prints every diagnostic (in report order) and forgets them.
  void flush(std::ostream &os);
  /// Formats one diagnostic.
  std::string format(const Diagnostic &d) const;

  /// Caps the number of errors kept: after this many, later errors are dropped (the count of
  /// errors still grows) so that a garbage file cannot print megabytes.
  void setErrorLimit(unsigned n) { errorLimit_ = n; }

 private:
  std::string formatOne(Severity sev, SourceLoc loc, const std::string &msg) const;
  const SourceManager &sm_;
  std::vector<Diagnostic> diags_;
  unsigned numErrors_ = 0;
  unsigned errorLimit_ = 20;
  Diagnostic dropped_;
};

}  // namespace spl
