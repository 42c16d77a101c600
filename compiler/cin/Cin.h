/// \file Cin.h: concrete index notation, the middle-end IR (taco's CIN, adapted to SPL).
///
/// A Kernel is one exported function for one target. Its statements are taco's: `forall` over
/// an index variable, assignments (plain and compound) to tensor accesses, `where`-style
/// temporaries (scalar locals and allocated tensors), sequences and guards. Unlike taco's
/// notation, accesses are already concrete: an Access names a tensor and one index per array
/// level of the tensor's type, outermost first, each index a Nat (positions are naturals;
/// run-time values enter them as Value atoms naming scalar locals, and lookups into index
/// arrays as Lookup atoms naming tensors). A tensor's type is its layout: `loopir/Flatten`
/// turns an access into a buffer offset by Sigma over the type's levels.
///
/// Semantics notes. Locals are mutable scalars with a declared type. `Select` evaluates only
/// the chosen arm and `&&`/`||` short-circuit, so guarded loads are safe. Foralls carry a kind
/// (sequential, CPU-parallel, reduction, GPU level) chosen by the schedule; a Reduction forall
/// permits reassociating its accumulations (the `reduce` primitive), a Sequential one does not
/// (`fold`, `scan`, `which`).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ast/Ast.h"
#include "cin/Layout.h"
#include "support/Source.h"
#include "tir/Abi.h"
#include "tir/Tir.h"
#include "types/Nat.h"
#include "types/Type.h"

