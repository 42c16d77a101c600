/// \file CodeGenCpu.cpp: the CPU back end (see CodeGen.h).
/// Each Parallel loop is outlined into an internal function `void body(ptr closure, i64 begin,
/// i64 end)` run by spl_parallel_for, with the values it reads captured in a closure struct and
/// an error slot for `return` inside it. Temporaries whose size has a small constant bound live
/// on the stack (up to 16 KB each, 32 KB a function), others come from spl_alloc; every return
/// path frees the ones still live.
#include <algorithm>
#include <functional>
#include <set>

#include "codegen/CodeGen.h"
#include "codegen/EmitLLVM.h"
#include "codegen/LoopCodeGen.h"
#include "support/Error.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace spl::codegen {
namespace {

using namespace loopir;

/// The temporaries a function allocates itself, by buffer (those inside the parallel loops it
/// outlines belong to their bodies' functions): the bytes of each whose size has a constant
/// bound, -1 for the others.
class OwnTemps : public Visitor {
 public:
  explicit OwnTemps(std::function<int64_t(int)> elemBytes) : elemBytes_(std::move(elemBytes)) {}
  std::map<int, int64_t> bytes;

 protected:
  void visitFor(const Stmt &s) override {
    if (s.loop != LoopKind::Parallel) visitChildren(s);
  }
  void visitAlloc(const Stmt &s) override {
    auto cap = constUpper(s.a);
    bytes[s.buffer] = cap ? *cap * elemBytes_(s.buffer) : -1;
  }

 private:
  std::function<int64_t(int)> elemBytes_;
};

class CpuGen : public LoopCodeGen {
 public:
  using LoopCodeGen::LoopCodeGen;
  void setPreferVectorBits(int bits) { preferVectorBits_ = bits; }

  void function(const Function &f) {
    fn_ = &f;
    std::vector<llvm::Type *> params(f.numParams, nullptr);
    for (const ScalarParam &p : f.scalars) params[p.paramIndex] = ty(p.type);
    for (const Buffer &buf : f.buffers)
      if (buf.isParam) params[buf.paramIndex] = b_.getPtrTy();
    for (llvm::Type *&t : params)
      if (!t) throw InternalError("codegen: a parameter of " + f.name + " has no type");
    auto *ft = llvm::FunctionType::get(b_.getInt32Ty(), params, false);
    llvm::Function *lf = llvm::Function::Create(ft, f.internal ? llvm::GlobalValue::InternalLinkage : llvm::GlobalValue::ExternalLinkage,
                                                f.name, m_);
    attributes(lf);
    for (const Buffer &buf : f.buffers) {
      if (!buf.isParam) continue;
      // Outputs never overlap inputs (LANGUAGE.md section 8) and inputs are only read.
      lf->addParamAttr(buf.paramIndex, llvm::Attribute::NoAlias);
      lf->addParamAttr(buf.paramIndex, llvm::Attribute::getWithCaptureInfo(ctx_, llvm::CaptureInfo::none()));
      if (!buf.isOutput) lf->addParamAttr(buf.paramIndex, llvm::Attribute::ReadOnly);
      lf->getArg(buf.paramIndex)->setName(buf.name);
    }
    for (const ScalarParam &p : f.scalars) {
      lf->getArg(p.paramIndex)->setName(p.name);
      if (p.type == Ty::I1) lf->addParamAttr(p.paramIndex, llvm::Attribute::ZExt);
    }
    Frame frame;
    frame.fn = lf;
    frame.entry = llvm::BasicBlock::Create(ctx_, "entry", lf);
    b_.SetInsertPoint(frame.entry);
    frames_.push_back(&frame);
    bindParams(f, lf);
    planTemps({f.body});
    stmt(f.body);
    if (!b_.GetInsertBlock()->getTerminator()) emitReturn(b_.getInt32(0));
    frames_.pop_back();
  }

 protected:
  void freeTemps() {
    for (const auto &[id, slot] : frame().tempSlots) {
      if (stackTemps_.count(id)) continue;
      freeTemp(id, b_.CreateLoad(b_.getPtrTy(), slot));
    }
  }

