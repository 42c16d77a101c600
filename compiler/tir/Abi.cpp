/// \file Abi.cpp: computes the C parameters of an export from its instantiated types.
#include "tir/Abi.h"

#include <map>

#include "support/Error.h"

namespace spl::tir {

std::string cScalarType(ScalarKind k) {
  switch (k) {
    case ScalarKind::F32: return "float";
    case ScalarKind::F64: return "double";
    case ScalarKind::I32: return "int32_t";
    case ScalarKind::I64: return "int64_t";
    case ScalarKind::Bool: return "bool";
  }
  return "void";
}

namespace {

bool containsArray(const TypeP &t) {
  if (t->kind == TypeKind::Array) return true;
  for (const TypeP &e : t->elems)
    if (containsArray(e)) return true;
  return false;
}

/// Is the element count of a value of type t (any of its buffers) a function of run-time data,
/// not of nat parameters and constants alone?
bool countReadsData(const TypeP &t) {
  if (t->kind == TypeKind::Array && t->len.readsData()) return true;
  if (t->kind != TypeKind::Array && t->kind != TypeKind::Tuple) return false;
  for (const TypeP &e : t->elems)
    if (countReadsData(e)) return true;
  return false;
}

/// Do all buffers of an array type hold the same number of elements (tuples only below its
/// arrays, as in CSR's n..(i => L(i).(f32, idx[m])))?
bool buffersHoldEqualCounts(const TypeP &t) {
  TypeP e = t;
  while (e->kind == TypeKind::Array && !e->packed) e = e->elems[0];
  return e->kind == TypeKind::Array || !containsArray(e);
}

struct Builder {
  const Export &ex;
  int indexBits;
  bool checked;
  Abi abi;

  std::string indexType() const { return indexBits == 64 ? "int64_t" : "int32_t"; }

  /// t with the export's data and nat arguments in place of its parameters.
  TypeP inst(const TypeP &t) const {
    NatSubst fixed;
    for (const auto &[id, v] : ex.natArgs) fixed.vars.emplace(id, Nat(v));
    return substituteTypeVars(fixed.empty() ? t : types::substitute(t, fixed), ex.typeArgs);
  }

  /// Leaves of a type below arrays: (path, leaf type).
  void leaves(const TypeP &t, std::vector<int> path, std::vector<std::pair<std::vector<int>, TypeP>> &out, SourceLoc loc) {
    switch (t->kind) {
      case TypeKind::Array:
        if (t->packed) {
          out.emplace_back(path, t);  // the whole packed level is one leaf
          return;
        }
        leaves(t->elems[0], path, out, loc);
        return;
      case TypeKind::Tuple:
        for (size_t i = 0; i < t->elems.size(); ++i) {
          auto p = path;
          p.push_back(static_cast<int>(i));
          leaves(t->elems[i], p, out, loc);
        }
        return;
      case TypeKind::Scalar:
      case TypeKind::Idx: out.emplace_back(path, t); return;
      default:
        throw NotSupported(loc, "the C ABI cannot pass `" + types::str(t) + "` inside an array");
    }
  }

  /// Names leaf components: a single leaf keeps the parameter's name; otherwise value leaves
  /// are NAME_vals (or NAME_vK) and index leaves NAME_cols (or NAME_idxK).
  std::vector<std::string> leafNames(const std::string &base, const std::vector<std::pair<std::vector<int>, TypeP>> &ls) {
    if (ls.size() == 1) return {base};
    int nvals = 0, nidx = 0;
    for (const auto &l : ls) (l.second->kind == TypeKind::Idx ? nidx : nvals)++;
    std::vector<std::string> names;
    int vi = 0, ii = 0;
    for (const auto &l : ls) {
      if (l.second->kind == TypeKind::Idx) names.push_back(nidx == 1 ? base + "_cols" : base + "_idx" + std::to_string(ii++));
      else names.push_back(nvals == 1 ? base + "_vals" : base + "_v" + std::to_string(vi++));
    }
    return names;
  }

