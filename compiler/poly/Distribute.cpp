/// \file Distribute.cpp: loop distribution with scalar and array expansion, then (for reorder)
/// the middle nest's interchange (see Distribute.h).
#include "poly/Distribute.h"

#include <map>

#include "cin/Visitor.h"
#include "poly/Tile.h"

namespace spl::poly {
namespace {

using namespace cin;

/// What one iteration of the outer loop keeps to itself, as arrays over the loop: each private
/// local and temporary with the array that replaces it.
struct Expansion {
  int64_t var = 0;  // the outer loop's variable
  Nat lo, extent;   // cells i - lo, extent of them
  std::map<int64_t, TensorP> locals, temps;
};

/// Every use of a private value becomes its cell: the loop variable `at` (a copy's own) stands
/// for i in the cell's index.
class Expand : public Mutator {
 public:
  Expand(const Expansion &x, const Nat &at) : x_(x), cell_(at - x.lo) {}
  std::string why;

 protected:
  ExprP mutateLocal(const ExprP &e) override {
    auto it = x_.locals.find(e->local);
    if (it == x_.locals.end()) return e;
    return access(it->second, {cell_}, {}, e->type);
  }
  ExprP mutateAccess(const ExprP &e) override {
    ExprP m = mutateChildren(e);
    auto it = x_.temps.find(m->tensor->id);
    if (it == x_.temps.end()) return m;
    std::vector<Nat> ix{cell_};
    ix.insert(ix.end(), m->indices.begin(), m->indices.end());
    return access(it->second, std::move(ix), m->leaf, m->type);
  }
  StmtP mutateDeclLocal(const StmtP &s) override { return toCell(s); }
  StmtP mutateSetLocal(const StmtP &s) override { return toCell(s); }
  StmtP mutateAlloc(const StmtP &s) override {
    if (x_.temps.count(s->tensor->id)) return mutate(s->body[0]);  // allocated around the loops now
    return mutateChildren(s);
  }

 private:
  /// A declaration or assignment of a private local: a store into its cell (a declaration
  /// without a value stores nothing).
  StmtP toCell(const StmtP &s) {
    auto it = x_.locals.find(s->local);
    if (it == x_.locals.end()) return mutateChildren(s);
    if (!s->value) return block({});
    return assign(access(it->second, {cell_}, {}, s->type), mutate(s->value));
  }

