/// \file Verify.h: the CIN verifier.
/// Takes:      a cin::Kernel, as lowered, after a user schedule, after the default schedule or
///             after isl's regeneration of its loops.
/// Gives:      the first broken invariant, as text (empty when none): every local used or set is
///             declared in an enclosing block or is the variable of an enclosing forall; every
///             tensor accessed, written or allocated is the kernel's (a parameter or an
///             allocation around the use); an access gives at most one index per array level
///             of its tensor and a tuple path that exists; assignments write outputs and
///             temporaries, never inputs; conditions are bool; comparisons give bool and
///             arithmetic, min and max have operands of one type.
/// Fails:      verifyAfter throws InternalError naming the stage (the driver runs it after
///             each stage that produces CIN, always).
#pragma once

#include <string>

#include "cin/Cin.h"

namespace spl::cin {

std::string verify(const Kernel &k);

void verifyAfter(const Kernel &k, const char *stage);

}  // namespace spl::cin
