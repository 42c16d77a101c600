/// \file Driver.cpp: runs the stages in order and writes what --emit asks for.
#include "driver/Driver.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "ast/AstPrinter.h"
#include "parse/Parser.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/Version.h"
#include "types/Checker.h"

namespace spl {
namespace {

bool readFile(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

/// Writes text to -o, or to stdout without -o.
bool writeText(const Options &opts, const std::string &text, std::ostream &err) {
  if (opts.output.empty() || opts.output == "-") {
    std::cout << text;
    std::cout.flush();
    return true;
  }
  std::ofstream out(opts.output, std::ios::binary);
  if (!out || !(out << text)) {
    err << "splc: error: cannot write '" << opts.output << "'\n";
    return false;
  }
  return true;
}

}  // namespace

int runCompiler(const Options &opts, std::ostream &err) {
  SourceManager sm;
  Diagnostics diags(sm);
  try {
    std::string text;
    if (!readFile(opts.input, text)) {
      err << "splc: error: cannot read '" << opts.input << "'\n";
      return 1;
    }
    uint32_t file = sm.addFile(opts.input, std::move(text));
    std::optional<ast::Module> module = parseFile(sm, file, diags);
    if (!module) {
      diags.flush(err);
      return 1;
    }
    if (opts.emit == Emit::Ast) return writeText(opts, ast::printModule(*module), err) ? 0 : 1;

    CheckOptions copts;
    copts.defines = opts.defines;
    copts.includeDirs = opts.includeDirs;
    copts.stdlibDir = opts.stdlibDir.empty() ? std::string(SPL_SOURCE_STDLIB_DIR) : opts.stdlibDir;
    std::optional<tir::Program> program = checkProgram(*module, sm, diags, copts);
    if (!program) {
      diags.flush(err);
      return 1;
    }
    if (opts.emit == Emit::Types) return writeText(opts, printTypes(*program, sm), err) ? 0 : 1;
    err << "splc: error: this stage is not built yet\n";
    return 1;
  } catch (const CompileError &e) {
    diags.error(e.loc, e.what());
    diags.flush(err);
    return 1;
  } catch (const NotSupported &e) {
    diags.error(e.loc, std::string("not supported yet: ") + e.what());
    diags.flush(err);
    return 1;
  } catch (const InternalError &e) {
    diags.flush(err);
    err << "splc: " << e.what() << "\n";
    return 2;
  } catch (const std::exception &e) {
    diags.flush(err);
    err << "splc: internal compiler error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace spl
