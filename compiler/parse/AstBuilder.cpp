/// \file AstBuilder.cpp: walks the ANTLR parse tree and builds the AST.
/// One function per grammar rule; labelled alternatives are told apart with dynamic_cast, which
/// keeps the builder free of antlrcpp::Any. Only this file knows the generated context classes.
#include "parse/AstBuilder.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "support/Format.h"

namespace spl {
namespace {

using P = grammar::SplParser;
using namespace ast;

class Builder {
 public:
  Builder(const SourceManager &sm, uint32_t file, Diagnostics &diags, uint32_t firstLine)
      : sm_(sm), file_(file), diags_(diags), lineOffset_(firstLine - 1) {}

  std::optional<Module> program(P::ProgramContext *ctx) {
    Module m;
    m.file = file_;
    m.path = sm_.path(file_);
    for (P::DeclContext *d : ctx->decl()) decl(d, m);
    if (failed_) return std::nullopt;
    return m;
  }

 private:
  // ---- locations and errors ----
  SourceLoc loc(antlr4::Token *t) const {
    return SourceLoc{file_, static_cast<uint32_t>(t->getLine()) + lineOffset_,
                     static_cast<uint32_t>(t->getCharPositionInLine() + 1)};
  }
  SourceLoc loc(antlr4::ParserRuleContext *c) const { return loc(c->getStart()); }
  SourceLoc loc(antlr4::tree::TerminalNode *n) const { return loc(n->getSymbol()); }

  void error(SourceLoc l, const std::string &msg) {
    if (!failed_ || diags_.numErrors() < 20) diags_.error(l, msg);
    failed_ = true;
  }

  /// RAII depth counter; past kMaxNesting the builder reports once and stops descending.
  struct Depth {
    Builder &b;
    explicit Depth(Builder &b) : b(b) { ++b.depth_; }
    ~Depth() { --b.depth_; }
  };
  bool tooDeep(antlr4::ParserRuleContext *c) {
    if (depth_ <= kMaxNesting) return false;
    if (!reportedDepth_) {
      error(loc(c), fmt::format("expression nested too deeply (more than {} levels)", kMaxNesting));
      reportedDepth_ = true;
    }
    return true;
  }

  static std::string nameOf(P::NameContext *n) { return n->getText(); }

  int64_t parseInt(antlr4::Token *t) {
    const std::string s = t->getText();
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
      error(loc(t), "integer literal '" + s + "' is too large (the maximum is 9223372036854775807)");
      return 0;
    }
    return static_cast<int64_t>(v);
  }

  // ---- declarations ----
  void decl(P::DeclContext *d, Module &m) {
    if (auto *c = d->importDecl()) {
      ImportDecl im;
      im.loc = loc(c);
      for (auto *id : c->ID()) im.path.push_back(id->getText());
      m.order.emplace_back(DeclKind::Import, m.imports.size());
      m.imports.push_back(std::move(im));
    } else if (auto *c = d->typeDecl()) {
      auto td = std::make_shared<TypeDecl>();
      td->name = c->ID()->getText();
      td->loc = loc(c->ID());
      for (auto *kn : c->kindedName()) td->params.push_back(KindedName{kn->ID()->getText(), kind(kn->kind()), loc(kn)});
      td->body = type(c->dataType());
      m.order.emplace_back(DeclKind::Type, m.types.size());
      m.types.push_back(td);
    } else if (auto *c = d->defDecl()) {
      auto dd = std::make_shared<DefDecl>();
      dd->name = c->ID()->getText();
      dd->loc = loc(c->ID());
      for (auto *p : c->param()) dd->params.push_back(param(p));
      if (c->dataType()) dd->ret = type(c->dataType());
      dd->body = expr(c->expr());
      m.order.emplace_back(DeclKind::Def, m.defs.size());
      m.defs.push_back(dd);
    } else if (auto *c = d->exportDecl()) {
      ExportDecl ed;
      auto ids = c->ID();
      ed.def = ids[0]->getText();
      ed.loc = loc(ids[0]);
      ed.cname = ids[1]->getText();
      ed.cnameLoc = loc(ids[1]);
      for (size_t i = 2; i < ids.size(); ++i) ed.targets.push_back(ExportTarget{ids[i]->getText(), loc(ids[i])});
      for (auto *a : c->exportArg()) ed.args.push_back(ExportArg{a->ID()->getText(), typeArg(a->typeArg()), loc(a)});
      if (auto *w = c->exportWith()) exportWith(w, ed);
      m.order.emplace_back(DeclKind::Export, m.exports.size());
      m.exports.push_back(std::move(ed));
    } else if (auto *c = d->tunableDecl()) {
      TunableDecl td;
      td.name = c->ID()->getText();
      td.loc = loc(c->ID());
      td.init = nat(c->natExpr());
      if (auto *r = c->tunableRange()) {
        if (auto *l = dynamic_cast<P::TunableListContext *>(r)) {
          for (auto *n : l->natExpr()) td.choices.push_back(nat(n));
        } else if (auto *iv = dynamic_cast<P::TunableIntervalContext *>(r)) {
          td.lo = nat(iv->natExpr(0));
          td.hi = nat(iv->natExpr(1));
        }
      }
      m.order.emplace_back(DeclKind::Tunable, m.tunables.size());
      m.tunables.push_back(std::move(td));
    } else if (auto *c = d->scheduleDecl()) {
      std::vector<antlr4::tree::TerminalNode *> ids = c->ID();
      ScheduleDecl sd;
      for (size_t i = 0; i + 1 < ids.size(); ++i) sd.names.push_back({ids[i]->getText(), loc(ids[i])});
      sd.loc = sd.names.front().loc;
      sd.target = ids.back()->getText();
      sd.targetLoc = loc(ids.back());
      for (auto *cmd : c->scheduleCmd()) sd.cmds.push_back(scheduleCmd(cmd));
      m.order.emplace_back(DeclKind::Schedule, m.schedules.size());
      m.schedules.push_back(std::move(sd));
    }
  }

