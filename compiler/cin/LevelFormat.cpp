/// \file LevelFormat.cpp: the built-in level formats and their registry (see LevelFormat.h).
#include "cin/LevelFormat.h"

#include <mutex>

#include "cin/LowerCommon.h"
#include "support/Error.h"

namespace spl::cin {

bool isPositionsLevel(const Type &t) {
  if (t.kind != TypeKind::Array) return false;
  const TypeP &e = t.elems[0];
  if (e->kind != TypeKind::Tuple) return false;
  for (const TypeP &c : e->elems)
    if (c->kind == TypeKind::Idx) return true;
  return false;
}

namespace {

/// Does the nat read data (a lookup into a nats array or a run-time value)? A level whose
/// length does is one whose entries per parent are known only from the data: compressed.
bool readsData(const Nat &n) {
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors) {
      const NatAtom &a = *f.first;
      if (a.kind == NatAtomKind::Lookup || a.kind == NatAtomKind::Value) return true;
      for (const Nat &arg : a.args)
        if (readsData(arg)) return true;
    }
  return false;
}

int idxCount(const Type &levelType) {
  int n = 0;
  for (const TypeP &c : levelType.elems[0]->elems)
    if (c->kind == TypeKind::Idx) ++n;
  return n;
}

/// The component of a positions level's entry that holds the value (-1: a pattern).
int valueComponent(const Type &levelType) {
  const TypeP &e = levelType.elems[0];
  for (size_t c = 0; c < e->elems.size(); ++c)
    if (e->elems[c]->kind != TypeKind::Idx) return static_cast<int>(c);
  return -1;
}

class DenseFormat : public LevelFormat {
 public:
  std::string name() const override { return "dense"; }
  bool matches(const Type &t, int) const override { return t.kind == TypeKind::Array && !isPositionsLevel(t); }
  LevelProperties properties() const override {
    LevelProperties p;
    p.full = p.ordered = p.unique = p.hasLocate = true;
    return p;
  }
  int coordinateCount(const Type &) const override { return 1; }
  TypeP childShape(const Type &t) const override { return t.elems[0]; }
  void iterate(lower::Lowerer &L, const LevelPosition &at, const std::string &loopName, ForallKind kind,
               const IterateBody &body) const override {
    L.loop(loopName, Nat(0), at.type->len, kind, [&](const Nat &c) { body(locate(at, {c}), {c}); });
  }
  LevelPosition locate(const LevelPosition &at, const std::vector<Nat> &coordinates) const override {
    LevelPosition child = at;
    child.prefix.push_back(coordinates.at(0));
    child.type = types::elementAt(*at.type, coordinates[0]);
    return child;
  }
  void appendEdges(lower::Lowerer &, const TensorP &, const Nat &, const ExprP &) const override {}
  void appendCoordinates(lower::Lowerer &, const LevelPosition &, const std::vector<ExprP> &) const override {}
};

/// The levels whose entries are stored at positions, each with its coordinates in the idx
/// components of a tuple: they iterate alike (a loop over positions, coordinates read) and
/// differ in their properties and in what they can assemble.
class PositionsFormat : public LevelFormat {
 public:
  int coordinateCount(const Type &t) const override { return idxCount(t); }
  TypeP childShape(const Type &t) const override {
    int v = valueComponent(t);
    return v < 0 ? nullptr : t.elems[0]->elems[v];
  }
  void iterate(lower::Lowerer &L, const LevelPosition &at, const std::string &loopName, ForallKind kind,
               const IterateBody &body) const override {
    const Type &t = *at.type;
    const TypeP &entry = t.elems[0];
    int valueComp = valueComponent(t);
    L.loop(loopName, Nat(0), t.len, kind, [&](const Nat &p) {
      LevelPosition child = at;
      child.prefix.push_back(p);
      std::vector<Nat> coordinates;
      for (size_t c = 0; c < entry->elems.size(); ++c) {
        if (entry->elems[c]->kind != TypeKind::Idx) continue;
        std::vector<int> leaf = at.leaf;
        leaf.push_back(static_cast<int>(c));
        coordinates.push_back(L.natOf(L.scalarVal(access(at.tensor, child.prefix, leaf, Scalar::I64))));
      }
      child.leaf.push_back(valueComp);
      child.type = valueComp < 0 ? nullptr : types::elementAt(t, p)->elems[valueComp];
      body(child, coordinates);
    });
  }
  void appendCoordinates(lower::Lowerer &L, const LevelPosition &entry, const std::vector<ExprP> &coordinates) const override {
    // `entry` points at the tuple; its idx components take the coordinates in order.
    const TypeP &tuple = entry.type;
    size_t k = 0;
    for (size_t c = 0; c < tuple->elems.size() && k < coordinates.size(); ++c) {
      if (tuple->elems[c]->kind != TypeKind::Idx) continue;
      std::vector<int> leaf = entry.leaf;
      leaf.push_back(static_cast<int>(c));
      L.emit(assign(access(entry.tensor, entry.prefix, leaf, Scalar::I64), coordinates[k++]));
    }
  }
};

/// CSR and LIL rows (length read from the data), and a top-level list of entries.
class CompressedFormat : public PositionsFormat {
 public:
  std::string name() const override { return "compressed"; }
  bool matches(const Type &t, int depth) const override {
    return isPositionsLevel(t) && idxCount(t) == 1 && (depth == 0 || readsData(t.len));
  }
  LevelProperties properties() const override {
    LevelProperties p;
    p.ordered = p.unique = true;  // rows of a well-formed csr (--checked validates it)
    return p;
  }
  void appendEdges(lower::Lowerer &L, const TensorP &pos, const Nat &parent, const ExprP &count) const override {
    L.emit(assign(access(pos, {parent + Nat(1)}, {}, Scalar::I64),
                  binary(ast::BinOp::Add, access(pos, {parent}, {}, Scalar::I64), count, Scalar::I64)));
  }
};

/// ELL rows: the same width below every parent, padding included.
class PaddedFormat : public PositionsFormat {
 public:
  std::string name() const override { return "padded"; }
  bool matches(const Type &t, int depth) const override {
    return isPositionsLevel(t) && idxCount(t) == 1 && depth > 0 && !readsData(t.len);
  }
  LevelProperties properties() const override {
    LevelProperties p;
    p.padded = true;
    return p;
  }
  void appendEdges(lower::Lowerer &, const TensorP &, const Nat &, const ExprP &) const override {
    throw NotSupported(SourceLoc{}, "assembling a padded (ELL) level: its width is fixed before the entries are known");
  }
};

/// COO: entries that carry all their coordinates.
class SingletonFormat : public PositionsFormat {
 public:
  std::string name() const override { return "singleton"; }
  bool matches(const Type &t, int) const override { return isPositionsLevel(t) && idxCount(t) >= 2; }
  LevelProperties properties() const override { return {}; }
  void appendEdges(lower::Lowerer &, const TensorP &, const Nat &, const ExprP &) const override {
    throw NotSupported(SourceLoc{}, "assembling a coordinate-list level");
  }
};

struct Registry {
  std::mutex mutex;
  std::vector<LevelFormatP> formats{std::make_shared<SingletonFormat>(), std::make_shared<CompressedFormat>(),
                                    std::make_shared<PaddedFormat>(), std::make_shared<DenseFormat>()};
};

Registry &registry() {
  static Registry r;
  return r;
}

}  // namespace

