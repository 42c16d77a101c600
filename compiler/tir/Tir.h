/// \file Tir.h: the typed IR, the output of type checking.
/// Takes:      nothing (built by check/Checker).
/// Gives:      Programs of Defs whose bodies are typed expression trees.
/// Guarantees: every node has a type with no unsolved metas (after the checker's final pass);
///             every name is resolved to a unique variable; pipes, curried applications and
///             operator sections are gone (an application lists all its arguments); lambdas
///             bind plain variables (tuple patterns became `let`s of projections); map's
///             function is always positional (`i => x => e`); literals carry their final type.
/// Calls of user defs are kept (CallDef) with their resolved implicit arguments; the middle end
/// inlines them.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ast/Ast.h"
#include "support/Source.h"
#include "tir/ScheduleCommand.h"
#include "types/Nat.h"
#include "types/Type.h"

namespace spl::tir {

struct Expr;
struct Def;
using ExprP = std::shared_ptr<const Expr>;
using DefP = std::shared_ptr<const Def>;

/// A value variable. Its id lives in the same space as NatVarIds, so an integer value can be
/// referred to from types (toNat(x) is Nat::value(id), toNat(a@e) is Nat::lookup(id, e)).
struct Var {
  int64_t id;
  std::string name;
  TypeP type;
  NatVarId natId() const { return NatVarId{id, name}; }
};
using VarP = std::shared_ptr<const Var>;
VarP makeVar(const std::string &name, TypeP type);

/// The primitives (tir/Primitives.def lists them, with their names, arities and sorts).
enum class Prim {
#define SPL_PRIMITIVE(Enum, name, arity, sort, typeRule, lowerRule) Enum,
#include "tir/Primitives.def"
};
const char *primName(Prim p);
/// The primitive a program calls by `name` (aliases included), and its arity.
std::optional<Prim> primByName(const std::string &name);
int primArity(Prim p);
bool isMapLike(Prim p);
bool isGpuMap(Prim p);

/// A lambda parameter: a value variable, a nat (map position, liftNat, matchDepPair over a nat)
/// or a nats (liftNats, matchDepPair over a nats).
struct Param {
  enum Sort { Value, Nat, Nats } sort = Value;
  VarP var;         // Value
  NatVarId natVar;  // Nat, Nats
};

/// An argument of a user-def call, one per parameter of the callee in declaration order.
struct CallArg {
  enum Sort { Nat, Nats, Data, Value } sort;
  spl::Nat nat;     // Nat
  NatVarId nats;    // Nats: the nats variable passed
  TypeP type;       // Data
  ExprP value;      // Value
};

// ---- einsum ---------------------------------------------------------------------------------
struct EinsumIndexVar {
  NatVarId var;
  spl::Nat extent;
};
struct EinsumTerm;
using EinsumTermP = std::shared_ptr<const EinsumTerm>;
struct EinsumTerm {
  enum Op { Access, Literal, Neg, Add, Sub, Mul, Div } op;
  SourceLoc loc;
  VarP tensor;                 // Access (a scalar operand has no indices)
  std::vector<int> indices;    // Access: positions in Einsum::indices
  double literal = 0;          // Literal
  std::vector<EinsumTermP> kids;
};
struct Einsum {
  std::string outName;
  std::vector<int> outIndices;           // positions in indices
  std::vector<EinsumIndexVar> indices;   // every index variable, in order of first use
  std::vector<std::string> indexNames;
  EinsumTermP rhs;
  TypeP resultType;
  ScalarKind scalar;
};

enum class ExprKind {
  Lit,       // scalar literal of `type`
  VarRef,    // var
  NatValue,  // a nat used as a value (i64): nat
  Lambda,    // params => args[0]
  App,       // args[0](args[1..]): application of a function value (lambda or let-bound)
  Let,       // let var = args[0]; args[1]
  If,        // if args[0] then args[1] else args[2]
  Tuple,     // (args...)
  Proj,      // args[0].proj
  Index,     // args[0] @ args[1]  (args[1]: integer or idx value, or a NatValue)
  Unary,     // unop args[0]
  Binary,    // args[0] binop args[1]  (operands of the same type)
  Convert,   // scalar conversion of args[0] to type
  MinMax,    // min/max of args[0], args[1] (isMax)
  Prim,      // prim(natArgs..., args...)
  CallDef,   // def(callArgs)
  Einsum,    // einsum
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  TypeP type;
  // Lit
  double fval = 0;
  int64_t ival = 0;
  bool bval = false;
  // VarRef, Let
  VarP var;
  // NatValue
  Nat nat;
  // Lambda
  std::vector<Param> params;
  // children
  std::vector<ExprP> args;
  // Unary/Binary
  ast::UnOp unop = ast::UnOp::Neg;
  ast::BinOp binop = ast::BinOp::Add;
  bool isMax = false;
  // Proj
  int proj = 0;
  // Prim
  tir::Prim prim = tir::Prim::Map;
  std::vector<spl::Nat> natArgs;  // split k, take k, drop k, generate n, iota n, which k,
                                  // strided s, makeDepPair k (a nat)
  NatVarId natsArg;               // makeDepPair over a nats variable
  bool natsArgIsSet = false;
  // CallDef
  DefP def;
  std::vector<CallArg> callArgs;
  // Einsum
  std::shared_ptr<const tir::Einsum> einsum;
};

/// A parameter of a def.
struct DefParam {
  enum Sort { Nat, Nats, Data, Value } sort;
  bool implicit = false;
  std::string name;
  SourceLoc loc;
  NatVarId natVar;  // Nat, Nats
  TypeP typeVar;    // Data: the rigid type variable
  VarP value;       // Value
};

/// What --emit=types lists for a call site: the callee, its solved implicit arguments, and the
/// type of the result.
struct CallRecord {
  struct Implicit {
    std::string name;
    bool isType = false;
    spl::Nat nat;
    TypeP type;
  };
  SourceLoc loc;
  std::string callee;
  std::vector<Implicit> implicits;
  TypeP result;
};

struct Def {
  std::string name;
  SourceLoc loc;
  std::vector<DefParam> params;
  TypeP result;
  ExprP body;
  std::vector<CallRecord> calls;
  /// Nat subtractions and take/drop bounds the checker could not prove non-negative.
  std::vector<std::pair<SourceLoc, std::string>> unproven;
  /// The tunables its type and body read, directly or through the defs it refers to: the
  /// values that change what it computes or how (spl-tune searches only these).
  std::set<std::string> tunables;
};

/// A checked export: a def instantiated at concrete data types.
struct Export {
  std::string cname;
  SourceLoc loc;
  DefP def;
  std::map<int64_t, TypeP> typeArgs;  // data parameter (rigid var id) -> scalar type
  /// Nat parameters the export fixes (`export f(w = 4)`: nat var id -> value): they take no C
  /// parameter and are constants in the kernel's types, so loops over them have known trip
  /// counts (a row of 4 sums kept in registers).
  std::map<int64_t, int64_t> natArgs;
  bool cpu = false, cuda = false;
  /// How the caller stores an array parameter (`with x: inc(incx)`), where not contiguous and
  /// row-major: Increment (a vector whose element i is at i*inc, or at (n-1-i)*|inc| when inc
  /// is negative: the Fortran BLAS convention), ColMajor / RowMajor (a matrix n.m.T whose
  /// element (i, j) is at i + j*ld / i*ld + j). The stride is an int64_t C parameter that
  /// follows the parameter's pointer.
  struct View {
    enum Kind { Increment, ColMajor, RowMajor } kind;
    int defParam = -1;
    std::string stride;
    SourceLoc loc;
  };
  std::vector<View> views;
  /// `with result in y` / `result in (x, y)`: the def parameters (array values) that the
  /// result's leaves are written into, in the order of the result's leaves; empty when the
  /// result has output pointers of its own. Those parameters are updated in place through
  /// their views and take a pointer that is not const.
  std::vector<int> resultInto;
  const View *viewOf(int defParam) const {
    for (const View &v : views)
      if (v.defParam == defParam) return &v;
    return nullptr;
  }
  bool updatesInPlace(int defParam) const {
    return std::find(resultInto.begin(), resultInto.end(), defParam) != resultInto.end();
  }
};

struct Tunable {
  std::string name;
  int64_t value;
  std::vector<int64_t> choices;
};

struct Schedule {
  std::string exportName;
  std::string target;
  SourceLoc loc;
  /// The block typed (tir/ScheduleCommand.h) both ways: as a schedule, what poly/UserSchedule
  /// applies, and as an inspector's conversion script, what poly/Inspector reads for an
  /// `inspect(A)` export.
  std::vector<ScheduleCommand> commands;
  std::vector<ScriptCommand> script;
};

struct Program {
  std::vector<DefP> defs;  // of the main file, in source order
  std::vector<Export> exports;
  std::vector<Tunable> tunables;
  std::vector<Schedule> schedules;
};

/// Substitutes solved types for type variables (generic data parameters) in a type.
TypeP substituteTypeVars(const TypeP &t, const std::map<int64_t, TypeP> &m);

std::string printExpr(const ExprP &e);

}  // namespace spl::tir
