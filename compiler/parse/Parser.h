/// \file Parser.h: source text -> AST.
/// Takes:      a file registered in the SourceManager.
/// Gives:      an ast::Module, or nullopt after reporting diagnostics.
/// Fails:      invalid UTF-8 and stray characters ("stray 'x' in program"), unterminated block
///             comments (reported at their `/*`), syntax errors (the first one only, at the
///             offending token; a missing token is reported at the token found in its place),
///             integer literals out of range, nesting deeper than the compiler supports.
/// Guarantees: never throws on user input; bounded time and stack for any input (the driver
///             runs the compiler on a large stack; the builder caps nesting depth).
#pragma once

#include <optional>

#include "ast/Ast.h"
#include "support/Diagnostics.h"

namespace spl {

std::optional<ast::Module> parseFile(const SourceManager &sm, uint32_t file, Diagnostics &diags);

}  // namespace spl
