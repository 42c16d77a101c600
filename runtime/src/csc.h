/* csc.h: what a plan calls of csc.cpp (plan.cpp, for y = A^T x): the transposed copy, made by a
 * deadline (deadline.h). Not installed; the public entry points (spl_csc_convert_*) are in
 * spl_runtime.h. */
#ifndef SPL_RT_CSC_H
#define SPL_RT_CSC_H

#include <cstdint>

#include "deadline.h"
#include "export.h"

namespace spl_rt {

/* spl_csc_convert_* that gives up at `deadline` (kStoppedAtDeadline, nothing left allocated). */
template <typename T>
int convert_csc(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, const Deadline &deadline,
                spl_csc_operands *out);

} // namespace spl_rt

#endif /* SPL_RT_CSC_H */
