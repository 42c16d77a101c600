/// \file PolyModel.cpp: builds the isl model of a CIN kernel (see PolyModel.h for the model).
#include "poly/PolyModel.h"

#include <isl/cpp.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "cin/Visitor.h"
#include "poly/IslAst.h"
#include "poly/IslSupport.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::poly {

namespace {


using cin::Expr;
using cin::ExprKind;
using cin::ExprP;
using cin::Stmt;
using cin::StmtKind;
using cin::StmtP;

/// Loop variable id -> isl dimension name, for the loops in scope.
using IterMap = std::map<int64_t, std::string>;

constexpr unsigned long kCanonicalQuota = 2000000;

bool isIslKeyword(const std::string &s) {
  static const std::set<std::string> kw = {"and", "or", "not", "implies", "exists", "min", "max", "floor", "ceil",
                                           "mod", "infty", "NaN", "domain", "range", "true", "false", "rat",
                                           "xor", "cond", "if", "else", "then", "div"};
  return kw.count(s) != 0;
}

/// An isl identifier from a source name: letters, digits and '_', starting with a letter.
std::string sanitize(const std::string &s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0]))) out = "v" + out;
  if (isIslKeyword(out)) out += "_";
  return out;
}

std::string join(const std::vector<std::string> &v, const std::string &sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}


/// `x < bound`, known to hold where it is recorded.
struct Fact {
  Nat x, bound;
  bool alive = true;
};

/// An access before translation: the subscripts are still Nats.
struct RawAccess {
  int stmt = -1;
  bool write = false;
  std::string key;             // the array
  std::vector<Nat> indices;    // the array's own indices
  int expand = 0;              // leading loop dimensions (expanded locals and temporaries)
  std::vector<Fact> facts;     // what holds at the access
  std::string what;
};

struct ArrayInfo {
  int index = -1;
  std::string name, what;
  bool isLocal = false;
  int64_t local = 0;
  int64_t tensorId = 0;
  int expand = 0;
  int baseDims = 0;
  // Segments: the partition of the last level (SegmentForm::key) and its description.
  bool segmented = false;
  std::string segKey, segBy;
};

/// An index as element x of segment e of a partition of its level into consecutive segments:
/// by an offsets array, O@e + x (- O@c) with 0 <= x < O@(e+1) - O@e; uniform, P*e + x with
/// 0 <= x < P for a loop-invariant P; or closed, F(e) + x with 0 <= x < L and F(e+1) - F(e) >= L
/// for a polynomial F in e (packed triangles).
struct SegmentForm {
  std::string key;  // the partition: "offsets:ID|KEY-OF-c", "uniform:KEY-OF-P" or "closed:KEY-OF-F"
  std::string by;   // the offsets array's name, or P
  Nat e, x;
};

struct LoopFrame {
  int loop = -1;
  int64_t var = 0;
  std::string dim;
  std::vector<std::string> constraints;
  bool exact = true;
  std::vector<RawAccess> reads;
  size_t factsMark = 0;
};

struct GuardFrame {
  std::vector<std::string> constraints;
  bool exact = true;
  std::vector<RawAccess> reads;
  size_t factsMark = 0;
};

class ModelBuilder : public cin::Visitor {
 public:
  explicit ModelBuilder(const cin::Kernel &k) : k_(k) {}
  PolyModel build();

 private:
  // ---- scanning ----
  void prescan(const StmtP &s);
  static void assignedLocals(const StmtP &s, std::set<int64_t> &out);

  // ---- Nats ----
  bool isNatParam(int64_t id) const { return natParams_.count(id) != 0; }
  std::optional<std::string> affineText(const Nat &n, const IterMap &it) const;
  /// The isl name of a Var or Value atom: a loop dimension or a nat parameter.
  std::optional<std::string> atomName(const NatAtom &a, const IterMap &it) const;
  bool invariant(const Nat &n, std::set<int64_t> bound = {}) const;
  bool invariantAtom(const NatAtom &a, std::set<int64_t> &bound) const;
  bool readOnlyLookups(const Nat &n) const;
  /// Splits n into its affine terms (text) and the rest.
  std::pair<std::string, Nat> splitAffine(const Nat &n, const IterMap &it) const;
  std::string opaqueParam(PolyParam::Kind kind, const Nat &rest);
  /// Renames loop variables to their isl dimensions and Value atoms to %ID, for printing.
  NatSubst renaming() const;
  std::string show(const Nat &n) const { return substitute(n, renaming()).str(); }
  std::string show(const ExprP &e) const { return cin::print(cin::substitute(e, renaming())); }
  /// A bound or an index: text and exactness; nullopt text for an unconstrained index.
  std::pair<std::string, bool> boundText(const Nat &n, bool upper, const IterMap &it);
  std::pair<std::optional<std::string>, bool> indexText(const Nat &n, const IterMap &it);

  // ---- expressions ----
  std::optional<std::string> exprAffine(const ExprP &e, const IterMap &it) const;
  std::optional<std::string> condText(const ExprP &e, const IterMap &it) const;
  std::optional<Nat> exprNat(const ExprP &e) const;
  void factsFromCond(const ExprP &e);

  // ---- reads ----
  void natReads(const Nat &n, const std::string &what, std::vector<RawAccess> &out);
  void atomReads(const NatAtom &a, const std::string &what, std::vector<RawAccess> &out);
  void exprReads(const ExprP &e, std::vector<RawAccess> &out);
  /// The key of the array of a tensor leaf or a local (registered on first use).
  std::string tensorArray(int64_t id, const std::string &name, const std::vector<int> &leaf, bool tensorKnown);
  std::string localArray(int64_t id);
  bool readsLocal(const ExprP &e, int64_t local);

