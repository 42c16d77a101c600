/// \file LoopCodeGen.cpp: expressions and statements of the loop IR in LLVM IR (see
/// LoopCodeGen.h). Selects evaluate only the chosen arm and && / || short-circuit unless both
/// sides are safe (no loads, no division by a non-constant), in which case they become plain
/// selects and logic the vectoriser can use.
#include "codegen/LoopCodeGen.h"

#include <utility>

#include <llvm/IR/MDBuilder.h>

#include "loopir/Visitor.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::codegen {

using namespace loopir;

namespace {
/// The variables and buffers statements use, declare and allocate.
class UsesCollector : public Visitor {
 public:
  explicit UsesCollector(Uses &u) : u_(u) {}

 protected:
  void visitVar(const Expr &e) override { u_.vars.insert(e.var); }
  void visitLoad(const Expr &e) override {
    u_.buffers.insert(e.buffer);
    visitChildren(e);
  }
  void visitDecl(const Stmt &s) override { declares(s); }
  void visitFor(const Stmt &s) override { declares(s); }
  void visitWarpReduce(const Stmt &s) override {
    u_.vars.insert(s.var);
    u_.declared.insert(s.partner);
    visitChildren(s);
  }
  void visitAlloc(const Stmt &s) override {
    u_.allocated.insert(s.buffer);
    writes(s);
  }
  void visitStore(const Stmt &s) override { writes(s); }
  void visitFree(const Stmt &s) override { writes(s); }
  void visitPrefetch(const Stmt &s) override { writes(s); }
  void visitSigmaPrefix(const Stmt &s) override {
    u_.buffers.insert(s.source);
    writes(s);
  }
  void visitArrive(const Stmt &s) override {
    u_.vars.insert(s.var);
    writes(s);
  }
  void visitAssign(const Stmt &s) override {
    u_.vars.insert(s.var);
    visitChildren(s);
  }

 private:
  void declares(const Stmt &s) {
    u_.declared.insert(s.var);
    visitChildren(s);
  }
  /// A statement naming a buffer (it need not write it: a prefetch reads).
  void writes(const Stmt &s) {
    u_.buffers.insert(s.buffer);
    visitChildren(s);
  }
  Uses &u_;
};
}  // namespace

void usesOf(const StmtP &s, Uses &u) { UsesCollector(u).visit(s); }

LoopCodeGen::~LoopCodeGen() = default;

llvm::Type *LoopCodeGen::ty(Ty t) {
  switch (t) {
    case Ty::I1: return b_.getInt1Ty();
    case Ty::I32: return b_.getInt32Ty();
    case Ty::I64: return b_.getInt64Ty();
    case Ty::F32: return b_.getFloatTy();
    case Ty::F64: return b_.getDoubleTy();
  }
  return b_.getInt64Ty();
}

llvm::Type *LoopCodeGen::memTy(Ty t) { return t == Ty::I1 ? b_.getInt8Ty() : ty(t); }

llvm::AllocaInst *LoopCodeGen::entryAlloca(llvm::Type *t, const std::string &name) {
  llvm::IRBuilder<> eb(frame().entry, frame().entry->begin());
  return eb.CreateAlloca(t, nullptr, name);
}


bool localTemp(const Stmt &alloc, int64_t elemBytes, int64_t limit) {
  auto cap = constUpper(alloc.a);
  return cap && *cap * elemBytes <= limit;
}

void LoopCodeGen::returnIfAllocFailed(llvm::Value *p, llvm::Value *bytes) {
  llvm::Value *failed = b_.CreateAnd(b_.CreateIsNull(p), b_.CreateICmpSGT(bytes, b_.getInt64(0)));
  auto *fail = llvm::BasicBlock::Create(ctx_, "alloc.fail", frame().fn);
  auto *ok = llvm::BasicBlock::Create(ctx_, "alloc.ok", frame().fn);
  b_.CreateCondBr(failed, fail, ok);
  b_.SetInsertPoint(fail);
  emitReturn(b_.getInt32(2));  // SPL_ERR_ALLOC
  b_.SetInsertPoint(ok);
}

