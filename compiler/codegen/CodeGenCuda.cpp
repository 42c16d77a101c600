/// \file CodeGenCuda.cpp: the CUDA back end: device kernels in PTX and their host stubs.
///
/// A cuda function's top-level statements are cut into segments, run in stream order:
///   - an independent loop (GpuGlobal, or Parallel under the default schedule) becomes a
///     grid-stride kernel, one thread per iteration;
///   - a GpuKernel (loopir/GpuWarpRows: vectors of lanes a row, compaction; loopir/GpuMergeRows:
///     a merge path) becomes a kernel whose body is the loop IR's, launched with its thread
///     count in blocks of its size, or on a resident grid (as many blocks as the device holds
///     at once, asked of the driver at each call) with its workspaces (per warp of that grid,
///     from the stream's workspace; arrival counters with the call's epoch, an extra kernel
///     parameter); the GPU nodes (thread indices, shuffles, votes, warp reductions, fences,
///     arrivals) are the NVVM intrinsics;
///   - a nest mapped by mapBlock/mapThread becomes a kernel over that grid (GpuBlock);
///   - other statements with memory effects become a one-thread kernel (serial code);
///   - scalar statements without loads run on the host; device temporaries come from the
///     runtime's workspace of the stream (spl_cuda_call_*: nothing is allocated per call in
///     steady state), and the Sigma precomputation is the runtime's device scan.
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
#include "loopir/Visitor.h"
#include "support/Error.h"
#include "support/Format.h"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace spl::codegen {
namespace {

using namespace loopir;

/// One piece of a cuda function, in order.
struct Segment {
  enum Kind { Host, Grid, Mapped, Serial, Kernel } kind = Host;
  std::vector<StmtP> stmts;  // Host/Serial: the statements; Grid/Mapped: the one loop; Kernel: the GpuKernel
  std::string kernel;        // Grid/Mapped/Serial: the kernel's name
  std::vector<int> vars;     // kernel parameters: scalars first...
  std::vector<int> bufs;     // ...then buffers (a kernel's workspaces among them)
  /// A kernel with a workspace of arrival counters takes the call's epoch after `bufs`.
  bool epoch = false;
};
/// What one CUDA block may hold (every architecture since sm_20): threads, and static shared
/// memory. A mapped nest beyond them could never launch, so it is refused when compiled.
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxStaticShared = 48 * 1024;

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

/// The most loops of `kind` nested on one path from `s` down (a thread kind counts the warp
/// and lane levels too).
int mappedDepth(const Stmt &s, LoopKind kind) {
  class Depth : public Visitor {
   public:
    explicit Depth(LoopKind kind) : kind_(kind) {}
    int deepest = 0;

   protected:
    void visitFor(const Stmt &f) override {
      bool mine = f.loop == kind_ || (kind_ == LoopKind::GpuThread && (f.loop == LoopKind::GpuWarp || f.loop == LoopKind::GpuLane));
      depth_ += mine ? 1 : 0;
      deepest = std::max(deepest, depth_);
      visitChildren(f);
      depth_ -= mine ? 1 : 0;
    }

   private:
    LoopKind kind_;
    int depth_ = 0;
  } depth(kind);
  depth.dispatch(s);
  return depth.deepest;
}

/// The thread and block dimensions of a mapped nest's loops, and the block's and grid's extents.
class MappedNestAnalysis : public Visitor {
 public:
  MappedNestAnalysis(MappedInfo &info, SourceLoc loc) : info_(info), loc_(loc) {}

