; sigma_scan.ll: the runtime's device kernels for spl_cuda_sigma_prefix_i32, an exclusive
; prefix sum of n int32 lengths into n + 1 int64 offsets (Sigma precomputation for device
; inputs). Written as NVVM IR, not PTX, for two reasons: the build turns it into the PTX the
; runtime embeds (llc, runtime/CMakeLists.txt), and the CUDA emulator of the tests JITs the
; same file for the host, so the GPU tests run exactly this code.
;
; A reduce-then-scan over G <= 1024 segments of `seg` lengths each (seg a multiple of the block
; size), on one stream:
;   1. spl_rt_scan_reduce, G blocks (only when G > 1): block b sums lens[lo_b, hi_b) into
;      sums[b], scratch of the caller (hi_b = min(n, (b + 1) * seg)).
;   2. spl_rt_scan_write, G blocks: block b sums sums[0 .. b) itself (its carry: at most 1023
;      loads, cheaper than a launch between the two phases) and scans its segment a tile of
;      blockDim.x lengths at a time from that carry, writing out[lo_b + 1 .. hi_b]; block 0 also
;      writes out[0] = 0.
; No block waits on another, and a single segment (n up to seg, n = 0 too) is one launch.
;
; The block scan (@block_scan) is warp shuffles (shfl.sync.up on the two halves of an int64)
; plus one shared slot per warp; it needs blockDim.x a multiple of 32 and every thread of the
; block to call it. Every branch around it depends only on values uniform across the block.
; Negative lengths are not detected on the device; they enter the sum.
;
; ptx70/sm_52 (set in the build) so that any driver since CUDA 11 can JIT it.

target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@warp_totals = internal addrspace(3) global [32 x i64] undef, align 8

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)

; The sum of the value of lanes 0 .. own in this thread's warp; all 32 lanes must call it.
define internal i64 @warp_inclusive_scan(i64 %value, i32 %lane) #0 {
entry:
  br label %step

step:
  %x = phi i64 [ %value, %entry ], [ %next, %step ]
  %delta = phi i32 [ 1, %entry ], [ %delta.next, %step ]
  %lo = trunc i64 %x to i32
  %hi.wide = lshr i64 %x, 32
  %hi = trunc i64 %hi.wide to i32
  %lo.up = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %lo, i32 %delta, i32 0)
  %hi.up = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %hi, i32 %delta, i32 0)
  %lo.up.wide = zext i32 %lo.up to i64
  %hi.up.wide = zext i32 %hi.up to i64
  %hi.up.shifted = shl i64 %hi.up.wide, 32
  %up = or i64 %hi.up.shifted, %lo.up.wide
  ; Lanes below delta get their own value back from the shuffle; they add nothing.
  %has.left = icmp uge i32 %lane, %delta
  %addend = select i1 %has.left, i64 %up, i64 0
  %next = add i64 %x, %addend
  %delta.next = shl i32 %delta, 1
  %more = icmp ult i32 %delta.next, 32
  br i1 %more, label %step, label %done

done:
  ret i64 %next
}

; Inclusive scan across the block: { sum of threads 0 .. own, sum of the whole block }.
; Ends with a barrier, so that the next call may reuse @warp_totals.
define internal { i64, i64 } @block_scan(i64 %value) #0 {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %lane = and i32 %tid, 31
  %warp = lshr i32 %tid, 5
  %nwarps = lshr i32 %ntid, 5
  %in.warp = call i64 @warp_inclusive_scan(i64 %value, i32 %lane)
  %last.lane = icmp eq i32 %lane, 31
  br i1 %last.lane, label %store.warp.total, label %warp.totals.stored

store.warp.total:
  %warp.slot = getelementptr inbounds [32 x i64], ptr addrspace(3) @warp_totals, i32 0, i32 %warp
  store i64 %in.warp, ptr addrspace(3) %warp.slot, align 8
  br label %warp.totals.stored

warp.totals.stored:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %first.warp = icmp eq i32 %warp, 0
  br i1 %first.warp, label %scan.totals, label %totals.scanned

