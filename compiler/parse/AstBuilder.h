/// \file AstBuilder.h (private to parse/): ANTLR parse tree -> ast::Module.
/// Assumes the tree is free of syntax errors. Reports integer literals out of range and nesting
/// deeper than kMaxNesting, and returns nullopt if it reported anything.
#pragma once

#include <optional>

#include "SplParser.h"
#include "ast/Ast.h"
#include "support/Diagnostics.h"

namespace spl {

/// Deeper nesting than this is refused with a diagnostic (keeps every later recursive pass far
/// from the stack limit).
constexpr int kMaxNesting = 1000;

/// `firstLine`: the line of the file where the parsed text starts (a part of a large file is
/// parsed on its own; its tokens count lines from 1).
std::optional<ast::Module> buildAst(grammar::SplParser::ProgramContext *tree, const SourceManager &sm,
                                    uint32_t file, Diagnostics &diags, uint32_t firstLine = 1);

}  // namespace spl
