/// \file IslAst.h: the two directions between Nats / CIN and isl's texts and AST, shared by the
/// passes that model loops in isl (PolyModel.cpp) and generate loops from isl's AST (Tile.cpp,
/// Fuse.cpp, Inspector.cpp).
///
/// affineIslText
///   Takes:    a Nat and the isl name of each variable atom (a callback: a loop dimension, an
///             isl parameter, or nothing).
///   Gives:    the Nat as isl affine text: integer or rational coefficients (one floor division
///             by the common denominator), floor division and remainder by constants, min, max.
///   Fails:    nullopt for products of atoms, lookups, sums, conditionals, or a variable the
///             callback does not name.
///
/// natOfAstExpr
///   Takes:    an isl_ast_expr and the meaning of its identifiers (loop iterators and isl
///             parameters) as Nats.
///   Gives:    the expression as a Nat: sums, differences, products, negation, min, max, floor
///             division and remainder by positive constants.
///   Fails:    nullopt for anything else (a comparison, an unknown identifier, a division by a
///             non-constant).
///
/// AstToCin
///   Takes:    an isl AST (isl_ast_build_node_from_schedule / _from_schedule_map), what each of
///             its loops becomes (variable, name, kind: by iterator and depth) and what each
///             statement instance `S(e1, .., ek)` becomes (a callback given the e's as Nats).
///   Gives:    CIN: blocks, foralls (unit stride; a degenerate loop binds its iterator to its
///             single value), guards (`if` nodes with comparisons of affine expressions joined
///             by && and ||, and their else branches), the callbacks' statements.
///   Fails:    nullopt with `why` for a stride other than 1, a bound or condition that is not
///             affine, or a node kind not listed.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cin/Cin.h"
#include "types/Nat.h"

struct isl_ast_expr;
struct isl_ast_node;

namespace spl::poly {

/// The isl name of a Var or Value atom, or nullopt when it has none (not affine here).
using IslAtomName = std::function<std::optional<std::string>(const NatAtom &)>;

std::optional<std::string> affineIslText(const Nat &n, const IslAtomName &name);

std::optional<Nat> natOfAstExpr(isl_ast_expr *e, const std::map<std::string, Nat> &ids);

/// What one of isl's generated loops becomes in CIN.
struct AstLoop {
  NatVarId var;
  std::string name;
  cin::ForallKind kind = cin::ForallKind::Serial;
};

class AstToCin {
 public:
  /// nullopt: no loop was expected there (the translation fails).
  using LoopFn = std::function<std::optional<AstLoop>(const std::string &iterator, int depth)>;
  using InstanceFn = std::function<std::optional<cin::StmtP>(const std::string &statement, const std::vector<Nat> &args,
                                                             std::string &why)>;

  /// `ids`: the isl parameters as Nats.
  AstToCin(std::map<std::string, Nat> ids, LoopFn loop, InstanceFn instance, SourceLoc loc)
      : ids_(std::move(ids)), loop_(std::move(loop)), instance_(std::move(instance)), loc_(loc) {}

  std::optional<cin::StmtP> translate(isl_ast_node *n, std::string &why);

 private:
  std::optional<cin::StmtP> node(isl_ast_node *n);
  std::optional<cin::StmtP> forNode(isl_ast_node *n);
  std::optional<cin::StmtP> ifNode(isl_ast_node *n);
  std::optional<cin::StmtP> userNode(isl_ast_node *n);
  std::optional<cin::ExprP> condition(isl_ast_expr *e);
  std::optional<cin::StmtP> fail(const std::string &why) {
    if (why_.empty()) why_ = why;
    return std::nullopt;
  }

  std::map<std::string, Nat> ids_;
  LoopFn loop_;
  InstanceFn instance_;
  SourceLoc loc_;
  int depth_ = 0;
  std::string why_;
};

}  // namespace spl::poly