scan.totals:
  %named = icmp ult i32 %lane, %nwarps
  %lane.slot = getelementptr inbounds [32 x i64], ptr addrspace(3) @warp_totals, i32 0, i32 %lane
  br i1 %named, label %load.total, label %total.loaded

load.total:
  %loaded = load i64, ptr addrspace(3) %lane.slot, align 8
  br label %total.loaded

total.loaded:
  %total.of.lane = phi i64 [ %loaded, %load.total ], [ 0, %scan.totals ]
  %totals.before = call i64 @warp_inclusive_scan(i64 %total.of.lane, i32 %lane)
  br i1 %named, label %store.scanned.total, label %totals.scanned

store.scanned.total:
  store i64 %totals.before, ptr addrspace(3) %lane.slot, align 8
  br label %totals.scanned

totals.scanned:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %has.earlier.warps = icmp ugt i32 %warp, 0
  br i1 %has.earlier.warps, label %load.prefix, label %prefix.loaded

load.prefix:
  %earlier = sub i32 %warp, 1
  %earlier.slot = getelementptr inbounds [32 x i64], ptr addrspace(3) @warp_totals, i32 0, i32 %earlier
  %earlier.total = load i64, ptr addrspace(3) %earlier.slot, align 8
  br label %prefix.loaded

prefix.loaded:
  %prefix = phi i64 [ %earlier.total, %load.prefix ], [ 0, %totals.scanned ]
  %last.warp = sub i32 %nwarps, 1
  %block.slot = getelementptr inbounds [32 x i64], ptr addrspace(3) @warp_totals, i32 0, i32 %last.warp
  %block.total = load i64, ptr addrspace(3) %block.slot, align 8
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %inclusive = add i64 %in.warp, %prefix
  %pair = insertvalue { i64, i64 } undef, i64 %inclusive, 0
  %result = insertvalue { i64, i64 } %pair, i64 %block.total, 1
  ret { i64, i64 } %result
}

; lens[i] widened, or 0 at and past `end`.
define internal i64 @length_or_zero(ptr %lens, i64 %i, i64 %end) {
entry:
  %inside = icmp slt i64 %i, %end
  br i1 %inside, label %load, label %done

load:
  %slot = getelementptr inbounds i32, ptr %lens, i64 %i
  %len = load i32, ptr %slot, align 4
  %wide = sext i32 %len to i64
  br label %done

done:
  %value = phi i64 [ %wide, %load ], [ 0, %entry ]
  ret i64 %value
}

; Segment b of seg lengths: [lo, hi) with hi = min(n, lo + seg).
define internal { i64, i64 } @segment(i64 %n, i64 %seg) {
entry:
  %b32 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %b = zext i32 %b32 to i64
  %lo = mul i64 %b, %seg
  %lo.plus.seg = add i64 %lo, %seg
  %short = icmp slt i64 %n, %lo.plus.seg
  %hi = select i1 %short, i64 %n, i64 %lo.plus.seg
  %pair = insertvalue { i64, i64 } undef, i64 %lo, 0
  %result = insertvalue { i64, i64 } %pair, i64 %hi, 1
  ret { i64, i64 } %result
}

; Phase 1: sums[b] = lens[lo_b] + ... + lens[hi_b - 1].
define ptx_kernel void @spl_rt_scan_reduce(ptr %lens, i64 %n, i64 %seg, ptr %sums) {
entry:
  %tid32 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid32 = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = zext i32 %tid32 to i64
  %ntid = zext i32 %ntid32 to i64
  %bounds = call { i64, i64 } @segment(i64 %n, i64 %seg)
  %lo = extractvalue { i64, i64 } %bounds, 0
  %hi = extractvalue { i64, i64 } %bounds, 1
  %first = add i64 %lo, %tid
  br label %loop

loop:
  %i = phi i64 [ %first, %entry ], [ %i.next, %body ]
  %sum = phi i64 [ 0, %entry ], [ %sum.next, %body ]
  %inside = icmp slt i64 %i, %hi
  br i1 %inside, label %body, label %reduced

body:
  %slot = getelementptr inbounds i32, ptr %lens, i64 %i
  %len = load i32, ptr %slot, align 4
  %wide = sext i32 %len to i64
  %sum.next = add i64 %sum, %wide
  %i.next = add i64 %i, %ntid
  br label %loop

reduced:
  %scanned = call { i64, i64 } @block_scan(i64 %sum)
  %total = extractvalue { i64, i64 } %scanned, 1
  %thread0 = icmp eq i32 %tid32, 0
  br i1 %thread0, label %store, label %done

store:
  %b32 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %sum.slot = getelementptr inbounds i64, ptr %sums, i32 %b32
  store i64 %total, ptr %sum.slot, align 8
  br label %done

done:
  ret void
}

