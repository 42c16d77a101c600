/// \file CheckPrim.cpp: the dependent typing rules of the primitives (LANGUAGE.md section 5).
/// Each rule checks the data arguments first, then the function arguments against the element
/// types it found. A primitive applied to fewer arguments than it takes is eta-expanded into a
/// lambda over the missing (data) arguments: `map(reduce(+, 0.0))`.
#include "check/CheckerImpl.h"

namespace spl::check {

namespace {

tir::ExprP primNode(tir::Prim p, SourceLoc loc, TypeP type, std::vector<tir::ExprP> args, std::vector<Nat> nats = {}) {
  auto e = std::make_shared<tir::Expr>();
  e->kind = tir::ExprKind::Prim;
  e->prim = p;
  e->loc = loc;
  e->type = std::move(type);
  e->args = std::move(args);
  e->natArgs = std::move(nats);
  return e;
}

bool isLambdaSyntax(const Arg &a) { return a.syn && a.syn->op == ast::ExprOp::Lambda; }

/// The name a binder lambda gives its first parameter (`i` in `i => x => ...`), for printing.
std::string binderName(const Arg &a, const std::string &fallback) {
  if (a.syn && a.syn->op == ast::ExprOp::Lambda && !a.syn->pattern->isTuple) return a.syn->pattern->name;
  return fallback;
}

}  // namespace

std::optional<tir::Prim> Checker::primitiveByName(const std::string &name) const { return tir::primByName(name); }

tir::ExprP Checker::checkBinderLambda(const Arg &f, const std::vector<BinderSpec> &specs, const TypeP &expectedResult,
                                      const std::string &prim) {
  std::string form;
  for (const BinderSpec &s : specs)
    form += std::string(s.sort == tir::Param::Value ? "x" : s.nat.name.empty() ? "k" : s.nat.name) + " => ";
  form += "...";
  if (!f.syn) fail(f.loc, prim + " expects a function of the form `" + form + "`");
  const ast::Expr *cur = f.syn;
  std::vector<tir::Param> params;
  std::vector<FunParam> fps;
  std::vector<std::pair<tir::VarP, tir::ExprP>> lets;
  push();
  tir::ExprP body;
  try {
    for (const BinderSpec &s : specs) {
      if (cur->op != ast::ExprOp::Lambda) fail(cur->loc, prim + " expects a function of the form `" + form + "`");
      const ast::Pattern &pat = *cur->pattern;
      if (s.sort == tir::Param::Value) {
        tir::VarP v = bindPattern(pat, s.type, lets);
        params.push_back(tir::Param{tir::Param::Value, v, {}});
        fps.push_back(FunParam{false, {}, s.type});
      } else {
        if (pat.isTuple) fail(pat.loc, "this parameter of " + prim + " binds a " + (s.sort == tir::Param::Nat ? "nat" : "nats") + ", not a tuple");
        Binding b;
        b.kind = s.sort == tir::Param::Nat ? Binding::NatVar : Binding::NatsVar;
        b.nat = s.nat;
        bind(pat.name, b);
        params.push_back(tir::Param{s.sort, nullptr, s.nat});
        fps.push_back(FunParam{true, s.nat, nullptr});
      }
      cur = cur->kids[0].get();
    }
    body = check(*cur, expectedResult);
  } catch (...) {
    pop();
    throw;
  }
  pop();
  body = wrapLets(lets, body);
  auto lam = std::make_shared<tir::Expr>();
  lam->kind = tir::ExprKind::Lambda;
  lam->loc = f.loc;
  lam->params = params;
  lam->args = {body};
  lam->type = types::fun(fps, body->type);
  return lam;
}

tir::ExprP Checker::checkPrim(tir::Prim p, const std::string &name, SourceLoc loc, std::vector<Arg> args,
                              const TypeP &expected) {
  int arity = tir::primArity(p);
  if (static_cast<int>(args.size()) > arity)
    fail(args[arity].loc, fmt::format("too many arguments to '{}': it takes {}", name, arity));
  if (static_cast<int>(args.size()) < arity) {
    // Partial application: the missing arguments are the trailing data arguments.
    std::vector<TypeP> missing;
    for (size_t i = args.size(); i < static_cast<size_t>(arity); ++i) missing.push_back(freshMeta());
    std::vector<Arg> given = args;
    return etaExpand(missing, expected, loc, [&, given](std::vector<Arg> extra) {
      std::vector<Arg> all = given;
      all.insert(all.end(), extra.begin(), extra.end());
      return checkPrim(p, name, loc, all, nullptr);
    });
  }

  PrimCall c{*this, p, name, loc, args, expected};
  switch (p) {
#define SPL_PRIMITIVE(Enum, text, arity, sort, typeRule, lowerRule) \
  case tir::Prim::Enum: return typeRule(c);
#include "tir/Primitives.def"
  }
  fail(loc, "unknown primitive '" + name + "'");
}

// ---- the typing rules, one per row of tir/Primitives.def ---------------------------------------

namespace {
using Imp = tir::CallRecord::Implicit;
Imp N(const char *n, const Nat &v) { return Imp{n, false, v, nullptr}; }
Imp T(const char *n, const TypeP &t) { return Imp{n, true, Nat(0), t}; }
}  // namespace

Nat Checker::PrimCall::natArg(const Arg &a, const char *what) const {
  if (a.syn) return ck.exprToNat(*a.syn);
  if (auto n = ck.tirToNat(a.typed)) return *n;
  ck.fail(a.loc, std::string("the ") + what + " of " + name + " must be a nat");
}

void Checker::PrimCall::record(TypeP result, std::vector<tir::CallRecord::Implicit> implicits) const {
  ck.calls_.push_back(tir::CallRecord{loc, name, std::move(implicits), std::move(result)});
}

tir::ExprP Checker::typeMap(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[1], nullptr);
  TypeP at = expectArray(a->type, c.args[1].loc, c.name);
  const ast::Expr *f = c.args[0].syn;
  bool positional = f && f->op == ast::ExprOp::Lambda && !f->pattern->isTuple && f->kids[0]->op == ast::ExprOp::Lambda;
  NatVarId i = freshNatVar(positional ? f->pattern->name : positionName());
  addFact(i, Nat(0), at->len);
  TypeP elem = types::elementAt(*at, Nat::var(i));
  tir::ExprP fn;
  if (positional) {
    fn = checkBinderLambda(c.args[0], {{tir::Param::Nat, i, nullptr}, {tir::Param::Value, {}, elem}}, nullptr, c.name);
  } else {
    tir::ExprP fv = checkArg(c.args[0], types::fun({FunParam{false, {}, elem}}, freshMeta()));
    TypeP ft = resolve(fv->type);
    tir::VarP x = tir::makeVar("_x", elem);
    auto xr = std::make_shared<tir::Expr>();
    xr->kind = tir::ExprKind::VarRef;
    xr->loc = c.args[0].loc;
    xr->type = elem;
    xr->var = x;
    auto app = std::make_shared<tir::Expr>();
    app->kind = tir::ExprKind::App;
    app->loc = c.args[0].loc;
    app->type = ft->elems[0];
    app->args = {fv, xr};
    auto lam = std::make_shared<tir::Expr>();
    lam->kind = tir::ExprKind::Lambda;
    lam->loc = c.args[0].loc;
    lam->params = {tir::Param{tir::Param::Nat, nullptr, i}, tir::Param{tir::Param::Value, x, {}}};
    lam->args = {app};
    lam->type = types::fun({FunParam{true, i, nullptr}, FunParam{false, {}, elem}}, app->type);
    fn = lam;
  }
  TypeP u = resolve(fn->type)->elems[0];
  TypeP result = types::array(at->len, i, u);
  c.record(result, {N("n", primLength(at))});
  return primNode(c.p, c.loc, result, {fn, a});
}