llvm::Value *LoopCodeGen::bufferPtr(int id) {
  Frame &f = frame();
  if (auto it = f.buffers.find(id); it != f.buffers.end()) return it->second;
  if (auto it = f.tempSlots.find(id); it != f.tempSlots.end()) return b_.CreateLoad(b_.getPtrTy(), it->second);
  throw InternalError(fmt::format("codegen: buffer b{} is not available in {}", id, fn_->name));
}

const Buffer &LoopCodeGen::bufferInfo(int id) {
  const Buffer *b = fn_->buffer(id);
  if (!b) throw InternalError(fmt::format("codegen: unknown buffer b{}", id));
  return *b;
}

llvm::StructType *LoopCodeGen::structOf(const Buffer &b) {
  std::vector<llvm::Type *> fs;
  for (Ty t : b.fields) fs.push_back(memTy(t));
  return llvm::StructType::get(ctx_, fs);
}

llvm::Value *LoopCodeGen::elementPtr(int bufferId, llvm::Value *index, int field, llvm::Type *&elemTy) {
  const Buffer &b = bufferInfo(bufferId);
  llvm::Value *base = bufferPtr(bufferId);
  if (field >= 0) {
    llvm::StructType *st = structOf(b);
    elemTy = st->getElementType(field);
    return b_.CreateInBoundsGEP(st, base, {index, b_.getInt32(field)});
  }
  elemTy = memTy(b.elem);
  return b_.CreateInBoundsGEP(elemTy, base, index);
}

bool LoopCodeGen::safe(const ExprP &e) {
  if (e->kind == ExprKind::Load) return false;
  if (e->kind == ExprKind::Binary && !isFloatTy(e->type) &&
      (e->binop == BinOp::Div || e->binop == BinOp::Rem || e->binop == BinOp::FloorDiv || e->binop == BinOp::ExactDiv))
    return e->args[1]->kind == ExprKind::Const && e->args[1]->ival != 0 && e->args[1]->ival != -1 && safe(e->args[0]);
  for (const ExprP &a : e->args)
    if (!safe(a)) return false;
  return true;
}

llvm::Value *LoopCodeGen::castTo(llvm::Value *v, Ty from, Ty to) {
  if (from == to) return v;
  bool fromF = isFloatTy(from), toF = isFloatTy(to);
  if (to == Ty::I1) {
    if (fromF) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(ty(from), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(ty(from), 0));
  }
  if (from == Ty::I1) return toF ? b_.CreateUIToFP(v, ty(to)) : b_.CreateZExt(v, ty(to));
  if (fromF && toF) return b_.CreateFPCast(v, ty(to));
  if (fromF) return b_.CreateFPToSI(v, ty(to));
  if (toF) return b_.CreateSIToFP(v, ty(to));
  return b_.CreateSExtOrTrunc(v, ty(to));
}

llvm::Value *LoopCodeGen::expr(const ExprP &e) {
  value_ = nullptr;
  visit(e);
  internal_assert(value_) << "codegen: an expression without a value in " << fn_->name;
  return std::exchange(value_, nullptr);
}

void LoopCodeGen::visitConst(const Expr &e) {
  if (isFloatTy(e.type)) return produce(llvm::ConstantFP::get(ty(e.type), e.fval));
  return produce(llvm::ConstantInt::get(ty(e.type), static_cast<uint64_t>(e.ival), true));
}

void LoopCodeGen::visitVar(const Expr &e) {
  auto it = frame().vars.find(e.var);
  if (it == frame().vars.end())
    throw InternalError(fmt::format("codegen: variable v{} is not declared in {}", e.var, fn_->name));
  return produce(castTo(b_.CreateLoad(ty(it->second.type), it->second.slot), it->second.type, e.type));
}

void LoopCodeGen::visitLoad(const Expr &e) {
  llvm::Value *idx = expr(e.args[0]);
  llvm::Type *et = nullptr;
  llvm::Value *p = elementPtr(e.buffer, idx, e.field, et);
  llvm::LoadInst *v = b_.CreateLoad(et, p);
  v->setVolatile(e.isVolatile);
  if (e.type == Ty::I1) return produce(b_.CreateICmpNE(v, llvm::ConstantInt::get(et, 0)));
  return produce(v);
}

