/// \file RegisterTile.h: a register tile's sums kept in a small local array across the loop
/// that accumulates them (scalar replacement), so that LLVM holds them in registers.
///
/// Takes:      a statement; the loops `forall k { forall p1 { ... forall pn { T[x] = f(T[x]) } } }`
///             in it (the update may follow declarations of locals that do not read T) where
///             every p is unrolled completely (its unroll factor equals its
///             constant trip count: a full tile that `unroll` versioned), T is a temporary,
///             its index x does not mention k, and the update's only accesses to T are at x.
/// Gives:      each such loop as
///               alloc R: c1. ... .cn { forall p {R[p - lo] = T[x]}; forall k { forall p
///               {R[p - lo] = f(R[p - lo])} }; forall p {T[x] = R[p - lo]} }
///             with R of the tile's shape (c1 ... cn the trip counts): once the p loops are
///             unrolled, every access to R is at a constant offset of a local array, which LLVM's
///             SROA turns into registers. Without it the sums stay in T, and whether LLVM keeps
///             them in registers across k (LICM's promotion) depends on how their addresses
///             happen to be written (it did for one gemm and not for the same loops in another
///             module). Other loops are unchanged; new temporaries are appended to `tensors`.
/// Assumes:    the loop k runs its iterations in order, as the schedule left it (Serial).
#pragma once

#include <vector>

#include "cin/Cin.h"

namespace spl::cin {

StmtP promoteRegisterTiles(const StmtP &s, std::vector<TensorP> &tensors);

}  // namespace spl::cin
