# A small 1-D load from pointers the loop carries and advances by a uniform
# step, under an `if` beside the loop's dots, read in a slice of the
# accumulator's layout: the pointers are converted once, before the loop,
# and the load reads in that slice, as it does without the `if`. LightX2V's
# sparse attention backward loads lse and delta so under `if kbid == 1:`;
# converted, each went through shared memory with two barriers every
# iteration.
# RUN: %kilnc compile %s -n carried_under_if -s "q_ptr=*bf16:16, k_ptr=*bf16:16, l_ptr=*fp32:16, f_ptr=*i8:16, o_ptr=*fp32:16, n=i32" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl


# CHECK: scf.for
# CHECK: scf.if
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln.load {{.*}} -> tensor<64xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>}>>
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: scf.yield
@triton.jit
def carried_under_if(q_ptr, k_ptr, l_ptr, f_ptr, o_ptr, n):
    r = tl.arange(0, 64)
    q = tl.load(q_ptr + r[:, None] * 64 + r[None, :])
    l_ptrs = l_ptr + r
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 64):
        flag = tl.load(f_ptr + start // 64)
        if flag == 1:
            k = tl.load(k_ptr + (start + r[None, :]) * 64 + r[:, None])
            s = tl.dot(q, k)
            lse = tl.load(l_ptrs, mask=r < n - start, other=float("inf"))
            acc += tl.exp2(s - lse[None, :])
        l_ptrs += 64
    tl.store(o_ptr + r[:, None] * 64 + r[None, :], acc)
