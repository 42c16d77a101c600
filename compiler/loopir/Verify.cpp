/// \file Verify.cpp: the loop IR's verifier (see Verify.h). A visitor (loopir/Visitor.h) over the
/// statements in order with a stack of scopes (variable -> declared type); the first violation
/// ends it.
#include "loopir/Verify.h"

#include <map>
#include <vector>

#include "loopir/Visitor.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::loopir {
namespace {

bool isIntegerTy(Ty t) { return t == Ty::I32 || t == Ty::I64; }

bool isCompare(BinOp op) {
  return op == BinOp::Eq || op == BinOp::Ne || op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge;
}

class Verifier : public Visitor {
 public:
  explicit Verifier(const Function &f) : f_(f) {
    for (const Buffer &b : f.buffers) buffers_[b.id] = &b;
    scopes_.emplace_back();
    for (const ScalarParam &p : f.scalars) scopes_.back()[p.var] = p.type;
  }

  std::string run() {
    stmt(f_.body);
    return problem_;
  }

 private:
  const Function &f_;
  std::map<int, const Buffer *> buffers_;
  std::vector<std::map<int, Ty>> scopes_;
  std::string problem_;
  bool resident_ = false;  // inside a GpuKernel on a resident grid

  bool failed() const { return !problem_.empty(); }
  /// The function's body, or a statement of it when it is a block.
  bool topLevel(const Stmt &s) const {
    if (&s == f_.body.get()) return true;
    if (f_.body->kind != StmtKind::Block) return false;
    for (const StmtP &t : f_.body->body)
      if (t.get() == &s) return true;
    return false;
  }
  /// GPU operations exist only in cuda functions.
  void gpuOnly(const char *what) {
    if (!f_.cuda) fail(std::string(what) + " in CPU function " + f_.name);
  }
  void fail(const std::string &what) {
    if (problem_.empty()) problem_ = what;
  }

