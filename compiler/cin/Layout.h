/// \file Layout.h: where the elements of a tensor live in its buffers (LANGUAGE.md section 3).
/// A position-dependent array is stored flat: element i of `n..(i => E(i))` starts at
/// sum(k = 0 .. i) size(E(k)), one buffer per scalar leaf of the tuples (SoA) except below a
/// `packed` level, whose tuples share one interleaved buffer. These functions give those sizes
/// and offsets as Nats; the nat normaliser finds closed forms (CSR: offs@i - offs@0, lower
/// triangle: i*(i+1)/2) and leaves a Sum atom where there is none (LIL), which loopir/Flatten
/// turns into a precomputed prefix array.
#pragma once

#include <functional>
#include <vector>

#include "types/Nat.h"
#include "types/Type.h"

namespace spl::cin {

/// The buffers of a tensor type: one leaf path per buffer (tuple components below arrays; a
/// packed level is one leaf).
struct Leaf {
  std::vector<int> path;   // tuple components from the top of the type (empty for one leaf)
  TypeP type;              // the leaf's scalar / idx type, or the packed tuple
  bool packed = false;
};
std::vector<Leaf> leavesOf(const TypeP &t);

/// The leaf (buffer) an access with tuple path `path` reads, and the field inside a packed
/// tuple (-1 when not packed).
size_t leafIndexOf(const std::vector<Leaf> &leaves, const std::vector<int> &path, int &field);

/// How a Sigma over the positions of a level is formed: sum(b = 0 .. upTo) elemCount(b), where
/// the level has `len` positions. The default makes a Nat::sum (closed form or Sum atom);
/// loopir/Flatten passes one that replaces irreducible sums by a precomputed prefix array.
using SumFn = std::function<Nat(const NatVarId &b, const Nat &upTo, const Nat &elemCount, const Nat &len)>;

/// Number of elements of leaf `path` in a value of type t.
Nat leafCount(const TypeP &t, const std::vector<int> &path, const SumFn &sum = {});

/// Offset, in elements of leaf `path`, of the access t[indices].path.
Nat leafOffset(const TypeP &t, const std::vector<Nat> &indices, const std::vector<int> &path, const SumFn &sum = {});

/// How many entries of the nats `binder` a type reads (n + 1 for csr's offs@(i+1)).
Nat natsCount(const TypeP &body, int64_t binder);

}  // namespace spl::cin
