/// \file LoopIr.h: the loop IR, the last stage before LLVM.
/// Takes:      nothing (built by loopir/Flatten from concrete index notation).
/// Gives:      Functions over flat buffers: typed loads and stores at element offsets, scalar
///             variables, counted loops with a parallel/vector/reduction hint, guards,
///             temporary allocation and the runtime calls (Sigma precomputation); in cuda
///             functions also kernels whose body is one thread's work (GpuKernel), the
///             thread's place (GpuIndex), shuffles (WarpShuffle), votes (WarpVote) and warp
///             reductions (WarpReduce), memory fences (Fence) and arrival counters (Arrive),
///             so that a GPU strategy is a loop-IR pass and codegen only emits.
/// Guarantees: every expression is typed (i1, i32, i64, f32, f64); loads and stores name a
///             buffer and an i64 element index; variables are declared before use in an
///             enclosing block; a Select evaluates only the chosen arm, && and || short-circuit.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ast/Ast.h"
#include "support/Source.h"

namespace spl::loopir {

enum class Ty { I1, I32, I64, F32, F64 };
const char *tyName(Ty t);
bool isFloatTy(Ty t);
int tyBytes(Ty t);

/// A buffer: a pointer parameter, or a temporary allocated by the function.
struct Buffer {
  int id = 0;
  std::string name;
  Ty elem = Ty::F32;              // element type (for a struct buffer: unused)
  std::vector<Ty> fields;         // a packed struct buffer: the field types in order
  bool isParam = false;
  bool isOutput = false;          // written by the function
  bool shared = false;            // GPU: in a block's shared memory (statically sized)
  int paramIndex = -1;            // position among the C parameters
  /// A kernel's workspace (GPU): not a C parameter and never allocated by an Alloc; the host
  /// gives the one GpuKernel that uses it `perWarp` elements for each warp of its grid at each
  /// launch (a resident grid: the host knows the warps only then). 0: not such a buffer.
  int64_t perWarp = 0;
  /// A workspace of arrival counters (Arrive): i64 words the runtime keeps tagged with the
  /// call's epoch (spl_cuda_call_counters), so that a word from an earlier call counts 0 and
  /// nothing clears them between calls.
  bool arrivals = false;
};

struct Expr;
using ExprP = std::shared_ptr<const Expr>;
/// The kinds of expressions and of statements, listed once: the enums, loopir/Visitor.h's
/// visitor and mutator (a method per kind) and the kinds' names are expanded from these lists.
#define SPL_LOOPIR_EXPR_KINDS(X) \
  X(Const) X(Var) X(Load) X(Unary) X(Binary) X(Select) X(Cast) X(MinMax) X(GpuIndex) X(WarpShuffle) X(WarpVote) \
  X(AlignGap)
#define SPL_LOOPIR_STMT_KINDS(X)                                                                                      \
  X(Block) X(For) X(Store) X(Decl) X(Assign) X(If) X(Alloc) X(Free) X(SigmaPrefix) X(Return) X(Barrier) X(Prefetch) \
  X(WarpReduce) X(GpuKernel) X(While) X(Fence) X(Arrive)
#define SPL_LOOPIR_ENUMERATOR(K) K,
enum class ExprKind { SPL_LOOPIR_EXPR_KINDS(SPL_LOOPIR_ENUMERATOR) };
/// GpuIndex (i64, GPU code only): where the thread runs, CUDA's threadIdx.x, blockIdx.x,
/// blockDim.x and gridDim.x.
enum class GpuIndexKind { ThreadX, BlockX, BlockDimX, GridDimX };
const char *gpuIndexName(GpuIndexKind k);
/// WarpShuffle (GPU code only), args {value, lane, width}: the lanes of a warp in groups of
/// `width` (a power of two, at most 32, the same on every lane of the warp) exchange `value`;
/// Down gives the value of lane this + `lane` when that lane is in this lane's group (else this
/// lane's own), Index the value of lane `lane` of the group. Every lane of the warp evaluates it
/// together, so it may not sit under a condition that differs between the warp's lanes.
enum class ShuffleKind { Down, Index };
/// WarpVote (i64, GPU code only), args {predicate (i1), width}: of the lanes in this lane's
/// group of `width` (as WarpShuffle) whose predicate holds, how many come before this lane
/// (Before) or how many there are (Count). Every lane of the warp evaluates it together.
enum class VoteKind { Before, Count };
/// AlignGap (i64), args {index}, on `buffer` (not a struct buffer) with `ival` a power of two
/// of bytes: how many elements lie from buffer[index] to the first element at an address that
/// is a multiple of `ival` bytes (0 when buffer[index] is one; below ival / the element's
/// size, as elements are aligned to their size). Nothing is read: the address is computed, so
/// the index may lie past the buffer (loopir/AlignStreams: a loop's scalar head).
enum class BinOp {
  Add, Sub, Mul, Div, Rem, FloorDiv, ExactDiv,   // Div/Rem truncate (C); FloorDiv rounds down
  Eq, Ne, Lt, Le, Gt, Ge,
  And, Or,                                     // short-circuit on i1
};
const char *binOpName(BinOp op);

struct Expr {
  ExprKind kind;
  Ty type = Ty::I64;
  int64_t ival = 0;             // Const; AlignGap: the alignment in bytes
  double fval = 0;
  int var = 0;                  // Var
  int buffer = 0;               // Load, AlignGap
  int field = -1;               // Load from a struct buffer
  ast::UnOp unop = ast::UnOp::Neg;
  BinOp binop = BinOp::Add;
  bool reassoc = false;         // Binary: fast-math reassociation allowed (a reduce)
  bool isMax = false;
  bool neverNan = false;        // MinMax (float): neither operand is ever NaN (loopir/MinMaxReductions)
  bool isVolatile = false;      // Load: read from memory where it stands (another thread writes it meanwhile)
  GpuIndexKind gpuIndex = GpuIndexKind::ThreadX;  // GpuIndex
  ShuffleKind shuffle = ShuffleKind::Down;        // WarpShuffle
  VoteKind vote = VoteKind::Before;               // WarpVote
  std::vector<ExprP> args;      // Load: {index}; WarpShuffle: {value, lane, width}; others: operands
};

ExprP cInt(int64_t v, Ty t = Ty::I64);
ExprP cFloat(double v, Ty t);
ExprP var(int id, Ty t);
ExprP load(int buffer, ExprP index, Ty t, int field = -1);
/// A load that is neither cached nor moved: the value another thread stored before a Fence
/// this thread has passed (a merge path's carries).
ExprP loadVolatile(int buffer, ExprP index, Ty t);
ExprP un(ast::UnOp op, ExprP a);
ExprP bin(BinOp op, ExprP a, ExprP b, bool reassoc = false);
ExprP sel(ExprP c, ExprP a, ExprP b);
ExprP cast(ExprP a, Ty t);
ExprP mm(bool isMax, ExprP a, ExprP b);
ExprP gpuIndex(GpuIndexKind k);
ExprP warpShuffle(ShuffleKind k, ExprP value, ExprP lane, ExprP width);
ExprP warpVote(VoteKind k, ExprP predicate, ExprP width);
ExprP alignGap(int buffer, ExprP index, int64_t bytes);
/// `e` with every use of variable `v` replaced by `by` (subtrees without `v` stay shared).
ExprP substituteVar(const ExprP &e, int v, const ExprP &by);

struct Stmt;
using StmtP = std::shared_ptr<const Stmt>;
/// Prefetch: a hint that buffer[a] will be read soon (no effect on results; the index may lie
/// past the buffer's end).
/// WarpReduce (GPU code only): the lanes of a warp in groups of `a` lanes (a power of two, at
/// most 32, the same on every lane of the warp) combine variable `var` by `b`, an expression of
/// `var` and of `partner` (a variable the node binds: another lane's value), as a tree of
/// shuffles; afterwards the group's first lane holds the combination of the group's values.
/// Every lane of the warp runs it together (as WarpShuffle).
/// GpuKernel (a cuda function's top level): body[0] runs once on each thread of a grid of at
/// least `a` threads (i64, free of loads: the host evaluates it; capped at 65535 blocks, so
/// the body strides over the grid itself) in blocks of `b` threads (a constant); with `a`
/// null, of as many blocks as the device holds at once (a resident grid: every block runs
/// while any does, so blocks may count each other's arrivals), and ptxas keeps registers for
/// knobs.mergeBlocksPerSm blocks a multiprocessor when it is set. `name` and `rows` say which
/// row loop and mapping it came from (loopir/GpuWarpRows, loopir/GpuMergeRows).
/// While: body[0] runs while `a` (i1, evaluated before each round) holds.
/// Fence (GPU code only): the thread's memory operations before it are seen by every thread of
/// the device before those after it (a sequentially consistent fence of device scope).
/// Arrive (GPU code only): counts this thread's arrival on word `a` of `buffer` (an arrivals
/// workspace, see Buffer::arrivals) and assigns to `var` (an i64 variable) the arrivals on that
/// word in this call so far, this one included.
enum class StmtKind { SPL_LOOPIR_STMT_KINDS(SPL_LOOPIR_ENUMERATOR) };
#undef SPL_LOOPIR_ENUMERATOR
/// Serial/Reduction run in order (a Reduction may reassociate); Parallel runs on the CPU pool;
/// the Gpu kinds map a loop onto the GPU's hierarchy (Global: one thread per iteration over
/// the whole grid; Block/Thread: successive grid and block dimensions, innermost = x;
/// Warp/Lane: warps of a block and lanes of a warp).
enum class LoopKind { Serial, Parallel, Vector, Reduction, GpuGlobal, GpuBlock, GpuThread, GpuWarp, GpuLane };
/// A Store that is one indivisible read-modify-write: buffer[index] = buffer[index] op value.
enum class AtomicOp { None, Add, Min, Max };
const char *atomicOpName(AtomicOp op);

/// A For over the entries of one segment of a compressed level (a CSR row, a LIL list, a
/// graph's neighbours of a vertex), from cin::SegmentLevel through Flatten, the one place that
/// recognises it: iteration k of the loop reads position offsets[parent] - offsets[0] + k, or
/// offsets[parent] + k when `fromZero` (the Sigma prefix of a LIL row's lengths). `lengths` is
/// the buffer of the segments' lengths when the level stores lengths (offsets: their prefix, or
/// -1 when the function computes none).
struct Segment {
  ExprP parent;      // null: the loop runs over no segment
  int offsets = -1;
  bool fromZero = false;
  int lengths = -1;
  bool whole = true;  // false: the loop runs over a sub-range of the segment's offsets
  explicit operator bool() const { return parent != nullptr; }
  /// Is this the whole segment below row `rowVar` (a loop variable), with offsets to read?
  bool ofRow(int rowVar) const;
};

struct Stmt {
  StmtKind kind;
  std::vector<StmtP> body;   // Block: statements; For: {body}; If: {then, else (may be null)}
  int var = 0;               // For: loop variable; Decl/Assign/Arrive: variable
  std::string name;
  Ty type = Ty::I64;         // Decl
  ExprP a, b;                // For: lo, hi; Store: index, value; Decl/Assign: value (Decl may be null)
                             // If: condition in a; Alloc: element count in a; SigmaPrefix: count in a;
                             // Prefetch: index in a; While: condition in a; Arrive: word in a
  int buffer = 0;            // Store, Alloc, Free, SigmaPrefix (destination), Prefetch, Arrive
  int source = 0;            // SigmaPrefix: the lengths buffer
  int partner = 0;           // WarpReduce: the variable bound to another lane's value
  ExprP step;                // For: the increment, positive (null: 1)
  int field = -1;            // Store to a struct buffer
  AtomicOp atomic = AtomicOp::None;  // Store: an atomic update by `b` (a schedule's race strategy)
  LoopKind loop = LoopKind::Serial;
  int code = 0;              // Return
  /// For a Parallel loop over rows of a compressed level: the offsets buffer whose nonzero
  /// counts balance the chunks (-1: equal chunks).
  int balanceBy = -1;
  Segment segment;           // For: the compressed-level segment it runs over, if any
  /// A cuda function's grid loop: how its rows go on threads (Auto until loopir/GpuRowStrategy
  /// chooses; a user schedule's choice arrives from Flatten, asked at rowsLoc).
  ast::GpuRowMapping rows = ast::GpuRowMapping::Auto;
  SourceLoc rowsLoc;
  ast::GpuRowKnobs knobs;    // a schedule's knobs of the mapping (gpu_rows' width, gpu_merge)
  bool vectorize = false;    // For: a user's SIMD hint
  bool userKind = false;     // For: the kind was chosen by a user schedule (keep it as is)
  int unroll = 0;            // For: a user's unroll factor
  /// Parallel: about how many innermost iterations one iteration runs (cin::Stmt's), or null.
  ExprP iterationWork;
  /// Parallel: how much more work its last iteration does than its first (cin::Stmt's), or null.
  ExprP workGrowth;
  int vectorWidth = 0;       // For: SIMD width to use (1: keep scalar; 0: LLVM's choice)
  int interleave = 0;        // For: partial sums / copies to interleave (0: LLVM's choice)
  int gatherAhead = 0;       // For: a schedule's prefetch(k, d): d (loopir/GatherPrefetch; 0: none)
  /// For, vectorised: the last partial vector runs under a mask (LLVM's tail folding) instead
  /// of a scalar remainder loop, so a short trip count does not end in a mispredicted scalar loop.
  bool maskedTail = false;
  /// If: the condition seldom holds, or its body is long when it does: codegen lays the body
  /// out of the fall-through path (`if seldom` in --emit=loopir; loopir/AlignStreams's heads).
  bool seldom = false;
  /// Prefetch: how long the line should stay in the caches, as LLVM's locality: 0 non-temporal
  /// (prefetchnta) to 3 (prefetcht0).
  int locality = 0;
};

StmtP block(std::vector<StmtP> s);
StmtP forLoop(int var, std::string name, ExprP lo, ExprP hi, StmtP body, LoopKind k);
StmtP store(int buffer, ExprP index, ExprP value, int field = -1);
StmtP atomicUpdate(int buffer, ExprP index, AtomicOp op, ExprP value);
StmtP decl(int var, std::string name, Ty t, ExprP init);
StmtP assignVar(int var, ExprP value);
StmtP ifThen(ExprP c, StmtP then, StmtP otherwise = nullptr);
StmtP prefetch(int buffer, ExprP index, int field = -1, int locality = 0);
/// A temporary buffer of `count` elements, and its release.
StmtP allocBuffer(int buffer, ExprP count);
StmtP freeBuffer(int buffer);
/// The Sigma precomputation: prefix[0] = 0, prefix[i + 1] = prefix[i] + lengths[i] for i < n.
StmtP sigmaPrefix(int prefix, int lengths, ExprP n);
/// var = combine(var, partner) over groups of `width` lanes (StmtKind::WarpReduce).
StmtP warpReduce(int var, int partner, ExprP width, ExprP combine);
/// A kernel of at least `threads` threads (null: a resident grid) in blocks of `block`
/// (StmtKind::GpuKernel).
StmtP gpuKernel(std::string name, ast::GpuRowMapping rows, ExprP threads, int64_t block, StmtP body);
StmtP whileLoop(ExprP condition, StmtP body);
StmtP fence();
/// var = the arrivals on counters[word] so far, this one included (StmtKind::Arrive).
StmtP arrive(int var, int counters, ExprP word);
/// for var in [lo, hi) by `step` (a positive increment).
StmtP steppedLoop(int var, std::string name, ExprP lo, ExprP hi, ExprP step, StmtP body);

/// Does `pred` hold for `e` or one of its subexpressions (null: no)?
bool anyExpr(const ExprP &e, const std::function<bool(const Expr &)> &pred);
/// Does `pred` hold for `s` or a statement nested in it (null: no)? Statements only, not their
/// expressions.
bool anyStmt(const StmtP &s, const std::function<bool(const Stmt &)> &pred);
/// A load anywhere in `e`.
inline bool hasLoad(const ExprP &e) {
  return anyExpr(e, [](const Expr &x) { return x.kind == ExprKind::Load; });
}

/// The largest value an integer expression of non-negative terms can take, when that is a
/// constant (thread extents, shared-memory and stack sizes must be known at compile time;
/// loopir/AlignStreams's short loops): min(a, 4) <= 4, and so on.
std::optional<int64_t> constUpper(const ExprP &e);

/// Are `a` and `b` the same expression, node for node (null only equal to null)?
bool sameExpr(const ExprP &a, const ExprP &b);

/// Does `e` (or a statement in `s`: its expressions, a loop over `v`, an assignment to it)
/// mention variable `v`?
bool mentionsVar(const ExprP &e, int v);
bool mentionsVar(const StmtP &s, int v);

/// `index` as base + v, base free of v (a unit-stride stream in loop variable v): the base
/// (null for 0) in `base`, or false.
bool unitStride(const ExprP &index, int v, ExprP &base);

/// The loop IR's mutator: `s` with `rewrite` applied to every statement, children first (the
/// statement `rewrite` sees already holds its rewritten children; subtrees it leaves as they
/// are stay shared, not copied).
StmtP rewriteBottomUp(const StmtP &s, const std::function<StmtP(const StmtP &)> &rewrite);
/// `s` with every use of variable `v` in its expressions replaced by `by` (substituteVar on
/// each statement's expressions; what binds or assigns `v` is left as it is).
StmtP substituteVar(const StmtP &s, int v, const ExprP &by);

struct Function;
/// Replaces each top-level statement of `f` (its body's statements, or the body itself when it
/// is not a block) by `rewrite` of it: where a cuda function's kernels are (a grid loop or a
/// GpuKernel is a top-level statement).
void rewriteTopLevel(Function &f, const std::function<StmtP(const StmtP &)> &rewrite);

/// A scalar parameter of the C function (nats counts, nats as int64_t, scalars by value).
struct ScalarParam {
  int var = 0;
  std::string name;
  Ty type = Ty::I64;
  int paramIndex = -1;
};

struct Function {
  std::string name;
  bool cuda = false;
  bool internal = false;  // needed by the object, not exported (a plan's candidates)
  /// The width in bits of the registers its vectors take on the CPU, where LLVM's default is
  /// 256 bits (0: that default): 512 where the kernel holds a register tile
  /// (cin::Tensor::registerTile), else the widest a schedule's vectorize(i, bits) asked for.
  int preferVectorBits = 0;
  /// False where the kernel's schedule said fp_contract(off): codegen fuses no product into a
  /// sum here, whatever --fp-contract asks of the others.
  bool fpContract = true;
  /// False where it said fp_reassoc(off): codegen gives no sum LLVM's reassociation, nor a
  /// reduction loop a vectorize hint (a forced width lets LLVM reorder a sum without the flag).
  bool fpReassoc = true;
  /// True where loopir/PartialSums wrote a scalar loop's partial sums as copies of its body:
  /// LLVM's SLP vectoriser must not gather the copies' strided loads into one vector (codegen
  /// marks the function kNoGathersAttribute).
  bool noGathers = false;
  int numParams = 0;
  std::vector<ScalarParam> scalars;
  std::vector<Buffer> buffers;
  StmtP body;
  SourceLoc loc;
  const Buffer *buffer(int id) const;
  /// Ids no variable (parameters, declarations, loops, uses) and no buffer of the function has
  /// yet: a pass that adds variables or buffers counts up from them.
  int freshVarId() const;
  int freshBufferId() const;
};

/// A plan's entry points (schedule command plan(), docs/plans.md): NAME_plan inspects a CSR
/// matrix once and chooses among the kernels named here, NAME_run runs the choice. Codegen
/// emits them as calls of the runtime's spl_spmv_plan_* and spl_spmv_run_* with a constant
/// table of the kernels.
struct PlanEntry {
  std::string name;                    // the export's C name
  bool f64 = true;                     // else f32
  std::string csr;                     // the export's own kernel
  /// stdlib's CSR kernel with each row one plain scalar loop (schedule scalar(k)): short rows
  /// run it faster than any versions of the row loop (csr_short of spl_runtime.h's tables).
  std::string csrShort;
  /// The same with two partial sums a row (scalar(k, 2)): rows of 50 to 100 entries (csr_two_sums).
  std::string csrTwoSums;
  /// The kernel of short rows with its gathers prefetched (prefetch(k, 128)): x beyond the L2 (csr_prefetch).
  std::string csrPrefetch;
  std::string sellNarrow, sellWide;    // SELL-C-sigma row kernels of the two windows
  int64_t lanes = 0;                   // C
  int64_t narrowRows = 0, wideRows = 0;  // the windows, in rows
  std::string dia;                     // the DIA kernel
  /// BCSR kernels and their block sizes (at most SPL_PLAN_BLOCK_SIZES of spl_runtime.h: 4).
  std::vector<std::pair<int64_t, std::string>> bcsr;
  /// y = A^T x: csr is the export's transposed kernel, gather a CSR SpMV the runtime runs over
  /// A's transpose (spl_spmv_t_plan_*); the SELL, DIA and BCSR fields are the candidates of the
  /// transposed copy's own plan.
  bool transposed = false;
  std::string gather;
  /// C = A B (spl_spmm_plan_*): csr is the export's kernel of any width; each width's CSR kernel
  /// and BCSR kernels (at most SPL_SPMM_WIDTHS of spl_runtime.h: 16); the SELL and DIA fields
  /// are unused; paramOf follows the SpMM kernel type (n, m, k, offs, vals, cols, B, out).
  bool spmm = false;
  struct Width {
    int64_t width = 0;
    std::string csr;
    std::vector<std::pair<int64_t, std::string>> bcsr;
  };
  std::vector<Width> widths;
  /// The export's parameter carrying each argument of the runtime's CSR kernel type (n, m,
  /// offs, cols, vals, x, out; an SpMM's above): NAME_plan takes the export's parameters but x and out in the
  /// export's order, and where that order is not the type's, the table holds an adapter.
  std::vector<int> paramOf;
};

struct Module {
  std::vector<Function> functions;
  std::vector<PlanEntry> plans;
};

std::string print(const Function &f);
std::string print(const PlanEntry &p);
std::string print(const ExprP &e);
std::string print(const Expr &e);

}  // namespace spl::loopir
