/// \file Abi.h: the C ABI of an export (LANGUAGE.md section 8), computed once from its type.
/// Parameters follow the def's declaration order, implicit ones included: a nat is int64_t; a
/// nats or an array of idx[_] is an index pointer (int32_t or int64_t with --index-bits=64); a
/// scalar is passed by value; a tuple by its components; an array of scalars by one pointer; an
/// array of tuples by one pointer per leaf component in tuple order (nested tuples flattened);
/// an array whose innermost tuple level is packed by one struct pointer; a dependent pair by
/// its nat/nats, then its data pointers. The result follows as output pointers (a scalar result
/// is a pointer to one element; a dependent-pair result gives its nat or nats first). Data
/// parameters add no C parameter. Under --checked, an array input whose element count depends
/// on run-time data (a CSR row's values: offs@n - offs@0) is followed by `int64_t NAME_len`, the
/// number of elements the caller's buffers hold, which the kernel checks before reading them.
/// An export's `with` adds a view's stride (`int64_t incx`) after its array's pointer, and
/// `result in y` drops the output pointers: y's pointer is no longer const.
#pragma once

#include <string>
#include <vector>

#include "tir/Tir.h"

namespace spl::tir {

/// One C parameter of an exported function.
struct AbiParam {
  enum Role {
    Nat,        // int64_t: a nat parameter, or the nat of a dependent-pair input
    Nats,       // index pointer: a nats parameter, or the nats of a dependent-pair input
    Scalar,     // a scalar (or a tuple component) passed by value
    Buffer,     // const T *: one leaf component of an array input
    Packed,     // const NAME_PARAM_t *: an array of packed tuples
    OutNat,     // int64_t *: the nat of a dependent-pair result
    OutNats,    // index pointer: the nats of a dependent-pair result
    OutBuffer,  // T *: one leaf component of the result (a scalar result too)
    OutPacked,  // NAME_out_t *
    Count,      // int64_t (--checked): the element count of the buffers of a data-dependent
                // array input: all its buffers (empty path) or the one leaf at `path`
    Stride,     // int64_t: the stride of a view (`with x: inc(incx)`), after its array's pointer
  } role;
  std::string name;      // C parameter name
  std::string ctype;     // C type text, e.g. "const float *"
  int defParam = -1;     // index into Def::params; -1 for the result
  std::vector<int> path; // tuple components from the parameter's type to this leaf
  ScalarKind elem = ScalarKind::F32;  // element type (Scalar/Buffer/Out*)
  bool isIndex = false;  // elements are idx[_] (use the index type)
  bool updated = false;  // Buffer: the result is written into it in place (`with result in x`)
  std::vector<ScalarKind> packedFields;  // Packed: struct fields in order
  std::vector<bool> packedFieldIsIndex;
  std::string packedTypeName;            // Packed: the typedef name
};

struct Abi {
  std::vector<AbiParam> params;  // inputs then outputs
  bool hasSizeFunction = false;  // a dependent-pair result: NAME_size exists
  std::vector<std::string> structTypedefs;  // packed struct typedefs for the header
};

/// Computes the ABI; throws NotSupported for types the C ABI cannot express yet. `checked`
/// (--checked) adds the Count parameters.
Abi computeAbi(const Export &e, int indexBits, bool checked = false);


/// The C prototype text, e.g. "int spl_sdot(int64_t n, const float *a, ...)". For cuda the
/// name gets "_cuda" and a leading `void *stream`; `sizeFn` gives the NAME_size variant.
std::string prototype(const Export &e, const Abi &abi, bool cuda, bool sizeFn);

std::string cScalarType(ScalarKind k);

}  // namespace spl::tir