  // ---- walking ----
  IterMap iterMap() const;
  // ---- the model, statement by statement (cin/Visitor.h) ----
  void visitBlock(const Stmt &s) override;
  void visitForall(const Stmt &s) override;
  void visitIf(const Stmt &s) override;
  void visitAlloc(const Stmt &s) override;
  void visitDeclLocal(const Stmt &s) override;
  void visitSetLocal(const Stmt &s) override;
  void visitAssign(const Stmt &s) override;
  void visitFail(const Stmt &) override {}
  void visitBarrier(const Stmt &) override {}
  /// A statement of the model (an assignment, a local's declaration or update).
  void leaf(const Stmt &s);
  void invalidate(int64_t local);

  // ---- finishing ----
  std::optional<SegmentForm> segmentForm(const Nat &idx, const std::vector<Fact> &facts, const IterMap &it) const;
  void decideSegments();
  void translateAccesses();
  void finishTexts();
  void canonicalize();

  const cin::Kernel &k_;
  PolyModel m_;
  std::map<int64_t, std::string> natParams_;
  std::set<std::string> reserved_;
  std::map<std::string, int> opaqueByKey_;
  std::set<int64_t> writtenTensors_;
  std::set<int64_t> forallVars_;
  std::map<int64_t, cin::TensorP> tensors_;
  std::map<int64_t, std::pair<std::string, int>> localDecls_;  // id -> (name, depth)
  std::map<int64_t, int> tempDepth_;
  std::map<std::string, ArrayInfo> arrays_;
  std::vector<std::string> arrayOrder_;
  std::set<std::string> arrayNames_;
  std::vector<LoopFrame> loops_;
  std::vector<GuardFrame> guards_;
  std::vector<Fact> facts_;
  std::vector<int> pos_ = {0};
  std::vector<RawAccess> raw_;
  std::vector<std::vector<std::string>> stmtConstraints_;
  std::vector<std::vector<int>> stmtSchedule_;
  std::vector<std::vector<int64_t>> stmtVars_;
  std::vector<std::string> stmtReduction_;  // the key of the accumulator of a reduction update
};

// ---- scanning ----------------------------------------------------------------------------------

void ModelBuilder::prescan(const StmtP &root) {
  cin::forEachStmt(root, [&](const StmtP &s) {
    if (s->kind == StmtKind::Forall) {
      forallVars_.insert(s->var);
      reserved_.insert(sanitize(s->varName));
    }
    if (s->kind == StmtKind::Assign && s->lhs && s->lhs->tensor) writtenTensors_.insert(s->lhs->tensor->id);
    if (s->kind == StmtKind::Alloc && s->tensor) {
      writtenTensors_.insert(s->tensor->id);
      tensors_[s->tensor->id] = s->tensor;
    }
  });
}

void ModelBuilder::assignedLocals(const StmtP &root, std::set<int64_t> &out) {
  cin::forEachStmt(root, [&](const StmtP &s) {
    if (s->kind == StmtKind::SetLocal || s->kind == StmtKind::DeclLocal) out.insert(s->local);
  });
}

// ---- Nats ----------------------------------------------------------------------------------------

std::optional<std::string> ModelBuilder::atomName(const NatAtom &a, const IterMap &it) const {
  auto i = it.find(a.var.id);  // a loop dimension (a Value atom: a loop variable read at run time)
  if (i != it.end()) return i->second;
  if (a.kind != NatAtomKind::Var) return std::nullopt;
  auto p = natParams_.find(a.var.id);
  if (p != natParams_.end()) return p->second;
  return std::nullopt;
}

std::optional<std::string> ModelBuilder::affineText(const Nat &n, const IterMap &it) const {
  return affineIslText(n, [&](const NatAtom &a) { return atomName(a, it); });
}

bool ModelBuilder::invariantAtom(const NatAtom &a, std::set<int64_t> &bound) const {
  switch (a.kind) {
    case NatAtomKind::Var: return isNatParam(a.var.id) || bound.count(a.var.id);
    case NatAtomKind::Value: return false;
    case NatAtomKind::Lookup:
      return !writtenTensors_.count(a.var.id) && invariant(a.args[0], bound);
    case NatAtomKind::Sum: {
      std::set<int64_t> inner = bound;
      inner.insert(a.var.id);
      for (const Nat &x : a.args)
        if (!invariant(x, inner)) return false;
      return true;
    }
    case NatAtomKind::Cond: {
      std::function<bool(const NatCond &)> walkCond = [&](const NatCond &c) {
        if (c.kind == NatCond::Cmp) return invariant(c.lhs, bound);
        for (const NatCondP &x : c.args)
          if (!walkCond(*x)) return false;
        return true;
      };
      if (a.cond && !walkCond(*a.cond)) return false;
      break;
    }
    default: break;
  }
  for (const Nat &x : a.args)
    if (!invariant(x, bound)) return false;
  return true;
}

bool ModelBuilder::invariant(const Nat &n, std::set<int64_t> bound) const {
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors)
      if (!invariantAtom(*f.first, bound)) return false;
  return true;
}

bool ModelBuilder::readOnlyLookups(const Nat &n) const {
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors) {
      const NatAtom &a = *f.first;
      if (a.kind == NatAtomKind::Lookup && writtenTensors_.count(a.var.id)) return false;
      for (const Nat &x : a.args)
        if (!readOnlyLookups(x)) return false;
      if (a.kind == NatAtomKind::Cond || a.kind == NatAtomKind::Sum) return false;
    }
  return true;
}

std::pair<std::string, Nat> ModelBuilder::splitAffine(const Nat &n, const IterMap &it) const {
  std::vector<Nat::Term> affine, rest;
  for (const Nat::Term &t : n.terms()) {
    bool single = t.mono.factors.empty() || (t.mono.factors.size() == 1 && t.mono.factors[0].second == 1);
    bool isAffine = t.coeff.isInt() && single && affineText(Nat::fromTerms({t}), it).has_value();
    (isAffine ? affine : rest).push_back(t);
  }
  return {*affineText(Nat::fromTerms(affine), it), Nat::fromTerms(rest)};
}

