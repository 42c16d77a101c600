/// \file CodeGenCuda.cpp: the CUDA back end: device kernels in PTX and their host stubs.
///
/// A cuda function's top-level statements are cut into segments, run in stream order:
///   - an independent loop (GpuGlobal, or Parallel under the default schedule) becomes a
///     grid-stride kernel, one thread per iteration; rows of a compressed level reduced into one
///     accumulator get a vector of lanes each (vectorPerRow), and their long rows a second,
///     nonzero-balanced kernel NAME_long (longRowsKernel; see kSplitChunks);
///   - a nest mapped by mapBlock/mapThread becomes a kernel over that grid (GpuBlock);
///   - other statements with memory effects become a one-thread kernel (serial code);
///   - scalar statements without loads run on the host; device temporaries are allocated on the
///     stream (spl_cuda_alloc), and the Sigma precomputation is the runtime's device scan.
/// The kernels of all exports go into one PTX module, embedded in the object as a string (with
/// --gpu-emulator, the module's bitcode, for tests/gpu/emulator); each
/// `NAME_cuda(void *stream, ...)` launches its kernels with spl_cuda_launch, which loads the
/// module once per context (the runtime's module cache, via one slot per object). A size
/// function's `sizes` is host memory: its kernel writes a device copy that is copied back.
/// --checked: a check on scalars (`if (n < 0) return 1`) runs on the host; a check reading
/// device memory runs in its kernel, which records the first failing code in a device error
/// word (atomic compare-and-swap from 0) and ends that thread. Every kernel of the function
/// first reads the word and does nothing once it is set, so no kernel after a failed check
/// touches the bad input; the stub copies the word back at the end (which waits for the
/// stream) and returns it. In a mapBlock/mapThread nest, whose threads meet at barriers, a
/// thread does not end: it skips its remaining serial code and still reaches every barrier,
/// and after each barrier the whole block stops once the word is set (failed_).
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "codegen/CodeGen.h"
#include "codegen/EmitLLVM.h"
#include "codegen/LoopCodeGen.h"
#include "support/Error.h"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace spl::codegen {
namespace {

using namespace loopir;

/// One piece of a cuda function, in order.
struct Segment {
  enum Kind { Host, Grid, Mapped, Serial } kind = Host;
  std::vector<StmtP> stmts;  // Host/Serial: the statements; Grid/Mapped: the one loop
  std::string kernel;        // Grid/Mapped/Serial: the kernel's name
  std::vector<int> vars;     // kernel parameters: scalars first...
  std::vector<int> bufs;     // ...then buffers
  /// Grid segments whose rows run as vectors of lanes and whose long rows go to a second,
  /// nonzero-balanced kernel NAME_long: the scratch buffer the two share (then the kernels take
  /// it and an epoch after `bufs`), else -1.
  int splitScratch = -1;
};

/// The long-row split (CodeGenCuda's nonzero-balanced default for skewed rows). The nonzeros
/// are cut into chunks of C positions, C = max(kMinChunk, ceil(nnz / kSplitChunks)); a row is
/// long when it has more than T = max(C, kLongFactor * average) nonzeros, so a chunk meets at
/// most two long rows: one that began before it (its "continuing" row) and one that begins in
/// it (its "head" row).
constexpr int64_t kSplitChunks = 4096;
constexpr int64_t kMinChunk = 512;
constexpr int64_t kLongFactor = 8;
constexpr int64_t kLongBlock = 256;  // threads per block of NAME_long
constexpr int64_t kLongGrid = 1024;  // its blocks (they stride over the chunks)
/// What one CUDA block may hold (every architecture since sm_20): threads, and static shared
/// memory. A mapped nest beyond them could never launch, so it is refused when compiled.
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxStaticShared = 48 * 1024;

/// Scratch layout: [flag i64][head owner i64 x K][continuing owner i64 x K][count i32 x K]
/// [partial acc x 2K] (slot 2c: chunk c's part of its continuing row, 2c + 1: of its head row).
constexpr int64_t kOwnersAt = 8, kCountsAt = 8 + 16 * kSplitChunks, kPartialsAt = kCountsAt + 4 * kSplitChunks;
constexpr int64_t kScratchBytes = kPartialsAt + 16 * kSplitChunks;

/// Statements the host can run itself: scalar declarations and assignments without loads, and
/// --checked's checks of scalars (`if (n < 0) return 1`).
bool hostOnly(const StmtP &s) {
  if (!s) return true;
  if (s->kind == StmtKind::Decl) return !s->a || !hasLoad(s->a);
  if (s->kind == StmtKind::Assign) return !hasLoad(s->a);
  if (s->kind == StmtKind::Return) return true;
  if (s->kind == StmtKind::Block) {
    for (const StmtP &b : s->body)
      if (!hostOnly(b)) return false;
    return true;
  }
  if (s->kind == StmtKind::If) return !hasLoad(s->a) && hostOnly(s->body[0]) && hostOnly(s->body[1]);
  return s->kind == StmtKind::Alloc || s->kind == StmtKind::Free || s->kind == StmtKind::SigmaPrefix;
}

bool hasReturn(const StmtP &s) {
  return anyStmt(s, [](const Stmt &x) { return x.kind == StmtKind::Return; });
}

/// Whether a kernel statement allocates from the device heap (a temporary with no small
/// constant bound), which can fail. Elements are taken as 8 bytes per field, at least their
/// real size, so a temporary this calls local is local in DeviceGen::allocStmt too.
bool usesDeviceHeap(const StmtP &s, const Function &f) {
  return anyStmt(s, [&](const Stmt &x) {
    if (x.kind != StmtKind::Alloc) return false;
    for (const Buffer &b : f.buffers)
      if (b.id == x.buffer) return !localTemp(x, b.fields.empty() ? 8 : 8 * static_cast<int64_t>(b.fields.size()));
    return true;
  });
}

/// The function with its device error word (a temporary of one i32) when a check reads device
/// memory (--checked) or a kernel allocates from the device heap, else the function itself;
/// `errorBuffer` is the word's id or -1.
Function withErrorWord(const Function &f, int &errorBuffer) {
  errorBuffer = -1;
  bool deviceCheck = false;
  std::vector<StmtP> top = f.body->kind == StmtKind::Block ? f.body->body : std::vector<StmtP>{f.body};
  for (const StmtP &s : top) deviceCheck = deviceCheck || (!hostOnly(s) && (hasReturn(s) || usesDeviceHeap(s, f)));
  if (!deviceCheck) return f;
  Function g = f;
  int id = 0;
  for (const Buffer &b : f.buffers) id = std::max(id, b.id);
  Buffer word;
  word.id = errorBuffer = id + 1;
  word.name = "spl_error";
  word.elem = Ty::I32;
  g.buffers.push_back(word);
  return g;
}

bool isGridLoop(const StmtP &s) {
  return s->kind == StmtKind::For && (s->loop == LoopKind::GpuGlobal || s->loop == LoopKind::Parallel);
}

bool isMappedLoop(const StmtP &s) {
  return s->kind == StmtKind::For && (s->loop == LoopKind::GpuBlock || s->loop == LoopKind::GpuThread ||
                                      s->loop == LoopKind::GpuWarp || s->loop == LoopKind::GpuLane);
}


/// Grid and block dimensions of a nest mapped with mapBlock/mapThread: nested levels of one
/// kind take successive dimensions, innermost = x.
struct MappedInfo {
  std::map<int, std::pair<bool, int>> dimOf;  // loop variable -> (is a thread loop, dimension)
  int64_t blockDim[3] = {1, 1, 1};            // thread extents (upper bounds)
  ExprP gridExtent[3];                        // block-loop extents, evaluated on the host
  std::set<int> threadDims;
};

int mappedDepth(const StmtP &s, LoopKind kind) {
  if (!s) return 0;
  int inner = 0;
  for (const StmtP &b : s->body) inner = std::max(inner, mappedDepth(b, kind));
  bool mine = s->kind == StmtKind::For && (s->loop == kind || (kind == LoopKind::GpuThread && (s->loop == LoopKind::GpuWarp || s->loop == LoopKind::GpuLane)));
  return inner + (mine ? 1 : 0);
}

void analyzeMapped(const StmtP &s, MappedInfo &info, SourceLoc loc) {
  if (!s) return;
  // mapWarp and mapLane are thread levels too: a lane level is the innermost dimension (x),
  // padded to a whole warp of 32 threads, so each warp level index is one hardware warp.
  bool lane = s->kind == StmtKind::For && s->loop == LoopKind::GpuLane;
  if (s->kind == StmtKind::For && (s->loop == LoopKind::GpuBlock || s->loop == LoopKind::GpuThread ||
                                   s->loop == LoopKind::GpuWarp || lane)) {
    bool thread = s->loop != LoopKind::GpuBlock;
    int dim = mappedDepth(s, thread ? LoopKind::GpuThread : LoopKind::GpuBlock) - 1;
    if (lane && dim != 0) throw NotSupported(loc, "a mapLane level with thread levels inside it (lanes are the innermost level)");
    if (dim > 2) throw NotSupported(loc, "more than three nested mapBlock or mapThread levels");
    info.dimOf[s->var] = {thread, dim};
    ExprP extent = bin(BinOp::Sub, s->b, s->a);
    if (thread) {
      auto up = constUpper(extent);
      if (!up) throw NotSupported(loc, "a mapThread level whose length has no constant upper bound (" + print(extent) + ")");
      if (lane && *up > 32) throw NotSupported(loc, "a mapLane level longer than a warp: at most 32 lanes, found " + std::to_string(*up));
      info.blockDim[dim] = std::max(info.blockDim[dim], lane ? int64_t(32) : std::max<int64_t>(*up, 1));
      info.threadDims.insert(dim);
    } else {
      if (hasLoad(extent)) throw NotSupported(loc, "a mapBlock level whose length depends on array contents");
      info.gridExtent[dim] = extent;
    }
  }
  for (const StmtP &b : s->body) analyzeMapped(b, info, loc);
}

std::vector<Segment> segmentsOf(const Function &f) {
  std::vector<Segment> segs;
  std::vector<StmtP> top = f.body->kind == StmtKind::Block ? f.body->body : std::vector<StmtP>{f.body};
  int k = 0;
  for (const StmtP &s : top) {
    if (isGridLoop(s) || isMappedLoop(s)) {
      Segment g;
      g.kind = isGridLoop(s) ? Segment::Grid : Segment::Mapped;
      g.stmts = {s};
      g.kernel = f.name + "_k" + std::to_string(k++);
      segs.push_back(g);
    } else if (hostOnly(s)) {
      if (segs.empty() || segs.back().kind != Segment::Host) segs.push_back(Segment{});
      segs.back().stmts.push_back(s);
    } else {
      if (segs.empty() || segs.back().kind != Segment::Serial) {
        Segment g;
        g.kind = Segment::Serial;
        g.kernel = f.name + "_k" + std::to_string(k++);
        segs.push_back(g);
      }
      segs.back().stmts.push_back(s);
    }
  }
  return segs;
}

// ---- device code --------------------------------------------------------------------------------

class DeviceGen : public LoopCodeGen {
 public:
  using LoopCodeGen::LoopCodeGen;
  bool fusesCarriedAdds() const override { return true; }

