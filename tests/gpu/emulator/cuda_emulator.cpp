/* cuda_emulator.cpp: libspl_cuda_emulator.so, a stand-in for libcuda.so.1 that runs SPL's
 * kernels on the CPU, so that the GPU execution tests run (and can fail) on machines without a
 * GPU, CI included.
 *
 * What it takes: objects built with `splc --gpu-emulator`, whose host stubs hand the driver an
 * image "SPLEMU01" + u64 size + the LLVM bitcode of the device module (the NVPTX module before
 * PTX emission). The runtime loads this library instead of libcuda.so.1 when SPL_CUDA_DRIVER
 * names it. Other PTX images (objects built without --gpu-emulator) are refused with
 * CUDA_ERROR_NOT_SUPPORTED and a message in the JIT log, except the PTX of the runtime's own
 * Sigma scan (entries spl_rt_scan_*): the build generates that PTX from runtime/src/sigma_scan.ll,
 * whose path it passes in SPL_RT_SCAN_IR_PATH, and the emulator JITs that file instead, so the
 * runtime's device scan, and the kernels consuming it, are tested too.
 *
 * How it runs a kernel: the module is retargeted to the host (triple, data layout, kernels'
 * PTX_Kernel calling convention to C, NVPTX function attributes dropped), every llvm.nvvm.*
 * intrinsic it calls becomes a call into this file (special registers, shfl.sync, bar.sync),
 * each kernel gets an entry `void spl_emu_entry.K(void **params)` that unpacks cuLaunchKernel's
 * parameter array, and ORC's LLJIT compiles it. A launch runs the blocks one after another, in
 * an order that varies from launch to launch (forward, reverse, shuffled; SPL_EMU_BLOCK_ORDER
 * fixes one), since a GPU promises none; the threads of a block are fibers on the calling
 * thread, switched only at shuffles and barriers (a kernel without them runs each thread
 * straight through), taking turns in an order that varies too (SPL_EMU_THREAD_ORDER): a warp's
 * lanes are not run in lockstep, as since sm_70 a GPU does not either. On x86-64 a fiber switch
 * is six pushes, a stack swap and six pops (ucontext's swapcontext makes a system call per
 * switch, which made a test with millions of shuffles take a minute); elsewhere it is
 * swapcontext.
 *
 * What it checks that a GPU would not report: a shuffle or barrier reached from different
 * places by the threads of one warp/block (divergence; every device function is inlined
 * first, so a place is a whole call chain), a shuffle whose mask names a lane that has exited,
 * and a block in which no thread can go on (deadlock); each fails the launch
 * with CUDA_ERROR_LAUNCH_FAILED and a line on stderr; a launch still running after
 * SPL_EMU_LAUNCH_TIMEOUT seconds (a block waiting for another) ends the process with a line
 * naming the kernel and block. Fresh allocations are filled with 0xff
 * bytes (NaN, -1), so reading memory nobody wrote shows in the results.
 *
 * What it does not model: concurrency between threads (fibers run in turn, so races do not
 * show), timing, dynamic shared memory, streams (everything is synchronous), several devices.
 */
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <memory>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace {

typedef int CUresult;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;

constexpr int kJitErrorLogBuffer = 5;      // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSize = 6;  // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
constexpr size_t kFiberStack = 256 * 1024;

std::mutex emulator_mutex;  // one launch or module load at a time

// ---- kernels, modules --------------------------------------------------------------------------

struct EmuFunction {
  std::string name;
  void (*entry)(void **params) = nullptr;
  bool synchronises = false;  // reaches a shuffle or barrier: its threads need fibers
};

struct EmuModule {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, std::unique_ptr<EmuFunction>> functions;
};

// ---- the launch being run ----------------------------------------------------------------------

/// A rendezvous of a warp (shuffles) or a block (barriers): everyone expected arrives from one
/// call site, then the generation moves on and all continue.
struct SyncPoint {
  unsigned expected = 0, arrived = 0;
  uint64_t generation = 0;
  const void *site = nullptr;
};

/// What a thread did (the cost report): instructions executed (LLVM IR instructions of the
/// optimised device code, which the PTX follows closely), bytes loaded and stored through
/// memory other than shared memory, and atomic operations.
struct Cost {
  uint64_t instructions = 0, loadBytes = 0, storeBytes = 0, atomics = 0;
};

struct Fiber {
  ucontext_t context;   // the swapcontext fallback
  void *sp = nullptr;   // x86-64: the saved stack pointer
  unsigned tid[3] = {0, 0, 0};
  unsigned warp = 0, lane = 0;
  bool done = false;
  Cost cost;
};

struct Warp {
  SyncPoint sync;
  unsigned members = 0;  // threads of the block in this warp
  uint64_t slots[32] = {};
};

struct Launch {
  EmuFunction *function = nullptr;
  void **params = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, ctaid[3] = {0, 0, 0};
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  SyncPoint barrier;
  Fiber *current = nullptr;
  ucontext_t scheduler;
  void *schedulerSp = nullptr;
  uint64_t progress = 0;
  bool failed = false;
  std::string failure;
};

Launch *active = nullptr;

/// Where the instrumented kernels add their costs: the running thread's Cost (set whenever the
/// scheduler switches threads), or a scratch Cost outside launches.
Cost scratchCost;
extern "C" Cost *spl_emu_cost_cell;
Cost *spl_emu_cost_cell = &scratchCost;

/// The costs of the launches since spl_emu_cost_reset (the cost report).
struct LaunchCost {
  char kernel[96];
  uint64_t threads, instructions, maxThreadInstructions, loadBytes, storeBytes, atomics;
  /// The sum over warps of the instructions of the warp's busiest lane: about the instructions a
  /// GPU issues (a warp issues each instruction once for its lanes), where `instructions` counts
  /// every lane's, idle lanes' work included.
  uint64_t warpInstructions;
};
std::vector<LaunchCost> launchCosts;

/// What the driver was asked to do, for tests of per-call overhead (spl_emu_counts).
struct Counts {
  uint64_t allocs = 0, frees = 0, launches = 0;
} counts;

#if defined(__x86_64__)
constexpr bool kFastSwitch = true;
// Saves the callee-saved registers on the current stack, stores its pointer in *from, and
// continues on the stack `to` (whose top holds the same six registers and a return address).
extern "C" void spl_emu_switch(void **from, void *to);
asm(R"(
  .text
  .p2align 4
  .type spl_emu_switch,@function
spl_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size spl_emu_switch, .-spl_emu_switch
)");
#else
constexpr bool kFastSwitch = false;
extern "C" void spl_emu_switch(void **, void *) { std::abort(); }
#endif

void fail(const std::string &why) {
  if (!active->failed) {
    active->failed = true;
    active->failure = why;
  }
}

/// Back to the scheduler; a failed launch never resumes this fiber.
void yield() {
  Fiber &f = *active->current;
  if (kFastSwitch)
    spl_emu_switch(&f.sp, active->schedulerSp);
  else
    swapcontext(&f.context, &active->scheduler);
}

void arrive(SyncPoint &s, const void *site, const char *what) {
  Launch &l = *active;
  if (s.arrived == 0)
    s.site = site;
  else if (s.site != site)
    fail(std::string("divergent ") + what + ": threads reached it from two different places");
  ++s.arrived;
  ++l.progress;
  uint64_t generation = s.generation;
  if (s.arrived >= s.expected) {
    s.arrived = 0;
    ++s.generation;
    return;
  }
  while (s.generation == generation) {
    yield();
    if (l.failed) {
      for (;;) yield();
    }
  }
}

unsigned linearThread(const Fiber &f) {
  return f.tid[0] + active->block[0] * (f.tid[1] + active->block[1] * f.tid[2]);
}

// ---- what the llvm.nvvm.* intrinsics become ------------------------------------------------------

extern "C" {
int32_t spl_emu_tid_x() { return static_cast<int32_t>(active->current->tid[0]); }
int32_t spl_emu_tid_y() { return static_cast<int32_t>(active->current->tid[1]); }
int32_t spl_emu_tid_z() { return static_cast<int32_t>(active->current->tid[2]); }
int32_t spl_emu_ntid_x() { return static_cast<int32_t>(active->block[0]); }
int32_t spl_emu_ntid_y() { return static_cast<int32_t>(active->block[1]); }
int32_t spl_emu_ntid_z() { return static_cast<int32_t>(active->block[2]); }
int32_t spl_emu_ctaid_x() { return static_cast<int32_t>(active->ctaid[0]); }
int32_t spl_emu_ctaid_y() { return static_cast<int32_t>(active->ctaid[1]); }
int32_t spl_emu_ctaid_z() { return static_cast<int32_t>(active->ctaid[2]); }
int32_t spl_emu_nctaid_x() { return static_cast<int32_t>(active->grid[0]); }
int32_t spl_emu_nctaid_y() { return static_cast<int32_t>(active->grid[1]); }
int32_t spl_emu_nctaid_z() { return static_cast<int32_t>(active->grid[2]); }
int32_t spl_emu_laneid() { return static_cast<int32_t>(active->current->lane); }
int32_t spl_emu_warpsize() { return 32; }

void spl_emu_barrier(int32_t) {
  const void *site = __builtin_return_address(0);
  arrive(active->barrier, site, "barrier");
}
}

enum class ShuffleMode { Up, Down, Butterfly, Index };

/// shfl.sync as PTX defines it: c packs the clamp (bits 0-4) and the segment mask (bits 8-12);
/// a source lane outside [minLane, maxLane] (or past the block) leaves the own value.
template <ShuffleMode Mode>
uint64_t shuffle(uint32_t mask, uint64_t value, uint32_t b, uint32_t c, const void *site) {
  Launch &l = *active;
  Fiber &f = *l.current;
  Warp &w = l.warps[f.warp];
  for (unsigned lane = 0; lane < w.members; ++lane) {
    bool named = (mask >> lane) & 1u;
    if (named && l.fibers[f.warp * 32 + lane].done) fail("shfl.sync names a lane that has exited");
  }
  if (!((mask >> f.lane) & 1u)) fail("shfl.sync by a lane missing from its own mask");
  w.slots[f.lane] = value;
  arrive(w.sync, site, "shfl.sync");
  unsigned lane = f.lane, bval = b & 31u, clamp = c & 31u, segmask = (c >> 8) & 31u;
  unsigned maxLane = (lane & segmask) | (clamp & ~segmask), minLane = lane & segmask;
  int source = static_cast<int>(lane);
  bool inRange = true;
  switch (Mode) {
    case ShuffleMode::Up:
      source = static_cast<int>(lane) - static_cast<int>(bval);
      inRange = source >= static_cast<int>(minLane);
      break;
    case ShuffleMode::Down:
      source = static_cast<int>(lane + bval);
      inRange = source <= static_cast<int>(maxLane);
      break;
    case ShuffleMode::Butterfly:
      source = static_cast<int>(lane ^ bval);
      inRange = source <= static_cast<int>(maxLane);
      break;
    case ShuffleMode::Index:
      source = static_cast<int>(minLane | (bval & ~segmask));
      inRange = source <= static_cast<int>(maxLane);
      break;
  }
  uint64_t result = value;
  if (inRange && source >= 0 && static_cast<unsigned>(source) < w.members && ((mask >> source) & 1u))
    result = w.slots[source];
  // Nobody may overwrite a slot before every lane has read the one it needs.
  arrive(w.sync, static_cast<const char *>(site) + 1, "shfl.sync");
  return result;
}

template <ShuffleMode Mode>
int32_t shuffleI32(uint32_t mask, int32_t v, uint32_t b, uint32_t c) {
  uint64_t bits = static_cast<uint32_t>(v);
  return static_cast<int32_t>(static_cast<uint32_t>(shuffle<Mode>(mask, bits, b, c, __builtin_return_address(0))));
}

template <ShuffleMode Mode>
float shuffleF32(uint32_t mask, float v, uint32_t b, uint32_t c) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits = static_cast<uint32_t>(shuffle<Mode>(mask, bits, b, c, __builtin_return_address(0)));
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

/// bar.warp.sync (__syncwarp): the lanes named in the mask meet; the mask must name every lane
/// of the warp that is still running and the calling lane itself.
void spl_emu_warp_sync(uint32_t mask) {
  Launch &l = *active;
  Fiber &f = *l.current;
  Warp &w = l.warps[f.warp];
  for (unsigned lane = 0; lane < w.members; ++lane)
    if (((mask >> lane) & 1u) && l.fibers[f.warp * 32 + lane].done) fail("bar.warp.sync names a lane that has exited");
  if (!((mask >> f.lane) & 1u)) fail("bar.warp.sync by a lane missing from its own mask");
  arrive(w.sync, __builtin_return_address(0), "bar.warp.sync");
}

/// vote.ballot.sync: the mask of the warp's lanes whose predicate holds. The predicate is an
/// LLVM i1: only its lowest bit is defined.
uint32_t spl_emu_ballot(uint32_t mask, uint32_t pred) {
  const void *site = __builtin_return_address(0);
  Launch &l = *active;
  Fiber &f = *l.current;
  Warp &w = l.warps[f.warp];
  for (unsigned lane = 0; lane < w.members; ++lane)
    if (((mask >> lane) & 1u) && l.fibers[f.warp * 32 + lane].done) fail("vote.ballot.sync names a lane that has exited");
  if (!((mask >> f.lane) & 1u)) fail("vote.ballot.sync by a lane missing from its own mask");
  w.slots[f.lane] = pred & 1u;
  arrive(w.sync, site, "vote.ballot.sync");
  uint32_t result = 0;
  for (unsigned lane = 0; lane < w.members; ++lane)
    if (((mask >> lane) & 1u) && w.slots[lane]) result |= 1u << lane;
  // Nobody may overwrite a slot before every lane has read them all.
  arrive(w.sync, static_cast<const char *>(site) + 1, "vote.ballot.sync");
  return result;
}

struct Replacement {
  const char *intrinsic;
  void *address;
  bool synchronises;
};

const std::vector<Replacement> &replacements() {
  static const std::vector<Replacement> table = {
      {"llvm.nvvm.read.ptx.sreg.tid.x", reinterpret_cast<void *>(&spl_emu_tid_x), false},
      {"llvm.nvvm.read.ptx.sreg.tid.y", reinterpret_cast<void *>(&spl_emu_tid_y), false},
      {"llvm.nvvm.read.ptx.sreg.tid.z", reinterpret_cast<void *>(&spl_emu_tid_z), false},
      {"llvm.nvvm.read.ptx.sreg.ntid.x", reinterpret_cast<void *>(&spl_emu_ntid_x), false},
      {"llvm.nvvm.read.ptx.sreg.ntid.y", reinterpret_cast<void *>(&spl_emu_ntid_y), false},
      {"llvm.nvvm.read.ptx.sreg.ntid.z", reinterpret_cast<void *>(&spl_emu_ntid_z), false},
      {"llvm.nvvm.read.ptx.sreg.ctaid.x", reinterpret_cast<void *>(&spl_emu_ctaid_x), false},
      {"llvm.nvvm.read.ptx.sreg.ctaid.y", reinterpret_cast<void *>(&spl_emu_ctaid_y), false},
      {"llvm.nvvm.read.ptx.sreg.ctaid.z", reinterpret_cast<void *>(&spl_emu_ctaid_z), false},
      {"llvm.nvvm.read.ptx.sreg.nctaid.x", reinterpret_cast<void *>(&spl_emu_nctaid_x), false},
      {"llvm.nvvm.read.ptx.sreg.nctaid.y", reinterpret_cast<void *>(&spl_emu_nctaid_y), false},
      {"llvm.nvvm.read.ptx.sreg.nctaid.z", reinterpret_cast<void *>(&spl_emu_nctaid_z), false},
      {"llvm.nvvm.read.ptx.sreg.laneid", reinterpret_cast<void *>(&spl_emu_laneid), false},
      {"llvm.nvvm.read.ptx.sreg.warpsize", reinterpret_cast<void *>(&spl_emu_warpsize), false},
      {"llvm.nvvm.barrier.cta.sync.aligned.all", reinterpret_cast<void *>(&spl_emu_barrier), true},
      {"llvm.nvvm.barrier0", reinterpret_cast<void *>(&spl_emu_barrier), true},
      {"llvm.nvvm.shfl.sync.down.i32", reinterpret_cast<void *>(&shuffleI32<ShuffleMode::Down>), true},
      {"llvm.nvvm.shfl.sync.down.f32", reinterpret_cast<void *>(&shuffleF32<ShuffleMode::Down>), true},
      {"llvm.nvvm.shfl.sync.up.i32", reinterpret_cast<void *>(&shuffleI32<ShuffleMode::Up>), true},
      {"llvm.nvvm.shfl.sync.up.f32", reinterpret_cast<void *>(&shuffleF32<ShuffleMode::Up>), true},
      {"llvm.nvvm.shfl.sync.bfly.i32", reinterpret_cast<void *>(&shuffleI32<ShuffleMode::Butterfly>), true},
      {"llvm.nvvm.shfl.sync.bfly.f32", reinterpret_cast<void *>(&shuffleF32<ShuffleMode::Butterfly>), true},
      {"llvm.nvvm.shfl.sync.idx.i32", reinterpret_cast<void *>(&shuffleI32<ShuffleMode::Index>), true},
      {"llvm.nvvm.shfl.sync.idx.f32", reinterpret_cast<void *>(&shuffleF32<ShuffleMode::Index>), true},
      {"llvm.nvvm.bar.warp.sync", reinterpret_cast<void *>(&spl_emu_warp_sync), true},
      {"llvm.nvvm.vote.ballot.sync", reinterpret_cast<void *>(&spl_emu_ballot), true},
  };
  return table;
}

std::string emulatedName(const std::string &intrinsic) { return "spl_emu." + intrinsic.substr(5); }

// ---- loading a module ----------------------------------------------------------------------------

void writeLog(unsigned numOptions, const int *options, void **values, const std::string &text) {
  char *buffer = nullptr;
  size_t size = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == kJitErrorLogBuffer) buffer = static_cast<char *>(values[i]);
    if (options[i] == kJitErrorLogBufferSize) size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (buffer != nullptr && size > 0) std::snprintf(buffer, size, "%s", text.c_str());
}