  void packedLeaf(AbiParam &p, const TypeP &arr, const std::string &typeName, SourceLoc loc) {
    TypeP tup = arr->elems[0];
    while (tup->kind == TypeKind::Array) tup = tup->elems[0];
    if (tup->kind != TypeKind::Tuple) throw NotSupported(loc, "a packed array must hold tuples");
    std::string def = "typedef struct {";
    for (size_t i = 0; i < tup->elems.size(); ++i) {
      const TypeP &c = tup->elems[i];
      if (c->kind == TypeKind::Scalar) {
        p.packedFields.push_back(c->scalar);
        p.packedFieldIsIndex.push_back(false);
        def += " " + cScalarType(c->scalar) + " f" + std::to_string(i) + ";";
      } else if (c->kind == TypeKind::Idx) {
        p.packedFields.push_back(indexBits == 64 ? ScalarKind::I64 : ScalarKind::I32);
        p.packedFieldIsIndex.push_back(true);
        def += " " + indexType() + " f" + std::to_string(i) + ";";
      } else {
        throw CompileError(loc, "packed tuple components must be scalars, found `" + types::str(c) + "`");
      }
    }
    def += " } " + typeName + ";";
    p.packedTypeName = typeName;
    abi.structTypedefs.push_back(def);
  }

  void addData(const TypeP &t, const std::string &name, int defParam, bool output, SourceLoc loc) {
    if (t->kind == TypeKind::DepPair) {
      AbiParam p;
      p.defParam = defParam;
      p.name = t->binder.name.empty() ? name + "_k" : t->binder.name;
      if (output) p.name = "out_" + p.name;
      if (t->pairOverNats) {
        p.role = output ? AbiParam::OutNats : AbiParam::Nats;
        p.ctype = output ? indexType() + " *" : "const " + indexType() + " *";
        p.isIndex = true;
      } else {
        p.role = output ? AbiParam::OutNat : AbiParam::Nat;
        p.ctype = output ? "int64_t *" : "int64_t";
      }
      p.path = {-1};  // the pair's first component
      abi.params.push_back(p);
      addData(t->elems[0], name, defParam, output, loc);
      return;
    }
    if (t->kind == TypeKind::Scalar || t->kind == TypeKind::Idx || t->kind == TypeKind::Tuple) {
      std::vector<std::pair<std::vector<int>, TypeP>> ls;
      leaves(t, {}, ls, loc);
      auto names = leafNames(output ? "out" : name, ls);
      for (size_t i = 0; i < ls.size(); ++i) {
        AbiParam p;
        p.defParam = defParam;
        p.path = ls[i].first;
        p.name = names[i];
        p.isIndex = ls[i].second->kind == TypeKind::Idx;
        p.elem = p.isIndex ? (indexBits == 64 ? ScalarKind::I64 : ScalarKind::I32) : ls[i].second->scalar;
        std::string ct = p.isIndex ? indexType() : cScalarType(p.elem);
        if (ls[i].second->kind == TypeKind::Array) throw NotSupported(loc, "packed arrays inside tuples");
        p.role = output ? AbiParam::OutBuffer : AbiParam::Scalar;
        p.ctype = output ? ct + " *" : ct;
        abi.params.push_back(p);
      }
      return;
    }
    if (t->kind != TypeKind::Array) throw NotSupported(loc, "the C ABI cannot pass `" + types::str(t) + "`");
    std::vector<std::pair<std::vector<int>, TypeP>> ls;
    leaves(t, {}, ls, loc);
    auto names = leafNames(output ? "out" : name, ls);
    for (size_t i = 0; i < ls.size(); ++i) {
      AbiParam p;
      p.defParam = defParam;
      p.path = ls[i].first;
      p.name = names[i];
      const TypeP &leaf = ls[i].second;
      if (leaf->kind == TypeKind::Array) {
        p.role = output ? AbiParam::OutPacked : AbiParam::Packed;
        std::string tn = ex.cname + "_" + (output ? std::string("out") : name) + "_t";
        packedLeaf(p, leaf, tn, loc);
        p.ctype = output ? tn + " *" : "const " + tn + " *";
      } else {
        p.isIndex = leaf->kind == TypeKind::Idx;
        p.elem = p.isIndex ? (indexBits == 64 ? ScalarKind::I64 : ScalarKind::I32) : leaf->scalar;
        std::string ct = p.isIndex ? indexType() : cScalarType(p.elem);
        p.role = output ? AbiParam::OutBuffer : AbiParam::Buffer;
        p.updated = !output && ex.updatesInPlace(defParam);
        p.ctype = output || p.updated ? ct + " *" : "const " + ct + " *";
      }
      abi.params.push_back(p);
    }
    if (const Export::View *v = output ? nullptr : ex.viewOf(defParam)) {
      AbiParam p;
      p.role = AbiParam::Stride;
      p.name = v->stride;
      p.ctype = "int64_t";
      p.defParam = defParam;
      abi.params.push_back(p);
    }
    if (checked && !output && countReadsData(t)) addCounts(t, name, defParam, ls, names);
  }

