/// \file AstPrinter.cpp: deterministic tree dump of the AST (`--emit=ast`).
#include "ast/AstPrinter.h"

#include <sstream>

namespace spl::ast {

const char *kindName(Kind k) {
  switch (k) {
    case Kind::Nat: return "nat";
    case Kind::Nats: return "nats";
    case Kind::Data: return "data";
  }
  return "?";
}

const char *gpuRowMappingName(GpuRowMapping m) {
  switch (m) {
    case GpuRowMapping::Auto: return "auto";
    case GpuRowMapping::Thread: return "thread";
    case GpuRowMapping::Vector: return "vector";
    case GpuRowMapping::Merge: return "merge";
    case GpuRowMapping::Compact: return "compact";
  }
  return "?";
}

bool gpuRowMappingFromName(const std::string &name, GpuRowMapping &out) {
  for (GpuRowMapping m : {GpuRowMapping::Auto, GpuRowMapping::Thread, GpuRowMapping::Vector, GpuRowMapping::Merge,
                          GpuRowMapping::Compact})
    if (name == gpuRowMappingName(m)) {
      out = m;
      return true;
    }
  return false;
}

std::string GpuRowKnobs::str() const {
  std::string s;
  if (lanes) s += " lanes=" + std::to_string(lanes);
  if (mergeReads) s += " merge_reads=" + std::to_string(mergeReads);
  if (mergeBlocksPerSm) s += " blocks_per_sm=" + std::to_string(mergeBlocksPerSm);
  return s;
}

GpuRowKnobs GpuRowKnobs::common(const GpuRowKnobs &o) const {
  GpuRowKnobs k;
  k.lanes = lanes == o.lanes ? lanes : 0;
  k.mergeReads = mergeReads == o.mergeReads ? mergeReads : 0;
  k.mergeBlocksPerSm = mergeBlocksPerSm == o.mergeBlocksPerSm ? mergeBlocksPerSm : 0;
  k.mergeLoc = mergeLoc;
  return k;
}

const char *binOpToken(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::Mod: return "%";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::And: return "&&";
    case BinOp::Or: return "||";
  }
  return "?";
}