  /// Generates the kernel of one segment. `varTypes` gives the type of each captured scalar.
  /// With `longRows`, the segment's second kernel NAME_long (see longRowsKernel).
  void kernel(const Function &f, const Segment &seg, const std::map<int, Ty> &varTypes, bool longRows = false) {
    fn_ = &f;
    std::vector<llvm::Type *> params;
    for (int v : seg.vars) params.push_back(ty(varTypes.at(v)));
    for (size_t i = 0; i < seg.bufs.size(); ++i) params.push_back(b_.getPtrTy());
    if (seg.splitScratch >= 0) {
      params.push_back(b_.getPtrTy());    // the scratch
      params.push_back(b_.getInt64Ty());  // the epoch
    }
    auto *ft = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    llvm::Function *lf =
        llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, seg.kernel + (longRows ? "_long" : ""), m_);
    lf->setCallingConv(llvm::CallingConv::PTX_Kernel);
    lf->addFnAttr(llvm::Attribute::NoUnwind);
    Frame frame;
    frame.fn = lf;
    frame.entry = llvm::BasicBlock::Create(ctx_, "entry", lf);
    b_.SetInsertPoint(frame.entry);
    frames_.push_back(&frame);
    for (size_t i = 0; i < seg.vars.size(); ++i) {
      llvm::AllocaInst *slot = entryAlloca(params[i], "v" + std::to_string(seg.vars[i]));
      b_.CreateStore(lf->getArg(static_cast<unsigned>(i)), slot);
      frame.vars[seg.vars[i]] = {slot, varTypes.at(seg.vars[i])};
    }
    for (size_t i = 0; i < seg.bufs.size(); ++i) {
      llvm::Argument *a = lf->getArg(static_cast<unsigned>(seg.vars.size() + i));
      lf->addParamAttr(a->getArgNo(), llvm::Attribute::NoAlias);
      frame.buffers[seg.bufs[i]] = a;
    }
    llvm::Value *scratch = nullptr, *epoch = nullptr;
    if (seg.splitScratch >= 0) {
      size_t at = seg.vars.size() + seg.bufs.size();
      scratch = lf->getArg(static_cast<unsigned>(at));
      epoch = lf->getArg(static_cast<unsigned>(at + 1));
    }
    bool checks = false;
    for (const StmtP &st : seg.stmts) checks = checks || hasReturn(st);
    failed_ = nullptr;
    if (errorBuffer_ >= 0 && seg.kind == Segment::Mapped) {
      // A mapped nest's threads meet at barriers, so none may end early: a thread that sees
      // the error word set, or whose check fails, only skips its work (see failed_).
      failed_ = entryAlloca(b_.getInt1Ty(), "checks.failed");
      llvm::Value *word = b_.CreateLoad(b_.getInt32Ty(), bufferPtr(errorBuffer_));
      b_.CreateStore(b_.CreateICmpNE(word, b_.getInt32(0)), failed_);
    } else if (errorBuffer_ >= 0) {
      // Nothing to do once an earlier check failed (kernels of one stream run in order).
      llvm::Value *word = b_.CreateLoad(b_.getInt32Ty(), bufferPtr(errorBuffer_));
      auto *run = llvm::BasicBlock::Create(ctx_, "checks.ok", lf);
      auto *stop = llvm::BasicBlock::Create(ctx_, "checks.failed", lf);
      b_.CreateCondBr(b_.CreateICmpEQ(word, b_.getInt32(0)), run, stop);
      b_.SetInsertPoint(stop);
      b_.CreateRetVoid();
      b_.SetInsertPoint(run);
    }
    if (longRows) {
      longRowsKernel(*seg.stmts[0], scratch, epoch);
    } else if (seg.kind == Segment::Grid && !checks && vectorRowPattern(*seg.stmts[0])) {
      vectorPerRow(*seg.stmts[0], scratch, epoch);
    } else if (seg.kind == Segment::Grid) {
      const Stmt &loop = *seg.stmts[0];
      llvm::Value *tid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {});
      llvm::Value *ntid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {});
      llvm::Value *ctaid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {});
      llvm::Value *nctaid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, {});
      llvm::Value *gid = b_.CreateZExt(b_.CreateAdd(b_.CreateMul(ctaid, ntid), tid), b_.getInt64Ty());
      llvm::Value *stride = b_.CreateZExt(b_.CreateMul(nctaid, ntid), b_.getInt64Ty());
      llvm::Value *lo = expr(loop.a), *hi = expr(loop.b);
      serialLoop(loop, b_.CreateAdd(lo, gid), hi, stride);
    } else if (seg.kind == Segment::Mapped) {
      mapped(*seg.stmts[0]);
    } else {
      for (const StmtP &s : seg.stmts) stmt(s);
    }
    if (!b_.GetInsertBlock()->getTerminator()) b_.CreateRetVoid();
    frames_.pop_back();
  }

 protected:
  /// A mapBlock/mapThread nest: block loops take blockIdx (innermost = x), thread loops
  /// threadIdx; iterations past a loop's (possibly ragged) length do nothing but still reach
  /// every barrier.
  void mapped(const Stmt &outer) {
    info_ = MappedInfo{};
    sharedBytes_ = 0;
    StmtP root = std::make_shared<Stmt>(outer);
    analyzeMapped(root, info_, fn_->loc);
    int64_t threads = info_.blockDim[0] * info_.blockDim[1] * info_.blockDim[2];
    if (threads > kMaxBlockThreads)
      throw CompileError(fn_->loc, "a mapBlock/mapThread nest of " + std::to_string(threads) + " threads per block (" +
                                       std::to_string(info_.blockDim[0]) + " x " + std::to_string(info_.blockDim[1]) + " x " +
                                       std::to_string(info_.blockDim[2]) + "): a CUDA block holds at most " +
                                       std::to_string(kMaxBlockThreads) + "; map fewer elements per block");
    emitMapped(root, b_.getTrue(), {});
  }

  llvm::Value *threadIdx(int dim) {
    static const llvm::Intrinsic::ID ids[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
    return b_.CreateZExt(b_.CreateIntrinsic(ids[dim], {}), b_.getInt64Ty());
  }
  llvm::Value *blockIdx(int dim) {
    static const llvm::Intrinsic::ID ids[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    return b_.CreateZExt(b_.CreateIntrinsic(ids[dim], {}), b_.getInt64Ty());
  }

  static bool containsBarrierOrLevel(const StmtP &s) {
    if (!s) return false;
    if (s->kind == StmtKind::Barrier) return true;
    if (s->kind == StmtKind::For && s->loop != LoopKind::Serial && s->loop != LoopKind::Reduction) return true;
    for (const StmtP &b : s->body)
      if (containsBarrierOrLevel(b)) return true;
    return false;
  }

  /// Emits a statement of a mapped nest under `guard`: the iterations past a level's length and
  /// the threads of dimensions no enclosing level uses (code that runs once per enclosing
  /// index) skip it, except barriers, which every thread of the block reaches.
  void emitMapped(const StmtP &s, llvm::Value *guard, std::set<int> active) {
    switch (s->kind) {
      case StmtKind::Block:
        for (const StmtP &b : s->body) emitMapped(b, guard, active);
        return;
      case StmtKind::Barrier:
        barrier();
        if (failed_) {
          // A check that failed in this block before the barrier is visible after it
          // (bar.sync orders the block's memory accesses): everyone stops working, so no
          // thread goes on with shared values the failed thread never wrote.
          auto *word = b_.CreateLoad(b_.getInt32Ty(), bufferPtr(errorBuffer_));
          word->setVolatile(true);
          b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), failed_), b_.CreateICmpNE(word, b_.getInt32(0))), failed_);
        }
        return;
      case StmtKind::Free: return;
      case StmtKind::Alloc: sharedAlloc(*s, active); return;
      case StmtKind::For:
        if (s->loop == LoopKind::GpuBlock || s->loop == LoopKind::GpuThread || s->loop == LoopKind::GpuWarp ||
            s->loop == LoopKind::GpuLane) {
          auto [thread, dim] = info_.dimOf.at(s->var);
          llvm::Value *lo = expr(s->a), *hi = expr(s->b);
          llvm::Value *i = b_.CreateAdd(lo, thread ? threadIdx(dim) : blockIdx(dim));
          llvm::AllocaInst *slot = entryAlloca(b_.getInt64Ty(), s->name);
          b_.CreateStore(i, slot);
          frame().vars[s->var] = {slot, Ty::I64};
          llvm::Value *g = b_.CreateAnd(guard, b_.CreateICmpSLT(i, hi));
          if (thread) active.insert(dim);
          emitMapped(s->body[0], g, active);
          return;
        }
        break;
      default: break;
    }
    if (containsBarrierOrLevel(s))
      throw NotSupported(fn_->loc, "a barrier or a GPU level inside serial code of a mapped kernel");
    llvm::Value *cond = guard;
    for (int d : info_.threadDims)
      if (!active.count(d)) cond = b_.CreateAnd(cond, b_.CreateICmpEQ(threadIdx(d), b_.getInt64(0)));
    if (failed_) cond = b_.CreateAnd(cond, b_.CreateNot(b_.CreateLoad(b_.getInt1Ty(), failed_)));
    llvm::Function *fn = frame().fn;
    auto *run = llvm::BasicBlock::Create(ctx_, "mapped.run", fn);
    auto *join = llvm::BasicBlock::Create(ctx_, "mapped.join", fn);
    b_.CreateCondBr(cond, run, join);
    b_.SetInsertPoint(run);
    leafJoin_ = join;
    stmt(s);
    leafJoin_ = nullptr;
    if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  /// --checked in a mapped nest: set once a check of this thread failed or the error word was
  /// seen set (at the start, after each barrier); such a thread skips the rest of its serial
  /// code but still reaches every barrier. Null in other kernels, where a failed check ends the
  /// thread.
  llvm::AllocaInst *failed_ = nullptr;
  /// The join block of the mapped nest's serial statement being emitted: where a failed check
  /// goes on.
  llvm::BasicBlock *leafJoin_ = nullptr;

  /// A temporary of a mapped nest lives in shared memory: one slot of its (constant upper
  /// bound) size per index of the enclosing thread levels.
  void sharedAlloc(const Stmt &s, const std::set<int> &active) {
    const Buffer &buf = bufferInfo(s.buffer);
    auto cap = constUpper(s.a);
    if (!cap) throw NotSupported(fn_->loc, "a GPU level's shared array whose size has no constant upper bound (" + print(s.a) + ")");
    int64_t slots = 1;
    for (int d : active) slots *= info_.blockDim[d];
    llvm::Type *et = buf.fields.empty() ? memTy(buf.elem) : static_cast<llvm::Type *>(structOf(buf));
    sharedBytes_ += static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(et)) * std::max<int64_t>(1, slots * *cap);
    if (sharedBytes_ > kMaxStaticShared)
      throw CompileError(fn_->loc, "the shared arrays of a mapBlock/mapThread nest take " + std::to_string(sharedBytes_) +
                                       " bytes per block: a CUDA block has at most " + std::to_string(kMaxStaticShared) +
                                       " of static shared memory");
    auto *arrTy = llvm::ArrayType::get(et, static_cast<uint64_t>(std::max<int64_t>(1, slots * *cap)));
    auto *g = new llvm::GlobalVariable(m_, arrTy, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(arrTy),
                                       fn_->name + "." + buf.name + ".shared", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    g->setAlignment(llvm::Align(16));
    llvm::Value *slotIdx = b_.getInt64(0);
    int64_t stride = 1;
    for (int d : active) {
      slotIdx = b_.CreateAdd(slotIdx, b_.CreateMul(threadIdx(d), b_.getInt64(stride)));
      stride *= info_.blockDim[d];
    }
    llvm::Value *base = b_.CreateAddrSpaceCast(g, b_.getPtrTy());
    frame().buffers[s.buffer] = b_.CreateInBoundsGEP(et, base, b_.CreateMul(slotIdx, b_.getInt64(*cap)));
  }

  MappedInfo info_;
  int64_t sharedBytes_ = 0;  // static shared memory of the mapped nest being emitted

  // ---- vector per row ----------------------------------------------------------------------

  /// A row loop over a compressed level whose body is: declarations, then one reduction loop
  /// that only accumulates into one declared scalar (acc = acc op e, op reassociable), then
  /// anything (the row's result). Such rows can be split over several lanes.
  struct RowShape {
    std::vector<StmtP> prefix, suffix;
    const Stmt *reduction = nullptr;
    int acc = 0;
    Ty accTy = Ty::F32;
    ExprP combine;  // acc op SHUFFLED, with SHUFFLED a placeholder variable
  };
  static constexpr int kShuffled = -77;

  static bool storesOrLoops(const StmtP &s) {
    if (!s) return false;
    if (s->kind == StmtKind::Store || s->kind == StmtKind::For || s->kind == StmtKind::Barrier || s->kind == StmtKind::Alloc ||
        s->kind == StmtKind::Return)
      return true;
    for (const StmtP &b : s->body)
      if (storesOrLoops(b)) return true;
    return false;
  }

  static bool matchRow(const Stmt &loop, RowShape &shape) {
    if (loop.balanceBy < 0 || loop.userKind || loop.a->kind != ExprKind::Const || loop.a->ival != 0) return false;
    const StmtP &body = loop.body[0];
    std::vector<StmtP> items = body->kind == StmtKind::Block ? body->body : std::vector<StmtP>{body};
    size_t r = 0;
    while (r < items.size() && items[r]->kind == StmtKind::Decl) ++r;
    if (r == items.size() || items[r]->kind != StmtKind::For || items[r]->loop != LoopKind::Reduction) return false;
    shape.prefix.assign(items.begin(), items.begin() + static_cast<long>(r));
    shape.suffix.assign(items.begin() + static_cast<long>(r) + 1, items.end());
    shape.reduction = items[r].get();
    // Exactly one accumulator, declared in the prefix, updated as acc = acc op e.
    Uses u;
    usesOf(items[r], u);
    const StmtP &rb = shape.reduction->body[0];
    if (storesOrLoops(rb)) return false;
    std::vector<StmtP> inner = rb->kind == StmtKind::Block ? rb->body : std::vector<StmtP>{rb};
    const Stmt *update = nullptr;
    for (const StmtP &st : inner) {
      if (st->kind == StmtKind::Decl) continue;
      if (st->kind != StmtKind::Assign || update) return false;
      update = st.get();
    }
    if (!update) return false;
    const ExprP &v = update->a;
    bool ok = false;
    if (v->kind == ExprKind::Binary && v->reassoc && (v->binop == BinOp::Add || v->binop == BinOp::Mul)) ok = true;
    if (v->kind == ExprKind::MinMax) ok = true;
    if (!ok) return false;
    int side = -1;
    for (int k = 0; k < 2; ++k)
      if (v->args[k]->kind == ExprKind::Var && v->args[k]->var == update->var) side = k;
    if (side < 0) return false;
    bool declared = false;
    for (const StmtP &d : shape.prefix)
      if (d->var == update->var) {
        declared = true;
        shape.accTy = d->type;
      }
    if (!declared || shape.accTy == Ty::I1) return false;
    shape.acc = update->var;
    auto c = std::make_shared<Expr>(*v);
    c->args[side] = var(update->var, shape.accTy);
    c->args[1 - side] = var(kShuffled, shape.accTy);
    shape.combine = c;
    return true;
  }

  static bool vectorRowPattern(const Stmt &loop) {
    RowShape shape;
    return matchRow(loop, shape);
  }

  /// Whether `e` is T[i + 1] (plusOne) or T[i], widened or not.
  static bool isOffsetLoad(const ExprP &e, int offs, int row, bool plusOne) {
    const Expr *x = e->kind == ExprKind::Cast ? e->args[0].get() : e.get();
    if (x->kind != ExprKind::Load || x->buffer != offs) return false;
    const ExprP &ix = x->args[0];
    if (!plusOne) return ix->kind == ExprKind::Var && ix->var == row;
    if (ix->kind != ExprKind::Binary || ix->binop != BinOp::Add) return false;
    for (int k = 0; k < 2; ++k)
      if (ix->args[k]->kind == ExprKind::Var && ix->args[k]->var == row && ix->args[1 - k]->kind == ExprKind::Const &&
          ix->args[1 - k]->ival == 1)
        return true;
    return false;
  }

  /// The reduction runs over [0, T[i+1] - T[i]), so its iteration k is position T[i] + k: what
  /// the long-row kernel needs to cut a row at chunk boundaries.
  static bool reducesOverTheRow(const Stmt &loop, const RowShape &shape) {
    const Stmt &red = *shape.reduction;
    if (red.a->kind != ExprKind::Const || red.a->ival != 0) return false;
    const ExprP &b = red.b;
    if (b->kind != ExprKind::Binary || b->binop != BinOp::Add) return false;
    for (int k = 0; k < 2; ++k) {
      const ExprP &hi = b->args[k], &lo = b->args[1 - k];
      if (!isOffsetLoad(hi, loop.balanceBy, loop.var, true)) continue;
      if (lo->kind == ExprKind::Binary && lo->binop == BinOp::Mul)
        for (int j = 0; j < 2; ++j)
          if (lo->args[j]->kind == ExprKind::Const && lo->args[j]->ival == -1 &&
              isOffsetLoad(lo->args[1 - j], loop.balanceBy, loop.var, false))
            return true;
    }
    return false;
  }

 public:
  /// A vector-per-row loop whose long rows can go to the nonzero-balanced kernel.
  static bool splitsLongRows(const Stmt &loop) {
    RowShape shape;
    return matchRow(loop, shape) && reducesOverTheRow(loop, shape);
  }

 protected:
  /// The identity of the row's combining operator: every lane but a row's first, and every
  /// partial of a long row, starts there (the row's initial value enters once).
  llvm::Value *identityOf(const RowShape &shape) {
    const Expr &c = *shape.combine;
    llvm::Type *t = ty(shape.accTy);
    bool fp = isFloatTy(shape.accTy);
    if (c.kind == ExprKind::Binary) {
      int64_t unit = c.binop == BinOp::Mul ? 1 : 0;
      return fp ? llvm::ConstantFP::get(t, static_cast<double>(unit)) : llvm::ConstantInt::get(t, static_cast<uint64_t>(unit), true);
    }
    if (fp) return llvm::ConstantFP::getInfinity(t, /*Negative=*/c.isMax);
    unsigned bits = t->getIntegerBitWidth();
    return llvm::ConstantInt::get(ctx_, c.isMax ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
  }

  /// acc = acc op v (the row's own combining operator).
  void combineInto(const RowShape &shape, llvm::AllocaInst *accSlot, llvm::Value *v) {
    llvm::AllocaInst *tmp = entryAlloca(ty(shape.accTy), "combine.val");
    b_.CreateStore(v, tmp);
    frame().vars[kShuffled] = {tmp, shape.accTy};
    frame().vars[shape.acc] = {accSlot, shape.accTy};
    b_.CreateStore(expr(shape.combine), accSlot);
  }

  /// What the vector and the long-row kernels both derive from the offsets: the first position,
  /// the chunk size C and the long-row threshold T (see kSplitChunks).
  struct SplitGeometry {
    llvm::Value *base, *chunk, *threshold, *total;
  };
  SplitGeometry splitGeometry(int offs, llvm::Value *n) {
    SplitGeometry g;
    g.base = offsetAt(offs, b_.getInt64(0));
    g.total = b_.CreateSub(offsetAt(offs, n), g.base);
    llvm::Value *perChunk = b_.CreateSDiv(b_.CreateAdd(g.total, b_.getInt64(kSplitChunks - 1)), b_.getInt64(kSplitChunks));
    g.chunk = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, perChunk, b_.getInt64(kMinChunk));
    llvm::Value *avg = b_.CreateSDiv(g.total, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, n, b_.getInt64(1)));
    g.threshold = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, g.chunk, b_.CreateMul(avg, b_.getInt64(kLongFactor)));
    return g;
  }
  /// The chunk holding position p.
  llvm::Value *chunkOf(llvm::Value *p, const SplitGeometry &g) { return b_.CreateSDiv(b_.CreateSub(p, g.base), g.chunk); }
  llvm::Value *offsetAt(int offs, llvm::Value *i) {
    const Buffer &ob = bufferInfo(offs);
    return castTo(b_.CreateLoad(ty(ob.elem), elementPtrOf(offs, i)), ob.elem, Ty::I64);
  }
  llvm::Value *scratchAt(llvm::Value *scratch, int64_t byteOffset, llvm::Type *elem, llvm::Value *index) {
    llvm::Value *region = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), scratch, static_cast<uint64_t>(byteOffset));
    return b_.CreateInBoundsGEP(elem, region, index);
  }
  llvm::Value *headOwner(llvm::Value *scratch, llvm::Value *c) { return scratchAt(scratch, kOwnersAt, b_.getInt64Ty(), c); }
  llvm::Value *contOwner(llvm::Value *scratch, llvm::Value *c) {
    return scratchAt(scratch, kOwnersAt + 8 * kSplitChunks, b_.getInt64Ty(), c);
  }
  llvm::Value *chunkCount(llvm::Value *scratch, llvm::Value *c) { return scratchAt(scratch, kCountsAt, b_.getInt32Ty(), c); }
  llvm::Value *partialAt(llvm::Value *scratch, Ty accTy, llvm::Value *slot) { return scratchAt(scratch, kPartialsAt, ty(accTy), slot); }

  /// Each row gets W lanes (W = the average row length rounded up to a power of two, at most
  /// a warp), which stride over its nonzeros; the partial results combine with shuffles and
  /// the row's first lane runs the rest. Warps walk groups of 32/W rows with a trip count
  /// that is the same for every lane, so each shuffle has the whole warp.
  /// With `scratch` (the long-row split), rows longer than T are left to NAME_long: their first
  /// lane claims them (the chunk owners, a zero count, the flag = epoch) and no lane sums them.
  void vectorPerRow(const Stmt &loop, llvm::Value *scratch, llvm::Value *epoch) {
    RowShape shape;
    matchRow(loop, shape);
    llvm::Function *fn = frame().fn;
    llvm::Value *n = expr(loop.b);
    // W from the average row length, (offs@n - offs@0) / n, the same for every thread.
    llvm::Value *total = b_.CreateSub(offsetAt(loop.balanceBy, n), offsetAt(loop.balanceBy, b_.getInt64(0)));
    llvm::Value *avg = b_.CreateSDiv(total, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, n, b_.getInt64(1)));
    avg = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, avg, b_.getInt64(1));
    avg = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, avg, b_.getInt64(32));
    // next power of two: 1 << (64 - ctlz(avg - 1)), with avg = 1 giving 1.
    llvm::Value *lz = b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, b_.CreateSub(avg, b_.getInt64(1)), b_.getFalse());
    llvm::Value *w64 = b_.CreateSelect(b_.CreateICmpEQ(avg, b_.getInt64(1)), b_.getInt64(1),
                                       b_.CreateShl(b_.getInt64(1), b_.CreateSub(b_.getInt64(64), lz)));
    llvm::Value *w = b_.CreateTrunc(w64, b_.getInt32Ty());
    std::optional<SplitGeometry> geometry;
    if (scratch) geometry = splitGeometry(loop.balanceBy, n);
    llvm::Value *tid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {});
    llvm::Value *ntid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {});
    llvm::Value *ctaid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {});
    llvm::Value *nctaid = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, {});
    llvm::Value *gtid = b_.CreateZExt(b_.CreateAdd(b_.CreateMul(ctaid, ntid), tid), b_.getInt64Ty());
    llvm::Value *lane32 = b_.CreateZExt(b_.CreateAnd(tid, b_.getInt32(31)), b_.getInt64Ty());
    llvm::Value *warp = b_.CreateLShr(gtid, 5);
    llvm::Value *warps = b_.CreateLShr(b_.CreateZExt(b_.CreateMul(nctaid, ntid), b_.getInt64Ty()), 5);
    llvm::Value *rowsPerWarp = b_.CreateUDiv(b_.getInt64(32), w64);
    llvm::Value *sub = b_.CreateUDiv(lane32, w64);
    llvm::Value *lane = b_.CreateURem(lane32, w64);
    llvm::Value *clamp = b_.CreateOr(b_.CreateShl(b_.CreateSub(b_.getInt32(32), w), 8), b_.getInt32(0x1f));

    llvm::AllocaInst *row = entryAlloca(b_.getInt64Ty(), loop.name);
    frame().vars[loop.var] = {row, Ty::I64};
    llvm::AllocaInst *accSlot = entryAlloca(ty(shape.accTy), "acc");
    frame().vars[shape.acc] = {accSlot, shape.accTy};
    llvm::AllocaInst *longSlot = entryAlloca(b_.getInt1Ty(), "row.long");
    countedLoop(b_.CreateMul(warp, rowsPerWarp), n, [&](llvm::Value *bv) {
      llvm::Value *r = b_.CreateAdd(bv, sub);
      b_.CreateStore(r, row);
      llvm::Value *valid = b_.CreateICmpSLT(r, n);
      b_.CreateStore(b_.getFalse(), longSlot);
      if (geometry) {
        guarded(valid, [&] {
          llvm::Value *start = offsetAt(loop.balanceBy, r), *end = offsetAt(loop.balanceBy, b_.CreateAdd(r, b_.getInt64(1)));
          llvm::Value *isLong = b_.CreateICmpSGT(b_.CreateSub(end, start), geometry->threshold);
          b_.CreateStore(isLong, longSlot);
          guarded(isLong, [&] {
            // Claim the row for NAME_long: its head chunk c0 and continuing chunks (c0, c1].
            llvm::Value *c0 = chunkOf(start, *geometry), *c1 = chunkOf(b_.CreateSub(end, b_.getInt64(1)), *geometry);
            guarded(b_.CreateICmpEQ(lane, b_.getInt64(0)), [&] {
              b_.CreateStore(b_.getInt32(0), chunkCount(scratch, c0));
              b_.CreateStore(r, headOwner(scratch, c0));
              b_.CreateStore(epoch, scratch);
            });
            countedLoop(b_.CreateAdd(b_.CreateAdd(c0, b_.getInt64(1)), lane), b_.CreateAdd(c1, b_.getInt64(1)),
                        [&](llvm::Value *cv) { b_.CreateStore(r, contOwner(scratch, cv)); }, w64);
          });
        });
      }
      llvm::Value *summed = b_.CreateAnd(valid, b_.CreateNot(b_.CreateLoad(b_.getInt1Ty(), longSlot)));
      // Lanes of rows past n (and of long rows) still take part in the shuffles: give their
      // accumulator the identity.
      b_.CreateStore(identityOf(shape), accSlot);
      guarded(summed, [&] {
        for (const StmtP &d : shape.prefix) {
          if (d->var == shape.acc) {
            // The row's initial value enters once, through its first lane.
            if (d->a)
              guarded(b_.CreateICmpEQ(lane, b_.getInt64(0)), [&] { b_.CreateStore(castTo(expr(d->a), d->a->type, shape.accTy), accSlot); });
          } else {
            stmt(d);
          }
        }
        const Stmt &red = *shape.reduction;
        serialLoop(red, b_.CreateAdd(expr(red.a), lane), expr(red.b), w64);
      });
      // Shuffle tree over the W lanes of each row: off = W/2, W/4, ..., 1.
      llvm::AllocaInst *off = entryAlloca(b_.getInt32Ty(), "shfl.off");
      b_.CreateStore(b_.CreateLShr(w, 1), off);
      auto *sh = llvm::BasicBlock::Create(ctx_, "shfl.header", fn);
      auto *sb = llvm::BasicBlock::Create(ctx_, "shfl.body", fn);
      auto *se = llvm::BasicBlock::Create(ctx_, "shfl.exit", fn);
      b_.CreateBr(sh);
      b_.SetInsertPoint(sh);
      llvm::Value *o = b_.CreateLoad(b_.getInt32Ty(), off);
      b_.CreateCondBr(b_.CreateICmpUGT(o, b_.getInt32(0)), sb, se);
      b_.SetInsertPoint(sb);
      llvm::Value *mine = b_.CreateLoad(ty(shape.accTy), accSlot);
      combineInto(shape, accSlot, shuffleDown(mine, o, clamp, shape.accTy));
      b_.CreateStore(b_.CreateLShr(o, 1), off);
      b_.CreateBr(sh);
      b_.SetInsertPoint(se);
      guarded(b_.CreateAnd(summed, b_.CreateICmpEQ(lane, b_.getInt64(0))), [&] {
        for (const StmtP &st : shape.suffix) stmt(st);
      });
    }, b_.CreateMul(warps, rowsPerWarp));
  }

  /// NAME_long: the long rows the vector kernel left, over chunks of C nonzeros. Blocks stride
  /// over the chunks; for each, threads 0 and 32 read and check its two owners (a slot this
  /// call did not write holds anything: an owner counts only if it is a long row that meets
  /// the chunk where the slot says), the block sums its part of each owner row (threads stride
  /// over the positions, then shuffles and shared memory), thread 0 stores the partial, and the
  /// last chunk of a row to finish (a counter per row, after a fence) combines the row's
  /// partials in chunk order and runs the row's suffix. Nothing runs unless the vector kernel
  /// of this call set the flag to this call's epoch.
  void longRowsKernel(const Stmt &loop, llvm::Value *scratch, llvm::Value *epoch) {
    RowShape shape;
    matchRow(loop, shape);
    llvm::Function *fn = frame().fn;
    auto *stop = llvm::BasicBlock::Create(ctx_, "long.none", fn);
    auto *go = llvm::BasicBlock::Create(ctx_, "long.run", fn);
    llvm::LoadInst *flag = b_.CreateLoad(b_.getInt64Ty(), scratch);
    flag->setVolatile(true);
    b_.CreateCondBr(b_.CreateICmpEQ(flag, epoch), go, stop);
    b_.SetInsertPoint(stop);
    b_.CreateRetVoid();
    b_.SetInsertPoint(go);

    llvm::Value *n = expr(loop.b);
    SplitGeometry g = splitGeometry(loop.balanceBy, n);
    llvm::Value *chunks = b_.CreateSDiv(b_.CreateAdd(g.total, b_.CreateSub(g.chunk, b_.getInt64(1))), g.chunk);
    llvm::Value *tid = threadIdx(0);
    llvm::Value *ntid = b_.CreateZExt(b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {}), b_.getInt64Ty());
    llvm::Value *nctaid = b_.CreateZExt(b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, {}), b_.getInt64Ty());
    llvm::Value *laneId = b_.CreateAnd(tid, b_.getInt64(31));
    llvm::Value *warpId = b_.CreateLShr(tid, 5);
    llvm::Value *warpsPerBlock = b_.CreateLShr(ntid, 5);
    auto sharedArray = [&](llvm::Type *t, uint64_t count, const std::string &name) {
      auto *arrTy = llvm::ArrayType::get(t, count);
      auto *gv = new llvm::GlobalVariable(m_, arrTy, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(arrTy),
                                          frame().fn->getName().str() + "." + name, nullptr, llvm::GlobalValue::NotThreadLocal, 3);
      gv->setAlignment(llvm::Align(16));
      return b_.CreateAddrSpaceCast(gv, b_.getPtrTy());
    };
    llvm::Value *ownersSh = sharedArray(b_.getInt64Ty(), 2, "owners");
    llvm::Value *warpSums = sharedArray(ty(shape.accTy), kLongBlock / 32, "partials");

    countedLoop(blockIdx(0), chunks, [&](llvm::Value *c) {
      llvm::Value *p0 = b_.CreateAdd(g.base, b_.CreateMul(c, g.chunk));
      llvm::Value *p1 = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(p0, g.chunk), b_.CreateAdd(g.base, g.total));
      // Owner slot 0: the continuing row (read by thread 0), 1: the head row (thread 32).
      for (int kind = 0; kind < 2; ++kind) {
        guarded(b_.CreateICmpEQ(tid, b_.getInt64(32 * kind)), [&] {
          llvm::AllocaInst *owner = entryAlloca(b_.getInt64Ty(), "owner");
          b_.CreateStore(b_.getInt64(-1), owner);
          llvm::LoadInst *claimed = b_.CreateLoad(b_.getInt64Ty(), kind == 0 ? contOwner(scratch, c) : headOwner(scratch, c));
          llvm::Value *inRange = b_.CreateAnd(b_.CreateICmpSGE(claimed, b_.getInt64(0)), b_.CreateICmpSLT(claimed, n));
          guarded(inRange, [&] {
            llvm::Value *start = offsetAt(loop.balanceBy, claimed);
            llvm::Value *end = offsetAt(loop.balanceBy, b_.CreateAdd(claimed, b_.getInt64(1)));
            llvm::Value *isLong = b_.CreateICmpSGT(b_.CreateSub(end, start), g.threshold);
            llvm::Value *c0 = chunkOf(start, g), *c1 = chunkOf(b_.CreateSub(end, b_.getInt64(1)), g);
            llvm::Value *meets = kind == 0 ? b_.CreateAnd(b_.CreateICmpSLT(c0, c), b_.CreateICmpSLE(c, c1)) : b_.CreateICmpEQ(c0, c);
            b_.CreateStore(b_.CreateSelect(b_.CreateAnd(isLong, meets), claimed, b_.getInt64(-1)), owner);
          });
          b_.CreateStore(b_.CreateLoad(b_.getInt64Ty(), owner), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ownersSh, kind));
        });
      }
      barrier();
      for (int kind = 0; kind < 2; ++kind) {
        llvm::Value *r = b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), ownersSh, kind));
        guarded(b_.CreateICmpSGE(r, b_.getInt64(0)), [&] { longRowPart(loop, shape, scratch, g, c, kind, r, p0, p1, tid, ntid,
                                                                        laneId, warpId, warpsPerBlock, warpSums); });
      }
      // Thread 0 rewrites the owners of the next chunk: everyone must have read these.
      barrier();
    }, nctaid);
  }

  /// One chunk's part of long row r (kind 0: continuing, 1: head), see longRowsKernel.
  void longRowPart(const Stmt &loop, const RowShape &shape, llvm::Value *scratch, const SplitGeometry &g, llvm::Value *c, int kind,
                   llvm::Value *r, llvm::Value *p0, llvm::Value *p1, llvm::Value *tid, llvm::Value *ntid, llvm::Value *laneId,
                   llvm::Value *warpId, llvm::Value *warpsPerBlock, llvm::Value *warpSums) {
    llvm::AllocaInst *row = entryAlloca(b_.getInt64Ty(), loop.name);
    b_.CreateStore(r, row);
    frame().vars[loop.var] = {row, Ty::I64};
    llvm::AllocaInst *accSlot = entryAlloca(ty(shape.accTy), "acc");
    frame().vars[shape.acc] = {accSlot, shape.accTy};
    for (const StmtP &d : shape.prefix)
      if (d->var != shape.acc) stmt(d);
    b_.CreateStore(identityOf(shape), accSlot);
    llvm::Value *start = offsetAt(loop.balanceBy, r), *end = offsetAt(loop.balanceBy, b_.CreateAdd(r, b_.getInt64(1)));
    llvm::Value *from = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, p0, start);
    llvm::Value *to = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, p1, end);
    // Iteration k of the row's reduction is position start + k.
    const Stmt &red = *shape.reduction;
    serialLoop(red, b_.CreateAdd(b_.CreateSub(from, start), tid), b_.CreateSub(to, start), ntid);
    llvm::Value *fullClamp = b_.getInt32(0x1f);
    for (int offset = 16; offset >= 1; offset /= 2) {
      llvm::Value *mine = b_.CreateLoad(ty(shape.accTy), accSlot);
      combineInto(shape, accSlot, shuffleDown(mine, b_.getInt32(static_cast<uint32_t>(offset)), fullClamp, shape.accTy));
    }
    guarded(b_.CreateICmpEQ(laneId, b_.getInt64(0)), [&] {
      b_.CreateStore(b_.CreateLoad(ty(shape.accTy), accSlot), b_.CreateInBoundsGEP(ty(shape.accTy), warpSums, warpId));
    });
    barrier();
    guarded(b_.CreateICmpEQ(tid, b_.getInt64(0)), [&] {
      llvm::AllocaInst *part = entryAlloca(ty(shape.accTy), "part");
      b_.CreateStore(identityOf(shape), part);
      countedLoop(b_.getInt64(0), warpsPerBlock, [&](llvm::Value *wi) {
        combineInto(shape, part, b_.CreateLoad(ty(shape.accTy), b_.CreateInBoundsGEP(ty(shape.accTy), warpSums, wi)));
      });
      llvm::Value *slot = b_.CreateAdd(b_.CreateMul(c, b_.getInt64(2)), b_.getInt64(kind));
      b_.CreateStore(b_.CreateLoad(ty(shape.accTy), part), partialAt(scratch, shape.accTy, slot));
      b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, ctx_.getOrInsertSyncScopeID("device"));
      llvm::Value *c0 = chunkOf(start, g), *c1 = chunkOf(b_.CreateSub(end, b_.getInt64(1)), g);
      llvm::Value *done = b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, chunkCount(scratch, c0), b_.getInt32(1), llvm::MaybeAlign(4),
                                             llvm::AtomicOrdering::Monotonic);
      llvm::Value *last = b_.CreateICmpEQ(b_.CreateZExt(done, b_.getInt64Ty()), b_.CreateSub(c1, c0));
      guarded(last, [&] {
        b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, ctx_.getOrInsertSyncScopeID("device"));
        // The row's initial value, then its partials in chunk order (the same sum every run).
        b_.CreateStore(identityOf(shape), accSlot);
        for (const StmtP &d : shape.prefix)
          if (d->var == shape.acc && d->a) b_.CreateStore(castTo(expr(d->a), d->a->type, shape.accTy), accSlot);
        auto volatileLoad = [&](llvm::Value *ptr) {
          llvm::LoadInst *v = b_.CreateLoad(ty(shape.accTy), ptr);
          v->setVolatile(true);
          return v;
        };
        combineInto(shape, accSlot, volatileLoad(partialAt(scratch, shape.accTy, b_.CreateAdd(b_.CreateMul(c0, b_.getInt64(2)), b_.getInt64(1)))));
        countedLoop(b_.CreateAdd(c0, b_.getInt64(1)), b_.CreateAdd(c1, b_.getInt64(1)), [&](llvm::Value *cc) {
          combineInto(shape, accSlot, volatileLoad(partialAt(scratch, shape.accTy, b_.CreateMul(cc, b_.getInt64(2)))));
        });
        frame().vars[shape.acc] = {accSlot, shape.accTy};
        for (const StmtP &st : shape.suffix) stmt(st);
      });
    });
    // warpSums is reused by the chunk's other row.
    barrier();
  }

  llvm::Value *shuffleDown(llvm::Value *v, llvm::Value *offset, llvm::Value *clamp, Ty t) {
    llvm::Value *mask = b_.getInt32(0xffffffffu);
    if (t == Ty::F32) return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_f32, {mask, v, offset, clamp});
    if (t == Ty::I32) return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {mask, v, offset, clamp});
    // 64-bit values: two 32-bit halves.
    llvm::Value *bits = t == Ty::F64 ? b_.CreateBitCast(v, b_.getInt64Ty()) : v;
    llvm::Value *lo = b_.CreateTrunc(bits, b_.getInt32Ty());
    llvm::Value *hi = b_.CreateTrunc(b_.CreateLShr(bits, 32), b_.getInt32Ty());
    lo = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {mask, lo, offset, clamp});
    hi = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {mask, hi, offset, clamp});
    llvm::Value *joined = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    return t == Ty::F64 ? b_.CreateBitCast(joined, b_.getDoubleTy()) : joined;
  }

  /// for (i = lo; i < hi; i += step) body(i), in LLVM directly.
  void countedLoop(llvm::Value *lo, llvm::Value *hi, const std::function<void(llvm::Value *)> &body,
                   llvm::Value *step = nullptr) {
    llvm::Function *fn = frame().fn;
    llvm::AllocaInst *iv = entryAlloca(b_.getInt64Ty(), "i");
    b_.CreateStore(lo, iv);
    auto *h = llvm::BasicBlock::Create(ctx_, "count.header", fn);
    auto *bb = llvm::BasicBlock::Create(ctx_, "count.body", fn);
    auto *e = llvm::BasicBlock::Create(ctx_, "count.exit", fn);
    b_.CreateBr(h);
    b_.SetInsertPoint(h);
    llvm::Value *i = b_.CreateLoad(b_.getInt64Ty(), iv);
    b_.CreateCondBr(b_.CreateICmpSLT(i, hi), bb, e);
    b_.SetInsertPoint(bb);
    body(i);
    b_.CreateStore(b_.CreateAdd(i, step ? step : b_.getInt64(1)), iv);
    b_.CreateBr(h);
    b_.SetInsertPoint(e);
  }

  llvm::Value *elementPtrOf(int buffer, llvm::Value *index) {
    llvm::Type *et = nullptr;
    return elementPtr(buffer, index, -1, et);
  }

  void guarded(llvm::Value *cond, const std::function<void()> &body) {
    llvm::Function *fn = frame().fn;
    auto *run = llvm::BasicBlock::Create(ctx_, "guard.run", fn);
    auto *join = llvm::BasicBlock::Create(ctx_, "guard.join", fn);
    b_.CreateCondBr(cond, run, join);
    b_.SetInsertPoint(run);
    body();
    if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  void parallelLoop(const Stmt &s) override {
    // Nested independent loops run in order inside one thread (the default schedule maps only
    // the outermost loop onto the grid).
    serialLoop(s, expr(s.a), expr(s.b));
  }
  /// A temporary inside a kernel's serial code (at a mapped nest's own level it is shared memory:
  /// sharedAlloc). Each thread gets its own: in local memory (one alloca in the entry block, so
  /// the loop that allocates reuses it) when the size has a constant bound of at most
  /// kLocalTempBytes, else from the device heap (malloc; exhausting it records SPL_ERR_ALLOC in
  /// the error word, which withErrorWord adds for such functions).
  void allocStmt(const Stmt &s) override {
    const Buffer &buf = bufferInfo(s.buffer);
    llvm::Type *et = buf.fields.empty() ? memTy(buf.elem) : static_cast<llvm::Type *>(structOf(buf));
    auto elemBytes = static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(et));
    auto it = frame().tempSlots.find(s.buffer);
    if (it == frame().tempSlots.end()) it = frame().tempSlots.emplace(s.buffer, entryAlloca(b_.getPtrTy(), buf.name + ".slot")).first;
    if (localTemp(s, elemBytes)) {
      auto *arrTy = llvm::ArrayType::get(et, static_cast<uint64_t>(std::max<int64_t>(1, *constUpper(s.a))));
      llvm::AllocaInst *local = entryAlloca(arrTy, buf.name + ".local");
      local->setAlignment(llvm::Align(16));
      b_.CreateStore(local, it->second);
      return;
    }
    heapTemps_.insert(s.buffer);
    llvm::Value *bytes = b_.CreateMul(expr(s.a), b_.getInt64(elemBytes));
    llvm::FunctionCallee deviceMalloc = m_.getOrInsertFunction("malloc", b_.getPtrTy(), b_.getInt64Ty());
    llvm::Value *p = b_.CreateCall(deviceMalloc, {bytes});
    b_.CreateStore(p, it->second);
    returnIfAllocFailed(p, bytes);
  }
  void freeStmt(const Stmt &s) override {
    if (!heapTemps_.count(s.buffer)) return;
    llvm::FunctionCallee deviceFree = m_.getOrInsertFunction("free", b_.getVoidTy(), b_.getPtrTy());
    b_.CreateCall(deviceFree, {b_.CreateLoad(b_.getPtrTy(), frame().tempSlots.at(s.buffer))});
  }
  std::set<int> heapTemps_;  // temporaries of this kernel that come from the device heap
  void sigmaStmt(const Stmt &) override { throw InternalError("codegen: Sigma precomputation inside a kernel"); }
  /// A failed check: the first failing code goes into the error word; the thread ends (in a
  /// mapped nest it goes on at leafJoin_, marked failed_).
  void emitReturn(llvm::Value *code) override {
    if (errorBuffer_ < 0) throw InternalError("codegen: a check in a kernel without an error word");
    b_.CreateAtomicCmpXchg(bufferPtr(errorBuffer_), b_.getInt32(0), code, llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic,
                           llvm::AtomicOrdering::Monotonic);
    if (failed_) {
      if (!leafJoin_) throw InternalError("codegen: a check outside the serial code of a mapped nest");
      b_.CreateStore(b_.getTrue(), failed_);
      b_.CreateBr(leafJoin_);
      return;
    }
    b_.CreateRetVoid();
  }

 public:
  int errorBuffer_ = -1;  // the error word's buffer id (--checked), or -1
  void barrier() override { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {b_.getInt32(0)}); }
};

