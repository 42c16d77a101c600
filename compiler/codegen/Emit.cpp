/// \file Emit.cpp: the target machine, the optimisation pipeline and output (see EmitLLVM.h).
/// Objects are compiled for the host CPU by default (like -march=native: splc runs where the
/// kernels are built), with position-independent code so they link into shared libraries too.
#include <memory>
#include <mutex>
#include <set>

#include "codegen/EmitLLVM.h"
#include "support/Error.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/TargetParser/Triple.h>

namespace spl::codegen {
namespace {

/// Bytes a CPU loop header is aligned to at -O2 and above (see makeTargetMachine).
constexpr unsigned kLoopAlignment = 64;

void initTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const CodeGenOptions &opts, std::string &error) {
  initTargets();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return nullptr;
  std::string cpu = opts.cpu.empty() ? std::string(llvm::sys::getHostCPUName()) : opts.cpu;
  std::string features = opts.features;
  if (features.empty() && opts.cpu.empty()) {
    llvm::SubtargetFeatures f;
    for (const auto &[name, on] : llvm::sys::getHostCPUFeatures()) f.AddFeature(name, on);
    features = f.getString();
  }
  llvm::TargetOptions to;
  // Loop headers start a 64-byte line (the x86 default is 16): a kernel's short inner loops then
  // sit the same way in the instruction cache wherever the linker puts the object. Without it,
  // the same BCSR kernel ran 30% slower after an unrelated kernel in the program grew and moved
  // it by 32 bytes (2.38 ms against 1.64, consph's mirror, 2-core AMD EPYC).
  if (opts.optLevel >= 2) to.LoopAlignment = kLoopAlignment;
  llvm::CodeGenOptLevel ol = opts.optLevel == 0 ? llvm::CodeGenOptLevel::None
                             : opts.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                             : opts.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                                  : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, cpu, features, to, llvm::Reloc::PIC_, std::nullopt, ol));
  if (!tm) error = "cannot create a target machine for " + triple.str();
  return tm;
}

std::unique_ptr<llvm::TargetMachine> makeDeviceMachine(const CodeGenOptions &opts, std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  llvm::Triple triple("nvptx64-nvidia-cuda");
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return nullptr;
  llvm::TargetOptions to;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(triple, opts.gpuArch, "", to, std::nullopt, std::nullopt,
                                                                      llvm::CodeGenOptLevel::Aggressive));
  if (!tm) error = "cannot create the NVPTX target machine for " + opts.gpuArch;
  return tm;
}

}  // namespace

bool cpuVectors(const CodeGenOptions &opts, CpuVectors &out, std::string &error) {
  initTargets();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return false;
  if (!opts.cpu.empty()) {
    // Asked before any target machine is made: LLVM only warns about an unknown name, and would
    // then compile for a generic CPU.
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, "", ""));
    if (!sti || !sti->isCPUStringValid(opts.cpu)) {
      error = "unknown CPU '" + opts.cpu + "' for " + triple.str() + " (LLVM's names, as clang's -march)";
      return false;
    }
  }
  auto tm = makeTargetMachine(opts, error);
  if (!tm) return false;
  // AVX-512's mask registers make a masked load or gather as cheap as a plain one; AVX2's
  // masked gathers take a vector mask and run slower than scalar loads on some CPUs. Masked
  // rows gather x, so they also need gathers that LLVM's tuning calls fast: Intel's AVX-512
  // CPUs, not AMD's Zen 4 and 5, whose 512-bit gathers made the stdlib's CSR kernel 2.6-4.5x
  // slower than scalar rows (2-core EPYC, Zen 5, f64, one thread: rma10 1.47 against 0.57 ms,
  // pwtk 10.1 against 2.25).
  const llvm::MCSubtargetInfo *sti = tm->getMCSubtargetInfo();
  out.maskedBytes = sti->checkFeatures("+avx512f") && sti->checkFeatures("+fast-gather") ? 64 : 0;
  // The register file as LLVM's cost model sees it for a kernel that prefers the widest vectors,
  // as one holding a register tile does (CodeGenCpu's attributes): 512 bits on an AVX-512 CPU
  // whatever --prefer-vector-width says of the other kernels.
  llvm::LLVMContext context;
  llvm::Module probeModule("cpu-vectors", context);
  llvm::Function *probe = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
                                                 llvm::GlobalValue::ExternalLinkage, "probe", probeModule);
  probe->addFnAttr("prefer-vector-width", "512");
  llvm::TargetTransformInfo tti = tm->getTargetTransformInfo(*probe);
  out.registers = tti.getNumberOfRegisters(tti.getRegisterClassForType(/*Vector=*/true));
  out.bits = static_cast<int>(tti.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector).getFixedValue());
  return true;
}