void LoopCodeGen::visitUnary(const Expr &e) {
  llvm::Value *a = expr(e.args[0]);
  switch (e.unop) {
    case ast::UnOp::Not: return produce(b_.CreateNot(a));
    case ast::UnOp::Neg: return produce(isFloatTy(e.type) ? b_.CreateFNeg(a) : b_.CreateNeg(a));
    case ast::UnOp::Sqrt: return produce(b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a));
    case ast::UnOp::Abs:
      if (isFloatTy(e.type)) return produce(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a));
      // abs of the most negative integer is itself (not poison): as C's two's complement wraps.
      return produce(b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b_.getFalse()));
  }
  return produce(a);
}

void LoopCodeGen::visitBinary(const Expr &e) { return produce(binary(e)); }

void LoopCodeGen::visitSelect(const Expr &e) {
  llvm::Value *c = expr(e.args[0]);
  if (safe(e.args[1]) && safe(e.args[2])) return produce(b_.CreateSelect(c, expr(e.args[1]), expr(e.args[2])));
  return produce(branchy(c, e.args[1], e.args[2], e.type));
}

void LoopCodeGen::visitCast(const Expr &e) { return produce(castTo(expr(e.args[0]), e.args[0]->type, e.type)); }

void LoopCodeGen::visitMinMax(const Expr &e) {
  llvm::Value *a = expr(e.args[0]), *c = expr(e.args[1]);
  if (isFloatTy(e.type)) {
    // Operands never NaN (a guarded reduction's): nnan lets LLVM end the vectorised reduction
    // with a tree of min/max instructions instead of a NaN-checked chain over the lanes.
    llvm::FastMathFlags flags;
    flags.setNoNaNs(e.neverNan);
    return produce(e.isMax ? b_.CreateMaxNum(a, c, flags) : b_.CreateMinNum(a, c, flags));
  }
  if (e.type == Ty::I1) return produce(e.isMax ? b_.CreateOr(a, c) : b_.CreateAnd(a, c));
  return produce(b_.CreateBinaryIntrinsic(e.isMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, a, c));
}

void LoopCodeGen::visitGpuIndex(const Expr &e) { return produce(gpuIndexValue(e.gpuIndex)); }

void LoopCodeGen::visitWarpShuffle(const Expr &e) { return produce(warpShuffleValue(e)); }

void LoopCodeGen::visitWarpVote(const Expr &e) { return produce(warpVoteValue(e)); }

void LoopCodeGen::visitAlignGap(const Expr &e) {
  // (-address mod bytes) / element size; a plain GEP (not inbounds): the index may lie past
  // the buffer, and nothing is read.
  const Buffer &b = bufferInfo(e.buffer);
  llvm::Type *et = memTy(b.elem);
  llvm::Value *p = b_.CreateGEP(et, bufferPtr(e.buffer), expr(e.args[0]));
  llvm::Value *addr = b_.CreatePtrToInt(p, b_.getInt64Ty());
  llvm::Value *gapBytes = b_.CreateAnd(b_.CreateNeg(addr), b_.getInt64(static_cast<uint64_t>(e.ival - 1)));
  int shift = 0;
  while ((int64_t{1} << shift) < tyBytes(b.elem)) ++shift;
  return produce(b_.CreateLShr(gapBytes, b_.getInt64(static_cast<uint64_t>(shift))));
}

llvm::Value *LoopCodeGen::branchy(llvm::Value *c, const ExprP &x, const ExprP &y, Ty t) {
  llvm::Function *fn = frame().fn;
  auto *tb = llvm::BasicBlock::Create(ctx_, "sel.then", fn);
  auto *fb = llvm::BasicBlock::Create(ctx_, "sel.else", fn);
  auto *jb = llvm::BasicBlock::Create(ctx_, "sel.join", fn);
  b_.CreateCondBr(c, tb, fb);
  b_.SetInsertPoint(tb);
  llvm::Value *xv = expr(x);
  llvm::BasicBlock *tEnd = b_.GetInsertBlock();
  b_.CreateBr(jb);
  b_.SetInsertPoint(fb);
  llvm::Value *yv = expr(y);
  llvm::BasicBlock *fEnd = b_.GetInsertBlock();
  b_.CreateBr(jb);
  b_.SetInsertPoint(jb);
  llvm::PHINode *phi = b_.CreatePHI(ty(t), 2);
  phi->addIncoming(xv, tEnd);
  phi->addIncoming(yv, fEnd);
  return phi;
}