// ---- host stubs ---------------------------------------------------------------------------------

class HostGen : public LoopCodeGen {
 public:
  HostGen(llvm::LLVMContext &ctx, llvm::Module &m, llvm::GlobalVariable *ptx, llvm::GlobalVariable *slot)
      : LoopCodeGen(ctx, m), ptx_(ptx), slot_(slot) {}

  void stub(const Function &f, const std::vector<Segment> &segs, const std::map<int, Ty> &varTypes) {
    fn_ = &f;
    // C parameters: the stream, then the function's own.
    std::vector<llvm::Type *> params(f.numParams + 1, nullptr);
    params[0] = b_.getPtrTy();
    for (const ScalarParam &p : f.scalars) params[p.paramIndex + 1] = ty(p.type);
    for (const Buffer &buf : f.buffers)
      if (buf.isParam) params[buf.paramIndex + 1] = b_.getPtrTy();
    auto *ft = llvm::FunctionType::get(b_.getInt32Ty(), params, false);
    llvm::Function *lf = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, f.name, m_);
    lf->addFnAttr(llvm::Attribute::NoUnwind);
    Frame frame;
    frame.fn = lf;
    frame.entry = llvm::BasicBlock::Create(ctx_, "entry", lf);
    b_.SetInsertPoint(frame.entry);
    frames_.push_back(&frame);
    stream_ = lf->getArg(0);
    for (const ScalarParam &p : f.scalars) {
      llvm::AllocaInst *slot = entryAlloca(ty(p.type), p.name);
      b_.CreateStore(lf->getArg(p.paramIndex + 1), slot);
      frame.vars[p.var] = {slot, p.type};
    }
    for (const Buffer &buf : f.buffers) {
      if (buf.isParam) {
        frame.buffers[buf.id] = lf->getArg(buf.paramIndex + 1);
      } else {
        llvm::AllocaInst *slot = entryAlloca(b_.getPtrTy(), buf.name + ".slot");
        b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot);
        frame.tempSlots[buf.id] = slot;
      }
    }
    // A size function's `sizes` is host memory: kernels write a device copy.
    hostSizes_ = nullptr;
    for (const Buffer &buf : f.buffers)
      if (buf.isParam && buf.name == "sizes" && f.name.size() > 5 && f.name.compare(f.name.size() - 5, 5, "_size") == 0) {
        hostSizes_ = frame.buffers[buf.id];
        sizesBuffer_ = buf.id;
        // One size per output pointer: the function stores sizes[0 .. count) at constant indexes.
        sizesCount_ = 1;
        anyStmt(f.body, [&](const Stmt &st) {
          if (st.kind == StmtKind::Store && st.buffer == buf.id && st.a->kind == ExprKind::Const)
            sizesCount_ = std::max<int64_t>(sizesCount_, st.a->ival + 1);
          return false;
        });
        llvm::AllocaInst *slot = entryAlloca(b_.getPtrTy(), "sizes.dev");
        b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot);
        frame.tempSlots[buf.id] = slot;
        frame.buffers.erase(buf.id);
        checked(b_.CreateCall(runtime("spl_cuda_alloc", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}),
                              {slot, b_.getInt64(8 * sizesCount_), stream_}));
      }
    if (errorBuffer_ >= 0) {  // the error word, 0 until a check fails
      llvm::AllocaInst *zero = entryAlloca(b_.getInt32Ty(), "spl_error.init");
      b_.CreateStore(b_.getInt32(0), zero);
      checked(b_.CreateCall(runtime("spl_cuda_alloc", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}),
                            {frame.tempSlots.at(errorBuffer_), b_.getInt64(4), stream_}));
      checked(b_.CreateCall(runtime("spl_cuda_memcpy", b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty(), b_.getInt32Ty(), b_.getPtrTy()}),
                            {bufferPtr(errorBuffer_), zero, b_.getInt64(4), b_.getInt32(0), stream_}));
    }
    for (const Segment &seg : segs) {
      if (seg.kind == Segment::Host) {
        for (const StmtP &s : seg.stmts) stmt(s);
      } else {
        launch(seg, varTypes);
      }
    }
    if (hostSizes_) {
      llvm::Value *dev = b_.CreateLoad(b_.getPtrTy(), frame.tempSlots[sizesBuffer_]);
      checked(b_.CreateCall(runtime("spl_cuda_memcpy", b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty(), b_.getInt32Ty(), b_.getPtrTy()}),
                            {hostSizes_, dev, b_.getInt64(sizesCount_ * 8), b_.getInt32(1), stream_}));
    }
    if (errorBuffer_ >= 0 && !b_.GetInsertBlock()->getTerminator()) {
      // The checks' verdict (the copy back waits for the stream).
      llvm::AllocaInst *code = entryAlloca(b_.getInt32Ty(), "spl_error.code");
      checked(b_.CreateCall(runtime("spl_cuda_memcpy", b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty(), b_.getInt32Ty(), b_.getPtrTy()}),
                            {code, bufferPtr(errorBuffer_), b_.getInt64(4), b_.getInt32(1), stream_}));
      emitReturn(b_.CreateLoad(b_.getInt32Ty(), code));
    }
    if (!b_.GetInsertBlock()->getTerminator()) emitReturn(b_.getInt32(0));
    frames_.pop_back();
  }

  int errorBuffer_ = -1;  // the error word's buffer id (--checked), or -1

 protected:
  /// Returns the code from the stub if it is not SPL_OK.
  void checked(llvm::Value *rc) {
    auto *fail = llvm::BasicBlock::Create(ctx_, "cuda.fail", frame().fn);
    auto *ok = llvm::BasicBlock::Create(ctx_, "cuda.ok", frame().fn);
    b_.CreateCondBr(b_.CreateICmpNE(rc, b_.getInt32(0)), fail, ok);
    b_.SetInsertPoint(fail);
    emitReturn(rc);
    b_.SetInsertPoint(ok);
  }

  void launch(const Segment &seg, const std::map<int, Ty> &varTypes) {
    // The kernel's arguments: an array of pointers to each value.
    size_t n = seg.vars.size() + seg.bufs.size() + (seg.splitScratch >= 0 ? 2 : 0);
    llvm::ArrayType *argsTy = llvm::ArrayType::get(b_.getPtrTy(), std::max<size_t>(n, 1));
    llvm::AllocaInst *args = entryAlloca(argsTy, seg.kernel + ".args");
    size_t k = 0;
    for (int v : seg.vars) {
      auto it = frame().vars.find(v);
      if (it == frame().vars.end())
        throw NotSupported(fn_->loc, "a value computed in one GPU kernel and used in another (" + seg.kernel + ")");
      llvm::AllocaInst *cell = entryAlloca(ty(varTypes.at(v)), "arg");
      b_.CreateStore(b_.CreateLoad(ty(it->second.type), it->second.slot), cell);
      b_.CreateStore(cell, b_.CreateConstInBoundsGEP2_32(argsTy, args, 0, static_cast<unsigned>(k++)));
    }
    for (int bid : seg.bufs) {
      llvm::AllocaInst *cell = entryAlloca(b_.getPtrTy(), "arg");
      b_.CreateStore(bufferPtr(bid), cell);
      b_.CreateStore(cell, b_.CreateConstInBoundsGEP2_32(argsTy, args, 0, static_cast<unsigned>(k++)));
    }
    if (seg.splitScratch >= 0) {
      // The long-row split: its scratch (freed with the other temporaries on return) and this
      // call's epoch (a process-wide counter of this object), which marks what the vector
      // kernel of this call wrote.
      checked(b_.CreateCall(runtime("spl_cuda_alloc", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}),
                            {frame().tempSlots.at(seg.splitScratch), b_.getInt64(kScratchBytes), stream_}));
      llvm::AllocaInst *scratchCell = entryAlloca(b_.getPtrTy(), "arg");
      b_.CreateStore(bufferPtr(seg.splitScratch), scratchCell);
      b_.CreateStore(scratchCell, b_.CreateConstInBoundsGEP2_32(argsTy, args, 0, static_cast<unsigned>(k++)));
      llvm::GlobalVariable *counter = m_.getGlobalVariable("spl_long_rows_epoch", true);
      if (!counter)
        counter = new llvm::GlobalVariable(m_, b_.getInt64Ty(), false, llvm::GlobalValue::InternalLinkage, b_.getInt64(0),
                                           "spl_long_rows_epoch");
      llvm::Value *epoch = b_.CreateAdd(b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, b_.getInt64(1), llvm::MaybeAlign(8),
                                                           llvm::AtomicOrdering::Monotonic),
                                        b_.getInt64(1));
      llvm::AllocaInst *epochCell = entryAlloca(b_.getInt64Ty(), "arg");
      b_.CreateStore(epoch, epochCell);
      b_.CreateStore(epochCell, b_.CreateConstInBoundsGEP2_32(argsTy, args, 0, static_cast<unsigned>(k++)));
    }
    llvm::Value *grid = b_.getInt32(1), *block = b_.getInt32(1);
    llvm::Value *gridDim[3] = {b_.getInt32(1), b_.getInt32(1), b_.getInt32(1)};
    llvm::Value *blockDim[3] = {b_.getInt32(1), b_.getInt32(1), b_.getInt32(1)};
    if (seg.kind == Segment::Mapped) {
      MappedInfo info;
      analyzeMapped(seg.stmts[0], info, fn_->loc);
      for (int d = 0; d < 3; ++d) {
        blockDim[d] = b_.getInt32(static_cast<uint32_t>(info.blockDim[d]));
        if (info.gridExtent[d]) {
          llvm::Value *n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, expr(info.gridExtent[d]), b_.getInt64(1));
          gridDim[d] = b_.CreateTrunc(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, n, b_.getInt64(2147483647)), b_.getInt32Ty());
        }
      }
    }
    if (seg.kind == Segment::Grid) {
      const Stmt &loop = *seg.stmts[0];
      block = b_.getInt32(256);
      if (!hasLoad(loop.a) && !hasLoad(loop.b)) {
        // One thread per iteration (up to 32 lanes per row for rows of a compressed level), up
        // to 65535 blocks (the kernel strides over the rest).
        llvm::Value *count = b_.CreateSub(expr(loop.b), expr(loop.a));
        if (loop.balanceBy >= 0 && !loop.userKind) count = b_.CreateMul(count, b_.getInt64(32));
        llvm::Value *blocks = b_.CreateSDiv(b_.CreateAdd(count, b_.getInt64(255)), b_.getInt64(256));
        blocks = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, blocks, b_.getInt64(1));
        blocks = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, blocks, b_.getInt64(65535));
        grid = b_.CreateTrunc(blocks, b_.getInt32Ty());
      } else {
        grid = b_.getInt32(1024);
      }
    }
    launchKernel(seg.kernel, seg.kind == Segment::Mapped ? gridDim[0] : grid, gridDim[1], gridDim[2],
                 seg.kind == Segment::Mapped ? blockDim[0] : block, blockDim[1], blockDim[2], args);
    if (seg.splitScratch >= 0)
      launchKernel(seg.kernel + "_long", b_.getInt32(kLongGrid), b_.getInt32(1), b_.getInt32(1), b_.getInt32(kLongBlock),
                   b_.getInt32(1), b_.getInt32(1), args);
  }

  /// spl_cuda_launch of kernel `name` on the stub's stream; returns its code unless SPL_OK.
  void launchKernel(const std::string &name, llvm::Value *gx, llvm::Value *gy, llvm::Value *gz, llvm::Value *bx, llvm::Value *by,
                    llvm::Value *bz, llvm::Value *args) {
    llvm::Constant *nameText = b_.CreateGlobalString(name, name + ".name", 0, &m_);
    checked(b_.CreateCall(runtime("spl_cuda_launch", b_.getInt32Ty(),
                                  {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(),
                                   b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getPtrTy(), b_.getPtrTy()}),
                          {ptx_, nameText, slot_, gx, gy, gz, bx, by, bz, b_.getInt32(0), stream_, args}));
  }

  void freeTemps() {
    for (const auto &[id, slot] : frame().tempSlots) {
      (void)id;
      b_.CreateCall(runtime("spl_cuda_free", b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}),
                    {b_.CreateLoad(b_.getPtrTy(), slot), stream_});
    }
  }
  void emitReturn(llvm::Value *code) override {
    freeTemps();
    b_.CreateRet(code);
  }
  void parallelLoop(const Stmt &) override { throw InternalError("codegen: a loop on the host of a cuda function"); }
  void barrier() override { throw InternalError("codegen: a barrier on the host"); }
  void allocStmt(const Stmt &s) override {
    const Buffer &buf = bufferInfo(s.buffer);
    int64_t elemBytes = buf.fields.empty() ? tyBytes(buf.elem)
                                           : static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(structOf(buf)));
    if (buf.fields.empty() && buf.elem == Ty::I1) elemBytes = 1;
    llvm::Value *bytes = b_.CreateMul(expr(s.a), b_.getInt64(elemBytes));
    checked(b_.CreateCall(runtime("spl_cuda_alloc", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}),
                          {frame().tempSlots.at(s.buffer), bytes, stream_}));
  }
  void freeStmt(const Stmt &s) override {
    auto it = frame().tempSlots.find(s.buffer);
    if (it == frame().tempSlots.end()) return;
    b_.CreateCall(runtime("spl_cuda_free", b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}),
                  {b_.CreateLoad(b_.getPtrTy(), it->second), stream_});
    b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), it->second);
  }
  void sigmaStmt(const Stmt &s) override {
    const Buffer &src = bufferInfo(s.source);
    if (src.elem != Ty::I32) throw NotSupported(fn_->loc, "the device Sigma precomputation of 64-bit lengths");
    checked(b_.CreateCall(runtime("spl_cuda_sigma_prefix_i32", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()}),
                          {bufferPtr(s.source), expr(s.a), bufferPtr(s.buffer), stream_}));
  }

  llvm::GlobalVariable *ptx_, *slot_;
  llvm::Value *stream_ = nullptr;
  llvm::Value *hostSizes_ = nullptr;
  int sizesBuffer_ = -1;
  int64_t sizesCount_ = 1;  // entries of a size function's `sizes`
};