  /// Gives back a temporary at `p`, unless p is its stack buffer (allocStmt).
  void freeTemp(int buffer, llvm::Value *p) {
    auto own = shareBuffers_.find({frame().fn, buffer});
    if (own == shareBuffers_.end()) {
      b_.CreateCall(runtime("spl_temp_free", b_.getVoidTy(), {b_.getPtrTy()}), {p});
      return;
    }
    auto *given = llvm::BasicBlock::Create(ctx_, "temp.free", frame().fn);
    auto *done = llvm::BasicBlock::Create(ctx_, "temp.freed", frame().fn);
    b_.CreateCondBr(b_.CreateICmpEQ(p, own->second), done, given);
    b_.SetInsertPoint(given);
    b_.CreateCall(runtime("spl_temp_free", b_.getVoidTy(), {b_.getPtrTy()}), {p});
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  void emitReturn(llvm::Value *code) override {
    freeTemps();
    if (frame().errorSlot) {
      b_.CreateStore(code, frame().errorSlot);
      b_.CreateRetVoid();
    } else {
      b_.CreateRet(code);
    }
  }

  void barrier() override { throw InternalError("codegen: a GPU barrier in CPU code"); }

  /// A temporary: in the function's frame when its size has a constant bound of at most
  /// kCpuStackTempBytes and fits what is left of the function's kCpuStackFrameBytes (a
  /// window's partial results, allocated in every iteration of its loop, would otherwise cost
  /// an allocation each); one whose size is known at run time only in a stack buffer of its
  /// own, its share of what the bounded ones leave of the frame (planTemps), when its size at
  /// run time fits it; the others from spl_temp_alloc, the runtime's scratch of the calling
  /// thread, taken and given back in stack order (a call and a thread-local access, about 13
  /// ns a temporary), or the heap where it does not fit. A malloc and a free of 64-byte aligned
  /// memory took about 50 ns of a 110 ns dasum of 100 elements (its block sums), and 110 ns of
  /// a 340 ns dgemv of 32 x 32 on a 2-core AMD EPYC (Zen 3). Each temporary is memory of its
  /// own, so that LLVM knows two never overlap (a symv's column sums and its parts' copies
  /// carved at run time from one stack buffer ran its loops scalar: 8x slower at n = 256).
  void allocStmt(const Stmt &s) override {
    const Buffer &buf = bufferInfo(s.buffer);
    const int64_t elemBytes = tempElemBytes(s.buffer);
    auto it = frame().tempSlots.find(s.buffer);
    if (it == frame().tempSlots.end()) {
      llvm::AllocaInst *slot = entryAlloca(b_.getPtrTy(), buf.name + ".slot");
      llvm::IRBuilder<> eb(frame().entry, std::next(llvm::BasicBlock::iterator(slot)));
      eb.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot);
      it = frame().tempSlots.emplace(s.buffer, slot).first;
    }
    if (localTemp(s, elemBytes, kCpuStackTempBytes) && takeStack(*constUpper(s.a) * elemBytes)) {
      auto *arrTy = llvm::ArrayType::get(b_.getInt8Ty(), static_cast<uint64_t>(std::max<int64_t>(1, *constUpper(s.a) * elemBytes)));
      llvm::AllocaInst *local = entryAlloca(arrTy, buf.name + ".local");
      local->setAlignment(llvm::Align(64));
      b_.CreateStore(local, it->second);
      stackTemps_.insert(s.buffer);
      return;
    }
    llvm::Value *bytes = b_.CreateMul(expr(s.a), b_.getInt64(elemBytes));
    const int64_t share = constUpper(s.a) ? 0 : tempShare_[frame().fn];
    if (share == 0) {
      llvm::Value *p = b_.CreateCall(runtime("spl_temp_alloc", b_.getPtrTy(), {b_.getInt64Ty()}), {bytes});
      b_.CreateStore(p, it->second);
      returnIfAllocFailed(p, bytes);  // NULL for 0 bytes
      return;
    }
    auto own = shareBuffers_.find({frame().fn, s.buffer});
    if (own == shareBuffers_.end()) {
      llvm::AllocaInst *local = entryAlloca(llvm::ArrayType::get(b_.getInt8Ty(), static_cast<uint64_t>(share)), buf.name + ".small");
      local->setAlignment(llvm::Align(64));
      own = shareBuffers_.emplace(std::make_pair(frame().fn, s.buffer), local).first;
    }
    auto *onStack = llvm::BasicBlock::Create(ctx_, "temp.stack", frame().fn);
    auto *elsewhere = llvm::BasicBlock::Create(ctx_, "temp.scratch", frame().fn);
    auto *done = llvm::BasicBlock::Create(ctx_, "temp.ready", frame().fn);
    b_.CreateCondBr(b_.CreateICmpULE(bytes, b_.getInt64(share)), onStack, elsewhere);
    b_.SetInsertPoint(onStack);
    b_.CreateStore(own->second, it->second);
    b_.CreateBr(done);
    b_.SetInsertPoint(elsewhere);
    llvm::Value *p = b_.CreateCall(runtime("spl_temp_alloc", b_.getPtrTy(), {b_.getInt64Ty()}), {bytes});
    b_.CreateStore(p, it->second);
    returnIfAllocFailed(p, bytes);  // NULL for 0 bytes
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  /// The bytes of an element of temporary `buffer` (a packed struct's size; a bool a byte).
  int64_t tempElemBytes(int buffer) {
    const Buffer &buf = bufferInfo(buffer);
    if (!buf.fields.empty()) return static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(structOf(buf)));
    return buf.elem == Ty::I1 ? 1 : tyBytes(buf.elem);
  }

  /// Splits the stack the current function's temporaries may take (kCpuStackFrameBytes): the
  /// ones with a constant bound of at most kCpuStackTempBytes first (allocStmt places them in
  /// order while they fit), then the rest in equal shares of whole lines, at most
  /// kCpuStackTempBytes each, among those whose size is known at run time only (symv's four:
  /// 8 KB each, where a buffer of 16 KB each had held two and sent the others to the heap).
  void planTemps(const std::vector<StmtP> &region) {
    OwnTemps own([this](int b) { return tempElemBytes(b); });
    for (const StmtP &st : region) own.visit(st);
    int64_t bounded = 0, unbounded = 0;
    for (const auto &[buffer, bytes] : own.bytes) {
      if (bytes < 0) ++unbounded;
      else if (bytes <= kCpuStackTempBytes) bounded += bytes;
    }
    const int64_t left = kCpuStackFrameBytes - std::min(bounded, kCpuStackFrameBytes);
    tempShare_[frame().fn] = unbounded == 0 ? 0 : std::min(kCpuStackTempBytes, left / unbounded) & ~int64_t{63};
  }

