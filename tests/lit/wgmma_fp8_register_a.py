# An 8-bit a computed in registers (fp8 attention's p @ v) is read by wgmma
# from registers: the accumulator layout gives each thread columns 2t, 2t+1
# of every 8, the k32 fragment wants 4t..4t+3, so each word comes from two
# quad neighbours (shfl.sync.idx) and is put together with prmt. Before,
# the one dot made the whole kernel take mma.sync (tf32 on upcast fp8, 2.5
# KB of spills: 0.05-0.10 of Triton on tutorial 06's fp8 forward).
# RUN: %kilnc compile %s -n chain8 -s "*fp8e5:16, *fp8e5:16, *fp8e5:16, *fp16:16, i32:16, 128, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s
# RUN: %kilnc compile %s -n chain8 -s "*fp8e4nv:16, *fp8e4nv:16, *fp8e4nv:16, *fp16:16, i32:16, 128, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=E4M3
# On sm_89 (and plain sm_90) the same words feed mma.sync m16n8k32, whose a
# fragment is the wgmma one.
# RUN: %kilnc compile %s -n chain8 -s "*fp8e5:16, *fp8e5:16, *fp8e5:16, *fp16:16, i32:16, 128, 64, 64" --arch sm_89 --emit ptx -o - | FileCheck %s --check-prefix=MMA
import triton
import triton.language as tl

# CHECK-NOT: mma.sync
# CHECK: wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1;
# CHECK: shfl.sync.idx.b32
# CHECK: prmt.b32
# CHECK: wgmma.fence.sync.aligned
# CHECK: wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1;
# CHECK-NOT: mma.sync
# MMA-NOT: wgmma
# MMA: shfl.sync.idx.b32
# MMA: prmt.b32
# MMA: mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32
# MMA-NOT: wgmma
# E4M3: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1;


@triton.jit
def chain8(q_ptr, k_ptr, vt_ptr, o_ptr, n, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, n, BN):
        k = tl.load(k_ptr + (start + rn)[:, None] * D + rd[None, :])
        s = tl.dot(q, k.T)
        p = tl.exp2(s - tl.max(s, 1)[:, None]).to(q.dtype)
        vt = tl.load(vt_ptr + rd[:, None] * n + (start + rn)[None, :])
        acc = tl.dot(p, vt.T, acc)
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc.to(tl.float16))
