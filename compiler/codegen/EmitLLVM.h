/// \file EmitLLVM.h (private to codegen/): target setup and the optimisation pipeline, kept in
/// Emit.cpp so that only one file pays for PassBuilder's headers.
#pragma once

#include <string>

#include "codegen/CodeGen.h"

namespace llvm {
class Module;
}

namespace spl::codegen {

/// Sets the host triple and data layout on a new module.
bool prepareModule(llvm::Module &m, const CodeGenOptions &opts, std::string &error);
/// Runs the -O pipeline and writes LLVM IR, assembly or an object file into `out`.
bool optimizeAndEmit(llvm::Module &m, const CodeGenOptions &opts, OutputKind kind, std::string &out, std::string &error);

}  // namespace spl::codegen
