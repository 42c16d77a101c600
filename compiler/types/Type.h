/// \file Type.h: data types of SPL (LANGUAGE.md section 3) and function types of lambdas.
///
/// One node kind per type former. Arrays carry a binder: `n.T` is an Array whose binder does
/// not occur in its element type, so `n.T` and `n..(i => T)` are the same type, as the contract
/// requires. Packed arrays (`packed n.(T, U)`) are typed exactly like their unpacked form; the
/// flag only changes the layout (one interleaved buffer). Dependent pairs bind a nat or a nats.
///
/// Unification variables ("metas") stand for types not known yet: a Meta with numeric == Int or
/// Float is the type of a numeric literal (defaults to i32 / f32 at the end of a definition).
/// Rigid type variables (`{T: data}`) are opaque; `numeric` ones allow arithmetic.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "types/Nat.h"

namespace spl {

enum class ScalarKind { F32, F64, I32, I64, Bool };
const char *scalarName(ScalarKind k);
std::optional<ScalarKind> scalarByName(const std::string &name);
inline bool isFloat(ScalarKind k) { return k == ScalarKind::F32 || k == ScalarKind::F64; }
inline bool isInteger(ScalarKind k) { return k == ScalarKind::I32 || k == ScalarKind::I64; }

struct Type;
using TypeP = std::shared_ptr<const Type>;

enum class TypeKind { Scalar, Idx, Array, Tuple, DepPair, Var, Meta, Fun };

/// A function parameter: a value of a type, or a nat position (map's `i => x => ...`).
struct FunParam {
  bool isNat = false;
  NatVarId natVar;  // when isNat: the bound position variable (the result may mention it)
  TypeP type;       // when !isNat
};

struct Type {
  TypeKind kind = TypeKind::Scalar;
  ScalarKind scalar = ScalarKind::F32;  // Scalar
  Nat len;                              // Idx: the bound; Array: the length
  NatVarId binder;                      // Array: position variable; DepPair: the bound nat/nats
  bool pairOverNats = false;            // DepPair
  bool packed = false;                  // Array
  std::vector<TypeP> elems;             // Array: {elem}; Tuple: components; DepPair: {body};
                                        // Fun: {result}
  std::vector<FunParam> params;         // Fun
  std::string name;                     // Var: the user's name; Meta: display name
  int64_t id = 0;                       // Var, Meta: identity
  enum Numeric { NotNumeric, AnyNumeric, IntLiteral, FloatLiteral } numeric = NotNumeric;  // Var, Meta
};

namespace types {

TypeP scalar(ScalarKind k);
TypeP idx(const Nat &bound);
/// An array of `len` elements; `binder` may occur in `elem` (position-dependent array).
TypeP array(const Nat &len, const NatVarId &binder, TypeP elem, bool packed = false);
/// A plain array `len.elem` (a fresh unused binder).
TypeP array(const Nat &len, TypeP elem, bool packed = false);
TypeP tuple(std::vector<TypeP> elems);
TypeP depPair(const NatVarId &binder, bool overNats, TypeP body);
TypeP var(const std::string &name, int64_t id, Type::Numeric numeric);
TypeP meta(int64_t id, Type::Numeric numeric, const std::string &name = "");
TypeP fun(std::vector<FunParam> params, TypeP result);

/// Does the array's element type depend on its position?
bool isDependent(const Type &arrayType);
/// Substitutes nat variables (and nats arrays) everywhere in a type, renaming binders that
/// would capture.
TypeP substitute(const TypeP &t, const NatSubst &s);
/// Element type of an array at a given position: elem[binder := pos].
TypeP elementAt(const Type &arrayType, const Nat &pos);
/// Does any nat in the type mention id (free)?
bool mentions(const TypeP &t, int64_t id);
/// Structural equality up to alpha-renaming of binders and nat normal forms (no metas solved).
bool equal(const TypeP &a, const TypeP &b);
/// Source-syntax text: `n..(i => (offs@(i + 1) - offs@i).(f32, idx[m]))`.
std::string str(const TypeP &t);

}  // namespace types
}  // namespace spl