llvm::Value *LoopCodeGen::withFmf(llvm::Value *v, const llvm::FastMathFlags &fmf) {
  if (auto *i = llvm::dyn_cast<llvm::Instruction>(v)) i->setFastMathFlags(fmf);
  return v;
}

bool LoopCodeGen::accumulates(const loopir::Stmt &assign) {
  const ExprP &e = assign.a;
  if (!e || e->kind != ExprKind::Binary || (e->binop != BinOp::Add && e->binop != BinOp::Sub)) return false;
  auto isVar = [&](const ExprP &x) { return x && x->kind == ExprKind::Var && x->var == assign.var; };
  return isVar(e->args[0]) || (e->binop == BinOp::Add && isVar(e->args[1]));
}

llvm::Value *LoopCodeGen::binary(const Expr &e, bool contract) {
  const ExprP &x = e.args[0], &y = e.args[1];
  if (e.binop == BinOp::And || e.binop == BinOp::Or) {
    llvm::Value *a = expr(x);
    if (safe(y)) {
      llvm::Value *c = expr(y);
      return e.binop == BinOp::And ? b_.CreateAnd(a, c) : b_.CreateOr(a, c);
    }
    ExprP t = e.binop == BinOp::And ? y : cInt(1, Ty::I1);
    ExprP f = e.binop == BinOp::And ? cInt(0, Ty::I1) : y;
    return branchy(a, t, f, Ty::I1);
  }
  llvm::Value *a = expr(x), *c = expr(y);
  bool fp = isFloatTy(x->type);
  llvm::FastMathFlags fmf;
  if (e.reassoc && (!fn_ || fn_->fpReassoc)) {
    fmf.setAllowReassoc();
    fmf.setNoSignedZeros();
  }
  // A product feeding a sum becomes one multiply-add (one rounding instead of two) where the
  // target has it: half the floating-point instructions of a SpMV, DIA or dense product.
  if (fp && fpContract_ && (!fn_ || fn_->fpContract) && contract) fmf.setAllowContract();
  switch (e.binop) {
    // Signed integer overflow is undefined in SPL (as in C and Halide): `nsw` lets LLVM see
    // that indices like i32(i) + o walk memory contiguously.
    case BinOp::Add: return fp ? withFmf(b_.CreateFAdd(a, c), fmf) : b_.CreateNSWAdd(a, c);
    case BinOp::Sub: return fp ? withFmf(b_.CreateFSub(a, c), fmf) : b_.CreateNSWSub(a, c);
    case BinOp::Mul: return fp ? withFmf(b_.CreateFMul(a, c), fmf) : b_.CreateNSWMul(a, c);
    case BinOp::Div: return fp ? b_.CreateFDiv(a, c) : b_.CreateSDiv(a, c);
    case BinOp::Rem: return fp ? b_.CreateFRem(a, c) : b_.CreateSRem(a, c);
    case BinOp::ExactDiv: return b_.CreateExactSDiv(a, c);
    case BinOp::FloorDiv: {
      // floor(a / c) for c > 0: (a >= 0 ? a : a - c + 1) / c
      llvm::Value *neg = b_.CreateICmpSLT(a, llvm::ConstantInt::get(a->getType(), 0));
      llvm::Value *adj = b_.CreateSub(b_.CreateAdd(a, llvm::ConstantInt::get(a->getType(), 1)), c);
      return b_.CreateSDiv(b_.CreateSelect(neg, adj, a), c);
    }
    case BinOp::Eq: return fp ? b_.CreateFCmpOEQ(a, c) : b_.CreateICmpEQ(a, c);
    case BinOp::Ne: return fp ? b_.CreateFCmpUNE(a, c) : b_.CreateICmpNE(a, c);
    case BinOp::Lt: return fp ? b_.CreateFCmpOLT(a, c) : b_.CreateICmpSLT(a, c);
    case BinOp::Le: return fp ? b_.CreateFCmpOLE(a, c) : b_.CreateICmpSLE(a, c);
    case BinOp::Gt: return fp ? b_.CreateFCmpOGT(a, c) : b_.CreateICmpSGT(a, c);
    case BinOp::Ge: return fp ? b_.CreateFCmpOGE(a, c) : b_.CreateICmpSGE(a, c);
    default: break;
  }
  throw InternalError("codegen: unknown binary operator");
}