tir::ExprP Checker::typeReduceOrScan(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[2], nullptr);
  TypeP at = expectArray(a->type, c.args[2].loc, c.name);
  if (types::isDependent(*zonk(at)))
    fail(c.args[2].loc, c.name + " needs elements of one type, found the position-dependent array `" + types::str(zonk(at)) + "`");
  TypeP t = at->elems[0];
  tir::ExprP init = checkArg(c.args[1], t);
  tir::ExprP op = checkArg(c.args[0], types::fun({FunParam{false, {}, types::tuple({t, t})}}, t));
  TypeP result = c.p == tir::Prim::Reduce ? t : types::array(at->len + Nat(1), t);
  c.record(result, {N("n", primLength(at)), T("T", t)});
  return primNode(c.p, c.loc, result, {op, init, a});
}

tir::ExprP Checker::typeFold(const PrimCall &c) {
  // fold(init, f) takes the initial value first, unlike reduce(op, init): say so plainly
  // when a function comes first and a plain value second (`fold(+, 0.0)`).
  auto isFunctionSyntax = [](const ast::Expr *x) {
    return x && (x->op == ast::ExprOp::OpFunc || x->op == ast::ExprOp::Lambda);
  };
  if (isFunctionSyntax(c.args[0].syn) && c.args[1].syn && !isFunctionSyntax(c.args[1].syn) &&
      c.args[1].syn->op != ast::ExprOp::Var)
    fail(c.args[0].loc, "fold takes its initial value first, then the function: write fold(" +
                          (c.args[1].syn->text.empty() ? std::string("init") : c.args[1].syn->text) +
                          ", " + (c.args[0].syn->op == ast::ExprOp::OpFunc ? c.args[0].syn->text : std::string("f")) +
                          ") (it is reduce that takes the operator first: reduce(op, init))");
  tir::ExprP a = checkArg(c.args[2], nullptr);
  TypeP at = expectArray(a->type, c.args[2].loc, c.name);
  if (types::isDependent(*zonk(at)))
    fail(c.args[2].loc, "fold needs elements of one type, found the position-dependent array `" + types::str(zonk(at)) + "`");
  TypeP t = at->elems[0];
  tir::ExprP init = checkArg(c.args[0], nullptr);
  TypeP u = init->type;
  tir::ExprP f = checkArg(c.args[1], types::fun({FunParam{false, {}, types::tuple({u, t})}}, u));
  c.record(u, {N("n", primLength(at)), T("T", t), T("U", u)});
  return primNode(c.p, c.loc, u, {init, f, a});
}

