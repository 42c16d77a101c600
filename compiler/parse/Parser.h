/// \file Parser.h: source text -> AST.
/// Takes:      a file registered in the SourceManager.
/// Gives:      an ast::Module, or nullopt after reporting diagnostics.
/// Fails:      invalid UTF-8 and stray characters ("stray 'x' in program"), unterminated block
///             comments (reported at their `/*`), syntax errors (the first one only, at the
///             offending token; a missing token is reported at the token found in its place),
///             integer literals out of range, nesting deeper than the compiler supports.
/// Guarantees: never throws on user input; bounded time and stack for any input (the driver
///             runs the compiler on a large stack; the builder caps nesting depth); memory about
///             the AST's for a large file (ParseOptions).
#pragma once

#include <optional>

#include "ast/Ast.h"
#include "support/Diagnostics.h"

namespace spl {

/// A file larger than `partsAbove` bytes is parsed in parts of about `partBytes`, each cut where
/// a declaration starts: ANTLR's tokens and parse tree take a few hundred bytes per byte of
/// source (gigabytes for a large file), while the parts need the AST's memory plus one part's.
/// The result, diagnostics included, is the same as parsing the file at once: a part with any
/// problem makes the whole file be parsed at once, which reports it.
struct ParseOptions {
  size_t partsAbove = size_t(256) << 10;
  size_t partBytes = size_t(64) << 10;
  /// When set, receives how many parts the file was parsed in (0: at once).
  size_t *partsParsed = nullptr;
};

std::optional<ast::Module> parseFile(const SourceManager &sm, uint32_t file, Diagnostics &diags,
                                     const ParseOptions &opts = {});

}  // namespace spl
