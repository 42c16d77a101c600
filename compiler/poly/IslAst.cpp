/// \file IslAst.cpp: Nats as isl text, isl's AST as Nats and CIN (see IslAst.h).
#include "poly/IslAst.h"

#include <isl/ast.h>
#include <isl/id.h>
#include <isl/val.h>

#include <numeric>
#include <vector>

namespace spl::poly {

namespace {

std::optional<std::string> atomText(const NatAtom &a, const IslAtomName &name) {
  switch (a.kind) {
    case NatAtomKind::Var:
    case NatAtomKind::Value: return name(a);
    case NatAtomKind::Div: {
      auto x = affineIslText(a.args[0], name);
      if (!x) return std::nullopt;
      return "floor((" + *x + ")/" + std::to_string(a.divisor) + ")";
    }
    case NatAtomKind::Mod: {
      auto x = affineIslText(a.args[0], name);
      if (!x) return std::nullopt;
      return "((" + *x + ") mod " + std::to_string(a.divisor) + ")";
    }
    case NatAtomKind::Min:
    case NatAtomKind::Max: {
      auto x = affineIslText(a.args[0], name), y = affineIslText(a.args[1], name);
      if (!x || !y) return std::nullopt;
      return std::string(a.kind == NatAtomKind::Min ? "min(" : "max(") + *x + ", " + *y + ")";
    }
    case NatAtomKind::Lookup:
    case NatAtomKind::Cond:
    case NatAtomKind::Sum: return std::nullopt;
  }
  return std::nullopt;
}

/// Text of sum(c_k * a_k) with integer c_k.
std::string linearText(const std::vector<std::pair<int64_t, std::string>> &terms) {
  std::string out;
  for (const auto &[c, a] : terms) {
    if (c == 0) continue;
    int64_t mag = c < 0 ? -c : c;
    std::string piece = a.empty() ? std::to_string(mag) : (mag == 1 ? a : std::to_string(mag) + "*" + a);
    if (out.empty()) out = c < 0 ? "-" + piece : piece;
    else out += (c < 0 ? " - " : " + ") + piece;
  }
  return out.empty() ? "0" : out;
}

}  // namespace

std::optional<std::string> affineIslText(const Nat &n, const IslAtomName &name) {
  int64_t den = 1;
  for (const Nat::Term &t : n.terms()) den = den / std::gcd(den, t.coeff.den()) * t.coeff.den();
  std::vector<std::pair<int64_t, std::string>> terms;
  for (const Nat::Term &t : n.terms()) {
    int64_t c = t.coeff.num() * (den / t.coeff.den());
    if (t.mono.factors.empty()) {
      terms.push_back({c, ""});
      continue;
    }
    if (t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) return std::nullopt;
    auto a = atomText(*t.mono.factors[0].first, name);
    if (!a) return std::nullopt;
    bool simple = a->find_first_of(" +-*(") == std::string::npos;
    terms.push_back({c, simple ? *a : "(" + *a + ")"});
  }
  std::string lin = linearText(terms);
  if (den == 1) return lin;
  return "floor((" + lin + ")/" + std::to_string(den) + ")";
}

NatCondP natCondOfAstExpr(isl_ast_expr *e, const std::map<std::string, Nat> &ids) {
  if (isl_ast_expr_get_type(e) != isl_ast_expr_op || isl_ast_expr_get_op_n_arg(e) != 2) return nullptr;
  isl_ast_expr *a = isl_ast_expr_get_op_arg(e, 0), *b = isl_ast_expr_get_op_arg(e, 1);
  NatCondP out;
  auto compare = [&](const char *op) {
    std::optional<Nat> x = natOfAstExpr(a, ids), y = natOfAstExpr(b, ids);
    if (x && y) out = NatCond::compare(op, *x, *y);
  };
  auto join = [&](bool conj) {
    NatCondP x = natCondOfAstExpr(a, ids), y = natCondOfAstExpr(b, ids);
    if (x && y) out = conj ? NatCond::conj(x, y) : NatCond::disj(x, y);
  };
  switch (isl_ast_expr_get_op_type(e)) {
    case isl_ast_expr_op_and:
    case isl_ast_expr_op_and_then: join(true); break;
    case isl_ast_expr_op_or:
    case isl_ast_expr_op_or_else: join(false); break;
    case isl_ast_expr_op_eq: compare("=="); break;
    case isl_ast_expr_op_le: compare("<="); break;
    case isl_ast_expr_op_lt: compare("<"); break;
    case isl_ast_expr_op_ge: compare(">="); break;
    case isl_ast_expr_op_gt: compare(">"); break;
    default: break;
  }
  isl_ast_expr_free(a);
  isl_ast_expr_free(b);
  return out;
}

std::optional<Nat> natOfAstExpr(isl_ast_expr *e, const std::map<std::string, Nat> &ids) {
  switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int: {
      isl_val *v = isl_ast_expr_get_val(e);
      long x = isl_val_get_num_si(v);
      isl_val_free(v);
      return Nat(static_cast<int64_t>(x));
    }
    case isl_ast_expr_id: {
      isl_id *id = isl_ast_expr_get_id(e);
      std::string name = isl_id_get_name(id);
      isl_id_free(id);
      if (auto it = ids.find(name); it != ids.end()) return it->second;
      return std::nullopt;
    }
    case isl_ast_expr_op: {
      int n = isl_ast_expr_get_op_n_arg(e);
      isl_ast_expr_op_type op = isl_ast_expr_get_op_type(e);
      if (op == isl_ast_expr_op_select || op == isl_ast_expr_op_cond) {
        // c ? a : b, isl's bound of a union of pieces (a loop to max(1, m) is `m == 0 ? 0 : m - 1`).
        isl_ast_expr *c = isl_ast_expr_get_op_arg(e, 0), *a = isl_ast_expr_get_op_arg(e, 1), *b = isl_ast_expr_get_op_arg(e, 2);
        NatCondP cond = natCondOfAstExpr(c, ids);
        std::optional<Nat> x = natOfAstExpr(a, ids), y = natOfAstExpr(b, ids);
        isl_ast_expr_free(c);
        isl_ast_expr_free(a);
        isl_ast_expr_free(b);
        if (!cond || !x || !y) return std::nullopt;
        return Nat::cond(cond, *x, *y);
      }
      std::vector<Nat> args;
      for (int k = 0; k < n; ++k) {
        isl_ast_expr *a = isl_ast_expr_get_op_arg(e, k);
        std::optional<Nat> x = natOfAstExpr(a, ids);
        isl_ast_expr_free(a);
        if (!x) return std::nullopt;
        args.push_back(*x);
      }
      auto constDivisor = [&]() -> std::optional<int64_t> {
        auto c = args[1].asConst();
        if (!c || *c < 1) return std::nullopt;
        return c;
      };
      switch (isl_ast_expr_get_op_type(e)) {
        case isl_ast_expr_op_add: return args[0] + args[1];
        case isl_ast_expr_op_sub: return args[0] - args[1];
        case isl_ast_expr_op_mul: return args[0] * args[1];
        case isl_ast_expr_op_minus: return -args[0];
        case isl_ast_expr_op_min: {
          Nat m = args[0];
          for (size_t k = 1; k < args.size(); ++k) m = Nat::min(m, args[k]);
          return m;
        }
        case isl_ast_expr_op_max: {
          Nat m = args[0];
          for (size_t k = 1; k < args.size(); ++k) m = Nat::max(m, args[k]);
          return m;
        }
        case isl_ast_expr_op_fdiv_q:
        case isl_ast_expr_op_pdiv_q:
        case isl_ast_expr_op_div: {
          auto c = constDivisor();
          if (!c) return std::nullopt;
          return Nat::div(args[0], *c);
        }
        case isl_ast_expr_op_pdiv_r:
        case isl_ast_expr_op_zdiv_r: {
          // isl emits these only where the dividend is known non-negative (pdiv_r) or where
          // only a zero test follows (zdiv_r); the Nat remainder is the floor remainder.
          auto c = constDivisor();
          if (!c) return std::nullopt;
          return Nat::mod(args[0], *c);
        }
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

std::optional<std::string> IslParams::text(const Nat &n) {
  return affineIslText(n, [this](const NatAtom &a) -> std::optional<std::string> {
    if (a.kind != NatAtomKind::Var) return std::nullopt;
    if (auto d = dims_.find(a.var.id); d != dims_.end()) return d->second;
    auto it = byVar_.find(a.var.id);
    if (it == byVar_.end()) {
      std::string p = "p" + std::to_string(byVar_.size());
      it = byVar_.emplace(a.var.id, p).first;
      order_.push_back(p);
      meanings_.emplace(p, Nat::var(a.var));
    }
    return it->second;
  });
}

std::optional<std::string> IslParams::invariant(const Nat &n) {
  if (auto t = text(n)) return t;
  return opaque(n);
}

std::optional<std::string> IslParams::opaque(const Nat &n) {
  if (n.asConst()) return text(n);
  for (const auto &[id, name] : dims_)
    if (n.mentions(id)) return std::nullopt;
  std::string p = "q" + std::to_string(order_.size() - byVar_.size());
  order_.push_back(p);
  meanings_.emplace(p, n);
  return p;
}

std::string IslParams::space() const {
  if (order_.empty()) return "";  // isl reads no `[] ->` before a multi_union_pw_aff
  std::string s;
  for (const std::string &p : order_) s += (s.empty() ? "" : ", ") + p;
  return "[" + s + "] -> ";
}

std::string IslParams::context() const {
  std::string c;
  for (const std::string &p : order_) c += (c.empty() ? "" : " and ") + p + " >= 0";
  return space() + "{ : " + (c.empty() ? "true" : c) + " }";
}

// ---- isl's AST as CIN ---------------------------------------------------------------------------

namespace {

std::string idName(isl_ast_expr *e) {
  isl_id *id = isl_ast_expr_get_id(e);
  std::string name = id ? isl_id_get_name(id) : "";
  isl_id_free(id);
  return name;
}

}  // namespace

std::optional<cin::StmtP> AstToCin::translate(isl_ast_node *n, std::string &why) {
  why_.clear();
  mark_.clear();
  markTaken_.clear();
  depth_ = 0;
  std::optional<cin::StmtP> s = node(n);
  if (!s) why = why_.empty() ? "isl's AST could not be read back" : why_;
  return s;
}

std::optional<cin::StmtP> AstToCin::node(isl_ast_node *n) {
  switch (isl_ast_node_get_type(n)) {
    case isl_ast_node_block: {
      isl_ast_node_list *list = isl_ast_node_block_get_children(n);
      std::vector<cin::StmtP> out;
      bool ok = true;
      for (int k = 0; ok && k < isl_ast_node_list_n_ast_node(list); ++k) {
        isl_ast_node *c = isl_ast_node_list_get_ast_node(list, k);
        std::optional<cin::StmtP> s = node(c);
        isl_ast_node_free(c);
        if (s) out.push_back(*s);
        ok = s.has_value();
      }
      isl_ast_node_list_free(list);
      if (!ok) return std::nullopt;
      return cin::block(out);
    }
    case isl_ast_node_mark: {
      isl_id *id = isl_ast_node_mark_get_id(n);
      std::string mark = id ? isl_id_get_name(id) : "";
      isl_id_free(id);
      mark_ = mark;
      isl_ast_node *c = isl_ast_node_mark_get_node(n);
      std::optional<cin::StmtP> s = node(c);
      isl_ast_node_free(c);
      mark_.clear();
      if (!s || mark.empty() || markTaken_.count(mark)) return s;
      // No for node took the mark: isl bound the loop's one iteration to its value. A loop
      // that must stay (a GPU level) runs its body once, the body as isl wrote it.
      std::optional<AstLoop> loop = loop_("", depth_, mark);
      if (!loop || !loop->keepDegenerate) return s;
      markTaken_.insert(mark);
      return loopStmt(*loop, Nat(0), Nat(1), *s);
    }
    case isl_ast_node_for: return forNode(n);
    case isl_ast_node_if: return ifNode(n);
    case isl_ast_node_user: return userNode(n);
    default: return fail("isl's AST holds a node kind the translation does not take");
  }
}

std::optional<cin::StmtP> AstToCin::forNode(isl_ast_node *n) {
  isl_ast_expr *it = isl_ast_node_for_get_iterator(n);
  std::string iter = idName(it);
  isl_ast_expr_free(it);
  isl_ast_expr *init = isl_ast_node_for_get_init(n);
  std::optional<Nat> lo = natOfAstExpr(init, ids_);
  isl_ast_expr_free(init);
  if (!lo) return fail("isl's loop `" + iter + "` has a lower bound the translation does not take");
  std::optional<AstLoop> loop = loop_(iter, depth_, mark_);
  if (!mark_.empty()) markTaken_.insert(mark_);
  mark_.clear();
  if (!loop) return fail("isl's AST has a loop `" + iter + "` where none was expected");
  auto body = [&]() -> std::optional<cin::StmtP> {
    isl_ast_node *b = isl_ast_node_for_get_body(n);
    ++depth_;
    std::optional<cin::StmtP> s = node(b);
    --depth_;
    isl_ast_node_free(b);
    return s;
  };
  if (isl_ast_node_for_is_degenerate(n) == isl_bool_true) {
    if (loop->keepDegenerate) {
      ids_[iter] = Nat::var(loop->var);
      std::optional<cin::StmtP> b = body();
      if (!b) return std::nullopt;
      return loopStmt(*loop, *lo, *lo + Nat(1), *b);
    }
    ids_[iter] = *lo;  // one iteration: the iterator is its value
    return body();
  }
  isl_ast_expr *cond = isl_ast_node_for_get_cond(n), *inc = isl_ast_node_for_get_inc(n);
  std::optional<Nat> step = natOfAstExpr(inc, ids_), hi;
  // The condition is `iter <= e` or `iter < e`.
  if (isl_ast_expr_get_type(cond) == isl_ast_expr_op && isl_ast_expr_get_op_n_arg(cond) == 2) {
    isl_ast_expr *rhs = isl_ast_expr_get_op_arg(cond, 1);
    isl_ast_expr_op_type op = isl_ast_expr_get_op_type(cond);
    if (op == isl_ast_expr_op_le) hi = successor(rhs);
    if (op == isl_ast_expr_op_lt) hi = natOfAstExpr(rhs, ids_);
    isl_ast_expr_free(rhs);
  }
  isl_ast_expr_free(cond);
  isl_ast_expr_free(inc);
  if (!hi || !step || step->asConst() != std::optional<int64_t>(1))
    return fail("isl's loop `" + iter + "` has bounds or a stride the translation does not take");
  ids_[iter] = Nat::var(loop->var);
  std::optional<cin::StmtP> b = body();
  if (!b) return std::nullopt;
  return loopStmt(*loop, *lo, *hi, *b);
}

cin::StmtP AstToCin::loopStmt(const AstLoop &loop, Nat lo, Nat hi, cin::StmtP body) const {
  cin::StmtP f = cin::forall(loop.var.id, loop.name, std::move(lo), std::move(hi), std::move(body), loop.kind,
                             loop.like ? loop.like->loc : loc_);
  if (!loop.like) return f;
  auto withHints = std::make_shared<cin::Stmt>(*f);
  withHints->balanceBy = loop.like->balanceBy;
  if (loop.like->segment && !loop.like->segment->whole) withHints->segment = loop.like->segment;
  withHints->userKind = loop.like->userKind;
  withHints->vectorize = loop.like->vectorize;
  withHints->unroll = loop.like->unroll;
  withHints->rows = loop.like->rows;
  withHints->knobs = loop.like->knobs;
  withHints->rowsLoc = loop.like->rowsLoc;
  return withHints;
}

std::optional<Nat> AstToCin::successor(isl_ast_expr *e) {
  // isl writes `i <= min(a, b)`; the bound is min(a + 1, b + 1), which Nats simplify (a tile's
  // `min(n - 1, 4095 + 4096 t) + 1` is min(n, 4096 + 4096 t)).
  isl_ast_expr_op_type op = isl_ast_expr_get_type(e) == isl_ast_expr_op ? isl_ast_expr_get_op_type(e) : isl_ast_expr_op_error;
  if (op != isl_ast_expr_op_min && op != isl_ast_expr_op_max) {
    std::optional<Nat> x = natOfAstExpr(e, ids_);
    if (!x) return std::nullopt;
    return *x + Nat(1);
  }
  std::optional<Nat> out;
  for (int k = 0; k < isl_ast_expr_get_op_n_arg(e); ++k) {
    isl_ast_expr *a = isl_ast_expr_get_op_arg(e, k);
    std::optional<Nat> x = successor(a);
    isl_ast_expr_free(a);
    if (!x) return std::nullopt;
    out = !out ? *x : op == isl_ast_expr_op_min ? Nat::min(*out, *x) : Nat::max(*out, *x);
  }
  return out;
}

std::optional<cin::ExprP> AstToCin::condition(isl_ast_expr *e) {
  if (isl_ast_expr_get_type(e) != isl_ast_expr_op || isl_ast_expr_get_op_n_arg(e) != 2) return std::nullopt;
  isl_ast_expr *a = isl_ast_expr_get_op_arg(e, 0), *b = isl_ast_expr_get_op_arg(e, 1);
  std::optional<cin::ExprP> out;
  auto compare = [&](ast::BinOp op) {
    std::optional<Nat> x = natOfAstExpr(a, ids_), y = natOfAstExpr(b, ids_);
    if (x && y) out = cin::binary(op, cin::natExpr(*x), cin::natExpr(*y), cin::Scalar::Bool);
  };
  auto join = [&](ast::BinOp op) {
    std::optional<cin::ExprP> x = condition(a), y = condition(b);
    if (x && y) out = cin::binary(op, *x, *y, cin::Scalar::Bool);
  };
  switch (isl_ast_expr_get_op_type(e)) {
    case isl_ast_expr_op_and:
    case isl_ast_expr_op_and_then: join(ast::BinOp::And); break;
    case isl_ast_expr_op_or:
    case isl_ast_expr_op_or_else: join(ast::BinOp::Or); break;
    case isl_ast_expr_op_eq: compare(ast::BinOp::Eq); break;
    case isl_ast_expr_op_le: compare(ast::BinOp::Le); break;
    case isl_ast_expr_op_lt: compare(ast::BinOp::Lt); break;
    case isl_ast_expr_op_ge: compare(ast::BinOp::Ge); break;
    case isl_ast_expr_op_gt: compare(ast::BinOp::Gt); break;
    default: break;
  }
  isl_ast_expr_free(a);
  isl_ast_expr_free(b);
  return out;
}

std::optional<cin::StmtP> AstToCin::ifNode(isl_ast_node *n) {
  isl_ast_expr *c = isl_ast_node_if_get_cond(n);
  std::optional<cin::ExprP> cond = condition(c);
  isl_ast_expr_free(c);
  if (!cond) return fail("isl's AST holds a guard the translation does not take");
  isl_ast_node *t = isl_ast_node_if_get_then_node(n);
  std::optional<cin::StmtP> then = node(t);
  isl_ast_node_free(t);
  if (!then) return std::nullopt;
  cin::StmtP otherwise;
  if (isl_ast_node_if_has_else_node(n) == isl_bool_true) {
    isl_ast_node *e = isl_ast_node_if_get_else_node(n);
    std::optional<cin::StmtP> s = node(e);
    isl_ast_node_free(e);
    if (!s) return std::nullopt;
    otherwise = *s;
  }
  return cin::ifThen(*cond, *then, otherwise);
}

std::optional<cin::StmtP> AstToCin::userNode(isl_ast_node *n) {
  isl_ast_expr *call = isl_ast_node_user_get_expr(n);
  isl_ast_expr *fn = isl_ast_expr_get_op_arg(call, 0);
  std::string name = idName(fn);
  isl_ast_expr_free(fn);
  std::vector<Nat> args;
  bool ok = true;
  for (int k = 1; ok && k < isl_ast_expr_get_op_n_arg(call); ++k) {
    isl_ast_expr *a = isl_ast_expr_get_op_arg(call, k);
    std::optional<Nat> x = natOfAstExpr(a, ids_);
    isl_ast_expr_free(a);
    if (x) args.push_back(*x);
    ok = x.has_value();
  }
  isl_ast_expr_free(call);
  if (!ok) return fail("isl's statement instance " + name + " has index expressions the translation does not take");
  std::string why;
  std::optional<cin::StmtP> s = instance_(name, args, why);
  if (!s) return fail(why);
  return s;
}

}  // namespace spl::poly
