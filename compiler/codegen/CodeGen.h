/// \file CodeGen.h: loop IR -> LLVM IR -> object file, and the C header.
/// Takes:      loop IR functions for the CPU and for CUDA (a cuda function's grid loops become
///             device kernels, CodeGenCuda.cpp, and the function their host launch stub).
/// Gives:      an LLVM module whose only defined global symbols are the exported C functions
///             (outlined parallel bodies are internal; the runtime's functions stay
///             undefined, resolved by libsplrt); text (ll, asm) or an object file; the device
///             kernels as PTX (buildPtx), embedded in the object with the launch stubs (or as
///             LLVM bitcode for the CPU emulator of the driver, --gpu-emulator).
/// Assumes:    the loop IR guarantees of loopir/LoopIr.h.
/// Guarantees: pointer parameters are noalias (outputs never overlap inputs, LANGUAGE.md 8)
///             and inputs readonly; `reduce` combinations carry the reassociation flag so the
///             vectoriser may reorder them, `fold` combinations never do.
/// Only codegen/*.cpp include LLVM headers (they are heavy: STYLE.md section 6).
#pragma once

#include <string>
#include <vector>

#include "loopir/LoopIr.h"

namespace spl::codegen {

struct CodeGenOptions {
  int optLevel = 3;
  std::string cpu;       // empty: the host CPU
  std::string features;  // empty: the host CPU's features
  std::string gpuArch = "sm_90";  // the PTX target (--gpu-arch)
  /// --gpu-emulator: the object carries the device module as LLVM bitcode (an image headed
  /// "SPLEMU01" and its size) instead of PTX; only the CPU emulator of the driver can load it.
  bool gpuEmulatorImage = false;
  /// --fp-contract: a floating-point product feeding a sum or difference may be fused into one
  /// multiply-add with a single rounding (`contract` on the LLVM instructions), as C compilers
  /// do with -ffp-contract=fast and nvcc by default. Off: every operation rounds on its own.
  bool fpContract = true;
  /// --prefer-vector-width: the width in bits of the registers every CPU kernel's vectors
  /// prefer (clang's -mprefer-vector-width), 0 for LLVM's default (256 bits on AVX-512 CPUs); a
  /// kernel with a register tile or a loop a schedule vectorises wider takes the wider.
  int preferVectorBits = 0;
};

/// What the CPU target's vector unit offers the loop-IR passes (the driver hands them maskedBytes).
struct CpuVectors {
  /// Bytes of a vector whose loads and gathers take a lane mask at no extra cost (64 with
  /// AVX-512 and gathers LLVM tunes as fast), or 0 where masked accesses or gathers are
  /// emulated or slow.
  int maskedBytes = 0;
  /// The vector registers a kernel has (32 with AVX-512 or on AArch64, 16 with AVX2 on x86-64)
  /// and their width in bits (512 with AVX-512: the width a kernel holding a register tile
  /// takes, whatever --prefer-vector-width): what a schedule sizes register tiles by.
  int registers = 0;
  int bits = 0;
};

/// The vectors of the CPU that `opts` names (the host's by default). False, with `error`, when
/// the CPU is not one LLVM knows.
bool cpuVectors(const CodeGenOptions &opts, CpuVectors &out, std::string &error);

enum class OutputKind { LlvmIr, Assembly, Object };

/// Compiles the functions and writes the requested output to `out`. Returns false and fills
/// `error` on failure (an LLVM verifier failure is an internal error).
bool compileCpu(const loopir::Module &m, const std::string &moduleName, const CodeGenOptions &opts, OutputKind kind,
                std::string &out, std::string &error);

/// The PTX of every cuda function of `m` (one module; `--emit=ptx`).
bool buildPtx(const loopir::Module &m, const CodeGenOptions &opts, std::string &ptx, std::string &error);

}  // namespace spl::codegen
