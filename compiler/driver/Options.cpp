/// \file Options.cpp: command-line parsing for splc. Accepts `--flag=value` and `--flag value`
/// for the long options that take a value, and `-DNAME=VALUE` as well as `-D NAME=VALUE`.
#include "driver/Options.h"

#include <cerrno>
#include <cstdlib>

#include "support/Version.h"

namespace spl {

std::string versionText() {
  return std::string("splc ") + SPL_VERSION_STRING + " (SPL sparse array compiler; LLVM " + SPL_LLVM_VERSION_STRING + ")\n";
}

std::string usageText() {
  return R"(usage: splc FILE.spl -o FILE.o [--header FILE.h] [options]

Compiles the exports of an SPL file into one object file and a C header.

options:
  -o FILE                 output file (object, or the text of --emit; stdout without -o; - is stdout)
  --header FILE           write the C header declaring the exported functions (- is stdout)
  -MD [-MF FILE]          also write the source files read (FILE.spl and its imports) as a
                          make/ninja dependency file: FILE, or the output with .d appended
  --target=LIST           cpu, cuda or cpu,cuda (default: the targets each export names)
  -O0 .. -O3              optimisation level (default -O3)
  --emit=KIND             ast | types | cin | isl | loopir | ll | ptx | asm | obj | header
  -D NAME=VALUE           override a tunable
  -I DIR                  add DIR to the module search path of `import`
  --index-bits=32|64      width of idx[_] values and nats in the C ABI (default 32)
  --checked               kernels validate their inputs and return SPL_ERR_BAD_INPUT; an array
                          input whose length depends on data takes its element count
                          (NAME_len) after it (docs/c-abi.md)
  --fp-contract=fast|off  fuse a product feeding a sum into one multiply-add (default fast,
                          as nvcc and gcc do); off rounds every operation on its own
  --prefer-vector-width=128|256|512
                          the width of the registers the CPU kernels' vectors prefer, as
                          clang's -mprefer-vector-width (default: LLVM's, 256 bits on CPUs
                          with AVX-512); a schedule's vectorize(i, bits) asks it of one kernel
  --cpu=NAME              the CPU the object is for, as LLVM names it (skylake-avx512,
                          znver3, x86-64-v3, ...; default: the host's CPU and features)
  --gpu-arch=sm_XX        PTX target architecture (default sm_90)
  --gpu-rows=merge|vector how cuda kernels map rows of a compressed level reduced to one
                          value: a merge path over rows and nonzeros (default), or a vector
                          of lanes per row
  --gpu-merge-unroll=N    nonzeros of a row each lane of the merge path reads at once
                          (1, 2, 4, 8 or 16; default 8 in f32, 4 in f64)
  --gpu-merge-min-blocks=N  blocks of 256 threads of the merge path each multiprocessor
                          runs at once (1 to 8, capping registers; default: as many as fit)
  --gpu-merge-long-rows=N a merge path's row needing more than N steps of its lanes is
                          summed by the whole warp after the others (0 to 64, 0: never;
                          default 4)
  --gpu-merge-prefetch=on|off  whether a merge path's step loads the next step's row ends
                          before reading its own rows (default on)
  --gpu-emulator          embed the kernels as LLVM bitcode instead of PTX, for the CPU
                          emulator of the CUDA driver (SPL_CUDA_DRIVER; testing only)
  --no-isl-codegen        lower the scheduled loops directly, not through isl's AST
  --time-passes           print the time spent in each stage to stderr
  --verify-each           check each IR's invariants after every pass (by default after each
                          stage: the scheduled CIN, isl's loops, the loop IR before codegen)
  --help                  print this text
  --version               print the version
)";
}

