/// \file LoopCodeGen.h (private to codegen/): loop IR -> LLVM IR, shared by the CPU back end
/// (CodeGenCpu.cpp) and the CUDA device code (CodeGenCuda.cpp).
/// The base class generates expressions and statements (a loop-IR visitor: a method per node
/// kind); a target overrides the hooks for what
/// differs: parallel loops (the CPU's thread pool, the GPU's grid), temporaries, the Sigma
/// precomputation and returning an error code.
/// Variables live in allocas (mem2reg promotes them). A Frame is one LLVM function being
/// generated: the exported one or an outlined body.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loopir/LoopIr.h"
#include "loopir/Visitor.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace spl::codegen {

/// Free variables and buffers of a statement (what an outlined body must capture): `declared`
/// variables and `allocated` temporaries are the statement's own.
struct Uses {
  std::set<int> vars, buffers, declared, allocated;
};
void usesOf(const loopir::StmtP &s, Uses &u);

/// A temporary up to this many bytes (by a constant bound on its size) lives in the frame of
/// the function that allocates it: the thread's local memory on the GPU (one slot in the entry
/// block, which a loop allocating it again reuses); a larger or unbounded one comes from the
/// heap.
constexpr int64_t kLocalTempBytes = 4096;

/// The CPU's: a temporary up to kCpuStackTempBytes lives on the stack, as long as the stack
/// temporaries of its function stay within kCpuStackFrameBytes together (Halide's 16 KB a
/// stack allocation). A malloc and a free of 16 KB (gemv N's sums of a block of 2048 rows)
/// took about 110 ns of a 340 ns dgemv of 32 x 32 on a 2-core AMD EPYC (Zen 3); the frames stay
/// far below the 8 MB a thread of glibc (the runtime's pool, a user's) starts with.
constexpr int64_t kCpuStackTempBytes = 16384;
constexpr int64_t kCpuStackFrameBytes = 32768;

/// Whether the temporary allocated by `alloc` (elements of elemBytes) fits `limit` bytes by a
/// constant bound on its size (kLocalTempBytes where not told).
bool localTemp(const loopir::Stmt &alloc, int64_t elemBytes, int64_t limit = kLocalTempBytes);

class LoopCodeGen : protected loopir::Visitor {
 public:
  LoopCodeGen(llvm::LLVMContext &ctx, llvm::Module &m) : ctx_(ctx), m_(m), b_(ctx) {}
  virtual ~LoopCodeGen();
  /// Whether floating-point adds, subtractions and products carry `contract` (CodeGenOptions).
  void setFpContract(bool on) { fpContract_ = on; }

 protected:
  struct VarSlot {
    llvm::AllocaInst *slot = nullptr;
    loopir::Ty type = loopir::Ty::I64;
  };
  struct Frame {
    llvm::Function *fn = nullptr;
    llvm::BasicBlock *entry = nullptr;
    std::map<int, VarSlot> vars;
    std::map<int, llvm::Value *> buffers;         // buffers whose pointer is a value here
    std::map<int, llvm::AllocaInst *> tempSlots;  // temporaries: a slot holding the pointer
    llvm::Value *errorSlot = nullptr;             // outlined bodies: where `return` stores its code
  };

  // ---- target hooks ----
  virtual void parallelLoop(const loopir::Stmt &s) = 0;
  virtual void allocStmt(const loopir::Stmt &s) = 0;
  virtual void freeStmt(const loopir::Stmt &s) = 0;
  virtual void sigmaStmt(const loopir::Stmt &s) = 0;
  virtual void emitReturn(llvm::Value *code) = 0;
  /// After an allocation of `bytes` that gave `p`: returns SPL_ERR_ALLOC (emitReturn) when p is
  /// NULL for a positive size (allocators may return NULL for 0 bytes).
  void returnIfAllocFailed(llvm::Value *p, llvm::Value *bytes);
  virtual void barrier() = 0;
  /// Whether an accumulation carried by a loop (acc = acc + a * b) may fuse too (binary()).
  virtual bool fusesCarriedAdds() const { return false; }
  /// The GPU's operations (loop IR's GpuIndex, WarpShuffle, WarpVote, WarpReduce, Fence,
  /// Arrive); the CPU has none (an internal error: the loop-IR verifier keeps them out of CPU
  /// functions).
  virtual llvm::Value *gpuIndexValue(loopir::GpuIndexKind k);
  virtual llvm::Value *warpShuffleValue(const loopir::Expr &e);
  virtual llvm::Value *warpVoteValue(const loopir::Expr &e);
  virtual void warpReduce(const loopir::Stmt &s);
  virtual void fence();
  virtual void arrive(const loopir::Stmt &s);
  /// A Prefetch statement: llvm.prefetch of the element's address (the NVPTX back end drops it).
  void prefetch(const loopir::Stmt &s);