  /// A command, with its block of commands where it has one (specialize).
  ScheduleCmd scheduleCmd(P::ScheduleCmdContext *cmd) {
    ScheduleCmd sc;
    sc.name = cmd->ID()->getText();
    sc.loc = loc(cmd);
    for (auto *e : cmd->expr()) sc.args.push_back(expr(e));
    sc.hasBlock = cmd->block != nullptr;
    for (auto *inner : cmd->scheduleCmd()) sc.block.push_back(scheduleCmd(inner));
    return sc;
  }

  static Kind kind(P::KindContext *k) {
    std::string t = k->getText();
    return t == "nat" ? Kind::Nat : t == "nats" ? Kind::Nats : Kind::Data;
  }

  Param param(P::ParamContext *p) {
    Param out;
    P::NameContext *n = nullptr;
    P::ParamSortContext *sort = nullptr;
    if (auto *ip = dynamic_cast<P::ImplicitParamContext *>(p)) {
      out.implicit = true;
      n = ip->name();
      sort = ip->paramSort();
    } else {
      auto *ep = dynamic_cast<P::ExplicitParamContext *>(p);
      n = ep->name();
      sort = ep->paramSort();
    }
    out.name = nameOf(n);
    out.loc = loc(n);
    if (sort->kind()) {
      out.isKind = true;
      out.kind = kind(sort->kind());
    } else {
      out.type = type(sort->dataType());
    }
    return out;
  }

  // ---- types ----
  /// An export's `with` list; `with` and `result` are words only here.
  void exportWith(P::ExportWithContext *w, ExportDecl &ed) {
    if (w->ID()->getText() != "with") {
      error(loc(w->ID()), "expected ';' or 'with' after the export's targets, found '" + w->ID()->getText() + "'");
      return;
    }
    for (auto *st : w->exportStorage()) {
      if (auto *v = dynamic_cast<P::StorageViewContext *>(st)) {
        ed.views.push_back(ExportView{v->ID(0)->getText(), loc(v->ID(0)), v->ID(1)->getText(), loc(v->ID(1)),
                                      v->ID(2)->getText(), loc(v->ID(2))});
      } else if (auto *r = dynamic_cast<P::StorageResultInContext *>(st)) {
        if (r->ID(0)->getText() != "result") {
          error(loc(r->ID(0)), "expected 'result in PARAM' or 'PARAM: VIEW(STRIDE)' in an export's 'with', found '" +
                                   r->ID(0)->getText() + " in'");
          continue;
        }
        if (!ed.resultIn.empty()) {
          error(loc(r->ID(0)), "the export says twice where its result goes ('result in' appears twice)");
          continue;
        }
        ed.resultInLoc = loc(r->ID(0));
        for (size_t i = 1; i < r->ID().size(); ++i) ed.resultIn.push_back(ExportTarget{r->ID(i)->getText(), loc(r->ID(i))});
      }
    }
  }

