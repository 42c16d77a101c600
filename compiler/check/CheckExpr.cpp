/// \file CheckExpr.cpp: expressions, applications and user-def calls.
/// Applications are flattened first (curried calls and pipes become one argument list), so
/// that data arguments can be checked before the functions that consume them: `a |> map(f)`
/// types `a`, then checks `f` against the element type of `a`.
#include <limits>

#include "ast/AstPrinter.h"
#include "check/CheckerImpl.h"

namespace spl::check {

namespace {

tir::ExprP node(tir::ExprKind k, SourceLoc loc, TypeP type, std::vector<tir::ExprP> args = {}) {
  auto e = std::make_shared<tir::Expr>();
  e->kind = k;
  e->loc = loc;
  e->type = std::move(type);
  e->args = std::move(args);
  return e;
}

tir::ExprP varRef(const tir::VarP &v, SourceLoc loc) {
  auto e = std::make_shared<tir::Expr>();
  e->kind = tir::ExprKind::VarRef;
  e->loc = loc;
  e->type = v->type;
  e->var = v;
  return e;
}

tir::ExprP natValue(const Nat &n, SourceLoc loc) {
  auto e = std::make_shared<tir::Expr>();
  e->kind = tir::ExprKind::NatValue;
  e->loc = loc;
  e->type = types::scalar(ScalarKind::I64);
  e->nat = n;
  return e;
}

/// Flattens f(a)(b), e |> f(a) into a head and argument groups.
void flatten(const ast::Expr &e, const ast::Expr *&head, std::vector<std::vector<Arg>> &groups) {
  if (e.op == ast::ExprOp::Call) {
    flatten(*e.kids[0], head, groups);
    std::vector<Arg> g;
    for (size_t i = 1; i < e.kids.size(); ++i) g.push_back(Arg{e.kids[i].get(), nullptr, e.kids[i]->loc});
    groups.push_back(std::move(g));
    return;
  }
  if (e.op == ast::ExprOp::Pipe) {
    flatten(*e.kids[1], head, groups);
    groups.push_back({Arg{e.kids[0].get(), nullptr, e.kids[0]->loc}});
    return;
  }
  head = &e;
}

const char *binOpWhat(ast::BinOp op) { return ast::binOpToken(op); }

}  // namespace

tir::ExprP Checker::checkArg(const Arg &a, const TypeP &expected) {
  if (a.typed) {
    if (expected) expect(expected, a.typed->type, a.loc, "this argument");
    return a.typed;
  }
  return check(*a.syn, expected);
}

tir::ExprP Checker::check(const ast::Expr &e, const TypeP &expected) {
  if (++depth_ > 3000) fail(e.loc, "expression nested too deeply");
  struct Leave {
    int &d;
    ~Leave() { --d; }
  } leave{depth_};
  tir::ExprP r;
  switch (e.op) {
    case ast::ExprOp::IntLit:
    case ast::ExprOp::FloatLit:
    case ast::ExprOp::BoolLit: r = literal(e, expected); break;
    case ast::ExprOp::Var: r = checkVar(e, expected); break;
    case ast::ExprOp::Call:
    case ast::ExprOp::Pipe: r = checkApp(e, expected); break;
    case ast::ExprOp::Index: r = checkIndex(e); break;
    case ast::ExprOp::Proj: {
      tir::ExprP a = check(*e.kids[0], nullptr);
      TypeP t = resolve(a->type);
      if (t->kind == TypeKind::Meta)
        fail(e.loc, fmt::format("cannot tell the type of the tuple projected by .{}; annotate it, e.g. (p : (f32, i32))", e.proj));
      if (t->kind != TypeKind::Tuple)
        fail(e.loc, fmt::format("projection .{} needs a tuple, found {} (`{}`)", e.proj, describe(t), types::str(zonk(t))));
      if (static_cast<size_t>(e.proj) >= t->elems.size())
        fail(e.loc, fmt::format("projection .{} of a tuple with {} components", e.proj, t->elems.size()));
      r = node(tir::ExprKind::Proj, e.loc, t->elems[e.proj], {a});
      std::const_pointer_cast<tir::Expr>(r)->proj = e.proj;
      break;
    }
    case ast::ExprOp::Unary: {
      if (e.unop == ast::UnOp::Not) {
        tir::ExprP a = check(*e.kids[0], types::scalar(ScalarKind::Bool));
        r = node(tir::ExprKind::Unary, e.loc, a->type, {a});
      } else {
        tir::ExprP a = check(*e.kids[0], nullptr);
        if (resolve(a->type)->kind == TypeKind::Idx) {
          a = node(tir::ExprKind::Convert, a->loc, types::scalar(ScalarKind::I64), {a});
        }
        if (!isNumeric(a->type))
          fail(e.loc, "unary '-' needs a number, found " + describe(resolve(a->type)) + " (`" + types::str(zonk(a->type)) + "`)");
        r = node(tir::ExprKind::Unary, e.loc, a->type, {a});
      }
      std::const_pointer_cast<tir::Expr>(r)->unop = e.unop;
      break;
    }
    case ast::ExprOp::Binary: r = checkBinary(e, expected); break;
    case ast::ExprOp::Annot: {
      push();
      TypeP t = resolveType(*e.type);
      pop();
      r = check(*e.kids[0], t);
      break;
    }
    case ast::ExprOp::Lambda: r = checkLambda(e, expected); break;
    case ast::ExprOp::Let: {
      tir::ExprP value = check(*e.kids[0], nullptr);
      push();
      std::vector<std::pair<tir::VarP, tir::ExprP>> lets;
      tir::VarP v = bindPattern(*e.pattern, value->type, lets);
      tir::ExprP body;
      try {
        body = check(*e.kids[1], expected);
      } catch (...) {
        pop();
        throw;
      }
      pop();
      lets.insert(lets.begin(), {v, value});
      r = wrapLets(lets, body);
      break;
    }
    case ast::ExprOp::If: {
      tir::ExprP c = check(*e.kids[0], types::scalar(ScalarKind::Bool));
      tir::ExprP t = check(*e.kids[1], expected);
      tir::ExprP f = check(*e.kids[2], nullptr);
      expect(t->type, f->type, e.kids[2]->loc, "the else branch (it must have the type of the then branch)");
      r = node(tir::ExprKind::If, e.loc, t->type, {c, t, f});
      break;
    }
    case ast::ExprOp::Tuple: {
      TypeP ex = expected ? resolve(expected) : nullptr;
      std::vector<tir::ExprP> parts;
      std::vector<TypeP> ts;
      for (size_t i = 0; i < e.kids.size(); ++i) {
        TypeP want = ex && ex->kind == TypeKind::Tuple && ex->elems.size() == e.kids.size() ? ex->elems[i] : nullptr;
        parts.push_back(check(*e.kids[i], want));
        ts.push_back(parts.back()->type);
      }
      r = node(tir::ExprKind::Tuple, e.loc, types::tuple(ts), parts);
      break;
    }
    case ast::ExprOp::OpFunc: r = opFunction(e.binop, false, false, e.loc, expected); break;
    case ast::ExprOp::Einsum: r = checkEinsum(e, expected); break;
  }
  if (expected) expect(expected, r->type, e.loc, "this expression");
  return r;
}

tir::ExprP Checker::literal(const ast::Expr &e, const TypeP &expected) {
  auto l = std::make_shared<tir::Expr>();
  l->kind = tir::ExprKind::Lit;
  l->loc = e.loc;
  switch (e.op) {
    case ast::ExprOp::IntLit:
      l->ival = e.ival;
      l->fval = static_cast<double>(e.ival);
      l->type = freshMeta(Type::IntLiteral);
      break;
    case ast::ExprOp::FloatLit:
      l->fval = e.fval;
      l->type = freshMeta(Type::FloatLiteral);
      break;
    default:
      l->bval = e.bval;
      l->type = types::scalar(ScalarKind::Bool);
      break;
  }
  if (expected && !unify(expected, l->type)) {
    const char *what = e.op == ast::ExprOp::IntLit ? "an integer literal" : e.op == ast::ExprOp::FloatLit ? "a float literal" : "a bool literal";
    fail(e.loc, "type mismatch: expected `" + types::str(zonk(expected)) + "`, found " + what);
  }
  return l;
}

tir::ExprP Checker::checkVar(const ast::Expr &e, const TypeP &expected) {
  if (const Binding *b = lookup(e.text)) {
    switch (b->kind) {
      case Binding::Value: return varRef(b->value, e.loc);
      case Binding::NatVar: return natValue(Nat::var(b->nat), e.loc);
      case Binding::Tunable: return natValue(Nat(b->tunable), e.loc);
      case Binding::NatsVar:
        fail(e.loc, "'" + e.text + "' is a nats, not a value; use an element of it, e.g. " + e.text + "@i");
      case Binding::DataVar: fail(e.loc, "'" + e.text + "' is a type, not a value");
    }
  }
  if (hasDef(e.text)) return checkCallDef(e.text, e.loc, {}, expected);
  if (auto p = primitiveByName(e.text)) return checkPrim(*p, e.text, e.loc, {}, expected);
  if (e.text == "min" || e.text == "max") return opFunction(ast::BinOp::Add, true, e.text == "max", e.loc, expected);
  if (auto s = scalarByName(e.text)) {
    // A conversion used as a function value: f32 means x => f32(x).
    TypeP from = freshMeta(Type::NotNumeric);
    TypeP ex = expected ? resolve(expected) : nullptr;
    if (ex && ex->kind == TypeKind::Fun && ex->params.size() == 1 && !ex->params[0].isNat) from = ex->params[0].type;
    tir::VarP x = tir::makeVar("_x", from);
    tir::ExprP body = node(tir::ExprKind::Convert, e.loc, types::scalar(*s), {varRef(x, e.loc)});
    auto lam = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Lambda, e.loc, types::fun({FunParam{false, {}, from}}, body->type), {body}));
    lam->params.push_back(tir::Param{tir::Param::Value, x, {}});
    return lam;
  }
  if (auto t = env_->tunables.find(e.text); t != env_->tunables.end()) return natValue(Nat(t->second), e.loc);
  if (e.text == "inf") {  // the float literal infinity (`-inf` negates it), unless a binding shadows it
    ast::Expr lit = e;
    lit.op = ast::ExprOp::FloatLit;
    lit.fval = std::numeric_limits<double>::infinity();
    return literal(lit, expected);
  }
  fail(e.loc, "unknown name '" + e.text + "'");
}

