/// \file IslAst.h: isl AST expressions read back as Nats (shared by the passes that generate
/// loops from isl's AST: Tile.cpp and Inspector.cpp).
///
/// Takes:      an isl_ast_expr and the meaning of its identifiers (loop iterators and isl
///             parameters) as Nats.
/// Gives:      the expression as a Nat: sums, differences, products, negation, min, max, floor
///             division and remainder by positive constants.
/// Fails:      nullopt for anything else (a comparison, an unknown identifier, a division by a
///             non-constant).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "types/Nat.h"

struct isl_ast_expr;

namespace spl::poly {

std::optional<Nat> natOfAstExpr(isl_ast_expr *e, const std::map<std::string, Nat> &ids);

}  // namespace spl::poly