/// Adds the cost report's counting to every block of every function of the device code: on
/// entry, the block adds its instruction count, the bytes its loads and stores move outside
/// shared memory (address space 3) and its atomics to the running thread's Cost
/// (spl_emu_cost_cell). Counted before the emulator's own entries are added.
void instrument(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  auto *cell = new llvm::GlobalVariable(m, llvm::PointerType::get(ctx, 0), false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                        "spl_emu_cost_cell");
  const llvm::DataLayout &layout = m.getDataLayout();
  auto bytesOf = [&](llvm::Type *t) { return static_cast<uint64_t>(layout.getTypeStoreSize(t)); };
  auto outsideShared = [](llvm::Value *ptr) { return ptr->getType()->getPointerAddressSpace() != 3 && !llvm::isa<llvm::AllocaInst>(ptr); };
  for (llvm::Function &f : m.functions()) {
    if (f.isDeclaration() || f.getName().starts_with("spl_emu_entry.")) continue;
    for (llvm::BasicBlock &bb : f) {
      uint64_t counts[4] = {0, 0, 0, 0};  // instructions, loaded, stored, atomics
      for (llvm::Instruction &inst : bb) {
        if (llvm::isa<llvm::PHINode>(inst) || inst.isDebugOrPseudoInst()) continue;
        ++counts[0];
        if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
          if (outsideShared(load->getPointerOperand())) counts[1] += bytesOf(load->getType());
        } else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
          if (outsideShared(store->getPointerOperand())) counts[2] += bytesOf(store->getValueOperand()->getType());
        } else if (llvm::isa<llvm::AtomicRMWInst>(inst) || llvm::isa<llvm::AtomicCmpXchgInst>(inst)) {
          ++counts[3];
        }
      }
      llvm::IRBuilder<> b(&*bb.getFirstInsertionPt());
      llvm::Value *cost = b.CreateLoad(llvm::PointerType::get(ctx, 0), cell);
      for (unsigned k = 0; k < 4; ++k) {
        if (counts[k] == 0) continue;
        llvm::Value *field = b.CreateConstInBoundsGEP1_64(i64, cost, k);
        b.CreateStore(b.CreateAdd(b.CreateLoad(i64, field), b.getInt64(counts[k])), field);
      }
    }
  }
}

