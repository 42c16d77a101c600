/// \file Levels.h: the index levels of a tensor type, as einsum sees them (LANGUAGE.md 6-7).
/// A type is read from the outside in: a dependent pair is opened (its nats stays symbolic);
/// an array whose elements are tuples holding `idx[_]` components is a level of positions only
/// (COO lists, CSR rows, ELL slots) followed by one coordinate level per idx component; any
/// other array is a dense level with one index; the non-idx tuple component (the value) is read
/// on in the same way, so BCSR `(b.b.f32, idx[mb])` gives two more dense levels.
/// cin/LevelFormat.h gives each level its format (dense, compressed, padded, singleton) from the
/// same walk.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "types/Type.h"

namespace spl {

struct IndexLevel {
  Nat extent;  // the range of the index
};

struct TensorShape {
  std::vector<IndexLevel> indices;
  TypeP value;  // the scalar type of the values
};

/// The index levels of a tensor type, or nullopt with `why` filled.
std::optional<TensorShape> tensorShape(const TypeP &t, std::string &why);

}  // namespace spl