std::string ModelBuilder::opaqueParam(PolyParam::Kind kind, const Nat &rest) {
  std::string key = std::to_string(static_cast<int>(kind)) + "|" + rest.key();
  auto f = opaqueByKey_.find(key);
  if (f != opaqueByKey_.end()) return m_.params[f->second].name;
  const char *prefix = kind == PolyParam::Invariant ? "P" : kind == PolyParam::UpperBound ? "U" : "L";
  int count = 0;
  for (const PolyParam &p : m_.params)
    if (p.kind == kind) ++count;
  std::string name;
  for (int k = count;; ++k) {
    name = std::string(prefix) + "_" + std::to_string(k);
    if (!reserved_.count(name)) break;
  }
  reserved_.insert(name);
  PolyParam p;
  p.kind = kind;
  p.name = name;
  p.meaning = show(rest);
  opaqueByKey_[key] = static_cast<int>(m_.params.size());
  m_.params.push_back(p);
  return name;
}

std::pair<std::string, bool> ModelBuilder::boundText(const Nat &n, bool upper, const IterMap &it) {
  if (auto a = affineText(n, it)) return {*a, true};
  auto [aff, rest] = splitAffine(n, it);
  bool inv = invariant(rest);
  std::string p = opaqueParam(inv ? PolyParam::Invariant : upper ? PolyParam::UpperBound : PolyParam::LowerBound, rest);
  return {aff == "0" ? p : aff + " + " + p, inv};
}

std::pair<std::optional<std::string>, bool> ModelBuilder::indexText(const Nat &n, const IterMap &it) {
  if (auto a = affineText(n, it)) return {*a, true};
  auto [aff, rest] = splitAffine(n, it);
  if (!invariant(rest)) return {std::nullopt, false};
  std::string p = opaqueParam(PolyParam::Invariant, rest);
  return {aff == "0" ? p : aff + " + " + p, true};
}

// ---- expressions -------------------------------------------------------------------------------

std::optional<std::string> ModelBuilder::exprAffine(const ExprP &e, const IterMap &it) const {
  if (!e || !isInteger(e->type)) return std::nullopt;
  switch (e->kind) {
    case ExprKind::Const: return std::to_string(e->ival);
    case ExprKind::NatE: return affineText(e->nat, it);
    case ExprKind::Local: {
      auto i = it.find(e->local);
      if (i == it.end()) return std::nullopt;
      return i->second;
    }
    case ExprKind::Unary: {
      if (e->unop != ast::UnOp::Neg) return std::nullopt;
      auto a = exprAffine(e->args[0], it);
      if (!a) return std::nullopt;
      return "-(" + *a + ")";
    }
    case ExprKind::Binary: {
      auto a = exprAffine(e->args[0], it), b = exprAffine(e->args[1], it);
      if (!a || !b) return std::nullopt;
      if (e->binop == ast::BinOp::Add) return "(" + *a + ") + (" + *b + ")";
      if (e->binop == ast::BinOp::Sub) return "(" + *a + ") - (" + *b + ")";
      if (e->binop == ast::BinOp::Mul && e->args[0]->kind == ExprKind::Const) return std::to_string(e->args[0]->ival) + "*(" + *b + ")";
      if (e->binop == ast::BinOp::Mul && e->args[1]->kind == ExprKind::Const) return std::to_string(e->args[1]->ival) + "*(" + *a + ")";
      return std::nullopt;
    }
    case ExprKind::MinMax: {
      auto a = exprAffine(e->args[0], it), b = exprAffine(e->args[1], it);
      if (!a || !b) return std::nullopt;
      return std::string(e->isMax ? "max(" : "min(") + *a + ", " + *b + ")";
    }
    default: return std::nullopt;
  }
}

std::optional<std::string> ModelBuilder::condText(const ExprP &e, const IterMap &it) const {
  if (!e) return std::nullopt;
  if (e->kind == ExprKind::Const && e->type == ScalarKind::Bool) return e->bval ? "0 = 0" : "1 = 0";
  if (e->kind == ExprKind::Unary && e->unop == ast::UnOp::Not) {
    auto a = condText(e->args[0], it);
    if (!a) return std::nullopt;
    return "not (" + *a + ")";
  }
  if (e->kind != ExprKind::Binary) return std::nullopt;
  using ast::BinOp;
  if (e->binop == BinOp::And || e->binop == BinOp::Or) {
    auto a = condText(e->args[0], it), b = condText(e->args[1], it);
    if (!a || !b) return std::nullopt;
    return "(" + *a + (e->binop == BinOp::And ? ") and (" : ") or (") + *b + ")";
  }
  const char *op = nullptr;
  switch (e->binop) {
    case BinOp::Lt: op = " < "; break;
    case BinOp::Le: op = " <= "; break;
    case BinOp::Gt: op = " > "; break;
    case BinOp::Ge: op = " >= "; break;
    case BinOp::Eq: op = " = "; break;
    case BinOp::Ne: op = " != "; break;
    default: return std::nullopt;
  }
  auto a = exprAffine(e->args[0], it), b = exprAffine(e->args[1], it);
  if (!a || !b) return std::nullopt;
  return "(" + *a + ")" + op + "(" + *b + ")";
}