  TypeArgSyn typeArg(P::TypeArgContext *a) {
    TypeArgSyn out;
    out.loc = loc(a);
    if (a->dataType()) out.type = type(a->dataType());
    else out.nat = nat(a->natExpr());
    return out;
  }

  /// A literal array length (digits only), checked against the 64-bit range.
  NatSynP lengthLiteral(const std::string &digits, SourceLoc l) {
    auto n = std::make_shared<NatSyn>();
    n->op = NatOp::Lit;
    n->loc = l;
    errno = 0;
    unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
    if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) error(l, "array length '" + digits + "' is too large");
    n->value = static_cast<int64_t>(v);
    return n;
  }

  /// `out` made the array type lengths[0].lengths[1]. ... .elem (out keeps its own location).
  TypeSynP nestArrays(const std::shared_ptr<TypeSyn> &out, const std::vector<std::pair<NatSynP, SourceLoc>> &lengths, TypeSynP elem) {
    for (size_t k = lengths.size(); k-- > 1;) {
      auto inner = std::make_shared<TypeSyn>();
      inner->op = TypeOp::Array;
      inner->loc = lengths[k].second;
      inner->len = lengths[k].first;
      inner->elems.push_back(elem);
      elem = inner;
    }
    out->op = TypeOp::Array;
    out->len = lengths[0].first;
    out->elems.push_back(elem);
    return out;
  }

  TypeSynP type(P::DataTypeContext *t) {
    Depth guard(*this);
    auto out = std::make_shared<TypeSyn>();
    out->loc = loc(t);
    if (tooDeep(t)) {
      out->op = TypeOp::Named;
      out->name = "f32";
      return out;
    }
    if (auto *c = dynamic_cast<P::ArrayTypeContext *>(t)) {
      out->op = TypeOp::Array;
      out->len = natAtom(c->natAtom());
      out->elems.push_back(type(c->dataType()));
    } else if (auto *c = dynamic_cast<P::DotIntArrayTypeContext *>(t)) {
      // `n.2.f32` arrives as n, DOT_INT ".2", '.', f32: each DOT_INT is one more length.
      std::vector<std::pair<NatSynP, SourceLoc>> lengths{{natAtom(c->natAtom()), loc(c->natAtom())}};
      for (antlr4::tree::TerminalNode *d : c->DOT_INT()) {
        SourceLoc l = loc(d);
        l.col += 1;
        lengths.push_back({lengthLiteral(d->getText().substr(1), l), l});
      }
      return nestArrays(out, lengths, type(c->dataType()));
    } else if (auto *c = dynamic_cast<P::FloatArrayTypeContext *>(t)) {
      // `2.3.f32` arrives as FLOAT "2.3", '.', f32 (and `2.3.4.f32` with a DOT_INT ".4" between):
      // split the float back into two lengths.
      std::string text = c->FLOAT()->getText();
      size_t dot = text.find('.');
      if (dot == std::string::npos || text.find_first_of("eE") != std::string::npos) {
        error(loc(c->FLOAT()), "expected an array length, found '" + text + "'");
        out->op = TypeOp::Named;
        out->name = "f32";
        return out;
      }
      SourceLoc l0 = loc(c->FLOAT());
      SourceLoc l1 = l0;
      l1.col += static_cast<uint32_t>(dot + 1);
      std::vector<std::pair<NatSynP, SourceLoc>> lengths{{lengthLiteral(text.substr(0, dot), l0), l0},
                                                         {lengthLiteral(text.substr(dot + 1), l1), l1}};
      for (antlr4::tree::TerminalNode *d : c->DOT_INT()) {
        SourceLoc l = loc(d);
        l.col += 1;
        lengths.push_back({lengthLiteral(d->getText().substr(1), l), l});
      }
      return nestArrays(out, lengths, type(c->dataType()));
    } else if (auto *c = dynamic_cast<P::DepArrayTypeContext *>(t)) {
      out->op = TypeOp::DepArray;
      out->len = natAtom(c->natAtom());
      out->name = c->ID()->getText();
      out->elems.push_back(type(c->dataType()));
    } else if (auto *c = dynamic_cast<P::PackedArrayTypeContext *>(t)) {
      out->op = TypeOp::Packed;
      out->len = natAtom(c->natAtom());
      out->elems.push_back(type(c->dataType()));
    } else if (auto *c = dynamic_cast<P::DepPairTypeContext *>(t)) {
      out->op = TypeOp::DepPair;
      out->name = c->ID()->getText();
      out->pairKind = c->kw->getText() == "nats" ? Kind::Nats : Kind::Nat;
      out->elems.push_back(type(c->dataType()));
    } else if (auto *c = dynamic_cast<P::TupleTypeContext *>(t)) {
      out->op = TypeOp::Tuple;
      for (auto *e : c->dataType()) out->elems.push_back(type(e));
    } else if (auto *c = dynamic_cast<P::ParenTypeContext *>(t)) {
      return type(c->dataType());
    } else if (auto *c = dynamic_cast<P::NamedTypeContext *>(t)) {
      out->op = TypeOp::Named;
      out->name = c->ID()->getText();
      for (auto *a : c->typeArg()) out->args.push_back(typeArg(a));
    }
    return out;
  }

