/// \file CodeGenCpu.cpp: loop IR -> LLVM IR for the CPU.
/// Variables live in allocas (mem2reg promotes them); each Parallel loop is outlined into an
/// internal function `void body(ptr closure, i64 begin, i64 end)` run by spl_parallel_for, with
/// the values it reads captured in a closure struct and an error slot for `return` inside it.
/// Temporaries are allocated with spl_alloc; every return path frees the ones still live.
#include <map>
#include <set>

#include "codegen/CodeGen.h"
#include "codegen/EmitLLVM.h"
#include "support/Error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace spl::codegen {
namespace {

using namespace loopir;

/// Free variables and buffers of a statement (what an outlined parallel body must capture).
struct Uses {
  std::set<int> vars, buffers, declared;
};

void usesExpr(const ExprP &e, Uses &u) {
  if (e->kind == ExprKind::Var) u.vars.insert(e->var);
  if (e->kind == ExprKind::Load) u.buffers.insert(e->buffer);
  for (const ExprP &a : e->args) usesExpr(a, u);
}

void usesStmt(const StmtP &s, Uses &u) {
  if (!s) return;
  if (s->kind == StmtKind::Decl) u.declared.insert(s->var);
  if (s->kind == StmtKind::For) u.declared.insert(s->var);
  if (s->kind == StmtKind::Store || s->kind == StmtKind::Free || s->kind == StmtKind::SigmaPrefix) u.buffers.insert(s->buffer);
  if (s->kind == StmtKind::SigmaPrefix) u.buffers.insert(s->source);
  if (s->kind == StmtKind::Assign) u.vars.insert(s->var);
  if (s->a) usesExpr(s->a, u);
  if (s->b) usesExpr(s->b, u);
  for (const StmtP &b : s->body) usesStmt(b, u);
}

class Gen {
 public:
  Gen(llvm::LLVMContext &ctx, llvm::Module &m) : ctx_(ctx), m_(m), b_(ctx) {}

  void function(const Function &f) {
    fn_ = &f;
    std::vector<llvm::Type *> params(f.numParams, nullptr);
    for (const ScalarParam &p : f.scalars) params[p.paramIndex] = ty(p.type);
    for (const Buffer &buf : f.buffers)
      if (buf.isParam) params[buf.paramIndex] = b_.getPtrTy();
    for (llvm::Type *&t : params)
      if (!t) throw InternalError("codegen: a parameter of " + f.name + " has no type");
    auto *ft = llvm::FunctionType::get(b_.getInt32Ty(), params, false);
    llvm::Function *lf = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, f.name, m_);
    lf->addFnAttr(llvm::Attribute::NoUnwind);
    lf->addFnAttr("frame-pointer", "none");
    for (const Buffer &buf : f.buffers) {
      if (!buf.isParam) continue;
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
    for (const ScalarParam &p : f.scalars) {
      llvm::AllocaInst *slot = entryAlloca(ty(p.type), p.name);
      b_.CreateStore(lf->getArg(p.paramIndex), slot);
      frame.vars[p.var] = {slot, p.type};
    }
    for (const Buffer &buf : f.buffers) {
      if (buf.isParam) {
        frame.buffers[buf.id] = lf->getArg(buf.paramIndex);
      } else {
        llvm::AllocaInst *slot = entryAlloca(b_.getPtrTy(), buf.name + ".slot");
        b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot);
        frame.tempSlots[buf.id] = slot;
      }
    }
    stmt(f.body);
    if (!b_.GetInsertBlock()->getTerminator()) emitReturn(b_.getInt32(0));
    frames_.pop_back();
  }

 private:
  struct VarSlot {
    llvm::AllocaInst *slot = nullptr;
    Ty type = Ty::I64;
  };
  /// One LLVM function being generated: the exported one or an outlined parallel body.
  struct Frame {
    llvm::Function *fn = nullptr;
    llvm::BasicBlock *entry = nullptr;
    std::map<int, VarSlot> vars;
    std::map<int, llvm::Value *> buffers;          // parameter buffers: the pointer itself
    std::map<int, llvm::AllocaInst *> tempSlots;   // temporaries: a slot holding the pointer
    llvm::Value *errorSlot = nullptr;              // outlined bodies: where `return` stores its code
  };

  Frame &frame() { return *frames_.back(); }

