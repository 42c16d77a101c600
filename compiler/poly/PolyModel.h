/// \file PolyModel.h: concrete index notation as a polyhedral (isl) model.
///
/// Takes:      a cin::Kernel (any target; after the user and default schedules).
/// Gives:      a PolyModel: isl parameters, one isl statement per leaf CIN statement, its
///             iteration domain, its 2d+1 schedule, and its read and write access relations,
///             every isl object as isl text (so this header needs no isl include; see
///             STYLE.md section 6). Dependences.h parses the text in its own isl_ctx.
/// Assumes:    the facts the types already promise: an access indexes every level of its tensor
///             within that level's bounds, distinct tensors do not overlap, Var/Lookup/Value
///             atoms are naturals, and an offsets array used as segment offsets (see "segments"
///             below) is non-decreasing (each O@(e+1) - O@e is the length of a segment, a nat).
/// Guarantees: every approximation is an over-approximation: more statement instances, more
///             accessed elements, and writes that may not happen are may-writes (they never kill
///             an earlier write). A dependence analysis on the model finds every dependence of
///             the program (and perhaps more).
/// Fails:      never with a user error; a broken invariant (isl cannot read the text built
///             here) throws InternalError. isl work here is capped by a quota; on running out
///             the text is kept as built (not simplified).
///
/// The model, exactly.
///
/// Statements. Each Assign, SetLocal and DeclLocal with an initialiser is one isl statement,
/// named S0, S1, ... in program order. Its domain has one dimension per enclosing forall,
/// outermost first, named after the forall's variable. If, Alloc and Block add no dimension.
/// DeclLocal without an initialiser, Fail and Barrier are not statements (a failing kernel
/// runs nothing after the Fail, so no write after it can be hidden; the input checks that
/// guard a Fail only read).
///
/// Parameters. A Var atom that is a nat parameter of the kernel (n, m) is an isl parameter
/// with its C name. A loop variable in scope is a domain dimension. Every other atom (a
/// Lookup such as offs@i, a Value such as a column index read into a local, a Sum without a
/// closed form, a Cond, a Var bound elsewhere) is non-affine.
///
/// Affine Nats. A Nat whose terms are integer or rational multiples of single affine atoms
/// (parameters, loop variables, floor division and remainder of affine Nats by a constant,
/// min and max of affine Nats) is translated exactly; rational coefficients use one common
/// denominator inside floor(), which is exact because a Nat is integer-valued.
///
/// Loop bounds lo <= v < hi. An affine bound is exact. Otherwise the bound is split into its
/// affine terms (integer coefficients) and the rest R, and R becomes a parameter:
///   - R is loop-invariant (no loop variable, no Value atom, no lookup into a tensor the kernel
///     writes): a parameter P_k = R, exact (one run-time value);
///   - otherwise an upper bound U_k >= R over all iterations (for hi) or a lower bound
///     L_k <= R (for lo), one parameter per distinct R and role. The domain is then a superset
///     of the real one (every real instance satisfies the relaxed bound), so the statement's
///     domain is marked inexact. CSR's inner loop k < offs@(i+1) - offs@i becomes k < U_0.
/// The reads of a bound (offs@(i+1), offs@i, a local in a Value atom) are attached as reads to
/// every statement in the loop's body (at the same instance). A bound whose reads can meet a
/// write is never exact (it is not invariant), so its loop's model domain is not empty and the
/// attached reads stay visible even when the real loop runs no iteration.
///
/// Guards. An If condition built from comparisons of affine integer expressions with &&, ||
/// and ! is added exactly to the domains of the statements in its branches (the else branch
/// gets the negation). A conjunct that is not affine (a comparison with a loaded value) is
/// dropped, which makes the domain inexact. The condition's reads are attached to every
/// statement in both branches. A Select's arms are read conditionally; the reads are kept
/// (an over-approximation of the reads).
///
/// Arrays. A tensor leaf (tensor, tuple path) is one isl array with one dimension per array
/// level; its indices are per-level coordinates (injective because accesses are in bounds).
/// A scalar local is an array indexed by the loop variables enclosing its declaration: the
/// declaration makes a fresh variable per iteration of those loops (scalar expansion, exact),
/// so an accumulator declared inside the row loop is acc[i], and its updates in the nonzero
/// loop create exactly the dependences of the reduction. A temporary allocated under loops
/// is expanded the same way. A lookup O@e reads array O at [e].
///
/// Subscripts. An affine index is exact. An index that is affine plus a loop-invariant rest
/// uses the exact parameter P_k. Any other index leaves its dimension unconstrained: the
/// access touches the whole level (other levels stay exact), and a write becomes a may-write.
///
/// Segments. The last index of an access may address element x of segment e of a partition
/// of its level into consecutive segments:
///   - by offsets: O@e + x (- O@c), O an index array that the kernel does not write, c
///     loop-invariant, 0 <= x < O@(e+1) - O@e;
///   - uniform: P*e + x, P a loop-invariant atom (a nat parameter), 0 <= x < P;
///   - closed: F(e) + x, F a polynomial in one loop variable e and loop-invariant atoms that is
///     not affine (a packed triangle's columns: j*(j+1)/2 + i), 0 <= x < L with L over e and
///     invariant atoms, and F(e+1) - F(e) - L proved non-negative (proveNonNegative), as well
///     as F(e+1) - F(e) over e's loop range: each segment ends before the next one starts;
/// with e affine, x >= 0 by the types and the upper bound proved from a fact `x < bound` of an
/// enclosing loop (v < hi) or If guard (a conjunct a < b), dropped once a local it mentions is
/// reassigned (also by a later iteration of a loop below it). When every access to an array
/// has such a form with the same partition, the array is modelled with the coordinates [e, x]
/// (x unconstrained when not affine): the join of a dependent array (the bfs frontier) writes
/// disjoint segments, BCSR's out[i*b + r] disjoint blocks.
///
/// Writes. A write is a must-write when its statement's domain is exact and every index is
/// exact; otherwise it is a may-write. isl's dataflow analysis lets must-writes kill earlier
/// writes and never may-writes.
///
/// Schedule. The initial schedule is the program order in the 2d+1 encoding:
/// S[v1..vd] -> [c0, v1, c1, ..., vd, cd], padded with zeros to the deepest nest, where cj is
/// the position of the statement (or of the loop containing it) among the statements and
/// loops of its enclosing loop body (If and Alloc do not start a new position count).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cin/Cin.h"