  /// --checked: the element counts of a data-dependent array input's buffers, one for all of
  /// them when they hold equally many (NAME_len), else one per buffer (BUFFER_len).
  void addCounts(const TypeP &t, const std::string &name, int defParam,
                 const std::vector<std::pair<std::vector<int>, TypeP>> &ls, const std::vector<std::string> &names) {
    auto add = [&](const std::string &n, std::vector<int> path) {
      AbiParam p;
      p.role = AbiParam::Count;
      p.name = n + "_len";
      p.ctype = "int64_t";
      p.defParam = defParam;
      p.path = std::move(path);
      abi.params.push_back(p);
    };
    if (buffersHoldEqualCounts(t)) {
      add(name, {});
      return;
    }
    for (size_t i = 0; i < ls.size(); ++i) add(names[i], ls[i].first);
  }

  void run() {
    const Def &d = *ex.def;
    for (size_t i = 0; i < d.params.size(); ++i) {
      const DefParam &dp = d.params[i];
      switch (dp.sort) {
        case DefParam::Nat: {
          if (ex.natArgs.count(dp.natVar.id)) break;  // fixed by the export: a constant, no parameter
          AbiParam p;
          p.role = AbiParam::Nat;
          p.name = dp.name;
          p.ctype = "int64_t";
          p.defParam = static_cast<int>(i);
          abi.params.push_back(p);
          break;
        }
        case DefParam::Nats: {
          AbiParam p;
          p.role = AbiParam::Nats;
          p.name = dp.name;
          p.ctype = "const " + indexType() + " *";
          p.isIndex = true;
          p.defParam = static_cast<int>(i);
          abi.params.push_back(p);
          break;
        }
        case DefParam::Data: break;
        case DefParam::Value: addData(inst(dp.value->type), dp.name, static_cast<int>(i), false, dp.loc); break;
      }
    }
    TypeP r = inst(d.result);
    abi.hasSizeFunction = r->kind == TypeKind::DepPair;
    if (ex.resultInto.empty()) addData(r, "out", -1, true, d.loc);  // else written in place
    dedupeNames();
  }

  /// Two dependent pairs may name their nats alike (both csr inputs bind `offs`): C needs
  /// distinct parameter names, so a repeated name gets its parameter's name as a prefix.
  void dedupeNames() {
    std::map<std::string, int> uses;
    for (const AbiParam &p : abi.params) uses[p.name]++;
    for (AbiParam &p : abi.params) {
      if (uses[p.name] < 2) continue;
      std::string owner = p.defParam >= 0 ? ex.def->params[p.defParam].name : "out";
      if (p.name.rfind(owner + "_", 0) != 0 && p.name.rfind("out_", 0) != 0) p.name = owner + "_" + p.name;
    }
  }
};

}  // namespace

Abi computeAbi(const Export &e, int indexBits, bool checked) {
  Builder b{e, indexBits, checked, {}};
  b.run();
  return b.abi;
}

std::string prototype(const Export &e, const Abi &abi, bool cuda, bool sizeFn) {
  std::string s = "int " + e.cname + (cuda ? "_cuda" : "") + (sizeFn ? "_size" : "") + "(";
  bool first = true;
  auto add = [&](const std::string &p) {
    s += (first ? "" : ", ") + p;
    first = false;
  };
  if (cuda) add("void *stream");
  for (const AbiParam &p : abi.params) {
    bool out = p.role == AbiParam::OutNat || p.role == AbiParam::OutNats || p.role == AbiParam::OutBuffer ||
               p.role == AbiParam::OutPacked;
    if (sizeFn && out) continue;
    std::string ct = p.ctype;
    add(ct + (ct.back() == '*' ? "" : " ") + p.name);
  }
  if (sizeFn) add("int64_t *sizes");
  return s + ")";
}

}  // namespace spl::tir
