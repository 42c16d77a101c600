/// \file Nat.h: type-level naturals and their normal form (LANGUAGE.md section 2).
///
/// Semantics. A Nat denotes an integer-valued function of its free variables. Every Nat is kept
/// in normal form: a polynomial with rational coefficients over *atoms*, with monomials and
/// atoms in a canonical order. Two Nats are equal iff their normal forms coincide (operator==);
/// the normaliser is sound (equal forms denote equal functions) but incomplete (some equal
/// functions have different forms, e.g. min(a, b) + max(a, b) and a + b).
///
/// Atoms:
///   Var      a nat variable: a parameter, a map position, a sum index, or a unification
///            variable ("meta") of the checker;
///   Lookup   arr@N: an element of a nats, or of an integer array value (toNat(a@e));
///   Value    toNat(x) of an integer scalar value x (a lambda or let variable);
///   Min/Max  of two Nats (kept only when their difference has no known sign);
///   Div/Mod  floor division and remainder by a positive constant (kept only when not exact);
///   Cond     B ? N : N (kept only when B does not fold);
///   Sum      sum(i = lo .. hi) body over the half-open range, kept only when no closed form
///            applies.
///
/// Subtraction is exact integer subtraction (no truncation at zero): a Nat may denote a negative
/// number for some variable values. Where the language needs non-negativity (array lengths,
/// take/drop) the checker tries to prove it (proveNonNegative) and lists what it cannot prove.
/// Division rounds towards minus infinity; exact division of a polynomial (integer-valued
/// quotient) is folded, which makes i*(i+1)/2 equal to the Gauss sum sum(k = 0 .. i+1) k.
///
/// Sigma closed forms (sum): a body without the index; polynomial bodies (Faulhaber sums up to
/// degree 8, so linear and Gauss sums); telescoping sum(i = a..b) f(i+1) - f(i) = f(b) - f(a)
/// for any atoms f (CSR offsets); and the ragged-split identity
/// sum(g = 0 .. (n+k-1)/k) min(k, n - g*k) = n for a constant k >= 1.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spl {

/// Exact rational number with 64-bit numerator and denominator (denominator > 0, reduced).
/// Overflow throws InternalError-free CompileError("nat arithmetic overflows 64 bits").
class Rat {
 public:
  Rat(int64_t n = 0) : num_(n), den_(1) {}  // NOLINT: implicit from integers is intended
  Rat(int64_t n, int64_t d);
  int64_t num() const { return num_; }
  int64_t den() const { return den_; }
  bool isInt() const { return den_ == 1; }
  bool isZero() const { return num_ == 0; }
  Rat operator+(const Rat &o) const;
  Rat operator-(const Rat &o) const;
  Rat operator*(const Rat &o) const;
  Rat operator/(const Rat &o) const;
  Rat operator-() const;
  bool operator==(const Rat &o) const { return num_ == o.num_ && den_ == o.den_; }
  bool operator!=(const Rat &o) const { return !(*this == o); }
  bool operator<(const Rat &o) const;
  std::string str() const;
  /// Builds n/d that is already reduced with d > 0 (no normalisation).
  static Rat reduced(int64_t n, int64_t d) {
    Rat r;
    r.num_ = n;
    r.den_ = d;
    return r;
  }

 private:
  int64_t num_, den_;
};

struct NatAtom;
struct NatCond;
using NatAtomP = std::shared_ptr<const NatAtom>;
using NatCondP = std::shared_ptr<const NatCond>;

/// Variable identity: a unique id plus the name the user wrote (for printing only).
struct NatVarId {
  int64_t id = 0;
  std::string name;
  bool operator==(const NatVarId &o) const { return id == o.id; }
  bool operator<(const NatVarId &o) const { return id < o.id; }
};

/// Creates a fresh variable id (process-wide counter: ids never repeat).
NatVarId freshNatVar(const std::string &name);