namespace spl::poly {

/// An isl parameter and what it stands for.
struct PolyParam {
  enum Kind {
    NatParam,    // a nat parameter of the kernel
    Invariant,   // exactly a loop-invariant non-affine Nat (e.g. offs@n - offs@0)
    UpperBound,  // an upper bound of a non-affine loop bound over all iterations
    LowerBound,  // a lower bound of a non-affine loop bound over all iterations
  } kind = NatParam;
  std::string name;     // the isl name
  std::string meaning;  // the Nat it stands for, in source syntax
};

/// One isl array: a tensor leaf, a scalar local (expanded) or a temporary.
struct PolyArray {
  std::string name;       // the isl tuple name
  std::string what;       // e.g. "tensor out leaf .0", "local %57 acc"
  bool isLocal = false;
  int64_t local = 0;      // isLocal: the local's id
  int64_t tensor = 0;     // otherwise: the id of the tensor (cin::Tensor::id) it is a leaf of
  int dims = 0;
  std::string segmentedBy;  // non-empty: modelled as [segment, offset] by this offsets array
};

/// One access relation of a statement.
struct PolyAccess {
  bool write = false;
  bool must = false;       // a write that certainly happens, exactly at these elements
  int array = -1;          // index into PolyModel::arrays
  std::string relation;    // isl map text: [params] -> { S[..] -> A[..] : ... }
  std::string what;        // the CIN text it comes from ("cols[i, k]", "loop bound", ...)
};

struct PolyStatement {
  std::string name;                // S0, S1, ...
  std::string text;                // the CIN statement, one line
  std::vector<int> loops;          // enclosing loops, outermost first (indices into loops)
  std::vector<std::string> dims;   // domain dimension names
  std::string domain;              // isl set text
  bool exactDomain = true;         // false: a superset of the real instances
  std::string schedule;            // isl map text: S[..] -> [c0, v1, c1, ...]
  std::vector<PolyAccess> accesses;
  /// `X = X op e` with a reassociable op (Expr::reassoc, or integer min/max), X a scalar
  /// local, or an atomic update of a tensor: the array of X (else -1) and the operator's text.
  int reductionArray = -1;
  std::string reductionOp;
  /// An atomic update `T[x] op= e` of a tensor (reductionArray is T's array): instances run
  /// in any order, even at once, with the same result up to reassociation.
  bool atomic = false;
};

struct PolyLoop {
  int64_t var = 0;
  std::string name;          // the CIN variable name with its id, e.g. "k%58"
  std::string dim;           // the isl dimension name
  int depth = 0;             // 0 = outermost; the loop's dimension in its statements' domains
  int parent = -1;           // enclosing loop
  cin::ForallKind kind = cin::ForallKind::Serial;  // what the lowering and schedules chose
  std::string lo, hi;        // the CIN bounds, in source syntax
  bool exactBounds = true;
  std::vector<int> statements;  // every statement inside (at any depth)
};

struct PolyModel {
  std::string kernel;
  std::vector<PolyParam> params;
  std::vector<PolyArray> arrays;
  std::vector<PolyStatement> statements;
  std::vector<PolyLoop> loops;  // in program order (pre-order)
  int scheduleDims = 1;
  std::string paramSpace;       // "[n, m, U_0]"
  /// The approximations taken, in words (deterministic order).
  std::vector<std::string> notes;
};

PolyModel buildPolyModel(const cin::Kernel &k);

/// The model as text: parameters, arrays, statements with domains, schedules and accesses.
std::string print(const PolyModel &m);

}  // namespace spl::poly
