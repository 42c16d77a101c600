/// \file Layout.cpp: sizes and offsets of flattened tensors (see Layout.h).
#include "cin/Layout.h"

#include "support/Error.h"

namespace spl::cin {

namespace {

void collectLeaves(const TypeP &t, std::vector<int> path, std::vector<Leaf> &out) {
  switch (t->kind) {
    case TypeKind::Array:
      if (t->packed) {
        out.push_back(Leaf{path, t->elems[0], true});
        return;
      }
      collectLeaves(t->elems[0], path, out);
      return;
    case TypeKind::Tuple:
      for (size_t i = 0; i < t->elems.size(); ++i) {
        auto p = path;
        p.push_back(static_cast<int>(i));
        collectLeaves(t->elems[i], p, out);
      }
      return;
    default: out.push_back(Leaf{path, t, false}); return;
  }
}

/// Sum over positions [0, hi) of a size that may depend on the position `b`.
Nat sumOver(const NatVarId &b, const Nat &hi, const Nat &size, const Nat &len, const SumFn &fn) {
  if (!size.mentions(b.id)) return hi * size;
  if (fn) return fn(b, hi, size, len);
  NatVarId q = freshNatVar(b.name);
  NatSubst s;
  s.vars.emplace(b.id, Nat::var(q));
  return Nat::sum(q, Nat(0), hi, substitute(size, s));
}

/// Number of elements of the leaf reached by `path` (consumed at tuples) in a value of type t.
Nat count(const TypeP &t, const std::vector<int> &path, size_t pi, const SumFn &fn) {
  switch (t->kind) {
    case TypeKind::Array: {
      if (t->packed) return t->len;  // one interleaved tuple per element
      Nat inner = count(t->elems[0], path, pi, fn);
      return sumOver(t->binder, t->len, inner, t->len, fn);
    }
    case TypeKind::Tuple:
      if (pi >= path.size()) throw InternalError("layout: a tuple path ends before its leaf");
      return count(t->elems[path[pi]], path, pi + 1, fn);
    default: return Nat(1);
  }
}

}  // namespace

std::vector<Leaf> leavesOf(const TypeP &t) {
  std::vector<Leaf> out;
  collectLeaves(t, {}, out);
  return out;
}

size_t leafIndexOf(const std::vector<Leaf> &leaves, const std::vector<int> &path, int &field) {
  field = -1;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const std::vector<int> &lp = leaves[i].path;
    if (leaves[i].packed) {
      // The packed leaf covers every path that extends its own by one field.
      if (path.size() == lp.size() + 1 && std::equal(lp.begin(), lp.end(), path.begin())) {
        field = path.back();
        return i;
      }
    } else if (lp == path) {
      return i;
    }
  }
  throw InternalError("layout: no buffer for this tuple path");
}

Nat leafCount(const TypeP &t, const std::vector<int> &path, const SumFn &fn) { return count(t, path, 0, fn); }

Nat leafOffset(const TypeP &t0, const std::vector<Nat> &indices, const std::vector<int> &path, const SumFn &fn) {
  Nat offset(0);
  TypeP t = t0;
  size_t pi = 0;
  auto consumeTuples = [&]() {
    while (t->kind == TypeKind::Tuple) {
      if (pi >= path.size()) throw InternalError("layout: access path ends inside a tuple");
      t = t->elems[path[pi++]];
    }
  };
  consumeTuples();
  for (const Nat &i : indices) {
    if (t->kind != TypeKind::Array) throw InternalError("layout: more indices than array levels in `" + types::str(t0) + "`");
    if (t->packed) {
      offset = offset + i;  // below a packed level the offset counts tuples; fields are separate
      t = types::elementAt(*t, i);
      // The packed tuple's field is chosen by the rest of the path, not by an index.
      return offset;
    }
    Nat elemCount = count(t->elems[0], path, pi, fn);
    offset = offset + sumOver(t->binder, i, elemCount, t->len, fn);
    t = types::elementAt(*t, i);
    consumeTuples();
  }
  return offset;
}

namespace {

void collectLookups(const Nat &n, int64_t binder, const NatSubst &maxes, std::vector<Nat> &out) {
  for (const Nat::Term &term : n.terms())
    for (const auto &f : term.mono.factors) {
      const NatAtom &a = *f.first;
      if (a.kind == NatAtomKind::Lookup && a.var.id == binder) out.push_back(substitute(a.args[0], maxes) + Nat(1));
      for (const Nat &x : a.args) collectLookups(x, binder, maxes, out);
    }
}

void walkCount(const TypeP &t, int64_t binder, NatSubst maxes, std::vector<Nat> &out) {
  switch (t->kind) {
    case TypeKind::Array:
      collectLookups(t->len, binder, maxes, out);
      maxes.vars[t->binder.id] = substitute(t->len, maxes) - Nat(1);
      walkCount(t->elems[0], binder, maxes, out);
      return;
    case TypeKind::Idx: collectLookups(t->len, binder, maxes, out); return;
    case TypeKind::Tuple:
      for (const TypeP &e : t->elems) walkCount(e, binder, maxes, out);
      return;
    default: return;
  }
}

}  // namespace

Nat natsCount(const TypeP &body, int64_t binder) {
  std::vector<Nat> candidates;
  walkCount(body, binder, NatSubst{}, candidates);
  if (candidates.empty()) return Nat(0);
  Nat best = candidates[0];
  for (size_t i = 1; i < candidates.size(); ++i) best = Nat::max(best, candidates[i]);
  return best;
}

}  // namespace spl::cin
