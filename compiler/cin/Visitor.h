/// \file Visitor.h: CIN's visitor and mutator (Halide's IRVisitor and IRMutator), the one way a
/// pass walks concrete index notation's statements and expressions.
/// Takes:      a statement or an expression of CIN (cin/Cin.h; null: none).
/// Gives:      Visitor: a method per node kind (visitForall, visitAccess, ...), called by
///             visit(); each one's default visits the node's children: a statement's
///             expressions (lhs, then value) and then its statements in order, an expression's
///             operands in order. Mutator: a method per kind returning the node's replacement;
///             each one's default mutates the children the same way and returns the node itself
///             when none changed, a copy holding the new children otherwise (unchanged subtrees
///             stay shared). Nats (bounds, indices, NatE) are not nodes: a pass that rewrites
///             them overrides the kinds that hold them (Forall, Access, NatE).
/// The kinds come from SPL_CIN_STMT_KINDS / SPL_CIN_EXPR_KINDS: a new node kind gets its
/// methods here by being listed there.
#pragma once

#include "cin/Cin.h"

namespace spl::cin {

class Visitor {
 public:
  virtual ~Visitor() = default;
  /// Calls the method of s's kind (null: nothing). Virtual, so that a pass can act on every
  /// node before or after its kind's method (its override calls this one to go on).
  virtual void visit(const StmtP &s);
  virtual void visit(const ExprP &e);
  /// Calls the method of the node's kind (what visit does once it has the node).
  void dispatch(const Stmt &s);
  void dispatch(const Expr &e);

 protected:
#define SPL_CIN_VISIT(K) \
  virtual void visit##K(const Stmt &s) { visitChildren(s); }
  SPL_CIN_STMT_KINDS(SPL_CIN_VISIT)
#undef SPL_CIN_VISIT
#define SPL_CIN_VISIT(K) \
  virtual void visit##K(const Expr &e) { visitChildren(e); }
  SPL_CIN_EXPR_KINDS(SPL_CIN_VISIT)
#undef SPL_CIN_VISIT
  /// The statement's expressions (lhs, value), then its statements.
  void visitChildren(const Stmt &s);
  void visitChildren(const Expr &e);
};

class Mutator {
 public:
  virtual ~Mutator() = default;
  /// The replacement of s by the method of its kind (null: null). Virtual, as Visitor::visit.
  virtual StmtP mutate(const StmtP &s);
  virtual ExprP mutate(const ExprP &e);

 protected:
#define SPL_CIN_MUTATE(K) \
  virtual StmtP mutate##K(const StmtP &s) { return mutateChildren(s); }
  SPL_CIN_STMT_KINDS(SPL_CIN_MUTATE)
#undef SPL_CIN_MUTATE
#define SPL_CIN_MUTATE(K) \
  virtual ExprP mutate##K(const ExprP &e) { return mutateChildren(e); }
  SPL_CIN_EXPR_KINDS(SPL_CIN_MUTATE)
#undef SPL_CIN_MUTATE
  /// `s` with its expressions and statements mutated (in visitChildren's order); `s` itself
  /// when nothing changed.
  StmtP mutateChildren(const StmtP &s);
  ExprP mutateChildren(const ExprP &e);
};

}  // namespace spl::cin
