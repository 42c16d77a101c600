/// \file Privatize.cpp: a loop's racing updates into private copies per part (see Privatize.h).
#include "poly/Privatize.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "cin/Schedule.h"
#include "cin/Visitor.h"

namespace spl::poly {
namespace {

using namespace cin;

/// How an array is updated inside the loop: `t[x] = t[x] + e` or `min`/`max`.
struct UpdateOp {
  bool isMinMax = false, isMax = false;
  Scalar type = Scalar::F64;
  bool operator==(const UpdateOp &o) const { return isMinMax == o.isMinMax && isMax == o.isMax; }
};

/// The op of `s` when it is an update of t (`t[x] = t[x] op e`, e not reading t), else none.
/// (Parts add their terms apart, then to each other: a float sum is regrouped, which the
/// schedule asks for by naming the strategy, as atomics reorders it.)
std::optional<UpdateOp> updateOf(const Stmt &s, int64_t t) {
  if (s.kind != StmtKind::Assign || s.compound || s.lhs->tensor->id != t) return std::nullopt;
  for (const Nat &ix : s.lhs->indices)
    if (ix.mentions(t)) return std::nullopt;
  std::optional<UpdateForm> f = updateForm(s.value, [&](const ExprP &x) { return sameElement(x, s.lhs); });
  if (!f || readsTensor(f->operand, t)) return std::nullopt;
  UpdateOp op;
  op.type = s.lhs->type;
  op.isMinMax = f->isMinMax;
  op.isMax = f->isMax;
  return op;
}

ExprP identityOf(const UpdateOp &op) {
  if (!op.isMinMax) return isFloat(op.type) ? constFloat(0, op.type) : constInt(0, op.type);
  if (isFloat(op.type)) return constFloat(op.isMax ? -INFINITY : INFINITY, op.type);
  if (op.type == Scalar::I32)
    return constInt(op.isMax ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max(), op.type);
  return constInt(op.isMax ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max(), op.type);
}

ExprP combined(const UpdateOp &op, ExprP a, ExprP b) {
  if (op.isMinMax) return minmax(op.isMax, std::move(a), std::move(b), op.type);
  return binary(ast::BinOp::Add, std::move(a), std::move(b), op.type);
}

/// The extents of a rectangular array type (each level's length free of the positions above
/// it), or none.
std::optional<std::vector<Nat>> shapeOf(const TypeP &type) {
  std::vector<Nat> dims;
  TypeP t = type;
  while (t->kind == TypeKind::Array) {
    if (types::isDependent(*t)) return std::nullopt;
    dims.push_back(t->len);
    t = t->elems[0];
  }
  if (t->kind != TypeKind::Scalar) return std::nullopt;
  return dims;
}

/// Accesses of the updated arrays become their part's copy: t[x] -> t_parts[part, x].
class ToPart : public Mutator {
 public:
  ToPart(const std::map<int64_t, TensorP> &parts, Nat part) : parts_(parts), part_(std::move(part)) {}

 protected:
  ExprP mutateAccess(const ExprP &e) override {
    ExprP m = mutateChildren(e);
    auto it = parts_.find(m->tensor->id);
    if (it == parts_.end()) return m;
    std::vector<Nat> ix{part_};
    ix.insert(ix.end(), m->indices.begin(), m->indices.end());
    return access(it->second, std::move(ix), m->leaf, m->type);
  }