/// Gives every grid segment whose rows run as vectors of lanes (and may be cut at chunk
/// boundaries) the scratch buffer of the long-row split; the buffer joins f's temporaries, so the
/// stub frees it on return. Called in the same way for the device module and the stubs.
void planLongRowSplits(Function &f, std::vector<Segment> &segs) {
  for (Segment &seg : segs) {
    if (seg.kind != Segment::Grid || hasReturn(seg.stmts[0]) || !DeviceGen::splitsLongRows(*seg.stmts[0])) continue;
    int id = 0;
    for (const Buffer &b : f.buffers) id = std::max(id, b.id);
    Buffer scratch;
    scratch.id = seg.splitScratch = id + 1;
    scratch.name = "spl_long_rows";
    scratch.elem = Ty::I64;
    f.buffers.push_back(scratch);
  }
}

/// The types of every variable a kernel may capture: scalar parameters and host declarations.
std::map<int, Ty> varTypesOf(const Function &f) {
  std::map<int, Ty> types;
  for (const ScalarParam &p : f.scalars) types[p.var] = p.type;
  std::function<void(const StmtP &)> walk = [&](const StmtP &s) {
    if (!s) return;
    if (s->kind == StmtKind::Decl) types[s->var] = s->type;
    if (s->kind == StmtKind::For) types[s->var] = Ty::I64;
    for (const StmtP &b : s->body) walk(b);
  };
  walk(f.body);
  return types;
}