  void freeStmt(const Stmt &s) override {
    auto it = frame().tempSlots.find(s.buffer);
    if (it == frame().tempSlots.end() || stackTemps_.count(s.buffer)) return;
    freeTemp(s.buffer, b_.CreateLoad(b_.getPtrTy(), it->second));
    b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), it->second);
  }

  void sigmaStmt(const Stmt &s) override {
    const Buffer &src = bufferInfo(s.source);
    std::string name = src.elem == Ty::I64 ? "spl_sigma_prefix_i64" : "spl_sigma_prefix_i32";
    llvm::Value *rc = b_.CreateCall(runtime(name, b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}),
                                    {bufferPtr(s.source), expr(s.a), bufferPtr(s.buffer)});
    auto *fail = llvm::BasicBlock::Create(ctx_, "sigma.fail", frame().fn);
    auto *ok = llvm::BasicBlock::Create(ctx_, "sigma.ok", frame().fn);
    b_.CreateCondBr(b_.CreateICmpNE(rc, b_.getInt32(0)), fail, ok);
    b_.SetInsertPoint(fail);
    emitReturn(rc);
    b_.SetInsertPoint(ok);
  }

  /// Rows [0, n) of a compressed level split into chunks of about equal nonzeros (plus rows):
  /// spl_balance_rows computes the boundaries from the offsets, and each chunk runs the outlined
  /// body over its rows through spl_parallel_chunks. Under kMinParallelWork nonzeros plus rows
  /// the body runs over all rows at once, on the calling thread, without the pool.
  void runBalanced(const Stmt &s, llvm::Function *bodyFn, llvm::Value *closure, llvm::Value *n) {
    constexpr int64_t kMaxParts = 1024;
    // Handing chunks to the pool costs about 0.4 us with its workers awake and several us when
    // they sleep; CSR rows take about 0.5 ns an entry. On the 2-core AMD EPYC two threads beat
    // one from about 4000 entries (random 8-entry rows, calls back to back: 2000 entries took
    // 1.07 us on one thread and 1.40 on two, 5000 took 2.57 and 2.40), and the bundled small
    // matrices ran 1.2-12x slower than Eigen on two threads (Eigen stays serial under 20000).
    constexpr int64_t kMinParallelWork = 4096;
    const Buffer &offs = bufferInfo(s.balanceBy);
    llvm::Type *offTy = memTy(offs.elem);
    llvm::Value *first = b_.CreateLoad(offTy, bufferPtr(s.balanceBy));
    llvm::Value *last = b_.CreateLoad(offTy, b_.CreateGEP(offTy, bufferPtr(s.balanceBy), n));
    llvm::Value *work = b_.CreateAdd(b_.CreateSub(b_.CreateSExt(last, b_.getInt64Ty()), b_.CreateSExt(first, b_.getInt64Ty())), n);
    llvm::Function *fn = frame().fn;
    auto *serial = llvm::BasicBlock::Create(ctx_, "rows.serial", fn);
    auto *pooled = llvm::BasicBlock::Create(ctx_, "rows.pooled", fn);
    auto *done = llvm::BasicBlock::Create(ctx_, "rows.done", fn);
    b_.CreateCondBr(b_.CreateICmpSLT(work, b_.getInt64(kMinParallelWork)), serial, pooled);
    b_.SetInsertPoint(serial);
    b_.CreateCall(bodyFn, {closure, b_.getInt64(0), n});
    b_.CreateBr(done);
    b_.SetInsertPoint(pooled);
    llvm::Value *threads = b_.CreateCall(runtime("spl_num_threads", b_.getInt32Ty(), {}), {});
    llvm::Value *parts = b_.CreateMul(b_.CreateSExt(threads, b_.getInt64Ty()), b_.getInt64(4));
    parts = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, parts, b_.getInt64(kMaxParts));
    parts = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, parts, b_.getInt64(1));
    auto *boundsTy = llvm::ArrayType::get(b_.getInt64Ty(), kMaxParts + 1);
    llvm::AllocaInst *bounds = entryAlloca(boundsTy, "row.bounds");
    std::string balance = offs.elem == Ty::I64 ? "spl_balance_rows_i64" : "spl_balance_rows_i32";
    b_.CreateCall(runtime(balance, b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy()}),
                  {bufferPtr(s.balanceBy), n, parts, bounds});
    // The chunk function: void chunk({closure, bounds}, c0, c1) runs body(closure, bounds[c], bounds[c+1]).
    llvm::StructType *pairTy = llvm::StructType::get(ctx_, {b_.getPtrTy(), b_.getPtrTy()});
    llvm::AllocaInst *pair = entryAlloca(pairTy, "chunk.closure");
    b_.CreateStore(closure, b_.CreateStructGEP(pairTy, pair, 0));
    b_.CreateStore(bounds, b_.CreateStructGEP(pairTy, pair, 1));
    auto *fnTy = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    llvm::Function *chunk = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, bodyFn->getName() + ".chunk", m_);
    attributes(chunk);
    {
      llvm::IRBuilder<> cb(llvm::BasicBlock::Create(ctx_, "entry", chunk));
      llvm::Value *cl = cb.CreateLoad(cb.getPtrTy(), cb.CreateStructGEP(pairTy, chunk->getArg(0), 0));
      llvm::Value *bd = cb.CreateLoad(cb.getPtrTy(), cb.CreateStructGEP(pairTy, chunk->getArg(0), 1));
      auto *header = llvm::BasicBlock::Create(ctx_, "c.header", chunk);
      auto *body = llvm::BasicBlock::Create(ctx_, "c.body", chunk);
      auto *exit = llvm::BasicBlock::Create(ctx_, "c.exit", chunk);
      llvm::BasicBlock *entry = cb.GetInsertBlock();
      cb.CreateBr(header);
      cb.SetInsertPoint(header);
      llvm::PHINode *c = cb.CreatePHI(cb.getInt64Ty(), 2);
      c->addIncoming(chunk->getArg(1), entry);
      cb.CreateCondBr(cb.CreateICmpSLT(c, chunk->getArg(2)), body, exit);
      cb.SetInsertPoint(body);
      llvm::Value *from = cb.CreateLoad(cb.getInt64Ty(), cb.CreateInBoundsGEP(cb.getInt64Ty(), bd, c));
      llvm::Value *next = cb.CreateAdd(c, cb.getInt64(1));
      llvm::Value *to = cb.CreateLoad(cb.getInt64Ty(), cb.CreateInBoundsGEP(cb.getInt64Ty(), bd, next));
      cb.CreateCall(bodyFn, {cl, from, to});
      c->addIncoming(next, body);
      cb.CreateBr(header);
      cb.SetInsertPoint(exit);
      cb.CreateRetVoid();
    }
    b_.CreateCall(runtime("spl_parallel_chunks", b_.getVoidTy(), {b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()}),
                  {parts, chunk, pair});
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  /// Outlines the body into `void f(ptr closure, i64 begin, i64 end)` and runs it with
  /// spl_parallel_for; the closure holds every variable and buffer the body reads.
  void parallelLoop(const Stmt &s) override {
    if (s.loop != LoopKind::Parallel) throw InternalError("codegen: a GPU loop in CPU code");
    Uses u;
    usesOf(s.body[0], u);
    std::vector<int> vars, bufs;
    for (int v : u.vars)
      if (!u.declared.count(v) && v != s.var && frame().vars.count(v)) vars.push_back(v);
    // A temporary allocated inside the body is each iteration's own (allocated there).
    for (int bid : u.buffers)
      if (!u.allocated.count(bid) && (frame().buffers.count(bid) || frame().tempSlots.count(bid))) bufs.push_back(bid);
    std::vector<llvm::Type *> fields{b_.getPtrTy()};  // field 0: the error slot
    for (int v : vars) fields.push_back(ty(frame().vars[v].type));
    for (size_t k = 0; k < bufs.size(); ++k) fields.push_back(b_.getPtrTy());
    llvm::StructType *closureTy = llvm::StructType::get(ctx_, fields);

    llvm::Value *lo = expr(s.a), *hi = expr(s.b);
    llvm::AllocaInst *closure = entryAlloca(closureTy, "closure");
    llvm::AllocaInst *err = entryAlloca(b_.getInt32Ty(), "par.err");
    b_.CreateStore(b_.getInt32(0), err);
    b_.CreateStore(err, b_.CreateStructGEP(closureTy, closure, 0));
    for (size_t k = 0; k < vars.size(); ++k) {
      VarSlot vs = frame().vars[vars[k]];
      b_.CreateStore(b_.CreateLoad(ty(vs.type), vs.slot), b_.CreateStructGEP(closureTy, closure, static_cast<unsigned>(1 + k)));
    }
    for (size_t k = 0; k < bufs.size(); ++k)
      b_.CreateStore(bufferPtr(bufs[k]), b_.CreateStructGEP(closureTy, closure, static_cast<unsigned>(1 + vars.size() + k)));

    auto *bodyTy = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    llvm::Function *bodyFn = llvm::Function::Create(bodyTy, llvm::GlobalValue::InternalLinkage,
                                                    frame().fn->getName() + "." + s.name + ".par", m_);
    attributes(bodyFn);
    llvm::BasicBlock *savedBlock = b_.GetInsertBlock();
    Frame &outer = frame();
    // The body proper takes its buffers as parameters marked noalias (and readonly for
    // inputs): loading them from the closure would lose what the exported function knows,
    // that no two buffers overlap. The closure entry loads the captures and calls it; the
    // inliner keeps the noalias facts as alias scopes.
    std::vector<llvm::Type *> implParams{b_.getPtrTy()};  // the error slot
    for (int v : vars) implParams.push_back(ty(outer.vars[v].type));
    for (size_t k = 0; k < bufs.size(); ++k) implParams.push_back(b_.getPtrTy());
    implParams.push_back(b_.getInt64Ty());
    implParams.push_back(b_.getInt64Ty());
    auto *implTy = llvm::FunctionType::get(b_.getVoidTy(), implParams, false);
    llvm::Function *impl = llvm::Function::Create(implTy, llvm::GlobalValue::InternalLinkage,
                                                  frame().fn->getName() + "." + s.name + ".body", m_);
    attributes(impl);
    for (size_t k = 0; k < bufs.size(); ++k) {
      unsigned arg = static_cast<unsigned>(1 + vars.size() + k);
      impl->addParamAttr(arg, llvm::Attribute::NoAlias);
      const Buffer &bi = bufferInfo(bufs[k]);
      if (bi.isParam && !bi.isOutput) impl->addParamAttr(arg, llvm::Attribute::ReadOnly);
    }
    {
      llvm::IRBuilder<> eb(llvm::BasicBlock::Create(ctx_, "entry", bodyFn));
      llvm::Value *cl = bodyFn->getArg(0);
      std::vector<llvm::Value *> args{eb.CreateLoad(eb.getPtrTy(), eb.CreateStructGEP(closureTy, cl, 0))};
      for (size_t k = 0; k < vars.size(); ++k)
        args.push_back(eb.CreateLoad(ty(outer.vars[vars[k]].type), eb.CreateStructGEP(closureTy, cl, static_cast<unsigned>(1 + k))));
      for (size_t k = 0; k < bufs.size(); ++k)
        args.push_back(eb.CreateLoad(eb.getPtrTy(), eb.CreateStructGEP(closureTy, cl, static_cast<unsigned>(1 + vars.size() + k))));
      args.push_back(bodyFn->getArg(1));
      args.push_back(bodyFn->getArg(2));
      eb.CreateCall(impl, args);
      eb.CreateRetVoid();
    }
    Frame inner;
    inner.fn = impl;
    inner.entry = llvm::BasicBlock::Create(ctx_, "entry", impl);
    frames_.push_back(&inner);
    b_.SetInsertPoint(inner.entry);
    inner.errorSlot = impl->getArg(0);
    for (size_t k = 0; k < vars.size(); ++k) {
      VarSlot vs = outer.vars[vars[k]];
      llvm::AllocaInst *slot = entryAlloca(ty(vs.type), "cap");
      b_.CreateStore(impl->getArg(static_cast<unsigned>(1 + k)), slot);
      inner.vars[vars[k]] = {slot, vs.type};
    }
    for (size_t k = 0; k < bufs.size(); ++k) inner.buffers[bufs[k]] = impl->getArg(static_cast<unsigned>(1 + vars.size() + k));
    planTemps(s.body);
    size_t nargs = implParams.size();
    serialLoop(s, impl->getArg(static_cast<unsigned>(nargs - 2)), impl->getArg(static_cast<unsigned>(nargs - 1)));
    if (!b_.GetInsertBlock()->getTerminator()) {
      freeTemps();
      b_.CreateRetVoid();
    }
    frames_.pop_back();
    b_.SetInsertPoint(savedBlock);

    bool balanced = s.balanceBy >= 0 && s.a->kind == ExprKind::Const && s.a->ival == 0;
    if (balanced) {
      runBalanced(s, bodyFn, closure, hi);
    } else {
      // Where the loop's later iterations do more work (workGrowth > 0 at run time), the pool
      // hands its chunks out from the last: the heaviest start first. Otherwise each thread
      // takes the chunks of its own part of the range first (its home: the same part at every
      // call, so that it stays in that core's caches), then steals; a triangle's columns, whose
      // work shrinks, too: the first home holds most of the work and is stolen from (2-core Zen
      // 5, 2026-11-30, two threads, paired in one process against chunks from one counter,
      // spl_parallel_for_shared, which they had taken since session 24: dspr L 400 1.21x
      // faster in two runs, the other level-2 routines and the 4000s within the noise).
      std::vector<llvm::Type *> params{b_.getInt64Ty(), b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()};
      llvm::FunctionCallee forward = runtime("spl_parallel_for", b_.getVoidTy(), params);
      llvm::Value *callee = forward.getCallee();
      if (s.workGrowth) {
        llvm::FunctionCallee fromEnd = runtime("spl_parallel_for_from_end", b_.getVoidTy(), params);
        llvm::Value *grows = b_.CreateICmpSGT(expr(s.workGrowth), b_.getInt64(0));
        callee = b_.CreateSelect(grows, fromEnd.getCallee(), forward.getCallee());
      }
      llvm::Value *work = s.iterationWork ? expr(s.iterationWork) : nullptr;
      llvm::Value *grain = grainOf(work);
      // A range the pool would run in one piece (spl_parallel_for's own test: fewer than two
      // grains) is run by a direct call, which LLVM may inline with its closure: the pool's
      // call through a pointer cost about 8 ns of a 40 ns dasum of 32 elements (2-core AMD EPYC
      // Zen 3), and the same iterations run in the same order either way. So is a range whose
      // work in all is under kMinParallelWork (where the work is known).
      llvm::Value *total = b_.CreateSub(hi, lo);
      llvm::Value *fewIterations = b_.CreateICmpSLT(b_.CreateSDiv(total, b_.getInt64(2)), grain);
      if (work) fewIterations = b_.CreateOr(fewIterations, b_.CreateICmpSLT(total, iterationsFor(work, kMinParallelWork)));
      llvm::Value *inOnePiece = b_.CreateAnd(b_.CreateICmpSGT(total, b_.getInt64(0)), fewIterations);
      auto *direct = llvm::BasicBlock::Create(ctx_, "par.direct", frame().fn);
      auto *pooled = llvm::BasicBlock::Create(ctx_, "par.pool", frame().fn);
      auto *ran = llvm::BasicBlock::Create(ctx_, "par.ran", frame().fn);
      b_.CreateCondBr(inOnePiece, direct, pooled);
      b_.SetInsertPoint(direct);
      b_.CreateCall(bodyFn, {closure, lo, hi});
      b_.CreateBr(ran);
      b_.SetInsertPoint(pooled);
      b_.CreateCall(forward.getFunctionType(), callee, {lo, hi, grain, bodyFn, closure});
      b_.CreateBr(ran);
      b_.SetInsertPoint(ran);
    }
    llvm::Value *code = b_.CreateLoad(b_.getInt32Ty(), err);
    auto *fail = llvm::BasicBlock::Create(ctx_, "par.fail", frame().fn);
    auto *ok = llvm::BasicBlock::Create(ctx_, "par.ok", frame().fn);
    b_.CreateCondBr(b_.CreateICmpNE(code, b_.getInt32(0)), fail, ok);
    b_.SetInsertPoint(fail);
    emitReturn(code);
    b_.SetInsertPoint(ok);
  }

  /// The fewest iterations of a parallel loop a thread of the pool takes at once, given the
  /// loop's iteration work (null: unknown): enough that a chunk runs kMinChunkWork innermost
  /// iterations where the work is known (a parallel region costs a few microseconds: an axpy
  /// of 4096 elements ran 2.5x slower on two threads than on one; a block of gemm's C is a
  /// chunk alone), else the pool's usual 16.
  llvm::Value *grainOf(llvm::Value *work) {
    constexpr int64_t kMinChunkWork = 8192, kDefaultGrain = 16;
    if (!work) return b_.getInt64(kDefaultGrain);
    return iterationsFor(work, kMinChunkWork);
  }

  /// The fewest iterations of `work` each (at least 1) that do `amount` in all, rounded up.
  llvm::Value *iterationsFor(llvm::Value *work, int64_t amount) {
    work = b_.CreateSelect(b_.CreateICmpSGT(work, b_.getInt64(1)), work, b_.getInt64(1));
    return b_.CreateSDiv(b_.CreateAdd(b_.getInt64(amount - 1), work), work);
  }

  /// The work (innermost iterations as cin/Schedule.cpp estimates them: a triangle at its
  /// bounding box, each statement of a body) under which a parallel loop runs on the calling
  /// thread. A parallel region costs a few microseconds (waking a helper, waiting for it): on
  /// the 2-core AMD EPYC Zen 5 VM, 2026-12-02, two threads ran dtrmv U T of 128 rows (64,384 by
  /// the estimate) in 4.8 us against one thread's 1.3 (OpenBLAS 3.8), dgemv T 128 (33,792) in
  /// 4.0 against 1.3, dger, dsyr and dspr of 128 and 192 (16,384 and 36,864) 1.1-1.9x slower
  /// than one; at 256 the rank updates (65,536) gain from two (dger 10.2 -> 8.1 us), though
  /// dtrmv U T (259,840: eight times its work) and dgemv T (133,120) do not: the estimate is
  /// too coarse for a higher bar.
  static constexpr int64_t kMinParallelWork = 65536;

  /// Whether `bytes` more of stack temporaries fit the current function's kCpuStackFrameBytes;
  /// if so they are counted against it.
  bool takeStack(int64_t bytes) {
    int64_t &used = stackBytes_[frame().fn];
    if (used + bytes > kCpuStackFrameBytes) return false;
    used += bytes;
    return true;
  }

  std::set<int> stackTemps_;  // temporaries on the stack (allocStmt): never freed
  int preferVectorBits_ = 0;   // --prefer-vector-width (CodeGenOptions::preferVectorBits)
  /// The stack buffer each temporary whose size is known at run time only has (allocStmt):
  /// by function and buffer; and the bytes of each such buffer, by function (planTemps).
  std::map<std::pair<llvm::Function *, int>, llvm::AllocaInst *> shareBuffers_;
  std::map<llvm::Function *, int64_t> tempShare_;
  /// The bytes of stack temporaries each function holds (takeStack).
  std::map<llvm::Function *, int64_t> stackBytes_;

  /// The attributes of a function generated for the kernel (the export and its outlined
  /// bodies). A kernel holding a register tile, or a loop that a schedule vectorises for 512
  /// bits (vectorize(i, 512)), or every kernel under --prefer-vector-width=512 (libsplblas's),
  /// vectorises for 512-bit registers where the CPU has them (LLVM's default prefers 256 bits
  /// on AVX-512 CPUs, for loops that run beside scalar code): gemm's 8 x 16 tiles of f64 sums
  /// take 16 zmm registers, 1.5x the speed of ymm ones (45 against 30 GFlop/s at n = 2000, one
  /// core of an AVX-512 Xeon; OpenBLAS 72-77). Without AVX-512 the attribute asks for nothing
  /// LLVM can give: vectors stay 256 bits.
  void attributes(llvm::Function *f) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    if (int bits = std::max(fn_->preferVectorBits, preferVectorBits_)) f->addFnAttr("prefer-vector-width", std::to_string(bits));
    if (fn_->noGathers) f->addFnAttr(kNoGathersAttribute);
  }
};

