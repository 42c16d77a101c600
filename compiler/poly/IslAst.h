/// \file IslAst.h: the two directions between Nats / CIN and isl, shared by the passes that
/// model loops in isl (PolyModel.cpp) and generate loops from isl's AST (IslCodegen.cpp,
/// Tile.cpp, Fuse.cpp, Inspector.cpp). isl objects are the C++ bindings' (isl/cpp.h: owned,
/// freed by their destructors; an isl error throws isl::exception, isl::exception_quota past
/// the context's operations quota).
///
/// foldAffine
///   Takes:    a Nat and the operations that build a result (text, isl objects, or nothing but
///             the answer "is it affine").
///   Gives:    the Nat's affine structure folded: a sum of integer or rational multiples of
///             single atoms (one floor division by the common denominator; exact, a Nat is
///             integer-valued), each atom a variable or value the caller takes, a floor division
///             or remainder of an affine Nat by a constant, a min or max of two.
///   Fails:    nullopt for products of atoms, lookups, sums, conditionals, or an atom the
///             caller does not take. This is the one place that decides what "affine" means.
///
/// IslParams
///   Takes:    the variables that are set dimensions of the domains being built.
///   Gives:    Nats as isl::pw_aff on a domain: its dimensions where they are the loops' own
///             variables, every other Var atom an isl parameter p0, p1, ..., a whole non-affine
///             bound that mentions no dimension one parameter q0, q1, ... (`opaque`); universes
///             over all the parameters declared, their context (all >= 0) and meanings.
///   Fails:    nullopt where foldAffine does.
///
/// natOfAstExpr
///   Takes:    an isl::ast_expr and the meaning of its identifiers (loop iterators and isl
///             parameters) as Nats.
///   Gives:    the expression as a Nat: sums, differences, products, negation, min, max, floor
///             division and remainder by positive constants, and `c ? a : b` (a Cond atom).
///   Fails:    nullopt for anything else (a comparison, an unknown identifier, a division by a
///             non-constant).
///
/// AstToCin
///   Takes:    an isl AST (ast_build::node_from / node_from_schedule_map), what each of
///             its loops becomes (variable, name, kind: by iterator, depth and the name of the
///             nearest mark above it that no other loop took; the iterator is empty when isl
///             built no for node under a mark) and what each statement instance
///             `S(e1, .., ek)` becomes (a callback given the e's as Nats).
///   Gives:    CIN: blocks, foralls (unit stride; a degenerate loop binds its iterator to its
///             single value; where AstLoop::keepDegenerate it is a loop of one iteration, also
///             when isl built no for node under its mark), guards (`if` nodes with comparisons
///             of affine expressions joined by && and ||, and their else branches), the
///             callbacks' statements.
///   Fails:    nullopt with `why` for a stride other than 1, a bound or condition that is not
///             affine, or a node kind not listed.
#pragma once

#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cin/Cin.h"
#include "types/Nat.h"

#include <isl/cpp.h>

