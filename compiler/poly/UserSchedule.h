/// \file UserSchedule.h: applies a `schedule` block's commands to a lowered kernel.
/// Takes:      a CIN kernel as lowered (independent loops still marked Parallel), before the
///             default schedule of its target (cin/Schedule.h), and the block that applies to
///             it (cin::scheduleApplies).
/// Gives:      the kernel transformed (split, reorder, tile, fuse, pos) and annotated (parallel
///             kinds the default schedule keeps, vectorise and unroll hints, GPU row knobs).
///             Each command is legal by the polyhedral model of the kernel as it stands when
///             the command applies (poly/PolyModel, poly/Dependences): the schedules live in
///             poly because their legality is polyhedral; cin only lowers and knows nothing of
///             poly.
/// Fails:      each command that does not apply, with a located diagnostic naming the loop and
///             the dependence that forbids it; returns false then.
#pragma once

#include <functional>

#include "cin/Cin.h"
#include "support/Diagnostics.h"
#include "tir/Tir.h"

namespace spl::poly {

/// Applies the block's commands in order; `afterEach` (if set) sees the kernel after each
/// command that applied (splc --verify-each verifies it there). `cpuVectorBits` (the CPU
/// target's vector registers' width, codegen::cpuVectors; 0 for a GPU kernel or where not known)
/// sizes the work from which privatize's parts run on threads (poly::minPrivateWork).
bool applyUserSchedule(cin::Kernel &k, const tir::Schedule &s, Diagnostics &diags, int cpuVectorBits = 0,
                       const std::function<void(const cin::Kernel &, const tir::CommandBase &)> &afterEach = {});

}  // namespace spl::poly
