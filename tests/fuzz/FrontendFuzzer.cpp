// The fuzz target of splc (libFuzzer's entry point): one input is one .spl source, compiled in
// process through every stage up to LLVM IR for both targets, as `splc --emit=ll` would. The
// compiler may accept or reject it, but a rejection must be a diagnostic located in the input
// (`fuzz.spl:LINE:COL: error: ...`), and nothing else may
// happen: an internal error (exit status 2), an uncaught exception or a crash aborts, which
// libFuzzer (or StandaloneFuzzMain.cpp) reports with the input that caused it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>

#include "driver/Driver.h"
#include "driver/Options.h"

namespace {

/// The report opens with an error located in the input (the lines after it echo the source,
/// which may say anything). `splc: error:` is for the command line, which is fixed here, and
/// for the one property of the whole file that has no place in it: it exports nothing.
bool errorsAreLocated(const std::string &text) {
  static const std::regex located(R"(^fuzz\.spl:[1-9][0-9]*:[1-9][0-9]*: error: .*)");
  static const std::regex wholeFile(R"(^splc: error: 'fuzz\.spl' has no exports, so there is nothing to compile .*)");
  std::string first = text.substr(0, text.find('\n'));
  return std::regex_match(first, located) || std::regex_match(first, wholeFile);
}

[[noreturn]] void fail(const char *why, const std::string &source, const std::string &diagnostics) {
  std::fprintf(stderr, "spl fuzz: %s\n--- input (%zu bytes) ---\n%s\n--- diagnostics ---\n%s\n", why, source.size(),
               source.c_str(), diagnostics.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  spl::Options opts;
  opts.input = "fuzz.spl";
  opts.sourceText = std::string(reinterpret_cast<const char *>(data), size);
  opts.emit = spl::Emit::Ll;
  opts.emitGiven = true;
  opts.output = "/dev/null";
  std::ostringstream err;
  int status = spl::runCompiler(opts, err);
  if (status == 0) return 0;
  if (status != 1) fail("internal compiler error (exit status 2)", *opts.sourceText, err.str());
  if (!errorsAreLocated(err.str())) fail("a rejection without a located error", *opts.sourceText, err.str());
  return 0;
}