/// An `int NAME(params)` function of the plan's entry points or adapters.
llvm::Function *defineEntry(llvm::Module &mod, const std::string &name, const std::vector<llvm::Type *> &params,
                            llvm::GlobalValue::LinkageTypes linkage) {
  llvm::Function *f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getInt32Ty(mod.getContext()), params, false),
                                             linkage, name, mod);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  return f;
}

/// The kernel a plan's table holds for the export: the export itself when its parameters stand
/// in the order of the runtime's kernel type (`params`), else an internal adapter NAME.plan.csr
/// that takes that order and calls the export (paramOf[r]: the export's parameter of role r).
llvm::Function *kernelInRuntimeOrder(llvm::Module &mod, llvm::Function *exported, const std::string &name,
                                     const std::vector<llvm::Type *> &params, const std::vector<int> &paramOf) {
  bool inOrder = true;
  for (size_t r = 0; r < paramOf.size(); ++r) inOrder = inOrder && paramOf[r] == static_cast<int>(r);
  if (inOrder) return exported;
  llvm::Function *adapter = defineEntry(mod, name + ".plan.csr", params, llvm::GlobalValue::InternalLinkage);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(mod.getContext(), "entry", adapter));
  std::vector<llvm::Value *> args(params.size());
  for (size_t r = 0; r < params.size(); ++r) args[static_cast<size_t>(paramOf[r])] = adapter->getArg(static_cast<unsigned>(r));
  b.CreateRet(b.CreateCall(exported, args));
  return adapter;
}

