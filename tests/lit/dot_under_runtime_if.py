# A dot accumulated under a run-time `if` inside a loop (vLLM's LoRA expand:
# `mm_k` adds each k-step's dot only where its masks allow): the loop
# carries the accumulator in the mma layout the dot gives it, as the scf.if
# yields it, not in a blocked layout converted to and from the mma layout
# through shared memory every tile (LoRA expand: 162 -> 128 registers, 32 ->
# 16 KB of shared memory, 0.973 -> 0.988 of Triton on the H200).
# RUN: %kilnc compile %s -n dot_under_if -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, K=i32:16, flag=i32" --arch sm_90a --emit gpu -o - | FileCheck %s
# CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #kiln_gpu.mma<
# CHECK: scf.if {{.*}} -> (tensor<64x64xf32, #kiln_gpu.mma<
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64xf32, #kiln_gpu.blocked
import triton
import triton.language as tl


@triton.jit
def dot_under_if(a_ptr, b_ptr, c_ptr, K, flag):
    offs_m = tl.arange(0, 64)
    offs_n = tl.arange(0, 64)
    offs_k = tl.arange(0, 32)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in range(0, K, 32):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * 64 + offs_n[None, :])
        if flag > k:
            acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * 64 + offs_n[None, :], acc)
