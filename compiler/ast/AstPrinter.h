/// \file AstPrinter.h: `splc --emit=ast`.
/// Prints a Module as an indented tree, one node per line, with each node's line:col. The format
/// is deterministic and stable (golden tests compare it). Types and nats print in source syntax
/// on one line since they are small; expressions print as trees since they are not.
#pragma once

#include <string>

#include "ast/Ast.h"

namespace spl::ast {

std::string printModule(const Module &m);
std::string printNat(const NatSyn &n);
std::string printType(const TypeSyn &t);
std::string printExprInline(const Expr &e);
std::string printPattern(const Pattern &p);

}  // namespace spl::ast