namespace spl::cin {

/// A family of buffers with one layout: a parameter (inputs, outputs), a nats, or a temporary.
struct Tensor {
  enum Kind { Input, Output, NatsInput, Temp } kind = Input;
  int64_t id = 0;    // same id space as NatVarIds: Lookup atoms name tensors by this id
  std::string name;
  TypeP type;        // the layout: arrays, tuples (SoA unless packed), scalars, idx
  /// For NatsInput and the nats of a dependent pair: the element count written or read.
  Nat count;
  /// For Temp: the allocation size in leaf elements (of each leaf buffer) — set by Flatten.
  bool isIndexArray = false;  // elements are idx[_] / nats entries (the index type)
  /// An input the caller stores with a view (`with x: inc(incx)`, tir::Export::View): element
  /// (i0, i1, ...) is at base + i0*strides[0] + i1*strides[1] + ... of its buffer, where the
  /// strides are the view's run-time parameters (Value atoms of their locals) and `baseLocal`
  /// a local set at the kernel's entry (a negative increment starts from the far end). Empty:
  /// the type's own layout (cin/Layout.h).
  std::vector<Nat> strides;
  int64_t baseLocal = 0;
  /// The result is written into this input (`with result in x`, cin/InPlace.h).
  bool updated = false;
  /// A register tile's sums (cin/RegisterTile.h): a small array read and written only at
  /// constant offsets, which LLVM keeps in vector registers.
  bool registerTile = false;
};

/// The offset of t[indices].leaf in its leaf's buffer, in elements: by the view's strides
/// (without its base, a local added where the offset is used) or by the type's layout.
Nat elementOffset(const Tensor &t, const std::vector<Nat> &indices, const std::vector<int> &leaf, const SumFn &sum = {});
using TensorP = std::shared_ptr<const Tensor>;

/// A temporary of the kernel (an array the passes add: row cells, privatized copies, cursors):
/// a Temp tensor with a fresh id, named `base` followed by that id so that two made from one
/// base stay apart in --emit output. The caller adds it to the kernel's tensors; returned
/// mutable for the flags a pass sets before sharing it (registerTile).
std::shared_ptr<Tensor> temporary(const std::string &base, TypeP type);

/// Scalar types in CIN: the language's scalars; idx values are i64 in expressions and stored
/// with the index type in buffers.
using Scalar = ScalarKind;

struct Expr;
using ExprP = std::shared_ptr<const Expr>;

/// The kinds of expressions, listed once (the enum and cin/Visitor.h's methods expand it):
///   Const    ival / fval / bval of `type`
///   Local    a scalar local (loop variable, temporary, accumulator) by id
///   NatE     a Nat evaluated at run time (i64)
///   Access   tensor[indices].leaf
///   Unary    unop args[0]
///   Binary   args[0] binop args[1] (&& and || short-circuit)
///   Select   args[0] ? args[1] : args[2], only the chosen arm evaluated
///   Convert  args[0] converted to `type`
///   MinMax   min/max(args[0], args[1])
#define SPL_CIN_EXPR_KINDS(X) X(Const) X(Local) X(NatE) X(Access) X(Unary) X(Binary) X(Select) X(Convert) X(MinMax)
#define SPL_CIN_ENUMERATOR(K) K,
enum class ExprKind { SPL_CIN_EXPR_KINDS(SPL_CIN_ENUMERATOR) };

struct Expr {
  ExprKind kind;
  Scalar type = Scalar::I64;
  int64_t ival = 0;
  double fval = 0;
  bool bval = false;
  int64_t local = 0;
  Nat nat;
  TensorP tensor;
  std::vector<Nat> indices;
  std::vector<int> leaf;  // tuple component path inside the element
  ast::UnOp unop = ast::UnOp::Neg;
  ast::BinOp binop = ast::BinOp::Add;
  bool isMax = false;
  bool reassoc = false;   // Binary: may be reassociated (a `reduce` combination)
  std::vector<ExprP> args;
};

ExprP constInt(int64_t v, Scalar t = Scalar::I64);
ExprP constFloat(double v, Scalar t);
ExprP constBool(bool v);
ExprP local(int64_t id, Scalar t);
ExprP natExpr(const Nat &n);
/// An integer expression of positions and constants (`i + j * (j + 1) / 2`, a packed triangle's
/// index; `max(0, i - kl)`, a band's first column) as the Nat it computes, so that an index stays
/// affine where it is (strides, bounds); none for anything else. A division is folded only where its dividend has no negative term
/// (positions and nats are non-negative, so C's truncation is then the Nat's floor).
std::optional<Nat> foldNat(const ExprP &e);
ExprP access(TensorP t, std::vector<Nat> indices, std::vector<int> leaf, Scalar type);
ExprP unary(ast::UnOp op, ExprP a, Scalar t);
ExprP binary(ast::BinOp op, ExprP a, ExprP b, Scalar t);
ExprP select(ExprP c, ExprP a, ExprP b, Scalar t);
ExprP convert(ExprP a, Scalar t);
ExprP minmax(bool isMax, ExprP a, ExprP b, Scalar t);
/// Pure and cannot fault: no tensor access, no integer division (safe to evaluate eagerly).
bool isSafe(const ExprP &e);

struct Stmt;
using StmtP = std::shared_ptr<const Stmt>;

enum class ForallKind {
  Serial,     // in order (fold, scan, which, and anything not proven independent)
  Reduction,  // iterations combine into accumulators with a reassociable operator
  Parallel,   // independent iterations, run on the CPU thread pool
  Vector,     // independent iterations, vectorised
  GpuBlock, GpuThread, GpuWarp, GpuLane, GpuGlobal,
};
const char *forallKindName(ForallKind k);
/// A level of the GPU's grid (block, thread, warp, lane, global thread).
bool isGpuLevel(ForallKind k);

/// The kinds of statements, listed once (as SPL_CIN_EXPR_KINDS):
///   Block      stmts in order
///   Forall     for var in [lo, hi): body
///   Assign     lhs (an Access) = rhs, or lhs op= rhs
///   DeclLocal  local var of type = init (init may be null)
///   SetLocal   local var = value
///   If         if cond then body[0] else body[1] (body[1] may be null)
///   Alloc      allocate temporary tensor for the duration of body[0]
///   Fail       return the error code `code` from the kernel (bad input in --checked mode)
///   Barrier    GPU: every thread of the block waits here (after a level writes shared memory)
#define SPL_CIN_STMT_KINDS(X) X(Block) X(Forall) X(Assign) X(DeclLocal) X(SetLocal) X(If) X(Alloc) X(Fail) X(Barrier)
enum class StmtKind { SPL_CIN_STMT_KINDS(SPL_CIN_ENUMERATOR) };
#undef SPL_CIN_ENUMERATOR

/// A forall over the entries of one segment of a compressed level (a CSR row, a LIL list, a
/// graph's neighbours of a vertex): iteration k is the entry at position `array`@parent + k
/// (offsets), or at sum(q < parent) `array`@q + k when the array holds the segments' lengths (a
/// LIL row). Recognised once, from the loop's extent, by segmentOfExtent; every later stage
/// (schedules, poly, loopir's Flatten and its passes, the CUDA back end) reads this.
struct SegmentLevel {
  NatVarId array;
  bool lengths = false;
  Nat parent;
  /// False for a part of the segment (a position split's chunk of a row: iteration k is still
  /// the entry at offset k of the segment, but the loop runs over a sub-range of it).
  bool whole = true;
};

/// The segment a loop over [lo, hi) runs over: [0, T@(p + 1) - T@p) (offsets) or [0, L@p)
/// (lengths), the extents a compressed level's type gives its entries below parent p.
std::optional<SegmentLevel> segmentOfExtent(const Nat &lo, const Nat &hi);

/// A private copy of an array that a privatize part loop updates, and how the parts' copies
/// combine into the array (+, or min / max, on elements of `type`).
struct PrivateCopy {
  TensorP copy, array;
  Scalar type = Scalar::F64;
  bool isMinMax = false, isMax = false;
};

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  std::vector<StmtP> body;
  // Forall
  int64_t var = 0;
  std::string varName;
  Nat lo, hi;
  ForallKind forall = ForallKind::Serial;
  /// A Parallel forall over the rows of a compressed level: the tensor (a Lookup array) whose
  /// offsets give each row's work, so the rows are split into nonzero-balanced chunks (0: none).
  int64_t balanceBy = 0;
  /// The compressed-level segment this forall runs over (a whole one is kept equal to
  /// segmentOfExtent(lo, hi) by the factory and by every rewrite of the bounds).
  std::optional<SegmentLevel> segment;
  /// Set by a user schedule: the default schedule keeps this forall's kind.
  bool userKind = false;
  /// A user schedule's gpu_rows(i, MAPPING) and where it stands (loopir/GpuRowStrategy
  /// applies it to the grid loop this forall becomes).
  ast::GpuRowMapping rows = ast::GpuRowMapping::Auto;
  /// A schedule's knobs of that mapping (gpu_rows' width, gpu_merge).
  ast::GpuRowKnobs knobs;
  SourceLoc rowsLoc;
  /// Loop hints from a user schedule (vectorise; unroll by a factor, 0 = no hint).
  bool vectorize = false;
  int unroll = 0;
  /// A user schedule's vectorize(i, bits): the registers the loop's vectors take (0: the
  /// target's preference; loopir::Function::preferVectorBits).
  int vectorBits = 0;
  /// SIMD width for LLVM's loop vectoriser (1: keep the loop scalar, as a register tile's loop
  /// over k, whose unrolled inner loops are the vectors; 0: LLVM's choice).
  int vectorWidth = 0;
  /// Partial sums or copies LLVM interleaves (a schedule's scalar(i, s) sets s, 1 by default; 0: LLVM's choice).
  int interleave = 0;
  /// The vectorised loop's last partial vector runs under a mask (LLVM's tail folding), not
  /// as a scalar loop: a lane-split reduce's partial group of lanes (cin/LowerFunctional.cpp).
  bool maskedTail = false;
  /// A schedule's prefetch(i, d): the loop's gathers prefetch what they read d iterations ahead
  /// (loopir/GatherPrefetch.h; 0: none).
  int gatherAhead = 0;
  /// A Parallel forall: about how many innermost iterations one of its iterations runs (every
  /// loop's extent, a triangle's at its bounding box), set by the default schedule; the code
  /// sizes the pool's chunks from it, so that no chunk is too small to repay a thread and a
  /// block of gemm's C may be a chunk alone. Unset: unknown (a compressed row's length), the
  /// pool's default grain.
  std::optional<Nat> iterationWork;
  /// A Parallel forall: how much more work its last iteration does than its first (w(hi - 1) -
  /// w(lo), w as iterationWork's with the loop's variable kept), set by the default schedule
  /// where the two differ (a triangle's rows); positive at run time, the pool hands its chunks
  /// out from the last (spl_parallel_for_from_end), so that the heaviest start first; otherwise
  /// each thread starts from a home of its own, as in a uniform loop (codegen/CodeGenCpu.cpp).
  std::optional<Nat> workGrowth;
  /// A Parallel forall made by a schedule's privatize (poly/Privatize.h): the private copies
  /// its parts update; the first statements of its body, one a copy, set them to their
  /// identity. Read once the schedule ends, to give the parts a version for little work
  /// (poly::serialWhereFewParts).
  std::vector<PrivateCopy> privateCopies;
  // Assign: lhs = value, or with `compound` lhs op= value (op a binary operator, or min/max
  // when isMinMax). An `atomic` compound assignment is one indivisible read-modify-write (a
  // schedule's race strategy): iterations running at once may update the same element.
  ExprP lhs;
  bool compound = false;
  bool atomic = false;
  ast::BinOp op = ast::BinOp::Add;
  bool isMinMax = false, isMax = false;
  // Assign / DeclLocal / SetLocal / If
  ExprP value;
  // DeclLocal / SetLocal
  int64_t local = 0;
  std::string localName;
  Scalar type = Scalar::I64;
  // Alloc
  TensorP tensor;
  // Fail
  int code = 0;
  // If: its two branches are versions of the whole kernel's statements after it began (a
  // schedule's specialize, poly/UserSchedule), which cin/InPlace writes in place one by one.
  bool versions = false;
};

