/// \file Visitor.h: the loop IR's visitor and mutator (Halide's IRVisitor and IRMutator), the
/// one way a pass walks statements and expressions; the classes are support/IrVisitor.def's,
/// shared with CIN.
/// Takes:      a statement or an expression of the loop IR (loopir/LoopIr.h; null: none).
/// Gives:      Visitor: a method per node kind (visitFor, visitLoad, ...) whose default visits
///             a statement's expressions (a, b, step, the segment's parent, a parallel loop's
///             iteration work, in that order) and
///             then its statements in order, an expression's operands in order. Mutator: a
///             method per kind returning the node's replacement, by default the node itself
///             unless a child changed.
/// The kinds come from SPL_LOOPIR_STMT_KINDS / SPL_LOOPIR_EXPR_KINDS: a new node kind gets its
/// methods by being listed there.
#pragma once

#include "loopir/LoopIr.h"
#include "support/IrWalk.h"

namespace spl::loopir {

#define SPL_IR_STMT_KINDS SPL_LOOPIR_STMT_KINDS
#define SPL_IR_EXPR_KINDS SPL_LOOPIR_EXPR_KINDS
#include "support/IrVisitor.def"

}  // namespace spl::loopir
