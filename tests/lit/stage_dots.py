# On sm_90a a dot the pipeliner leaves in registers (outside a loop, in a
# loop with num_stages 1) takes wgmma: kiln-stage-dots writes its operands
# into shared tiles right before it, behind a proxy fence and a barrier, and
# puts a barrier after it. lightllm's prefill attention (num_stages=1) ran
# both of its dots on mma.sync, at 0.23 of Triton on the H200.
# RUN: %kilnc compile %s -n one_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, BM=128, BN=128, BK=64, num_warps=4" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n one_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, BM=128, BN=128, BK=64, num_warps=4" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# q @ k and p @ v in a loop of one stage: q, which the loop does not change,
# is written once before it; p stays in registers (wgmma's A fragments); k
# and v are staged in each iteration (each copied where it is loaded and
# waited for before its dot); nothing is copied an iteration ahead.
# RUN: %kilnc compile %s -n attention_step -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp16:16, n=i32, num_warps=4, num_stages=1" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ATT
# On one warp (too few for wgmma's warpgroup; NSA's selected attention)
# both dots take mma.sync on the staged tiles, p still from registers:
# kiln.dot's staging arrays took p @ v's v element by element.
# RUN: %kilnc compile %s -n attention_step -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp16:16, n=i32, num_warps=1, num_stages=1" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ATT1
# A 16-row dot on sm_90a (fewer than wgmma's 64: a decode-sized GEMM)
# takes mma.sync on the same tiles, read by ldmatrix in the generic proxy:
# no proxy fence before its barrier and no wgmma wait after it (FLASHNN's
# A16W8 GEMM paid a fence each iteration).
# RUN: %kilnc compile %s -n one_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, BM=16, BN=64, BK=64, num_warps=4" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ROWS16
# RUN: %kilnc compile %s -n one_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, BM=16, BN=64, BK=64, num_warps=4" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ROWS16-PTX
# Each block's dots under an `if` (NSA's selected blocks): q, which the
# loop does not change, is still written once, before the loop.
# RUN: %kilnc compile %s -n selected_blocks -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp16:16, idx_ptr=*i32:16, n=i32, num_warps=1, num_stages=1" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=IF
# Tiles that do not fit beside the other buffers keep mma.sync: tf32 at
# 256 x 256 x 128 would take 256 KiB.
# RUN: %kilnc compile %s -n one_dot -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, BM=256, BN=256, BK=128, num_warps=8" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=BIG
# sm_80 has no wgmma: the same tiles, read by mma.sync's ldmatrix (the
# generic proxy: no fence), where kiln.dot's staging arrays took the
# operands element by element.
# RUN: %kilnc compile %s -n one_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, BM=128, BN=128, BK=64, num_warps=4" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=SM80
# RUN: %kilnc compile %s -n one_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, BM=128, BN=128, BK=64, num_warps=4" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SM80-PTX
import triton
import triton.language as tl


# Loaded right here, the operands are copied into their tiles by cp.async
# where they are loaded (stage_dots_copy_at_loads.py).
# GPU: %[[A:.*]] = kiln_gpu.local_alloc {{.*}}: <128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU-NEXT: kiln_gpu.async_copy %{{.*}}, %[[A]]
# GPU: %[[B:.*]] = kiln_gpu.local_alloc {{.*}}: <64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU-NEXT: kiln_gpu.async_copy %{{.*}}, %[[B]]
# GPU-NEXT: kiln_gpu.async_commit_group
# GPU: kiln_gpu.async_wait {pending = 0 : i32}
# GPU-NEXT: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU-NEXT: kiln_gpu.shared_dot %[[A]], %[[B]]
# GPU-NEXT: kiln_gpu.barrier
# GPU-NOT: kiln.dot
# PTX: fence.proxy.async.shared::cta
# PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# PTX: wgmma.wait_group.sync.aligned 0
# BIG: kiln.dot
# BIG-NOT: kiln_gpu.shared_dot
# SM80: %[[A:.*]] = kiln_gpu.local_alloc {{.*}}: <128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# SM80-NEXT: kiln_gpu.async_copy %{{.*}}, %[[A]]
# SM80: %[[B:.*]] = kiln_gpu.local_alloc {{.*}}: <64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# SM80-NEXT: kiln_gpu.async_copy %{{.*}}, %[[B]]
# SM80: kiln_gpu.async_wait {pending = 0 : i32}
# SM80-NEXT: kiln_gpu.barrier
# SM80-NEXT: kiln_gpu.shared_dot %[[A]], %[[B]]
# SM80-NEXT: kiln_gpu.barrier
# SM80-NOT: kiln.dot
# SM80-PTX-NOT: fence.proxy.async
# SM80-PTX: cp.async.cg.shared.global
# SM80-PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# SM80-PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# SM80-PTX-NOT: wgmma
@triton.jit
def one_dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