StmtP block(std::vector<StmtP> stmts);
StmtP forall(int64_t var, std::string name, Nat lo, Nat hi, StmtP body, ForallKind kind, SourceLoc loc = {});
StmtP assign(ExprP lhs, ExprP rhs);
StmtP declLocal(int64_t id, std::string name, Scalar t, ExprP init);
StmtP setLocal(int64_t id, ExprP v, Scalar t);
StmtP ifThen(ExprP cond, StmtP then, StmtP otherwise = nullptr);
StmtP allocTemp(TensorP t, StmtP body);
/// `fail code`: the kernel returns `code` (1 = SPL_ERR_BAD_INPUT, a --checked validation).
StmtP failWith(int code, SourceLoc loc = {});

/// One parameter of the kernel's C function, linked to the tensor or nat it carries.
struct KernelParam {
  tir::AbiParam abi;
  TensorP tensor;     // Buffer/Packed/Out*/Nats: the tensor this pointer belongs to
  int64_t natVar = 0; // Nat: the nat variable id it binds; OutNat: the id of the nat written
};

struct Kernel {
  std::string name;  // C symbol
  bool cuda = false;
  bool sizeFunction = false;  // NAME_size: computes the output sizes only
  std::vector<KernelParam> params;
  std::vector<TensorP> tensors;  // every tensor of the kernel (params first)
  StmtP body;
  /// For dependent-pair results: the element count of each output pointer, in ABI order
  /// (computed by NAME_size).
  std::vector<Nat> outputSizes;
  SourceLoc loc;
  /// The let-bound arrays computed into temporaries for `precompute` (their names).
  std::set<std::string> precomputed;
  /// Set by a schedule's plan() (poly/UserSchedule, once the kernel is recognised as a CSR
  /// SpMV): the object also defines NAME_plan and NAME_run (docs/plans.md).
  bool planned = false;
  /// For a planned kernel: its parameter carrying each argument of the runtime's CSR kernel
  /// type, in that type's order (n, m, offs, cols, vals, x, out; cin/SpmvPattern.h).
  std::vector<int> planParams;
  /// For a planned kernel: it computes y = A^T x (the runtime's transposed plan).
  bool planTransposed = false;
  /// For a planned kernel: it computes C = A B, B dense of k columns (the runtime's SpMM plan);
  /// planParams then follow that kernel type (n, m, k, offs, vals, cols, B, out).
  bool planSpmm = false;
  /// A kernel the object needs but does not export (a plan's candidates): internal linkage, no
  /// prototype in the header.
  bool internal = false;
  /// A schedule's fp_contract(off) clears it: no multiply-adds in this kernel (loopir::Function).
  bool fpContract = true;
  /// A schedule's fp_reassoc(off) clears it: each sum in its loops' order (loopir::Function).
  bool fpReassoc = true;
  /// `with result in x`: the result tensor (no parameter of its own) and, per leaf of it, the
  /// input it is written into; cin/InPlace.h rewrites the body so that it writes there.
  TensorP resultTensor;
  std::vector<std::pair<std::vector<int>, TensorP>> resultInto;
  /// Non-empty when cin/InPlace could not show the direct write (why): the result tensor is
  /// then a temporary, copied into the inputs at the end.
  std::string inPlaceStaged;
};