class Nat {
 public:
  struct Monomial {
    std::vector<std::pair<NatAtomP, int>> factors;  // sorted by atom key; powers >= 1
    std::string key;
  };
  struct Term {
    Monomial mono;
    Rat coeff;
  };

  Nat() : Nat(int64_t(0)) {}
  Nat(int64_t v);  // NOLINT: literals convert implicitly
  static Nat var(const NatVarId &v);
  static Nat lookup(const NatVarId &array, const Nat &index);
  static Nat value(const NatVarId &v);
  static Nat min(const Nat &a, const Nat &b);
  static Nat max(const Nat &a, const Nat &b);
  /// Floor division / remainder by a constant c >= 1 (c <= 0 throws CompileError at the caller).
  static Nat div(const Nat &a, int64_t c);
  static Nat mod(const Nat &a, int64_t c);
  static Nat cond(const NatCondP &c, const Nat &a, const Nat &b);
  /// sum(i = lo .. hi) body over [lo, hi), with closed forms where they exist.
  static Nat sum(const NatVarId &i, const Nat &lo, const Nat &hi, const Nat &body);
  static Nat fromTerms(std::vector<Term> terms);
  static Nat fromAtom(const NatAtomP &a);
  /// n / k when k divides n exactly as polynomials (k a constant or a single monomial).
  static std::optional<Nat> divideExact(const Nat &n, const Nat &k);

  Nat operator+(const Nat &o) const;
  Nat operator-(const Nat &o) const;
  Nat operator*(const Nat &o) const;
  Nat operator-() const;
  Nat scale(const Rat &r) const;

  /// Normal forms coincide.
  bool operator==(const Nat &o) const;
  bool operator!=(const Nat &o) const { return !(*this == o); }
  /// A total order on normal forms (for canonical ordering of atoms and maps).
  bool operator<(const Nat &o) const { return key() < o.key(); }

  std::optional<int64_t> asConst() const;
  std::optional<Rat> asRat() const;
  /// If this Nat is exactly one variable (coefficient 1), that variable.
  std::optional<NatVarId> asVar() const;
  bool isZero() const { return terms().empty(); }
  /// The same representation: equal, and printed alike (a cheap test that lets a rewrite keep
  /// a node it did not change; == compares normal forms and ignores the names of variables).
  bool identical(const Nat &o) const { return rep_ == o.rep_; }

  const std::vector<Term> &terms() const;
  const std::string &key() const;

  /// Does the Nat mention variable/array/value id `id` (free occurrences)?
  bool mentions(int64_t id) const;
  void collectIds(std::vector<int64_t> &out) const;
  /// Does the Nat read run-time data (a Lookup of an array or the Value of a scalar, at any
  /// depth)? Nats over nat parameters and loop indices alone do not.
  bool readsData() const;

  /// Human-readable text in source syntax, e.g. "offs@(i + 1) - offs@i".
  std::string str() const;

  /// The largest integer constant factor c (> 0) such that this/c has integer coefficients,
  /// and whether every coefficient is an integer.
  bool hasIntCoeffs() const;

 private:
  struct Rep;
  explicit Nat(std::shared_ptr<const Rep> r) : rep_(std::move(r)) {}
  std::shared_ptr<const Rep> rep_;
  friend struct NatImpl;
};

enum class NatAtomKind { Var, Lookup, Value, Min, Max, Div, Mod, Cond, Sum };

struct NatAtom {
  NatAtomKind kind;
  NatVarId var;        // Var, Value: the variable; Lookup: the array; Sum: the bound index
  std::vector<Nat> args;  // Lookup: {index}; Min/Max: {a, b}; Div/Mod: {a}; Cond: {a, b};
                          // Sum: {lo, hi, body}
  int64_t divisor = 1;    // Div/Mod
  NatCondP cond;          // Cond
  std::string key;        // canonical, alpha-invariant for Sum
};