  llvm::Type *ty(Ty t) {
    switch (t) {
      case Ty::I1: return b_.getInt1Ty();
      case Ty::I32: return b_.getInt32Ty();
      case Ty::I64: return b_.getInt64Ty();
      case Ty::F32: return b_.getFloatTy();
      case Ty::F64: return b_.getDoubleTy();
    }
    return b_.getInt64Ty();
  }
  /// Bools are bytes in memory (C's bool).
  llvm::Type *memTy(Ty t) { return t == Ty::I1 ? b_.getInt8Ty() : ty(t); }

  llvm::AllocaInst *entryAlloca(llvm::Type *t, const std::string &name) {
    llvm::IRBuilder<> eb(frame().entry, frame().entry->begin());
    return eb.CreateAlloca(t, nullptr, name);
  }

  llvm::Value *bufferPtr(int id) {
    Frame &f = frame();
    if (auto it = f.buffers.find(id); it != f.buffers.end()) return it->second;
    if (auto it = f.tempSlots.find(id); it != f.tempSlots.end()) return b_.CreateLoad(b_.getPtrTy(), it->second);
    throw InternalError("codegen: buffer b" + std::to_string(id) + " is not available in " + fn_->name);
  }

  const Buffer &bufferInfo(int id) {
    const Buffer *b = fn_->buffer(id);
    if (!b) throw InternalError("codegen: unknown buffer b" + std::to_string(id));
    return *b;
  }

  llvm::StructType *structOf(const Buffer &b) {
    std::vector<llvm::Type *> fs;
    for (Ty t : b.fields) fs.push_back(memTy(t));
    return llvm::StructType::get(ctx_, fs);
  }