tir::ExprP Checker::typeZip(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[0], nullptr);
  tir::ExprP b = checkArg(c.args[1], nullptr);
  TypeP at = expectArray(a->type, c.args[0].loc, "zip");
  TypeP bt = expectArray(b->type, c.args[1].loc, "zip");
  size_t before = postponed_.size();
  if (!unifyNat(at->len, bt->len)) {
    diags_.error(c.loc, "mismatched lengths in zip: the first array has `" + zonk(at->len).str() +
                          "` elements, the second `" + zonk(bt->len).str() + "`");
    diags_.note(c.args[0].loc, "the first array has type `" + types::str(zonk(at)) + "`");
    diags_.note(c.args[1].loc, "the second array has type `" + types::str(zonk(bt)) + "`");
    throw DefFailed{};
  }
  for (size_t k = before; k < postponed_.size(); ++k) {
    postponed_[k].loc = c.loc;
    postponed_[k].what = "mismatched lengths in zip";
  }
  TypeP eb = types::elementAt(*bt, Nat::var(at->binder));
  TypeP result = types::array(at->len, at->binder, types::tuple({at->elems[0], eb}));
  c.record(result, {N("n", primLength(at))});
  return primNode(c.p, c.loc, result, {a, b});
}

tir::ExprP Checker::typeUnzip(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[0], nullptr);
  TypeP at = expectArray(a->type, c.args[0].loc, "unzip");
  TypeP et = resolve(at->elems[0]);
  if (et->kind != TypeKind::Tuple) fail(c.args[0].loc, "unzip expects an array of tuples, found `" + types::str(zonk(at)) + "`");
  std::vector<TypeP> parts;
  for (const TypeP &c : et->elems) parts.push_back(types::array(at->len, at->binder, c));
  TypeP result = types::tuple(parts);
  c.record(result, {N("n", primLength(at))});
  return primNode(c.p, c.loc, result, {a});
}