tir::VarP Checker::bindPattern(const ast::Pattern &p, const TypeP &t, std::vector<std::pair<tir::VarP, tir::ExprP>> &lets) {
  if (!p.isTuple) {
    tir::VarP v = tir::makeVar(p.name, t);
    Binding b;
    b.kind = Binding::Value;
    b.value = v;
    bind(p.name, b);
    return v;
  }
  TypeP rt = resolve(t);
  if (rt->kind == TypeKind::Meta) {
    std::vector<TypeP> parts;
    for (size_t i = 0; i < p.elems.size(); ++i) parts.push_back(freshMeta());
    unify(rt, types::tuple(parts));
    rt = resolve(rt);
  }
  if (rt->kind != TypeKind::Tuple || rt->elems.size() != p.elems.size())
    fail(p.loc, fmt::format("the pattern {} expects a tuple of {} components, found {} (`{}`)", ast::printPattern(p),
                            p.elems.size(), describe(rt), types::str(zonk(rt))));
  tir::VarP whole = tir::makeVar("_" + ast::printPattern(p), t);
  for (size_t i = 0; i < p.elems.size(); ++i) {
    const ast::Pattern &sub = *p.elems[i];
    auto proj = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Proj, sub.loc, rt->elems[i], {varRef(whole, sub.loc)}));
    proj->proj = static_cast<int>(i);
    std::vector<std::pair<tir::VarP, tir::ExprP>> inner;
    tir::VarP v = bindPattern(sub, rt->elems[i], inner);
    lets.emplace_back(v, proj);
    lets.insert(lets.end(), inner.begin(), inner.end());
  }
  return whole;
}

