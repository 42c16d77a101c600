/// \file EmitLLVM.h (private to codegen/): target setup and the optimisation pipeline, kept in
/// Emit.cpp so that only one file pays for PassBuilder's headers.
#pragma once

#include <string>

#include "codegen/CodeGen.h"

namespace llvm {
class Module;
}

namespace spl::codegen {

/// A CPU function's attribute (CodeGenCpu) that optimizeAndEmit turns into the target's
/// features plus "prefer-no-gather": loopir/PartialSums's copies of a scalar loop's body load
/// x[k * incx], x[(k + 1) * incx], ... for separate sums, which LLVM's SLP vectoriser would
/// otherwise gather into one vector (vgatherqpd: a ddot of 4000 elements at increment 2 ran
/// 2.84 us so against 1.40 scalar on a 2-core AMD EPYC Zen 5, 2026-12-02).
inline constexpr const char *kNoGathersAttribute = "spl-no-gathers";

/// Sets the host triple and data layout on a new module.
bool prepareModule(llvm::Module &m, const CodeGenOptions &opts, std::string &error);
/// Runs the -O pipeline and writes LLVM IR, assembly or an object file into `out`.
bool optimizeAndEmit(llvm::Module &m, const CodeGenOptions &opts, OutputKind kind, std::string &out, std::string &error);

/// Sets the NVPTX triple (nvptx64-nvidia-cuda) and data layout on a device module.
bool prepareDeviceModule(llvm::Module &m, const CodeGenOptions &opts, std::string &error);
/// Optimises a device module (LLVM's O3 pipeline for the NVPTX target): what becomes the PTX,
/// and what the CUDA emulator of the tests runs (--gpu-emulator), so both run the same code.
bool optimizeDeviceModule(llvm::Module &m, const CodeGenOptions &opts, std::string &error);
/// Optimises a device module and writes its PTX for opts.gpuArch.
bool emitPtx(llvm::Module &m, const CodeGenOptions &opts, std::string &ptx, std::string &error);

/// Adds the CPU functions of `m` to a host module (CodeGenCpu.cpp).
void addCpuFunctions(llvm::Module &host, const loopir::Module &m, const CodeGenOptions &opts);
/// Compiles the cuda functions of `m` to one PTX module and adds, to the host module, that PTX
/// as a string and each function's host stub (CodeGenCuda.cpp).
bool addCudaStubs(llvm::Module &host, const loopir::Module &m, const CodeGenOptions &opts, std::string &error);

}  // namespace spl::codegen