  Frame &frame() { return *frames_.back(); }
  llvm::Type *ty(loopir::Ty t);
  llvm::Type *memTy(loopir::Ty t);  // bools are bytes in memory (C's bool)
  llvm::AllocaInst *entryAlloca(llvm::Type *t, const std::string &name);
  llvm::Value *bufferPtr(int id);
  const loopir::Buffer &bufferInfo(int id);
  llvm::StructType *structOf(const loopir::Buffer &b);
  llvm::Value *elementPtr(int bufferId, llvm::Value *index, int field, llvm::Type *&elemTy);
  static bool safe(const loopir::ExprP &e);
  llvm::Value *castTo(llvm::Value *v, loopir::Ty from, loopir::Ty to);
  /// The value of an expression (its kind's visit method leaves it in value_).
  llvm::Value *expr(const loopir::ExprP &e);
  llvm::Value *branchy(llvm::Value *c, const loopir::ExprP &x, const loopir::ExprP &y, loopir::Ty t);
  /// `contract`: whether a floating-point result may fuse with its operands (with fpContract_).
  llvm::Value *binary(const loopir::Expr &e, bool contract = true);
  /// Is `assign` an accumulation, v = v + e (or e + v, v - e), of its own variable?
  static bool accumulates(const loopir::Stmt &assign);
  llvm::Value *withFmf(llvm::Value *v, const llvm::FastMathFlags &fmf);
  /// Emits a statement (by its kind's visit method).
  void stmt(const loopir::StmtP &s);
  // ---- the loop IR's kinds (loopir/Visitor.h), one method each ----
#define SPL_LOOPIR_EMIT(K) void visit##K(const loopir::Stmt &s) override;
  SPL_LOOPIR_STMT_KINDS(SPL_LOOPIR_EMIT)
#undef SPL_LOOPIR_EMIT
#define SPL_LOOPIR_EMIT(K) void visit##K(const loopir::Expr &e) override;
  SPL_LOOPIR_EXPR_KINDS(SPL_LOOPIR_EMIT)
#undef SPL_LOOPIR_EMIT
  /// Sets the value of the expression being visited (`return produce(v);` in a visit method).
  void produce(llvm::Value *v) { value_ = v; }
  /// while (cond()) body(), the condition evaluated at the loop's head (loop IR's While; the
  /// CUDA back end's shuffle tree over a width known only at run time).
  void whileLoop(const std::function<llvm::Value *()> &cond, const std::function<void()> &body);
  /// A counted loop from lo to hi (exclusive) by `step`, binding s.var.
  void serialLoop(const loopir::Stmt &s, llvm::Value *lo, llvm::Value *hi, llvm::Value *step = nullptr);
  void afterTerminator();
  llvm::FunctionCallee runtime(const std::string &name, llvm::Type *ret, std::vector<llvm::Type *> params);
  /// Binds a function's parameters (scalars to slots, buffers to pointer values).
  void bindParams(const loopir::Function &f, llvm::Function *lf);

  llvm::LLVMContext &ctx_;
  llvm::Module &m_;
  llvm::IRBuilder<> b_;
  bool fpContract_ = true;
  const loopir::Function *fn_ = nullptr;
  std::vector<Frame *> frames_;
  llvm::Value *value_ = nullptr;  // the value of the expression just visited
};

}  // namespace spl::codegen
