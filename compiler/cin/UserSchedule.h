/// \file UserSchedule.h: applies a `schedule` block's commands to a lowered kernel.
/// Takes:      a kernel as lowered (independent loops still marked Parallel), before the
///             default schedule of its target.
/// Gives:      the kernel transformed (split, reorder, fuse) and annotated (parallel kinds the
///             default schedule keeps, vectorise and unroll hints).
/// Fails:      each command that does not apply, with a located diagnostic naming the loop and
///             the dependence that forbids it; returns false then.
#pragma once

#include <set>
#include <string>

#include "cin/Cin.h"
#include "support/Diagnostics.h"
#include "tir/Tir.h"

namespace spl::cin {

/// Does the schedule block apply to this export on this target (named by its C name or its def)?
bool scheduleApplies(const tir::Schedule &s, const tir::Export &ex, bool cuda);

/// The `precompute(name)` arguments of the blocks that apply: the lowering acts on them
/// (LowerOptions::precompute), applyUserSchedule then checks each took effect.
std::set<std::string> precomputeNames(const tir::Program &p, const tir::Export &ex, bool cuda);

bool applyUserSchedule(Kernel &k, const tir::Schedule &s, Diagnostics &diags);

}  // namespace spl::cin