/// NAME_plan and NAME_run:
///   int NAME_plan(the export's parameters but those of roles `operand` and `result`, in its
///                 order, i64 calls, ptr plan) = planFn(the parameters of roles `planRoles`,
///                 calls, &table, plan)
///   int NAME_run(ptr plan, ptr operand, ptr result) = runFn(plan, operand, result)
/// `natRoles` are the roles passed as i64, the others as pointers.
void definePlanAndRun(llvm::Module &mod, const PlanEntry &p, llvm::GlobalVariable *table, int operand, int result,
                      const std::vector<int> &natRoles, const std::vector<int> &planRoles, const std::string &planFn,
                      const std::string &runFn) {
  llvm::LLVMContext &ctx = mod.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx), *i64 = llvm::Type::getInt64Ty(ctx), *i32 = llvm::Type::getInt32Ty(ctx);
  auto roleOf = [&](int q) {
    for (size_t r = 0; r < p.paramOf.size(); ++r)
      if (p.paramOf[r] == q) return static_cast<int>(r);
    return -1;
  };
  std::vector<llvm::Type *> planParams;
  std::vector<int> planArgOfParam(p.paramOf.size(), -1);
  for (int q = 0; q < static_cast<int>(p.paramOf.size()); ++q) {
    const int role = roleOf(q);
    if (role == operand || role == result) continue;
    planArgOfParam[static_cast<size_t>(q)] = static_cast<int>(planParams.size());
    planParams.push_back(std::count(natRoles.begin(), natRoles.end(), role) ? i64 : ptr);
  }
  const unsigned calls = static_cast<unsigned>(planParams.size());
  planParams.push_back(i64);
  planParams.push_back(ptr);
  llvm::Function *plan = defineEntry(mod, p.name + "_plan", planParams, llvm::GlobalValue::ExternalLinkage);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", plan));
    std::vector<llvm::Value *> args;
    std::vector<llvm::Type *> types;
    for (int role : planRoles) {
      args.push_back(plan->getArg(static_cast<unsigned>(planArgOfParam[static_cast<size_t>(p.paramOf[static_cast<size_t>(role)])])));
      types.push_back(args.back()->getType());
    }
    args.insert(args.end(), {plan->getArg(calls), table, plan->getArg(calls + 1)});
    types.insert(types.end(), {i64, ptr, ptr});
    b.CreateRet(b.CreateCall(mod.getOrInsertFunction(planFn, llvm::FunctionType::get(i32, types, false)), args));
  }
  llvm::Function *run = defineEntry(mod, p.name + "_run", {ptr, ptr, ptr}, llvm::GlobalValue::ExternalLinkage);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
  llvm::FunctionCallee rt = mod.getOrInsertFunction(runFn, llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false));
  b.CreateRet(b.CreateCall(rt, {run->getArg(0), run->getArg(1), run->getArg(2)}));
}

