/// \file Levels.cpp: reads the index levels of a tensor type (see Levels.h).
#include "check/Levels.h"

namespace spl {

std::optional<TensorShape> tensorShape(const TypeP &t0, std::string &why) {
  TensorShape s;
  TypeP t = t0;
  if (t->kind == TypeKind::DepPair) t = t->elems[0];
  for (int guard = 0; guard < 64; ++guard) {
    switch (t->kind) {
      case TypeKind::Scalar:
        if (t->scalar == ScalarKind::Bool) {
          why = "bool values cannot take part in index notation";
          return std::nullopt;
        }
        s.value = t;
        return s;
      case TypeKind::Var:
        s.value = t;
        return s;
      case TypeKind::Array: {
        const TypeP &e = t->elems[0];
        if (e->kind == TypeKind::Tuple) {
          TypeP value;
          std::vector<Nat> coords;
          for (const TypeP &c : e->elems) {
            if (c->kind == TypeKind::Idx) {
              coords.push_back(c->len);
            } else if (value) {
              why = "a tuple level with two value components `" + types::str(e) + "`";
              return std::nullopt;
            } else {
              value = c;
            }
          }
          if (coords.empty()) {
            why = "a tuple of values `" + types::str(e) + "` is not a tensor level";
            return std::nullopt;
          }
          if (!value) {
            why = "a tuple level without a value component `" + types::str(e) + "`";
            return std::nullopt;
          }
          for (const Nat &c : coords) s.indices.push_back(IndexLevel{c});
          t = value;
        } else {
          s.indices.push_back(IndexLevel{t->len});
          t = e;
        }
        break;
      }
      default:
        why = "`" + types::str(t) + "` is not a tensor type";
        return std::nullopt;
    }
  }
  why = "too many levels";
  return std::nullopt;
}

}  // namespace spl
