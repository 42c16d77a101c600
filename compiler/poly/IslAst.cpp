/// \file IslAst.cpp: Nats as isl text, isl's AST as Nats and CIN (see IslAst.h).
#include "poly/IslAst.h"

#include <numeric>
#include <vector>

#include "support/Error.h"

namespace spl::poly {

namespace {

/// foldAffine into isl text (PolyModel's model is text).
class TextOps : public AffineOps<std::string> {
 public:
  explicit TextOps(const std::function<std::optional<std::string>(const NatAtom &)> &name) : name_(name) {}
  std::optional<std::string> leaf(const NatAtom &a) override { return name_(a); }
  std::string linear(const std::vector<std::pair<int64_t, const std::string *>> &terms) override {
    std::string out;
    for (const auto &[c, a] : terms) {
      if (c == 0) continue;
      int64_t mag = c < 0 ? -c : c;
      std::string atom = !a ? "" : a->find_first_of(" +-*(") == std::string::npos ? *a : "(" + *a + ")";
      std::string piece = atom.empty() ? std::to_string(mag) : (mag == 1 ? atom : std::to_string(mag) + "*" + atom);
      if (out.empty()) out = c < 0 ? "-" + piece : piece;
      else out += (c < 0 ? " - " : " + ") + piece;
    }
    return out.empty() ? "0" : out;
  }
  std::string floorDiv(const std::string &x, int64_t d) override { return "floor((" + x + ")/" + std::to_string(d) + ")"; }
  std::string mod(const std::string &x, int64_t d) override { return "((" + x + ") mod " + std::to_string(d) + ")"; }
  std::string min(const std::string &x, const std::string &y) override { return "min(" + x + ", " + y + ")"; }
  std::string max(const std::string &x, const std::string &y) override { return "max(" + x + ", " + y + ")"; }

 private:
  const std::function<std::optional<std::string>(const NatAtom &)> &name_;
};

/// foldAffine with no result: only whether the Nat is affine.
struct Shape {};
class ShapeOps : public AffineOps<Shape> {
 public:
  explicit ShapeOps(const std::function<bool(const NatAtom &)> &leaf) : leaf_(leaf) {}
  std::optional<Shape> leaf(const NatAtom &a) override { return leaf_(a) ? std::optional<Shape>(Shape{}) : std::nullopt; }
  Shape linear(const std::vector<std::pair<int64_t, const Shape *>> &) override { return {}; }
  Shape floorDiv(const Shape &, int64_t) override { return {}; }
  Shape mod(const Shape &, int64_t) override { return {}; }
  Shape min(const Shape &, const Shape &) override { return {}; }
  Shape max(const Shape &, const Shape &) override { return {}; }

 private:
  const std::function<bool(const NatAtom &)> &leaf_;
};

/// foldAffine into isl::pw_aff on a domain.
class IslOps : public AffineOps<isl::pw_aff> {
 public:
  IslOps(isl::set universe, std::function<std::optional<isl::pw_aff>(const NatAtom &)> leaf)
      : universe_(std::move(universe)), leaf_(std::move(leaf)) {}
  std::optional<isl::pw_aff> leaf(const NatAtom &a) override { return leaf_(a); }
  isl::pw_aff linear(const std::vector<std::pair<int64_t, const isl::pw_aff *>> &terms) override {
    isl::pw_aff sum = constant(0);
    for (const auto &[c, a] : terms) sum = a ? sum.add(a->scale(c)) : sum.add_constant(c);
    return sum;
  }
  isl::pw_aff floorDiv(const isl::pw_aff &x, int64_t d) override { return x.scale_down(d).floor(); }
  isl::pw_aff mod(const isl::pw_aff &x, int64_t d) override { return x.mod(d); }
  isl::pw_aff min(const isl::pw_aff &x, const isl::pw_aff &y) override { return x.min(y); }
  isl::pw_aff max(const isl::pw_aff &x, const isl::pw_aff &y) override { return x.max(y); }
  isl::pw_aff constant(long c) const {
    return isl::pw_aff(isl::aff::zero_on_domain(universe_.space())).intersect_domain(universe_).add_constant(c);
  }