tir::ExprP Checker::typeSplit(const PrimCall &c) {
  Nat k = c.natArg(c.args[0], "chunk size");
  tir::ExprP a = checkArg(c.args[1], nullptr);
  TypeP at = expectArray(a->type, c.args[1].loc, "split");
  Nat n = zonk(at->len);
  if (auto kc = k.asConst(); kc && *kc <= 0)
    fail(c.args[0].loc, fmt::format("split needs a chunk size of at least 1, found {}", *kc));
  NatVarId g = freshNatVar("g"), r = freshNatVar("r");
  TypeP result;
  if (auto q = Nat::divideExact(n, k)) {
    TypeP inner = types::array(k, r, types::elementAt(*at, Nat::var(g) * k + Nat::var(r)));
    result = types::array(*q, g, inner);
  } else {
    auto kc = k.asConst();
    if (!kc)
      fail(c.args[0].loc, "split(" + k.str() + ") of an array of length `" + n.str() +
                            "`: the length is not a multiple of the chunk size, and a ragged split needs the chunk size to be a literal or a tunable");
    Nat groups = Nat::div(n + Nat(*kc - 1), *kc);
    Nat innerLen = Nat::min(Nat(*kc), n - Nat::var(g) * Nat(*kc));
    TypeP inner = types::array(innerLen, r, types::elementAt(*at, Nat::var(g) * Nat(*kc) + Nat::var(r)));
    result = types::array(groups, g, inner);
  }
  c.record(result, {N("n", n), N("k", k)});
  return primNode(c.p, c.loc, result, {a}, {k});
}

tir::ExprP Checker::typeJoin(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[0], nullptr);
  TypeP at = expectArray(a->type, c.args[0].loc, "join");
  TypeP inner = resolve(at->elems[0]);
  if (inner->kind != TypeKind::Array) fail(c.args[0].loc, "join expects an array of arrays, found `" + types::str(zonk(at)) + "`");
  TypeP e = inner->elems[0];
  if (types::mentions(zonk(e), inner->binder.id) || types::mentions(zonk(e), at->binder.id))
    fail(c.args[0].loc, "join needs inner elements of one type, found `" + types::str(zonk(at)) + "`");
  Nat l = zonk(inner->len);
  Nat total = l.mentions(at->binder.id) ? Nat::sum(at->binder, Nat(0), zonk(at->len), l) : zonk(at->len) * l;
  TypeP result = types::array(total, e);
  c.record(result, {N("n", primLength(at))});
  return primNode(c.p, c.loc, result, {a});
}

tir::ExprP Checker::typeTranspose(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[0], nullptr);
  TypeP at = expectArray(a->type, c.args[0].loc, "transpose");
  TypeP inner = expectArray(at->elems[0], c.args[0].loc, "transpose (of an array of arrays)");
  if (types::isDependent(*zonk(at)) || types::isDependent(*zonk(inner)))
    fail(c.args[0].loc, "transpose needs a rectangular array n.m.T, found `" + types::str(zonk(at)) + "`");
  TypeP result = types::array(inner->len, types::array(at->len, inner->elems[0]));
  c.record(result, {N("n", primLength(at)), N("m", primLength(inner))});
  return primNode(c.p, c.loc, result, {a});
}