/// The walks of CIN (support/IrWalk.h, shared with the loop IR): does `pred` hold for `s` (or
/// `e`) or a statement (expression) below it, in pre-order (null: no)? Statements only, not
/// their expressions.
bool anyStmt(const StmtP &s, const std::function<bool(const Stmt &)> &pred);
bool anyExpr(const ExprP &e, const std::function<bool(const Expr &)> &pred);
/// `fn` on `s` and every statement below it, in pre-order.
void forEachStmt(const StmtP &s, const std::function<void(const StmtP &)> &fn);
/// Does `e` itself (not its operands) mention `id` (a nat variable, a local or a tensor) in a
/// Nat: one of its indices or its nat value?
bool natMentions(const Expr &e, int64_t id);
/// Does `e` read tensor `t` (an access of it, or its values in a Nat below e)?
bool readsTensor(const ExprP &e, int64_t t);
/// Are `a` and `b` accesses of one element (tensor, leaf and indices)?
bool sameElement(const ExprP &a, const ExprP &b);
/// An update's value `self op e` (or `e op self`), op `+`, `min` or `max`, self an operand for
/// which `isSelf` holds: its op and e. The race strategies (atomics, privatize) recognise the
/// updates they may run in another order by it.
struct UpdateForm {
  bool isMinMax = false, isMax = false;
  ExprP operand;
};
std::optional<UpdateForm> updateForm(const ExprP &value, const std::function<bool(const ExprP &)> &isSelf);
/// The first forall at or below `s` for which `pred` holds, or null.
const Stmt *findForall(const StmtP &s, const std::function<bool(const Stmt &)> &pred);

/// Substitutes Nats everywhere in a statement (bounds, indices, nat expressions).
StmtP substitute(const StmtP &s, const NatSubst &sub);
ExprP substitute(const ExprP &e, const NatSubst &sub);

std::string print(const Kernel &k);
std::string print(const ExprP &e);
std::string print(const Expr &e);
std::string print(const StmtP &s, int indent = 0);
/// A statement as a diagnostic quotes it: printed without the indentation around it and the
/// final newline.
std::string quoted(const StmtP &s);
Scalar scalarOf(const TypeP &t);  // idx -> i64

}  // namespace spl::cin