  // ---- nats ----
  NatSynP natAtom(P::NatAtomContext *a) {
    Depth guard(*this);
    auto out = std::make_shared<NatSyn>();
    out->loc = loc(a);
    if (tooDeep(a)) {
      out->op = NatOp::Lit;
      return out;
    }
    if (auto *c = dynamic_cast<P::NatLitContext *>(a)) {
      out->op = NatOp::Lit;
      out->value = parseInt(c->INT()->getSymbol());
    } else if (auto *c = dynamic_cast<P::NatToNatContext *>(a)) {
      out->op = NatOp::ToNat;
      out->expr = expr(c->expr());
    } else if (auto *c = dynamic_cast<P::NatCallContext *>(a)) {
      out->op = NatOp::Call;
      out->name = c->ID()->getText();
      for (auto *n : c->natExpr()) out->args.push_back(nat(n));
    } else if (auto *c = dynamic_cast<P::NatLookupContext *>(a)) {
      out->op = NatOp::Lookup;
      out->name = nameOf(c->name());
      out->args.push_back(natAtom(c->natAtom()));
    } else if (auto *c = dynamic_cast<P::NatVarContext *>(a)) {
      out->op = NatOp::Var;
      out->name = nameOf(c->name());
    } else if (auto *c = dynamic_cast<P::NatParenContext *>(a)) {
      return nat(c->natExpr());
    }
    return out;
  }

  NatSynP natBin(NatOp op, SourceLoc l, NatSynP a, NatSynP b) {
    auto out = std::make_shared<NatSyn>();
    out->op = op;
    out->loc = l;
    out->args = {std::move(a), std::move(b)};
    return out;
  }

  static NatOp natOpOf(const std::string &t) {
    if (t == "+") return NatOp::Add;
    if (t == "-") return NatOp::Sub;
    if (t == "*") return NatOp::Mul;
    if (t == "/") return NatOp::Div;
    if (t == "%") return NatOp::Mod;
    if (t == "==") return NatOp::Eq;
    if (t == "!=") return NatOp::Ne;
    if (t == "<") return NatOp::Lt;
    if (t == "<=") return NatOp::Le;
    if (t == ">") return NatOp::Gt;
    return NatOp::Ge;
  }

  NatSynP nat(P::NatExprContext *n) {
    Depth guard(*this);
    if (tooDeep(n)) {
      auto out = std::make_shared<NatSyn>();
      out->op = NatOp::Lit;
      out->loc = loc(n);
      return out;
    }
    if (auto *c = dynamic_cast<P::NatMulContext *>(n))
      return natBin(natOpOf(c->op->getText()), loc(c->op), nat(c->natExpr(0)), nat(c->natExpr(1)));
    if (auto *c = dynamic_cast<P::NatAddContext *>(n))
      return natBin(natOpOf(c->op->getText()), loc(c->op), nat(c->natExpr(0)), nat(c->natExpr(1)));
    if (auto *c = dynamic_cast<P::NatCmpContext *>(n))
      return natBin(natOpOf(c->op->getText()), loc(c->op), nat(c->natExpr(0)), nat(c->natExpr(1)));
    if (auto *c = dynamic_cast<P::NatAndContext *>(n))
      return natBin(NatOp::And, loc(c), nat(c->natExpr(0)), nat(c->natExpr(1)));
    if (auto *c = dynamic_cast<P::NatOrContext *>(n))
      return natBin(NatOp::Or, loc(c), nat(c->natExpr(0)), nat(c->natExpr(1)));
    auto out = std::make_shared<NatSyn>();
    out->loc = loc(n);
    if (auto *c = dynamic_cast<P::NatNotContext *>(n)) {
      out->op = NatOp::Not;
      out->args.push_back(nat(c->natExpr()));
    } else if (auto *c = dynamic_cast<P::NatCondContext *>(n)) {
      out->op = NatOp::Cond;
      for (int i = 0; i < 3; ++i) out->args.push_back(nat(c->natExpr(i)));
    } else if (auto *c = dynamic_cast<P::NatSumContext *>(n)) {
      out->op = NatOp::Sum;
      out->name = c->ID()->getText();
      for (int i = 0; i < 3; ++i) out->args.push_back(nat(c->natExpr(i)));
    } else if (auto *c = dynamic_cast<P::NatAtomExprContext *>(n)) {
      return natAtom(c->natAtom());
    }
    return out;
  }