tir::ExprP Checker::typeAsDepArray(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[0], nullptr);
  TypeP at = expectArray(a->type, c.args[0].loc, "asDepArray");
  c.record(at, {N("n", primLength(at))});
  return primNode(c.p, c.loc, at, {a});
}

tir::ExprP Checker::typeTakeOrDrop(const PrimCall &c) {
  Nat k = c.natArg(c.args[0], "count");
  tir::ExprP a = checkArg(c.args[1], nullptr);
  TypeP at = expectArray(a->type, c.args[1].loc, c.name);
  Nat n = zonk(at->len);
  if (!proveNonNegative(n - k, facts_)) recordUnproven(c.loc, c.name + "(" + k.str() + ") of `" + n.str() + "` elements: " + k.str() + " <= " + n.str());
  TypeP result;
  if (c.p == tir::Prim::Take) {
    result = types::array(k, at->binder, at->elems[0]);
  } else {
    NatVarId j = freshNatVar("j");
    result = types::array(n - k, j, types::elementAt(*at, Nat::var(j) + k));
  }
  c.record(result, {N("n", n), N("k", k)});
  return primNode(c.p, c.loc, result, {a}, {k});
}

tir::ExprP Checker::typeGenerate(const PrimCall &c) {
  Nat n = c.natArg(c.args[0], "length");
  NatVarId i = freshNatVar(binderName(c.args[1], positionName()));
  addFact(i, Nat(0), n);
  tir::ExprP f = checkBinderLambda(c.args[1], {{tir::Param::Nat, i, nullptr}}, nullptr, "generate");
  TypeP result = types::array(n, i, resolve(f->type)->elems[0]);
  c.record(result, {N("n", n)});
  return primNode(c.p, c.loc, result, {f}, {n});
}

/// recur(n, i => prev => e): an n-array whose element i is e, computed in order from the
/// elements before it, `prev: i.T` (a recurrence: a triangular solve's x_i from x_j, j < i).
/// Reading only what is already computed is the type's doing: prev has exactly i elements.
/// The elements have one type T, which may not depend on i.
tir::ExprP Checker::typeRecur(const PrimCall &c) {
  Nat n = c.natArg(c.args[0], "length");
  NatVarId i = freshNatVar(binderName(c.args[1], positionName()));
  addFact(i, Nat(0), n);
  TypeP elem = freshMeta();
  tir::ExprP f = checkBinderLambda(c.args[1], {{tir::Param::Nat, i, nullptr}, {tir::Param::Value, {}, types::array(Nat::var(i), elem)}},
                                   elem, "recur");
  TypeP t = zonk(elem);
  if (types::mentions(t, i.id))
    fail(c.args[1].loc, "the elements of recur must have one type, found `" + types::str(t) + "`, which depends on the position " + i.name);
  TypeP result = types::array(n, t);
  c.record(result, {N("n", n), T("T", t)});
  return primNode(c.p, c.loc, result, {f}, {n});
}

tir::ExprP Checker::typeIota(const PrimCall &c) {
  Nat n = c.natArg(c.args[0], "length");
  TypeP result = types::array(n, types::idx(n));
  c.record(result, {N("n", n)});
  return primNode(c.p, c.loc, result, {}, {n});
}

tir::ExprP Checker::typeWhich(const PrimCall &c) {
  Nat k = c.natArg(c.args[0], "count");
  tir::ExprP a = checkArg(c.args[1], nullptr);
  TypeP at = expectArray(a->type, c.args[1].loc, "which");
  expect(types::scalar(ScalarKind::Bool), at->elems[0], c.args[1].loc, "the elements of which's array");
  TypeP result = types::array(k, types::idx(at->len));
  c.record(result, {N("n", primLength(at)), N("k", k)});
  return primNode(c.p, c.loc, result, {a}, {k});
}

