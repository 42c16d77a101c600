/* cuda_kernels.cpp: the hand-written PTX of the runtime's own device kernels.
 *
 * spl_rt_sigma_prefix_i32 is an exclusive prefix sum for spl_cuda_sigma_prefix_i32. It favours
 * obvious correctness over speed: one block walks the input in tiles of blockDim.x elements;
 * each thread loads one length (0 past the end) widened to int64, the block runs a
 * Hillis-Steele inclusive scan in shared memory (log2(blockDim.x) steps, a barrier after the
 * reads and after the writes of each step), adds the running total of earlier tiles (`carry`)
 * and stores out[i + 1]. The tile total is read from the last shared slot before the barrier
 * that lets the next tile overwrite the buffer. Thread 0 writes out[0] = 0. All branches
 * around barriers depend only on uniform values (n, base, step, blockDim), and per-thread
 * conditions use predication, so every thread reaches every bar.sync.
 *
 * Negative lengths are not detected on the device (there is no cheap way to report them from
 * an asynchronous launch); they simply enter the sum.
 *
 * PTX ISA 7.0 and target sm_52 so that any driver since CUDA 11 can JIT it for its GPU; the
 * tests assemble it for sm_90 with ptxas.
 */
#include "cuda_kernels.h"

extern "C" const char spl_rt_scan_ptx[] = R"PTX(
.version 7.0
.target sm_52
.address_size 64

.visible .entry spl_rt_sigma_prefix_i32(
    .param .u64 param_lens,
    .param .u64 param_n,
    .param .u64 param_out)
{
    .reg .pred %p_loaded, %p_tile_end, %p_step_end, %p_has_left, %p_first;
    .reg .b32 %r_tid, %r_ntid, %r_slot, %r_left_slot, %r_last_slot, %r_step_bytes, %r_len;
    .reg .b64 %rd_lens, %rd_out, %rd_addr, %rd_n, %rd_base, %rd_i, %rd_value, %rd_left;
    .reg .b64 %rd_carry, %rd_total, %rd_tid, %rd_ntid, %rd_step;
    .shared .align 8 .b64 scan_buf[1024];

    ld.param.u64 %rd_lens, [param_lens];
    ld.param.u64 %rd_n, [param_n];
    ld.param.u64 %rd_out, [param_out];
    cvta.to.global.u64 %rd_lens, %rd_lens;
    cvta.to.global.u64 %rd_out, %rd_out;
    mov.u32 %r_tid, %tid.x;
    mov.u32 %r_ntid, %ntid.x;
    cvt.u64.u32 %rd_tid, %r_tid;
    cvt.u64.u32 %rd_ntid, %r_ntid;
    mov.u32 %r_slot, scan_buf;
    mad.lo.u32 %r_slot, %r_tid, 8, %r_slot;
    mov.u32 %r_last_slot, scan_buf;
    mad.lo.u32 %r_last_slot, %r_ntid, 8, %r_last_slot;
    sub.u32 %r_last_slot, %r_last_slot, 8;

    mov.u64 %rd_carry, 0;
    setp.eq.u32 %p_first, %r_tid, 0;
    @%p_first st.global.u64 [%rd_out], %rd_carry;
    mov.u64 %rd_base, 0;

TILE:
    setp.ge.s64 %p_tile_end, %rd_base, %rd_n;
    @%p_tile_end bra.uni DONE;
    add.s64 %rd_i, %rd_base, %rd_tid;
    setp.lt.s64 %p_loaded, %rd_i, %rd_n;
    mov.u64 %rd_value, 0;
    mad.lo.u64 %rd_addr, %rd_i, 4, %rd_lens;
    @%p_loaded ld.global.s32 %r_len, [%rd_addr];
    @%p_loaded cvt.s64.s32 %rd_value, %r_len;
    st.shared.u64 [%r_slot], %rd_value;
    bar.sync 0;

    mov.u64 %rd_step, 1;
STEP:
    setp.ge.u64 %p_step_end, %rd_step, %rd_ntid;
    @%p_step_end bra.uni STEP_DONE;
    setp.ge.u64 %p_has_left, %rd_tid, %rd_step;
    cvt.u32.u64 %r_step_bytes, %rd_step;
    shl.b32 %r_step_bytes, %r_step_bytes, 3;
    sub.u32 %r_left_slot, %r_slot, %r_step_bytes;
    mov.u64 %rd_left, 0;
    @%p_has_left ld.shared.u64 %rd_left, [%r_left_slot];
    bar.sync 0;
    add.s64 %rd_value, %rd_value, %rd_left;
    st.shared.u64 [%r_slot], %rd_value;
    bar.sync 0;
    shl.b64 %rd_step, %rd_step, 1;
    bra.uni STEP;
STEP_DONE:

    ld.shared.u64 %rd_total, [%r_last_slot];
    add.s64 %rd_value, %rd_value, %rd_carry;
    mad.lo.u64 %rd_addr, %rd_i, 8, %rd_out;
    @%p_loaded st.global.u64 [%rd_addr+8], %rd_value;
    add.s64 %rd_carry, %rd_carry, %rd_total;
    bar.sync 0;
    add.s64 %rd_base, %rd_base, %rd_ntid;
    bra.uni TILE;

DONE:
    ret;
}
)PTX";