/// A table's array of SPL_PLAN_BLOCK_SIZES {block, BCSR kernel} entries (the rest empty).
llvm::Constant *blockTable(llvm::StructType *blockTy, llvm::ArrayType *blocksTy, const std::vector<std::pair<int64_t, std::string>> &bcsr,
                           const std::function<llvm::Function *(const std::string &)> &kernel, const std::string &plan) {
  if (bcsr.size() > blocksTy->getNumElements())
    throw InternalError("codegen: the plan of " + plan + " has more BCSR kernels than the table holds");
  llvm::Type *i64 = llvm::Type::getInt64Ty(blockTy->getContext());
  std::vector<llvm::Constant *> blocks;
  for (unsigned k = 0; k < blocksTy->getNumElements(); ++k)
    blocks.push_back(k < bcsr.size() ? llvm::ConstantStruct::get(blockTy, {llvm::ConstantInt::get(i64, bcsr[k].first), kernel(bcsr[k].second)})
                                     : llvm::Constant::getNullValue(blockTy));
  return llvm::ConstantArray::get(blocksTy, blocks);
}

/// Does the function of that name run a row's loop as masked whole vectors (a loop with a
/// masked tail: loopir/SegmentVersioning)? The plan's table says so (csr_masked_rows).
bool runsMaskedRows(const loopir::Module &m, const std::string &name) {
  for (const loopir::Function &f : m.functions)
    if (f.name == name && !f.cuda) return loopir::anyStmt(f.body, [](const loopir::Stmt &s) { return s.maskedTail; });
  return false;
}