namespace {

bool parseInt64(const std::string &s, int64_t &out) {
  if (s.empty()) return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

}  // namespace

ParsedArgs parseArgs(const std::vector<std::string> &args) {
  ParsedArgs r;
  Options o;
  auto fail = [&](const std::string &msg) {
    r.error = msg;
    return r;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    // Splits "--flag=value" or takes the next argument as the value.
    auto valueOf = [&](const std::string &flag, std::string &value) -> bool {
      if (a == flag) {
        if (i + 1 >= args.size()) return false;
        value = args[++i];
        return true;
      }
      if (a.rfind(flag + "=", 0) == 0) {
        value = a.substr(flag.size() + 1);
        return true;
      }
      return false;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      r.exitNow = true;
      r.message = usageText();
      return r;
    }
    if (a == "--version") {
      r.exitNow = true;
      r.message = versionText();
      return r;
    }
    if (a == "-o") {
      if (i + 1 >= args.size()) return fail("-o needs a file name");
      o.output = args[++i];
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2 && a[2] != '-') {
      o.output = a.substr(2);
    } else if (a == "-MD") {
      o.depfile = true;
    } else if (a == "-MF") {
      if (i + 1 >= args.size()) return fail("-MF needs a file name");
      o.depfile = true;
      o.depfilePath = args[++i];
    } else if (a == "--header" || a.rfind("--header=", 0) == 0) {
      if (!valueOf("--header", v)) return fail("--header needs a file name");
      o.header = v;
    } else if (a == "--target" || a.rfind("--target=", 0) == 0) {
      if (!valueOf("--target", v)) return fail("--target needs a value (cpu, cuda or cpu,cuda)");
      o.targetsGiven = true;
      size_t start = 0;
      while (start <= v.size()) {
        size_t comma = v.find(',', start);
        std::string t = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (t == "cpu") o.targetCpu = true;
        else if (t == "cuda") o.targetCuda = true;
        else return fail("unknown target '" + t + "' in --target (expected cpu or cuda)");
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') {
      o.optLevel = a[2] - '0';
    } else if (a == "--emit" || a.rfind("--emit=", 0) == 0) {
      if (!valueOf("--emit", v)) return fail("--emit needs a value");
      o.emitGiven = true;
      if (v == "ast") o.emit = Emit::Ast;
      else if (v == "types") o.emit = Emit::Types;
      else if (v == "cin") o.emit = Emit::Cin;
      else if (v == "isl") o.emit = Emit::Isl;
      else if (v == "loopir") o.emit = Emit::LoopIr;
      else if (v == "ll") o.emit = Emit::Ll;
      else if (v == "ptx") o.emit = Emit::Ptx;
      else if (v == "asm") o.emit = Emit::Asm;
      else if (v == "obj") o.emit = Emit::Object;
      else if (v == "header") o.emit = Emit::Header;
      else return fail("unknown --emit kind '" + v + "' (expected ast, types, cin, isl, loopir, ll, ptx, asm, obj or header)");
    } else if (a == "-D" || (a.rfind("-D", 0) == 0 && a.size() > 2)) {
      std::string def;
      if (a == "-D") {
        if (i + 1 >= args.size()) return fail("-D needs NAME=VALUE");
        def = args[++i];
      } else {
        def = a.substr(2);
      }
      size_t eq = def.find('=');
      int64_t value = 0;
      if (eq == std::string::npos || eq == 0 || !parseInt64(def.substr(eq + 1), value) || value < 0)
        return fail("-D expects NAME=VALUE with a non-negative integer VALUE, got '" + def + "'");
      o.defines.emplace_back(def.substr(0, eq), value);
    } else if (a == "-I" || (a.rfind("-I", 0) == 0 && a.size() > 2)) {
      if (a == "-I") {
        if (i + 1 >= args.size()) return fail("-I needs a directory");
        o.includeDirs.push_back(args[++i]);
      } else {
        o.includeDirs.push_back(a.substr(2));
      }
    } else if (a == "--index-bits" || a.rfind("--index-bits=", 0) == 0) {
      if (!valueOf("--index-bits", v)) return fail("--index-bits needs 32 or 64");
      if (v == "32") o.indexBits = 32;
      else if (v == "64") o.indexBits = 64;
      else return fail("--index-bits must be 32 or 64, got '" + v + "'");
    } else if (a == "--checked") {
      o.checked = true;
    } else if (a == "--gpu-merge-min-blocks" || a.rfind("--gpu-merge-min-blocks=", 0) == 0) {
      if (!valueOf("--gpu-merge-min-blocks", v)) return fail("--gpu-merge-min-blocks needs 1 to 8");
      if (v.size() == 1 && v[0] >= '1' && v[0] <= '8') o.gpuMergeMinBlocks = v[0] - '0';
      else return fail("--gpu-merge-min-blocks must be 1 to 8, got '" + v + "'");
    } else if (a == "--gpu-merge-long-rows" || a.rfind("--gpu-merge-long-rows=", 0) == 0) {
      if (!valueOf("--gpu-merge-long-rows", v)) return fail("--gpu-merge-long-rows needs 0 to 64");
      bool digits = !v.empty() && v.size() <= 2 && v.find_first_not_of("0123456789") == std::string::npos;
      if (digits && std::stoi(v) <= 64) o.gpuMergeLongRows = std::stoi(v);
      else return fail("--gpu-merge-long-rows must be 0 to 64, got '" + v + "'");
    } else if (a == "--gpu-merge-prefetch" || a.rfind("--gpu-merge-prefetch=", 0) == 0) {
      if (!valueOf("--gpu-merge-prefetch", v)) return fail("--gpu-merge-prefetch needs on or off");
      if (v == "on") o.gpuMergePrefetch = true;
      else if (v == "off") o.gpuMergePrefetch = false;
      else return fail("--gpu-merge-prefetch must be on or off, got '" + v + "'");
    } else if (a == "--gpu-merge-unroll" || a.rfind("--gpu-merge-unroll=", 0) == 0) {
      if (!valueOf("--gpu-merge-unroll", v)) return fail("--gpu-merge-unroll needs 1, 2, 4, 8 or 16");
      if (v == "1" || v == "2" || v == "4" || v == "8" || v == "16") o.gpuMergeUnroll = std::stoi(v);
      else return fail("--gpu-merge-unroll must be 1, 2, 4, 8 or 16, got '" + v + "'");
    } else if (a == "--gpu-rows" || a.rfind("--gpu-rows=", 0) == 0) {
      if (!valueOf("--gpu-rows", v)) return fail("--gpu-rows needs merge or vector");
      if (v == "merge") o.gpuRowsVector = false;
      else if (v == "vector") o.gpuRowsVector = true;
      else return fail("--gpu-rows must be merge or vector, got '" + v + "'");
    } else if (a == "--fp-contract" || a.rfind("--fp-contract=", 0) == 0) {
      if (!valueOf("--fp-contract", v)) return fail("--fp-contract needs fast or off");
      if (v == "fast") o.fpContract = true;
      else if (v == "off") o.fpContract = false;
      else return fail("--fp-contract must be fast or off, got '" + v + "'");
    } else if (a == "--prefer-vector-width" || a.rfind("--prefer-vector-width=", 0) == 0) {
      if (!valueOf("--prefer-vector-width", v)) return fail("--prefer-vector-width needs 128, 256 or 512");
      if (v == "128" || v == "256" || v == "512") o.preferVectorBits = std::stoi(v);
      else return fail("--prefer-vector-width must be 128, 256 or 512, got '" + v + "'");
    } else if (a == "--no-isl-codegen") {
      o.islCodegen = false;
    } else if (a == "--cpu" || a.rfind("--cpu=", 0) == 0) {
      if (!valueOf("--cpu", v) || v.empty()) return fail("--cpu needs a CPU name such as skylake-avx512");
      o.cpu = v;
    } else if (a == "--gpu-arch" || a.rfind("--gpu-arch=", 0) == 0) {
      if (!valueOf("--gpu-arch", v)) return fail("--gpu-arch needs a value such as sm_90");
      if (v.rfind("sm_", 0) != 0 || v.size() < 5) return fail("--gpu-arch must look like sm_80 or sm_90, got '" + v + "'");
      o.gpuArch = v;
    } else if (a == "--gpu-emulator") {
      o.gpuEmulator = true;
    } else if (a == "--time-passes") {
      o.timePasses = true;
    } else if (a == "--verify-each") {
      o.verifyEach = true;
    } else if (a == "--stdlib-dir" || a.rfind("--stdlib-dir=", 0) == 0) {
      if (!valueOf("--stdlib-dir", v)) return fail("--stdlib-dir needs a directory");
      o.stdlibDir = v;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return fail("unknown option '" + a + "' (see splc --help)");
    } else {
      if (!o.input.empty()) return fail("more than one input file ('" + o.input + "' and '" + a + "')");
      o.input = a;
    }
  }
  if (o.input.empty()) return fail("no input file (see splc --help)");
  r.options = o;
  return r;
}

}  // namespace spl