/// Fills each kernel segment's parameters: the scalars and buffers it uses but does not define,
/// and the error word of a checked function (every kernel reads it first).
void captureOf(Segment &seg, const Function &f, int errorBuffer) {
  Uses u;
  for (const StmtP &s : seg.stmts) usesOf(s, u);
  if (errorBuffer >= 0) u.buffers.insert(errorBuffer);
  std::set<int> params;
  for (const ScalarParam &p : f.scalars) params.insert(p.var);
  for (int v : u.vars)
    if (!u.declared.count(v)) seg.vars.push_back(v);
  for (int b : u.buffers)
    if (!u.allocated.count(b)) seg.bufs.push_back(b);  // the kernel's own temporaries
}

/// Builds into `dev` the device module of every cuda function of `m` (verified, not yet
/// optimised); `any` says whether it has a kernel at all (every cuda function may run on the
/// host). False, with `error`, when the NVPTX target is missing.
bool buildDeviceModule(const loopir::Module &m, const CodeGenOptions &opts, llvm::Module &dev, std::string &error,
                       bool &any) {
  any = false;
  if (!prepareDeviceModule(dev, opts, error)) return false;
  llvm::LLVMContext &ctx = dev.getContext();
  for (const loopir::Function &original : m.functions) {
    if (!original.cuda) continue;
    int errorBuffer = -1;
    Function f = withErrorWord(original, errorBuffer);
    std::vector<Segment> segs = segmentsOf(f);
    std::map<int, Ty> vt = varTypesOf(f);
    DeviceGen g(ctx, dev);
    g.setFpContract(opts.fpContract);
    g.errorBuffer_ = errorBuffer;
    for (Segment &s : segs)
      if (s.kind != Segment::Host) captureOf(s, f, errorBuffer);
    planLongRowSplits(f, segs);
    for (Segment &s : segs) {
      if (s.kind == Segment::Host) continue;
      g.kernel(f, s, vt);
      if (s.splitScratch >= 0) g.kernel(f, s, vt, /*longRows=*/true);
      any = true;
    }
  }
  if (!any) return true;
  std::string verifyErrors;
  llvm::raw_string_ostream vs(verifyErrors);
  if (llvm::verifyModule(dev, &vs)) {
    vs.flush();
    throw InternalError("codegen: the device module does not verify:\n" + verifyErrors);
  }
  return true;
}

}  // namespace

