/// \file Driver.cpp: runs the stages in order and writes what --emit asks for.
#include "driver/Driver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include "ast/AstPrinter.h"
#include "parse/Parser.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/Format.h"
#include "support/Version.h"
#include "check/Checker.h"
#include "cin/InPlace.h"
#include "cin/SkipEmptyBlocks.h"
#include "cin/Lower.h"
#include "cin/Schedule.h"
#include "cin/Verify.h"
#include "tir/Abi.h"
#include "tir/TypesPrinter.h"
#include "loopir/AlignStreams.h"
#include "loopir/Flatten.h"
#include "loopir/GpuMergeRows.h"
#include "loopir/GatherPrefetch.h"
#include "loopir/GpuRowStrategy.h"
#include "loopir/GpuWarpRows.h"
#include "loopir/GuardRange.h"
#include "loopir/MinMaxReductions.h"
#include "loopir/ParallelScan.h"
#include "loopir/PartialSums.h"
#include "loopir/SegmentVersioning.h"
#include "loopir/StreamPrefetch.h"
#include "loopir/Verify.h"
#include "poly/Dependences.h"
#include "poly/Inspector.h"
#include "poly/IslCodegen.h"
#include "poly/UserSchedule.h"
#include "codegen/CodeGen.h"
#include "codegen/Header.h"
#include "driver/Plans.h"

namespace spl {
namespace {

/// The stdlib: --stdlib-dir, else share/spl/stdlib beside an installed splc (bin/..), else the
/// source tree's stdlib (a build that was not installed).
std::string stdlibDir(const Options &opts) {
  if (!opts.stdlibDir.empty()) return opts.stdlibDir;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    std::string dir(exe);
    dir = dir.substr(0, dir.find_last_of('/'));
    std::string installed = dir + "/../share/spl/stdlib";
    if (std::ifstream(installed + "/formats.spl")) return installed;
  }
  return SPL_SOURCE_STDLIB_DIR;
}

/// The whole file (a pipe such as `<(...)` too, but not a directory: reading one "succeeds"
/// with nothing in it). On failure `why` may say more than "cannot read".
bool readFile(const std::string &path, std::string &text, std::string &why) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    why = ": it is a directory";
    return false;
  }
  return readWholeFile(path, text);
}

/// -MD: `OUTPUT: SOURCE IMPORT...` in make's syntax (what build systems read as a depfile:
/// CMake's DEPFILE, ninja's deps), every source the compiler read, so that a change to an
/// imported module rebuilds the object.
bool writeDepfile(const Options &opts, const SourceManager &sm, std::ostream &err) {
  if (opts.output.empty() || opts.output == "-") {
    err << "splc: error: -MD needs -o FILE (the dependency file names the output)\n";
    return false;
  }
  auto escaped = [](const std::string &path) {
    std::string out;
    for (char c : path) {
      if (c == ' ' || c == '#' || c == '\\') out += '\\';
      if (c == '$') out += '$';
      out += c;
    }
    return out;
  };
  std::string text = escaped(opts.output) + ":";
  for (uint32_t f = 1; f <= sm.numFiles(); ++f)
    if (!sm.generated(f)) text += " \\\n  " + escaped(sm.path(f));
  text += "\n";
  std::string path = opts.depfilePath.empty() ? opts.output + ".d" : opts.depfilePath;
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << text)) {
    err << "splc: error: cannot write '" << path << "'\n";
    return false;
  }
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

