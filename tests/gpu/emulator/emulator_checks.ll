; emulator_checks.ll: kernels that test the CUDA emulator itself (emulator_test.cpp): what it
; must report and what it must vary. Assembled with llvm-as at build time.
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)

; Lane 0's value for the whole warp, through a helper that shuffles with the full mask. Not
; marked convergent, like the runtime scan's helpers were: the optimiser may copy its calls.
define internal i32 @broadcast(i32 %v) {
  %r = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %v, i32 0, i32 31)
  ret i32 %r
}

; Even and odd lanes call the helper from two places (what opt -O3 made of the runtime scan's
; thread-dependent branches): on a GPU, lanes waiting at different copies of one shuffle hang.
; The emulator must report the divergence, although the shuffle inside is one instruction.
define ptx_kernel void @divergent_helper(ptr %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %odd = and i32 %t, 1
  %even = icmp eq i32 %odd, 0
  br i1 %even, label %left, label %right
left:
  %a = call i32 @broadcast(i32 %t)
  br label %join
right:
  %b = call i32 @broadcast(i32 %t)
  br label %join
join:
  %r = phi i32 [ %a, %left ], [ %b, %right ]
  %p = getelementptr i32, ptr %out, i32 %t
  store i32 %r, ptr %p
  ret void
}

; Every lane calls the helper from one place: fine, every lane gets lane 0's value.
define ptx_kernel void @uniform_helper(ptr %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %v = add i32 %t, 7
  %r = call i32 @broadcast(i32 %v)
  %p = getelementptr i32, ptr %out, i32 %t
  store i32 %r, ptr %p
  ret void
}

; Each block takes a ticket and records its index there: out[ticket] = blockIdx.x, the order in
; which the blocks ran.
define ptx_kernel void @block_order(ptr %counter, ptr %out) {
entry:
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ticket = atomicrmw add ptr %counter, i32 1 seq_cst
  %p = getelementptr i32, ptr %out, i32 %ticket
  store i32 %b, ptr %p
  ret void
}

; Block 0 waits until block 1 has set a flag: it assumes both blocks run at once, which a GPU
; does not promise. The emulator runs block 0 first (forward order) and must report the wait.
define ptx_kernel void @block_waits_for_another(ptr %flag) {
entry:
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %first = icmp eq i32 %b, 0
  br i1 %first, label %wait, label %set
wait:
  %v = load volatile i32, ptr %flag
  %unset = icmp eq i32 %v, 0
  br i1 %unset, label %wait, label %done
set:
  store volatile i32 1, ptr %flag
  br label %done
done:
  ret void
}

; Each thread takes a ticket and records its index there: out[ticket] = threadIdx.x, the order in
; which the threads of the block ran.
define ptx_kernel void @thread_order(ptr %counter, ptr %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ticket = atomicrmw add ptr %counter, i32 1 seq_cst
  %p = getelementptr i32, ptr %out, i32 %ticket
  store i32 %t, ptr %p
  ret void
}

; Warp-synchronous code without the sync: lane t writes cell t, then reads cell t + 1 (a
; neighbour's write) with no shuffle or barrier between. It works only if the warp's lanes run in
; lockstep, which a GPU since sm_70 does not promise; the emulator's lane orders must expose it.
define ptx_kernel void @reads_a_neighbour_without_sync(ptr %cells, ptr %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %mine = getelementptr i32, ptr %cells, i32 %t
  store volatile i32 %t, ptr %mine
  %n = add i32 %t, 1
  %next = and i32 %n, 31
  %theirs = getelementptr i32, ptr %cells, i32 %next
  %v = load volatile i32, ptr %theirs
  %p = getelementptr i32, ptr %out, i32 %t
  store i32 %v, ptr %p
  ret void
}
