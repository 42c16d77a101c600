/// \file CheckerImpl.h (private to check/): the state of the type checker, shared by
/// Checker.cpp (modules, declarations, unification), CheckExpr.cpp (expressions and calls),
/// CheckPrim.cpp (the primitives' dependent typing rules) and CheckEinsum.cpp (index notation).
///
/// Inference uses metas (unification variables) for types and nats. Nat equations are solved
/// when one side is a meta, or when the difference is linear in a single meta; other equations
/// are postponed until their metas are solved and then checked by normalisation. At the end of
/// each def, literal metas default to i32 / f32 and every type in the TIR is "zonked" (metas
/// replaced by their solutions).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ast/Ast.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/Format.h"
#include "tir/Tir.h"
#include "check/Checker.h"

namespace spl::check {

/// A module's top-level names.
struct ModuleEnv {
  const ast::Module *module = nullptr;
  std::string dir;  // for resolving its own imports
  std::map<std::string, const ast::TypeDecl *> aliases;
  std::map<std::string, const ast::DefDecl *> defs;
  std::vector<ModuleEnv *> imports;
  std::map<std::string, tir::DefP> checked;
  std::set<std::string> inProgress;
  /// Its tunables' values (-D applied), in scope in its own defs only: an imported def keeps the
  /// values of its module's tunables, and a def of the importer sees its own.
  std::map<std::string, int64_t> tunables;
  std::vector<tir::Tunable> tunableList;  // the same, in declaration order, with their choices
};

/// What a name means in the current scope.
struct Binding {
  enum Kind { NatVar, NatsVar, DataVar, Value, Tunable } kind;
  NatVarId nat;          // NatVar, NatsVar
  TypeP dataVar;         // DataVar
  tir::VarP value;       // Value
  int64_t tunable = 0;   // Tunable
};

/// An argument of an application: syntax still to check, or an already typed expression (from
/// eta-expansion or from a pipe whose left side was checked first).
struct Arg {
  const ast::Expr *syn = nullptr;
  tir::ExprP typed;
  SourceLoc loc;
};

/// Exits the current def's check after an error was reported (the driver collects them).
struct DefFailed {};

class Checker {
 public:
  Checker(SourceManager &sm, Diagnostics &diags, const CheckOptions &opts) : sm_(sm), diags_(diags), opts_(opts) {}

  std::optional<tir::Program> run(const ast::Module &main);

  // ---- modules and declarations (Checker.cpp) ----
  void reportRecursiveAliases(const ModuleEnv &env);
  std::set<const ast::TypeDecl *> recursiveAliases_;  // found by reportRecursiveAliases
  ModuleEnv *loadModule(const ast::Module &m, const std::string &dir);
  /// The values of env's tunables (its declarations, -D overriding), checked against their
  /// lists and ranges, into env.tunables and env.tunableList.
  void evaluateTunables(ModuleEnv &env);
  ModuleEnv *importModule(const ast::ImportDecl &im, ModuleEnv &from);
  tir::DefP checkDef(ModuleEnv &env, const ast::DefDecl &d);
  tir::DefP lookupDef(const std::string &name, SourceLoc loc, ModuleEnv **owner = nullptr);
  const ast::TypeDecl *lookupAlias(const std::string &name, SourceLoc loc, ModuleEnv **owner);
  bool hasDef(const std::string &name);
  /// An export's `with`: the views of its array parameters and where its result goes
  /// (CheckStorage.cpp), into ex.views and ex.resultInto.
  void checkExportStorage(const ast::ExportDecl &e, const tir::Def &def, tir::Export &ex);

  // ---- scopes ----
  void push() { scopes_.emplace_back(); }
  void pop() { scopes_.pop_back(); }
  void bind(const std::string &name, Binding b) { scopes_.back().emplace_back(name, std::move(b)); }
  const Binding *lookup(const std::string &name) const;

  // ---- types and nats from syntax (Checker.cpp) ----
  TypeP resolveType(const ast::TypeSyn &t);
  /// The most type nodes an alias may expand to. Aliases that each pair the previous one double
  /// at every step (20 of them: a million nodes, seconds and gigabytes to build); a type that
  /// large could not cross the C ABI anyway (one parameter per tuple component).
  static constexpr int64_t kMaxTypeNodes = int64_t(1) << 14;
  /// The number of nodes the syntax t expands to with its aliases expanded, capped at
  /// kMaxTypeNodes + 1, computed without expanding: an alias's size is counted once (memoised
  /// when it has no parameters), a parameter counts the size of its argument.
  int64_t expandedSize(const ast::TypeSyn &t, const std::map<std::string, int64_t> *aliasParams);
  std::map<const ast::TypeDecl *, int64_t> aliasSizes_;
  Nat resolveNat(const ast::NatSyn &n);
  NatCondP resolveCond(const ast::NatSyn &n);
  /// A value expression read as a nat (explicit nat arguments, toNat, take/split/... counts).
  Nat exprToNat(const ast::Expr &e);
  Nat resolveNatNode(const ast::NatSyn &n);  // resolveNat without locating nat overflow errors
  Nat exprToNatNode(const ast::Expr &e);     // exprToNat without locating nat overflow errors
  /// A typed expression read as a nat, if it is one (integer arithmetic on nats, integer values
  /// and lookups into integer arrays).
  std::optional<Nat> tirToNat(const tir::ExprP &e);
  int64_t constNat(const ast::Expr &e, const char *what);