# ATT: %[[Q:.*]] = kiln_gpu.local_alloc {{.*}}: <64x64xf16
# ATT-NEXT: kiln_gpu.async_copy %{{.*}}, %[[Q]]
# ATT-NEXT: kiln_gpu.async_commit_group
# ATT-NEXT: kiln_gpu.async_wait {pending = 0 : i32}
# ATT-NEXT: kiln_gpu.barrier
# ATT-NEXT: scf.for
# ATT: kiln_gpu.shared_dot %[[Q]], %{{.*}}, %{{.*}} : !kiln_gpu.memdesc<64x64xf16, {{.*}}>, <64x64xf16, {{.*}}transposed = true>>
# ATT: kiln_gpu.shared_dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>, <64x64xf16
# ATT-NOT: kiln.dot
# ATT1: scf.for
# ATT1-NOT: kiln_gpu.fence_async_shared
# ATT1: kiln_gpu.shared_dot %{{.*}}, %{{.*}}, %{{.*}} : !kiln_gpu.memdesc<64x64xf16
# ATT1-NOT: kiln_gpu.fence_async_shared
# ATT1-NOT: kiln_gpu.dot_wait
# ATT1: kiln_gpu.shared_dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xf16, #kiln_gpu.mma<{warpsPerCTA = [1, 1]}>>, <64x64xf16
# ATT1-NOT: kiln_gpu.dot_wait
# ATT1-NOT: kiln.dot
# ROWS16: kiln_gpu.async_wait {pending = 0 : i32}
# ROWS16-NEXT: kiln_gpu.barrier
# ROWS16-NEXT: kiln_gpu.shared_dot
# ROWS16-NEXT: kiln_gpu.barrier
# ROWS16-NOT: kiln_gpu.dot_wait
# ROWS16-PTX-NOT: fence.proxy.async
# ROWS16-PTX: mma.sync.aligned.m16n8k16
# ROWS16-PTX-NOT: wgmma
@triton.jit
def attention_step(q_ptr, k_ptr, v_ptr, o_ptr, n):
    r = tl.arange(0, 64)
    q = tl.load(q_ptr + r[:, None] * 64 + r[None, :])
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 64):
        k = tl.load(k_ptr + (start + r[None, :]) * 64 + r[:, None])
        p = tl.exp(tl.dot(q, k)).to(tl.float16)
        v = tl.load(v_ptr + (start + r[:, None]) * 64 + r[None, :])
        acc = tl.dot(p, v, acc)
    tl.store(o_ptr + r[:, None] * 64 + r[None, :], acc.to(tl.float16))


# IF: %[[Q:.*]] = kiln_gpu.local_alloc {{.*}}: <16x64xf16
# IF-NEXT: kiln_gpu.local_store %{{.*}}, %[[Q]]
# IF: scf.for
# IF: scf.if
# IF-NOT: kiln_gpu.local_store %{{.*}}, %[[Q]]
# IF: kiln_gpu.shared_dot %[[Q]]
# IF: kiln_gpu.shared_dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x64xf16
# IF-NOT: kiln.dot
@triton.jit
def selected_blocks(q_ptr, k_ptr, v_ptr, o_ptr, idx_ptr, n):
    rm = tl.arange(0, 16)
    r = tl.arange(0, 64)
    q = tl.load(q_ptr + rm[:, None] * 64 + r[None, :])
    q = (q * 0.125).to(tl.float16)
    acc = tl.zeros((16, 64), dtype=tl.float32)
    for i in range(n):
        start = tl.load(idx_ptr + i) * 64
        if start >= 0:
            k = tl.load(k_ptr + (start + r[None, :]) * 64 + r[:, None])
            p = tl.exp(tl.dot(q, k)).to(tl.float16)
            v = tl.load(v_ptr + (start + r[:, None]) * 64 + r[None, :])
            acc = tl.dot(p, v, acc)
    tl.store(o_ptr + rm[:, None] * 64 + r[None, :], acc.to(tl.float16))
