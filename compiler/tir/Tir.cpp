/// \file Tir.cpp: helpers and the printer of the typed IR.
#include "tir/Tir.h"

#include <sstream>

namespace spl::tir {

VarP makeVar(const std::string &name, TypeP type) {
  auto v = std::make_shared<Var>();
  v->id = freshNatVar(name).id;
  v->name = name;
  v->type = std::move(type);
  return v;
}

namespace {
enum class PrimSort { Plain, MapCpu, MapGpu };
struct PrimInfo {
  const char *name;
  int arity;
  PrimSort sort;
};
/// Indexed by tir::Prim.
const PrimInfo kPrimitives[] = {
#define SPL_PRIMITIVE(Enum, name, arity, sort, typeRule, lowerRule) {name, arity, PrimSort::sort},
#include "tir/Primitives.def"
};
const std::pair<const char *, Prim> kAliases[] = {
#define SPL_PRIMITIVE(Enum, name, arity, sort, typeRule, lowerRule)
#define SPL_PRIMITIVE_ALIAS(name, Enum) {name, Prim::Enum},
#include "tir/Primitives.def"
};
const PrimInfo &info(Prim p) { return kPrimitives[static_cast<size_t>(p)]; }
}  // namespace

const char *primName(Prim p) { return info(p).name; }
int primArity(Prim p) { return info(p).arity; }
bool isMapLike(Prim p) { return info(p).sort != PrimSort::Plain; }
bool isGpuMap(Prim p) { return info(p).sort == PrimSort::MapGpu; }

std::optional<Prim> primByName(const std::string &name) {
  for (size_t k = 0; k < sizeof kPrimitives / sizeof kPrimitives[0]; ++k)
    if (name == kPrimitives[k].name) return static_cast<Prim>(k);
  for (const auto &[alias, p] : kAliases)
    if (name == alias) return p;
  return std::nullopt;
}

TypeP substituteTypeVars(const TypeP &t, const std::map<int64_t, TypeP> &m) {
  if (m.empty()) return t;
  switch (t->kind) {
    case TypeKind::Var: {
      auto it = m.find(t->id);
      return it == m.end() ? t : it->second;
    }
    case TypeKind::Scalar:
    case TypeKind::Idx:
    case TypeKind::Meta: return t;
    case TypeKind::Array: return types::array(t->len, t->binder, substituteTypeVars(t->elems[0], m), t->packed);
    case TypeKind::Tuple: {
      std::vector<TypeP> es;
      for (const TypeP &e : t->elems) es.push_back(substituteTypeVars(e, m));
      return types::tuple(std::move(es));
    }
    case TypeKind::DepPair: return types::depPair(t->binder, t->pairOverNats, substituteTypeVars(t->elems[0], m));
    case TypeKind::Fun: {
      std::vector<FunParam> ps = t->params;
      for (FunParam &p : ps)
        if (!p.isNat) p.type = substituteTypeVars(p.type, m);
      return types::fun(std::move(ps), substituteTypeVars(t->elems[0], m));
    }
  }
  return t;
}

namespace {

void print(std::ostringstream &os, const ExprP &e, int indent);

void line(std::ostringstream &os, int indent) {
  os << "\n";
  for (int i = 0; i < indent; ++i) os << "  ";
}

std::string paramStr(const Param &p) {
  switch (p.sort) {
    case Param::Value: return p.var->name;
    case Param::Nat: return p.natVar.name + ": nat";
    case Param::Nats: return p.natVar.name + ": nats";
  }
  return "?";
}

void print(std::ostringstream &os, const ExprP &e, int indent) {
  switch (e->kind) {
    case ExprKind::Lit: {
      TypeP t = e->type;
      if (t->kind == TypeKind::Scalar && t->scalar == ScalarKind::Bool) os << (e->bval ? "true" : "false");
      else if (t->kind == TypeKind::Scalar && isFloat(t->scalar)) os << e->fval;
      else os << e->ival;
      os << ":" << types::str(t);
      return;
    }
    case ExprKind::VarRef: os << e->var->name; return;
    case ExprKind::NatValue: os << "nat(" << e->nat.str() << ")"; return;
    case ExprKind::Lambda:
      os << "(";
      for (size_t i = 0; i < e->params.size(); ++i) os << (i ? " => " : "") << paramStr(e->params[i]);
      os << " =>";
      line(os, indent + 1);
      print(os, e->args[0], indent + 1);
      os << ")";
      return;
    case ExprKind::App:
      print(os, e->args[0], indent);
      os << "(";
      for (size_t i = 1; i < e->args.size(); ++i) {
        if (i > 1) os << ", ";
        print(os, e->args[i], indent);
      }
      os << ")";
      return;
    case ExprKind::Let:
      os << "let " << e->var->name << " = ";
      print(os, e->args[0], indent);
      os << ";";
      line(os, indent);
      print(os, e->args[1], indent);
      return;
    case ExprKind::If:
      os << "(if ";
      print(os, e->args[0], indent);
      os << " then ";
      print(os, e->args[1], indent);
      os << " else ";
      print(os, e->args[2], indent);
      os << ")";
      return;
    case ExprKind::Tuple:
      os << "(";
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (i) os << ", ";
        print(os, e->args[i], indent);
      }
      os << ")";
      return;
    case ExprKind::Proj:
      print(os, e->args[0], indent);
      os << "." << e->proj;
      return;
    case ExprKind::Index:
      print(os, e->args[0], indent);
      os << "@";
      print(os, e->args[1], indent);
      return;
    case ExprKind::Unary:
      os << (e->unop == ast::UnOp::Neg ? "-" : "!");
      print(os, e->args[0], indent);
      return;
    case ExprKind::Binary:
      os << "(";
      print(os, e->args[0], indent);
      os << " " << ast::binOpToken(e->binop) << " ";
      print(os, e->args[1], indent);
      os << ")";
      return;
    case ExprKind::Convert:
      os << types::str(e->type) << "(";
      print(os, e->args[0], indent);
      os << ")";
      return;
    case ExprKind::MinMax:
      os << (e->isMax ? "max(" : "min(");
      print(os, e->args[0], indent);
      os << ", ";
      print(os, e->args[1], indent);
      os << ")";
      return;
    case ExprKind::Prim: {
      os << primName(e->prim);
      bool first = true;
      os << "(";
      for (const Nat &n : e->natArgs) {
        os << (first ? "" : ", ") << n.str();
        first = false;
      }
      if (e->natsArgIsSet) {
        os << (first ? "" : ", ") << e->natsArg.name;
        first = false;
      }
      for (const ExprP &a : e->args) {
        if (!first) os << ", ";
        first = false;
        print(os, a, indent);
      }
      os << ")";
      return;
    }
    case ExprKind::CallDef: {
      os << e->def->name << "(";
      bool first = true;
      for (const CallArg &a : e->callArgs) {
        if (!first) os << ", ";
        first = false;
        switch (a.sort) {
          case CallArg::Nat: os << a.nat.str(); break;
          case CallArg::Nats: os << a.nats.name; break;
          case CallArg::Data: os << types::str(a.type); break;
          case CallArg::Value: print(os, a.value, indent); break;
        }
      }
      os << ")";
      return;
    }
    case ExprKind::Einsum: os << "einsum " << e->einsum->outName << "[...]"; return;
  }
}

}  // namespace

std::string printExpr(const ExprP &e) {
  std::ostringstream os;
  print(os, e, 0);
  return os.str();
}

}  // namespace spl::tir