  llvm::Value *elementPtr(int bufferId, llvm::Value *index, int field, llvm::Type *&elemTy) {
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

  // ---- expressions ----

  /// Pure and cannot fault, so both arms of a select (or both sides of &&) may be evaluated.
  static bool safe(const ExprP &e) {
    if (e->kind == ExprKind::Load) return false;
    if (e->kind == ExprKind::Binary && !isFloatTy(e->type) &&
        (e->binop == BinOp::Div || e->binop == BinOp::Rem || e->binop == BinOp::FloorDiv || e->binop == BinOp::ExactDiv))
      return e->args[1]->kind == ExprKind::Const && e->args[1]->ival != 0 && e->args[1]->ival != -1;
    for (const ExprP &a : e->args)
      if (!safe(a)) return false;
    return true;
  }

  llvm::Value *castTo(llvm::Value *v, Ty from, Ty to) {
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

  llvm::Value *expr(const ExprP &e) {
    switch (e->kind) {
      case ExprKind::Const:
        if (isFloatTy(e->type)) return llvm::ConstantFP::get(ty(e->type), e->fval);
        return llvm::ConstantInt::get(ty(e->type), static_cast<uint64_t>(e->ival), true);
      case ExprKind::Var: {
        auto it = frame().vars.find(e->var);
        if (it == frame().vars.end()) throw InternalError("codegen: variable v" + std::to_string(e->var) + " is not declared in " + fn_->name);
        return castTo(b_.CreateLoad(ty(it->second.type), it->second.slot), it->second.type, e->type);
      }
      case ExprKind::Load: {
        llvm::Value *idx = expr(e->args[0]);
        llvm::Type *et = nullptr;
        llvm::Value *p = elementPtr(e->buffer, idx, e->field, et);
        llvm::Value *v = b_.CreateLoad(et, p);
        if (e->type == Ty::I1) return b_.CreateICmpNE(v, llvm::ConstantInt::get(et, 0));
        return v;
      }
      case ExprKind::Unary: {
        llvm::Value *a = expr(e->args[0]);
        if (e->unop == ast::UnOp::Not) return b_.CreateNot(a);
        return isFloatTy(e->type) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
      }
      case ExprKind::Binary: return binary(e);
      case ExprKind::Select: {
        llvm::Value *c = expr(e->args[0]);
        if (safe(e->args[1]) && safe(e->args[2])) return b_.CreateSelect(c, expr(e->args[1]), expr(e->args[2]));
        return branchy(c, e->args[1], e->args[2], e->type);
      }
      case ExprKind::Cast: return castTo(expr(e->args[0]), e->args[0]->type, e->type);
      case ExprKind::MinMax: {
        llvm::Value *a = expr(e->args[0]), *c = expr(e->args[1]);
        if (isFloatTy(e->type)) return e->isMax ? b_.CreateMaxNum(a, c) : b_.CreateMinNum(a, c);
        if (e->type == Ty::I1) return e->isMax ? b_.CreateOr(a, c) : b_.CreateAnd(a, c);
        return b_.CreateBinaryIntrinsic(e->isMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, a, c);
      }
    }
    throw InternalError("codegen: unknown expression");
  }

  /// `c ? x : y` evaluating only the chosen arm.
  llvm::Value *branchy(llvm::Value *c, const ExprP &x, const ExprP &y, Ty t) {
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

  llvm::Value *binary(const ExprP &e) {
    const ExprP &x = e->args[0], &y = e->args[1];
    if (e->binop == BinOp::And || e->binop == BinOp::Or) {
      llvm::Value *a = expr(x);
      if (safe(y)) {
        llvm::Value *c = expr(y);
        return e->binop == BinOp::And ? b_.CreateAnd(a, c) : b_.CreateOr(a, c);
      }
      ExprP t = e->binop == BinOp::And ? y : cInt(1, Ty::I1);
      ExprP f = e->binop == BinOp::And ? cInt(0, Ty::I1) : y;
      return branchy(a, t, f, Ty::I1);
    }
    llvm::Value *a = expr(x), *c = expr(y);
    Ty t = x->type;
    bool fp = isFloatTy(t);
    llvm::FastMathFlags fmf;
    if (e->reassoc) {
      fmf.setAllowReassoc();
      fmf.setNoSignedZeros();
    }
    switch (e->binop) {
      case BinOp::Add:
        if (fp) return withFmf(b_.CreateFAdd(a, c), fmf);
        return b_.CreateAdd(a, c);
      case BinOp::Sub:
        if (fp) return withFmf(b_.CreateFSub(a, c), fmf);
        return b_.CreateSub(a, c);
      case BinOp::Mul:
        if (fp) return withFmf(b_.CreateFMul(a, c), fmf);
        return b_.CreateMul(a, c);
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

  llvm::Value *withFmf(llvm::Value *v, const llvm::FastMathFlags &fmf) {
    if (auto *i = llvm::dyn_cast<llvm::Instruction>(v)) i->setFastMathFlags(fmf);
    return v;
  }

  // ---- statements ----

  void freeTemps() {
    for (const auto &[id, slot] : frame().tempSlots) {
      (void)id;
      b_.CreateCall(runtime("spl_free", b_.getVoidTy(), {b_.getPtrTy()}), {b_.CreateLoad(b_.getPtrTy(), slot)});
    }
  }

  void emitReturn(llvm::Value *code) {
    freeTemps();
    if (frame().errorSlot) {
      b_.CreateStore(code, frame().errorSlot);
      b_.CreateRetVoid();
    } else {
      b_.CreateRet(code);
    }
  }

  /// Starts a new block after a terminator so later code has somewhere to go.
  void afterTerminator() {
    auto *dead = llvm::BasicBlock::Create(ctx_, "after.return", frame().fn);
    b_.SetInsertPoint(dead);
  }

  llvm::FunctionCallee runtime(const std::string &name, llvm::Type *ret, std::vector<llvm::Type *> params) {
    auto *ft = llvm::FunctionType::get(ret, params, false);
    llvm::FunctionCallee c = m_.getOrInsertFunction(name, ft);
    if (auto *f = llvm::dyn_cast<llvm::Function>(c.getCallee())) f->addFnAttr(llvm::Attribute::NoUnwind);
    return c;
  }

  void stmt(const StmtP &s) {
    switch (s->kind) {
      case StmtKind::Block:
        for (const StmtP &x : s->body) stmt(x);
        break;
      case StmtKind::For:
        if (s->loop == LoopKind::Parallel) parallelLoop(*s);
        else serialLoop(*s, expr(s->a), expr(s->b));
        break;
      case StmtKind::Store: {
        llvm::Value *idx = expr(s->a);
        llvm::Value *v = expr(s->b);
        llvm::Type *et = nullptr;
        llvm::Value *p = elementPtr(s->buffer, idx, s->field, et);
        if (et->isIntegerTy(8) && v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, et);
        b_.CreateStore(v, p);
        break;
      }
      case StmtKind::Decl: {
        llvm::AllocaInst *slot = entryAlloca(ty(s->type), s->name);
        frame().vars[s->var] = {slot, s->type};
        if (s->a) b_.CreateStore(expr(s->a), slot);
        break;
      }
      case StmtKind::Assign: {
        auto it = frame().vars.find(s->var);
        if (it == frame().vars.end()) throw InternalError("codegen: assignment to undeclared v" + std::to_string(s->var));
        b_.CreateStore(castTo(expr(s->a), s->a->type, it->second.type), it->second.slot);
        break;
      }
      case StmtKind::If: {
        llvm::Value *c = expr(s->a);
        llvm::Function *fn = frame().fn;
        auto *tb = llvm::BasicBlock::Create(ctx_, "if.then", fn);
        auto *jb = llvm::BasicBlock::Create(ctx_, "if.end", fn);
        llvm::BasicBlock *fb = s->body[1] ? llvm::BasicBlock::Create(ctx_, "if.else", fn) : jb;
        b_.CreateCondBr(c, tb, fb);
        b_.SetInsertPoint(tb);
        stmt(s->body[0]);
        if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(jb);
        if (s->body[1]) {
          b_.SetInsertPoint(fb);
          stmt(s->body[1]);
          if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(jb);
        }
        b_.SetInsertPoint(jb);
        break;
      }
      case StmtKind::Alloc: {
        const Buffer &buf = bufferInfo(s->buffer);
        int64_t elemBytes = buf.fields.empty() ? tyBytes(buf.elem)
                                               : static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(structOf(buf)));
        if (buf.fields.empty() && buf.elem == Ty::I1) elemBytes = 1;
        llvm::Value *count = expr(s->a);
        llvm::Value *bytes = b_.CreateMul(count, b_.getInt64(elemBytes));
        llvm::Value *p = b_.CreateCall(runtime("spl_alloc", b_.getPtrTy(), {b_.getInt64Ty()}), {bytes});
        auto it = frame().tempSlots.find(s->buffer);
        if (it == frame().tempSlots.end()) {
          llvm::AllocaInst *slot = entryAlloca(b_.getPtrTy(), buf.name + ".slot");
          llvm::IRBuilder<> eb(frame().entry, std::next(llvm::BasicBlock::iterator(slot)));
          eb.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot);
          it = frame().tempSlots.emplace(s->buffer, slot).first;
        }
        b_.CreateStore(p, it->second);
        // spl_alloc returns NULL for 0 bytes: only a NULL for a positive size is a failure.
        llvm::Value *failed = b_.CreateAnd(b_.CreateIsNull(p), b_.CreateICmpSGT(bytes, b_.getInt64(0)));
        auto *fail = llvm::BasicBlock::Create(ctx_, "alloc.fail", frame().fn);
        auto *ok = llvm::BasicBlock::Create(ctx_, "alloc.ok", frame().fn);
        b_.CreateCondBr(failed, fail, ok);
        b_.SetInsertPoint(fail);
        emitReturn(b_.getInt32(2));  // SPL_ERR_ALLOC
        b_.SetInsertPoint(ok);
        break;
      }
      case StmtKind::Free: {
        auto it = frame().tempSlots.find(s->buffer);
        if (it == frame().tempSlots.end()) break;
        b_.CreateCall(runtime("spl_free", b_.getVoidTy(), {b_.getPtrTy()}), {b_.CreateLoad(b_.getPtrTy(), it->second)});
        b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), it->second);
        break;
      }
      case StmtKind::SigmaPrefix: {
        const Buffer &src = bufferInfo(s->source);
        std::string name = src.elem == Ty::I64 ? "spl_sigma_prefix_i64" : "spl_sigma_prefix_i32";
        llvm::Value *rc = b_.CreateCall(runtime(name, b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}),
                                        {bufferPtr(s->source), expr(s->a), bufferPtr(s->buffer)});
        auto *fail = llvm::BasicBlock::Create(ctx_, "sigma.fail", frame().fn);
        auto *ok = llvm::BasicBlock::Create(ctx_, "sigma.ok", frame().fn);
        b_.CreateCondBr(b_.CreateICmpNE(rc, b_.getInt32(0)), fail, ok);
        b_.SetInsertPoint(fail);
        emitReturn(rc);
        b_.SetInsertPoint(ok);
        break;
      }
      case StmtKind::Return:
        emitReturn(b_.getInt32(s->code));
        afterTerminator();
        break;
    }
  }