tir::ExprP Checker::wrapLets(const std::vector<std::pair<tir::VarP, tir::ExprP>> &lets, tir::ExprP body) {
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
    auto l = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Let, it->second->loc, body->type, {it->second, body}));
    l->var = it->first;
    body = l;
  }
  return body;
}

tir::ExprP Checker::checkLambda(const ast::Expr &e, const TypeP &expected) {
  TypeP ex = expected ? resolve(expected) : nullptr;
  TypeP paramType;
  TypeP resultExpected;
  if (ex && ex->kind == TypeKind::Fun && !ex->params.empty() && !ex->params[0].isNat) {
    paramType = ex->params[0].type;
    if (ex->params.size() > 1) {
      std::vector<FunParam> rest(ex->params.begin() + 1, ex->params.end());
      resultExpected = types::fun(rest, ex->elems[0]);
    } else {
      resultExpected = ex->elems[0];
    }
  } else {
    paramType = freshMeta();
  }
  push();
  std::vector<std::pair<tir::VarP, tir::ExprP>> lets;
  tir::ExprP body;
  tir::VarP v;
  try {
    v = bindPattern(*e.pattern, paramType, lets);
    body = check(*e.kids[0], resultExpected);
  } catch (...) {
    pop();
    throw;
  }
  pop();
  body = wrapLets(lets, body);
  auto lam = std::const_pointer_cast<tir::Expr>(
      node(tir::ExprKind::Lambda, e.loc, types::fun({FunParam{false, {}, paramType}}, body->type), {body}));
  lam->params.push_back(tir::Param{tir::Param::Value, v, {}});
  return lam;
}

