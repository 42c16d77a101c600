/// \file CheckStorage.cpp: an export's `with` list (docs/language.md, "How an export's arrays
/// are stored"). Takes the parsed `x: inc(incx)`, `A: colmajor(lda)` and `result in y` of one export
/// and its checked def; gives tir::Export::views and ::resultInto, or an error at the word that
/// is wrong. A view applies to an array parameter of dense levels over scalars (inc: one level,
/// colmajor/rowmajor: two); its stride becomes an int64_t C parameter, so its name must be a C
/// name that no other parameter of the export takes. `result in` names array parameters, one
/// per leaf of the result (an array of scalars, or a tuple of them, or an array of tuples),
/// each of the leaf's type: the kernel then writes its result there, in place, and the lowering
/// (cin/InPlace.h) proves that every element is read before it is overwritten.
#include <set>

#include "check/CheckerImpl.h"
#include "check/CNames.h"

namespace spl::check {
namespace {

/// Dense levels over one scalar (or a data type variable): `n.T` has 1, `n.m.T` has 2; any
/// other shape (tuples, position-dependent arrays, packed, dependent pairs) has none (-1).
int denseScalarLevels(const TypeP &t) {
  int levels = 0;
  const Type *cur = t.get();
  while (cur->kind == TypeKind::Array) {
    if (cur->packed || types::isDependent(*cur)) return -1;
    ++levels;
    cur = cur->elems[0].get();
  }
  bool scalar = (cur->kind == TypeKind::Scalar && cur->scalar != ScalarKind::Bool) || cur->kind == TypeKind::Var;
  return scalar ? levels : -1;
}

/// The leaves of a result written in place, each an array type: an array of scalars is one; a
/// tuple is its components' leaves; an array of tuples is, per component, an array of it.
/// nullopt where a leaf is not an array of dense levels.
std::optional<std::vector<TypeP>> inPlaceLeaves(const TypeP &t) {
  if (t->kind == TypeKind::Tuple) {
    std::vector<TypeP> all;
    for (const TypeP &e : t->elems) {
      auto part = inPlaceLeaves(e);
      if (!part) return std::nullopt;
      all.insert(all.end(), part->begin(), part->end());
    }
    return all;
  }
  if (t->kind == TypeKind::Array && !t->packed && !types::isDependent(*t) && t->elems[0]->kind == TypeKind::Tuple) {
    std::vector<TypeP> all;
    for (const TypeP &e : t->elems[0]->elems) {
      auto part = inPlaceLeaves(types::array(t->len, e));
      if (!part) return std::nullopt;
      all.insert(all.end(), part->begin(), part->end());
    }
    return all;
  }
  if (denseScalarLevels(t) < 1) return std::nullopt;
  return std::vector<TypeP>{t};
}

}  // namespace

void Checker::checkExportStorage(const ast::ExportDecl &e, const tir::Def &def, tir::Export &ex) {
  auto paramNamed = [&](const std::string &name) -> int {
    for (size_t i = 0; i < def.params.size(); ++i)
      if (def.params[i].name == name) return static_cast<int>(i);
    return -1;
  };
  auto arrayParam = [&](const std::string &name, SourceLoc loc, const char *use) -> int {
    int i = paramNamed(name);
    if (i < 0) fail(loc, "'" + e.def + "' has no parameter named '" + name + "'");
    const tir::DefParam &p = def.params[static_cast<size_t>(i)];
    if (p.sort != tir::DefParam::Value || p.value->type->kind != TypeKind::Array)
      fail(loc, "'" + name + "' is not an array parameter, so it cannot " + use);
    return i;
  };

  std::set<std::string> cnames;  // the C parameters the export has already
  for (const tir::DefParam &p : def.params)
    if (p.sort != tir::DefParam::Data) cnames.insert(p.name);
  for (const ast::ExportView &v : e.views) {
    int pi = arrayParam(v.param, v.loc, "have a view");
    if (ex.viewOf(pi)) fail(v.loc, "the export gives '" + v.param + "' two views");
    tir::Export::View view;
    view.defParam = pi;
    view.stride = v.stride;
    view.loc = v.loc;
    int levels = 1;
    if (v.view == "inc") {
      view.kind = tir::Export::View::Increment;
    } else if (v.view == "colmajor" || v.view == "rowmajor") {
      view.kind = v.view == "colmajor" ? tir::Export::View::ColMajor : tir::Export::View::RowMajor;
      levels = 2;
    } else {
      fail(v.viewLoc, "unknown view '" + v.view + "' (the views are inc(STRIDE) for a vector, colmajor(LD) and "
                                                   "rowmajor(LD) for a matrix)");
    }
    const TypeP &t = def.params[static_cast<size_t>(pi)].value->type;
    if (denseScalarLevels(t) != levels)
      fail(v.viewLoc, fmt::format("{}(...) needs {} of scalars, but '{}' is `{}`", v.view,
                                  levels == 1 ? "a vector n.T" : "a matrix n.m.T", v.param, types::str(t)));
    if (std::optional<std::string> why = types::whyNotCName(v.stride))
      fail(v.strideLoc, "cannot name a stride '" + v.stride + "': " + *why);
    if (!cnames.insert(v.stride).second)
      fail(v.strideLoc, "the stride '" + v.stride + "' has the name of another parameter of the export");
    ex.views.push_back(view);
  }

  if (e.resultIn.empty()) return;
  std::optional<std::vector<TypeP>> leaves = inPlaceLeaves(def.result);
  if (!leaves)
    fail(e.resultInLoc, "'" + e.def + "' returns `" + types::str(def.result) +
                            "`: only arrays of scalars (or tuples of them) can be written into a parameter in place");
  if (leaves->size() != e.resultIn.size())
    fail(e.resultInLoc, fmt::format("the result of '{}' has {} part{} (`{}`), but 'result in' names {}", e.def,
                                    leaves->size(), leaves->size() == 1 ? "" : "s", types::str(def.result),
                                    e.resultIn.size()));
  for (size_t k = 0; k < e.resultIn.size(); ++k) {
    const ast::ExportTarget &r = e.resultIn[k];
    int pi = arrayParam(r.name, r.loc, "take the result");
    if (ex.updatesInPlace(pi)) fail(r.loc, "'" + r.name + "' is named twice in 'result in'");
    const TypeP &pt = def.params[static_cast<size_t>(pi)].value->type;
    if (!types::equal(pt, (*leaves)[k]))
      fail(r.loc, fmt::format("'{}' is `{}`, but the {}result it would hold is `{}`", r.name, types::str(pt),
                              leaves->size() == 1 ? "" : fmt::format("part {} of the ", k), types::str((*leaves)[k])));
    ex.resultInto.push_back(pi);
  }
}

}  // namespace spl::check