 protected:
  void visitFor(const Stmt &s) override {
    // mapWarp and mapLane are thread levels too: a lane level is the innermost dimension (x),
    // padded to a whole warp of 32 threads, so each warp level index is one hardware warp.
    bool lane = s.loop == LoopKind::GpuLane;
    if (s.loop == LoopKind::GpuBlock || s.loop == LoopKind::GpuThread || s.loop == LoopKind::GpuWarp || lane) {
      bool thread = s.loop != LoopKind::GpuBlock;
      int dim = mappedDepth(s, thread ? LoopKind::GpuThread : LoopKind::GpuBlock) - 1;
      if (lane && dim != 0) throw NotSupported(loc_, "a mapLane level with thread levels inside it (lanes are the innermost level)");
      if (dim > 2) throw NotSupported(loc_, "more than three nested mapBlock or mapThread levels");
      info_.dimOf[s.var] = {thread, dim};
      ExprP extent = bin(BinOp::Sub, s.b, s.a);
      if (thread) {
        auto up = constUpper(extent);
        if (!up) throw NotSupported(loc_, "a mapThread level whose length has no constant upper bound (" + print(extent) + ")");
        if (lane && *up > 32)
          throw NotSupported(loc_, fmt::format("a mapLane level longer than a warp: at most 32 lanes, found {}", *up));
        info_.blockDim[dim] = std::max(info_.blockDim[dim], lane ? int64_t(32) : std::max<int64_t>(*up, 1));
        info_.threadDims.insert(dim);
      } else {
        if (hasLoad(extent)) throw NotSupported(loc_, "a mapBlock level whose length depends on array contents");
        info_.gridExtent[dim] = extent;
      }
    }
    visitChildren(s);
  }