void LoopCodeGen::afterTerminator() {
  auto *dead = llvm::BasicBlock::Create(ctx_, "after.return", frame().fn);
  b_.SetInsertPoint(dead);
}

llvm::FunctionCallee LoopCodeGen::runtime(const std::string &name, llvm::Type *ret, std::vector<llvm::Type *> params) {
  auto *ft = llvm::FunctionType::get(ret, params, false);
  llvm::FunctionCallee c = m_.getOrInsertFunction(name, ft);
  if (auto *f = llvm::dyn_cast<llvm::Function>(c.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    // spl_alloc and spl_temp_alloc are malloc: their memory aliases nothing else the kernel
    // reaches (a temporary is given back by a call, spl_free or spl_temp_free), so LLVM may keep
    // a temporary's cells in registers across loops that read the inputs (a register tile).
    if (name == "spl_alloc" || name == "spl_temp_alloc") f->addRetAttr(llvm::Attribute::NoAlias);
  }
  return c;
}

void LoopCodeGen::bindParams(const Function &f, llvm::Function *lf) {
  Frame &fr = frame();
  for (const ScalarParam &p : f.scalars) {
    llvm::AllocaInst *slot = entryAlloca(ty(p.type), p.name);
    b_.CreateStore(lf->getArg(p.paramIndex), slot);
    fr.vars[p.var] = {slot, p.type};
  }
  for (const Buffer &buf : f.buffers) {
    if (buf.isParam) {
      fr.buffers[buf.id] = lf->getArg(buf.paramIndex);
    } else if (!buf.shared) {
      llvm::AllocaInst *slot = entryAlloca(b_.getPtrTy(), buf.name + ".slot");
      b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot);
      fr.tempSlots[buf.id] = slot;
    }
  }
}

void LoopCodeGen::stmt(const StmtP &s) { visit(s); }

void LoopCodeGen::visitBlock(const Stmt &s) { for (const StmtP &x : s.body) stmt(x); }

void LoopCodeGen::visitFor(const Stmt &s) {
  if (s.loop == LoopKind::Serial || s.loop == LoopKind::Reduction || s.loop == LoopKind::Vector)
    serialLoop(s, expr(s.a), expr(s.b), s.step ? expr(s.step) : nullptr);
  else
    parallelLoop(s);
}

void LoopCodeGen::visitStore(const Stmt &s) {
  llvm::Value *idx = expr(s.a);
  llvm::Value *v = expr(s.b);
  llvm::Type *et = nullptr;
  llvm::Value *p = elementPtr(s.buffer, idx, s.field, et);
  if (et->isIntegerTy(8) && v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, et);
  if (s.atomic != AtomicOp::None) {
    // Relaxed (monotonic) ordering: only the update itself must be indivisible; the end
    // of the parallel loop (a join, or the end of a GPU kernel) orders it for readers.
    bool fp = et->isFloatingPointTy();
    llvm::AtomicRMWInst::BinOp op = llvm::AtomicRMWInst::Add;
    switch (s.atomic) {
      case AtomicOp::Add: op = fp ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add; break;
      case AtomicOp::Min: op = fp ? llvm::AtomicRMWInst::FMin : llvm::AtomicRMWInst::Min; break;
      case AtomicOp::Max: op = fp ? llvm::AtomicRMWInst::FMax : llvm::AtomicRMWInst::Max; break;
      case AtomicOp::None: break;
    }
    b_.CreateAtomicRMW(op, p, v, llvm::MaybeAlign(et->getPrimitiveSizeInBits() / 8), llvm::AtomicOrdering::Monotonic);
    return;
  }
  b_.CreateStore(v, p);
}

