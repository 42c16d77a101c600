/// \file Verify.cpp: the CIN verifier (see Verify.h). A visitor (cin/Visitor.h) in statement order
/// with a stack of scopes for locals and the set of tensors in scope; the first violation ends it.
#include "cin/Verify.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "cin/Visitor.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::cin {
namespace {

bool isCompare(ast::BinOp op) {
  return op == ast::BinOp::Eq || op == ast::BinOp::Ne || op == ast::BinOp::Lt || op == ast::BinOp::Le ||
         op == ast::BinOp::Gt || op == ast::BinOp::Ge;
}

class Verifier : public Visitor {
 public:
  explicit Verifier(const Kernel &k) : k_(k) {
    for (const TensorP &t : k.tensors)
      if (t) tensors_.insert(t->id);
    scopes_.emplace_back();
    // Scalars passed by value are locals bound to their parameters (so are nats and counts).
    for (const KernelParam &p : k.params)
      if (p.natVar) scopes_.back()[p.natVar] = p.abi.role == tir::AbiParam::Scalar ? scalarOfParam(p) : Scalar::I64;
  }

  static Scalar scalarOfParam(const KernelParam &p) { return p.abi.isIndex ? Scalar::I64 : p.abi.elem; }

  std::string run() {
    stmt(k_.body);
    return problem_;
  }

 private:
  const Kernel &k_;
  std::set<int64_t> tensors_;
  std::vector<std::map<int64_t, Scalar>> scopes_;
  std::string problem_;

  bool failed() const { return !problem_.empty(); }
  void fail(const std::string &what) {
    if (problem_.empty()) problem_ = what;
  }
  bool declared(int64_t local) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (it->count(local)) return true;
    return false;
  }

  /// Every variable a Nat mentions is in scope: a loop index or a nat parameter (Var), a
  /// scalar parameter (Value), an array in scope (Lookup); a sum's own index inside its body.
  void nat(const Nat &n, const char *use, std::vector<int64_t> &bound) {
    for (const Nat::Term &t : n.terms())
      for (const auto &f : t.mono.factors) natAtom(*f.first, n, use, bound);
  }
  void natAtom(const NatAtom &a, const Nat &whole, const char *use, std::vector<int64_t> &bound) {
    if (failed()) return;
    const bool isBound = std::find(bound.begin(), bound.end(), a.var.id) != bound.end();
    if ((a.kind == NatAtomKind::Var || a.kind == NatAtomKind::Value) && !isBound && !declared(a.var.id))
      return fail(fmt::format("{} mentions {} (#{}) where it is not in scope: {}", use, a.var.name, a.var.id, whole.str()));
    if (a.kind == NatAtomKind::Lookup && !tensors_.count(a.var.id) && !declared(a.var.id))
      return fail(fmt::format("{} reads the array {} (#{}) where it is not in scope: {}", use, a.var.name, a.var.id, whole.str()));
    if (a.kind == NatAtomKind::Sum) {
      nat(a.args[0], use, bound);
      nat(a.args[1], use, bound);
      bound.push_back(a.var.id);
      nat(a.args[2], use, bound);
      bound.pop_back();
      return;
    }
    for (const Nat &x : a.args) nat(x, use, bound);
    if (a.cond) natCond(*a.cond, whole, use, bound);
  }
  void natCond(const NatCond &c, const Nat &whole, const char *use, std::vector<int64_t> &bound) {
    if (c.kind == NatCond::Cmp) nat(c.lhs, use, bound);
    for (const NatCondP &x : c.args)
      if (x) natCond(*x, whole, use, bound);
  }
  void nat(const Nat &n, const char *use) {
    std::vector<int64_t> bound;
    nat(n, use, bound);
  }