  const Ty *declared(int var) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto v = it->find(var); v != it->end()) return &v->second;
    return nullptr;
  }

  /// The element type of buffer `id` (its field `field` for a struct buffer), or null after a
  /// failure. A kernel's workspace is used only inside a kernel on a resident grid (the host
  /// sizes it by the grid's warps), never allocated or released.
  const Ty *element(int id, int field, const char *use) {
    auto it = buffers_.find(id);
    if (it == buffers_.end()) {
      fail(fmt::format("{} of buffer b{}, which the function does not have", use, id));
      return nullptr;
    }
    const Buffer &b = *it->second;
    if (b.perWarp > 0 && (!resident_ || b.isParam)) {
      fail(std::string(use) + " of workspace " + b.name + " outside a kernel on a resident grid");
      return nullptr;
    }
    if (b.arrivals && b.perWarp <= 0) {
      fail("arrival counters " + b.name + " that are not a kernel's workspace");
      return nullptr;
    }
    if (field < 0) {
      if (!b.fields.empty()) fail(std::string(use) + " of struct buffer " + b.name + " without a field");
      return &b.elem;
    }
    if (static_cast<size_t>(field) >= b.fields.size()) {
      fail(fmt::format("{} of field {} of buffer {}, which has {}", use, field, b.name, b.fields.size()));
      return nullptr;
    }
    return &b.fields[static_cast<size_t>(field)];
  }

  void integer(const ExprP &e, const char *what) {
    if (!e) {
      fail(std::string(what) + " missing");
      return;
    }
    expr(e);
    if (!failed() && !isIntegerTy(e->type)) fail(std::string(what) + " is " + tyName(e->type) + ", not an integer: " + print(e));
  }

  /// Checks an expression that must be there.
  void expr(const ExprP &e) {
    if (failed()) return;
    if (!e) return fail("a missing expression");
    visit(e);
  }
  /// Checks a statement (null: none).
  void stmt(const StmtP &s) {
    if (failed() || !s) return;
    visit(s);
  }
  /// A statement's body in a scope of its own.
  void scoped(const StmtP &s) {
    scopes_.emplace_back();
    stmt(s);
    scopes_.pop_back();
  }

  /// Each expression's operands are checked before it, and are all there: whether it goes on.
  bool operandsHold(const Expr &e) {
    if (failed()) return false;
    for (const ExprP &a : e.args) expr(a);
    if (failed()) return false;
    for (const ExprP &a : e.args)
      if (!a) {
        fail("a missing operand in " + text(e));
        return false;
      }
    return true;
  }
  static std::string text(const Expr &e) { return print(e); }

  // ---- expressions ----
  void visitConst(const Expr &e) override { operandsHold(e); }
  void visitVar(const Expr &e) override {
    if (!operandsHold(e)) return;
    const Ty *t = declared(e.var);
    if (!t) return fail(fmt::format("v{} is used where it is not declared", e.var));
    if (*t != e.type) fail(fmt::format("v{} is declared {} but used as {}", e.var, tyName(*t), tyName(e.type)));
  }
  void visitLoad(const Expr &e) override {
    if (!operandsHold(e)) return;
    const Ty *t = element(e.buffer, e.field, "a load");
    if (!t) return;
    if (e.args.size() != 1 || !isIntegerTy(e.args[0]->type)) return fail("a load's index is not an integer: " + text(e));
    if (*t != e.type) fail("a load of " + std::string(tyName(*t)) + " elements typed " + tyName(e.type) + ": " + text(e));
  }
  void visitUnary(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 1) return fail("a unary operator without one operand: " + text(e));
    Ty a = e.args[0]->type;
    if (e.unop == ast::UnOp::Not ? (a != Ty::I1 || e.type != Ty::I1) : a != e.type)
      fail("a unary operator on " + std::string(tyName(a)) + " typed " + tyName(e.type) + ": " + text(e));
  }
  void visitBinary(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 2) return fail("a binary operator without two operands: " + text(e));
    Ty a = e.args[0]->type, b = e.args[1]->type;
    if (e.binop == BinOp::And || e.binop == BinOp::Or) {
      if (a != Ty::I1 || b != Ty::I1 || e.type != Ty::I1) fail("&& or || on non-i1 operands: " + text(e));
    } else if (isCompare(e.binop)) {
      if (a != b || e.type != Ty::I1) fail("a comparison of " + std::string(tyName(a)) + " and " + tyName(b) + ": " + text(e));
    } else if (a != b || e.type != a) {
      fail("arithmetic on " + std::string(tyName(a)) + " and " + tyName(b) + " typed " + tyName(e.type) + ": " + text(e));
    }
  }
  void visitSelect(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 3 || e.args[0]->type != Ty::I1 || e.args[1]->type != e.type || e.args[2]->type != e.type)
      fail("a select whose condition is not i1 or whose arms differ: " + text(e));
  }
  void visitCast(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 1) fail("a cast without one operand: " + text(e));
  }
  void visitMinMax(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 2 || e.args[0]->type != e.type || e.args[1]->type != e.type)
      fail("min/max of mismatched types: " + text(e));
  }
  void visitGpuIndex(const Expr &e) override {
    if (!operandsHold(e)) return;
    gpuOnly(text(e).c_str());
    if (!e.args.empty() || e.type != Ty::I64) fail("a GPU index that is not an i64 leaf: " + text(e));
  }
  void visitWarpShuffle(const Expr &e) override {
    if (!operandsHold(e)) return;
    gpuOnly("a warp shuffle");
    if (e.args.size() != 3 || e.args[0]->type != e.type || !isIntegerTy(e.args[1]->type) || !isIntegerTy(e.args[2]->type))
      fail("a shuffle whose value, lane or width is mistyped: " + text(e));
    else if (e.type == Ty::I1)
      fail("a shuffle of an i1 value: " + text(e));
  }
  void visitWarpVote(const Expr &e) override {
    if (!operandsHold(e)) return;
    gpuOnly("a warp vote");
    if (e.args.size() != 2 || e.args[0]->type != Ty::I1 || !isIntegerTy(e.args[1]->type) || e.type != Ty::I64)
      fail("a vote whose predicate is not i1 or whose width or count is not an integer: " + text(e));
  }

  void visitAlignGap(const Expr &e) override {
    if (!operandsHold(e)) return;
    const Ty *t = element(e.buffer, -1, "an alignment gap");
    if (!t) return;
    if (e.args.size() != 1 || !isIntegerTy(e.args[0]->type) || e.type != Ty::I64)
      return fail("an alignment gap whose index is not an integer or whose type is not i64: " + text(e));
    if (e.ival < tyBytes(*t) || (e.ival & (e.ival - 1)) != 0)
      fail(fmt::format("an alignment gap to {} bytes, not a power of two of at least one element: {}", e.ival, text(e)));
  }

  // ---- statements ----
  void visitBlock(const Stmt &s) override {
    scopes_.emplace_back();
    for (const StmtP &c : s.body) stmt(c);
    scopes_.pop_back();
  }
  void visitFor(const Stmt &s) override {
    integer(s.a, "a loop's lower bound");
    integer(s.b, "a loop's upper bound");
    if (s.step) integer(s.step, "a loop's step");
    // A masked tail is how a vector loop ends: without a vector there is nothing to mask.
    if (s.maskedTail && (!s.vectorize || s.vectorWidth < 2))
      fail(fmt::format("loop v{} has a masked tail but is not a vector loop (width {})", s.var, s.vectorWidth));
    if (failed()) return;
    scopes_.emplace_back();
    scopes_.back()[s.var] = s.a->type;
    for (const StmtP &c : s.body) stmt(c);
    scopes_.pop_back();
  }
  void visitStore(const Stmt &s) override {
    const Ty *t = element(s.buffer, s.field, "a store");
    if (!t) return;
    integer(s.a, "a store's index");
    expr(s.b);
    if (!failed() && s.b->type != *t)
      fail("a store of " + std::string(tyName(s.b->type)) + " into " + tyName(*t) + " elements: " + print(s.b));
  }
  void visitDecl(const Stmt &s) override {
    if (s.a) {
      expr(s.a);
      if (!failed() && s.a->type != s.type)
        fail(fmt::format("v{} declared {} with a {} value", s.var, tyName(s.type), tyName(s.a->type)));
    }
    scopes_.back()[s.var] = s.type;
  }
  void visitAssign(const Stmt &s) override {
    const Ty *t = declared(s.var);
    if (!t) return fail(fmt::format("v{} is assigned where it is not declared", s.var));
    expr(s.a);
    if (!failed() && s.a->type != *t)
      fail(fmt::format("v{} ({}) assigned a {} value", s.var, tyName(*t), tyName(s.a->type)));
  }
  void visitIf(const Stmt &s) override {
    expr(s.a);
    if (!failed() && s.a->type != Ty::I1) return fail("a condition that is not i1: " + print(s.a));
    for (const StmtP &c : s.body) scoped(c);
  }
  void visitAlloc(const Stmt &s) override {
    if (auto it = buffers_.find(s.buffer); it != buffers_.end() && it->second->perWarp > 0)
      return fail("an allocation of workspace " + it->second->name + " (the host gives a kernel's workspace)");
    element(s.buffer, -1, "an allocation");
    integer(s.a, "an allocation's element count");
  }
  void visitFree(const Stmt &s) override { element(s.buffer, -1, "a release"); }
  void visitSigmaPrefix(const Stmt &s) override {
    element(s.buffer, -1, "a Sigma prefix");
    element(s.source, -1, "a Sigma prefix's lengths");
    integer(s.a, "a Sigma prefix's count");
  }
  void visitPrefetch(const Stmt &s) override {
    element(s.buffer, s.field, "a prefetch");
    integer(s.a, "a prefetch's index");
    if (s.locality < 0 || s.locality > 3) fail(fmt::format("a prefetch's locality is {}, not 0 to 3", s.locality));
  }
  void visitReturn(const Stmt &) override {}
  void visitBarrier(const Stmt &) override {}
  void visitWarpReduce(const Stmt &s) override {
    gpuOnly("a warp reduction");
    const Ty *t = declared(s.var);
    if (!t) return fail(fmt::format("v{} is reduced across a warp where it is not declared", s.var));
    if (*t == Ty::I1) return fail(fmt::format("a warp reduction of an i1 value v{}", s.var));
    integer(s.a, "a warp reduction's width");
    scopes_.emplace_back();
    scopes_.back()[s.partner] = *t;
    expr(s.b);
    scopes_.pop_back();
    if (!failed() && s.b->type != *t)
      fail(fmt::format("v{} ({}) combined across a warp into a {} value", s.var, tyName(*t), tyName(s.b->type)));
  }
  void visitGpuKernel(const Stmt &s) override {
    gpuOnly("a kernel");
    if (!topLevel(s)) return fail("a kernel nested in other statements (kernels are top-level statements)");
    if (s.a) integer(s.a, "a kernel's thread count");  // null: a resident grid
    if (!failed() && s.a && hasLoad(s.a)) return fail("a kernel's thread count reads memory: " + print(s.a));
    if (!s.b || s.b->kind != ExprKind::Const || s.b->ival < 1 || s.b->ival > 1024)
      return fail("a kernel's block is not a constant from 1 to 1024 threads");
    if (s.body.size() != 1) return fail("a kernel without one body");
    if (!s.a) resident_ = true;
    scoped(s.body[0]);
    resident_ = false;
  }
  void visitWhile(const Stmt &s) override {
    expr(s.a);
    if (!failed() && s.a->type != Ty::I1) return fail("a while loop's condition is not i1: " + print(s.a));
    if (s.body.size() != 1) return fail("a while loop without one body");
    scoped(s.body[0]);
  }
  void visitFence(const Stmt &) override { gpuOnly("a memory fence"); }
  void visitArrive(const Stmt &s) override {
    gpuOnly("an arrival count");
    const Ty *word = element(s.buffer, -1, "an arrival");
    if (!word) return;
    if (!buffers_[s.buffer]->arrivals || *word != Ty::I64)
      return fail(fmt::format("an arrival on b{}, which is not a workspace of i64 arrival counters", s.buffer));
    integer(s.a, "an arrival's word");
    const Ty *t = declared(s.var);
    if (!failed() && (!t || *t != Ty::I64))
      fail(fmt::format("an arrival count assigned to v{}, which is not a declared i64", s.var));
  }
};

}  // namespace

std::string verify(const Function &f) { return Verifier(f).run(); }

void verifyAfter(const Function &f, const char *pass) {
  std::string problem = verify(f);
  internal_assert(problem.empty()) << "the loop IR of " << f.name << " is broken after " << pass << ": " << problem;
}

}  // namespace spl::loopir