  // ---- expressions ----
  ExprP mk(ExprOp op, SourceLoc l, std::vector<ExprP> kids = {}) {
    auto e = std::make_shared<Expr>();
    e->op = op;
    e->loc = l;
    e->kids = std::move(kids);
    return e;
  }

  static BinOp binOpOf(const std::string &t) {
    if (t == "+") return BinOp::Add;
    if (t == "-") return BinOp::Sub;
    if (t == "*") return BinOp::Mul;
    if (t == "/") return BinOp::Div;
    if (t == "%") return BinOp::Mod;
    if (t == "==") return BinOp::Eq;
    if (t == "!=") return BinOp::Ne;
    if (t == "<") return BinOp::Lt;
    if (t == "<=") return BinOp::Le;
    if (t == ">") return BinOp::Gt;
    if (t == ">=") return BinOp::Ge;
    if (t == "&&") return BinOp::And;
    return BinOp::Or;
  }

  ExprP binary(antlr4::Token *op, P::ExprContext *a, P::ExprContext *b) {
    auto e = std::make_shared<Expr>();
    e->op = ExprOp::Binary;
    e->loc = loc(op);
    e->binop = binOpOf(op->getText());
    e->kids = {expr(a), expr(b)};
    return e;
  }

  ExprP literal(P::LiteralContext *l) {
    auto e = std::make_shared<Expr>();
    e->loc = loc(l);
    e->text = l->getText();
    if (auto *c = dynamic_cast<P::IntLitContext *>(l)) {
      e->op = ExprOp::IntLit;
      e->ival = parseInt(c->INT()->getSymbol());
    } else if (dynamic_cast<P::FloatLitContext *>(l)) {
      e->op = ExprOp::FloatLit;
      errno = 0;
      e->fval = std::strtod(e->text.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(e->fval))
        error(loc(l), "float literal '" + e->text + "' is too large (f64's largest is about 1.8e308; for infinity write inf)");
    } else {
      e->op = ExprOp::BoolLit;
      e->bval = e->text == "true";
    }
    return e;
  }

  void callArgs(P::ArgsContext *args, std::vector<ExprP> &out) {
    if (!args) return;
    for (P::ArgContext *a : args->arg()) {
      if (auto *ea = dynamic_cast<P::ExprArgContext *>(a)) {
        out.push_back(expr(ea->expr()));
      } else {
        auto *oa = dynamic_cast<P::OpArgContext *>(a);
        auto e = std::make_shared<Expr>();
        e->op = ExprOp::OpFunc;
        e->loc = loc(oa->op);
        e->text = oa->op->getText();
        e->binop = binOpOf(e->text);
        out.push_back(e);
      }
    }
  }

  PatternP pattern(P::PatternContext *p) {
    Depth guard(*this);
    auto out = std::make_shared<Pattern>();
    out->loc = loc(p);
    if (tooDeep(p)) return out;
    if (auto *c = dynamic_cast<P::NamePatternContext *>(p)) {
      out->name = nameOf(c->name());
    } else if (auto *c = dynamic_cast<P::TuplePatternContext *>(p)) {
      out->isTuple = true;
      for (auto *e : c->pattern()) out->elems.push_back(pattern(e));
    }
    return out;
  }