void LoopCodeGen::visitDecl(const Stmt &s) {
  llvm::AllocaInst *slot = entryAlloca(ty(s.type), s.name);
  frame().vars[s.var] = {slot, s.type};
  if (s.a) b_.CreateStore(expr(s.a), slot);
}

void LoopCodeGen::visitAssign(const Stmt &s) {
  auto it = frame().vars.find(s.var);
  if (it == frame().vars.end()) throw InternalError(fmt::format("codegen: assignment to undeclared v{}", s.var));
  // acc = acc + a * b: a loop carries acc, and on a CPU a fused multiply-add would put its
  // longer latency (4 cycles against 2-3 for an add on x86) on that chain. Only this add
  // stays apart; products elsewhere still fuse (CSR rows of 50 entries with two partial sums
  // ran 9-12% slower fused, DIA's y[i] += a * x[i + o] faster). A GPU hides the latency
  // with other warps and fuses it too.
  llvm::Value *v = accumulates(s) && !fusesCarriedAdds() ? binary(*s.a, /*contract=*/false) : expr(s.a);
  b_.CreateStore(castTo(v, s.a->type, it->second.type), it->second.slot);
}

void LoopCodeGen::visitIf(const Stmt &s) {
  llvm::Value *c = expr(s.a);
  llvm::Function *fn = frame().fn;
  auto *tb = llvm::BasicBlock::Create(ctx_, "if.then", fn);
  auto *jb = llvm::BasicBlock::Create(ctx_, "if.end", fn);
  llvm::BasicBlock *fb = s.body[1] ? llvm::BasicBlock::Create(ctx_, "if.else", fn) : jb;
  if (s.seldom)
    b_.CreateCondBr(c, tb, fb, llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
  else
    b_.CreateCondBr(c, tb, fb);
  b_.SetInsertPoint(tb);
  stmt(s.body[0]);
  if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(jb);
  if (s.body[1]) {
    b_.SetInsertPoint(fb);
    stmt(s.body[1]);
    if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(jb);
  }
  b_.SetInsertPoint(jb);
}

void LoopCodeGen::visitAlloc(const Stmt &s) { allocStmt(s); }

void LoopCodeGen::visitFree(const Stmt &s) { freeStmt(s); }

void LoopCodeGen::visitSigmaPrefix(const Stmt &s) { sigmaStmt(s); }

void LoopCodeGen::visitReturn(const Stmt &s) {
  emitReturn(b_.getInt32(s.code));
  afterTerminator();
}

void LoopCodeGen::visitBarrier(const Stmt &) { barrier(); }

void LoopCodeGen::visitPrefetch(const Stmt &s) { prefetch(s); }

void LoopCodeGen::visitWarpReduce(const Stmt &s) { warpReduce(s); }

void LoopCodeGen::visitGpuKernel(const Stmt &) { throw InternalError("codegen: a kernel inside the statements of " + fn_->name); }

void LoopCodeGen::visitWhile(const Stmt &s) { whileLoop([&] { return expr(s.a); }, [&] { stmt(s.body[0]); }); }

void LoopCodeGen::visitFence(const Stmt &) { fence(); }

void LoopCodeGen::visitArrive(const Stmt &s) { arrive(s); }

llvm::Value *LoopCodeGen::gpuIndexValue(GpuIndexKind) { throw InternalError("codegen: a GPU thread index in CPU code of " + fn_->name); }
llvm::Value *LoopCodeGen::warpVoteValue(const Expr &) { throw InternalError("codegen: a warp vote in CPU code of " + fn_->name); }
llvm::Value *LoopCodeGen::warpShuffleValue(const Expr &) { throw InternalError("codegen: a warp shuffle in CPU code of " + fn_->name); }
void LoopCodeGen::warpReduce(const Stmt &) { throw InternalError("codegen: a warp reduction in CPU code of " + fn_->name); }
void LoopCodeGen::fence() { throw InternalError("codegen: a device memory fence in CPU code of " + fn_->name); }
void LoopCodeGen::arrive(const Stmt &) { throw InternalError("codegen: an arrival count in CPU code of " + fn_->name); }

void LoopCodeGen::prefetch(const loopir::Stmt &s) {
  // The address may lie past the buffer: a plain (not inbounds) GEP, and a prefetch never faults.
  const Buffer &b = bufferInfo(s.buffer);
  llvm::Value *base = bufferPtr(s.buffer), *idx = expr(s.a);
  llvm::Value *p = s.field >= 0 ? b_.CreateGEP(structOf(b), base, {idx, b_.getInt32(s.field)})
                                : b_.CreateGEP(memTy(b.elem), base, idx);
  // read, the statement's locality (loopir/StreamPrefetch.h says which and why), data.
  b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {p->getType()}, {p, b_.getInt32(0), b_.getInt32(s.locality), b_.getInt32(1)});
}