/// Retargets the NVPTX module to the host and adds the entries; the kernels it had, or an error.
/// Inlines every call of a defined function that is not a kernel, until none is left (device
/// code does not recurse: a cycle is refused).
bool inlineDeviceCalls(llvm::Module &m, std::string &error) {
  for (int round = 0;; ++round) {
    std::vector<llvm::CallBase *> calls;
    for (llvm::Function &f : m.functions())
      for (llvm::BasicBlock &bb : f)
        for (llvm::Instruction &inst : bb)
          if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
            if (llvm::Function *callee = call->getCalledFunction())
              if (!callee->isDeclaration() && callee->getCallingConv() != llvm::CallingConv::PTX_Kernel)
                calls.push_back(call);
    if (calls.empty()) return true;
    if (round == 64) {
      error = "device functions call each other recursively (" + calls[0]->getCalledFunction()->getName().str() + ")";
      return false;
    }
    for (llvm::CallBase *call : calls) {
      llvm::InlineFunctionInfo info;
      llvm::InlineResult r = llvm::InlineFunction(*call, info);
      if (!r.isSuccess()) {
        error = "cannot inline " + call->getCalledFunction()->getName().str() + ": " + r.getFailureReason();
        return false;
      }
    }
  }
}

bool prepareForHost(llvm::Module &m, const llvm::DataLayout &layout, const llvm::Triple &triple,
                    std::vector<std::pair<std::string, bool>> &kernels, std::string &error) {
  // Every call of a device function is inlined first, so that a shuffle or barrier is named by
  // its whole call chain: a helper called from two thread-dependent places (the optimiser
  // copies calls into both arms of a branch) is two places here, as it may be after ptxas, and
  // lanes that reach it from different places are divergent (issue 21).
  if (!inlineDeviceCalls(m, error)) return false;
  std::map<std::string, bool> synchronising;
  for (llvm::Function &f : llvm::make_early_inc_range(m.functions())) {
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    if (!f.isDeclaration() || !f.getName().starts_with("llvm.nvvm.")) continue;
    std::string name = f.getName().str();
    const Replacement *r = nullptr;
    for (const Replacement &candidate : replacements())
      if (name == candidate.intrinsic) r = &candidate;
    if (r == nullptr) {
      error = "the emulator does not know the intrinsic " + name;
      return false;
    }
    llvm::Function *host =
        llvm::Function::Create(f.getFunctionType(), llvm::GlobalValue::ExternalLinkage, emulatedName(name), m);
    synchronising[host->getName().str()] = r->synchronises;
    // Each call of a synchronisation stays where it is: the JIT's code generator would merge
    // identical calls in the two arms of a branch into one (tail merging), and the emulator
    // tells the places apart by the call's return address.
    if (r->synchronises) host->addFnAttr(llvm::Attribute::NoMerge);
    f.replaceAllUsesWith(host);
    f.eraseFromParent();
  }
  m.setTargetTriple(triple);
  m.setDataLayout(layout);
  std::vector<llvm::Function *> entries;
  for (llvm::Function &f : m.functions())
    if (f.getCallingConv() == llvm::CallingConv::PTX_Kernel) entries.push_back(&f);
  // A function synchronises when it calls one that does (the runtime's scan kernels reach
  // their shuffles through helper functions): propagate to a fixed point.
  for (bool changed = true; changed;) {
    changed = false;
    for (llvm::Function &f : m.functions()) {
      if (f.isDeclaration() || synchronising[f.getName().str()]) continue;
      for (llvm::BasicBlock &bb : f)
        for (llvm::Instruction &inst : bb)
          if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
            if (llvm::Function *callee = call->getCalledFunction())
              if (synchronising[callee->getName().str()] && !synchronising[f.getName().str()]) {
                synchronising[f.getName().str()] = true;
                changed = true;
              }
    }
  }
  llvm::LLVMContext &ctx = m.getContext();
  for (llvm::Function *k : entries) {
    k->setCallingConv(llvm::CallingConv::C);
    bool syncs = synchronising[k->getName().str()];
    for (llvm::BasicBlock &bb : *k)
      for (llvm::Instruction &inst : bb)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
          if (call->getCallingConv() == llvm::CallingConv::PTX_Kernel) call->setCallingConv(llvm::CallingConv::C);
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {llvm::PointerType::get(ctx, 0)}, false);
    auto *entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "spl_emu_entry." + k->getName(), m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    std::vector<llvm::Value *> args;
    for (llvm::Argument &a : k->args()) {
      llvm::Value *slot = b.CreateLoad(b.getPtrTy(), b.CreateConstGEP1_64(b.getPtrTy(), entry->getArg(0), a.getArgNo()));
      args.push_back(b.CreateLoad(a.getType(), slot));
    }
    b.CreateCall(k, args);
    b.CreateRetVoid();
    kernels.emplace_back(k->getName().str(), syncs);
  }
  instrument(m);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(m, &os)) {
    error = "the retargeted module does not verify: " + os.str();
    return false;
  }
  return true;
}