  // ---- metas and unification (Checker.cpp) ----
  TypeP freshMeta(Type::Numeric numeric = Type::NotNumeric, const std::string &name = "");
  Nat freshNatMeta(const std::string &name);
  TypeP resolve(const TypeP &t);  // follows solved metas at the top
  TypeP zonk(const TypeP &t);
  Nat zonk(const Nat &n);
  bool unify(const TypeP &a, const TypeP &b);
  bool unifyNat(const Nat &a, const Nat &b);
  /// Unifies `found` with `expected` or reports "type mismatch" at loc with both types.
  void expect(const TypeP &expected, const TypeP &found, SourceLoc loc, const std::string &what);
  void expectNat(const Nat &expected, const Nat &found, SourceLoc loc, const std::string &what);
  /// Resolves t to an Array type, instantiating a meta with a fresh array type if needed.
  TypeP expectArray(const TypeP &t, SourceLoc loc, const std::string &what);
  bool isNumeric(const TypeP &t);
  void solvePostponed(bool final);
  tir::ExprP zonkExpr(const tir::ExprP &e);

  // ---- expressions (CheckExpr.cpp) ----
  tir::ExprP check(const ast::Expr &e, const TypeP &expected);
  tir::ExprP checkArg(const Arg &a, const TypeP &expected);
  tir::ExprP checkApp(const ast::Expr &e, const TypeP &expected);
  tir::ExprP checkCallDef(const std::string &name, SourceLoc loc, std::vector<std::vector<Arg>> groups,
                          const TypeP &expected);
  tir::ExprP checkLambda(const ast::Expr &e, const TypeP &expected);
  tir::ExprP checkIndex(const ast::Expr &e);
  tir::ExprP checkBinary(const ast::Expr &e, const TypeP &expected);
  tir::ExprP checkVar(const ast::Expr &e, const TypeP &expected);
  tir::ExprP opFunction(ast::BinOp op, bool isMinMax, bool isMax, SourceLoc loc, const TypeP &expected);
  tir::ExprP literal(const ast::Expr &e, const TypeP &expected);
  /// Binds a lambda/let pattern to a value of type t; returns the variable and the lets that
  /// destructure it (wrapped around the body by the caller through `wrap`).
  tir::VarP bindPattern(const ast::Pattern &p, const TypeP &t, std::vector<std::pair<tir::VarP, tir::ExprP>> &lets);
  tir::ExprP wrapLets(const std::vector<std::pair<tir::VarP, tir::ExprP>> &lets, tir::ExprP body);
  /// Expands a function value with `have` of `need` arguments into a lambda over the rest.
  tir::ExprP etaExpand(const std::vector<TypeP> &missing, const TypeP &expected, SourceLoc loc,
                       const std::function<tir::ExprP(std::vector<Arg>)> &complete);

