/// \file Visitor.h: CIN's visitor and mutator (Halide's IRVisitor and IRMutator), the one way a
/// pass walks concrete index notation's statements and expressions; the classes are
/// support/IrVisitor.def's, shared with the loop IR.
/// Takes:      a statement or an expression of CIN (cin/Cin.h; null: none).
/// Gives:      Visitor: a method per node kind (visitForall, visitAccess, ...) whose default
///             visits a statement's expressions (lhs, then value) and then its statements in
///             order, an expression's operands in order. Mutator: a method per kind returning
///             the node's replacement, by default the node itself unless a child changed.
///             Nats (bounds, indices, NatE) are not nodes: a pass that rewrites them overrides
///             the kinds that hold them (Forall, Access, NatE).
/// The kinds come from SPL_CIN_STMT_KINDS / SPL_CIN_EXPR_KINDS: a new node kind gets its
/// methods by being listed there.
#pragma once

#include "cin/Cin.h"
#include "support/IrWalk.h"

namespace spl::cin {

#define SPL_IR_STMT_KINDS SPL_CIN_STMT_KINDS
#define SPL_IR_EXPR_KINDS SPL_CIN_EXPR_KINDS
#include "support/IrVisitor.def"

}  // namespace spl::cin