 private:
  MappedInfo &info_;
  SourceLoc loc_;
};

void analyzeMapped(const StmtP &s, MappedInfo &info, SourceLoc loc) { MappedNestAnalysis(info, loc).visit(s); }

std::vector<Segment> segmentsOf(const Function &f) {
  std::vector<Segment> segs;
  std::vector<StmtP> top = f.body->kind == StmtKind::Block ? f.body->body : std::vector<StmtP>{f.body};
  int k = 0;
  for (const StmtP &s : top) {
    if (s->kind == StmtKind::GpuKernel) {
      Segment g;
      g.kind = Segment::Kernel;
      g.stmts = {s};
      g.kernel = f.name + "_k" + std::to_string(k++);
      segs.push_back(g);
    } else if (isGridLoop(s) || isMappedLoop(s)) {
      Segment g;
      g.kind = isGridLoop(s) ? Segment::Grid : Segment::Mapped;
      g.stmts = {s};
      if (g.kind == Segment::Grid) {
        // How the rows go on threads is the loop's (loopir/GpuRowStrategy chose it).
        internal_assert(s->rows != ast::GpuRowMapping::Auto) << "codegen: grid loop " << s->name << " of " << f.name
                                                             << " has no row mapping (loopir::chooseGpuRowMappings did not run)";
        internal_assert(s->rows == ast::GpuRowMapping::Thread)
            << "codegen: grid loop " << s->name << " of " << f.name << " maps its rows on warps but is not a kernel (loopir::lowerWarpRows or lowerMergeRows did not run)";
      }
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
  void kernel(const Function &f, const Segment &seg, const std::map<int, Ty> &varTypes) {
    fn_ = &f;
    std::vector<llvm::Type *> params;
    for (int v : seg.vars) params.push_back(ty(varTypes.at(v)));
    for (size_t i = 0; i < seg.bufs.size(); ++i) params.push_back(b_.getPtrTy());
    if (seg.epoch) params.push_back(b_.getInt32Ty());
    auto *ft = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    llvm::Function *lf = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, seg.kernel, m_);
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
    epoch_ = seg.epoch ? lf->getArg(static_cast<unsigned>(seg.vars.size() + seg.bufs.size())) : nullptr;
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
    if (seg.kind == Segment::Kernel && !seg.stmts[0]->a) {
      // A resident grid is launched with exactly its block (HostGen::launch asks the driver how
      // many such blocks fit); ptxas may then cap the registers for the blocks per
      // multiprocessor asked for.
      lf->addFnAttr("nvvm.maxntid", std::to_string(seg.stmts[0]->b->ival));
      if (int minBlocks = seg.stmts[0]->knobs.mergeBlocksPerSm; minBlocks > 0) lf->addFnAttr("nvvm.minctasm", std::to_string(minBlocks));
    }
    if (seg.kind == Segment::Kernel) {
      stmt(seg.stmts[0]->body[0]);  // the loop IR says what each thread does (GpuKernel)
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
      throw CompileError(fn_->loc,
                         fmt::format("a mapBlock/mapThread nest of {} threads per block ({} x {} x {}): a CUDA block holds at "
                                     "most {}; map fewer elements per block",
                                     threads, info_.blockDim[0], info_.blockDim[1], info_.blockDim[2], kMaxBlockThreads));
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
    return anyStmt(s, [](const Stmt &x) {
      return x.kind == StmtKind::Barrier ||
             (x.kind == StmtKind::For && x.loop != LoopKind::Serial && x.loop != LoopKind::Reduction);
    });
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
      throw CompileError(fn_->loc, fmt::format("the shared arrays of a mapBlock/mapThread nest take {} bytes per block: a CUDA "
                                               "block has at most {} of static shared memory",
                                               sharedBytes_, kMaxStaticShared));
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

  // ---- the GPU's operations in the loop IR ------------------------------------------------

  llvm::Value *gpuIndexValue(GpuIndexKind k) override {
    static const llvm::Intrinsic::ID ids[4] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x};
    return b_.CreateZExt(b_.CreateIntrinsic(ids[static_cast<int>(k)], {}), b_.getInt64Ty());
  }

  /// shfl.sync's clamp operand for groups of `width` lanes: the segment mask 32 - width in bits
  /// 8-12 (a lane's group is its lane id with those bits), the last lane 31 in bits 0-4.
  llvm::Value *groupClamp(llvm::Value *width) {
    return b_.CreateOr(b_.CreateShl(b_.CreateSub(b_.getInt32(32), width), 8), b_.getInt32(0x1f));
  }

  /// vote.ballot.sync over the whole warp: bit l set when lane l's predicate holds.
  llvm::Value *ballot(llvm::Value *pred) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_ballot_sync, {b_.getInt32(0xffffffffu), pred});
  }

  /// The lanes of this lane's group of `width` whose predicate holds, before this lane or all:
  /// a ballot of the warp, the group's bits shifted down, a population count.
  llvm::Value *warpVoteValue(const Expr &e) override {
    llvm::Type *i32 = b_.getInt32Ty();
    llvm::Value *pred = expr(e.args[0]);
    llvm::Value *width = b_.CreateTrunc(expr(e.args[1]), i32);
    llvm::Value *lane = b_.CreateAnd(b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}), b_.getInt32(31));
    llvm::Value *laneInGroup = b_.CreateURem(lane, width);
    llvm::Value *shift = b_.CreateSub(lane, laneInGroup);
    llvm::Value *groupBits = b_.CreateSelect(b_.CreateICmpEQ(width, b_.getInt32(32)), b_.getInt32(0xffffffffu),
                                             b_.CreateSub(b_.CreateShl(b_.getInt32(1), width), b_.getInt32(1)));
    llvm::Value *mask = b_.CreateAnd(b_.CreateLShr(ballot(pred), shift), groupBits);
    if (e.vote == VoteKind::Before) mask = b_.CreateAnd(mask, b_.CreateSub(b_.CreateShl(b_.getInt32(1), laneInGroup), b_.getInt32(1)));
    return b_.CreateZExt(b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, mask), b_.getInt64Ty());
  }

  llvm::Value *warpShuffleValue(const Expr &e) override {
    llvm::Value *v = expr(e.args[0]);
    llvm::Value *lane = b_.CreateTrunc(expr(e.args[1]), b_.getInt32Ty());
    llvm::Value *width = b_.CreateTrunc(expr(e.args[2]), b_.getInt32Ty());
    return shuffle(e.shuffle == ShuffleKind::Down ? Shuffle::Down : Shuffle::Index, v, lane, groupClamp(width), e.type);
  }

  /// The offsets of a tree of down-shuffles over groups of `width` lanes (an i32): width/2,
  /// ..., 1, each given to `step` (unrolled when the width is a constant, else a loop).
  void shuffleTree(llvm::Value *width, const std::function<void(llvm::Value *offset)> &step) {
    if (auto *known = llvm::dyn_cast<llvm::ConstantInt>(width)) {
      for (uint64_t offset = known->getZExtValue() / 2; offset >= 1; offset /= 2) step(b_.getInt32(static_cast<uint32_t>(offset)));
      return;
    }
    llvm::AllocaInst *off = entryAlloca(b_.getInt32Ty(), "shfl.off");
    b_.CreateStore(b_.CreateLShr(width, 1), off);
    whileLoop([&] { return b_.CreateICmpUGT(b_.CreateLoad(b_.getInt32Ty(), off), b_.getInt32(0)); },
              [&] {
                llvm::Value *o = b_.CreateLoad(b_.getInt32Ty(), off);
                step(o);
                b_.CreateStore(b_.CreateLShr(o, 1), off);
              });
  }

  /// Each lane combines its value with the one `offset` lanes up in its group, for each offset
  /// of the shuffle tree: the group's first lane ends with the whole group's combination.
  void warpReduce(const Stmt &s) override {
    VarSlot acc = frame().vars.at(s.var);
    llvm::AllocaInst *partner = entryAlloca(ty(acc.type), "warp.partner");
    frame().vars[s.partner] = {partner, acc.type};
    llvm::Value *width = b_.CreateTrunc(expr(s.a), b_.getInt32Ty());
    llvm::Value *clamp = groupClamp(width);
    shuffleTree(width, [&](llvm::Value *offset) {
      llvm::Value *mine = b_.CreateLoad(ty(acc.type), acc.slot);
      b_.CreateStore(shuffle(Shuffle::Down, mine, offset, clamp, acc.type), partner);
      b_.CreateStore(expr(s.b), acc.slot);
    });
  }

  /// A fence of device scope: what this thread wrote before it is seen by every thread of the
  /// device before what it writes after (loop IR's Fence).
  void fence() override {
    b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, ctx_.getOrInsertSyncScopeID("device"));
  }

  /// Loop IR's Arrive: a counter word is (epoch << 32 | count) (spl_cuda_call_counters). An
  /// atomic max lifts a word left by an earlier call to this call's epoch with a count of 0,
  /// then an atomic add counts this arrival; the count is the add's old low half plus one.
  void arrive(const Stmt &s) override {
    if (!epoch_) throw InternalError("codegen: an arrival count in a kernel without the call's epoch");
    llvm::Type *et = nullptr;
    llvm::Value *word = elementPtr(s.buffer, expr(s.a), -1, et);
    llvm::Value *tag = b_.CreateShl(b_.CreateZExt(epoch_, b_.getInt64Ty()), 32);
    auto device = ctx_.getOrInsertSyncScopeID("device");
    b_.CreateAtomicRMW(llvm::AtomicRMWInst::UMax, word, tag, llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic, device);
    llvm::Value *before = b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, word, b_.getInt64(1), llvm::MaybeAlign(8),
                                             llvm::AtomicOrdering::Monotonic, device);
    llvm::Value *count = b_.CreateAdd(b_.CreateAnd(before, b_.getInt64(0xffffffff)), b_.getInt64(1));
    b_.CreateStore(count, frame().vars.at(s.var).slot);
  }

  enum class Shuffle { Down, Up, Index };
  /// shfl.sync over the whole warp (mask 0xffffffff) of a 32- or 64-bit value (two halves).
  llvm::Value *shuffle(Shuffle kind, llvm::Value *v, llvm::Value *b, llvm::Value *clamp, Ty t) {
    static const llvm::Intrinsic::ID i32Ids[3] = {llvm::Intrinsic::nvvm_shfl_sync_down_i32, llvm::Intrinsic::nvvm_shfl_sync_up_i32,
                                                  llvm::Intrinsic::nvvm_shfl_sync_idx_i32};
    static const llvm::Intrinsic::ID f32Ids[3] = {llvm::Intrinsic::nvvm_shfl_sync_down_f32, llvm::Intrinsic::nvvm_shfl_sync_up_f32,
                                                  llvm::Intrinsic::nvvm_shfl_sync_idx_f32};
    int k = static_cast<int>(kind);
    llvm::Value *mask = b_.getInt32(0xffffffffu);
    if (t == Ty::F32) return b_.CreateIntrinsic(f32Ids[k], {mask, v, b, clamp});
    if (t == Ty::I32) return b_.CreateIntrinsic(i32Ids[k], {mask, v, b, clamp});
    // 64-bit values: two 32-bit halves.
    llvm::Value *bits = t == Ty::F64 ? b_.CreateBitCast(v, b_.getInt64Ty()) : v;
    llvm::Value *lo = b_.CreateTrunc(bits, b_.getInt32Ty());
    llvm::Value *hi = b_.CreateTrunc(b_.CreateLShr(bits, 32), b_.getInt32Ty());
    lo = b_.CreateIntrinsic(i32Ids[k], {mask, lo, b, clamp});
    hi = b_.CreateIntrinsic(i32Ids[k], {mask, hi, b, clamp});
    llvm::Value *joined = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    return t == Ty::F64 ? b_.CreateBitCast(joined, b_.getDoubleTy()) : joined;
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
  llvm::Value *epoch_ = nullptr;  // the kernel's epoch parameter (Segment::epoch), else null
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
    // Device temporaries come from the runtime's workspace of the stream, for this call.
    call_ = nullptr;
    if (needsCall(f)) {
      call_ = entryAlloca(b_.getPtrTy(), "spl_call");
      b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), call_);
      checked(b_.CreateCall(runtime("spl_cuda_call_begin", b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}), {stream_, call_}));
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
        deviceTemp(slot, b_.getInt64(8 * sizesCount_));
      }
    if (errorBuffer_ >= 0) {  // the error word, 0 until a check fails
      llvm::AllocaInst *zero = entryAlloca(b_.getInt32Ty(), "spl_error.init");
      b_.CreateStore(b_.getInt32(0), zero);
      deviceTemp(frame.tempSlots.at(errorBuffer_), b_.getInt64(4));
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
  /// Whether the stub takes device memory from the workspace: temporaries (the Sigma offsets,
  /// the error word, a kernel's workspaces) or a size function's sizes.
  static bool needsCall(const Function &f) {
    for (const Buffer &buf : f.buffers)
      if (!buf.isParam || (buf.name == "sizes" && f.name.size() > 5 && f.name.compare(f.name.size() - 5, 5, "_size") == 0)) return true;
    return false;
  }
  /// *slot = `bytes` of device memory for this call (spl_cuda_call_alloc).
  void deviceTemp(llvm::Value *slot, llvm::Value *bytes) {
    if (!call_) throw InternalError("codegen: a device temporary in a stub without a workspace call");
    checked(b_.CreateCall(runtime("spl_cuda_call_alloc", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}),
                          {b_.CreateLoad(b_.getPtrTy(), call_), bytes, slot}));
  }

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
    // A kernel on a resident grid: as many blocks as the device holds at once, and its
    // workspaces for that many warps (before the buffers are passed: they are among them).
    llvm::Value *residentBlocks = nullptr;
    llvm::AllocaInst *epoch = nullptr;
    if (seg.kind == Segment::Kernel && !seg.stmts[0]->a) {
      const int64_t threads = seg.stmts[0]->b->ival;
      llvm::AllocaInst *blocks = entryAlloca(b_.getInt32Ty(), "resident.blocks");
      // A kernel asking for B blocks a multiprocessor (its registers capped for B) runs on B
      // a multiprocessor, though more might fit.
      const auto perSm = static_cast<uint32_t>(std::max(0, seg.stmts[0]->knobs.mergeBlocksPerSm));
      checked(b_.CreateCall(runtime("spl_cuda_resident_blocks_at_most", b_.getInt32Ty(),
                                    {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getPtrTy()}),
                            {ptx_, kernelName(seg.kernel), slot_, b_.getInt32(static_cast<uint32_t>(threads)), b_.getInt32(perSm), blocks}));
      residentBlocks = b_.CreateLoad(b_.getInt32Ty(), blocks);
      llvm::Value *warps = b_.CreateMul(b_.CreateZExt(residentBlocks, b_.getInt64Ty()), b_.getInt64((threads + 31) / 32));
      for (int bid : seg.bufs) {
        const Buffer &buf = bufferInfo(bid);
        if (buf.perWarp <= 0) continue;
        llvm::Value *count = b_.CreateMul(warps, b_.getInt64(buf.perWarp));
        if (!buf.arrivals) {
          deviceTemp(frame().tempSlots.at(bid), b_.CreateMul(count, b_.getInt64(tyBytes(buf.elem))));
          continue;
        }
        if (epoch) throw InternalError("codegen: kernel " + seg.kernel + " has two workspaces of arrival counters");
        epoch = entryAlloca(b_.getInt32Ty(), "call.epoch");
        checked(b_.CreateCall(runtime("spl_cuda_call_counters", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()}),
                              {b_.CreateLoad(b_.getPtrTy(), call_), count, frame().tempSlots.at(bid), epoch}));
      }
    }
    if (seg.epoch != (epoch != nullptr)) throw InternalError("codegen: kernel " + seg.kernel + "'s epoch parameter and its arrival counters disagree");
    // The kernel's arguments: an array of pointers to each value.
    size_t n = seg.vars.size() + seg.bufs.size() + (seg.epoch ? 1 : 0);
    llvm::ArrayType *argsTy = llvm::ArrayType::get(b_.getPtrTy(), std::max<size_t>(n, 1));
    llvm::AllocaInst *args = entryAlloca(argsTy, seg.kernel + ".args");
    size_t k = 0;
    auto pass = [&](llvm::AllocaInst *cell) { b_.CreateStore(cell, b_.CreateConstInBoundsGEP2_32(argsTy, args, 0, static_cast<unsigned>(k++))); };
    for (int v : seg.vars) {
      auto it = frame().vars.find(v);
      if (it == frame().vars.end())
        throw NotSupported(fn_->loc, "a value computed in one GPU kernel and used in another (" + seg.kernel + ")");
      llvm::AllocaInst *cell = entryAlloca(ty(varTypes.at(v)), "arg");
      b_.CreateStore(b_.CreateLoad(ty(it->second.type), it->second.slot), cell);
      pass(cell);
    }
    for (int bid : seg.bufs) {
      llvm::AllocaInst *cell = entryAlloca(b_.getPtrTy(), "arg");
      b_.CreateStore(bufferPtr(bid), cell);
      pass(cell);
    }
    if (epoch) pass(epoch);
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
    if (seg.kind == Segment::Kernel && residentBlocks) {
      block = b_.getInt32(static_cast<uint32_t>(seg.stmts[0]->b->ival));
      grid = residentBlocks;
    } else if (seg.kind == Segment::Kernel) {
      // At least the kernel's threads, up to 65535 blocks (its body strides over the rest).
      const Stmt &k = *seg.stmts[0];
      block = b_.getInt32(static_cast<uint32_t>(k.b->ival));
      llvm::Value *blocks = b_.CreateSDiv(b_.CreateAdd(expr(k.a), b_.getInt64(k.b->ival - 1)), b_.getInt64(k.b->ival));
      blocks = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, blocks, b_.getInt64(1));
      blocks = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, blocks, b_.getInt64(65535));
      grid = b_.CreateTrunc(blocks, b_.getInt32Ty());
    } else if (seg.kind == Segment::Grid) {
      const Stmt &loop = *seg.stmts[0];
      block = b_.getInt32(256);
      if (!hasLoad(loop.a) && !hasLoad(loop.b)) {
        // One thread per iteration, up to 65535 blocks (the kernel strides over the rest).
        llvm::Value *count = b_.CreateSub(expr(loop.b), expr(loop.a));
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
  }

  /// The kernel's name as a C string (one global per kernel).
  llvm::Constant *kernelName(const std::string &name) {
    if (llvm::GlobalVariable *known = m_.getGlobalVariable(name + ".name", true)) return known;
    return b_.CreateGlobalString(name, name + ".name", 0, &m_);
  }

  /// spl_cuda_launch of kernel `name` on the stub's stream; returns its code unless SPL_OK.
  void launchKernel(const std::string &name, llvm::Value *gx, llvm::Value *gy, llvm::Value *gz, llvm::Value *bx, llvm::Value *by,
                    llvm::Value *bz, llvm::Value *args) {
    llvm::Constant *nameText = kernelName(name);
    checked(b_.CreateCall(runtime("spl_cuda_launch", b_.getInt32Ty(),
                                  {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(),
                                   b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getPtrTy(), b_.getPtrTy()}),
                          {ptx_, nameText, slot_, gx, gy, gz, bx, by, bz, b_.getInt32(0), stream_, args}));
  }

  /// Every return closes the workspace call: its temporaries go back to the workspace (later
  /// calls on the stream run after the work this one queued).
  void emitReturn(llvm::Value *code) override {
    if (call_)
      b_.CreateCall(runtime("spl_cuda_call_end", b_.getInt32Ty(), {b_.getPtrTy()}), {b_.CreateLoad(b_.getPtrTy(), call_)});
    b_.CreateRet(code);
  }
  void parallelLoop(const Stmt &) override { throw InternalError("codegen: a loop on the host of a cuda function"); }
  void barrier() override { throw InternalError("codegen: a barrier on the host"); }
  void allocStmt(const Stmt &s) override {
    const Buffer &buf = bufferInfo(s.buffer);
    int64_t elemBytes = buf.fields.empty() ? tyBytes(buf.elem)
                                           : static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(structOf(buf)));
    if (buf.fields.empty() && buf.elem == Ty::I1) elemBytes = 1;
    deviceTemp(frame().tempSlots.at(s.buffer), b_.CreateMul(expr(s.a), b_.getInt64(elemBytes)));
  }
  /// A temporary lives until the call ends (the workspace takes it back then).
  void freeStmt(const Stmt &) override {}
  void sigmaStmt(const Stmt &s) override {
    const Buffer &src = bufferInfo(s.source);
    if (src.elem != Ty::I32) throw NotSupported(fn_->loc, "the device Sigma precomputation of 64-bit lengths");
    checked(b_.CreateCall(runtime("spl_cuda_sigma_prefix_i32", b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()}),
                          {bufferPtr(s.source), expr(s.a), bufferPtr(s.buffer), stream_}));
  }

  llvm::GlobalVariable *ptx_, *slot_;
  llvm::Value *stream_ = nullptr;
  llvm::AllocaInst *call_ = nullptr;  // the workspace call's handle (spl_cuda_call_begin), if any
  llvm::Value *hostSizes_ = nullptr;
  int sizesBuffer_ = -1;
  int64_t sizesCount_ = 1;  // entries of a size function's `sizes`
};