bool prepareDeviceModule(llvm::Module &m, const CodeGenOptions &opts, std::string &error) {
  auto tm = makeDeviceMachine(opts, error);
  if (!tm) return false;
  m.setTargetTriple(tm->getTargetTriple());
  m.setDataLayout(tm->createDataLayout());
  return true;
}

namespace {

/// The defined functions of a device module that reach a convergent operation (a warp shuffle
/// or vote, a barrier: the NVVM intrinsics are convergent), directly or through the functions
/// they call.
std::set<llvm::Function *> reachingConvergent(llvm::Module &m) {
  std::set<llvm::Function *> reaching;
  for (bool changed = true; changed;) {
    changed = false;
    for (llvm::Function &f : m) {
      if (f.isDeclaration() || reaching.count(&f)) continue;
      bool reaches = false;
      for (llvm::BasicBlock &bb : f)
        for (llvm::Instruction &inst : bb)
          if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
            llvm::Function *callee = call->getCalledFunction();
            if (callee ? (callee->isDeclaration() ? callee->isConvergent() : reaching.count(callee) > 0)
                       : call->isConvergent())
              reaches = true;
          }
      if (reaches) changed = reaching.insert(&f).second || changed;
    }
  }
  return reaching;
}

}  // namespace

bool optimizeDeviceModule(llvm::Module &m, const CodeGenOptions &opts, std::string &error) {
  auto tm = makeDeviceMachine(opts, error);
  if (!tm) return false;
  // Every function that reaches a synchronisation is convergent, so that the optimiser never
  // makes which copy of it a thread reaches depend on more than the source does (it copied the
  // runtime scan's helper calls into thread-dependent branches, issue 21); checked again after
  // the pipeline, on the code the PTX comes from.
  for (llvm::Function *f : reachingConvergent(m)) f->setConvergent();
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }
  for (llvm::Function *f : reachingConvergent(m))
    internal_assert(f->isConvergent()) << "device function " << f->getName().str()
                                       << " reaches a synchronisation but is not convergent";
  return true;
}

bool emitPtx(llvm::Module &m, const CodeGenOptions &opts, std::string &ptx, std::string &error) {
  if (!optimizeDeviceModule(m, opts, error)) return false;
  auto tm = makeDeviceMachine(opts, error);
  if (!tm) return false;
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream bos(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, bos, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX target cannot emit PTX";
    return false;
  }
  pm.run(m);
  ptx.assign(buffer.begin(), buffer.end());
  return true;
}

bool prepareModule(llvm::Module &m, const CodeGenOptions &opts, std::string &error) {
  auto tm = makeTargetMachine(opts, error);
  if (!tm) return false;
  m.setTargetTriple(tm->getTargetTriple());
  m.setDataLayout(tm->createDataLayout());
  return true;
}

bool optimizeAndEmit(llvm::Module &m, const CodeGenOptions &opts, OutputKind kind, std::string &out, std::string &error) {
  auto tm = makeTargetMachine(opts, error);
  if (!tm) return false;
  // A function's target-features replace the target machine's, so the marked ones get all of
  // them and the tuning flag that keeps the vectorisers from gathering.
  for (llvm::Function &f : m)
    if (f.hasFnAttribute(kNoGathersAttribute)) {
      std::string features = tm->getTargetFeatureString().str();
      f.addFnAttr("target-features", features.empty() ? "+prefer-no-gather" : features + ",+prefer-no-gather");
      f.removeFnAttr(kNoGathersAttribute);
    }
  if (opts.optLevel > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = opts.optLevel >= 2;
    pto.SLPVectorization = opts.optLevel >= 2;
    pto.LoopUnrolling = opts.optLevel >= 2;
    llvm::PassBuilder pb(tm.get(), pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = opts.optLevel == 1 ? llvm::OptimizationLevel::O1
                                    : opts.optLevel == 2 ? llvm::OptimizationLevel::O2
                                                         : llvm::OptimizationLevel::O3;
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
    mpm.run(m, mam);
  }
  llvm::raw_string_ostream os(out);
  if (kind == OutputKind::LlvmIr) {
    m.print(os, nullptr);
    os.flush();
    return true;
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream bos(buffer);
  llvm::legacy::PassManager pm;
  llvm::CodeGenFileType ft = kind == OutputKind::Object ? llvm::CodeGenFileType::ObjectFile : llvm::CodeGenFileType::AssemblyFile;
  if (tm->addPassesToEmitFile(pm, bos, nullptr, ft)) {
    error = "the target cannot emit this kind of file";
    return false;
  }
  pm.run(m);
  out.assign(buffer.begin(), buffer.end());
  return true;
}

}  // namespace spl::codegen