namespace spl::poly {

/// foldAffine's operations on partial results T (see the file comment): `leaf` takes a Var or
/// Value atom (nullopt: not affine here); `linear` sums integer multiples of terms (a null term
/// is the constant 1); `floorDiv`, `mod`, `min`, `max` as their names say.
template <class T>
struct AffineOps {
  virtual ~AffineOps() = default;
  virtual std::optional<T> leaf(const NatAtom &a) = 0;
  virtual T linear(const std::vector<std::pair<int64_t, const T *>> &terms) = 0;
  virtual T floorDiv(const T &x, int64_t divisor) = 0;
  virtual T mod(const T &x, int64_t divisor) = 0;
  virtual T min(const T &x, const T &y) = 0;
  virtual T max(const T &x, const T &y) = 0;
};

template <class T>
std::optional<T> foldAffine(const Nat &n, AffineOps<T> &ops);

template <class T>
std::optional<T> foldAffineAtom(const NatAtom &a, AffineOps<T> &ops) {
  switch (a.kind) {
    case NatAtomKind::Var:
    case NatAtomKind::Value: return ops.leaf(a);
    case NatAtomKind::Div:
    case NatAtomKind::Mod: {
      std::optional<T> x = foldAffine(a.args[0], ops);
      if (!x) return std::nullopt;
      return a.kind == NatAtomKind::Div ? ops.floorDiv(*x, a.divisor) : ops.mod(*x, a.divisor);
    }
    case NatAtomKind::Min:
    case NatAtomKind::Max: {
      std::optional<T> x = foldAffine(a.args[0], ops), y = foldAffine(a.args[1], ops);
      if (!x || !y) return std::nullopt;
      return a.kind == NatAtomKind::Min ? ops.min(*x, *y) : ops.max(*x, *y);
    }
    case NatAtomKind::Lookup:
    case NatAtomKind::Cond:
    case NatAtomKind::Sum: return std::nullopt;
  }
  return std::nullopt;
}

template <class T>
std::optional<T> foldAffine(const Nat &n, AffineOps<T> &ops) {
  int64_t den = 1;
  for (const Nat::Term &t : n.terms()) den = den / std::gcd(den, t.coeff.den()) * t.coeff.den();
  std::vector<std::pair<int64_t, std::optional<T>>> folded;
  for (const Nat::Term &t : n.terms()) {
    int64_t c = t.coeff.num() * (den / t.coeff.den());
    if (t.mono.factors.empty()) {
      folded.push_back({c, std::nullopt});
      continue;
    }
    if (t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) return std::nullopt;
    std::optional<T> a = foldAffineAtom(*t.mono.factors[0].first, ops);
    if (!a) return std::nullopt;
    folded.push_back({c, std::move(a)});
  }
  std::vector<std::pair<int64_t, const T *>> terms;
  for (const auto &[c, a] : folded) terms.push_back({c, a ? &*a : nullptr});
  T sum = ops.linear(terms);
  return den == 1 ? sum : ops.floorDiv(sum, den);
}

/// The isl text of a Nat (PolyModel's text model): `name` gives a Var or Value atom's isl
/// name, or nullopt (not affine there).
std::optional<std::string> affineIslText(const Nat &n, const std::function<std::optional<std::string>(const NatAtom &)> &name);

/// Is n affine when `leaf` takes its Var and Value atoms?
bool isAffine(const Nat &n, const std::function<bool(const NatAtom &)> &leaf);

/// Nats as isl expressions on the domains of a few loops regenerated by isl (IslCodegen.cpp,
/// Tile.cpp, Fuse.cpp, the inspector's phases). Parameters are declared first (`declare`,
/// `declareInvariant`, `declareOpaque`: each says whether the Nat can be built), then every
/// domain is a universe over all of them (`domain`), so that all objects share one
/// parameter space in the order declared.
class IslParams {
 public:
  /// `dims`: the variables that are set dimensions of the domains (their positions are given
  /// with each domain).
  IslParams(isl::ctx ctx, std::set<int64_t> dims) : ctx_(ctx), dims_(std::move(dims)) {}
  /// How isl takes a bound: not at all, as an affine expression, or as one parameter.
  enum class Declared { No, Affine, Opaque };
  /// Affine when n is affine in the dimensions and parameters (declared here as they appear).
  Declared declare(const Nat &n);
  /// declare(n), or, when n is not affine but mentions no dimension, a parameter for all of it.
  Declared declareInvariant(const Nat &n);
  /// A parameter for all of n (a constant stays itself), when n mentions no dimension.
  Declared declareOpaque(const Nat &n);

