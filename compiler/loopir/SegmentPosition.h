/// \file SegmentPosition.h: where a compressed level's segment lives in memory.
/// Takes:      loop IR from loopir/Flatten.
/// Gives:      the recogniser of a segment position, the element offset at which iteration k
///             of the reduction over row i of a compressed level reads its values,
///
///               offs[i] - offs[0] + k        (Flatten writes (i64(offs[i]) + (-1 * i64(offs[0]))) + k)
///               sigma[i] + k                 (a LIL row: sigma is the Sigma prefix of the lengths)
///
///             and the rewrite of a loop body in terms of that position alone. A body that reads
///             its segment only through positions (CSR SpMV's vals and cols) computes the same
///             value for a nonzero whatever row and iteration reach it, so a GPU kernel may read
///             the nonzeros of a range of positions without knowing their rows first (the
///             merge-path row kernels of codegen/CodeGenCuda.cpp).
/// Assumes:    offsets are monotone (a segment position lies in [0, offs[n] - offs[0])).
#pragma once

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// Is `e` offs[row] - offs[0] + iter (the loads widened to i64 or not, in either order)? With
/// `fromZero` (offsets known to start at 0: a LIL row's Sigma prefix), offs[row] + iter.
bool isSegmentPosition(const ExprP &e, int offs, bool fromZero, int row, int iter);

/// `e` with every segment position of (offs, row, iter) replaced by the variable `position`.
ExprP withSegmentPosition(const ExprP &e, int offs, bool fromZero, int row, int iter, int position);
StmtP withSegmentPosition(const StmtP &s, int offs, bool fromZero, int row, int iter, int position);

}  // namespace spl::loopir