 private:
  const std::map<int64_t, TensorP> &parts_;
  Nat part_;
};

/// `forall z0 in [0, d0) { ... forall zk { leaf(z) } }` over the shape, the outermost of `kind`.
StmtP overShape(const std::vector<Nat> &shape, const std::string &name, ForallKind kind,
                const std::function<StmtP(const std::vector<Nat> &)> &leaf) {
  std::vector<NatVarId> vars;
  std::vector<Nat> at;
  for (size_t d = 0; d < shape.size(); ++d) {
    vars.push_back(freshNatVar(name + std::to_string(d)));
    at.push_back(Nat::var(vars.back()));
  }
  StmtP body = leaf(at);
  for (size_t d = shape.size(); d-- > 0;)
    body = forall(vars[d].id, vars[d].name, Nat(0), shape[d], body, d == 0 ? kind : ForallKind::Serial);
  return body;
}

}  // namespace

std::optional<StmtP> privatizeUpdates(const Stmt &loop, const std::vector<TensorP> &updated, const std::string &partName,
                                      std::vector<TensorP> &tensors, std::string &why) {
  const Nat P(kPrivateParts);
  if (loop.segment) {
    why = "loop " + loop.varName + " runs over the entries of a compressed row (pos splits a row by its nonzeros)";
    return std::nullopt;
  }
  std::map<int64_t, TensorP> parts;
  std::map<int64_t, UpdateOp> ops;
  std::map<int64_t, std::vector<Nat>> shapes;
  for (const TensorP &t : updated) {
    std::optional<UpdateOp> op;
    bool ok = true;
    forEachStmt(loop.body[0], [&](const StmtP &s) {
      if (!ok) return;
      if (s->kind == StmtKind::Assign && s->lhs->tensor->id == t->id) {
        std::optional<UpdateOp> u = updateOf(*s, t->id);
        if (!u || (op && !(*u == *op))) {
          ok = false;
          why = "`" + quoted(s) + "` is not an update " + t->name + "[x] = " + t->name +
                "[x] op e with one op (+, min or max) for the whole loop";
          return;
        }
        op = u;
        return;
      }
      if (readsTensor(s->value, t->id) || (s->lhs && readsTensor(s->lhs, t->id)) ||
          (s->kind == StmtKind::Forall && (s->lo.mentions(t->id) || s->hi.mentions(t->id)))) {
        ok = false;
        why = "loop " + loop.varName + " reads " + t->name + " outside its updates";
      }
    });
    if (!ok) return std::nullopt;
    if (!op) {
      why = "loop " + loop.varName + " does not update " + t->name;
      return std::nullopt;
    }
    std::optional<std::vector<Nat>> shape = shapeOf(t->type);
    if (!shape) {
      why = t->name + " is not a rectangular array (its private copies need a shape)";
      return std::nullopt;
    }
    TensorP copy = temporary(t->name + "_parts", types::array(P, t->type));
    tensors.push_back(copy);
    parts.emplace(t->id, copy);
    ops.emplace(t->id, *op);
    shapes.emplace(t->id, *shape);
  }

  NatVarId part = freshNatVar(partName);
  Nat p = Nat::var(part);
  // Each part: its copies set to the identity, then its share of the loop's iterations.
  std::vector<StmtP> partBody;
  for (const auto &[id, copy] : parts) {
    const UpdateOp &op = ops.at(id);
    partBody.push_back(overShape(shapes.at(id), copy->name + "_z", ForallKind::Serial, [&](const std::vector<Nat> &z) {
      std::vector<Nat> ix{p};
      ix.insert(ix.end(), z.begin(), z.end());
      return assign(access(copy, ix, {}, op.type), identityOf(op));
    }));
  }
  // Part p runs every P-th iteration from lo + p (i = lo + p + P j): the parts' iterations are
  // affine in p and j, so isl sees them disjoint, and a work that changes steadily with i (a
  // triangle's columns or rows) is shared evenly whatever its direction.
  const Nat n = loop.hi - loop.lo;
  NatVarId j = freshNatVar(loop.varName);
  NatSubst strided;
  strided.vars.emplace(loop.var, loop.lo + p + P * Nat::var(j));
  auto chunk = std::make_shared<Stmt>(loop);
  chunk->var = j.id;
  chunk->lo = Nat(0);
  chunk->hi = Nat::div(n + P - Nat(1) - p, kPrivateParts);  // p < P: never negative
  chunk->body = {substitute(ToPart(parts, p).mutate(loop.body[0]), strided)};
  chunk->iterationWork.reset();
  chunk->balanceBy = 0;  // its iterations are the part's, not [0, n)
  partBody.push_back(chunk);
  auto parallel = std::make_shared<Stmt>(*forall(part.id, partName, Nat(0), P, block(partBody), ForallKind::Parallel, loop.loc));
  parallel->userKind = true;
  // A part's work sizes the pool's chunks (codegen): one part at a time. Where it is unknown
  // (compressed rows), as if each part were large: the schedule asked for the parts.
  NatFacts none;
  std::optional<Nat> whole = cin::workOf(std::make_shared<Stmt>(loop), none);
  parallel->iterationWork = whole ? Nat::div(*whole, kPrivateParts) : Nat(int64_t(1) << 20);
  for (const TensorP &t : updated)
    parallel->privateCopies.push_back(PrivateCopy{parts.at(t->id), t, ops.at(t->id).type, ops.at(t->id).isMinMax, ops.at(t->id).isMax});

  // The copies added to the arrays in part order, element by element.
  std::vector<StmtP> out{parallel};
  for (const auto &[id, copy] : parts) {
    const UpdateOp &op = ops.at(id);
    const TensorP &t = *std::find_if(updated.begin(), updated.end(), [&](const TensorP &x) { return x->id == id; });
    NatVarId q = freshNatVar(partName + "_q");
    const std::vector<Nat> &shape = shapes.at(id);
    out.push_back(overShape(shape, t->name + "_z", ForallKind::Parallel, [&](const std::vector<Nat> &z) {
      std::vector<Nat> ix{Nat::var(q)};
      ix.insert(ix.end(), z.begin(), z.end());
      ExprP self = access(t, z, {}, op.type);
      StmtP add = assign(self, combined(op, self, access(copy, ix, {}, op.type)));
      return forall(q.id, q.name, Nat(0), P, add, ForallKind::Serial);
    }));
  }
  StmtP result = block(out);
  for (const auto &[id, copy] : parts) result = allocTemp(copy, result);
  return result;
}

namespace {

/// Accesses of the parts' copies become one copy's: t_parts[part, x] -> t_one[x].
class ToOneCopy : public Mutator {
 public:
  explicit ToOneCopy(const std::map<int64_t, TensorP> &one) : one_(one) {}

