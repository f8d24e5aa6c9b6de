# A 16-bit dot operand computed before the loop (attention's q, scaled
# after its load) is written into its staging tile once, before the loop,
# and on mma.sync targets the loop's other operands are pipelined through
# rings: kiln-pipeline-dots left such loops alone (the operand is neither
# loaded nor computed in the body), so kiln-stage-dots copied each
# iteration's tiles and waited for them (triton-lang/kernels' flash
# attention forward on plain sm_90: 0.87 of Triton's mma.sync path, 1.01
# pipelined). On sm_90a the per-iteration tiles measured faster with wgmma
# (0.91-0.97 pipelined), and tf32 operands keep them too (Lightning
# Attention-2's loops of 1-4 trips): both left to kiln-stage-dots.
# RUN: %kilnc compile %s -n scaled_q -s "q_ptr=*fp16:16, k_ptr=*fp16:16, o_ptr=*fp32:16, n=i32, scale=fp32, num_warps=4, num_stages=3" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=MMA
# RUN: %kilnc compile %s -n scaled_q -s "q_ptr=*fp16:16, k_ptr=*fp16:16, o_ptr=*fp32:16, n=i32, scale=fp32, num_warps=4, num_stages=3" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=MMA
# RUN: %kilnc compile %s -n scaled_q -s "q_ptr=*fp16:16, k_ptr=*fp16:16, o_ptr=*fp32:16, n=i32, scale=fp32, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WGMMA
# RUN: %kilnc compile %s -n scaled_q -s "q_ptr=*fp32:16, k_ptr=*fp32:16, o_ptr=*fp32:16, n=i32, scale=fp32, num_warps=4, num_stages=3" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=TF32
import triton
import triton.language as tl


# MMA: %[[RING:.*]] = kiln_gpu.local_alloc {{.*}} : <2x64x64xf16
# MMA: %[[Q:.*]] = kiln_gpu.local_alloc {{.*}} : <1x64x64xf16
# MMA: kiln_gpu.local_store
# MMA-NEXT: kiln_gpu.barrier
# MMA: kiln_gpu.async_copy
# MMA: scf.for
# MMA-NOT: kiln_gpu.local_store
# MMA: kiln_gpu.shared_dot
# MMA: kiln_gpu.async_copy
# MMA: scf.yield
# WGMMA: kiln_gpu.local_store
# WGMMA: scf.for
# WGMMA: kiln_gpu.async_copy
# WGMMA-NEXT: kiln_gpu.async_commit_group
# WGMMA-NEXT: kiln_gpu.async_wait {pending = 0 : i32}
# WGMMA: kiln_gpu.shared_dot
# WGMMA: scf.yield
# TF32-NOT: kiln_gpu.local_alloc
# TF32: scf.for
# TF32: kiln.dot
@triton.jit
def scaled_q(q_ptr, k_ptr, o_ptr, n, scale):
    rm = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    q = tl.load(q_ptr + rm[:, None] * 64 + rd[None, :])
    q = (q * scale).to(q_ptr.dtype.element_ty)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 64):
        k = tl.load(k_ptr + rd[:, None] + (start + rm[None, :]) * 64)
        acc += tl.dot(q, k)
    tl.store(o_ptr + rm[:, None] * 64 + rd[None, :], acc)
