/* sell.h: spl_sell_convert_* in its two steps, for a plan that looks at the padding before it
 * fills (runtime/src/plan.cpp): the window picked and its slices' widths (a sort of row lengths
 * per window, a fraction of the conversion), then the operands allocated and filled (by a
 * deadline, deadline.h). */
#pragma once

#include "deadline.h"
#include "spl_runtime.h"

#include <vector>

namespace spl_rt {

struct SellShape {
  int64_t lanes = 0, sigma = 0;
  std::vector<int64_t> widths; /* one per slice */
  int64_t slots = 0;           /* their sum: the operands store slots * lanes entries */
};

/* The window of the two (narrow, wide) that spl_sell_convert_* picks, and its slices' widths.
 * SPL_ERR_BAD_INPUT for bad sizes or offsets, SPL_ERR_ALLOC past int32 slots or without memory. */
int sell_shape(int64_t n, const int32_t *offs, int64_t lanes, int64_t narrow, int64_t wide, SellShape &shape);

/* The operands of `shape` (from sell_shape over the same offsets), allocated and filled; a
 * plan's fill gives up at `deadline` (kStoppedAtDeadline, nothing left allocated). */
template <typename T>
int sell_fill(int64_t n, const int32_t *offs, const int32_t *cols, const T *vals, const SellShape &shape,
              spl_sell_operands *out, const Deadline &deadline = Deadline::none());

} // namespace spl_rt