namespace {

const char *natOpToken(NatOp op) {
  switch (op) {
    case NatOp::Add: return "+";
    case NatOp::Sub: return "-";
    case NatOp::Mul: return "*";
    case NatOp::Div: return "/";
    case NatOp::Mod: return "%";
    case NatOp::Eq: return "==";
    case NatOp::Ne: return "!=";
    case NatOp::Lt: return "<";
    case NatOp::Le: return "<=";
    case NatOp::Gt: return ">";
    case NatOp::Ge: return ">=";
    case NatOp::And: return "&&";
    case NatOp::Or: return "||";
    default: return "?";
  }
}

std::string locStr(SourceLoc l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

void printTypeArg(std::ostream &os, const TypeArgSyn &a) {
  if (a.type) os << printType(*a.type);
  else if (a.nat) os << printNat(*a.nat);
}

std::string einsumStr(const EinsumSyn &e);

std::string accessStr(const EinsumSyn &e) {
  std::string s = e.tensor;
  if (!e.indices.empty()) {
    s += "[";
    for (size_t i = 0; i < e.indices.size(); ++i) s += (i ? ", " : "") + e.indices[i].name;
    s += "]";
  }
  return s;
}

std::string einsumStr(const EinsumSyn &e) {
  switch (e.op) {
    case EinOp::Access: return accessStr(e);
    case EinOp::Lit: return printExprInline(*e.literal);
    case EinOp::Neg: return "(-" + einsumStr(*e.kids[0]) + ")";
    case EinOp::Add: return "(" + einsumStr(*e.kids[0]) + " + " + einsumStr(*e.kids[1]) + ")";
    case EinOp::Sub: return "(" + einsumStr(*e.kids[0]) + " - " + einsumStr(*e.kids[1]) + ")";
    case EinOp::Mul: return "(" + einsumStr(*e.kids[0]) + " * " + einsumStr(*e.kids[1]) + ")";
    case EinOp::Div: return "(" + einsumStr(*e.kids[0]) + " / " + einsumStr(*e.kids[1]) + ")";
  }
  return "?";
}

class TreePrinter {
 public:
  explicit TreePrinter(std::ostringstream &os) : os_(os) {}

  void expr(const Expr &e, int depth) {
    indent(depth);
    switch (e.op) {
      case ExprOp::IntLit: os_ << "Int " << e.text; break;
      case ExprOp::FloatLit: os_ << "Float " << e.text; break;
      case ExprOp::BoolLit: os_ << "Bool " << (e.bval ? "true" : "false"); break;
      case ExprOp::Var: os_ << "Var " << e.text; break;
      case ExprOp::Call: os_ << "Call"; break;
      case ExprOp::Index: os_ << "Index @"; break;
      case ExprOp::Proj: os_ << "Proj ." << e.proj; break;
      case ExprOp::Unary: os_ << "Unary " << (e.unop == UnOp::Neg ? "-" : "!"); break;
      case ExprOp::Binary: os_ << "Binary " << binOpToken(e.binop); break;
      case ExprOp::Pipe: os_ << "Pipe |>"; break;
      case ExprOp::Annot: os_ << "Annot : " << printType(*e.type); break;
      case ExprOp::Lambda: os_ << "Lambda " << printPattern(*e.pattern) << " =>"; break;
      case ExprOp::Let: os_ << "Let " << printPattern(*e.pattern); break;
      case ExprOp::If: os_ << "If"; break;
      case ExprOp::Tuple: os_ << "Tuple"; break;
      case ExprOp::OpFunc: os_ << "OpFunc " << e.text; break;
      case ExprOp::Einsum:
        os_ << "Einsum " << accessStr(*e.einsum) << " = " << einsumStr(*e.einsum->rhs);
        break;
    }
    os_ << "  @" << locStr(e.loc) << "\n";
    for (const ExprP &k : e.kids) expr(*k, depth + 1);
  }

  void indent(int depth) {
    for (int i = 0; i < depth; ++i) os_ << "  ";
  }

 private:
  std::ostringstream &os_;
};

}  // namespace

std::string printNat(const NatSyn &n) {
  switch (n.op) {
    case NatOp::Lit: return std::to_string(n.value);
    case NatOp::Var: return n.name;
    case NatOp::Lookup: return n.name + "@" + printNat(*n.args[0]);
    case NatOp::ToNat: return "toNat(" + printExprInline(*n.expr) + ")";
    case NatOp::Call: {
      std::string s = n.name + "(";
      for (size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + printNat(*n.args[i]);
      return s + ")";
    }
    case NatOp::Not: return "!" + printNat(*n.args[0]);
    case NatOp::Cond:
      return "(" + printNat(*n.args[0]) + " ? " + printNat(*n.args[1]) + " : " + printNat(*n.args[2]) + ")";
    case NatOp::Sum:
      return "sum(" + n.name + " = " + printNat(*n.args[0]) + " .. " + printNat(*n.args[1]) + ") " +
             printNat(*n.args[2]);
    default:
      return "(" + printNat(*n.args[0]) + " " + natOpToken(n.op) + " " + printNat(*n.args[1]) + ")";
  }
}

std::string printType(const TypeSyn &t) {
  std::ostringstream os;
  switch (t.op) {
    case TypeOp::Named:
      os << t.name;
      if (!t.args.empty()) {
        os << "[";
        for (size_t i = 0; i < t.args.size(); ++i) {
          if (i) os << ", ";
          printTypeArg(os, t.args[i]);
        }
        os << "]";
      }
      break;
    case TypeOp::Array: os << printNat(*t.len) << "." << printType(*t.elems[0]); break;
    case TypeOp::DepArray:
      os << printNat(*t.len) << "..(" << t.name << " => " << printType(*t.elems[0]) << ")";
      break;
    case TypeOp::Packed: os << "packed " << printNat(*t.len) << "." << printType(*t.elems[0]); break;
    case TypeOp::Tuple:
      os << "(";
      for (size_t i = 0; i < t.elems.size(); ++i) os << (i ? ", " : "") << printType(*t.elems[i]);
      os << ")";
      break;
    case TypeOp::DepPair:
      os << "(" << t.name << ": " << kindName(t.pairKind) << " ** " << printType(*t.elems[0]) << ")";
      break;
  }
  return os.str();
}

std::string printPattern(const Pattern &p) {
  if (!p.isTuple) return p.name;
  std::string s = "(";
  for (size_t i = 0; i < p.elems.size(); ++i) s += (i ? ", " : "") + printPattern(*p.elems[i]);
  return s + ")";
}

std::string printExprInline(const Expr &e) {
  auto kid = [&](size_t i) { return printExprInline(*e.kids[i]); };
  switch (e.op) {
    case ExprOp::IntLit: return e.text;
    case ExprOp::FloatLit: return e.text;
    case ExprOp::BoolLit: return e.bval ? "true" : "false";
    case ExprOp::Var: return e.text;
    case ExprOp::Call: {
      std::string s = kid(0) + "(";
      for (size_t i = 1; i < e.kids.size(); ++i) s += (i > 1 ? ", " : "") + kid(i);
      return s + ")";
    }
    case ExprOp::Index: return kid(0) + "@" + kid(1);
    case ExprOp::Proj: return kid(0) + "." + std::to_string(e.proj);
    case ExprOp::Unary: return std::string(e.unop == UnOp::Neg ? "-" : "!") + kid(0);
    case ExprOp::Binary: return "(" + kid(0) + " " + binOpToken(e.binop) + " " + kid(1) + ")";
    case ExprOp::Pipe: return "(" + kid(0) + " |> " + kid(1) + ")";
    case ExprOp::Annot: return "(" + kid(0) + " : " + printType(*e.type) + ")";
    case ExprOp::Lambda: return "(" + printPattern(*e.pattern) + " => " + kid(0) + ")";
    case ExprOp::Let: return "(let " + printPattern(*e.pattern) + " = " + kid(0) + "; " + kid(1) + ")";
    case ExprOp::If: return "(if " + kid(0) + " then " + kid(1) + " else " + kid(2) + ")";
    case ExprOp::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < e.kids.size(); ++i) s += (i ? ", " : "") + kid(i);
      return s + ")";
    }
    case ExprOp::OpFunc: return e.text;
    case ExprOp::Einsum: return "einsum " + accessStr(*e.einsum) + " = " + einsumStr(*e.einsum->rhs);
  }
  return "?";
}