LevelPosition LevelFormat::locate(const LevelPosition &, const std::vector<Nat> &) const {
  throw InternalError("level format " + name() + " has no locate");
}

void LevelFormat::appendEdges(lower::Lowerer &, const TensorP &, const Nat &, const ExprP &) const {
  throw InternalError("level format " + name() + " cannot be assembled");
}

void LevelFormat::appendCoordinates(lower::Lowerer &, const LevelPosition &, const std::vector<ExprP> &) const {
  throw InternalError("level format " + name() + " cannot be assembled");
}

LevelFormatP recognizeLevel(const Type &levelType, int depth) {
  if (levelType.kind != TypeKind::Array) return nullptr;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const LevelFormatP &f : r.formats)
    if (f->matches(levelType, depth)) return f;
  return nullptr;
}

std::vector<Level> levelsOf(const TypeP &tensorType) {
  std::vector<Level> levels;
  TypeP t = tensorType;
  if (t && t->kind == TypeKind::DepPair) t = t->elems[0];
  while (t && t->kind == TypeKind::Array) {
    LevelFormatP f = recognizeLevel(*t, static_cast<int>(levels.size()));
    if (!f) break;
    levels.push_back(Level{f, t});
    t = f->childShape(*t);
  }
  return levels;
}

std::string formatNames(const TypeP &tensorType) {
  std::string s;
  for (const Level &l : levelsOf(tensorType)) s += (s.empty() ? "" : ", ") + l.format->name();
  return s;
}

void registerLevelFormat(LevelFormatP f) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.formats.insert(r.formats.begin(), std::move(f));
}

void unregisterLevelFormat(const LevelFormatP &f) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.formats.erase(std::remove(r.formats.begin(), r.formats.end(), f), r.formats.end());
}

}  // namespace spl::cin
