# In a loop that holds a dot, an element-wise op with an operand in the
# dot's accumulator layout takes that layout: the softmax stays where the
# dot left it. NSA's attention adds a mask made under a run-time `if
# causal:` (an scf.if with no layout of its own) to q @ kᵀ; the sum took the
# if's blocked layout, the dot's result was converted out of the
# accumulator in every iteration, p was not in wgmma's A-fragment layout,
# and the loop was not pipelined (0.43 of Triton on the H200; 0.83 after).
# The if then made its mask in a blocked layout, converted into the
# accumulator's through shared memory every iteration; now each branch
# computes its mask in the accumulator's layout and the if yields that.
# RUN: %kilnc compile %s -n masked_attention -s "q_ptr=*bf16:16, k_ptr=*bf16:16, v_ptr=*bf16:16, o_ptr=*bf16:16, n=i32, causal=i1, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl


# CHECK: scf.for
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} -> tensor<64x64xf32, #kiln_gpu.mma
# CHECK: scf.if %{{.*}} -> (tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>)
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} -> tensor<64x64xf32, #kiln_gpu.mma
# CHECK: kiln_gpu.shared_dot {{.*}} -> tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# CHECK-NEXT: %[[QK:[0-9]+]] = kiln_gpu.dot_wait
# CHECK-NOT: kiln_gpu.convert_layout %[[QK]]
# CHECK: kiln_gpu.shared_dot %{{.*}} : tensor<64x64xbf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# CHECK: kiln_gpu.async_copy
@triton.jit
def masked_attention(q_ptr, k_ptr, v_ptr, o_ptr, n, causal):
    r = tl.arange(0, 64)
    q = tl.load(q_ptr + r[:, None] * 64 + r[None, :])
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 64):
        k = tl.load(k_ptr + (start + r[None, :]) * 64 + r[:, None])
        s = tl.zeros((64, 64), dtype=tl.float32)
        if causal:
            s += tl.where(r[:, None] >= (start + r)[None, :], 0, float("-inf"))
        else:
            s += tl.where((start + r < n)[None, :], 0, float("-inf"))
        s += tl.dot(q, k) * 0.5
        p = tl.math.exp2(s - tl.max(s, 1)[:, None]).to(tl.bfloat16)
        v = tl.load(v_ptr + (start + r[:, None]) * 64 + r[None, :])
        acc = tl.dot(p, v, acc)
    tl.store(o_ptr + r[:, None] * 64 + r[None, :], acc.to(tl.bfloat16))
