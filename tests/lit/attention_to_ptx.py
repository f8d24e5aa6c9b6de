# An attention forward's loop through kilnc: two dots per iteration, the
# online softmax between them.
#
# Layouts: the running max, sum and accumulator are carried in the first
# dot's accumulator layout (a slice of it for the 1-D ones), and the causal
# mask is recomputed there: nothing in the loop changes layout.
# Pipeline: q, loaded once before the loop, is copied once into its own
# tile; k and v come through cp.async rings two deep; q @ k and p @ v read
# them, p from registers (its fragments are the accumulator's), each waited
# for (wgmma.wait_group 0) before its result is read.
# RUN: %kilnc compile %s -n attn -s "Q=*fp16:16, K=*fp16:16, V=*fp16:16, Out=*fp16:16, sm_scale=fp32, stride_h=i32:16, stride_m=i32:16, N_CTX=i32:16, HEAD_DIM=64, BM=128, BN=64, num_warps=4, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n attn -s "Q=*fp16:16, K=*fp16:16, V=*fp16:16, Out=*fp16:16, sm_scale=fp32, stride_h=i32:16, stride_m=i32:16, N_CTX=i32:16, HEAD_DIM=64, BM=128, BN=64, num_warps=4, num_stages=2" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WGMMA
# sm_80 (and plain sm_90): the same rings, warps along M so that p's rows
# are whole in each warp; p's fragments go straight into mma.sync.
# RUN: %kilnc compile %s -n attn -s "Q=*fp16:16, K=*fp16:16, V=*fp16:16, Out=*fp16:16, sm_scale=fp32, stride_h=i32:16, stride_m=i32:16, N_CTX=i32:16, HEAD_DIM=64, BM=128, BN=64, num_warps=4, num_stages=2" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=MMA
import triton
import triton.language as tl

# GPU: kiln_gpu.local_alloc {offset = 0 : i64} : <1x128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU: kiln_gpu.local_alloc {{.*}} : <2x64x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# GPU: kiln_gpu.local_alloc {{.*}} : <2x64x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU: kiln_gpu.async_copy
# GPU-NEXT: kiln_gpu.async_commit_group
# GPU: scf.for {{.*}} -> (tensor<128x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>, tensor<128xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>}>>, tensor<128xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>}>>, i32, i32)
# GPU-NOT: convert_layout
# GPU: kiln_gpu.shared_dot {{.*}} {async} : !kiln_gpu.memdesc<128x64xf16
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# GPU-NOT: convert_layout
# GPU: kiln_gpu.shared_dot {{.*}} {async} : tensor<128x64xf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>, <64x64xf16
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# GPU-NOT: convert_layout
# GPU: scf.yield

# q @ k: both from descriptors (k K-major); p @ v: p from four registers, v
# N-major (transposed).
# WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
# WGMMA: wgmma.wait_group.sync.aligned 0;
# WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
# WGMMA: wgmma.wait_group.sync.aligned 0;

# MMA: scf.for {{.*}} -> (tensor<128x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# MMA-NOT: convert_layout
# MMA: kiln_gpu.shared_dot {{.*}} : !kiln_gpu.memdesc<128x64xf16
# MMA-NOT: convert_layout
# MMA: kiln_gpu.shared_dot {{.*}} : tensor<128x64xf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# MMA-NOT: convert_layout
# MMA: scf.yield


@triton.jit
def attn(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
         HEAD_DIM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    base = off_h.to(tl.int64) * stride_h
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, (start_m + 1) * BM, BN):
        kt = tl.load(K + base + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, kt)
        qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))