; Phase 2: block b's carry is sums[0] + ... + sums[b - 1] (threads striding over them, then a
; block scan's total); then out[i + 1] = carry + lens[lo_b] + ... + lens[i] for lo_b <= i < hi_b,
; one tile of blockDim.x lengths at a time; block 0 writes out[0] = 0. sums is not read by a
; single segment's block (b = 0).
define ptx_kernel void @spl_rt_scan_write(ptr %lens, i64 %n, i64 %seg, ptr %sums, ptr %out) {
entry:
  %tid32 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid32 = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b32 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %tid = zext i32 %tid32 to i64
  %ntid = zext i32 %ntid32 to i64
  %b = zext i32 %b32 to i64
  %bounds = call { i64, i64 } @segment(i64 %n, i64 %seg)
  %lo = extractvalue { i64, i64 } %bounds, 0
  %hi = extractvalue { i64, i64 } %bounds, 1
  br label %carry.loop

carry.loop:
  %t = phi i64 [ %tid, %entry ], [ %t.next, %carry.body ]
  %partial = phi i64 [ 0, %entry ], [ %partial.next, %carry.body ]
  %earlier = icmp slt i64 %t, %b
  br i1 %earlier, label %carry.body, label %carry.summed

carry.body:
  %sum.slot = getelementptr inbounds i64, ptr %sums, i64 %t
  %segment.sum = load i64, ptr %sum.slot, align 8
  %partial.next = add i64 %partial, %segment.sum
  %t.next = add i64 %t, %ntid
  br label %carry.loop

carry.summed:
  %carried = call { i64, i64 } @block_scan(i64 %partial)
  %start = extractvalue { i64, i64 } %carried, 1
  %first.thread = or i32 %b32, %tid32
  %writes.zero = icmp eq i32 %first.thread, 0
  br i1 %writes.zero, label %store.zero, label %tile

store.zero:
  store i64 0, ptr %out, align 8
  br label %tile

tile:
  %base = phi i64 [ %lo, %carry.summed ], [ %lo, %store.zero ], [ %base.next, %written ]
  %carry = phi i64 [ %start, %carry.summed ], [ %start, %store.zero ], [ %carry.next, %written ]
  %more = icmp slt i64 %base, %hi
  br i1 %more, label %scan, label %done

scan:
  %i = add i64 %base, %tid
  %len = call i64 @length_or_zero(ptr %lens, i64 %i, i64 %hi)
  %scanned = call { i64, i64 } @block_scan(i64 %len)
  %inclusive = extractvalue { i64, i64 } %scanned, 0
  %total = extractvalue { i64, i64 } %scanned, 1
  %writes = icmp slt i64 %i, %hi
  br i1 %writes, label %store, label %written

store:
  %value = add i64 %carry, %inclusive
  %i.plus.one = add i64 %i, 1
  %slot = getelementptr inbounds i64, ptr %out, i64 %i.plus.one
  store i64 %value, ptr %slot, align 8
  br label %written

written:
  %carry.next = add i64 %carry, %total
  %base.next = add i64 %base, %ntid
  br label %tile

done:
  ret void
}

; The two scans run full-mask shuffles and block barriers: every lane of a warp (every thread of
; a block) must reach the same one. `convergent` forbids the optimiser to make that depend on
; more values than the source does; without it, opt -O3 copied their calls into both arms of the
; thread-dependent branches before them (the old offsets phase's `t < G`), so lanes of one warp
; waited at different copies of one shuffle, and the scan hung on a device (issue 21).
attributes #0 = { convergent }