void LoopCodeGen::whileLoop(const std::function<llvm::Value *()> &cond, const std::function<void()> &body) {
  llvm::Function *fn = frame().fn;
  auto *header = llvm::BasicBlock::Create(ctx_, "while.header", fn);
  auto *inside = llvm::BasicBlock::Create(ctx_, "while.body", fn);
  auto *exit = llvm::BasicBlock::Create(ctx_, "while.exit", fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  b_.CreateCondBr(cond(), inside, exit);
  b_.SetInsertPoint(inside);
  body();
  if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(header);
  b_.SetInsertPoint(exit);
}

void LoopCodeGen::serialLoop(const Stmt &s, llvm::Value *lo, llvm::Value *hi, llvm::Value *step) {
  llvm::Function *fn = frame().fn;
  llvm::AllocaInst *iv = entryAlloca(b_.getInt64Ty(), s.name);
  frame().vars[s.var] = {iv, Ty::I64};
  b_.CreateStore(lo, iv);
  auto *header = llvm::BasicBlock::Create(ctx_, s.name + ".header", fn);
  auto *body = llvm::BasicBlock::Create(ctx_, s.name + ".body", fn);
  auto *exit = llvm::BasicBlock::Create(ctx_, s.name + ".exit", fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::Value *i = b_.CreateLoad(b_.getInt64Ty(), iv);
  b_.CreateCondBr(b_.CreateICmpSLT(i, hi), body, exit);
  b_.SetInsertPoint(body);
  stmt(s.body[0]);
  if (!b_.GetInsertBlock()->getTerminator()) {
    llvm::Value *cur = b_.CreateLoad(b_.getInt64Ty(), iv);
    b_.CreateStore(step ? b_.CreateAdd(cur, step) : b_.CreateAdd(cur, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true), iv);
    llvm::BranchInst *latch = b_.CreateBr(header);
    if (s.vectorize || s.unroll || s.vectorWidth || s.interleave || s.maskedTail) {
      // A schedule's hints, as llvm.loop metadata on the latch.
      std::vector<llvm::Metadata *> md{nullptr};
      auto hint = [&](const char *name, llvm::Constant *value) {
        md.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, name), llvm::ConstantAsMetadata::get(value)}));
      };
      // Under fp_reassoc(off) a reduction loop is LLVM's to vectorise only where it can keep
      // the sums in order (never: LLVM takes a forced hint as leave to reorder them).
      bool hinted = !(fn_ && !fn_->fpReassoc && s.loop == loopir::LoopKind::Reduction);
      if (s.vectorize && hinted) hint("llvm.loop.vectorize.enable", b_.getTrue());
      if (s.vectorWidth > 0 && hinted) hint("llvm.loop.vectorize.width", b_.getInt32(static_cast<uint32_t>(s.vectorWidth)));
      if (s.interleave > 0) hint("llvm.loop.interleave.count", b_.getInt32(static_cast<uint32_t>(s.interleave)));
      if (s.maskedTail) hint("llvm.loop.vectorize.predicate.enable", b_.getTrue());
      if (s.unroll > 1) hint("llvm.loop.unroll.count", b_.getInt32(static_cast<uint32_t>(s.unroll)));
      if (s.unroll == 1) md.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
      if (md.size() > 1) {
        llvm::MDNode *loopId = llvm::MDNode::getDistinct(ctx_, md);
        loopId->replaceOperandWith(0, loopId);
        latch->setMetadata(llvm::LLVMContext::MD_loop, loopId);
      }
    }
  }
  b_.SetInsertPoint(exit);
}

}  // namespace spl::codegen
