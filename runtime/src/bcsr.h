/* bcsr.h: what a plan calls of bcsr.cpp (plan.cpp): a sampled count of a CSR matrix's b x b
 * blocks, from which it estimates the BCSR copy's fill before making it, and the conversion it then
 * makes, which gives up at planning's deadline.
 *
 * Not installed; the public entry points (spl_csr_blocks, spl_bcsr_convert_*) are in
 * spl_runtime.h.
 */
#ifndef SPL_RT_BCSR_H
#define SPL_RT_BCSR_H

#include <cstdint>

#include "deadline.h"
#include "export.h"

namespace spl_rt {

/* The blocks of size b holding the entries of one run of block rows in `stride` (all of them
 * for stride 1), and the entries those block rows hold: blocks * b * b / entries is the fill a
 * conversion would have, estimated from the sample. With give_up_fill > 0, a cheaper lower
 * bound is taken first (each row meets a block once when its columns are in order), and when
 * it already passes give_up_fill, blocks is that bound and at_least is set. Assumes CSR arrays
 * that spl_rt::valid_csr accepts (a plan's inspection checked them: that check is a pass over
 * the offsets, which cost more than the sample itself); checks b and stride. */
int sample_blocks(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t b, int64_t stride,
                  double give_up_fill, int64_t &blocks, int64_t &entries, bool &at_least);

/* spl_bcsr_convert_* that gives up at `deadline` (kStoppedAtDeadline, nothing left allocated):
 * a plan's conversion. */
template <typename T>
int convert_bcsr(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, const T *vals, int64_t b,
                 const Deadline &deadline, spl_bcsr_operands *out);

} // namespace spl_rt

#endif /* SPL_RT_BCSR_H */
