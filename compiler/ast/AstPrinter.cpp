/// \file AstPrinter.cpp: deterministic tree dump of the AST (`--emit=ast`).
#include "ast/AstPrinter.h"

#include <fmt/ranges.h>

#include <functional>

#include "support/Format.h"

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
  if (lanes) s += fmt::format(" lanes={}", lanes);
  if (mergeReads) s += fmt::format(" merge_reads={}", mergeReads);
  if (mergeBlocksPerSm) s += fmt::format(" blocks_per_sm={}", mergeBlocksPerSm);
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

const char *unOpToken(UnOp op) {
  switch (op) {
    case UnOp::Neg: return "-";
    case UnOp::Not: return "!";
    case UnOp::Sqrt: return "sqrt";
    case UnOp::Abs: return "abs";
  }
  return "?";
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

std::string locStr(SourceLoc l) { return fmt::format("{}:{}", l.line, l.col); }

std::string typeArgStr(const TypeArgSyn &a) { return a.type ? printType(*a.type) : a.nat ? printNat(*a.nat) : ""; }

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
  explicit TreePrinter(TextOut &out) : out_(out) {}

  void expr(const Expr &e, int depth) {
    out_("{}", std::string(depth * 2, ' '));
    switch (e.op) {
      case ExprOp::IntLit: out_("Int {}", e.text); break;
      case ExprOp::FloatLit: out_("Float {}", e.text); break;
      case ExprOp::BoolLit: out_("Bool {}", e.bval ? "true" : "false"); break;
      case ExprOp::Var: out_("Var {}", e.text); break;
      case ExprOp::Call: out_("Call"); break;
      case ExprOp::Index: out_("Index @"); break;
      case ExprOp::Proj: out_("Proj .{}", e.proj); break;
      case ExprOp::Unary: out_("Unary {}", e.unop == UnOp::Neg ? "-" : "!"); break;
      case ExprOp::Binary: out_("Binary {}", binOpToken(e.binop)); break;
      case ExprOp::Pipe: out_("Pipe |>"); break;
      case ExprOp::Annot: out_("Annot : {}", printType(*e.type)); break;
      case ExprOp::Lambda: out_("Lambda {} =>", printPattern(*e.pattern)); break;
      case ExprOp::Let: out_("Let {}", printPattern(*e.pattern)); break;
      case ExprOp::If: out_("If"); break;
      case ExprOp::Tuple: out_("Tuple"); break;
      case ExprOp::OpFunc: out_("OpFunc {}", e.text); break;
      case ExprOp::Einsum: out_("Einsum {} = {}", accessStr(*e.einsum), einsumStr(*e.einsum->rhs)); break;
    }
    out_("  @{}\n", locStr(e.loc));
    for (const ExprP &k : e.kids) expr(*k, depth + 1);
  }

 private:
  TextOut &out_;
};

}  // namespace