tir::ExprP Checker::typeStrided(const PrimCall &c) {
  Nat s = c.natArg(c.args[0], "stride");
  auto sc = s.asConst();
  if (!sc) fail(c.args[0].loc, "strided needs its stride to be a literal or a tunable, found `" + s.str() + "`");
  if (*sc < 1) fail(c.args[0].loc, fmt::format("strided needs a stride of at least 1, found {}", *sc));
  tir::ExprP a = checkArg(c.args[1], nullptr);
  TypeP at = expectArray(a->type, c.args[1].loc, "strided");
  if (types::isDependent(*zonk(at))) fail(c.args[1].loc, "strided needs elements of one type, found `" + types::str(zonk(at)) + "`");
  NatVarId t = freshNatVar("t");
  Nat l = zonk(at->len);
  TypeP result = types::array(s, t, types::array(Nat::div(l + s - Nat(1) - Nat::var(t), *sc), at->elems[0]));
  c.record(result, {N("L", l), N("s", s)});
  return primNode(c.p, c.loc, result, {a}, {s});
}

tir::ExprP Checker::typeInspect(const PrimCall &c) {
  // The conversion's result is the def's declared type: the inspector derived from the
  // export's schedule (poly/Inspector) must produce that layout, which lowering checks.
  if (!c.expected)
    fail(c.loc, "inspect needs the result type of its definition to be declared (it gives the target format)");
  tir::ExprP a = checkArg(c.args[0], nullptr);
  if (a->kind != tir::ExprKind::VarRef || resolve(a->type)->kind != TypeKind::DepPair)
    fail(c.args[0].loc, "inspect converts a parameter of a compressed type (a dependent pair such as csr), not `" +
                          types::str(a->type) + "`");
  return primNode(c.p, c.loc, resolve(c.expected), {a});
}

tir::ExprP Checker::typeLen(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[0], nullptr);
  TypeP at = expectArray(a->type, c.args[0].loc, "len");
  auto e = std::make_shared<tir::Expr>();
  e->kind = tir::ExprKind::NatValue;
  e->loc = c.loc;
  e->type = types::scalar(ScalarKind::I64);
  e->nat = at->len;
  return e;
}

tir::ExprP Checker::typeLiftOrMatch(const PrimCall &c) {
  // The value and the function may come in either order.
  size_t fi = isLambdaSyntax(c.args[0]) && !isLambdaSyntax(c.args[1]) ? 0 : 1;
  const Arg &fa = c.args[fi];
  const Arg &va = c.args[1 - fi];
  tir::ExprP v = checkArg(va, nullptr);
  TypeP vt = resolve(v->type);
  NatVarId k = freshNatVar(binderName(fa, "k"));
  tir::ExprP f;
  if (c.p == tir::Prim::LiftNat) {
    if (!(vt->kind == TypeKind::Scalar && isInteger(vt->scalar)) && vt->kind != TypeKind::Idx &&
        !(vt->kind == TypeKind::Meta && vt->numeric == Type::IntLiteral))
      fail(va.loc, "liftNat lifts an integer value, found " + describe(vt) + " (`" + types::str(zonk(vt)) + "`)");
    f = checkBinderLambda(fa, {{tir::Param::Nat, k, nullptr}}, nullptr, c.name);
  } else if (c.p == tir::Prim::LiftNats) {
    TypeP at = expectArray(vt, va.loc, "liftNats");
    TypeP et = resolve(at->elems[0]);
    if (!(et->kind == TypeKind::Scalar && isInteger(et->scalar)) && et->kind != TypeKind::Idx)
      fail(va.loc, "liftNats lifts an array of integers, found `" + types::str(zonk(vt)) + "`");
    f = checkBinderLambda(fa, {{tir::Param::Nats, k, nullptr}}, nullptr, c.name);
  } else {
    if (vt->kind == TypeKind::Meta) fail(va.loc, "cannot tell the type of this dependent pair; annotate it");
    if (vt->kind != TypeKind::DepPair)
      fail(va.loc, c.name + " opens a dependent pair, found " + describe(vt) + " (`" + types::str(zonk(vt)) + "`)");
    if (c.name == "matchNatDepPair" && vt->pairOverNats) fail(va.loc, "matchNatDepPair needs a pair over a nat, found one over a nats");
    if (c.name == "matchNatsDepPair" && !vt->pairOverNats) fail(va.loc, "matchNatsDepPair needs a pair over a nats, found one over a nat");
    NatSubst s;
    s.vars.emplace(vt->binder.id, Nat::var(k));
    s.arrays.emplace(vt->binder.id, k);
    TypeP body = types::substitute(vt->elems[0], s);
    f = checkBinderLambda(fa, {{vt->pairOverNats ? tir::Param::Nats : tir::Param::Nat, k, nullptr}, {tir::Param::Value, {}, body}},
                          nullptr, c.name);
  }
  TypeP result = zonk(resolve(f->type)->elems[0]);
  if (types::mentions(result, k.id))
    fail(fa.loc, "the result of " + c.name + "'s function, `" + types::str(result) + "`, mentions '" + k.name +
                     "', which is bound by " + c.name + " and cannot escape it");
  c.record(result, {});
  return primNode(c.p, c.loc, result, {v, f});
}