  ExprP indexOperand(P::IndexOperandContext *o) {
    Depth guard(*this);
    if (tooDeep(o)) return mk(ExprOp::IntLit, loc(o));
    if (auto *c = dynamic_cast<P::IndexCallContext *>(o)) {
      std::vector<ExprP> kids{indexOperand(c->indexOperand())};
      callArgs(c->args(), kids);
      SourceLoc calleeLoc = kids[0]->loc;
      return mk(ExprOp::Call, calleeLoc, std::move(kids));
    }
    if (auto *c = dynamic_cast<P::IndexTupleContext *>(o)) {
      std::vector<ExprP> kids;
      for (auto *e : c->expr()) kids.push_back(expr(e));
      return mk(ExprOp::Tuple, loc(c), std::move(kids));
    }
    if (auto *c = dynamic_cast<P::IndexParenContext *>(o)) return expr(c->expr());
    if (auto *c = dynamic_cast<P::IndexLiteralContext *>(o)) return literal(c->literal());
    auto *c = dynamic_cast<P::IndexVarContext *>(o);
    auto e = mk(ExprOp::Var, loc(c));
    std::const_pointer_cast<Expr>(e)->text = nameOf(c->name());
    return e;
  }

  EinsumSynP einsumAccess(P::EinsumAccessContext *a) {
    auto out = std::make_shared<EinsumSyn>();
    out->op = EinOp::Access;
    out->loc = loc(a);
    auto names = a->name();
    out->tensor = nameOf(names[0]);
    for (size_t i = 1; i < names.size(); ++i) out->indices.push_back(EinsumIndex{nameOf(names[i]), loc(names[i])});
    return out;
  }

  EinsumSynP einsum(P::EinsumExprContext *e) {
    Depth guard(*this);
    auto out = std::make_shared<EinsumSyn>();
    out->loc = loc(e);
    if (tooDeep(e)) {
      out->op = EinOp::Lit;
      out->literal = mk(ExprOp::IntLit, loc(e));
      return out;
    }
    if (auto *c = dynamic_cast<P::EinMulContext *>(e)) {
      out->op = c->op->getText() == "*" ? EinOp::Mul : EinOp::Div;
      out->loc = loc(c->op);
      out->kids = {einsum(c->einsumExpr(0)), einsum(c->einsumExpr(1))};
    } else if (auto *c = dynamic_cast<P::EinAddContext *>(e)) {
      out->op = c->op->getText() == "+" ? EinOp::Add : EinOp::Sub;
      out->loc = loc(c->op);
      out->kids = {einsum(c->einsumExpr(0)), einsum(c->einsumExpr(1))};
    } else if (auto *c = dynamic_cast<P::EinNegContext *>(e)) {
      out->op = EinOp::Neg;
      out->kids = {einsum(c->einsumExpr())};
    } else if (auto *c = dynamic_cast<P::EinParenContext *>(e)) {
      return einsum(c->einsumExpr());
    } else if (auto *c = dynamic_cast<P::EinLitContext *>(e)) {
      out->op = EinOp::Lit;
      out->literal = literal(c->literal());
    } else if (auto *c = dynamic_cast<P::EinAccessContext *>(e)) {
      return einsumAccess(c->einsumAccess());
    }
    return out;
  }