/// A plan's entry points (loopir::PlanEntry): a constant table of its kernels in the layout of
/// spl_spmv_kernels_f64/f32 (spl_runtime.h; spl_spmv_t_kernels_T for y = A^T x, spl_spmm_kernels_T
/// for C = A B: the export, then SPL_SPMM_WIDTHS entries of {width, CSR kernel,
/// SPL_PLAN_BLOCK_SIZES x {block, BCSR kernel}}), and
///   int NAME_plan(the export's parameters but x and out, i64 calls, ptr plan)
///     = spl_spmv_plan_T(n, m, offs, cols, vals, calls, &table, plan)   (spl_spmv_t_plan_T;
///       spl_spmm_plan_T(n, m, k, offs, cols, vals, calls, &table, plan), without B and out)
///   int NAME_run(ptr plan, ptr x, ptr out) = spl_spmv_run_T(plan, x, out)   (spl_spmm_run_T)
/// When the export's parameters are not in the runtime kernel type's order (n, m, offs, cols,
/// vals, x, out; an SpMM's n, m, k, offs, vals, cols, B, out), the table's kernel is an internal
/// adapter that calls the export.
void addPlanEntries(llvm::Module &mod, const loopir::Module &m) {
  const std::vector<PlanEntry> &plans = m.plans;
  llvm::LLVMContext &ctx = mod.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  constexpr unsigned kBlockSizes = 4, kWidths = 16;  // SPL_PLAN_BLOCK_SIZES, SPL_SPMM_WIDTHS
  auto *blockTy = llvm::StructType::get(ctx, {i64, ptr});
  auto *blocksTy = llvm::ArrayType::get(blockTy, kBlockSizes);
  // spl_spmv_kernels_T: csr, sell_narrow, sell_wide, lanes, narrow, wide, dia, bcsr[], csr_masked_rows, csr_short,
  // csr_two_sums, csr_prefetch.
  auto *tableTy = llvm::StructType::get(ctx, {ptr, ptr, ptr, i64, i64, i64, ptr, blocksTy, i64, ptr, ptr, ptr});
  auto *transposedTableTy = llvm::StructType::get(ctx, {ptr, ptr, ptr});  // transposed, csr, copy (a table as above)
  auto *widthTy = llvm::StructType::get(ctx, {i64, ptr, blocksTy});
  auto *widthsTy = llvm::ArrayType::get(widthTy, kWidths);
  auto *spmmTableTy = llvm::StructType::get(ctx, {ptr, widthsTy});
  for (const PlanEntry &p : plans) {
    std::function<llvm::Function *(const std::string &)> kernel = [&](const std::string &name) {
      llvm::Function *f = mod.getFunction(name);
      if (!f) throw InternalError("codegen: the plan of " + p.name + " names a kernel the object lacks: " + name);
      return f;
    };
    const std::string elem = p.f64 ? "f64" : "f32";
    auto tableOf = [&](llvm::StructType *ty, llvm::Constant *init) {
      return new llvm::GlobalVariable(mod, ty, /*isConstant=*/true, llvm::GlobalValue::InternalLinkage, init, p.name + ".plan.kernels");
    };
    if (p.spmm) {
      // n, m, k, offs, vals, cols, B, out
      const std::vector<llvm::Type *> kernelParams{i64, i64, i64, ptr, ptr, ptr, ptr, ptr};
      if (p.paramOf.size() != kernelParams.size()) throw InternalError("codegen: the SpMM plan of " + p.name + " has no parameter map");
      if (p.widths.size() > kWidths) throw InternalError("codegen: the plan of " + p.name + " has more widths than the table holds");
      std::vector<llvm::Constant *> widths;
      for (unsigned w = 0; w < kWidths; ++w)
        widths.push_back(w < p.widths.size()
                             ? llvm::ConstantStruct::get(widthTy, {llvm::ConstantInt::get(i64, p.widths[w].width), kernel(p.widths[w].csr),
                                                                   blockTable(blockTy, blocksTy, p.widths[w].bcsr, kernel, p.name)})
                             : llvm::Constant::getNullValue(widthTy));
      llvm::Function *any = kernelInRuntimeOrder(mod, kernel(p.csr), p.name, kernelParams, p.paramOf);
      auto *table = tableOf(spmmTableTy, llvm::ConstantStruct::get(spmmTableTy, {any, llvm::ConstantArray::get(widthsTy, widths)}));
      // The runtime's plan takes offs, cols, vals: the roles 3, 5, 4.
      definePlanAndRun(mod, p, table, 6, 7, {0, 1, 2}, {0, 1, 2, 3, 5, 4}, "spl_spmm_plan_" + elem, "spl_spmm_run_" + elem);
      continue;
    }
    const std::vector<llvm::Type *> kernelParams{i64, i64, ptr, ptr, ptr, ptr, ptr};  // n, m, offs, cols, vals, x, out
    if (p.paramOf.size() != kernelParams.size()) throw InternalError("codegen: the plan of " + p.name + " has no parameter map");
    llvm::Function *csr = kernelInRuntimeOrder(mod, kernel(p.csr), p.name, kernelParams, p.paramOf);
    // spl_spmv_kernels_T, or spl_spmv_t_kernels_T for y = A^T x: the export, the CSR kernel
    // the runtime runs over the transpose, and the candidates of the transposed copy's plan (a
    // spl_spmv_kernels_T whose csr is that CSR kernel).
    auto candidates = [&](llvm::Function *first, const std::string &csrName) {
      return llvm::ConstantStruct::get(tableTy, {first, kernel(p.sellNarrow), kernel(p.sellWide), llvm::ConstantInt::get(i64, p.lanes),
                                                 llvm::ConstantInt::get(i64, p.narrowRows), llvm::ConstantInt::get(i64, p.wideRows),
                                                 kernel(p.dia), blockTable(blockTy, blocksTy, p.bcsr, kernel, p.name),
                                                 llvm::ConstantInt::get(i64, runsMaskedRows(m, csrName) ? 1 : 0), kernel(p.csrShort),
                                                 kernel(p.csrTwoSums), kernel(p.csrPrefetch)});
    };
    llvm::GlobalVariable *table = nullptr;
    if (p.transposed) {
      auto *copy = new llvm::GlobalVariable(mod, tableTy, /*isConstant=*/true, llvm::GlobalValue::InternalLinkage,
                                            candidates(kernel(p.gather), p.gather), p.name + ".plan.copy.kernels");
      table = tableOf(transposedTableTy, llvm::ConstantStruct::get(transposedTableTy, {csr, kernel(p.gather), copy}));
    } else {
      table = tableOf(tableTy, candidates(csr, p.csr));
    }
    definePlanAndRun(mod, p, table, 5, 6, {0, 1}, {0, 1, 2, 3, 4}, (p.transposed ? "spl_spmv_t_plan_" : "spl_spmv_plan_") + elem,
                     "spl_spmv_run_" + elem);
  }
}

}  // namespace

void addCpuFunctions(llvm::Module &mod, const loopir::Module &m, const CodeGenOptions &opts) {
  CpuGen g(mod.getContext(), mod);
  g.setFpContract(opts.fpContract);
  g.setPreferVectorBits(opts.preferVectorBits);
  for (const loopir::Function &f : m.functions)
    if (!f.cuda) g.function(f);
}

bool compileCpu(const loopir::Module &m, const std::string &moduleName, const CodeGenOptions &opts, OutputKind kind,
                std::string &out, std::string &error) {
  llvm::LLVMContext ctx;
  auto mod = std::make_unique<llvm::Module>(moduleName, ctx);
  if (!prepareModule(*mod, opts, error)) return false;
  addCpuFunctions(*mod, m, opts);
  addPlanEntries(*mod, m);
  if (!addCudaStubs(*mod, m, opts, error)) return false;
  std::string verifyErrors;
  llvm::raw_string_ostream vs(verifyErrors);
  if (llvm::verifyModule(*mod, &vs)) {
    vs.flush();
    throw InternalError("codegen: the LLVM module does not verify:\n" + verifyErrors);
  }
  return optimizeAndEmit(*mod, opts, kind, out, error);
}

}  // namespace spl::codegen