bool buildPtx(const loopir::Module &m, const CodeGenOptions &opts, std::string &ptx, std::string &error) {
  llvm::LLVMContext ctx;
  llvm::Module dev("spl_device", ctx);
  bool any = false;
  if (!buildDeviceModule(m, opts, dev, error, any)) return false;
  ptx.clear();
  if (!any) return true;
  return emitPtx(dev, opts, ptx, error);
}

namespace {

/// The bytes the host stubs hand to cuModuleLoadDataEx: NUL-terminated PTX, or for the emulator
/// "SPLEMU01", the bitcode's size as a little-endian u64, then the bitcode of the device module.
bool deviceImage(const loopir::Module &m, const CodeGenOptions &opts, std::string &image, std::string &error) {
  if (!opts.gpuEmulatorImage) return buildPtx(m, opts, image, error);
  llvm::LLVMContext ctx;
  llvm::Module dev("spl_device", ctx);
  bool any = false;
  if (!buildDeviceModule(m, opts, dev, error, any)) return false;
  std::string bitcode;
  if (any) {
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(dev, os);
  }
  image = "SPLEMU01";
  for (int byte = 0; byte < 8; ++byte) image.push_back(static_cast<char>((uint64_t(bitcode.size()) >> (8 * byte)) & 0xff));
  image += bitcode;
  return true;
}

}  // namespace

