/// \file Type.cpp: constructors, substitution, alpha-equality and printing of data types.
#include "types/Type.h"

#include <map>

namespace spl {

const char *scalarName(ScalarKind k) {
  switch (k) {
    case ScalarKind::F32: return "f32";
    case ScalarKind::F64: return "f64";
    case ScalarKind::I32: return "i32";
    case ScalarKind::I64: return "i64";
    case ScalarKind::Bool: return "bool";
  }
  return "?";
}

std::optional<ScalarKind> scalarByName(const std::string &n) {
  if (n == "f32") return ScalarKind::F32;
  if (n == "f64") return ScalarKind::F64;
  if (n == "i32") return ScalarKind::I32;
  if (n == "i64") return ScalarKind::I64;
  if (n == "bool") return ScalarKind::Bool;
  return std::nullopt;
}

namespace types {

namespace {
TypeP mk(Type t) { return std::make_shared<const Type>(std::move(t)); }
}  // namespace

TypeP scalar(ScalarKind k) {
  static const std::vector<TypeP> shared = [] {
    std::vector<TypeP> made;
    for (ScalarKind each : {ScalarKind::F32, ScalarKind::F64, ScalarKind::I32, ScalarKind::I64, ScalarKind::Bool}) {
      Type t;
      t.kind = TypeKind::Scalar;
      t.scalar = each;
      made.push_back(mk(std::move(t)));
    }
    return made;
  }();
  return shared[static_cast<size_t>(k)];
}

TypeP idx(const Nat &bound) {
  Type t;
  t.kind = TypeKind::Idx;
  t.len = bound;
  return mk(std::move(t));
}

TypeP array(const Nat &len, const NatVarId &binder, TypeP elem, bool packed) {
  Type t;
  t.kind = TypeKind::Array;
  t.len = len;
  t.binder = binder;
  t.elems = {std::move(elem)};
  t.packed = packed;
  return mk(std::move(t));
}

TypeP array(const Nat &len, TypeP elem, bool packed) { return array(len, freshNatVar("i"), std::move(elem), packed); }

TypeP tuple(std::vector<TypeP> elems) {
  Type t;
  t.kind = TypeKind::Tuple;
  t.elems = std::move(elems);
  return mk(std::move(t));
}

TypeP depPair(const NatVarId &binder, bool overNats, TypeP body) {
  Type t;
  t.kind = TypeKind::DepPair;
  t.binder = binder;
  t.pairOverNats = overNats;
  t.elems = {std::move(body)};
  return mk(std::move(t));
}

TypeP var(const std::string &name, int64_t id, Type::Numeric numeric) {
  Type t;
  t.kind = TypeKind::Var;
  t.name = name;
  t.id = id;
  t.numeric = numeric;
  return mk(std::move(t));
}

TypeP meta(int64_t id, Type::Numeric numeric, const std::string &name) {
  Type t;
  t.kind = TypeKind::Meta;
  t.id = id;
  t.numeric = numeric;
  t.name = name;
  return mk(std::move(t));
}

TypeP fun(std::vector<FunParam> params, TypeP result) {
  Type t;
  t.kind = TypeKind::Fun;
  t.params = std::move(params);
  t.elems = {std::move(result)};
  return mk(std::move(t));
}

bool mentions(const TypeP &t, int64_t id) {
  switch (t->kind) {
    case TypeKind::Scalar:
    case TypeKind::Var:
    case TypeKind::Meta: return false;
    case TypeKind::Idx: return t->len.mentions(id);
    case TypeKind::Array:
      if (t->len.mentions(id)) return true;
      return t->binder.id != id && mentions(t->elems[0], id);
    case TypeKind::Tuple:
      for (const TypeP &e : t->elems)
        if (mentions(e, id)) return true;
      return false;
    case TypeKind::DepPair: return t->binder.id != id && mentions(t->elems[0], id);
    case TypeKind::Fun:
      for (const FunParam &p : t->params) {
        if (p.isNat && p.natVar.id == id) return false;
        if (!p.isNat && mentions(p.type, id)) return true;
      }
      return mentions(t->elems[0], id);
  }
  return false;
}

bool isDependent(const Type &a) { return a.kind == TypeKind::Array && mentions(a.elems[0], a.binder.id); }

namespace {

/// Would substituting s under a binder capture it (some replacement mentions the binder)?
bool captures(const NatSubst &s, int64_t binder) {
  for (const auto &[id, n] : s.vars)
    if (n.mentions(binder)) return true;
  for (const auto &[id, a] : s.arrays)
    if (a.id == binder) return true;
  return false;
}

/// Substitution under a binder: drop the binder from s, and rename the binder if needed.
NatVarId underBinder(const NatVarId &binder, const NatSubst &s, NatSubst &inner) {
  inner = s;
  inner.vars.erase(binder.id);
  inner.arrays.erase(binder.id);
  inner.arrayFns.erase(binder.id);
  if (!captures(inner, binder.id)) return binder;
  NatVarId fresh = freshNatVar(binder.name);
  inner.vars.emplace(binder.id, Nat::var(fresh));
  inner.arrays.emplace(binder.id, fresh);
  return fresh;
}

}  // namespace

TypeP substitute(const TypeP &t, const NatSubst &s) {
  if (s.empty()) return t;
  // Each case keeps t when nothing below it changed: types are shared, never copied for nothing.
  switch (t->kind) {
    case TypeKind::Scalar:
    case TypeKind::Var:
    case TypeKind::Meta: return t;
    case TypeKind::Idx: {
      Nat len = spl::substitute(t->len, s);
      return len.identical(t->len) ? t : idx(len);
    }
    case TypeKind::Array: {
      NatSubst inner;
      NatVarId b = underBinder(t->binder, s, inner);
      Nat len = spl::substitute(t->len, s);
      TypeP elem = substitute(t->elems[0], inner);
      if (b.id == t->binder.id && len.identical(t->len) && elem == t->elems[0]) return t;
      return array(len, b, std::move(elem), t->packed);
    }
    case TypeKind::Tuple: {
      std::vector<TypeP> es;
      bool same = true;
      for (const TypeP &e : t->elems) {
        es.push_back(substitute(e, s));
        same = same && es.back() == e;
      }
      return same ? t : tuple(std::move(es));
    }
    case TypeKind::DepPair: {
      NatSubst inner;
      NatVarId b = underBinder(t->binder, s, inner);
      TypeP body = substitute(t->elems[0], inner);
      if (b.id == t->binder.id && body == t->elems[0]) return t;
      return depPair(b, t->pairOverNats, std::move(body));
    }
    case TypeKind::Fun: {
      NatSubst inner = s;
      std::vector<FunParam> ps;
      bool same = true;
      for (const FunParam &p : t->params) {
        FunParam q = p;
        if (p.isNat) {
          NatSubst next;
          q.natVar = underBinder(p.natVar, inner, next);
          inner = next;
          same = same && q.natVar.id == p.natVar.id;
        } else {
          q.type = substitute(p.type, inner);
          same = same && q.type == p.type;
        }
        ps.push_back(q);
      }
      TypeP result = substitute(t->elems[0], inner);
      if (same && result == t->elems[0]) return t;
      return fun(std::move(ps), std::move(result));
    }
  }
  return t;
}

TypeP elementAt(const Type &a, const Nat &pos) {
  NatSubst s;
  s.vars.emplace(a.binder.id, pos);
  return substitute(a.elems[0], s);
}

namespace {

bool equalWith(const TypeP &a, const TypeP &b, NatSubst &ren) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case TypeKind::Scalar: return a->scalar == b->scalar;
    case TypeKind::Var:
    case TypeKind::Meta: return a->id == b->id;
    case TypeKind::Idx: return spl::substitute(a->len, ren) == spl::substitute(b->len, ren);
    case TypeKind::Array: {
      if (a->packed != b->packed) return false;
      if (spl::substitute(a->len, ren) != spl::substitute(b->len, ren)) return false;
      NatSubst inner = ren;
      inner.vars.erase(a->binder.id);
      inner.vars[b->binder.id] = Nat::var(a->binder);
      return equalWith(a->elems[0], b->elems[0], inner);
    }
    case TypeKind::Tuple:
      if (a->elems.size() != b->elems.size()) return false;
      for (size_t i = 0; i < a->elems.size(); ++i)
        if (!equalWith(a->elems[i], b->elems[i], ren)) return false;
      return true;
    case TypeKind::DepPair: {
      if (a->pairOverNats != b->pairOverNats) return false;
      NatSubst inner = ren;
      inner.vars.erase(a->binder.id);
      inner.arrays.erase(a->binder.id);
      inner.vars[b->binder.id] = Nat::var(a->binder);
      inner.arrays[b->binder.id] = a->binder;
      return equalWith(a->elems[0], b->elems[0], inner);
    }
    case TypeKind::Fun: {
      if (a->params.size() != b->params.size()) return false;
      NatSubst inner = ren;
      for (size_t i = 0; i < a->params.size(); ++i) {
        const FunParam &p = a->params[i], &q = b->params[i];
        if (p.isNat != q.isNat) return false;
        if (p.isNat) inner.vars[q.natVar.id] = Nat::var(p.natVar);
        else if (!equalWith(p.type, q.type, inner)) return false;
      }
      return equalWith(a->elems[0], b->elems[0], inner);
    }
  }
  return false;
}

std::string lenStr(const Nat &n) {
  std::string s = n.str();
  bool atomic = n.asConst() || n.asVar();
  if (!atomic && n.terms().size() == 1 && n.terms()[0].coeff == Rat(1) && n.terms()[0].mono.factors.size() == 1 &&
      n.terms()[0].mono.factors[0].second == 1) {
    NatAtomKind k = n.terms()[0].mono.factors[0].first->kind;
    atomic = k == NatAtomKind::Lookup || k == NatAtomKind::Min || k == NatAtomKind::Max || k == NatAtomKind::Value;
  }
  return atomic ? s : "(" + s + ")";
}

}  // namespace

