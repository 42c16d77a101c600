/// \file Checker.h: type checking, AST -> typed IR (LANGUAGE.md sections 2-9).
/// Takes:      the parsed main module; imported modules are found and parsed on demand.
/// Gives:      a tir::Program: the main file's defs (typed), its exports instantiated at their
///             data types, its tunables (with -D overrides applied) and schedules.
/// Assumes:    nothing beyond a well-formed AST.
/// Fails:      every ill-typed program, with a located diagnostic naming both types where two
///             disagree (and the nat equation that failed); unknown names, wrong arity, implicit
///             parameters that cannot be inferred, bound nats that escape matchDepPair, einsum
///             index ranges that disagree, bad export targets and arguments, unknown tunables.
/// Guarantees: the TIR invariants listed in tir/Tir.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ast/Ast.h"
#include "support/Diagnostics.h"
#include "tir/Tir.h"

namespace spl {

struct CheckOptions {
  std::vector<std::pair<std::string, int64_t>> defines;  // -D NAME=VALUE
  std::vector<std::string> includeDirs;                  // -I
  std::string stdlibDir;                                 // where `import` looks last
  /// The CPU the object is for, as a tunable's value may read it (`cpu_vector_registers`,
  /// `cpu_vector_bits`: a schedule's register tiles sized by the register file, as Halide's
  /// natural_vector_size): its vector registers and their width in bits (codegen::CpuVectors).
  /// 0: not known (a tunable reading them is an error).
  int64_t cpuVectorRegisters = 0;
  int64_t cpuVectorBits = 0;
};

/// Checks `main` (already registered in `sm` and parsed). Imported files are added to `sm`.
std::optional<tir::Program> checkProgram(const ast::Module &main, SourceManager &sm, Diagnostics &diags,
                                         const CheckOptions &opts);

}  // namespace spl
