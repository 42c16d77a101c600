/// \file Options.h: the command line of splc (LANGUAGE.md section 10).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spl {

enum class Emit { Object, Ast, Types, Cin, Isl, LoopIr, Ll, Ptx, Asm, Header };

struct Options {
  std::string input;
  std::string output;                 // -o
  std::string header;                 // --header
  bool depfile = false;               // -MD: write the source files read (the .spl and its imports)
  std::string depfilePath;            // -MF FILE (default: the output with .d appended)
  bool targetCpu = false, targetCuda = false, targetsGiven = false;  // --target
  int optLevel = 3;                   // -O0..-O3
  Emit emit = Emit::Object;
  bool emitGiven = false;
  std::vector<std::pair<std::string, int64_t>> defines;  // -D NAME=VALUE, in order
  std::vector<std::string> includeDirs;                  // -I
  int indexBits = 32;                 // --index-bits
  bool checked = false;               // --checked
  bool fpContract = true;             // --fp-contract=fast|off
  int preferVectorBits = 0;           // --prefer-vector-width=128|256|512 (0: LLVM's default)
  bool gpuRowsVector = false;         // --gpu-rows=vector (default merge)
  int gpuMergeUnroll = 0;             // --gpu-merge-unroll=1|2|4|8|16 (0: from the element size)
  int gpuMergeMinBlocks = 0;          // --gpu-merge-min-blocks=1..8 (0: as many as fit)
  int gpuMergeLongRows = -1;          // --gpu-merge-long-rows=0..64 (-1: the default)
  bool gpuMergePrefetch = true;       // --gpu-merge-prefetch=on|off
  bool islCodegen = true;             // --no-isl-codegen turns it off
  std::string gpuArch = "sm_90";      // --gpu-arch
  std::string cpu;                    // --cpu (empty: the host's CPU and features)
  bool gpuEmulator = false;           // --gpu-emulator: embed kernel bitcode for the CPU emulator
  bool timePasses = false;            // --time-passes
  bool verifyEach = false;            // --verify-each: the verifiers after every pass, not each stage
  std::string stdlibDir;              // --stdlib-dir (default: installed or source stdlib)
  /// The source itself, for in-process callers (the fuzzer, tests); otherwise read from `input`.
  std::optional<std::string> sourceText;
};

/// Parses argv. On error returns nullopt and fills `error`; `--help`/`--version` set `exitNow`
/// with the text to print in `message`.
struct ParsedArgs {
  std::optional<Options> options;
  std::string error;
  std::string message;
  bool exitNow = false;
};
ParsedArgs parseArgs(const std::vector<std::string> &args);

std::string usageText();
std::string versionText();

}  // namespace spl
