# A tile loaded in the loop and read by two dots, as it is and transposed
# (attention backward: qᵀ is the b of k @ qᵀ, and its transpose the b of
# dsᵀ @ q), is copied once per iteration into one ring; the second dot reads
# a kiln_gpu.memdesc_trans view of the same slot: K-major for the first
# wgmma, N-major for the second (register A: the first dot's result).
# RUN: %kilnc compile %s -n dkdv -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n dkdv -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n dkdv -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SM80
# A tile something other than a dot also reads is not given a ring: the
# loop is not pipelined. kiln-stage-dots copies it into its tile where it is
# loaded; the sum reads it back, and the second dot reads a memdesc_trans
# view of the same tile.
# RUN: %kilnc compile %s -n also_summed -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SUMMED
import triton
import triton.language as tl

# GPU: kiln_gpu.local_alloc {{.*}} <3x64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# GPU-NOT: kiln_gpu.local_alloc {{.*}} <3x
# GPU-NOT: kiln_gpu.dot_wait
# GPU: scf.for
# GPU: kiln_gpu.shared_dot {{.*}}, <64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# GPU: kiln_gpu.memdesc_trans {{.*}} -> <32x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# `dk += tl.dot(...)` accumulates in the dot (no separate add), whose wgmma
# group stays in flight into the next iteration (its wait leaves one
# pending); the copies that refill a slot come after it, at the end.
# GPU: kiln_gpu.shared_dot {{.*}}, %arg{{[0-9]+}} {async} : tensor<64x32xf16, #kiln_gpu.mma<{{.*}}>>, <32x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 1 : i32}
# GPU: kiln_gpu.async_copy
# GPU-NOT: kiln_gpu.async_copy
# GPU-NOT: arith.addf
# GPU: scf.yield
# GPU: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# GPU-NOT: kiln.dot
# PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# SM80-DAG: ldmatrix.sync.aligned.m8n8.x{{[24]}}.shared.b16
# SM80-DAG: ldmatrix.sync.aligned.m8n8.x{{[24]}}.trans.shared.b16
# SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# SUMMED: scf.for
# SUMMED-NEXT: %[[QT:.*]] = kiln_gpu.local_alloc {{.*}} : <64x32xf16
# SUMMED-NEXT: kiln_gpu.async_copy %{{.*}}, %[[QT]]
# SUMMED: kiln_gpu.local_load %[[QT]]
# SUMMED: kiln_gpu.shared_dot %{{.*}}, %[[QT]]
# SUMMED: %[[VIEW:.*]] = kiln_gpu.memdesc_trans %[[QT]]
# SUMMED: kiln_gpu.shared_dot %{{.*}}, %[[VIEW]]
# SUMMED-NOT: kiln_gpu.local_store
# SUMMED-NOT: kiln.dot


@triton.jit
def dkdv(q_ptr, k_ptr, dk_ptr, n):
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    qT_ptrs = q_ptr + rm[None, :] * 64 + rd[:, None]
    for start in range(0, n, 32):
        qT = tl.load(qT_ptrs)
        s = tl.dot(k, qT)
        p = s.to(tl.float16)
        dk += tl.dot(p, tl.trans(qT))
        qT_ptrs += 32 * 64
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)


@triton.jit
def also_summed(q_ptr, k_ptr, dk_ptr, n):
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    qT_ptrs = q_ptr + rm[None, :] * 64 + rd[:, None]
    for start in range(0, n, 32):
        qT = tl.load(qT_ptrs)
        s = tl.dot(k, qT) + tl.sum(qT.to(tl.float32), axis=0)[None, :]
        p = s.to(tl.float16)
        dk += tl.dot(p, tl.trans(qT))
        qT_ptrs += 32 * 64
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)