tir::ExprP Checker::opFunction(ast::BinOp op, bool isMinMax, bool isMax, SourceLoc loc, const TypeP &expected) {
  TypeP ex = expected ? resolve(expected) : nullptr;
  TypeP elem;
  if (ex && ex->kind == TypeKind::Fun && ex->params.size() == 1 && !ex->params[0].isNat) {
    TypeP pt = resolve(ex->params[0].type);
    if (pt->kind == TypeKind::Tuple && pt->elems.size() == 2) {
      elem = pt->elems[0];
      expect(elem, pt->elems[1], loc, "the operands of an operator");
    }
  }
  bool logical = !isMinMax && (op == ast::BinOp::And || op == ast::BinOp::Or);
  bool comparison = !isMinMax && (op == ast::BinOp::Eq || op == ast::BinOp::Ne || op == ast::BinOp::Lt ||
                                  op == ast::BinOp::Le || op == ast::BinOp::Gt || op == ast::BinOp::Ge);
  if (!elem) elem = logical ? types::scalar(ScalarKind::Bool) : freshMeta(Type::AnyNumeric);
  if (logical) expect(types::scalar(ScalarKind::Bool), elem, loc, "the operands of '&&'/'||'");
  else if (!isNumeric(elem) && !(comparison && (op == ast::BinOp::Eq || op == ast::BinOp::Ne)))
    fail(loc, std::string("operator '") + (isMinMax ? (isMax ? "max" : "min") : ast::binOpToken(op)) +
                  "' needs numbers, found `" + types::str(zonk(elem)) + "`");
  TypeP pair = types::tuple({elem, elem});
  tir::VarP p = tir::makeVar("_p", pair);
  auto p0 = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Proj, loc, elem, {varRef(p, loc)}));
  p0->proj = 0;
  auto p1 = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Proj, loc, elem, {varRef(p, loc)}));
  p1->proj = 1;
  TypeP result = comparison ? types::scalar(ScalarKind::Bool) : elem;
  std::shared_ptr<tir::Expr> body;
  if (isMinMax) {
    body = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::MinMax, loc, elem, {p0, p1}));
    body->isMax = isMax;
  } else {
    body = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Binary, loc, result, {p0, p1}));
    body->binop = op;
  }
  auto lam = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Lambda, loc, types::fun({FunParam{false, {}, pair}}, result), {body}));
  lam->params.push_back(tir::Param{tir::Param::Value, p, {}});
  return lam;
}

tir::ExprP Checker::checkBinary(const ast::Expr &e, const TypeP &expected) {
  ast::BinOp op = e.binop;
  bool logical = op == ast::BinOp::And || op == ast::BinOp::Or;
  bool comparison = op == ast::BinOp::Eq || op == ast::BinOp::Ne || op == ast::BinOp::Lt || op == ast::BinOp::Le ||
                    op == ast::BinOp::Gt || op == ast::BinOp::Ge;
  if (logical) {
    tir::ExprP a = check(*e.kids[0], types::scalar(ScalarKind::Bool));
    tir::ExprP b = check(*e.kids[1], types::scalar(ScalarKind::Bool));
    auto r = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Binary, e.loc, types::scalar(ScalarKind::Bool), {a, b}));
    r->binop = op;
    return r;
  }
  TypeP hint = !comparison && expected && isNumeric(expected) ? expected : nullptr;
  tir::ExprP a = check(*e.kids[0], nullptr);
  tir::ExprP b = check(*e.kids[1], nullptr);
  // An idx value takes part in arithmetic and comparisons as an i64.
  auto widen = [&](tir::ExprP x) {
    if (resolve(x->type)->kind == TypeKind::Idx) return node(tir::ExprKind::Convert, x->loc, types::scalar(ScalarKind::I64), {x});
    return x;
  };
  a = widen(a);
  b = widen(b);
  if (hint) unify(hint, a->type);
  if (!unify(a->type, b->type)) {
    TypeP ta = resolve(a->type), tb = resolve(b->type);
    if (ta->kind == TypeKind::Tuple || tb->kind == TypeKind::Tuple) {
      // `zip(a, b) |> map(p => p * 2.0)`: arithmetic on a pair is not defined; name its parts.
      const TypeP &tuple = ta->kind == TypeKind::Tuple ? ta : tb;
      std::string parts;
      for (size_t k = 0; k < tuple->elems.size(); ++k)
        parts += (k ? ", " : "") + (tuple->elems.size() == 2 ? std::string(k ? "y" : "x") : fmt::format("x{}", k));
      fail(e.loc, std::string("'") + binOpWhat(op) + "' needs numbers, but " + (ta->kind == TypeKind::Tuple ? "its left" : "its right") +
                      " operand is " + languageTerms(zonk(tuple)) + " (zip and tuple arrays give tuples); take the tuple apart in the lambda: (" +
                      parts + ") => ...");
    }
    fail(e.loc, std::string("the operands of '") + binOpWhat(op) + "' have different types: " + languageTerms(zonk(a->type)) +
                    " and " + languageTerms(zonk(b->type)) + " (there are no implicit conversions; use f32(x), i32(x), ...)");
  }
  bool eqOnBool = (op == ast::BinOp::Eq || op == ast::BinOp::Ne) && resolve(a->type)->kind == TypeKind::Scalar &&
                  resolve(a->type)->scalar == ScalarKind::Bool;
  if (!eqOnBool && !isNumeric(a->type)) {
    fail(e.loc, std::string("operator '") + binOpWhat(op) + "' needs numbers, found " + describe(resolve(a->type)) + " (`" +
                    types::str(zonk(a->type)) + "`)");
  }
  TypeP rt = comparison ? types::scalar(ScalarKind::Bool) : a->type;
  auto r = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Binary, e.loc, rt, {a, b}));
  r->binop = op;
  return r;
}