std::string printNat(const NatSyn &n) {
  switch (n.op) {
    case NatOp::Lit: return fmt::format("{}", n.value);
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
  switch (t.op) {
    case TypeOp::Named: {
      if (t.args.empty()) return t.name;
      std::vector<std::string> args;
      for (const TypeArgSyn &a : t.args) args.push_back(typeArgStr(a));
      return fmt::format("{}[{}]", t.name, fmt::join(args, ", "));
    }
    case TypeOp::Array: return fmt::format("{}.{}", printNat(*t.len), printType(*t.elems[0]));
    case TypeOp::DepArray: return fmt::format("{}..({} => {})", printNat(*t.len), t.name, printType(*t.elems[0]));
    case TypeOp::Packed: return fmt::format("packed {}.{}", printNat(*t.len), printType(*t.elems[0]));
    case TypeOp::Tuple: {
      std::vector<std::string> parts;
      for (const TypeSynP &e : t.elems) parts.push_back(printType(*e));
      return fmt::format("({})", fmt::join(parts, ", "));
    }
    case TypeOp::DepPair: return fmt::format("({}: {} ** {})", t.name, kindName(t.pairKind), printType(*t.elems[0]));
  }
  return "?";
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
    case ExprOp::Proj: return fmt::format("{}.{}", kid(0), e.proj);
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
  TextOut out;
  TreePrinter tp(out);
  out("Module {}\n", m.path);
  for (const auto &[kind, idx] : m.order) {
    switch (kind) {
      case DeclKind::Import: {
        const ImportDecl &d = m.imports[idx];
        out("  Import {}  @{}\n", fmt::join(d.path, "."), locStr(d.loc));
        break;
      }
      case DeclKind::Type: {
        const TypeDecl &d = *m.types[idx];
        out("  Type {}", d.name);
        if (!d.params.empty()) {
          std::vector<std::string> params;
          for (const auto &q : d.params) params.push_back(fmt::format("{}: {}", q.name, kindName(q.kind)));
          out("[{}]", fmt::join(params, ", "));
        }
        out(" = {}  @{}\n", printType(*d.body), locStr(d.loc));
        break;
      }
      case DeclKind::Def: {
        const DefDecl &d = *m.defs[idx];
        out("  Def {}  @{}\n", d.name, locStr(d.loc));
        for (const Param &p : d.params)
          out("    Param {}{}: {}{}  @{}\n", p.implicit ? "{" : "(", p.name, p.isKind ? kindName(p.kind) : printType(*p.type),
              p.implicit ? "}" : ")", locStr(p.loc));
        if (d.ret) out("    Returns {}\n", printType(*d.ret));
        out("    Body\n");
        tp.expr(*d.body, 3);
        break;
      }
      case DeclKind::Export: {
        const ExportDecl &d = m.exports[idx];
        out("  Export {}", d.def);
        if (!d.args.empty()) {
          std::vector<std::string> args;
          for (const auto &a : d.args) args.push_back(fmt::format("{} = {}", a.name, typeArgStr(a.value)));
          out("({})", fmt::join(args, ", "));
        }
        out(" as {} for", d.cname);
        for (size_t i = 0; i < d.targets.size(); ++i) out("{}{}", i ? ", " : " ", d.targets[i].name);
        std::vector<std::string> with;
        for (const auto &v : d.views) with.push_back(fmt::format("{}: {}({})", v.param, v.view, v.stride));
        if (!d.resultIn.empty()) {
          std::vector<std::string> names;
          for (const auto &r : d.resultIn) names.push_back(r.name);
          with.push_back(fmt::format(names.size() == 1 ? "result in {}" : "result in ({})", fmt::join(names, ", ")));
        }
        if (!with.empty()) out(" with {}", fmt::join(with, ", "));
        out("  @{}\n", locStr(d.loc));
        break;
      }
      case DeclKind::Tunable: {
        const TunableDecl &d = m.tunables[idx];
        out("  Tunable {} = {}", d.name, printNat(*d.init));
        if (!d.choices.empty()) {
          std::vector<std::string> choices;
          for (const auto &c : d.choices) choices.push_back(printNat(*c));
          out(" in [{}]", fmt::join(choices, ", "));
        } else if (d.lo) {
          out(" in {} .. {}", printNat(*d.lo), printNat(*d.hi));
        }
        out("  @{}\n", locStr(d.loc));
        break;
      }
      case DeclKind::Schedule: {
        const ScheduleDecl &d = m.schedules[idx];
        std::vector<std::string> names;
        for (const ScheduleDecl::Name &n : d.names) names.push_back(n.text);
        out("  Schedule {} for {}  @{}\n", fmt::join(names, ", "), d.target, locStr(d.loc));
        std::function<void(const std::vector<ScheduleCmd> &, int)> commands = [&](const std::vector<ScheduleCmd> &cmds, int depth) {
          for (const ScheduleCmd &c : cmds) {
            std::vector<std::string> args;
            for (const auto &a : c.args) args.push_back(printExprInline(*a));
            out("{:{}}{}({}){}  @{}\n", "", 4 + 2 * depth, c.name, fmt::join(args, ", "), c.hasBlock ? " {" : "", locStr(c.loc));
            if (c.hasBlock) {
              commands(c.block, depth + 1);
              out("{:{}}}}\n", "", 4 + 2 * depth);
            }
          }
        };
        commands(d.cmds, 0);
        break;
      }
    }
  }
  return out.str();
}

}  // namespace spl::ast