  const Expansion &x_;
  Nat cell_;
};

/// Does `s` use the private value with id `id` in a bound or an index (a Nat)?
bool inNat(const StmtP &s, int64_t id) {
  return anyStmt(s, [&](const Stmt &x) {
    if (x.kind == StmtKind::Forall && (x.lo.mentions(id) || x.hi.mentions(id))) return true;
    auto nat = [&](const ExprP &e) {
      return anyExpr(e, [&](const Expr &y) {
        if (natMentions(y, id)) return true;
        if (y.kind != ExprKind::Access) return false;
        for (const Nat &n : y.indices)
          if (n.mentions(id)) return true;
        return false;
      });
    };
    return nat(x.value) || nat(x.lhs);
  });
}

TensorP cellArray(const std::string &name, const Nat &extent, TypeP elem, std::vector<TensorP> &tensors) {
  TensorP t = temporary(name, types::array(extent, std::move(elem)));
  tensors.push_back(t);
  return t;
}

/// The loop `outer` over a copy of `body` with a fresh variable named `name`.
StmtP copyLoop(const Stmt &outer, const std::string &name, const StmtP &body, const Expansion &x) {
  NatVarId v = freshNatVar(name);
  NatSubst sub;
  sub.vars.emplace(outer.var, Nat::var(v));
  Expand expand(x, Nat::var(v));
  StmtP b = substitute(expand.mutate(body), sub);
  return forall(v.id, name, outer.lo, outer.hi, b, outer.forall, outer.loc);
}

/// The distribution both entry points share: `interchange` exchanges the middle nest.
std::optional<StmtP> distributeAround(const Stmt &outer, const Stmt &inner, const std::string &beforeName,
                                      const std::string &afterName, std::vector<TensorP> &tensors, std::string &why,
                                      bool interchange) {
  Expansion x;
  x.var = outer.var;
  x.lo = outer.lo;
  // The temporaries each iteration allocates, outermost first.
  StmtP body = outer.body[0];
  std::vector<TensorP> privateTemps;
  for (;;) {
    if (body->kind == StmtKind::Block && body->body.size() == 1) {
      body = body->body[0];
    } else if (body->kind == StmtKind::Alloc) {
      privateTemps.push_back(body->tensor);
      body = body->body[0];
    } else {
      break;
    }
  }
  std::vector<StmtP> pre, post;
  bool found = false;
  if (body.get() == &inner) {
    found = true;
  } else if (body->kind == StmtKind::Block) {
    for (const StmtP &s : body->body) {
      if (s.get() == &inner) found = true;
      else (found ? post : pre).push_back(s);
    }
  }
  if (!found) {
    why = inner.varName + " is not a statement of " + outer.varName + "'s body";
    return std::nullopt;
  }
  // The cells: i - lo in [0, extent), extent a constant bound of the loop's length when there
  // is one (a tile's point loop: at most the tile size), else hi for a loop from 0.
  if (std::optional<int64_t> c = constExtentBound(outer.lo, outer.hi)) {
    x.extent = Nat(std::max<int64_t>(*c, 1));
  } else if (outer.lo.isZero()) {
    x.extent = outer.hi;
  } else {
    why = "no size bounds the length [" + outer.lo.str() + ", " + outer.hi.str() + ") of " + outer.varName +
          " (its private values become arrays over it)";
    return std::nullopt;
  }
  StmtP whole = body.get() == &inner ? nullptr : body;
  for (const StmtP &s : pre)
    if (s->kind == StmtKind::DeclLocal) {
      if (inNat(whole, s->local)) {
        why = "the local " + s->localName + " is used in a bound or an index";
        return std::nullopt;
      }
      x.locals.emplace(s->local, cellArray(s->localName + "_" + outer.varName, x.extent, types::scalar(s->type), tensors));
    }
  for (const TensorP &t : privateTemps) {
    if (inNat(outer.body[0], t->id)) {
      why = "the temporary " + t->name + " is used in a bound or an index";
      return std::nullopt;
    }
    x.temps.emplace(t->id, cellArray(t->name + "_" + outer.varName, x.extent, t->type, tensors));
  }
  std::vector<StmtP> out;
  if (!pre.empty()) out.push_back(copyLoop(outer, beforeName, block(pre), x));
  // The middle: i { k { body } } with the cells; interchanged, k in order, exchanged through isl.
  Expand expand(x, Nat::var(NatVarId{outer.var, outer.varName}));
  auto k = std::make_shared<Stmt>(inner);
  k->body = {expand.mutate(inner.body[0])};
  auto middle = std::make_shared<Stmt>(outer);
  middle->body = {k};
  if (interchange) {
    k->forall = ForallKind::Serial;
    std::optional<StmtP> exchanged = interchangeNest(*middle, *k, why);
    if (!exchanged) return std::nullopt;
    out.push_back(*exchanged);
  } else {
    out.push_back(middle);
  }
  if (!post.empty()) out.push_back(copyLoop(outer, afterName, block(post), x));
  StmtP result = block(out);
  for (auto it = privateTemps.rbegin(); it != privateTemps.rend(); ++it) result = allocTemp(x.temps.at((*it)->id), result);
  for (const auto &[id, t] : x.locals) result = allocTemp(t, result);
  return result;
}

}  // namespace

std::optional<StmtP> distributeInterchange(const Stmt &outer, const Stmt &inner, const std::string &beforeName,
                                           const std::string &afterName, std::vector<TensorP> &tensors, std::string &why) {
  return distributeAround(outer, inner, beforeName, afterName, tensors, why, /*interchange=*/true);
}

std::optional<StmtP> distributeLoop(const Stmt &outer, const Stmt &inner, const std::string &beforeName,
                                    const std::string &afterName, std::vector<TensorP> &tensors, std::string &why) {
  return distributeAround(outer, inner, beforeName, afterName, tensors, why, /*interchange=*/false);
}

}  // namespace spl::poly
