/// \file Driver.h: the pipeline, stage by stage (the one place that lists every stage in order,
/// as Halide's Lower.cpp does).
///   parse (parse/)  ->  AST  ->  type check (types/)  ->  typed IR (tir/)
///   ->  concrete index notation (cin/)  ->  polyhedral pass (poly/)  ->  loop IR (loopir/)
///   ->  LLVM IR (codegen/)  ->  object file / PTX + launch stub, and the C header.
/// `--emit=K` stops after stage K and writes its text. User errors are reported as located
/// diagnostics and give exit status 1; internal errors give exit status 2 with the failed
/// condition.
#pragma once

#include <iosfwd>

#include "driver/Options.h"

namespace spl {

/// Runs the compiler with parsed options; returns the process exit status.
int runCompiler(const Options &opts, std::ostream &err);

}  // namespace spl