  /// A domain: the universe `tuple[d0, ..]` over every parameter declared; `positions` gives
  /// the dimension of each loop variable in it.
  struct Domain {
    isl::set set;  // a universe until the caller constrains it
    std::map<int64_t, int> positions;
  };
  Domain domain(const std::string &tuple, const std::vector<int64_t> &vars) const;
  /// n on d, as it was declared. A bound not declared so is a compiler bug.
  isl::pw_aff affine(const Nat &n, Declared how, const Domain &d) const;
  /// The variable `var` of d.
  static isl::pw_aff dim(const Domain &d, int64_t var);
  /// lo <= var < hi on d.
  isl::set range(const Domain &d, int64_t var, const Nat &lo, Declared loHow, const Nat &hi, Declared hiHow) const;
  /// The parameter space's context: every parameter >= 0 (they are nats).
  isl::set context() const;
  /// Each parameter's meaning, for reading isl's AST back (AstToCin's ids).
  const std::map<std::string, Nat> &meanings() const { return meanings_; }

 private:
  std::string paramOf(const NatAtom &a);
  isl::ctx ctx_;
  std::set<int64_t> dims_;
  std::vector<std::string> order_;
  std::map<int64_t, std::string> byVar_;
  std::map<std::string, std::string> opaque_;  // Nat text -> its parameter
  std::map<std::string, Nat> meanings_;
};

std::optional<Nat> natOfAstExpr(const isl::ast_expr &e, const std::map<std::string, Nat> &ids);
/// A comparison (==, <, <=, >, >=) of natOfAstExpr's expressions, or && and || of them; null
/// for anything else.
NatCondP natCondOfAstExpr(const isl::ast_expr &e, const std::map<std::string, Nat> &ids);

/// What one of isl's generated loops becomes in CIN.
struct AstLoop {
  NatVarId var;
  std::string name;
  cin::ForallKind kind = cin::ForallKind::Serial;
  /// The forall this loop regenerates: its hints (balanceBy, userKind, vectorize, unroll) and
  /// source location carry over (null: none).
  const cin::Stmt *like = nullptr;
  /// A loop of one iteration stays a loop (a GPU level: the mapping must stay).
  bool keepDegenerate = false;
};

class AstToCin {
 public:
  /// nullopt: no loop was expected there (the translation fails).
  using LoopFn =
      std::function<std::optional<AstLoop>(const std::string &iterator, int depth, const std::string &mark)>;
  using InstanceFn = std::function<std::optional<cin::StmtP>(const std::string &statement, const std::vector<Nat> &args,
                                                             std::string &why)>;

  /// `ids`: the isl parameters as Nats.
  AstToCin(std::map<std::string, Nat> ids, LoopFn loop, InstanceFn instance, SourceLoc loc)
      : ids_(std::move(ids)), loop_(std::move(loop)), instance_(std::move(instance)), loc_(loc) {}

  std::optional<cin::StmtP> translate(const isl::ast_node &n, std::string &why);

 private:
  std::optional<cin::StmtP> node(const isl::ast_node &n);
  std::optional<cin::StmtP> forNode(const isl::ast_node_for &n);
  std::optional<cin::StmtP> ifNode(const isl::ast_node_if &n);
  std::optional<cin::StmtP> userNode(const isl::ast_node_user &n);
  std::optional<cin::ExprP> condition(const isl::ast_expr &e);
  std::optional<Nat> successor(const isl::ast_expr &e);  // e + 1, pushed into min and max
  /// The forall `loop` over [lo, hi), with the hints of the loop it regenerates.
  cin::StmtP loopStmt(const AstLoop &loop, Nat lo, Nat hi, cin::StmtP body) const;
  std::optional<cin::StmtP> fail(const std::string &why) {
    if (why_.empty()) why_ = why;
    return std::nullopt;
  }

  std::map<std::string, Nat> ids_;
  LoopFn loop_;
  InstanceFn instance_;
  SourceLoc loc_;
  int depth_ = 0;
  std::string mark_;  // the nearest mark above, until a loop takes it
  std::set<std::string> markTaken_;  // the marks a loop took
  std::string why_;
};

}  // namespace spl::poly
