/// \file Ast.h: the abstract syntax of SPL, as written.
/// Takes:      nothing (built by parse/AstBuilder from the ANTLR parse tree).
/// Gives:      a Module per file: imports, type aliases, defs, exports, tunables, schedules.
/// Guarantees: every node has a valid SourceLoc; names are unresolved strings; no types are
///             inferred here. Sugar is kept (pipes, curried calls, operator sections) so that
///             `--emit=ast` shows the program as the user wrote it; check/Checker removes it.
///
/// Three syntactic categories mirror the three kinds of the language: NatSyn (type-level
/// naturals), TypeSyn (data types) and Expr (values). Nodes are immutable and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/Source.h"

namespace spl::ast {

enum class Kind { Nat, Nats, Data };
const char *kindName(Kind k);

struct Expr;
struct NatSyn;
struct TypeSyn;
struct Pattern;
struct EinsumSyn;
using ExprP = std::shared_ptr<const Expr>;
using NatSynP = std::shared_ptr<const NatSyn>;
using TypeSynP = std::shared_ptr<const TypeSyn>;
using PatternP = std::shared_ptr<const Pattern>;
using EinsumSynP = std::shared_ptr<const EinsumSyn>;

// ---- Type-level naturals ----------------------------------------------------------------------

enum class NatOp {
  Lit,     // value
  Var,     // name
  Lookup,  // name @ args[0]
  ToNat,   // toNat(expr)
  Call,    // name(args...): min, max
  Add, Sub, Mul, Div, Mod,        // args[0] op args[1]
  Eq, Ne, Lt, Le, Gt, Ge,         // comparisons (conditions of Cond)
  And, Or, Not,                   // boolean connectives on comparisons
  Cond,    // args[0] ? args[1] : args[2]
  Sum,     // sum(name = args[0] .. args[1]) args[2]
};

struct NatSyn {
  NatOp op;
  SourceLoc loc;
  int64_t value = 0;
  std::string name;
  std::vector<NatSynP> args;
  ExprP expr;  // ToNat
};

// ---- Data types -------------------------------------------------------------------------------

/// An alias or export argument: a nat or a type. A bare name parses as a type (Named without
/// arguments); the checker reads it as a nat variable when the parameter's kind is nat.
struct TypeArgSyn {
  TypeSynP type;
  NatSynP nat;
  SourceLoc loc;
};

enum class TypeOp {
  Named,     // name[args]: scalars (f32, ..., idx[N]), aliases, data parameters
  Array,     // len . elems[0]
  DepArray,  // len .. (name => elems[0])
  Packed,    // packed len . elems[0]
  Tuple,     // (elems...)
  DepPair,   // (name : pairKind ** elems[0])
};

struct TypeSyn {
  TypeOp op;
  SourceLoc loc;
  std::string name;
  Kind pairKind = Kind::Nat;
  NatSynP len;
  std::vector<TypeArgSyn> args;
  std::vector<TypeSynP> elems;
};

// ---- Expressions ------------------------------------------------------------------------------

enum class BinOp { Add, Sub, Mul, Div, Mod, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
/// Unary operators: `-x`, `!x`, and the math functions written as calls, `sqrt(x)` (f32, f64)
/// and `abs(x)` (any number).
enum class UnOp { Neg, Not, Sqrt, Abs };
const char *binOpToken(BinOp op);
/// "-", "!", "sqrt", "abs"; the first two are prefixes, the others are printed as calls.
const char *unOpToken(UnOp op);
inline bool isPrefixOp(UnOp op) { return op == UnOp::Neg || op == UnOp::Not; }

enum class ExprOp {
  IntLit,    // ival (text keeps the digits)
  FloatLit,  // fval
  BoolLit,   // bval
  Var,       // text
  Call,      // kids[0](kids[1..]) : one application with its argument list
  Index,     // kids[0] @ kids[1]
  Proj,      // kids[0] . proj
  Unary,     // unop kids[0]
  Binary,    // kids[0] binop kids[1]
  Pipe,      // kids[0] |> kids[1]
  Annot,     // kids[0] : type
  Lambda,    // pattern => kids[0]
  Let,       // let pattern = kids[0]; kids[1]
  If,        // if kids[0] then kids[1] else kids[2]
  Tuple,     // (kids...)
  OpFunc,    // an operator passed as a function: reduce(+, 0)
  Einsum,    // einsum
};

struct Expr {
  ExprOp op;
  SourceLoc loc;
  std::string text;
  int64_t ival = 0;
  double fval = 0;
  bool bval = false;
  int proj = 0;
  BinOp binop = BinOp::Add;
  UnOp unop = UnOp::Neg;
  std::vector<ExprP> kids;
  PatternP pattern;
  TypeSynP type;
  EinsumSynP einsum;
};

struct Pattern {
  SourceLoc loc;
  bool isTuple = false;
  std::string name;
  std::vector<PatternP> elems;
};

/// einsum Out[i, j] = rhs, in taco's tensor index notation.
struct EinsumIndex {
  std::string name;
  SourceLoc loc;
};
enum class EinOp { Access, Lit, Neg, Add, Sub, Mul, Div };
struct EinsumSyn {
  EinOp op;
  SourceLoc loc;
  std::string tensor;                 // Access
  std::vector<EinsumIndex> indices;   // Access
  ExprP literal;                      // Lit
  std::vector<EinsumSynP> kids;       // Neg: 1, binary: 2
  // Only on the root statement node (op == Access describing the output):
  EinsumSynP rhs;
};

// ---- Declarations -----------------------------------------------------------------------------

struct Param {
  std::string name;
  SourceLoc loc;
  bool implicit = false;
  bool isKind = false;  // {n: nat}, (ks: nats), {T: data}
  Kind kind = Kind::Data;
  TypeSynP type;        // when !isKind: a value parameter of this type
};

struct DefDecl {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  TypeSynP ret;  // may be null (inferred)
  ExprP body;
};

struct KindedName {
  std::string name;
  Kind kind;
  SourceLoc loc;
};

struct TypeDecl {
  std::string name;
  SourceLoc loc;
  std::vector<KindedName> params;
  TypeSynP body;
};

struct ExportArg {
  std::string name;
  TypeArgSyn value;
  SourceLoc loc;
};

struct ExportTarget {
  std::string name;
  SourceLoc loc;
};

/// `x: inc(incx)` in an export's `with`: array parameter `param` is stored as `view` says
/// (inc, colmajor, rowmajor), with a run-time stride passed as the C parameter `stride`.
struct ExportView {
  std::string param;
  SourceLoc loc;
  std::string view;
  SourceLoc viewLoc;
  std::string stride;
  SourceLoc strideLoc;
};

struct ExportDecl {
  std::string def;
  SourceLoc loc;
  std::vector<ExportArg> args;
  std::string cname;
  SourceLoc cnameLoc;
  std::vector<ExportTarget> targets;  // empty: none named (defaults to cpu)
  std::vector<ExportView> views;      // `with x: inc(incx), ...`
  /// `with result in y` / `result in (x, y)`: the array parameters the result's parts are
  /// written into, in place (empty: the result has output pointers of its own).
  std::vector<ExportTarget> resultIn;
  SourceLoc resultInLoc;
};

struct TunableDecl {
  std::string name;
  SourceLoc loc;
  NatSynP init;
  std::vector<NatSynP> choices;   // in [a, b, c]
  NatSynP lo, hi;                 // in lo .. hi
};

/// How a GPU grid loop over rows puts its rows on threads (loopir/GpuRowStrategy chooses, a
/// schedule's gpu_rows(i, MAPPING) asks; codegen/CodeGenCuda.cpp emits): a thread a row; a
/// vector of lanes a row (the width from the rows' lengths); a merge path over row ends and
/// nonzeros (equal work per lane whatever the row lengths); a warp compacting a row's passing
/// candidates in order. Auto: not chosen yet.
enum class GpuRowMapping { Auto, Thread, Vector, Merge, Compact };
/// "auto", "thread", "vector", "merge", "compact"; and back (false for another word).
const char *gpuRowMappingName(GpuRowMapping m);
bool gpuRowMappingFromName(const std::string &name, GpuRowMapping &out);

/// A schedule's knobs of a grid loop's row mapping, 0 where the compiler chooses:
/// gpu_rows(i, vector, W) gives `lanes`, gpu_merge(i, R[, B]) `mergeReads` (the nonzeros of a
/// row each lane of the merge path reads at once) and `mergeBlocksPerSm` (the blocks run on
/// each multiprocessor, which ptxas keeps registers for), asked at `mergeLoc`.
struct GpuRowKnobs {
  int lanes = 0;
  int mergeReads = 0;
  int mergeBlocksPerSm = 0;
  SourceLoc mergeLoc;
  bool merge() const { return mergeReads > 0 || mergeBlocksPerSm > 0; }
  /// " lanes=4", " merge_reads=8 blocks_per_sm=4" (--emit=cin and --emit=loopir).
  std::string str() const;
  /// The knobs two loops agree on (fuse keeps what both asked).
  GpuRowKnobs common(const GpuRowKnobs &o) const;
};

struct ScheduleCmd {
  std::string name;
  SourceLoc loc;
  std::vector<ExprP> args;
  /// `NAME(args) { ... }` (specialize's form): the block's commands; `hasBlock` tells an empty
  /// block from none (`;`).
  bool hasBlock = false;
  std::vector<ScheduleCmd> block;
};

/// `schedule a, b for T { ... }`: the commands for each of the names (exports or defs).
struct ScheduleDecl {
  struct Name {
    std::string text;
    SourceLoc loc;
  };
  std::vector<Name> names;
  std::string target;
  SourceLoc loc;  // the first name's
  SourceLoc targetLoc;
  std::vector<ScheduleCmd> cmds;
};

struct ImportDecl {
  std::vector<std::string> path;  // import a.b; -> {"a", "b"}
  SourceLoc loc;
};

enum class DeclKind { Import, Type, Def, Export, Tunable, Schedule };

struct Module {
  uint32_t file = 0;
  /// Source order of the declarations: (kind, index into that kind's vector).
  std::vector<std::pair<DeclKind, size_t>> order;
  std::string path;
  std::vector<ImportDecl> imports;
  std::vector<std::shared_ptr<TypeDecl>> types;
  std::vector<std::shared_ptr<DefDecl>> defs;
  std::vector<ExportDecl> exports;
  std::vector<TunableDecl> tunables;
  std::vector<ScheduleDecl> schedules;
};

}  // namespace spl::ast