bool addCudaStubs(llvm::Module &host, const loopir::Module &m, const CodeGenOptions &opts, std::string &error) {
  bool anyCuda = false;
  for (const loopir::Function &f : m.functions) anyCuda = anyCuda || f.cuda;
  if (!anyCuda) return true;
  std::string image;
  if (!deviceImage(m, opts, image, error)) return false;
  llvm::LLVMContext &ctx = host.getContext();
  llvm::Constant *text = llvm::ConstantDataArray::getString(ctx, image, true);
  auto *ptxVar = new llvm::GlobalVariable(host, text->getType(), true, llvm::GlobalValue::PrivateLinkage, text, "spl_ptx");
  ptxVar->setAlignment(llvm::Align(8));
  auto *slot = new llvm::GlobalVariable(host, llvm::PointerType::get(ctx, 0), false, llvm::GlobalValue::InternalLinkage,
                                        llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0)), "spl_module_slot");
  for (const loopir::Function &original : m.functions) {
    if (!original.cuda) continue;
    int errorBuffer = -1;
    Function f = withErrorWord(original, errorBuffer);
    std::vector<Segment> segs = segmentsOf(f);
    for (Segment &s : segs)
      if (s.kind != Segment::Host) captureOf(s, f, errorBuffer);
    planLongRowSplits(f, segs);
    HostGen g(ctx, host, ptxVar, slot);
    g.setFpContract(opts.fpContract);
    g.errorBuffer_ = errorBuffer;
    g.stub(f, segs, varTypesOf(f));
  }
  return true;
}

}  // namespace spl::codegen