  void serialLoop(const Stmt &s, llvm::Value *lo, llvm::Value *hi) {
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
      b_.CreateStore(b_.CreateAdd(cur, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true), iv);
      b_.CreateBr(header);
    }
    b_.SetInsertPoint(exit);
  }

  /// Outlines the body into `void f(ptr closure, i64 begin, i64 end)` and runs it with
  /// spl_parallel_for; the closure holds every variable and buffer the body reads.
  void parallelLoop(const Stmt &s) {
    Uses u;
    usesStmt(s.body[0], u);
    std::vector<int> vars, bufs;
    for (int v : u.vars)
      if (!u.declared.count(v) && v != s.var && frame().vars.count(v)) vars.push_back(v);
    for (int bid : u.buffers)
      if (frame().buffers.count(bid) || frame().tempSlots.count(bid)) bufs.push_back(bid);
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

    // The outlined body.
    auto *bodyTy = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    llvm::Function *bodyFn = llvm::Function::Create(bodyTy, llvm::GlobalValue::InternalLinkage,
                                                    frame().fn->getName() + "." + s.name + ".par", m_);
    bodyFn->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::BasicBlock *savedBlock = b_.GetInsertBlock();
    Frame inner;
    inner.fn = bodyFn;
    inner.entry = llvm::BasicBlock::Create(ctx_, "entry", bodyFn);
    frames_.push_back(&inner);
    b_.SetInsertPoint(inner.entry);
    llvm::Value *cl = bodyFn->getArg(0);
    inner.errorSlot = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(closureTy, cl, 0));
    Frame &outer = *frames_[frames_.size() - 2];
    for (size_t k = 0; k < vars.size(); ++k) {
      VarSlot vs = outer.vars[vars[k]];
      llvm::AllocaInst *slot = entryAlloca(ty(vs.type), "cap");
      b_.CreateStore(b_.CreateLoad(ty(vs.type), b_.CreateStructGEP(closureTy, cl, static_cast<unsigned>(1 + k))), slot);
      inner.vars[vars[k]] = {slot, vs.type};
    }
    for (size_t k = 0; k < bufs.size(); ++k) {
      llvm::Value *p = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(closureTy, cl, static_cast<unsigned>(1 + vars.size() + k)));
      inner.buffers[bufs[k]] = p;
    }
    serialLoop(s, bodyFn->getArg(1), bodyFn->getArg(2));
    if (!b_.GetInsertBlock()->getTerminator()) {
      freeTemps();
      b_.CreateRetVoid();
    }
    frames_.pop_back();
    b_.SetInsertPoint(savedBlock);

    auto *rangeFnTy = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    (void)rangeFnTy;
    b_.CreateCall(runtime("spl_parallel_for", b_.getVoidTy(),
                          {b_.getInt64Ty(), b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()}),
                  {lo, hi, b_.getInt64(16), bodyFn, closure});
    llvm::Value *code = b_.CreateLoad(b_.getInt32Ty(), err);
    auto *fail = llvm::BasicBlock::Create(ctx_, "par.fail", frame().fn);
    auto *ok = llvm::BasicBlock::Create(ctx_, "par.ok", frame().fn);
    b_.CreateCondBr(b_.CreateICmpNE(code, b_.getInt32(0)), fail, ok);
    b_.SetInsertPoint(fail);
    emitReturn(code);
    b_.SetInsertPoint(ok);
  }

  llvm::LLVMContext &ctx_;
  llvm::Module &m_;
  llvm::IRBuilder<> b_;
  const Function *fn_ = nullptr;
  std::vector<Frame *> frames_;
};

}  // namespace

bool compileCpu(const loopir::Module &m, const std::string &moduleName, const CodeGenOptions &opts, OutputKind kind,
                std::string &out, std::string &error) {
  llvm::LLVMContext ctx;
  auto mod = std::make_unique<llvm::Module>(moduleName, ctx);
  if (!prepareModule(*mod, opts, error)) return false;
  Gen g(ctx, *mod);
  for (const loopir::Function &f : m.functions) g.function(f);
  std::string verifyErrors;
  llvm::raw_string_ostream vs(verifyErrors);
  if (llvm::verifyModule(*mod, &vs)) {
    vs.flush();
    throw InternalError("codegen: the LLVM module does not verify:\n" + verifyErrors);
  }
  return optimizeAndEmit(*mod, opts, kind, out, error);
}

}  // namespace spl::codegen