std::optional<Nat> ModelBuilder::exprNat(const ExprP &e) const {
  if (!e || !isInteger(e->type)) return std::nullopt;
  switch (e->kind) {
    case ExprKind::Const: return Nat(e->ival);
    case ExprKind::NatE: return e->nat;
    case ExprKind::Local:
      if (forallVars_.count(e->local)) return Nat::var(NatVarId{e->local, ""});
      return Nat::value(NatVarId{e->local, "%" + std::to_string(e->local)});
    case ExprKind::Binary: {
      auto a = exprNat(e->args[0]), b = exprNat(e->args[1]);
      if (!a || !b) return std::nullopt;
      if (e->binop == ast::BinOp::Add) return *a + *b;
      if (e->binop == ast::BinOp::Sub) return *a - *b;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

void ModelBuilder::factsFromCond(const ExprP &e) {
  if (!e || e->kind != ExprKind::Binary) return;
  using ast::BinOp;
  if (e->binop == BinOp::And) {
    factsFromCond(e->args[0]);
    factsFromCond(e->args[1]);
    return;
  }
  if (e->binop != BinOp::Lt && e->binop != BinOp::Le && e->binop != BinOp::Gt && e->binop != BinOp::Ge) return;
  bool swap = e->binop == BinOp::Gt || e->binop == BinOp::Ge;
  auto a = exprNat(e->args[swap ? 1 : 0]), b = exprNat(e->args[swap ? 0 : 1]);
  if (!a || !b || !readOnlyLookups(*a) || !readOnlyLookups(*b)) return;
  if (e->binop == BinOp::Le || e->binop == BinOp::Ge) *b = *b + Nat(1);
  facts_.push_back({*a, *b, true});
}

// ---- reads ---------------------------------------------------------------------------------------

std::string ModelBuilder::tensorArray(int64_t id, const std::string &name, const std::vector<int> &leaf, bool tensorKnown) {
  std::string key = "t" + std::to_string(id);
  for (int l : leaf) key += "." + std::to_string(l);
  if (arrays_.count(key)) return key;
  ArrayInfo a;
  a.tensorId = id;
  std::string base = sanitize(name);
  for (int l : leaf) base += "_" + std::to_string(l);
  std::string nm = base;
  if (arrayNames_.count(nm) || (nm.size() > 1 && nm[0] == 'S' && std::all_of(nm.begin() + 1, nm.end(), ::isdigit)))
    nm = base + "_t" + std::to_string(id);
  arrayNames_.insert(nm);
  a.name = nm;
  std::string leafText;
  for (int l : leaf) leafText += "." + std::to_string(l);
  a.what = std::string(tensorKnown ? "tensor " : "index array ") + name + leafText;
  auto t = tempDepth_.find(id);
  if (t != tempDepth_.end()) {
    a.expand = t->second;
    a.what = "temporary " + name + leafText;
  }
  arrayOrder_.push_back(key);
  arrays_[key] = a;
  return key;
}

std::string ModelBuilder::localArray(int64_t id) {
  std::string key = "l" + std::to_string(id);
  if (arrays_.count(key)) return key;
  auto d = localDecls_.find(id);
  std::string name = d != localDecls_.end() ? d->second.first : "local";
  ArrayInfo a;
  a.isLocal = true;
  a.local = id;
  a.expand = d != localDecls_.end() ? d->second.second : 0;
  std::string base = sanitize(name) + "_" + std::to_string(id);
  std::string nm = base;
  while (arrayNames_.count(nm)) nm += "_";
  arrayNames_.insert(nm);
  a.name = nm;
  a.what = "local %" + std::to_string(id) + " " + name;
  arrayOrder_.push_back(key);
  arrays_[key] = a;
  return key;
}

void ModelBuilder::atomReads(const NatAtom &a, const std::string &what, std::vector<RawAccess> &out) {
  if (a.kind == NatAtomKind::Lookup) {
    auto t = tensors_.find(a.var.id);
    RawAccess r;
    r.key = tensorArray(a.var.id, t != tensors_.end() ? t->second->name : a.var.name, {}, t != tensors_.end());
    r.indices = {a.args[0]};
    r.expand = arrays_[r.key].expand;
    std::string index = show(a.args[0]);
    r.what = a.var.name + "@" + (index.find(' ') != std::string::npos ? "(" + index + ")" : index) + what;
    out.push_back(r);
  }
  if (a.kind == NatAtomKind::Value && localDecls_.count(a.var.id)) {
    RawAccess r;
    r.key = localArray(a.var.id);
    r.expand = arrays_[r.key].expand;
    r.what = "local %" + std::to_string(a.var.id) + what;
    out.push_back(r);
  }
  for (const Nat &x : a.args) natReads(x, what, out);
  if (a.cond) {
    std::function<void(const NatCond &)> walkCond = [&](const NatCond &c) {
      if (c.kind == NatCond::Cmp) natReads(c.lhs, what, out);
      for (const NatCondP &x : c.args) walkCond(*x);
    };
    walkCond(*a.cond);
  }
}

void ModelBuilder::natReads(const Nat &n, const std::string &what, std::vector<RawAccess> &out) {
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors) atomReads(*f.first, what, out);
}

void ModelBuilder::exprReads(const ExprP &e, std::vector<RawAccess> &out) {
  class Reads : public cin::Visitor {
   public:
    Reads(ModelBuilder &b, std::vector<RawAccess> &out) : b_(b), out_(out) {}

   protected:
    void visitAccess(const Expr &e) override {
      RawAccess r;
      r.key = b_.tensorArray(e.tensor->id, e.tensor->name, e.leaf, true);
      r.indices = e.indices;
      r.expand = b_.arrays_[r.key].expand;
      r.what = b_.show(std::make_shared<const Expr>(e));
      out_.push_back(r);
      for (const Nat &i : e.indices) b_.natReads(i, " (in the subscript of " + b_.show(std::make_shared<const Expr>(e)) + ")", out_);
      visitChildren(e);
    }
    void visitLocal(const Expr &e) override {
      if (b_.forallVars_.count(e.local)) return;
      RawAccess r;
      r.key = b_.localArray(e.local);
      r.expand = b_.arrays_[r.key].expand;
      r.what = "local %" + std::to_string(e.local);
      out_.push_back(r);
    }
    void visitNatE(const Expr &e) override { b_.natReads(e.nat, "", out_); }

   private:
    ModelBuilder &b_;
    std::vector<RawAccess> &out_;
  } reads(*this, out);
  reads.visit(e);
}

bool ModelBuilder::readsLocal(const ExprP &e, int64_t local) {
  return cin::anyExpr(e, [&](const Expr &x) {
    if (x.kind == ExprKind::Local && x.local == local) return true;
    if (x.kind == ExprKind::NatE && x.nat.mentions(local)) return true;
    for (const Nat &i : x.indices)
      if (i.mentions(local)) return true;
    return false;
  });
}

// ---- walking -------------------------------------------------------------------------------------

/// The new atoms get fresh ids: the substitution keeps an atom whose replacement has an equal
/// normal form (equality ignores names), so a renaming to the same id would print unchanged.
NatSubst ModelBuilder::renaming() const {
  NatSubst sub;
  for (const auto &[id, decl] : localDecls_) sub.vars.emplace(id, Nat::value(freshNatVar("%" + std::to_string(id))));
  for (const LoopFrame &f : loops_) sub.vars[f.var] = Nat::var(freshNatVar(f.dim));
  return sub;
}

IterMap ModelBuilder::iterMap() const {
  IterMap it;
  for (const LoopFrame &f : loops_) it[f.var] = f.dim;
  return it;
}

void ModelBuilder::invalidate(int64_t local) {
  for (Fact &f : facts_)
    if (f.x.mentions(local) || f.bound.mentions(local)) f.alive = false;
}

void ModelBuilder::visitBlock(const Stmt &s) {
  for (const StmtP &b : s.body) visit(b);
}

void ModelBuilder::visitForall(const Stmt &s) {
  IterMap outer = iterMap();
  PolyLoop loop;
  loop.var = s.var;
  loop.name = s.varName + "%" + std::to_string(s.var);
  std::string dim = sanitize(s.varName);
  bool clash = false;
  for (const auto &[id, nm] : natParams_) clash = clash || nm == dim;
  for (const LoopFrame &f : loops_) clash = clash || f.dim == dim;
  if (clash) dim += "_" + std::to_string(s.var);
  loop.dim = dim;
  loop.depth = static_cast<int>(loops_.size());
  loop.parent = loops_.empty() ? -1 : loops_.back().loop;
  loop.kind = s.forall;
  loop.lo = show(s.lo);
  loop.hi = show(s.hi);
  LoopFrame f;
  f.loop = static_cast<int>(m_.loops.size());
  f.var = s.var;
  f.dim = dim;
  auto [lo, loExact] = boundText(s.lo, false, outer);
  auto [hi, hiExact] = boundText(s.hi, true, outer);
  f.constraints = {lo + " <= " + dim, dim + " < " + hi};
  f.exact = loExact && hiExact;
  loop.exactBounds = f.exact;
  natReads(s.lo, " (lower bound of " + loop.name + ")", f.reads);
  natReads(s.hi, " (upper bound of " + loop.name + ")", f.reads);
  m_.loops.push_back(loop);
  std::set<int64_t> assigned;
  assignedLocals(s.body[0], assigned);
  for (int64_t l : assigned) invalidate(l);
  f.factsMark = facts_.size();
  bool hiStable = readOnlyLookups(s.hi);
  for (int64_t l : assigned) hiStable = hiStable && !s.hi.mentions(l);
  if (hiStable) facts_.push_back({Nat::var(NatVarId{s.var, s.varName}), s.hi, true});
  loops_.push_back(f);
  pos_.push_back(0);
  visit(s.body[0]);
  pos_.pop_back();
  ++pos_.back();
  facts_.resize(loops_.back().factsMark);
  loops_.pop_back();
}

void ModelBuilder::visitIf(const Stmt &s) {
  IterMap it = iterMap();
  std::vector<RawAccess> reads;
  exprReads(s.value, reads);
  for (RawAccess &r : reads) r.what += " (guard)";
  for (int branch = 0; branch < 2; ++branch) {
    const StmtP &b = s.body.size() > static_cast<size_t>(branch) ? s.body[branch] : nullptr;
    if (!b) continue;
    GuardFrame g;
    g.reads = reads;
    g.factsMark = facts_.size();
    if (branch == 0) {
      std::vector<ExprP> conj;
      std::function<void(const ExprP &)> flatten = [&](const ExprP &e) {
        if (e->kind == ExprKind::Binary && e->binop == ast::BinOp::And) {
          flatten(e->args[0]);
          flatten(e->args[1]);
        } else {
          conj.push_back(e);
        }
      };
      flatten(s.value);
      for (const ExprP &c : conj) {
        if (auto t = condText(c, it)) g.constraints.push_back(*t);
        else g.exact = false;
      }
      factsFromCond(s.value);
    } else if (auto t = condText(s.value, it)) {
      g.constraints.push_back("not (" + *t + ")");
    } else {
      g.exact = false;
    }
    guards_.push_back(g);
    visit(b);
    facts_.resize(guards_.back().factsMark);
    guards_.pop_back();
  }
}

void ModelBuilder::visitAlloc(const Stmt &s) {
  if (s.tensor) tempDepth_[s.tensor->id] = static_cast<int>(loops_.size());
  visit(s.body[0]);
}

void ModelBuilder::visitDeclLocal(const Stmt &s) {
  localDecls_[s.local] = {s.localName, static_cast<int>(loops_.size())};
  if (s.value) leaf(s);
  invalidate(s.local);
}

void ModelBuilder::visitSetLocal(const Stmt &s) {
  leaf(s);
  invalidate(s.local);
}

void ModelBuilder::visitAssign(const Stmt &s) { leaf(s); }

void ModelBuilder::leaf(const Stmt &s) {
  int id = static_cast<int>(m_.statements.size());
  PolyStatement st;
  st.name = "S" + std::to_string(id);
  st.text = cin::quoted(cin::substitute(std::make_shared<const Stmt>(s), renaming()));
  std::vector<std::string> constraints;
  std::vector<RawAccess> acc;
  std::string reduction;
  std::vector<int> sched;
  std::vector<int64_t> vars;
  for (size_t d = 0; d < loops_.size(); ++d) {
    const LoopFrame &f = loops_[d];
    st.loops.push_back(f.loop);
    st.dims.push_back(f.dim);
    vars.push_back(f.var);
    constraints.insert(constraints.end(), f.constraints.begin(), f.constraints.end());
    st.exactDomain = st.exactDomain && f.exact;
    acc.insert(acc.end(), f.reads.begin(), f.reads.end());
    sched.push_back(pos_[d]);
    sched.push_back(-1);  // the loop's dimension
  }
  sched.push_back(pos_.back());
  ++pos_.back();
  for (const GuardFrame &g : guards_) {
    constraints.insert(constraints.end(), g.constraints.begin(), g.constraints.end());
    st.exactDomain = st.exactDomain && g.exact;
    acc.insert(acc.end(), g.reads.begin(), g.reads.end());
  }
  // The statement's own accesses: reads of the value, then the write.
  exprReads(s.value, acc);
  RawAccess w;
  w.write = true;
  if (s.kind == StmtKind::Assign) {
    const ExprP &lhs = s.lhs;
    w.key = tensorArray(lhs->tensor->id, lhs->tensor->name, lhs->leaf, true);
    w.indices = lhs->indices;
    w.expand = arrays_[w.key].expand;
    w.what = show(lhs);
    for (const Nat &i : lhs->indices) natReads(i, " (in the subscript of " + show(lhs) + ")", acc);
    if (s.compound) exprReads(lhs, acc);
    // An atomic update T[x] op= e commutes with every other atomic update of T with op.
    if (s.atomic && s.compound) {
      reduction = w.key;
      st.reductionOp = s.isMinMax ? (s.isMax ? "max" : "min") : ast::binOpToken(s.op);
      st.atomic = true;
    }
  } else {
    w.key = localArray(s.local);
    w.expand = arrays_[w.key].expand;
    w.what = "local %" + std::to_string(s.local);
    // Reductions: X = X op e (op reassociable: a reduce's), or integer X = min/max(X, e).
    const ExprP &v = s.value;
    if (s.kind == StmtKind::SetLocal && v && v->args.size() == 2) {
      bool reassoc = v->reassoc || (v->kind == ExprKind::MinMax && isInteger(v->type));
      for (int side = 0; side < 2 && reassoc; ++side) {
        const ExprP &a = v->args[side], &b = v->args[1 - side];
        if (a->kind == ExprKind::Local && a->local == s.local && !readsLocal(b, s.local)) {
          reduction = w.key;
          st.reductionOp = v->kind == ExprKind::MinMax ? (v->isMax ? "max" : "min") : ast::binOpToken(v->binop);
          break;
        }
      }
    }
  }
  // A reduction update reads its accumulator exactly once, in the combination (not in a
  // guard, a bound or a subscript).
  if (!reduction.empty()) {
    int reads = 0;
    for (const RawAccess &r : acc) reads += r.key == reduction;
    if (reads != 1) {
      reduction.clear();
      st.reductionOp.clear();
    }
  }
  acc.push_back(w);
  for (RawAccess &r : acc) {
    r.stmt = id;
    for (const Fact &f : facts_)
      if (f.alive) r.facts.push_back(f);
    raw_.push_back(r);
  }
  for (const LoopFrame &f : loops_) m_.loops[f.loop].statements.push_back(id);
  m_.statements.push_back(st);
  stmtConstraints_.push_back(constraints);
  stmtSchedule_.push_back(sched);
  stmtVars_.push_back(vars);
  stmtReduction_.push_back(reduction);
}

// ---- finishing ---------------------------------------------------------------------------------

std::optional<SegmentForm> ModelBuilder::segmentForm(const Nat &idx, const std::vector<Fact> &facts, const IterMap &it) const {
  auto below = [&](const Nat &x, const Nat &len) {
    if (!proveNonNegative(x, NatFacts{})) return false;
    for (const Fact &f : facts)
      if (f.x == x && f.bound == len) return true;
    return false;
  };
  // Offsets: O@e + x (- O@c).
  for (const Nat::Term &t : idx.terms()) {
    if (!(t.coeff == Rat(1)) || t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) continue;
    const NatAtom &a = *t.mono.factors[0].first;
    if (a.kind != NatAtomKind::Lookup || writtenTensors_.count(a.var.id)) continue;
    if (!affineText(a.args[0], it)) continue;
    Nat rest = idx - Nat::lookup(a.var, a.args[0]);
    std::string base;
    for (const Nat::Term &u : rest.terms()) {
      if (!(u.coeff == Rat(-1)) || u.mono.factors.size() != 1 || u.mono.factors[0].second != 1) continue;
      const NatAtom &b = *u.mono.factors[0].first;
      if (b.kind == NatAtomKind::Lookup && b.var.id == a.var.id && invariant(b.args[0])) {
        base = b.args[0].key();
        rest = rest + Nat::lookup(a.var, b.args[0]);
        break;
      }
    }
    // x is bounded by a loop or guard whose extent is the segment of O below e.
    bool inSegment = proveNonNegative(rest, NatFacts{}) && std::any_of(facts.begin(), facts.end(), [&](const Fact &f) {
      std::optional<cin::SegmentLevel> seg = cin::segmentOfExtent(Nat(0), f.bound);
      return f.x == rest && seg && !seg->lengths && seg->array.id == a.var.id && seg->parent == a.args[0];
    });
    if (!inSegment) continue;
    return SegmentForm{"offsets:" + std::to_string(a.var.id) + "|" + base, a.var.name, a.args[0], rest};
  }
  // Uniform: P*e + x, P an invariant atom (a nat parameter, a lookup at an invariant index).
  for (const Nat::Term &t : idx.terms()) {
    if (t.mono.factors.size() < 2 && !(t.mono.factors.size() == 1 && t.mono.factors[0].second > 1)) continue;
    for (const auto &[atom, power] : t.mono.factors) {
      std::set<int64_t> none;
      if (atom->kind != NatAtomKind::Var && atom->kind != NatAtomKind::Lookup) continue;
      if (!invariantAtom(*atom, none)) continue;
      Nat p = Nat::fromAtom(atom);
      std::vector<Nat::Term> with;
      for (const Nat::Term &u : idx.terms())
        for (const auto &f : u.mono.factors)
          if (f.first->key == atom->key) with.push_back(u);
      Nat withP = Nat::fromTerms(with);
      std::optional<Nat> e = Nat::divideExact(withP, p);
      if (!e || !affineText(*e, it)) continue;
      Nat x = idx - withP;
      if (!below(x, p)) continue;
      return SegmentForm{"uniform:" + p.key(), p.str(), *e, x};
    }
  }
  // Closed form: F(e) + x, F a polynomial in one loop variable e and invariant atoms that is not
  // affine (a packed triangle's column j starts at j*(j+1)/2, or at j*n + j - j*(j+1)/2 for the
  // lower one), 0 <= x < L for a loop's or guard's bound L over e and invariant atoms, and
  // F(e + 1) - F(e) >= L proved: segment e ends where segment e + 1 starts, or before.
  for (const auto &[id, dim] : it) {
    const std::set<int64_t> onlyE{id};
    std::vector<Nat::Term> fTerms;
    for (const Nat::Term &t : idx.terms())
      if (invariant(Nat::fromTerms({t}), onlyE)) fTerms.push_back(t);
    const Nat f = Nat::fromTerms(fTerms), x = idx - f;
    if (!f.mentions(id) || affineText(f, it) || !proveNonNegative(x, NatFacts{})) continue;
    const NatVarId e{id, dim};
    NatSubst next;
    next.vars[id] = Nat::var(e) + Nat(1);
    const Nat step = substitute(f, next) - f;
    // F must not decrease over e's range either: a segment left empty (L <= 0) between two
    // others could otherwise step back into the first.
    NatFacts range;
    for (const Fact &fact : facts)
      if (fact.x == Nat::var(e)) range.ranges.push_back({id, Nat(0), fact.bound});
    if (!proveNonNegative(step, range)) continue;
    for (const Fact &fact : facts) {
      if (!(fact.x == x) || !invariant(fact.bound, onlyE)) continue;
      if (!proveNonNegative(step - fact.bound, NatFacts{})) continue;
      return SegmentForm{"closed:" + f.key(), show(f), Nat::var(e), x};
    }
  }
  return std::nullopt;
}

void ModelBuilder::decideSegments() {
  for (auto &[key, arr] : arrays_) {
    if (arr.isLocal) continue;
    bool ok = true, any = false;
    std::string part, by;
    for (const RawAccess &r : raw_) {
      if (r.key != key) continue;
      if (r.indices.empty()) {
        ok = false;
        break;
      }
      IterMap it;
      for (size_t d = 0; d < stmtVars_[r.stmt].size(); ++d) it[stmtVars_[r.stmt][d]] = m_.statements[r.stmt].dims[d];
      auto sf = segmentForm(r.indices.back(), r.facts, it);
      if (!sf || (any && sf->key != part)) {
        ok = false;
        break;
      }
      part = sf->key;
      by = sf->by;
      any = true;
    }
    if (ok && any) {
      arr.segmented = true;
      arr.segKey = part;
      arr.segBy = by;
    }
  }
}

void ModelBuilder::translateAccesses() {
  // Array dimensions and indices.
  for (const RawAccess &r : raw_) {
    ArrayInfo &a = arrays_[r.key];
    a.baseDims = std::max(a.baseDims, static_cast<int>(r.indices.size()));
  }
  for (const std::string &key : arrayOrder_) {
    ArrayInfo &a = arrays_[key];
    a.index = static_cast<int>(m_.arrays.size());
    PolyArray pa;
    pa.name = a.name;
    pa.what = a.what;
    pa.isLocal = a.isLocal;
    pa.local = a.local;
    pa.tensor = a.isLocal ? 0 : a.tensorId;
    pa.dims = a.expand + a.baseDims + (a.segmented ? 1 : 0);
    if (a.segmented) pa.segmentedBy = a.segBy;
    m_.arrays.push_back(pa);
  }
  for (const RawAccess &r : raw_) {
    PolyStatement &st = m_.statements[r.stmt];
    const ArrayInfo &a = arrays_[r.key];
    IterMap it;
    for (size_t d = 0; d < stmtVars_[r.stmt].size(); ++d) it[stmtVars_[r.stmt][d]] = st.dims[d];
    std::vector<std::string> outs;
    bool exact = true;
    int fresh = 0;
    auto whole = [&]() {
      outs.push_back("_w" + std::to_string(fresh++));
      exact = false;
    };
    for (int d = 0; d < a.expand; ++d) outs.push_back(st.dims.at(d));
    for (size_t d = 0; d < r.indices.size(); ++d) {
      if (a.segmented && d + 1 == r.indices.size()) {
        auto sf = segmentForm(r.indices[d], r.facts, it);
        internal_assert(sf && sf->key == a.segKey) << "segment form vanished";
        outs.push_back(*affineText(sf->e, it));
        auto [x, xExact] = indexText(sf->x, it);
        if (x) outs.push_back(*x);
        else whole();
        exact = exact && xExact;
        continue;
      }
      auto [t, tExact] = indexText(r.indices[d], it);
      if (t) outs.push_back(*t);
      else whole();
      exact = exact && tExact;
    }
    for (size_t d = r.indices.size(); d < static_cast<size_t>(a.baseDims); ++d) whole();
    PolyAccess pa;
    pa.write = r.write;
    pa.must = r.write && st.exactDomain && exact;
    pa.array = a.index;
    pa.relation = "{ " + st.name + "[" + join(st.dims, ", ") + "] -> " + a.name + "[" + join(outs, ", ") + "] }";
    pa.what = r.what;
    auto same = std::find_if(st.accesses.begin(), st.accesses.end(), [&](const PolyAccess &o) {
      return !o.write && !pa.write && o.relation == pa.relation;
    });
    if (same != st.accesses.end()) {
      if (same->what.find(pa.what) == std::string::npos) same->what += "; " + pa.what;
      continue;
    }
    st.accesses.push_back(pa);
  }
  for (size_t i = 0; i < m_.statements.size(); ++i)
    if (!stmtReduction_[i].empty()) m_.statements[i].reductionArray = arrays_[stmtReduction_[i]].index;
}

void ModelBuilder::finishTexts() {
  std::vector<std::string> names;
  for (const PolyParam &p : m_.params) names.push_back(p.name);
  m_.paramSpace = "[" + join(names, ", ") + "]";
  size_t depth = 0;
  for (const PolyStatement &st : m_.statements) depth = std::max(depth, st.dims.size());
  m_.scheduleDims = static_cast<int>(2 * depth + 1);
  std::string prefix = m_.paramSpace + " -> ";
  for (size_t i = 0; i < m_.statements.size(); ++i) {
    PolyStatement &st = m_.statements[i];
    std::string tuple = st.name + "[" + join(st.dims, ", ") + "]";
    const auto &c = stmtConstraints_[i];
    st.domain = prefix + "{ " + tuple + (c.empty() ? "" : " : " + join(c, " and ")) + " }";
    std::vector<std::string> sched;
    size_t d = 0;
    for (int v : stmtSchedule_[i]) sched.push_back(v == -1 ? st.dims[d++] : std::to_string(v));
    while (sched.size() < static_cast<size_t>(m_.scheduleDims)) sched.push_back("0");
    st.schedule = prefix + "{ " + tuple + " -> [" + join(sched, ", ") + "] }";
    for (PolyAccess &a : st.accesses) a.relation = prefix + a.relation;
  }
}

/// Reads every text back with isl (a check that the texts are well formed) and keeps isl's
/// simplified form.
void ModelBuilder::canonicalize() {
  IslContext owner(kCanonicalQuota);
  {
    isl::ctx ctx = owner.ctx();
    auto norm = [&](std::string &text, bool isSet) {
      try {
        text = isSet ? islText(isl::set(ctx, text).coalesce()) : islText(isl::map(ctx, text).coalesce());
      } catch (const isl::exception_quota &) {
        owner.resetOperations();
      } catch (const isl::exception &e) {
        internal_error << "isl cannot read the polyhedral model text '" << text << "': " << e.what();
      }
    };
    for (PolyStatement &st : m_.statements) {
      norm(st.domain, true);
      norm(st.schedule, false);
      for (PolyAccess &a : st.accesses) norm(a.relation, false);
    }
  }
}

PolyModel ModelBuilder::build() {
  m_.kernel = k_.name;
  for (const cin::TensorP &t : k_.tensors)
    if (t) tensors_[t->id] = t;
  for (const cin::KernelParam &p : k_.params)
    if ((p.abi.role == tir::AbiParam::Nat || p.abi.role == tir::AbiParam::Count) && p.natVar) {
      std::string nm = sanitize(p.abi.name);
      while (reserved_.count(nm)) nm += "_";
      natParams_[p.natVar] = nm;
      reserved_.insert(nm);
      PolyParam pp;
      pp.kind = PolyParam::NatParam;
      pp.name = nm;
      pp.meaning = "nat parameter " + p.abi.name;
      m_.params.push_back(pp);
    }
  prescan(k_.body);
  visit(k_.body);
  decideSegments();
  translateAccesses();
  finishTexts();
  canonicalize();
  for (const PolyParam &p : m_.params) {
    if (p.kind == PolyParam::Invariant)
      m_.notes.push_back(p.name + " = " + p.meaning + " (a loop-invariant run-time value; exact)");
    if (p.kind == PolyParam::UpperBound)
      m_.notes.push_back(p.name + " >= " + p.meaning + " in every iteration (a data-dependent upper bound; the domains "
                                                       "using it are over-approximated)");
    if (p.kind == PolyParam::LowerBound)
      m_.notes.push_back(p.name + " <= " + p.meaning + " in every iteration (a data-dependent lower bound; the domains "
                                                       "using it are over-approximated)");
  }
  for (const PolyArray &a : m_.arrays)
    if (!a.segmentedBy.empty())
      m_.notes.push_back(a.name + " is indexed by [segment, offset] within its last level, segments given by " +
                         a.segmentedBy);
  return m_;
}

}  // namespace

PolyModel buildPolyModel(const cin::Kernel &k) {
  ModelBuilder b(k);
  return b.build();
}

std::string print(const PolyModel &m) {
  TextOut out;
  out("  parameters {}\n", m.paramSpace);
  for (const std::string &n : m.notes) out("    {}\n", n);
  out("  arrays\n");
  for (const PolyArray &a : m.arrays) out("    {} ({}d): {}\n", a.name, a.dims, a.what);
  out("  statements\n");
  for (const PolyStatement &st : m.statements) {
    out("    {}: {}\n", st.name, st.text);
    out("      domain    {}{}\n", st.domain, st.exactDomain ? "" : "  (over-approximated)");
    out("      schedule  {}\n", st.schedule);
    for (const PolyAccess &a : st.accesses)
      out("      {}  {}   # {}\n", a.write ? (a.must ? "must-write" : "may-write ") : "read      ", a.relation, a.what);
    if (st.reductionArray >= 0)
      out("      {} update of {} with {}\n", st.atomic ? "atomic" : "reduction", m.arrays[st.reductionArray].name, st.reductionOp);
  }
  return out.str();
}

}  // namespace spl::poly