/// --time-passes: the wall time of each stage, printed to stderr when the compilation ends
/// (also when it fails: the stages that ran).
class StageTimes {
 public:
  StageTimes(bool enabled, std::ostream &err) : enabled_(enabled), err_(err), last_(Clock::now()) {}
  ~StageTimes() {
    if (!enabled_ || times_.empty()) return;
    double total = 0;
    for (const auto &[stage, seconds] : times_) total += seconds;
    err_ << "splc: time per stage (wall, ms)\n";
    for (const auto &[stage, seconds] : times_)
      err_ << fmt::format("  {:<28} {:9.2f}  {:5.1f}%\n", stage, seconds * 1e3, total > 0 ? 100.0 * seconds / total : 0.0);
    err_ << fmt::format("  {:<28} {:9.2f}\n", "total", total * 1e3);
  }
  /// The time since the previous stage ended is `stage`'s.
  void done(const std::string &stage) {
    Clock::time_point now = Clock::now();
    times_.emplace_back(stage, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  std::ostream &err_;
  Clock::time_point last_;
  std::vector<std::pair<std::string, double>> times_;
};

/// One export for one target (its C function, or with sizeFunction its NAME_size), lowered to
/// CIN and scheduled: a user schedule of the program (for this export and target) first, then
/// the target's default. False when a user schedule failed (diags says why). `cpuVectorBits`:
/// the CPU target's vector width (codegen::cpuVectors), which sizes privatize's parts.
bool lowerAndSchedule(const tir::Program &program, const tir::Export &ex, const tir::Abi &abi, bool cuda, bool sizeFunction,
                      const Options &opts, int cpuVectorBits, Diagnostics &diags, cin::Kernel &out) {
  cin::LowerOptions lo;
  lo.cuda = cuda;
  lo.sizeFunction = sizeFunction;
  lo.indexBits = opts.indexBits;
  lo.checked = opts.checked;
  // precompute(name) acts during lowering (which arrays it fuses); the other commands
  // transform the lowered kernel.
  lo.precompute = cin::precomputeNames(program, ex, cuda);
  // An inspector's schedule block is its conversion script, read by the lowering.
  bool inspector = cin::isInspector(ex);
  if (inspector)
    for (const tir::Schedule &sch : program.schedules)
      if (cin::scheduleApplies(sch, ex, cuda)) lo.inspectScript = &sch;
  static const poly::IslInspectorPlanner islInspector;
  lo.inspector = &islInspector;
  cin::Kernel k = cin::lowerExport(ex, abi, lo);
  if (opts.verifyEach) cin::verifyAfter(k, "lowering");
  auto afterCommand = [&](const cin::Kernel &scheduled, const tir::CommandBase &c) {
    if (opts.verifyEach) cin::verifyAfter(scheduled, ("schedule command " + c.name + " (line " + std::to_string(c.loc.line) + ")").c_str());
  };
  bool ok = true;
  if (!lo.sizeFunction && !inspector)
    for (const tir::Schedule &sch : program.schedules)
      if (cin::scheduleApplies(sch, ex, cuda) && !poly::applyUserSchedule(k, sch, diags, cuda ? 0 : cpuVectorBits, afterCommand))
        ok = false;
  k.body = cuda ? cin::defaultGpuSchedule(k.body) : cin::defaultCpuSchedule(k.body);
  // `with result in x`: the kernel as scheduled writes its inputs instead of its result.
  cin::writeResultInPlace(k);
  // A block of the result that the kernel keeps as it is is not computed (syrk's triangle).
  cin::skipEmptyBlocks(k);
  // The end of the CIN stage: what poly and the loop IR get.
  if (ok) cin::verifyAfter(k, "the schedules");
  out = std::move(k);
  return ok;
}

}  // namespace

int runCompiler(const Options &opts, std::ostream &err) {
  SourceManager sm;
  Diagnostics diags(sm);
  StageTimes times(opts.timePasses, err);
  try {
    std::string text;
    if (opts.sourceText) {
      text = *opts.sourceText;
    } else if (std::string why; !readFile(opts.input, text, why)) {
      err << "splc: error: cannot read '" << opts.input << "'" << why << "\n";
      return 1;
    }
    uint32_t file = sm.addFile(opts.input, std::move(text));
    std::optional<ast::Module> module = parseFile(sm, file, diags);
    times.done("parse (ANTLR) -> AST");
    if (!module) {
      diags.flush(err);
      return 1;
    }
    if (opts.emit == Emit::Ast) return writeText(opts, ast::printModule(*module), err) ? 0 : 1;

    // The CPU's vectors, which tunables may read (cpu_vector_registers), privatize's parts are
    // sized by, the loop-IR passes version loops by and the header reports (an unknown --cpu
    // is refused here, before any code is made).
    codegen::CodeGenOptions cg;
    cg.optLevel = opts.optLevel;
    cg.cpu = opts.cpu;
    cg.gpuArch = opts.gpuArch;
    cg.gpuEmulatorImage = opts.gpuEmulator;
    cg.fpContract = opts.fpContract;
    cg.preferVectorBits = opts.preferVectorBits;
    codegen::CpuVectors vectors;
    if (std::string cpuError; !codegen::cpuVectors(cg, vectors, cpuError)) {
      err << "splc: error: " << cpuError << "\n";
      return 1;
    }

    CheckOptions copts;
    copts.cpuVectorRegisters = vectors.registers;
    copts.cpuVectorBits = vectors.bits;
    copts.defines = opts.defines;
    copts.includeDirs = opts.includeDirs;
    copts.stdlibDir = stdlibDir(opts);
    std::optional<tir::Program> program = checkProgram(*module, sm, diags, copts);
    times.done("type check -> typed IR");
    if (!program) {
      diags.flush(err);
      return 1;
    }
    if (opts.emit == Emit::Types) return writeText(opts, tir::printTypes(*program, sm, opts.indexBits, opts.checked), err) ? 0 : 1;

    // Which exports and targets this run compiles: --target restricts, each export names its own.
    std::vector<cin::Kernel> kernels;
    std::vector<codegen::HeaderEntry> headerEntries;
    bool scheduleFailed = false;
    for (const tir::Export &ex : program->exports) {
      tir::Abi abi = tir::computeAbi(ex, opts.indexBits, opts.checked);
      codegen::HeaderEntry he{&ex, abi, false, false, {}};
      for (int target = 0; target < 2; ++target) {
        bool cuda = target == 1;
        bool named = cuda ? ex.cuda : ex.cpu;
        bool selected = opts.targetsGiven ? (cuda ? opts.targetCuda : opts.targetCpu) : true;
        if (!named || !selected) continue;
        (cuda ? he.cuda : he.cpu) = true;
        for (int sizeFn = 0; sizeFn < (abi.hasSizeFunction ? 2 : 1); ++sizeFn) {
          cin::Kernel k;
          if (!lowerAndSchedule(*program, ex, abi, cuda, sizeFn == 1, opts, vectors.bits, diags, k)) scheduleFailed = true;
          if (k.planned) he.planParams = k.planParams, he.planTransposed = k.planTransposed, he.planSpmm = k.planSpmm;
          kernels.push_back(std::move(k));
        }
      }
      if (he.cpu || he.cuda) headerEntries.push_back(he);
    }
    if (scheduleFailed) {
      diags.flush(err);
      return 1;
    }
    // Plans (a schedule's plan()): each planned kernel's candidates, internal to the object,
    // and the entry points codegen adds.
    PlanSources planSources;
    std::vector<loopir::PlanEntry> plans;
    std::vector<std::string> exportNames;
    for (const tir::Export &ex : program->exports) exportNames.push_back(ex.cname);
    auto lowerCpu = [&](const tir::Program &p, const tir::Export &ex, cin::Kernel &k) {
      return lowerAndSchedule(p, ex, tir::computeAbi(ex, opts.indexBits, opts.checked), false, false, opts, vectors.bits, diags, k);
    };
    if (!addPlanCandidates(kernels, plans, planSources, exportNames, sm, diags, copts, lowerCpu)) {
      diags.flush(err);
      return 1;
    }
    times.done("lower to CIN + schedules");
    // Nothing to compile is an error, not an empty object, header or PTX: a file without
    // exports (--emit=types checks a module), or no export for the targets asked (PTX needs a
    // cuda one). The stage dumps (cin, isl, loopir) print what there is.
    bool makesCode = opts.emit == Emit::Object || opts.emit == Emit::Ll || opts.emit == Emit::Asm ||
                     opts.emit == Emit::Ptx || opts.emit == Emit::Header;
    if (makesCode && program->exports.empty()) {
      err << "splc: error: '" << opts.input << "' has no exports, so there is nothing to compile (export a definition "
          << "with `export DEF as C_NAME for cpu`; --emit=types checks a module without exports)\n";
      return 1;
    }
    bool anyCuda = std::any_of(kernels.begin(), kernels.end(), [](const cin::Kernel &k) { return k.cuda; });
    if (makesCode && (kernels.empty() || (opts.emit == Emit::Ptx && !anyCuda))) {
      std::string listed;
      for (const tir::Export &ex : program->exports)
        listed += (listed.empty() ? "" : ", ") + ex.cname + " for " +
                  (ex.cpu && ex.cuda ? "cpu, cuda" : ex.cuda ? "cuda" : "cpu");
      std::string wanted = opts.emit == Emit::Ptx ? "cuda" : opts.targetCuda && !opts.targetCpu ? "cuda" : "cpu";
      err << "splc: error: no export of '" << opts.input << "' is for " << wanted
          << (opts.emit == Emit::Ptx ? ", so there is no PTX" : "") << " (its exports: " << listed << ")\n";
      return 1;
    }
    // The header's name gives its guard and its tunables' prefix: --header, or -o when the header
    // is what is emitted, else the object's name with .h added.
    std::string headerPath = !opts.header.empty()                           ? opts.header
                             : opts.emit == Emit::Header || opts.output.empty() ? opts.output
                                                                              : opts.output + ".h";
    std::string headerText = codegen::writeHeader(opts.input, headerPath, headerEntries, program->tunables, opts.checked,
                                                  opts.optLevel > 0 && vectors.maskedBytes > 0);
    if (opts.emit == Emit::Header) return writeText(opts, headerText, err) ? 0 : 1;
    if (opts.emit == Emit::Cin) {
      std::string text;
      for (const cin::Kernel &k : kernels) text += cin::print(k) + "\n";
      return writeText(opts, text, err) ? 0 : 1;
    }
    if (opts.emit == Emit::Isl) {  // poly/: domains, schedule, accesses, dependences, verdicts
      std::string text;
      for (const cin::Kernel &k : kernels) text += poly::emitIsl(k) + (opts.islCodegen ? poly::emitIslAst(k) : "") + "\n";
      return writeText(opts, text, err) ? 0 : 1;
    }
    loopir::Module lm;
    lm.plans = plans;
    // poly/: the loops of the loop IR are isl's (whole kernels, region by region).
    if (opts.islCodegen) {
      for (cin::Kernel &k : kernels) {
        k.body = poly::generateFromIsl(k);
        cin::verifyAfter(k, "isl's regeneration of the loops");
      }
      times.done("isl AST -> loops");
    }
    for (cin::Kernel &k : kernels) {
      // The verifier (loopir/Verify.h) runs on what codegen gets, and with --verify-each after
      // Flatten and every pass: a broken invariant is an internal error naming the pass, never
      // a miscompiled kernel.
      lm.functions.push_back(loopir::flatten(k, opts.indexBits));
      loopir::Function &fn = lm.functions.back();
      // Each pass, verified after it with --verify-each; the last one's output (what codegen
      // gets) always.
      std::string lastPass = "Flatten";
      auto pass = [&](const char *name, auto &&run) {
        if (opts.verifyEach) loopir::verifyAfter(fn, lastPass.c_str());
        run();
        lastPass = name;
      };
      if (opts.optLevel > 0) {
        pass("GuardRange", [&] { loopir::restrictGuardedLoops(fn); });
        pass("GatherPrefetch", [&] { loopir::insertGatherPrefetches(fn); });
        pass("StreamPrefetch", [&] { loopir::insertStreamPrefetches(fn); });
        pass("SegmentVersioning (versions)", [&] { loopir::versionSegmentReductions(fn, vectors.maskedBytes); });
        pass("SegmentVersioning (lanes)", [&] { loopir::vectorizeSegmentLanes(fn); });
        pass("PartialSums", [&] { loopir::splitStridedPartialSums(fn); });
        pass("MinMaxReductions", [&] { loopir::guardMinMaxReductions(fn); });
        pass("AlignStreams", [&] { loopir::alignVectorStreams(fn); });
      }
      pass("ParallelScan", [&] { loopir::parallelizeRunningSums(fn); });
      loopir::GpuRowOptions rows;
      rows.mergeByDefault = !opts.gpuRowsVector;
      rows.mergeReads = opts.gpuMergeUnroll;
      rows.mergeBlocksPerSm = opts.gpuMergeMinBlocks;
      rows.mergeLongRowSteps = opts.gpuMergeLongRows;
      rows.mergePrefetch = opts.gpuMergePrefetch;
      pass("GpuRowStrategy", [&] { loopir::chooseGpuRowMappings(fn, rows); });
      pass("GpuWarpRows", [&] { loopir::lowerWarpRows(fn); });
      pass("GpuMergeRows", [&] { loopir::lowerMergeRows(fn, rows); });
      loopir::verifyAfter(fn, lastPass.c_str());
    }
    times.done("loop IR (flatten + passes)");
    if (opts.emit == Emit::LoopIr) {
      std::string text;
      for (const loopir::Function &f : lm.functions) text += loopir::print(f) + "\n";
      for (const loopir::PlanEntry &p : lm.plans) text += loopir::print(p);
      return writeText(opts, text, err) ? 0 : 1;
    }
    if (opts.emit == Emit::Ptx) {
      std::string ptx, ptxError;
      if (!codegen::buildPtx(lm, cg, ptx, ptxError)) {
        err << "splc: error: " << ptxError << "\n";
        return 1;
      }
      times.done("LLVM IR -> PTX");
      return writeText(opts, ptx, err) ? 0 : 1;
    }
    codegen::OutputKind kind = opts.emit == Emit::Ll ? codegen::OutputKind::LlvmIr
                               : opts.emit == Emit::Asm ? codegen::OutputKind::Assembly
                                                        : codegen::OutputKind::Object;
    std::string out, cgError;
    if (!codegen::compileCpu(lm, opts.input, cg, kind, out, cgError)) {
      err << "splc: error: " << cgError << "\n";
      return 1;
    }
    times.done("LLVM IR -> object (+ PTX)");
    if (kind == codegen::OutputKind::Object && opts.output.empty() && !opts.emitGiven) {
      err << "splc: error: an object file needs -o FILE (or -o - for standard output)\n";
      return 1;
    }
    // Standard output is `-`; an object is binary, never written to a terminal.
    if (kind == codegen::OutputKind::Object && (opts.output.empty() || opts.output == "-") && isatty(STDOUT_FILENO)) {
      err << "splc: error: refusing to write an object file to a terminal (use -o FILE, or redirect standard output)\n";
      return 1;
    }
    if (opts.header == "-" && (opts.output.empty() || opts.output == "-")) {
      err << "splc: error: --header - and the " << (kind == codegen::OutputKind::Object ? "object" : "output")
          << " would both go to standard output (give one of them a file)\n";
      return 1;
    }
    if (!writeText(opts, out, err)) return 1;
    if (opts.depfile && !writeDepfile(opts, sm, err)) return 1;
    if (opts.header == "-") {
      std::cout << headerText;
      std::cout.flush();
    } else if (!opts.header.empty()) {
      std::ofstream h(opts.header, std::ios::binary);
      if (!h || !(h << headerText)) {
        err << "splc: error: cannot write '" << opts.header << "'\n";
        return 1;
      }
    }
    return 0;
  } catch (const CompileError &e) {
    diags.error(e.loc, e.what());
    diags.flush(err);
    return 1;
  } catch (const NotSupported &e) {
    diags.error(e.loc, std::string("not supported yet: ") + e.what());
    diags.flush(err);
    return 1;
  } catch (const InternalError &e) {
    // A compiler bug, never the user's error: exit 2, with where in the program it happened.
    diags.flush(err);
    if (e.loc.valid())
      err << sm.path(e.loc.file) << ":" << e.loc.line << ":" << e.loc.col << ": " << e.what() << "\n";
    else
      err << "splc: " << e.what() << "\n";
    return 2;
  } catch (const std::exception &e) {
    diags.flush(err);
    err << "splc: internal compiler error: " << e.what() << "\n";
    return 2;
  } catch (...) {
    // A library's own exception type that a stage let through (every stage converts isl's):
    // still a compiler bug, never a crash.
    diags.flush(err);
    err << "splc: internal compiler error: an exception of an unknown type\n";
    return 2;
  }
}

}  // namespace spl