std::string printModule(const Module &m) {
  std::ostringstream os;
  TreePrinter tp(os);
  os << "Module " << m.path << "\n";
  for (const auto &[kind, idx] : m.order) {
    switch (kind) {
      case DeclKind::Import: {
        const ImportDecl &d = m.imports[idx];
        os << "  Import ";
        for (size_t i = 0; i < d.path.size(); ++i) os << (i ? "." : "") << d.path[i];
        os << "  @" << locStr(d.loc) << "\n";
        break;
      }
      case DeclKind::Type: {
        const TypeDecl &d = *m.types[idx];
        os << "  Type " << d.name;
        if (!d.params.empty()) {
          os << "[";
          for (size_t i = 0; i < d.params.size(); ++i)
            os << (i ? ", " : "") << d.params[i].name << ": " << kindName(d.params[i].kind);
          os << "]";
        }
        os << " = " << printType(*d.body) << "  @" << locStr(d.loc) << "\n";
        break;
      }
      case DeclKind::Def: {
        const DefDecl &d = *m.defs[idx];
        os << "  Def " << d.name << "  @" << locStr(d.loc) << "\n";
        for (const Param &p : d.params) {
          os << "    Param " << (p.implicit ? "{" : "(") << p.name << ": "
             << (p.isKind ? kindName(p.kind) : printType(*p.type)) << (p.implicit ? "}" : ")")
             << "  @" << locStr(p.loc) << "\n";
        }
        if (d.ret) os << "    Returns " << printType(*d.ret) << "\n";
        os << "    Body\n";
        tp.expr(*d.body, 3);
        break;
      }
      case DeclKind::Export: {
        const ExportDecl &d = m.exports[idx];
        os << "  Export " << d.def;
        if (!d.args.empty()) {
          os << "(";
          for (size_t i = 0; i < d.args.size(); ++i) {
            os << (i ? ", " : "") << d.args[i].name << " = ";
            printTypeArg(os, d.args[i].value);
          }
          os << ")";
        }
        os << " as " << d.cname << " for";
        for (size_t i = 0; i < d.targets.size(); ++i) os << (i ? ", " : " ") << d.targets[i].name;
        os << "  @" << locStr(d.loc) << "\n";
        break;
      }
      case DeclKind::Tunable: {
        const TunableDecl &d = m.tunables[idx];
        os << "  Tunable " << d.name << " = " << printNat(*d.init);
        if (!d.choices.empty()) {
          os << " in [";
          for (size_t i = 0; i < d.choices.size(); ++i) os << (i ? ", " : "") << printNat(*d.choices[i]);
          os << "]";
        } else if (d.lo) {
          os << " in " << printNat(*d.lo) << " .. " << printNat(*d.hi);
        }
        os << "  @" << locStr(d.loc) << "\n";
        break;
      }
      case DeclKind::Schedule: {
        const ScheduleDecl &d = m.schedules[idx];
        os << "  Schedule " << d.exportName << " for " << d.target << "  @" << locStr(d.loc) << "\n";
        for (const ScheduleCmd &c : d.cmds) {
          os << "    " << c.name << "(";
          for (size_t i = 0; i < c.args.size(); ++i) os << (i ? ", " : "") << printExprInline(*c.args[i]);
          os << ")  @" << locStr(c.loc) << "\n";
        }
        break;
      }
    }
  }
  return os.str();
}

}  // namespace spl::ast