/// Conditions of `B ? N : N` (and of run-time guards derived from types).
enum class NatCmp { Eq, Ne, Lt, Le };
struct NatCond {
  enum Kind { Const, Cmp, And, Or, Not } kind;
  bool value = false;   // Const
  NatCmp cmp = NatCmp::Eq;
  Nat lhs;              // Cmp: lhs cmp 0 after normalisation (lhs = a - b)
  std::vector<NatCondP> args;  // And/Or: 2; Not: 1
  std::string key;

  static NatCondP constant(bool v);
  /// a op b, folded when a - b is a constant. op in ==, !=, <, <=, >, >=.
  static NatCondP compare(const std::string &op, const Nat &a, const Nat &b);
  static NatCondP conj(const NatCondP &a, const NatCondP &b);
  static NatCondP disj(const NatCondP &a, const NatCondP &b);
  static NatCondP negate(const NatCondP &a);
  std::string str() const;
};

/// Substitution: variable/value ids to Nats, and array ids to other arrays (renaming nats).
struct NatSubst {
  std::map<int64_t, Nat> vars;          // Var and Value atoms
  std::map<int64_t, NatVarId> arrays;   // Lookup arrays
  /// Lookups whose array maps to a function of the index (e.g. a nats bound to an expression).
  std::map<int64_t, std::function<Nat(const Nat &)>> arrayFns;
  bool empty() const { return vars.empty() && arrays.empty() && arrayFns.empty(); }
};

Nat substitute(const Nat &n, const NatSubst &s);
NatCondP substitute(const NatCondP &c, const NatSubst &s);

/// Facts for proofs: known lower/upper bounds of variables (lo <= v < hi).
struct NatFacts {
  struct Range {
    int64_t var;
    Nat lo, hi;  // lo <= var < hi
  };
  std::vector<Range> ranges;
  /// Atoms known to be >= 0 beyond the defaults (every Var/Lookup/Value atom is a natural).
};

/// Tries to prove n >= 0 using that every atom is a natural and the given ranges.
bool proveNonNegative(const Nat &n, const NatFacts &facts);

/// Bounds free of the variables that `facts` ranges over (FHPNC'21 section 5.3: the size of a
/// buffer for values whose length depends on a position, e.g. one row of a ragged split):
/// upperBound(n) >= n and lowerBound(n) <= n for every value of those variables in their
/// ranges. Each ranged variable goes to its extreme (hi - 1 or lo) where it appears with one
/// sign, min/max/floor division/conditionals are bounded through their arguments, and a lookup
/// or run-time value at a position that varies has no upper bound (nullopt) and lower bound 0.
/// Other variables stay as they are.
std::optional<Nat> upperBound(const Nat &n, const NatFacts &facts);
std::optional<Nat> lowerBound(const Nat &n, const NatFacts &facts);
/// The smallest constant upper bound found (for static sizes such as GPU shared memory).
std::optional<int64_t> constUpperBound(const Nat &n, const NatFacts &facts);
/// The arguments of n when n is exactly one min (a tile's bound min(m, 16 t + 16)), else
/// nullopt.
std::optional<std::vector<Nat>> minArms(const Nat &n);
/// The same for one max (a triangle's row bound max(0, k + 1 - 8 io)).
std::optional<std::vector<Nat>> maxArms(const Nat &n);
/// A constant bound of a loop's extent hi - lo, where hi may be a min one of whose arms is lo
/// plus a constant (a tile's point loop [16 t, min(m, 16 t + 16)) runs at most 16 times).
std::optional<int64_t> constExtentBound(const Nat &lo, const Nat &hi);

/// Evaluates a Nat under an assignment of its atoms (variables by id, lookups by callback).
/// Returns nullopt if some atom has no value. Used by tests (fuzzing the normaliser).
struct NatEnv {
  std::map<int64_t, int64_t> vars;
  std::function<std::optional<int64_t>(int64_t array, int64_t index)> lookup;
};
std::optional<int64_t> evaluate(const Nat &n, const NatEnv &env);
std::optional<bool> evaluate(const NatCondP &c, const NatEnv &env);

}  // namespace spl
