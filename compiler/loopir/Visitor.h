/// \file Visitor.h: the loop IR's visitor and mutator (Halide's IRVisitor and IRMutator), the
/// one way a pass walks statements and expressions.
/// Takes:      a statement or an expression of the loop IR (loopir/LoopIr.h; null: none).
/// Gives:      Visitor: a method per node kind (visitFor, visitLoad, ...), called by visit();
///             each one's default visits the node's children: a statement's expressions (a, b,
///             step, the segment's parent, in that order) and then its statements in order, an
///             expression's operands in order. Mutator: a method per kind returning the node's
///             replacement; each one's default mutates the children the same way and returns
///             the node itself when none changed, a copy holding the new children otherwise
///             (unchanged subtrees stay shared). A pass overrides the kinds it acts on and calls
///             visitChildren / mutateChildren where it goes on below the node.
/// The kinds come from SPL_LOOPIR_STMT_KINDS / SPL_LOOPIR_EXPR_KINDS: a new node kind gets its
/// methods here by being listed there.
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

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
#define SPL_LOOPIR_VISIT(K) \
  virtual void visit##K(const Stmt &s) { visitChildren(s); }
  SPL_LOOPIR_STMT_KINDS(SPL_LOOPIR_VISIT)
#undef SPL_LOOPIR_VISIT
#define SPL_LOOPIR_VISIT(K) \
  virtual void visit##K(const Expr &e) { visitChildren(e); }
  SPL_LOOPIR_EXPR_KINDS(SPL_LOOPIR_VISIT)
#undef SPL_LOOPIR_VISIT
  /// The statement's expressions (a, b, step, segment parent), then its statements.
  void visitChildren(const Stmt &s);
  /// The statement's expressions only.
  void visitExprs(const Stmt &s);
  void visitChildren(const Expr &e);
};

class Mutator {
 public:
  virtual ~Mutator() = default;
  /// The replacement of s by the method of its kind (null: null). Virtual, as Visitor::visit.
  virtual StmtP mutate(const StmtP &s);
  virtual ExprP mutate(const ExprP &e);

 protected:
#define SPL_LOOPIR_MUTATE(K) \
  virtual StmtP mutate##K(const StmtP &s) { return mutateChildren(s); }
  SPL_LOOPIR_STMT_KINDS(SPL_LOOPIR_MUTATE)
#undef SPL_LOOPIR_MUTATE
#define SPL_LOOPIR_MUTATE(K) \
  virtual ExprP mutate##K(const ExprP &e) { return mutateChildren(e); }
  SPL_LOOPIR_EXPR_KINDS(SPL_LOOPIR_MUTATE)
#undef SPL_LOOPIR_MUTATE
  /// `s` with its expressions and statements mutated (in visitChildren's order); `s` itself
  /// when nothing changed.
  StmtP mutateChildren(const StmtP &s);
  ExprP mutateChildren(const ExprP &e);
};

}  // namespace spl::loopir