tir::ExprP Checker::checkIndex(const ast::Expr &e) {
  const ast::Expr &arr = *e.kids[0];
  if (arr.op == ast::ExprOp::Var) {
    const Binding *b = lookup(arr.text);
    if (b && b->kind == Binding::NatsVar) return natValue(Nat::lookup(b->nat, exprToNat(*e.kids[1])), e.loc);
  }
  tir::ExprP a = check(arr, nullptr);
  TypeP at = expectArray(a->type, e.loc, "'@'");
  tir::ExprP i = check(*e.kids[1], nullptr);
  TypeP it = resolve(i->type);
  bool ok = it->kind == TypeKind::Idx || (it->kind == TypeKind::Scalar && isInteger(it->scalar)) ||
            (it->kind == TypeKind::Meta && it->numeric == Type::IntLiteral);
  if (!ok)
    fail(e.kids[1]->loc, "an index must be an integer, an idx or a nat, found " + describe(it) + " (`" +
                             types::str(zonk(it)) + "`)");
  // A constant index outside a constant length is an error here, not an out-of-bounds read.
  if (std::optional<Nat> constIndex = tirToNat(i))
    if (auto k = constIndex->asConst(), len = zonk(at->len).asConst(); k && len && (*k < 0 || *k >= *len))
      fail(e.kids[1]->loc, fmt::format("index {} is out of range: the array has {} element{} (`{}`)", *k, *len,
                                       *len == 1 ? "" : "s", types::str(zonk(at))));
  TypeP elem;
  if (types::isDependent(*at)) {
    auto n = tirToNat(i);
    if (!n) fail(e.kids[1]->loc, "cannot index the position-dependent array `" + types::str(zonk(at)) +
                                     "` with this expression: its element type needs the index as a nat");
    elem = types::elementAt(*at, *n);
  } else {
    elem = at->elems[0];
  }
  return node(tir::ExprKind::Index, e.loc, elem, {a, i});
}

tir::ExprP Checker::etaExpand(const std::vector<TypeP> &missing, const TypeP &expected, SourceLoc loc,
                              const std::function<tir::ExprP(std::vector<Arg>)> &complete) {
  TypeP ex = expected ? resolve(expected) : nullptr;
  std::vector<tir::Param> params;
  std::vector<FunParam> fps;
  std::vector<Arg> args;
  for (size_t i = 0; i < missing.size(); ++i) {
    TypeP t = missing[i];
    if (ex && ex->kind == TypeKind::Fun && i < ex->params.size() && !ex->params[i].isNat) {
      expect(t, ex->params[i].type, loc, "the argument of this function");
    }
    tir::VarP v = tir::makeVar("_a" + std::to_string(i), t);
    params.push_back(tir::Param{tir::Param::Value, v, {}});
    fps.push_back(FunParam{false, {}, t});
    args.push_back(Arg{nullptr, varRef(v, loc), loc});
  }
  tir::ExprP body = complete(args);
  auto lam = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Lambda, loc, types::fun(fps, body->type), {body}));
  lam->params = params;
  return lam;
}

