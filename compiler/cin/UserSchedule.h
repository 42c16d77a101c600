/// \file UserSchedule.h: applies a `schedule` block's commands to a lowered kernel.
/// Takes:      a kernel as lowered (independent loops still marked Parallel), before the
///             default schedule of its target.
/// Gives:      the kernel transformed (split, reorder, fuse) and annotated (parallel kinds the
///             default schedule keeps, vectorise and unroll hints).
/// Fails:      each command that does not apply, with a located diagnostic naming the loop and
///             the dependence that forbids it; returns false then.
#pragma once

#include "cin/Cin.h"
#include "support/Diagnostics.h"
#include "tir/Tir.h"

namespace spl::cin {

bool applyUserSchedule(Kernel &k, const tir::Schedule &s, Diagnostics &diags);

}  // namespace spl::cin
