/// \file Flatten.h: concrete index notation -> loop IR.
/// Takes:      a scheduled cin::Kernel, for the CPU or for CUDA (its GPU-level foralls become
///             grid loops, which loopir's GPU passes and the CUDA back end map to kernels).
/// Gives:      a loopir::Function: each tensor becomes one buffer per leaf (a C pointer
///             parameter or a temporary), each access a load or store at the element offset
///             its layout gives (cin/Layout), each Nat integer arithmetic (rational
///             coefficients through an exact division, floor division by constants, loads for
///             lookups).
/// Guarantees: a Sigma with a closed form becomes that closed form (CSR: offs@i - offs@0); an
///             irreducible Sigma over a level whose lengths are loop-invariant becomes one
///             prefix array computed once per call at function entry (the runtime's
///             spl_sigma_prefix for a plain length array, as LIL needs) and read by a load; any
///             other Sigma is summed by a loop where it is used.
#pragma once

#include "cin/Cin.h"
#include "loopir/LoopIr.h"

namespace spl::loopir {

Function flatten(const cin::Kernel &k, int indexBits);

}  // namespace spl::loopir