tir::ExprP Checker::checkApp(const ast::Expr &e, const TypeP &expected) {
  const ast::Expr *head = nullptr;
  std::vector<std::vector<Arg>> groups;
  flatten(e, head, groups);
  std::vector<Arg> flat;
  for (auto &g : groups)
    for (Arg &a : g) flat.push_back(a);

  if (head->op == ast::ExprOp::Var) {
    const std::string &name = head->text;
    const Binding *b = lookup(name);
    if (!b) {
      if (hasDef(name)) return checkCallDef(name, head->loc, groups, expected);
      if (auto p = primitiveByName(name)) return checkPrim(*p, name, head->loc, flat, expected);
      if (auto s = scalarByName(name)) {
        if (flat.size() != 1) fail(head->loc, "the conversion " + name + "(x) takes one argument");
        tir::ExprP x = checkArg(flat[0], nullptr);
        TypeP xt = resolve(x->type);
        bool ok = xt->kind == TypeKind::Idx || xt->kind == TypeKind::Var || (xt->kind == TypeKind::Scalar) ||
                  (xt->kind == TypeKind::Meta && xt->numeric != Type::NotNumeric);
        if (!ok) fail(flat[0].loc, "cannot convert " + describe(xt) + " to " + name);
        return node(tir::ExprKind::Convert, head->loc, types::scalar(*s), {x});
      }
      if (name == "sqrt" || name == "abs") {
        // Math functions of one number: sqrt of a float (a data type variable is checked when
        // the export fixes it), abs of any number.
        if (flat.size() != 1) fail(head->loc, name + " takes one argument");
        tir::ExprP x = checkArg(flat[0], expected && isNumeric(expected) ? expected : nullptr);
        if (resolve(x->type)->kind == TypeKind::Idx) x = node(tir::ExprKind::Convert, x->loc, types::scalar(ScalarKind::I64), {x});
        if (!isNumeric(x->type)) fail(flat[0].loc, name + " needs a number, found `" + types::str(zonk(x->type)) + "`");
        TypeP xt = resolve(x->type);
        if (name == "sqrt" && xt->kind == TypeKind::Meta && xt->numeric == Type::IntLiteral)
          unify(xt, types::scalar(ScalarKind::F32));
        xt = resolve(x->type);
        if (name == "sqrt" && xt->kind == TypeKind::Scalar && !isFloat(xt->scalar))
          fail(flat[0].loc, "sqrt needs a float (f32 or f64), found `" + types::str(xt) + "`");
        auto r = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::Unary, head->loc, x->type, {x}));
        r->unop = name == "sqrt" ? ast::UnOp::Sqrt : ast::UnOp::Abs;
        return r;
      }
      if (name == "min" || name == "max") {
        std::vector<tir::ExprP> xs;
        if (flat.size() == 2) {
          tir::ExprP a = checkArg(flat[0], nullptr);
          tir::ExprP c = checkArg(flat[1], nullptr);
          if (!unify(a->type, c->type))
            fail(head->loc, "the arguments of " + name + " have different types: `" + types::str(zonk(a->type)) +
                                "` and `" + types::str(zonk(c->type)) + "`");
          if (!isNumeric(a->type)) fail(head->loc, name + " needs numbers, found `" + types::str(zonk(a->type)) + "`");
          auto r = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::MinMax, head->loc, a->type, {a, c}));
          r->isMax = name == "max";
          return r;
        }
        tir::ExprP f = opFunction(ast::BinOp::Add, true, name == "max", head->loc, nullptr);
        if (flat.size() != 1) fail(head->loc, name + " takes two arguments");
        tir::ExprP x = checkArg(flat[0], std::const_pointer_cast<const Type>(resolve(f->type))->params[0].type);
        return node(tir::ExprKind::App, head->loc, resolve(f->type)->elems[0], {f, x});
      }
      if (env_->tunables.count(name)) fail(head->loc, "tunable '" + name + "' is a nat, not a function");
      fail(head->loc, "unknown function '" + name + "'");
    }
    if (b->kind != Binding::Value) fail(head->loc, "'" + name + "' is not a function");
  }
  // A function value: a lambda, a let-bound function, or any expression of function type.
  tir::ExprP f;
  if (head->op == ast::ExprOp::Lambda) {
    // Check the arguments first so the lambda's parameters get their types.
    std::vector<tir::ExprP> args;
    std::vector<FunParam> ps;
    for (const auto &g : groups) {
      if (g.size() == 1) {
        args.push_back(checkArg(g[0], nullptr));
      } else {
        std::vector<tir::ExprP> parts;
        std::vector<TypeP> ts;
        for (const Arg &a : g) {
          parts.push_back(checkArg(a, nullptr));
          ts.push_back(parts.back()->type);
        }
        args.push_back(node(tir::ExprKind::Tuple, g[0].loc, types::tuple(ts), parts));
      }
      ps.push_back(FunParam{false, {}, args.back()->type});
    }
    f = check(*head, types::fun(ps, freshMeta()));
    std::vector<tir::ExprP> all{f};
    all.insert(all.end(), args.begin(), args.end());
    return node(tir::ExprKind::App, e.loc, resolve(f->type)->elems[0], all);
  }
  f = check(*head, nullptr);
  TypeP ft = resolve(f->type);
  if (ft->kind != TypeKind::Fun) fail(head->loc, "this is " + describe(ft) + ", not a function");
  std::vector<tir::ExprP> all{f};
  size_t pi = 0;
  for (const auto &g : groups) {
    if (pi >= ft->params.size()) fail(g[0].loc, fmt::format("too many arguments: the function takes {}", ft->params.size()));
    TypeP pt = resolve(ft->params[pi].type);
    if (g.size() > 1 && pt->kind == TypeKind::Tuple && pt->elems.size() == g.size()) {
      std::vector<tir::ExprP> parts;
      for (size_t k = 0; k < g.size(); ++k) parts.push_back(checkArg(g[k], pt->elems[k]));
      all.push_back(node(tir::ExprKind::Tuple, g[0].loc, pt, parts));
      ++pi;
      continue;
    }
    for (const Arg &a : g) {
      if (pi >= ft->params.size()) fail(a.loc, fmt::format("too many arguments: the function takes {}", ft->params.size()));
      all.push_back(checkArg(a, ft->params[pi].type));
      ++pi;
    }
  }
  if (pi != ft->params.size()) fail(e.loc, fmt::format("this function takes {} arguments, found {}", ft->params.size(), pi));
  return node(tir::ExprKind::App, e.loc, ft->elems[0], all);
}