CUresult loadImage(EmuModule &out, const void *image, std::string &error) {
  const char *bytes = static_cast<const char *>(image);
  bool bitcode = std::memcmp(bytes, "SPLEMU01", 8) == 0;
  bool runtimeScan = !bitcode && std::strstr(bytes, ".entry spl_rt_scan_") != nullptr;
  if (!bitcode && !runtimeScan) {
    error = "the SPL CUDA emulator runs images built with splc --gpu-emulator, not PTX or cubin";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  static std::once_flag targets;
  std::call_once(targets, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    error = "LLJIT: " + llvm::toString(jit.takeError());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::Expected<std::unique_ptr<llvm::Module>> module = nullptr;
  if (runtimeScan) {
    // The IR the runtime's PTX was generated from (runtime/CMakeLists.txt).
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> parsed = llvm::parseIRFile(SPL_RT_SCAN_IR_PATH, diagnostic, *context);
    if (!parsed) {
      error = std::string(SPL_RT_SCAN_IR_PATH) + ": " + diagnostic.getMessage().str();
      return CUDA_ERROR_INVALID_IMAGE;
    }
    module = std::move(parsed);
  } else {
    uint64_t size = 0;
    for (int i = 0; i < 8; ++i) size |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    llvm::MemoryBufferRef buffer(llvm::StringRef(bytes + 16, size), "spl_device");
    module = llvm::parseBitcodeFile(buffer, *context);
  }
  if (!module) {
    error = "bitcode: " + llvm::toString(module.takeError());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  std::vector<std::pair<std::string, bool>> kernels;
  if (!prepareForHost(**module, (*jit)->getDataLayout(), (*jit)->getTargetTriple(), kernels, error))
    return CUDA_ERROR_INVALID_IMAGE;
  llvm::orc::JITDylib &dylib = (*jit)->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  for (const Replacement &r : replacements())
    symbols[(*jit)->mangleAndIntern(emulatedName(r.intrinsic))] = {
        llvm::orc::ExecutorAddr::fromPtr(r.address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[(*jit)->mangleAndIntern("spl_emu_cost_cell")] = {llvm::orc::ExecutorAddr::fromPtr(&spl_emu_cost_cell),
                                                           llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(symbols))) {
    error = "JIT symbols: " + llvm::toString(std::move(e));
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    error = "JIT process symbols: " + llvm::toString(process.takeError());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  dylib.addGenerator(std::move(*process));
  if (llvm::Error e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(*module), std::move(context)))) {
    error = "JIT: " + llvm::toString(std::move(e));
    return CUDA_ERROR_INVALID_IMAGE;
  }
  for (const auto &[name, syncs] : kernels) {
    auto address = (*jit)->lookup("spl_emu_entry." + name);
    if (!address) {
      error = "JIT lookup of " + name + ": " + llvm::toString(address.takeError());
      return CUDA_ERROR_INVALID_IMAGE;
    }
    auto function = std::make_unique<EmuFunction>();
    function->name = name;
    function->entry = address->toPtr<void (*)(void **)>();
    function->synchronises = syncs;
    out.functions[name] = std::move(function);
  }
  out.jit = std::move(*jit);
  return CUDA_SUCCESS;
}

// ---- running a launch ----------------------------------------------------------------------------

void fiberMain() {
  Launch &l = *active;
  Fiber &f = *l.current;
  l.function->entry(l.params);
  f.done = true;
  ++l.progress;
  // An exited thread no longer counts at barriers (as on sm_70 and later).
  if (l.barrier.expected > 0) --l.barrier.expected;
  if (l.barrier.arrived > 0 && l.barrier.arrived >= l.barrier.expected) {
    l.barrier.arrived = 0;
    ++l.barrier.generation;
  }
  // Back to the scheduler (through uc_link for ucontext); never resumed.
  if (kFastSwitch) spl_emu_switch(&f.sp, l.schedulerSp);
}

/// Where a fiber starts on x86-64 (spl_emu_switch returns into it on a fresh stack).
[[noreturn]] void fiberStart() {
  fiberMain();
  std::abort();
}

/// A fresh x86-64 fiber stack: six zero registers under fiberStart's address, so that the
/// first switch to it "returns" into fiberStart with the stack aligned as after a call.
void *freshStack(char *stackBase, size_t size) {
  auto top = reinterpret_cast<uintptr_t>(stackBase + size) & ~uintptr_t(15);
  auto *words = reinterpret_cast<void **>(top);
  words[-1] = nullptr;                                      // fiberStart's (unused) return address
  words[-2] = reinterpret_cast<void *>(&fiberStart);        // where spl_emu_switch returns
  for (int k = 3; k <= 8; ++k) words[-k] = nullptr;         // rbp, rbx, r12 .. r15
  return &words[-8];
}

/// An order to run `count` things in: forward, reverse, or shuffled with `seed`. A GPU promises
/// no order of its blocks, nor of a warp's threads between the points where they synchronise,
/// so a kernel that needs one (a block that waits for another, a lane that reads another lane's
/// write without a shuffle or barrier between them, a result that depends on which ran first)
/// must fail here too, in at least one of the orders. `mode`: the environment variable's value,
/// else the launches take turns.
std::vector<uint64_t> runOrder(uint64_t count, const char *variable, uint64_t turn, uint64_t seed) {
  std::vector<uint64_t> order(count);
  for (uint64_t k = 0; k < count; ++k) order[k] = k;
  const char *env = std::getenv(variable);
  std::string mode = env != nullptr && env[0] != 0 ? env : turn % 3 == 0 ? "forward" : turn % 3 == 1 ? "reverse" : "shuffle";
  if (mode == "reverse") {
    std::reverse(order.begin(), order.end());
  } else if (mode == "shuffle") {
    uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
    for (uint64_t k = count; k > 1; --k) {  // Fisher-Yates with splitmix64
      uint64_t z = (state += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      std::swap(order[k - 1], order[z % k]);
    }
  }
  return order;
}

/// Runs one block. With fibers when the kernel synchronises, else each thread to its end; the
/// threads take turns in the order of SPL_EMU_THREAD_ORDER (forward | reverse | shuffle; by
/// default one that changes with the launch and the block, and differs from the blocks' order).
/// A warp's lanes are not run in lockstep: since sm_70 a GPU schedules a warp's threads
/// independently, and they meet only at the .sync operations, which every lane their mask
/// names must reach from the same place (checked there). Varied orders between those points
/// expose code that assumes lockstep, in one order or the other.
bool runBlock(Launch &l, char *stacks, uint64_t block) {
  unsigned threads = l.block[0] * l.block[1] * l.block[2];
  unsigned warpCount = (threads + 31) / 32;
  l.fibers.assign(threads, Fiber());
  l.warps.assign(warpCount, Warp());
  for (unsigned w = 0; w < warpCount; ++w) {
    l.warps[w].members = std::min(32u, threads - 32 * w);
    l.warps[w].sync.expected = l.warps[w].members;
  }
  l.barrier = SyncPoint();
  l.barrier.expected = threads;
  for (unsigned t = 0; t < threads; ++t) {
    Fiber &f = l.fibers[t];
    f.tid[0] = t % l.block[0];
    f.tid[1] = (t / l.block[0]) % l.block[1];
    f.tid[2] = t / (l.block[0] * l.block[1]);
    f.warp = t / 32;
    f.lane = t % 32;
  }
  const std::vector<uint64_t> order = runOrder(threads, "SPL_EMU_THREAD_ORDER", counts.launches + 1 + block, counts.launches * 65537 + block);
  if (!l.function->synchronises) {
    for (uint64_t t : order) {
      Fiber &f = l.fibers[t];
      l.current = &f;
      spl_emu_cost_cell = &f.cost;
      l.function->entry(l.params);
      f.done = true;
    }
    return true;
  }
  for (unsigned t = 0; t < threads; ++t) {
    Fiber &f = l.fibers[t];
    char *stack = stacks + static_cast<size_t>(t) * kFiberStack;
    if (kFastSwitch) {
      f.sp = freshStack(stack, kFiberStack);
      continue;
    }
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stack;
    f.context.uc_stack.ss_size = kFiberStack;
    f.context.uc_link = &l.scheduler;
    makecontext(&f.context, fiberMain, 0);
  }
  for (;;) {
    bool anyLive = false;
    uint64_t before = l.progress;
    for (uint64_t t : order) {
      Fiber &f = l.fibers[t];
      if (f.done) continue;
      anyLive = true;
      l.current = &f;
      spl_emu_cost_cell = &f.cost;
      if (kFastSwitch)
        spl_emu_switch(&l.schedulerSp, f.sp);
      else
        swapcontext(&l.scheduler, &f.context);
      if (l.failed) return false;
    }
    if (!anyLive) return true;
    if (l.progress == before) {
      fail("deadlock: every thread of the block waits at a shuffle or barrier that cannot complete");
      return false;
    }
  }
}

/// Turns a launch that never ends into a report. Blocks run one at a time here, as they may on a
/// GPU that cannot hold them all, so a block that waits for another block spins forever: after
/// SPL_EMU_LAUNCH_TIMEOUT seconds (default 120) the watchdog names the kernel and the block that
/// was running and ends the process with status 124 (a test's own timeout would only say that
/// it hung).
class LaunchWatchdog {
 public:
  explicit LaunchWatchdog(const Launch &l) : launch_(l) {
    const char *env = std::getenv("SPL_EMU_LAUNCH_TIMEOUT");
    double seconds = env != nullptr && std::atof(env) > 0 ? std::atof(env) : 120.0;
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return finished_; })) return;
      std::fprintf(stderr,
                   "spl cuda emulator: kernel %s, block (%u, %u, %u): still running after %.0f s: does a block wait for "
                   "another block? (blocks run one at a time, as a GPU may run them)\n",
                   launch_.function->name.c_str(), launch_.ctaid[0], launch_.ctaid[1], launch_.ctaid[2], seconds);
      std::fflush(stderr);
      std::_Exit(124);
    });
  }
  ~LaunchWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    done_.notify_one();
    thread_.join();
  }

 private:
  const Launch &launch_;
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread thread_;
};