 private:
  isl::set universe_;
  std::function<std::optional<isl::pw_aff>(const NatAtom &)> leaf_;
};

}  // namespace

std::optional<std::string> affineIslText(const Nat &n, const std::function<std::optional<std::string>(const NatAtom &)> &name) {
  TextOps ops(name);
  return foldAffine<std::string>(n, ops);
}

bool isAffine(const Nat &n, const std::function<bool(const NatAtom &)> &leaf) {
  ShapeOps ops(leaf);
  return foldAffine<Shape>(n, ops).has_value();
}

// ---- IslParams ------------------------------------------------------------------------------------

std::string IslParams::paramOf(const NatAtom &a) {
  auto it = byVar_.find(a.var.id);
  if (it == byVar_.end()) {
    std::string p = "p" + std::to_string(byVar_.size());
    it = byVar_.emplace(a.var.id, p).first;
    order_.push_back(p);
    meanings_.emplace(p, Nat::var(a.var));
  }
  return it->second;
}

IslParams::Declared IslParams::declare(const Nat &n) {
  bool affine = isAffine(n, [this](const NatAtom &a) {
    if (a.kind != NatAtomKind::Var) return false;
    if (!dims_.count(a.var.id)) paramOf(a);
    return true;
  });
  return affine ? Declared::Affine : Declared::No;
}

IslParams::Declared IslParams::declareInvariant(const Nat &n) {
  Declared d = declare(n);
  return d != Declared::No ? d : declareOpaque(n);
}

IslParams::Declared IslParams::declareOpaque(const Nat &n) {
  if (n.asConst()) return declare(n);
  for (int64_t d : dims_)
    if (n.mentions(d)) return Declared::No;
  std::string key = n.str();
  if (!opaque_.count(key)) {
    std::string p = "q" + std::to_string(order_.size() - byVar_.size());
    order_.push_back(p);
    opaque_.emplace(key, p);
    meanings_.emplace(p, n);
  }
  return Declared::Opaque;
}

IslParams::Domain IslParams::domain(const std::string &tuple, const std::vector<int64_t> &vars) const {
  isl::space space = isl::space::unit(ctx_);
  for (const std::string &p : order_) space = space.add_param(p);
  unsigned dims = static_cast<unsigned>(vars.size());
  Domain d{isl::set::universe(tuple.empty() ? space.add_unnamed_tuple(dims) : space.add_named_tuple(tuple, dims)), {}};
  for (size_t k = 0; k < vars.size(); ++k) d.positions.emplace(vars[k], static_cast<int>(k));
  return d;
}

isl::pw_aff IslParams::dim(const Domain &d, int64_t var) {
  return isl::pw_aff(isl::multi_aff::identity_on_domain(d.set.space()).at(d.positions.at(var)));
}

isl::pw_aff IslParams::affine(const Nat &n, Declared how, const Domain &d) const {
  auto param = [&](const std::string &name) { return isl::pw_aff::param_on_domain(d.set, isl::id(ctx_, name)); };
  if (how == Declared::Opaque) {
    auto o = opaque_.find(n.str());
    internal_assert(o != opaque_.end()) << "the bound " << n.str() << " was not declared to isl as a parameter";
    return param(o->second);
  }
  internal_assert(how == Declared::Affine) << "the bound " << n.str() << " is not declared to isl";
  IslOps ops(d.set, [&](const NatAtom &a) -> std::optional<isl::pw_aff> {
    if (a.kind != NatAtomKind::Var) return std::nullopt;
    if (d.positions.count(a.var.id)) return dim(d, a.var.id).intersect_domain(d.set);
    auto p = byVar_.find(a.var.id);
    if (p == byVar_.end()) return std::nullopt;
    return param(p->second);
  });
  std::optional<isl::pw_aff> out = foldAffine<isl::pw_aff>(n, ops);
  internal_assert(out) << "the bound " << n.str() << " was not declared to isl";
  return *out;
}

isl::set IslParams::range(const Domain &d, int64_t var, const Nat &lo, Declared loHow, const Nat &hi, Declared hiHow) const {
  isl::pw_aff x = dim(d, var);
  return affine(lo, loHow, d).le_set(x).intersect(x.lt_set(affine(hi, hiHow, d)));
}

isl::set IslParams::context() const {
  Domain d = domain("", {});
  isl::set c = d.set;
  isl::pw_aff zero = affine(Nat(0), Declared::Affine, d);
  for (const std::string &p : order_) c = c.intersect(isl::pw_aff::param_on_domain(d.set, isl::id(ctx_, p)).ge_set(zero));
  return c.params();
}

// ---- isl's AST as Nats ----------------------------------------------------------------------------

namespace {

/// The kinds of isl's operation expressions that the translation reads.
enum class AstOp { And, Or, Eq, Le, Lt, Ge, Gt, Add, Sub, Mul, Minus, Min, Max, FloorDiv, Rem, Select, Other };

AstOp opOf(const isl::ast_expr_op &e) {
  if (e.isa<isl::ast_expr_op_and>() || e.isa<isl::ast_expr_op_and_then>()) return AstOp::And;
  if (e.isa<isl::ast_expr_op_or>() || e.isa<isl::ast_expr_op_or_else>()) return AstOp::Or;
  if (e.isa<isl::ast_expr_op_eq>()) return AstOp::Eq;
  if (e.isa<isl::ast_expr_op_le>()) return AstOp::Le;
  if (e.isa<isl::ast_expr_op_lt>()) return AstOp::Lt;
  if (e.isa<isl::ast_expr_op_ge>()) return AstOp::Ge;
  if (e.isa<isl::ast_expr_op_gt>()) return AstOp::Gt;
  if (e.isa<isl::ast_expr_op_add>()) return AstOp::Add;
  if (e.isa<isl::ast_expr_op_sub>()) return AstOp::Sub;
  if (e.isa<isl::ast_expr_op_mul>()) return AstOp::Mul;
  if (e.isa<isl::ast_expr_op_minus>()) return AstOp::Minus;
  if (e.isa<isl::ast_expr_op_min>()) return AstOp::Min;
  if (e.isa<isl::ast_expr_op_max>()) return AstOp::Max;
  // isl emits the remainders only where the dividend is known non-negative (pdiv_r) or where
  // only a zero test follows (zdiv_r): the Nat remainder is the floor remainder.
  if (e.isa<isl::ast_expr_op_fdiv_q>() || e.isa<isl::ast_expr_op_pdiv_q>() || e.isa<isl::ast_expr_op_div>()) return AstOp::FloorDiv;
  if (e.isa<isl::ast_expr_op_pdiv_r>() || e.isa<isl::ast_expr_op_zdiv_r>()) return AstOp::Rem;
  // c ? a : b, isl's bound of a union of pieces (a loop to max(1, m) is `m == 0 ? 0 : m - 1`).
  if (e.isa<isl::ast_expr_op_select>() || e.isa<isl::ast_expr_op_cond>()) return AstOp::Select;
  return AstOp::Other;
}

/// The comparison an operation is, or nullptr.
const char *comparisonOf(AstOp op) {
  switch (op) {
    case AstOp::Eq: return "==";
    case AstOp::Le: return "<=";
    case AstOp::Lt: return "<";
    case AstOp::Ge: return ">=";
    case AstOp::Gt: return ">";
    default: return nullptr;
  }
}

std::vector<isl::ast_expr> argsOf(const isl::ast_expr_op &e) {
  std::vector<isl::ast_expr> out;
  for (unsigned k = 0; k < e.n_arg(); ++k) out.push_back(e.arg(static_cast<int>(k)));
  return out;
}

std::string idName(const isl::ast_expr &e) {
  return e.isa<isl::ast_expr_id>() ? e.as<isl::ast_expr_id>().id().name() : std::string();
}

}  // namespace

NatCondP natCondOfAstExpr(const isl::ast_expr &e, const std::map<std::string, Nat> &ids) {
  if (!e.isa<isl::ast_expr_op>()) return nullptr;
  isl::ast_expr_op op = e.as<isl::ast_expr_op>();
  if (op.n_arg() != 2) return nullptr;
  std::vector<isl::ast_expr> args = argsOf(op);
  AstOp kind = opOf(op);
  if (kind == AstOp::And || kind == AstOp::Or) {
    NatCondP x = natCondOfAstExpr(args[0], ids), y = natCondOfAstExpr(args[1], ids);
    if (!x || !y) return nullptr;
    return kind == AstOp::And ? NatCond::conj(x, y) : NatCond::disj(x, y);
  }
  const char *cmp = comparisonOf(kind);
  if (!cmp) return nullptr;
  std::optional<Nat> x = natOfAstExpr(args[0], ids), y = natOfAstExpr(args[1], ids);
  if (!x || !y) return nullptr;
  return NatCond::compare(cmp, *x, *y);
}

std::optional<Nat> natOfAstExpr(const isl::ast_expr &e, const std::map<std::string, Nat> &ids) {
  if (e.isa<isl::ast_expr_int>()) return Nat(static_cast<int64_t>(e.as<isl::ast_expr_int>().val().num_si()));
  if (e.isa<isl::ast_expr_id>()) {
    if (auto it = ids.find(idName(e)); it != ids.end()) return it->second;
    return std::nullopt;
  }
  if (!e.isa<isl::ast_expr_op>()) return std::nullopt;
  isl::ast_expr_op op = e.as<isl::ast_expr_op>();
  AstOp kind = opOf(op);
  std::vector<isl::ast_expr> operands = argsOf(op);
  if (kind == AstOp::Select) {
    NatCondP cond = natCondOfAstExpr(operands.at(0), ids);
    std::optional<Nat> x = natOfAstExpr(operands.at(1), ids), y = natOfAstExpr(operands.at(2), ids);
    if (!cond || !x || !y) return std::nullopt;
    return Nat::cond(cond, *x, *y);
  }
  std::vector<Nat> args;
  for (const isl::ast_expr &a : operands) {
    std::optional<Nat> x = natOfAstExpr(a, ids);
    if (!x) return std::nullopt;
    args.push_back(*x);
  }
  auto constDivisor = [&]() -> std::optional<int64_t> {
    auto c = args[1].asConst();
    if (!c || *c < 1) return std::nullopt;
    return c;
  };
  switch (kind) {
    case AstOp::Add: return args[0] + args[1];
    case AstOp::Sub: return args[0] - args[1];
    case AstOp::Mul: return args[0] * args[1];
    case AstOp::Minus: return -args[0];
    case AstOp::Min:
    case AstOp::Max: {
      Nat m = args[0];
      for (size_t k = 1; k < args.size(); ++k) m = kind == AstOp::Min ? Nat::min(m, args[k]) : Nat::max(m, args[k]);
      return m;
    }
    case AstOp::FloorDiv:
    case AstOp::Rem: {
      auto c = constDivisor();
      if (!c) return std::nullopt;
      return kind == AstOp::FloorDiv ? Nat::div(args[0], *c) : Nat::mod(args[0], *c);
    }
    default: return std::nullopt;
  }
}

// ---- isl's AST as CIN ---------------------------------------------------------------------------

std::optional<cin::StmtP> AstToCin::translate(const isl::ast_node &n, std::string &why) {
  why_.clear();
  mark_.clear();
  markTaken_.clear();
  depth_ = 0;
  std::optional<cin::StmtP> s = node(n);
  if (!s) why = why_.empty() ? "isl's AST could not be read back" : why_;
  return s;
}

std::optional<cin::StmtP> AstToCin::node(const isl::ast_node &n) {
  if (n.isa<isl::ast_node_block>()) {
    isl::ast_node_list list = n.as<isl::ast_node_block>().children();
    std::vector<cin::StmtP> out;
    for (unsigned k = 0; k < list.size(); ++k) {
      std::optional<cin::StmtP> s = node(list.at(static_cast<int>(k)));
      if (!s) return std::nullopt;
      out.push_back(*s);
    }
    return cin::block(out);
  }
  if (n.isa<isl::ast_node_mark>()) {
    isl::ast_node_mark m = n.as<isl::ast_node_mark>();
    std::string mark = m.id().name();
    mark_ = mark;
    std::optional<cin::StmtP> s = node(m.node());
    mark_.clear();
    if (!s || mark.empty() || markTaken_.count(mark)) return s;
    // No for node took the mark: isl bound the loop's one iteration to its value. A loop
    // that must stay (a GPU level) runs its body once, the body as isl wrote it.
    std::optional<AstLoop> loop = loop_("", depth_, mark);
    if (!loop || !loop->keepDegenerate) return s;
    markTaken_.insert(mark);
    return loopStmt(*loop, Nat(0), Nat(1), *s);
  }
  if (n.isa<isl::ast_node_for>()) return forNode(n.as<isl::ast_node_for>());
  if (n.isa<isl::ast_node_if>()) return ifNode(n.as<isl::ast_node_if>());
  if (n.isa<isl::ast_node_user>()) return userNode(n.as<isl::ast_node_user>());
  return fail("isl's AST holds a node kind the translation does not take");
}

std::optional<cin::StmtP> AstToCin::forNode(const isl::ast_node_for &n) {
  std::string iter = idName(n.iterator());
  std::optional<Nat> lo = natOfAstExpr(n.init(), ids_);
  if (!lo) return fail("isl's loop `" + iter + "` has a lower bound the translation does not take");
  std::optional<AstLoop> loop = loop_(iter, depth_, mark_);
  if (!mark_.empty()) markTaken_.insert(mark_);
  mark_.clear();
  if (!loop) return fail("isl's AST has a loop `" + iter + "` where none was expected");
  auto body = [&]() -> std::optional<cin::StmtP> {
    ++depth_;
    std::optional<cin::StmtP> s = node(n.body());
    --depth_;
    return s;
  };
  if (n.is_degenerate()) {
    if (loop->keepDegenerate) {
      ids_[iter] = Nat::var(loop->var);
      std::optional<cin::StmtP> b = body();
      if (!b) return std::nullopt;
      return loopStmt(*loop, *lo, *lo + Nat(1), *b);
    }
    ids_[iter] = *lo;  // one iteration: the iterator is its value
    return body();
  }
  std::optional<Nat> step = natOfAstExpr(n.inc(), ids_), hi;
  // The condition is `iter <= e` or `iter < e`.
  isl::ast_expr cond = n.cond();
  if (cond.isa<isl::ast_expr_op>() && cond.as<isl::ast_expr_op>().n_arg() == 2) {
    isl::ast_expr_op op = cond.as<isl::ast_expr_op>();
    AstOp kind = opOf(op);
    if (kind == AstOp::Le) hi = successor(op.arg(1));
    if (kind == AstOp::Lt) hi = natOfAstExpr(op.arg(1), ids_);
  }
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
  withHints->vectorBits = loop.like->vectorBits;
  withHints->unroll = loop.like->unroll;
  withHints->vectorWidth = loop.like->vectorWidth;
  withHints->interleave = loop.like->interleave;
  withHints->maskedTail = loop.like->maskedTail;
  withHints->gatherAhead = loop.like->gatherAhead;
  withHints->iterationWork = loop.like->iterationWork;
  withHints->workGrowth = loop.like->workGrowth;
  withHints->rows = loop.like->rows;
  withHints->knobs = loop.like->knobs;
  withHints->rowsLoc = loop.like->rowsLoc;
  return withHints;
}

std::optional<Nat> AstToCin::successor(const isl::ast_expr &e) {
  // isl writes `i <= min(a, b)`; the bound is min(a + 1, b + 1), which Nats simplify (a tile's
  // `min(n - 1, 4095 + 4096 t) + 1` is min(n, 4096 + 4096 t)).
  AstOp kind = e.isa<isl::ast_expr_op>() ? opOf(e.as<isl::ast_expr_op>()) : AstOp::Other;
  if (kind != AstOp::Min && kind != AstOp::Max) {
    std::optional<Nat> x = natOfAstExpr(e, ids_);
    if (!x) return std::nullopt;
    return *x + Nat(1);
  }
  std::optional<Nat> out;
  for (const isl::ast_expr &a : argsOf(e.as<isl::ast_expr_op>())) {
    std::optional<Nat> x = successor(a);
    if (!x) return std::nullopt;
    out = !out ? *x : kind == AstOp::Min ? Nat::min(*out, *x) : Nat::max(*out, *x);
  }
  return out;
}

std::optional<cin::ExprP> AstToCin::condition(const isl::ast_expr &e) {
  if (!e.isa<isl::ast_expr_op>() || e.as<isl::ast_expr_op>().n_arg() != 2) return std::nullopt;
  isl::ast_expr_op op = e.as<isl::ast_expr_op>();
  std::vector<isl::ast_expr> args = argsOf(op);
  AstOp kind = opOf(op);
  if (kind == AstOp::And || kind == AstOp::Or) {
    std::optional<cin::ExprP> x = condition(args[0]), y = condition(args[1]);
    if (!x || !y) return std::nullopt;
    return cin::binary(kind == AstOp::And ? ast::BinOp::And : ast::BinOp::Or, *x, *y, cin::Scalar::Bool);
  }
  std::optional<ast::BinOp> cmp;
  switch (kind) {
    case AstOp::Eq: cmp = ast::BinOp::Eq; break;
    case AstOp::Le: cmp = ast::BinOp::Le; break;
    case AstOp::Lt: cmp = ast::BinOp::Lt; break;
    case AstOp::Ge: cmp = ast::BinOp::Ge; break;
    case AstOp::Gt: cmp = ast::BinOp::Gt; break;
    default: return std::nullopt;
  }
  std::optional<Nat> x = natOfAstExpr(args[0], ids_), y = natOfAstExpr(args[1], ids_);
  if (!x || !y) return std::nullopt;
  return cin::binary(*cmp, cin::natExpr(*x), cin::natExpr(*y), cin::Scalar::Bool);
}

std::optional<cin::StmtP> AstToCin::ifNode(const isl::ast_node_if &n) {
  std::optional<cin::ExprP> cond = condition(n.cond());
  if (!cond) return fail("isl's AST holds a guard the translation does not take");
  std::optional<cin::StmtP> then = node(n.then_node());
  if (!then) return std::nullopt;
  cin::StmtP otherwise;
  if (n.has_else_node()) {
    std::optional<cin::StmtP> s = node(n.else_node());
    if (!s) return std::nullopt;
    otherwise = *s;
  }
  return cin::ifThen(*cond, *then, otherwise);
}

std::optional<cin::StmtP> AstToCin::userNode(const isl::ast_node_user &n) {
  isl::ast_expr call = n.expr();
  if (!call.isa<isl::ast_expr_op>()) return fail("isl's AST holds a statement that is not a call");
  std::vector<isl::ast_expr> operands = argsOf(call.as<isl::ast_expr_op>());
  std::string name = idName(operands.at(0));
  std::vector<Nat> args;
  for (size_t k = 1; k < operands.size(); ++k) {
    std::optional<Nat> x = natOfAstExpr(operands[k], ids_);
    if (!x) return fail("isl's statement instance " + name + " has index expressions the translation does not take");
    args.push_back(*x);
  }
  std::string why;
  std::optional<cin::StmtP> s = instance_(name, args, why);
  if (!s) return fail(why);
  return s;
}

}  // namespace spl::poly