tir::ExprP Checker::checkCallDef(const std::string &name, SourceLoc loc, std::vector<std::vector<Arg>> groups,
                                 const TypeP &expected) {
  tir::DefP def = lookupDef(name, loc);
  if (!def) fail(loc, "unknown function '" + name + "'");
  NatSubst s;
  std::map<int64_t, TypeP> ts;
  std::vector<tir::CallArg> callArgs;
  tir::CallRecord rec;
  rec.loc = loc;
  rec.callee = name;
  auto inst = [&](const TypeP &t) { return tir::substituteTypeVars(types::substitute(t, s), ts); };

  size_t gi = 0, ai = 0;  // cursor: group, argument within the group
  auto haveArg = [&]() { return gi < groups.size(); };
  auto nextArg = [&]() {
    Arg a = groups[gi][ai];
    if (++ai >= groups[gi].size()) {
      ++gi;
      ai = 0;
    }
    return a;
  };
  size_t explicitCount = 0;
  for (const tir::DefParam &p : def->params)
    if (!p.implicit) ++explicitCount;

  std::vector<size_t> missing;  // explicit params without an argument (partial application)
  for (size_t pi = 0; pi < def->params.size(); ++pi) {
    const tir::DefParam &p = def->params[pi];
    tir::CallArg ca;
    if (p.implicit) {
      switch (p.sort) {
        case tir::DefParam::Nat: {
          Nat m = freshNatMeta(p.name);
          s.vars.emplace(p.natVar.id, m);
          ca.sort = tir::CallArg::Nat;
          ca.nat = m;
          rec.implicits.push_back({p.name, false, m, nullptr});
          break;
        }
        case tir::DefParam::Data: {
          TypeP m = freshMeta(Type::NotNumeric, p.name);
          ts[p.typeVar->id] = m;
          ca.sort = tir::CallArg::Data;
          ca.type = m;
          rec.implicits.push_back({p.name, true, Nat(0), m});
          break;
        }
        case tir::DefParam::Nats:
          fail(loc, "cannot infer the implicit nats parameter '" + p.name + "' of '" + name + "'; make it explicit");
        case tir::DefParam::Value: break;
      }
      callArgs.push_back(ca);
      continue;
    }
    if (!haveArg() || !missing.empty()) {
      if (p.sort != tir::DefParam::Value)
        fail(loc, "missing the " + std::string(p.sort == tir::DefParam::Nat ? "nat" : "nats") + " argument '" + p.name +
                      "' of '" + name + "'");
      missing.push_back(pi);
      callArgs.push_back(tir::CallArg{tir::CallArg::Value, Nat(0), {}, nullptr, nullptr});
      continue;
    }
    switch (p.sort) {
      case tir::DefParam::Nat: {
        Arg a = nextArg();
        Nat n;
        if (a.syn) n = exprToNat(*a.syn);
        else if (auto k = tirToNat(a.typed)) n = *k;
        else fail(a.loc, "argument '" + p.name + "' of '" + name + "' must be a nat");
        s.vars.emplace(p.natVar.id, n);
        ca.sort = tir::CallArg::Nat;
        ca.nat = n;
        break;
      }
      case tir::DefParam::Nats: {
        Arg a = nextArg();
        const Binding *b = a.syn && a.syn->op == ast::ExprOp::Var ? lookup(a.syn->text) : nullptr;
        if (b && b->kind == Binding::NatsVar) {
          s.arrays.emplace(p.natVar.id, b->nat);
          ca.nats = b->nat;
        } else if (b && b->kind == Binding::Value && resolve(b->value->type)->kind == TypeKind::Array) {
          s.arrays.emplace(p.natVar.id, b->value->natId());
          ca.nats = b->value->natId();
        } else {
          fail(a.loc, "argument '" + p.name + "' of '" + name + "' must be a nats variable (or an integer array)");
        }
        ca.sort = tir::CallArg::Nats;
        break;
      }
      case tir::DefParam::Value: {
        TypeP pt = inst(p.value->type);
        TypeP rpt = resolve(pt);
        tir::ExprP v;
        // f(x, y) means f((x, y)) when the parameter is a tuple of exactly that arity.
        if (ai == 0 && groups[gi].size() > 1 && rpt->kind == TypeKind::Tuple && rpt->elems.size() == groups[gi].size()) {
          std::vector<tir::ExprP> parts;
          for (size_t k = 0; k < rpt->elems.size(); ++k) parts.push_back(checkArg(groups[gi][k], rpt->elems[k]));
          v = node(tir::ExprKind::Tuple, groups[gi][0].loc, rpt, parts);
          ++gi;
        } else {
          Arg a = nextArg();
          v = checkArg(a, pt);
        }
        TypeP vt = resolve(v->type);
        if ((vt->kind == TypeKind::Scalar && isInteger(vt->scalar)) || vt->kind == TypeKind::Idx) {
          if (auto n = tirToNat(v)) s.vars.emplace(p.value->id, *n);
        } else if (vt->kind == TypeKind::Array && v->kind == tir::ExprKind::VarRef) {
          s.arrays.emplace(p.value->id, v->var->natId());
        }
        ca.sort = tir::CallArg::Value;
        ca.value = v;
        break;
      }
      case tir::DefParam::Data: break;
    }
    callArgs.push_back(ca);
  }
  if (haveArg()) {
    const Arg &extra = groups[gi][ai];
    fail(extra.loc, fmt::format("too many arguments to '{}': it takes {} explicit argument{}", name, explicitCount,
                                explicitCount == 1 ? "" : "s"));
  }
  auto makeCall = [&, def, name, loc](std::vector<tir::CallArg> args, const NatSubst &subst) {
    TypeP rt = tir::substituteTypeVars(types::substitute(def->result, subst), ts);
    auto c = std::const_pointer_cast<tir::Expr>(node(tir::ExprKind::CallDef, loc, rt, {}));
    c->def = def;
    c->callArgs = std::move(args);
    return std::static_pointer_cast<const tir::Expr>(c);
  };
  tir::ExprP result;
  if (missing.empty()) {
    result = makeCall(callArgs, s);
  } else {
    std::vector<TypeP> mt;
    for (size_t pi : missing) mt.push_back(inst(def->params[pi].value->type));
    result = etaExpand(mt, expected, loc, [&](std::vector<Arg> args) {
      std::vector<tir::CallArg> full = callArgs;
      for (size_t k = 0; k < missing.size(); ++k) {
        full[missing[k]].value = args[k].typed;
        full[missing[k]].sort = tir::CallArg::Value;
      }
      return makeCall(full, s);
    });
  }
  rec.result = result->type;
  calls_.push_back(rec);
  return result;
}

}  // namespace spl::check