  // ---- primitives (CheckPrim.cpp) ----
  std::optional<tir::Prim> primitiveByName(const std::string &name) const;
  tir::ExprP checkPrim(tir::Prim p, const std::string &name, SourceLoc loc, std::vector<Arg> args,
                       const TypeP &expected);
  /// A call of a primitive with all its arguments, as its typing rule sees it.
  struct PrimCall {
    Checker &ck;
    tir::Prim p;
    const std::string &name;
    SourceLoc loc;
    const std::vector<Arg> &args;
    const TypeP &expected;  // null: none
    /// The nat an argument stands for (an error naming `what` when it is not one).
    Nat natArg(const Arg &a, const char *what) const;
    /// Records the call's implicit arguments (for --emit=tir and the ABI's sizes).
    void record(TypeP result, std::vector<tir::CallRecord::Implicit> implicits) const;
  };
  /// The length of an array type.
  Nat primLength(const TypeP &t) { return resolve(t)->len; }
  /// The typing rules, named in tir/Primitives.def beside each primitive's lowering.
  tir::ExprP typeMap(const PrimCall &c);
  tir::ExprP typeReduceOrScan(const PrimCall &c);
  tir::ExprP typeFold(const PrimCall &c);
  tir::ExprP typeZip(const PrimCall &c);
  tir::ExprP typeUnzip(const PrimCall &c);
  tir::ExprP typeSplit(const PrimCall &c);
  tir::ExprP typeJoin(const PrimCall &c);
  tir::ExprP typeTranspose(const PrimCall &c);
  tir::ExprP typeAsDepArray(const PrimCall &c);
  tir::ExprP typeTakeOrDrop(const PrimCall &c);
  tir::ExprP typeGenerate(const PrimCall &c);
  tir::ExprP typeRecur(const PrimCall &c);
  tir::ExprP typeIota(const PrimCall &c);
  tir::ExprP typeWhich(const PrimCall &c);
  tir::ExprP typeStrided(const PrimCall &c);
  tir::ExprP typeInspect(const PrimCall &c);
  tir::ExprP typeLen(const PrimCall &c);
  tir::ExprP typeLiftOrMatch(const PrimCall &c);
  tir::ExprP typeMakeDepPair(const PrimCall &c);
  tir::ExprP typeReduceToNat(const PrimCall &c);
  struct BinderSpec {
    tir::Param::Sort sort;
    NatVarId nat;  // Nat/Nats: the variable to bind the pattern's name to
    TypeP type;    // Value
  };
  /// Checks `i => x => body` against binder specs; returns a TIR lambda.
  tir::ExprP checkBinderLambda(const Arg &f, const std::vector<BinderSpec> &specs, const TypeP &expectedResult,
                               const std::string &prim);

  // ---- einsum (CheckEinsum.cpp) ----
  tir::ExprP checkEinsum(const ast::Expr &e, const TypeP &expected);

  // ---- errors ----
  [[noreturn]] void fail(SourceLoc loc, const std::string &msg);
  void note(SourceLoc loc, const std::string &msg) { diags_.note(loc, msg); }
  void recordUnproven(SourceLoc loc, const std::string &what);
  void addFact(const NatVarId &v, const Nat &lo, const Nat &hi) { facts_.ranges.push_back({v.id, lo, hi}); }
  /// Names for positions the user did not name (i, i1, i2, ... within a def), so printed
  /// types never show two different positions under one name.
  std::string positionName() { return positions_++ == 0 ? "i" : "i" + std::to_string(positions_ - 1); }

  // ---- state ----
  SourceManager &sm_;
  Diagnostics &diags_;
  const CheckOptions &opts_;
  std::vector<std::unique_ptr<ast::Module>> importedAsts_;
  std::vector<std::unique_ptr<ModuleEnv>> envs_;
  std::map<std::string, ModuleEnv *> envByPath_;
  ModuleEnv *env_ = nullptr;  // the module of the def being checked
  ModuleEnv *mainEnv_ = nullptr;
  std::vector<std::vector<std::pair<std::string, Binding>>> scopes_;

  // per-def inference state
  std::map<int64_t, TypeP> typeSolutions_;
  std::map<int64_t, Type::Numeric> metaNumeric_;
  NatSubst natSolutions_;  // vars: the solved nat metas (a substitution, so zonk uses it as it is)
  std::set<int64_t> natMetas_;
  std::map<int64_t, std::string> natMetaNames_;
  struct Postponed {
    Nat a, b;
    SourceLoc loc;
    std::string what;
    TypeP expected, found;  // set by expect(): the types whose unification postponed a = b
  };
  /// Reports a postponed equation a = b that does not hold (naming both types when known).
  [[noreturn]] void failPostponed(const Postponed &p, const Nat &a, const Nat &b);
  std::vector<Postponed> postponed_;
  NatFacts facts_;
  std::vector<tir::CallRecord> calls_;
  std::set<std::string> usedTunables_;  // tunables read by the def being checked (tir::Def::tunables)
  /// True while a tunable's value and range are evaluated: only there may a nat read the CPU
  /// target (cpuTargetNat).
  bool inTunableDecl_ = false;
  /// `cpu_vector_registers` or `cpu_vector_bits` (CheckOptions) where `name` is one of them:
  /// their values in a tunable's declaration, an error elsewhere; nullopt for any other name.
  std::optional<int64_t> cpuTargetNat(const std::string &name, SourceLoc loc);
  std::vector<std::pair<SourceLoc, std::string>> unproven_;
  int64_t nextMeta_ = 1;
  int positions_ = 0;
  int depth_ = 0;
};

/// Names the shape of a type for messages: "an array", "a tuple", ...
std::string describe(const TypeP &t);
/// `t` as a user reads it: "a float literal" rather than `{float}`, "a pair `(f32, f32)`".
std::string languageTerms(const TypeP &t);
bool constantByteSizeFits(const TypeP &t);

}  // namespace spl::check