/// The types of every variable a kernel may capture: scalar parameters and host declarations.
std::map<int, Ty> varTypesOf(const Function &f) {
  std::map<int, Ty> types;
  for (const ScalarParam &p : f.scalars) types[p.var] = p.type;
  class Collect : public Visitor {
   public:
    explicit Collect(std::map<int, Ty> &types) : types_(types) {}

   protected:
    void visitDecl(const Stmt &s) override { types_[s.var] = s.type; }
    void visitFor(const Stmt &s) override {
      types_[s.var] = Ty::I64;
      visitChildren(s);
    }

   private:
    std::map<int, Ty> &types_;
  } collect(types);
  collect.visit(f.body);
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
  for (int b : u.buffers) {
    if (u.allocated.count(b)) continue;  // the kernel's own temporaries
    seg.bufs.push_back(b);
    const Buffer *buf = f.buffer(b);
    seg.epoch = seg.epoch || (buf && buf->arrivals);
  }
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
    for (Segment &s : segs) {
      if (s.kind == Segment::Host) continue;
      g.kernel(f, s, vt);
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
/// "SPLEMU01", the bitcode's size as a little-endian u64, then the bitcode of the optimised
/// device module (the module the PTX is emitted from).
bool deviceImage(const loopir::Module &m, const CodeGenOptions &opts, std::string &image, std::string &error) {
  if (!opts.gpuEmulatorImage) return buildPtx(m, opts, image, error);
  llvm::LLVMContext ctx;
  llvm::Module dev("spl_device", ctx);
  bool any = false;
  if (!buildDeviceModule(m, opts, dev, error, any)) return false;
  std::string bitcode;
  if (any) {
    // The code the PTX would come from: the optimiser's changes (code it duplicates, moves or
    // merges) run on the emulator too.
    if (!optimizeDeviceModule(dev, opts, error)) return false;
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
    HostGen g(ctx, host, ptxVar, slot);
    g.setFpContract(opts.fpContract);
    g.errorBuffer_ = errorBuffer;
    g.stub(f, segs, varTypesOf(f));
  }
  return true;
}

}  // namespace spl::codegen