bool equal(const TypeP &a, const TypeP &b) {
  NatSubst ren;
  return equalWith(a, b, ren);
}

std::string str(const TypeP &t) {
  switch (t->kind) {
    case TypeKind::Scalar: return scalarName(t->scalar);
    case TypeKind::Idx: return "idx[" + t->len.str() + "]";
    case TypeKind::Array: {
      std::string prefix = t->packed ? "packed " : "";
      if (isDependent(*t)) return prefix + lenStr(t->len) + "..(" + t->binder.name + " => " + str(t->elems[0]) + ")";
      return prefix + lenStr(t->len) + "." + str(t->elems[0]);
    }
    case TypeKind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < t->elems.size(); ++i) s += (i ? ", " : "") + str(t->elems[i]);
      return s + ")";
    }
    case TypeKind::DepPair:
      return "(" + t->binder.name + ": " + (t->pairOverNats ? "nats" : "nat") + " ** " + str(t->elems[0]) + ")";
    case TypeKind::Var: return t->name;
    case TypeKind::Meta:
      if (t->numeric == Type::IntLiteral) return "{integer}";
      if (t->numeric == Type::FloatLiteral) return "{float}";
      return t->name.empty() ? "?" + std::to_string(t->id) : "?" + t->name;
    case TypeKind::Fun: {
      std::string s = "(";
      for (size_t i = 0; i < t->params.size(); ++i) {
        if (i) s += ", ";
        s += t->params[i].isNat ? t->params[i].natVar.name + ": nat" : str(t->params[i].type);
      }
      return s + ") -> " + str(t->elems[0]);
    }
  }
  return "?";
}

}  // namespace types
}  // namespace spl
