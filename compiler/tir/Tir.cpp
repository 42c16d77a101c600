/// \file Tir.cpp: helpers and the printer of the typed IR.
#include "tir/Tir.h"

#include "support/Format.h"

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

void print(TextOut &out, const ExprP &e, int indent);

void line(TextOut &out, int indent) { out("\n{}", std::string(indent * 2, ' ')); }

std::string paramStr(const Param &p) {
  switch (p.sort) {
    case Param::Value: return p.var->name;
    case Param::Nat: return p.natVar.name + ": nat";
    case Param::Nats: return p.natVar.name + ": nats";
  }
  return "?";
}

/// e's parts separated by ", ".
void printList(TextOut &out, const std::vector<ExprP> &parts, size_t from, int indent) {
  for (size_t i = from; i < parts.size(); ++i) {
    if (i > from) out(", ");
    print(out, parts[i], indent);
  }
}

void print(TextOut &out, const ExprP &e, int indent) {
  switch (e->kind) {
    case ExprKind::Lit: {
      TypeP t = e->type;
      if (t->kind == TypeKind::Scalar && t->scalar == ScalarKind::Bool) out("{}", e->bval ? "true" : "false");
      else if (t->kind == TypeKind::Scalar && isFloat(t->scalar)) out("{:g}", e->fval);
      else out("{}", e->ival);
      out(":{}", types::str(t));
      return;
    }
    case ExprKind::VarRef: out("{}", e->var->name); return;
    case ExprKind::NatValue: out("nat({})", e->nat.str()); return;
    case ExprKind::Lambda:
      out("(");
      for (size_t i = 0; i < e->params.size(); ++i) out("{}{}", i ? " => " : "", paramStr(e->params[i]));
      out(" =>");
      line(out, indent + 1);
      print(out, e->args[0], indent + 1);
      out(")");
      return;
    case ExprKind::App:
      print(out, e->args[0], indent);
      out("(");
      printList(out, e->args, 1, indent);
      out(")");
      return;
    case ExprKind::Let:
      out("let {} = ", e->var->name);
      print(out, e->args[0], indent);
      out(";");
      line(out, indent);
      print(out, e->args[1], indent);
      return;
    case ExprKind::If:
      out("(if ");
      print(out, e->args[0], indent);
      out(" then ");
      print(out, e->args[1], indent);
      out(" else ");
      print(out, e->args[2], indent);
      out(")");
      return;
    case ExprKind::Tuple:
      out("(");
      printList(out, e->args, 0, indent);
      out(")");
      return;
    case ExprKind::Proj:
      print(out, e->args[0], indent);
      out(".{}", e->proj);
      return;
    case ExprKind::Index:
      print(out, e->args[0], indent);
      out("@");
      print(out, e->args[1], indent);
      return;
    case ExprKind::Unary:
      out("{}{}", ast::unOpToken(e->unop), ast::isPrefixOp(e->unop) ? "" : "(");
      print(out, e->args[0], indent);
      if (!ast::isPrefixOp(e->unop)) out(")");
      return;
    case ExprKind::Binary:
      out("(");
      print(out, e->args[0], indent);
      out(" {} ", ast::binOpToken(e->binop));
      print(out, e->args[1], indent);
      out(")");
      return;
    case ExprKind::Convert:
      out("{}(", types::str(e->type));
      print(out, e->args[0], indent);
      out(")");
      return;
    case ExprKind::MinMax:
      out("{}(", e->isMax ? "max" : "min");
      print(out, e->args[0], indent);
      out(", ");
      print(out, e->args[1], indent);
      out(")");
      return;
    case ExprKind::Prim: {
      out("{}(", primName(e->prim));
      bool first = true;
      for (const Nat &n : e->natArgs) {
        out("{}{}", first ? "" : ", ", n.str());
        first = false;
      }
      if (e->natsArgIsSet) {
        out("{}{}", first ? "" : ", ", e->natsArg.name);
        first = false;
      }
      for (const ExprP &a : e->args) {
        if (!first) out(", ");
        first = false;
        print(out, a, indent);
      }
      out(")");
      return;
    }
    case ExprKind::CallDef: {
      out("{}(", e->def->name);
      bool first = true;
      for (const CallArg &a : e->callArgs) {
        if (!first) out(", ");
        first = false;
        switch (a.sort) {
          case CallArg::Nat: out("{}", a.nat.str()); break;
          case CallArg::Nats: out("{}", a.nats.name); break;
          case CallArg::Data: out("{}", types::str(a.type)); break;
          case CallArg::Value: print(out, a.value, indent); break;
        }
      }
      out(")");
      return;
    }
    case ExprKind::Einsum: out("einsum {}[...]", e->einsum->outName); return;
  }
}

}  // namespace

std::string printExpr(const ExprP &e) {
  TextOut out;
  print(out, e, 0);
  return out.str();
}

}  // namespace spl::tir