 protected:
  ExprP mutateAccess(const ExprP &e) override {
    ExprP m = mutateChildren(e);
    auto it = one_.find(m->tensor->id);
    if (it == one_.end()) return m;
    return access(it->second, std::vector<Nat>(m->indices.begin() + 1, m->indices.end()), m->leaf, m->type);
  }

 private:
  const std::map<int64_t, TensorP> &one_;
};

/// The parts' loop under `s`, a nest of the copies' allocations around a block that opens with
/// it (privatizeUpdates's result as later commands left it), when the nest allocates exactly its
/// copies; else null.
const Stmt *partsUnder(const Stmt &s) {
  std::vector<int64_t> allocated;
  const Stmt *at = &s;
  while (at->kind == StmtKind::Alloc && at->body.size() == 1 && at->body[0]) {
    allocated.push_back(at->tensor->id);
    at = at->body[0].get();
  }
  if (at->kind != StmtKind::Block || at->body.empty() || !at->body[0]) return nullptr;
  const Stmt &parts = *at->body[0];
  if (parts.kind != StmtKind::Forall || parts.privateCopies.empty() || !parts.iterationWork) return nullptr;
  if (allocated.size() != parts.privateCopies.size()) return nullptr;
  for (int64_t id : allocated)
    if (std::none_of(parts.privateCopies.begin(), parts.privateCopies.end(), [&](const PrivateCopy &c) { return c.copy->id == id; }))
      return nullptr;
  if (parts.body.size() != 1 || !parts.body[0] || parts.body[0]->kind != StmtKind::Block) return nullptr;
  return &parts;
}

/// The parts one after another on one copy of each array: the part loop serial; in each part
/// its body (the copy set to the identity, the part's iterations), then the copy combined into
/// the array, element by element. Each element gets the parts' sums in part order, as from the
/// parts' copies. Null where the arrays' shapes are not known.
StmtP partsInOrder(const Stmt &parts, std::vector<TensorP> &tensors) {
  std::map<int64_t, TensorP> one;
  std::vector<StmtP> body = parts.body[0]->body;
  std::vector<TensorP> copies;
  for (const PrivateCopy &c : parts.privateCopies) {
    std::optional<std::vector<Nat>> shape = shapeOf(c.array->type);
    if (!shape) return nullptr;
    TensorP copy = temporary(c.array->name + "_part", c.array->type);
    one.emplace(c.copy->id, copy);
    copies.push_back(copy);
    UpdateOp op;
    op.type = c.type;
    op.isMinMax = c.isMinMax;
    op.isMax = c.isMax;
    body.push_back(overShape(*shape, c.array->name + "_z", ForallKind::Serial, [&](const std::vector<Nat> &z) {
      ExprP self = access(c.array, z, {}, op.type);
      return assign(self, combined(op, self, access(copy, z, {}, op.type)));
    }));
  }
  ToOneCopy toOne(one);
  for (StmtP &b : body) b = toOne.mutate(b);
  auto inOrder = std::make_shared<Stmt>(parts);
  inOrder->forall = ForallKind::Serial;
  inOrder->privateCopies.clear();
  inOrder->iterationWork.reset();
  inOrder->workGrowth.reset();
  inOrder->body = {block(std::move(body))};
  StmtP result = inOrder;
  for (const TensorP &c : copies) {
    tensors.push_back(c);
    result = allocTemp(c, result);
  }
  return result;
}

}  // namespace

int64_t minPrivateWork(int cpuVectorBits) {
  if (cpuVectorBits <= 0 || cpuVectorBits >= 512) return kMinPrivateWork512;
  return kMinPrivateWork512 * std::max(cpuVectorBits, 128) / 512;
}

StmtP serialWhereFewParts(const StmtP &body, std::vector<TensorP> &tensors, int64_t minWork) {
  class Version : public Mutator {
   public:
    Version(std::vector<TensorP> &tensors, int64_t minWork) : tensors_(tensors), minWork_(minWork) {}
    StmtP mutate(const StmtP &s) override {
      if (!s || s->kind != StmtKind::Alloc) return Mutator::mutate(s);
      const Stmt *parts = partsUnder(*s);
      if (!parts) return Mutator::mutate(s);
      // A work known to be large, or unknown (compressed rows: privatizeUpdates counts it as
      // large), keeps the parts alone.
      std::optional<int64_t> known = parts->iterationWork->asConst();
      if (known && *known >= minWork_ / kPrivateParts) return s;
      StmtP inOrder = partsInOrder(*parts, tensors_);
      if (!inOrder) return s;
      if (known) return inOrder;
      // The work of a part, as privatizeUpdates set it: the loop's divided by the parts.
      ExprP enough =
          binary(ast::BinOp::Ge, natExpr(*parts->iterationWork), constInt(minWork_ / kPrivateParts), Scalar::Bool);
      return ifThen(enough, s, inOrder);
    }
    using Mutator::mutate;

   private:
    std::vector<TensorP> &tensors_;
    int64_t minWork_;
  } version(tensors, minWork);
  return version.mutate(body);
}

}  // namespace spl::poly