CUresult runLaunch(Launch &l) {
  LaunchWatchdog watchdog(l);
  unsigned threads = l.block[0] * l.block[1] * l.block[2];
  // Fiber stacks: one mapping, grown when a launch needs more, kept for the next launches.
  static char *stacks = nullptr;
  static size_t stackBytes = 0;
  size_t needed = static_cast<size_t>(threads) * kFiberStack;
  if (l.function->synchronises && needed > stackBytes) {
    if (stacks != nullptr) munmap(stacks, stackBytes);
    void *mapped = mmap(nullptr, needed, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    stacks = nullptr;
    stackBytes = 0;
    if (mapped == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    stacks = static_cast<char *>(mapped);
    stackBytes = needed;
  }
  bool ok = true;
  LaunchCost cost{};
  std::snprintf(cost.kernel, sizeof cost.kernel, "%s", l.function->name.c_str());
  const uint64_t blocks = uint64_t(l.grid[0]) * l.grid[1] * l.grid[2];
  for (uint64_t b : runOrder(blocks, "SPL_EMU_BLOCK_ORDER", counts.launches, counts.launches)) {
    l.ctaid[0] = static_cast<unsigned>(b % l.grid[0]);
    l.ctaid[1] = static_cast<unsigned>(b / l.grid[0] % l.grid[1]);
    l.ctaid[2] = static_cast<unsigned>(b / (uint64_t(l.grid[0]) * l.grid[1]));
    ok = runBlock(l, stacks, b);
    for (size_t w = 0; w * 32 < l.fibers.size(); ++w) {
      uint64_t busiest = 0;
      for (size_t t = w * 32; t < l.fibers.size() && t < w * 32 + 32; ++t) busiest = std::max(busiest, l.fibers[t].cost.instructions);
      cost.warpInstructions += busiest;
    }
    for (const Fiber &f : l.fibers) {
      ++cost.threads;
      cost.instructions += f.cost.instructions;
      cost.maxThreadInstructions = std::max(cost.maxThreadInstructions, f.cost.instructions);
      cost.loadBytes += f.cost.loadBytes;
      cost.storeBytes += f.cost.storeBytes;
      cost.atomics += f.cost.atomics;
    }
    if (!ok) break;
  }
  spl_emu_cost_cell = &scratchCost;
  launchCosts.push_back(cost);
  if (const char *report = std::getenv("SPL_EMU_REPORT"); report != nullptr && report[0] == '1')
    std::fprintf(stderr,
                 "spl cuda emulator: %s: %llu threads, %llu instructions (at most %llu in one thread, %llu issued by warps), "
                 "%llu bytes loaded, %llu stored, %llu atomics\n",
                 cost.kernel, static_cast<unsigned long long>(cost.threads), static_cast<unsigned long long>(cost.instructions),
                 static_cast<unsigned long long>(cost.maxThreadInstructions), static_cast<unsigned long long>(cost.warpInstructions),
                 static_cast<unsigned long long>(cost.loadBytes),
                 static_cast<unsigned long long>(cost.storeBytes), static_cast<unsigned long long>(cost.atomics));
  if (!ok) {
    std::fprintf(stderr, "spl cuda emulator: kernel %s, block (%u, %u, %u): %s\n", l.function->name.c_str(), l.ctaid[0],
                 l.ctaid[1], l.ctaid[2], l.failure.c_str());
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  return CUDA_SUCCESS;
}

int primary_context_cell;  // the one context's address
thread_local void *current_context = nullptr;

}  // namespace

// ---- the driver API --------------------------------------------------------------------------------

extern "C" {

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult cuGetErrorName(CUresult error, const char **name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_INVALID_IMAGE: *name = "CUDA_ERROR_INVALID_IMAGE"; break;
    case CUDA_ERROR_INVALID_HANDLE: *name = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *name = "CUDA_ERROR_LAUNCH_FAILED"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *name = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *name = nullptr; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  if (device == nullptr || ordinal != 0) return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case 1: *value = 1024; break;   // max threads per block
    case 10: *value = 32; break;    // warp size
    case 16: *value = 4; break;     // multiprocessors
    case 115: *value = 1; break;    // memory pools supported
    default: *value = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctx = &primary_context_cell;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(void **ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctx = current_context;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(void *ctx) {
  current_context = ctx;
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned int numOptions, int *options, void **values) {
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(emulator_mutex);
  auto loaded = std::make_unique<EmuModule>();
  std::string error;
  CUresult result = loadImage(*loaded, image, error);
  if (result != CUDA_SUCCESS) {
    writeLog(numOptions, options, values, error);
    return result;
  }
  *module = loaded.release();
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  if (function == nullptr || module == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto *m = static_cast<EmuModule *>(module);
  auto it = m->functions.find(name);
  if (it == m->functions.end()) return CUDA_ERROR_NOT_FOUND;
  *function = it->second.get();
  return CUDA_SUCCESS;
}

/// The cost report for tests: copies up to `max` of the launches recorded since the last
/// spl_emu_cost_reset (kernel name, threads, instructions in all and in the busiest thread,
/// bytes loaded and stored outside shared memory, atomics) and returns how many there are.
size_t spl_emu_cost_report(LaunchCost *out, size_t max) {
  std::lock_guard<std::mutex> lock(emulator_mutex);
  for (size_t k = 0; k < launchCosts.size() && k < max; ++k) out[k] = launchCosts[k];
  return launchCosts.size();
}
void spl_emu_cost_reset() {
  std::lock_guard<std::mutex> lock(emulator_mutex);
  launchCosts.clear();
}

/// The emulator's own entry for tests: how many device allocations, frees and kernel launches
/// the process has asked for so far.
void spl_emu_counts(uint64_t *allocs, uint64_t *frees, uint64_t *launches) {
  std::lock_guard<std::mutex> lock(emulator_mutex);
  if (allocs != nullptr) *allocs = counts.allocs;
  if (frees != nullptr) *frees = counts.frees;
  if (launches != nullptr) *launches = counts.launches;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned, void *, void **params, void **extra) {
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (extra != nullptr || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
      static_cast<uint64_t>(bx) * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(emulator_mutex);
  ++counts.launches;
  Launch l;
  l.function = static_cast<EmuFunction *>(function);
  l.params = params;
  l.grid[0] = gx;
  l.grid[1] = gy;
  l.grid[2] = gz;
  l.block[0] = bx;
  l.block[1] = by;
  l.block[2] = bz;
  active = &l;
  CUresult result = runLaunch(l);
  active = nullptr;
  return result;
}

CUresult cuMemAlloc_v2(unsigned long long *dptr, size_t bytes) {
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void *p = std::aligned_alloc(256, rounded);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(p, 0xff, rounded);
  *dptr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(emulator_mutex);
  ++counts.allocs;
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(unsigned long long dptr) {
  std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(dptr)));
  std::lock_guard<std::mutex> lock(emulator_mutex);
  ++counts.frees;
  return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(unsigned long long *dptr, size_t bytes, void *) { return cuMemAlloc_v2(dptr, bytes); }
CUresult cuMemFreeAsync(unsigned long long dptr, void *) { return cuMemFree_v2(dptr); }

CUresult cuMemsetD8Async(unsigned long long dst, unsigned char value, size_t bytes, void *) {
  std::memset(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), value, bytes);
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(int *device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return CUDA_SUCCESS;
}

/// Blocks per multiprocessor: SPL_EMU_BLOCKS_PER_SM (default 2), so that tests can vary how many
/// blocks a resident-grid kernel gets (the emulator reports 4 multiprocessors).
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *function, int blockSize, size_t) {
  if (blocks == nullptr || function == nullptr || blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
  const char *text = std::getenv("SPL_EMU_BLOCKS_PER_SM");
  int value = text != nullptr ? std::atoi(text) : 2;
  *blocks = value > 0 ? value : 1;
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t bytes, void *) {
  std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), src, bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t bytes, void *) {
  std::memcpy(dst, reinterpret_cast<const void *>(static_cast<uintptr_t>(src)), bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src, size_t bytes, void *) {
  std::memmove(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), reinterpret_cast<const void *>(static_cast<uintptr_t>(src)),
               bytes);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(void *) { return CUDA_SUCCESS; }

}  // extern "C"
