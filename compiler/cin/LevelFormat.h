/// \file LevelFormat.h: level formats, taco's abstraction of how one level of a tensor is
/// stored (Chou, Kjolstad and Amarasinghe, OOPSLA'18; Kjolstad's thesis, chapter 5), recognised
/// from SPL types (LANGUAGE.md section 7) instead of being declared.
///
/// Takes: the array type of one level of a tensor type (an operand of einsum, a kernel
/// parameter, a sparse result).
/// Gives: the level's format: its properties (full, ordered, unique, has locate) and the
/// capabilities that the lowering of index notation uses without knowing which format it has:
///  - iterate: emit the loop over the level's entries below a parent position, binding each
///    entry's coordinates (by coordinate for dense levels, by position for the others, whose
///    coordinates are read from the idx components of the entries);
///  - locate: the position of given coordinates, for formats with random access;
///  - append: assembly of a result level (its edges per parent position, then the coordinates
///    of each appended entry).
/// A format is a class here plus one line in the registry (LevelFormat.cpp); the lowering
/// (LowerEinsum.cpp) and the code generator are not touched. The registry is tried in order,
/// so a new format placed before a general one refines it (tests/unit/LevelFormatTest.cpp
/// registers one).
///
/// The built-in formats and the types they come from:
///   dense        `n.T`, `n..(i => T)`                      coordinate = position
///   compressed   rows whose length is data dependent:     CSR `(offs@(i+1) - offs@i).(T, idx[m])`,
///                LIL `toNat(lens@i).(T, idx[m])`, and a top-level list of (value, idx) entries
///   padded       rows of one fixed width below a dense level: ELL `n.w.(T, idx[m])` (padding
///                slots hold a valid coordinate and value zero)
///   singleton    entries carrying several coordinates: COO `k.(T, idx[n], idx[m])` (taco's
///                compressed(non-unique) + singleton pair, held by one level here)
/// BCSR is dense + compressed whose value is dense `b.c.T`, i.e. two more dense levels.
/// DIA has no single type linking offsets and diagonals (LANGUAGE.md 7); it is a `map` program.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cin/Cin.h"

namespace spl::cin {

namespace lower {
class Lowerer;
}

/// Where an iteration stands inside a stored tensor: the indices into its nested arrays and
/// the tuple components selected so far, and the type found there (a level's array type when
/// it is handed to that level).
struct LevelPosition {
  TensorP tensor;
  TypeP type;
  std::vector<Nat> prefix;
  std::vector<int> leaf;
};

struct LevelProperties {
  bool full = false;       // every coordinate of the range is stored
  bool ordered = false;    // coordinates ascend with the position
  bool unique = false;     // no coordinate is stored twice below one parent
  bool hasLocate = false;  // random access to a coordinate
  bool padded = false;     // stored entries may be padding (value zero, valid coordinate)
};

class LevelFormat {
 public:
  virtual ~LevelFormat() = default;
  virtual std::string name() const = 0;
  /// Does `levelType` (an array type) have this format? `depth` counts the levels above it in
  /// the same tensor (0: the outermost).
  virtual bool matches(const Type &levelType, int depth) const = 0;
  virtual LevelProperties properties() const = 0;
  /// How many coordinates (einsum indices) one entry of the level binds.
  virtual int coordinateCount(const Type &levelType) const = 0;
  /// The type of what an entry holds below the level (its value part), as written in the type
  /// (binders of dependent arrays left symbolic): the next level's shape.
  virtual TypeP childShape(const Type &levelType) const = 0;

  using IterateBody = std::function<void(const LevelPosition &child, const std::vector<Nat> &coordinates)>;
  /// Emits the loop over the entries of the level at `at` (`loopName` names its index, `kind`
  /// its schedule), calling `body` inside it with the entry's child position and coordinates.
  virtual void iterate(lower::Lowerer &L, const LevelPosition &at, const std::string &loopName, ForallKind kind,
                       const IterateBody &body) const = 0;
  /// The child position at `coordinates` (only when properties().hasLocate).
  virtual LevelPosition locate(const LevelPosition &at, const std::vector<Nat> &coordinates) const;
  /// Assembly: records that the parent at `parent` has `count` entries, in the level's
  /// position array `pos` (pos[parent + 1] = pos[parent] + count). Dense levels store nothing.
  virtual void appendEdges(lower::Lowerer &L, const TensorP &pos, const Nat &parent, const ExprP &count) const;
  /// Assembly: writes the coordinates of the entry at `entry` (a position in the result).
  virtual void appendCoordinates(lower::Lowerer &L, const LevelPosition &entry, const std::vector<ExprP> &coordinates) const;
};

using LevelFormatP = std::shared_ptr<const LevelFormat>;

/// One level of a tensor: its format and its array type as written.
struct Level {
  LevelFormatP format;
  TypeP type;
};

/// The format of one level, or null when `levelType` is not an array.
LevelFormatP recognizeLevel(const Type &levelType, int depth);
/// The levels of a tensor type from the outside in (a dependent pair is read through its
/// body). Stops at the scalar values.
std::vector<Level> levelsOf(const TypeP &tensorType);
/// "dense, compressed" for a CSR type.
std::string formatNames(const TypeP &tensorType);

/// Registers a format ahead of those registered before it (the built-ins come last).
void registerLevelFormat(LevelFormatP f);
/// Removes a format registered with registerLevelFormat (tests).
void unregisterLevelFormat(const LevelFormatP &f);

/// Is `t` a level of positions: an array whose elements are tuples with idx components?
bool isPositionsLevel(const Type &t);

}  // namespace spl::cin