  /// An access's tensor is in scope, it has at most one index per array level, and its tuple
  /// path exists below them.
  void access(const TensorP &t, const std::vector<Nat> &indices, const std::vector<int> &leaf, const char *use) {
    if (!t) return fail(std::string(use) + " of no tensor");
    for (const Nat &i : indices) nat(i, "an index");
    if (failed()) return;
    if (!tensors_.count(t->id)) return fail(std::string(use) + " of " + t->name + ", which is not in scope");
    if (t->kind == Tensor::NatsInput) return;  // a nats: one level, its count given by its uses
    TypeP ty = t->type;
    size_t pi = 0;
    auto tuples = [&]() -> bool {
      while (ty && ty->kind == TypeKind::Tuple) {
        if (pi >= leaf.size()) return true;  // an access may stop at a tuple (a whole element)
        if (leaf[pi] < 0 || static_cast<size_t>(leaf[pi]) >= ty->elems.size()) {
          fail(fmt::format("{} of {} with the tuple path component {} of a {}-tuple", use, t->name, leaf[pi], ty->elems.size()));
          return false;
        }
        ty = ty->elems[static_cast<size_t>(leaf[pi++])];
      }
      return true;
    };
    if (!tuples()) return;
    for (size_t i = 0; i < indices.size(); ++i) {
      if (!ty || ty->kind != TypeKind::Array)
        return fail(fmt::format("{} of {} with {} indices, more than its array levels ({})", use, t->name, indices.size(),
                                types::str(t->type)));
      ty = ty->elems[0];
      if (!tuples()) return;
    }
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
  void inScope(const std::vector<StmtP> &body) {
    scopes_.emplace_back();
    for (const StmtP &c : body) stmt(c);
    scopes_.pop_back();
  }

  /// Each expression's operands are there and checked before it: whether it goes on.
  bool operandsHold(const Expr &e) {
    if (failed()) return false;
    for (const ExprP &a : e.args) {
      if (!a) {
        fail("a missing operand");
        return false;
      }
      expr(a);
    }
    return !failed();
  }

  // ---- expressions ----
  void visitConst(const Expr &e) override { operandsHold(e); }
  void visitNatE(const Expr &e) override {
    if (operandsHold(e)) nat(e.nat, "a nat expression");
  }
  void visitLocal(const Expr &e) override {
    if (operandsHold(e) && !declared(e.local)) fail(fmt::format("local %{} is used where it is not declared", e.local));
  }
  void visitAccess(const Expr &e) override {
    if (operandsHold(e)) access(e.tensor, e.indices, e.leaf, "a read");
  }
  void visitUnary(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 1) return fail("a unary operator without one operand: " + print(e));
    if (e.unop == ast::UnOp::Not && (e.args[0]->type != Scalar::Bool || e.type != Scalar::Bool))
      fail("! on a value that is not bool: " + print(e));
  }
  void visitBinary(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 2) return fail("a binary operator without two operands: " + print(e));
    Scalar a = e.args[0]->type, b = e.args[1]->type;
    if (e.binop == ast::BinOp::And || e.binop == ast::BinOp::Or) {
      if (a != Scalar::Bool || b != Scalar::Bool || e.type != Scalar::Bool) fail("&& or || on values that are not bool: " + print(e));
    } else if (isCompare(e.binop)) {
      if (a != b || e.type != Scalar::Bool)
        fail("a comparison of " + std::string(scalarName(a)) + " and " + scalarName(b) + " typed " + scalarName(e.type) + ": " +
             print(e));
    } else if (a != b || e.type != a) {
      fail("arithmetic on " + std::string(scalarName(a)) + " and " + scalarName(b) + " typed " + scalarName(e.type) + ": " +
           print(e));
    }
  }
  void visitSelect(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 3 || e.args[0]->type != Scalar::Bool || e.args[1]->type != e.args[2]->type)
      fail("a select whose condition is not bool or whose arms differ: " + print(e));
  }
  void visitConvert(const Expr &e) override {
    if (operandsHold(e) && e.args.size() != 1) fail("a conversion without one operand: " + print(e));
  }
  void visitMinMax(const Expr &e) override {
    if (!operandsHold(e)) return;
    if (e.args.size() != 2 || e.args[0]->type != e.args[1]->type) fail("min/max of mismatched types: " + print(e));
  }

  // ---- statements ----
  void visitBlock(const Stmt &s) override { inScope(s.body); }
  void visitForall(const Stmt &s) override {
    nat(s.lo, "a loop's lower bound");
    nat(s.hi, "a loop's upper bound");
    if (failed()) return;
    scopes_.emplace_back();
    scopes_.back()[s.var] = Scalar::I64;
    for (const StmtP &c : s.body) stmt(c);
    scopes_.pop_back();
  }
  void visitAssign(const Stmt &s) override {
    if (!s.lhs || s.lhs->kind != ExprKind::Access) return fail("an assignment to something that is not an access");
    access(s.lhs->tensor, s.lhs->indices, s.lhs->leaf, "a write");
    if (failed()) return;
    if ((s.lhs->tensor->kind == Tensor::Input && !s.lhs->tensor->updated) || s.lhs->tensor->kind == Tensor::NatsInput)
      return fail("a write to the input " + s.lhs->tensor->name);
    expr(s.value);
  }
  void visitDeclLocal(const Stmt &s) override {
    if (s.value) expr(s.value);
    scopes_.back()[s.local] = s.type;
  }
  void visitSetLocal(const Stmt &s) override {
    if (!declared(s.local)) return fail(fmt::format("local %{} is set where it is not declared", s.local));
    expr(s.value);
  }
  void visitIf(const Stmt &s) override {
    expr(s.value);
    if (!failed() && s.value->type != Scalar::Bool) return fail("a condition that is not bool: " + print(s.value));
    for (const StmtP &c : s.body) inScope({c});
  }
  void visitAlloc(const Stmt &s) override {
    if (!s.tensor) return fail("an allocation of no tensor");
    bool added = tensors_.insert(s.tensor->id).second;
    inScope(s.body);
    if (added) tensors_.erase(s.tensor->id);
  }
  void visitFail(const Stmt &) override {}
  void visitBarrier(const Stmt &) override {}
};

}  // namespace

std::string verify(const Kernel &k) { return Verifier(k).run(); }

void verifyAfter(const Kernel &k, const char *stage) {
  std::string problem = verify(k);
  internal_assert(problem.empty()) << "the CIN of " << k.name << " is broken after " << stage << ": " << problem;
}

}  // namespace spl::cin