  ExprP expr(P::ExprContext *x) {
    Depth guard(*this);
    if (tooDeep(x)) return mk(ExprOp::IntLit, loc(x));
    if (auto *c = dynamic_cast<P::CallExprContext *>(x)) {
      std::vector<ExprP> kids{expr(c->expr())};
      callArgs(c->args(), kids);
      SourceLoc calleeLoc = kids[0]->loc;
      return mk(ExprOp::Call, calleeLoc, std::move(kids));
    }
    if (auto *c = dynamic_cast<P::ProjExprContext *>(x)) {
      auto e = std::make_shared<Expr>();
      e->op = ExprOp::Proj;
      e->loc = loc(c->DOT_INT());
      std::string digits = c->DOT_INT()->getText().substr(1);
      if (digits.size() > 6) {
        error(e->loc, "tuple projection ." + digits + " is out of range");
      } else {
        e->proj = std::atoi(digits.c_str());
      }
      e->kids = {expr(c->expr())};
      return e;
    }
    if (auto *c = dynamic_cast<P::IndexExprContext *>(x)) {
      return mk(ExprOp::Index, loc(c->op), {expr(c->expr()), indexOperand(c->indexOperand())});
    }
    if (auto *c = dynamic_cast<P::UnaryExprContext *>(x)) {
      auto e = std::make_shared<Expr>();
      e->op = ExprOp::Unary;
      e->loc = loc(c->op);
      e->unop = c->op->getText() == "-" ? UnOp::Neg : UnOp::Not;
      e->kids = {expr(c->expr())};
      return e;
    }
    if (auto *c = dynamic_cast<P::MulExprContext *>(x)) return binary(c->op, c->expr(0), c->expr(1));
    if (auto *c = dynamic_cast<P::AddExprContext *>(x)) return binary(c->op, c->expr(0), c->expr(1));
    if (auto *c = dynamic_cast<P::CmpExprContext *>(x)) return binary(c->op, c->expr(0), c->expr(1));
    if (auto *c = dynamic_cast<P::AndExprContext *>(x)) {
      auto e = std::const_pointer_cast<Expr>(mk(ExprOp::Binary, loc(c->op), {expr(c->expr(0)), expr(c->expr(1))}));
      e->binop = BinOp::And;
      return e;
    }
    if (auto *c = dynamic_cast<P::OrExprContext *>(x)) {
      auto e = std::const_pointer_cast<Expr>(mk(ExprOp::Binary, loc(c->op), {expr(c->expr(0)), expr(c->expr(1))}));
      e->binop = BinOp::Or;
      return e;
    }
    if (auto *c = dynamic_cast<P::PipeExprContext *>(x)) return mk(ExprOp::Pipe, loc(c->op), {expr(c->expr(0)), expr(c->expr(1))});
    if (auto *c = dynamic_cast<P::AnnotExprContext *>(x)) {
      auto e = std::const_pointer_cast<Expr>(mk(ExprOp::Annot, loc(c->op), {expr(c->expr())}));
      e->type = type(c->dataType());
      return e;
    }
    if (auto *c = dynamic_cast<P::LambdaExprContext *>(x)) {
      auto e = std::const_pointer_cast<Expr>(mk(ExprOp::Lambda, loc(c), {}));
      e->pattern = pattern(c->pattern());
      e->kids = {expr(c->expr())};
      return e;
    }
    if (auto *c = dynamic_cast<P::LetExprContext *>(x)) {
      auto e = std::const_pointer_cast<Expr>(mk(ExprOp::Let, loc(c), {}));
      e->pattern = pattern(c->pattern());
      e->kids = {expr(c->expr(0)), expr(c->expr(1))};
      return e;
    }
    if (auto *c = dynamic_cast<P::IfExprContext *>(x))
      return mk(ExprOp::If, loc(c), {expr(c->expr(0)), expr(c->expr(1)), expr(c->expr(2))});
    if (auto *c = dynamic_cast<P::EinsumExpr_Context *>(x)) {
      auto e = std::const_pointer_cast<Expr>(mk(ExprOp::Einsum, loc(c), {}));
      auto out = std::const_pointer_cast<EinsumSyn>(einsumAccess(c->einsumAccess()));
      out->rhs = einsum(c->einsumExpr());
      e->einsum = out;
      return e;
    }
    if (auto *c = dynamic_cast<P::TupleExprContext *>(x)) {
      std::vector<ExprP> kids;
      for (auto *k : c->expr()) kids.push_back(expr(k));
      return mk(ExprOp::Tuple, loc(c), std::move(kids));
    }
    if (auto *c = dynamic_cast<P::ParenExprContext *>(x)) return expr(c->expr());
    if (auto *c = dynamic_cast<P::LiteralExprContext *>(x)) return literal(c->literal());
    auto *c = dynamic_cast<P::VarExprContext *>(x);
    auto e = std::const_pointer_cast<Expr>(mk(ExprOp::Var, loc(c), {}));
    e->text = nameOf(c->name());
    return e;
  }

  const SourceManager &sm_;
  uint32_t file_;
  Diagnostics &diags_;
  uint32_t lineOffset_ = 0;  // lines of the file before the parsed text
  bool failed_ = false;
  int depth_ = 0;
  bool reportedDepth_ = false;
};

}  // namespace

std::optional<ast::Module> buildAst(grammar::SplParser::ProgramContext *tree, const SourceManager &sm,
                                    uint32_t file, Diagnostics &diags, uint32_t firstLine) {
  Builder b(sm, file, diags, firstLine);
  return b.program(tree);
}

}  // namespace spl
