/* inspect.h: the matrix inspection behind spl_csr_inspect, with the columns read in a sample of
 * row chunks (a plan's inspection: its choice reads the row lengths, exact here, and reports the
 * columns' bandwidth and scattered share, estimated from the sample). */
#pragma once

#include "spl_runtime.h"

namespace spl_rt {

/* spl_csr_inspect, reading the columns of every column_stride-th chunk of rows (1: all of them;
 * the chunks, of about equal work, depend on the matrix only). With a stride above 1, bandwidth
 * is the largest distance from the diagonal in the chunks read and scattered their share. */
int inspect_csr(int64_t n, int64_t m, const int32_t *offs, const int32_t *cols, int64_t column_stride,
                spl_csr_profile *out);

/* The last-level cache and the L2 (per core) in bytes, as sysconf or sysfs tell; 0 when they do
 * not. */
int64_t last_level_cache();
int64_t l2_cache();

} // namespace spl_rt