tir::ExprP Checker::typeMakeDepPair(const PrimCall &c) {
  const Arg &ka = c.args[0];
  const Binding *b = ka.syn && ka.syn->op == ast::ExprOp::Var ? lookup(ka.syn->text) : nullptr;
  if (!b || (b->kind != Binding::NatVar && b->kind != Binding::NatsVar))
    fail(ka.loc, c.name + " expects a nat or nats variable first (the value the pair packs)");
  bool overNats = b->kind == Binding::NatsVar;
  if (c.name == "makeNatDepPair" && overNats) fail(ka.loc, "makeNatDepPair needs a nat, found the nats '" + ka.syn->text + "'");
  if (c.name == "makeNatsDepPair" && !overNats) fail(ka.loc, "makeNatsDepPair needs a nats, found the nat '" + ka.syn->text + "'");
  tir::ExprP v = checkArg(c.args[1], nullptr);
  NatVarId nb = freshNatVar(b->nat.name);
  NatSubst s;
  if (overNats) s.arrays.emplace(b->nat.id, nb);
  else s.vars.emplace(b->nat.id, Nat::var(nb));
  TypeP result = types::depPair(nb, overNats, types::substitute(zonk(v->type), s));
  c.record(result, {});
  auto e = std::const_pointer_cast<tir::Expr>(primNode(c.p, c.loc, result, {v}));
  if (overNats) {
    e->natsArg = b->nat;
    e->natsArgIsSet = true;
  } else {
    e->natArgs = {Nat::var(b->nat)};
  }
  return e;
}

tir::ExprP Checker::typeReduceToNat(const PrimCall &c) {
  tir::ExprP a = checkArg(c.args[0], nullptr);
  TypeP pt = resolve(a->type);
  if (pt->kind != TypeKind::DepPair || !pt->pairOverNats)
    fail(c.args[0].loc, "reduceToNat expects a dependent pair over a nats, found `" + types::str(zonk(pt)) + "`");
  TypeP body = resolve(pt->elems[0]);
  if (body->kind != TypeKind::Array) fail(c.args[0].loc, "reduceToNat expects a pair of a nats and an array, found `" + types::str(zonk(pt)) + "`");
  TypeP e = zonk(body->elems[0]);
  if (types::mentions(e, pt->binder.id) || types::mentions(e, body->binder.id))
    fail(c.args[0].loc, "reduceToNat needs array elements of one type, found `" + types::str(zonk(pt)) + "`");
  NatVarId k = freshNatVar("k");
  TypeP result = types::depPair(k, false, types::array(Nat::var(k), e));
  c.record(result, {N("F", body->len)});
  return primNode(c.p, c.loc, result, {a});
}

}  // namespace spl::check
