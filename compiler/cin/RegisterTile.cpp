/// \file RegisterTile.cpp: scalar replacement of a register tile's sums (see RegisterTile.h).
#include "cin/RegisterTile.h"

#include "cin/Visitor.h"

namespace spl::cin {
namespace {

/// A loop's body without blocks of one statement.
const StmtP &bodyOf(const Stmt &l) {
  const StmtP *b = &l.body[0];
  while ((*b)->kind == StmtKind::Block && (*b)->body.size() == 1) b = &(*b)->body[0];
  return *b;
}

/// Are all accesses to `t` in `e` at `index`?
bool onlyAt(const ExprP &e, const Tensor *t, const std::vector<Nat> &index) {
  return !anyExpr(e, [&](const Expr &x) { return x.kind == ExprKind::Access && x.tensor.get() == t && x.indices != index; });
}

class Promote : public Mutator {
 public:
  explicit Promote(std::vector<TensorP> &tensors) : tensors_(tensors) {}

 protected:
  StmtP mutateForall(const StmtP &s) override {
    if (StmtP tile = promoted(*s)) return tile;
    return mutateChildren(s);
  }

 private:
  /// The loop k as the register tile around it, or null when it is not of that form.
  StmtP promoted(const Stmt &k) {
    std::vector<const Stmt *> tile;
    const StmtP *at = &bodyOf(k);
    while ((*at)->kind == StmtKind::Forall) {
      const Stmt &p = **at;
      std::optional<int64_t> trip = (p.hi - p.lo).asConst();
      if (!trip || *trip < 1 || p.unroll != *trip) return nullptr;
      tile.push_back(&p);
      at = &bodyOf(p);
    }
    // The update, after declarations of the values it uses (symm's element of A).
    std::vector<StmtP> decls;
    const StmtP *last = at;
    if ((*at)->kind == StmtKind::Block) {
      const std::vector<StmtP> &ss = (*at)->body;
      if (ss.empty()) return nullptr;
      decls.assign(ss.begin(), ss.end() - 1);
      last = &ss.back();
    }
    const Stmt &update = **last;
    if (tile.empty() || update.kind != StmtKind::Assign || update.compound || update.atomic) return nullptr;
    const ExprP &cell = update.lhs;
    if (cell->tensor->kind != Tensor::Temp || !cell->leaf.empty()) return nullptr;
    for (const Nat &n : cell->indices)
      if (n.mentions(k.var)) return nullptr;
    if (!onlyAt(update.value, cell->tensor.get(), cell->indices)) return nullptr;
    for (const StmtP &d : decls)
      if (d->kind != StmtKind::DeclLocal || anyExpr(d->value, [&](const Expr &x) { return x.kind == ExprKind::Access && x.tensor == cell->tensor; }))
        return nullptr;
    // R: the tile's shape, indexed by each loop's offset in its tile.
    TypeP type = types::scalar(cell->type);
    for (auto p = tile.rbegin(); p != tile.rend(); ++p) type = types::array(*((*p)->hi - (*p)->lo).asConst(), type);
    auto r = temporary(cell->tensor->name + "_tile", type);
    r->registerTile = true;
    tensors_.push_back(r);
    std::vector<Nat> offsets;
    for (const Stmt *p : tile) offsets.push_back(Nat::var(NatVarId{p->var, p->varName}) - p->lo);
    ExprP inTile = access(r, offsets, {}, cell->type);
    // The nest of tile loops around `body`, with fresh variables.
    auto nest = [&](const StmtP &body) {
      NatSubst fresh;
      for (const Stmt *p : tile) fresh.vars.emplace(p->var, Nat::var(freshNatVar(p->varName)));
      StmtP s = substitute(body, fresh);
      for (auto p = tile.rbegin(); p != tile.rend(); ++p) {
        const NatVarId v = *fresh.vars.at((*p)->var).asVar();
        auto l = std::make_shared<Stmt>(**p);
        l->var = v.id;
        l->lo = substitute((*p)->lo, fresh);
        l->hi = substitute((*p)->hi, fresh);
        l->body = {s};
        s = l;
      }
      return s;
    };
    StmtP load = nest(assign(inTile, cell));
    StmtP store = nest(assign(cell, inTile));
    // The update on R: every access to the cell becomes R's.
    struct ToTile : Mutator {
      const Expr *cell;
      ExprP tile;
      ExprP mutateAccess(const ExprP &e) override {
        if (e->tensor == cell->tensor && e->indices == cell->indices && e->leaf == cell->leaf) return tile;
        return mutateChildren(e);
      }
    } toTile;
    toTile.cell = cell.get();
    toTile.tile = inTile;
    auto newUpdate = std::make_shared<Stmt>(update);
    newUpdate->lhs = inTile;
    newUpdate->value = toTile.mutate(update.value);
    // Rebuild k over the tile loops with the new update.
    std::function<StmtP(size_t)> inner = [&](size_t d) -> StmtP {
      if (d == tile.size()) {
        std::vector<StmtP> body = decls;
        body.push_back(newUpdate);
        return block(body);
      }
      auto l = std::make_shared<Stmt>(*tile[d]);
      l->body = {inner(d + 1)};
      return l;
    };
    auto newK = std::make_shared<Stmt>(k);
    newK->body = {inner(0)};
    return allocTemp(r, block({load, newK, store}));
  }

  std::vector<TensorP> &tensors_;
};

}  // namespace

StmtP promoteRegisterTiles(const StmtP &s, std::vector<TensorP> &tensors) { return Promote(tensors).mutate(s); }

}  // namespace spl::cin
