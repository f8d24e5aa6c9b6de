# The software pipeline of a matmul loop, through kilnc. Both operand loads
# become cp.async copies (16 bytes: the tiles are contiguous along K for a and
# N for b) into rings of num_stages swizzled tiles, num_stages - 1 iterations
# ahead; the dot reads the ring.
#
# sm_90a: wgmma.mma_async with shared-memory descriptors, one group kept in
# flight (wgmma.wait_group 1), no proxy fence between the cp.async data and
# the wgmma that reads it (as upstream Triton's pipelined loops); the
# dynamic shared memory holds both rings (3 x (128x64 + 64x128) fp16 = 96 KiB).
# RUN: %kilnc compile %s -n mm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n mm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WGMMA
# Plain sm_90 (and sm_80-89): the same ring, read with ldmatrix into mma.sync.
# RUN: %kilnc compile %s -n mm -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*bf16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=32, num_warps=8, num_stages=4" --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=MMA
# RUN: %kilnc compile %s -n mm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=64, BN=64, BK=32, num_warps=4, num_stages=2" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=MMA
# Too many stages for the target's shared memory: an error naming the kernel,
# the bytes and the limit.
# RUN: not %kilnc compile %s -n mm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=64, num_warps=8, num_stages=6" --arch sm_90a --emit ptx -o - 2>&1 | FileCheck %s --check-prefix=TOO-BIG
import triton
import triton.language as tl

# GPU: kiln_gpu.local_alloc {offset = 0 : i64} : <3x128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU: kiln_gpu.local_alloc {offset = 49152 : i64} : <3x64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU: kiln_gpu.async_copy
# GPU: kiln_gpu.async_copy
# GPU: kiln_gpu.async_commit_group
# GPU: kiln_gpu.async_copy
# GPU: kiln_gpu.async_copy
# GPU: kiln_gpu.async_commit_group
# GPU: scf.for
# GPU: kiln_gpu.async_wait {pending = 1 : i32}
# GPU-NEXT: kiln_gpu.barrier
# GPU-NOT: kiln_gpu.fence_async_shared
# GPU: kiln_gpu.shared_dot {{.*}} {async}
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 1 : i32}
# GPU: kiln_gpu.async_copy
# GPU: kiln_gpu.async_copy
# GPU: kiln_gpu.async_commit_group
# GPU: scf.yield
# Upstream tutorial 03's fp8 kernel at 128x256x128, 8 warps: with the wait
# reached from the zero-trip path, ptxas serialized its wgmma (C7515).
# RUN: %kilnc compile %S/../realworld/tutorials/python/tutorials/03-matrix-multiplication.py -n matmul_kernel -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_ak=i32:1, stride_bk=i32:1, stride_bn=i32:16, stride_cm=i32:16, stride_cn=i32:1, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=128, GROUP_SIZE_M=8, ACTIVATION='', num_warps=8, num_stages=3" --arch sm_90a -o %t.fp8.cubin --resource-usage 2>&1 | FileCheck %s --check-prefix=FP8
# FP8-NOT: serialized
# FP8: 0 bytes spill stores
# FP8-NOT: serialized
# The loop may run no iteration (K is an argument): it and the last wgmma
# wait go under an if that it runs; ptxas serializes the wgmma where a path
# without them reaches the wait (C7515).
# GPU: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# GPU-NEXT: scf.yield
# GPU-NEXT: {{^ *\} else \{$}}
# GPU-NEXT: scf.yield
# GPU-NEXT: {{^ *\}$}}
# GPU-NEXT: kiln_gpu.async_wait {pending = 0 : i32}
# GPU-NEXT: kiln_gpu.barrier

# WGMMA: .extern .shared .align 1024 .b8 kiln_smem[];
# A thread's chunks of a tile sit at constant offsets from its first one:
# one address, then adds of immediates (ptxas folds them into LDGSTS).
# WGMMA: cp.async.cg.shared.global [ [[DST:%r[0-9]+]] ], [ {{.*}} ], 16,
# WGMMA-NEXT: // end inline asm
# WGMMA-NEXT: add.s32 {{%r[0-9]+}}, [[DST]], 2048;
# WGMMA: cp.async.commit_group;
# WGMMA: cp.async.wait_group 1;
# WGMMA: bar.sync 0;
# WGMMA-NOT: fence.proxy.async
# The warpgroup's index is read from lane 0 (warp-uniform, so ptxas keeps
# a's descriptors in uniform registers); each k step's descriptor is the
# first one plus a constant (32 bytes of K: 2 in the 16-byte address field).
# WGMMA: shfl.sync.idx.b32
# WGMMA: wgmma.fence.sync.aligned;
# WGMMA: or.b64 [[ADESC:%rd[0-9]+]], {{%rd[0-9]+}}, {{[0-9]+}};
# WGMMA: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, [[ADESC]],
# WGMMA: add.s64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, {{[0-9]+}};
# WGMMA: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# WGMMA: wgmma.commit_group.sync.aligned;
# WGMMA: wgmma.wait_group.sync.aligned 1;
# WGMMA: cp.async.cg.shared.global
# WGMMA: wgmma.wait_group.sync.aligned 0;

# MMA: cp.async.cg.shared.global
# MMA: cp.async.wait_group
# MMA: bar.sync 0;
# MMA: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# MMA: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
# MMA: mma.sync.aligned.m16n8k16.row.col.f32.{{b?f16}}
# MMA-NOT: wgmma

# TOO-BIG: error: 'mm' needs {{[0-9]+}} bytes of shared memory; sm_90a allows at most 232448 per block


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    rm = (pid // tiles_n * BM + tl.arange(0, BM)) % M
    rn = (pid % tiles_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_tile, mask=rk[None, :] < K - kt * BK, other=0.0)
        b = tl.load(b_tile, mask=rk[:, None] < K - kt * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK
        b_tile += BK * stride_bk
    cm = pid // tiles_n * BM + tl.arange(0, BM)
    cn = pid % tiles_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


# b transposed (x @ w.T: w is N x K, row-major): b's tile runs down its
# columns, so it gets a column-major blocked layout, a transposed swizzled
# ring, and is read K-major (imm-trans-b 0; ldmatrix without .trans).
# RUN: %kilnc compile %s -n mm_bt -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=BT-GPU
# RUN: %kilnc compile %s -n mm_bt -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=BT-WGMMA
# RUN: %kilnc compile %s -n mm_bt -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=64, BN=64, BK=32, num_warps=4, num_stages=3" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=BT-MMA
# BT-GPU: kiln_gpu.local_alloc {{.*}} <3x64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# BT-GPU: kiln_gpu.async_copy {{.*}} : tensor<64x128x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [8, 1], {{.*}} order = [0, 1]}>>
# BT-WGMMA: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0;
# BT-MMA: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# BT-MMA: ldmatrix.sync.aligned.m8n8.x2.shared.b16
# BT-MMA: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32


@triton.jit
def mm_bt(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    rm = (pid // tiles_n * BM + tl.arange(0, BM)) % M
    rn = (pid % tiles_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_tile = b_ptr + rk[:, None] + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_tile, mask=rk[None, :] < K - kt * BK, other=0.0)
        b = tl.load(b_tile, mask=rk[:, None] < K - kt * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK
        b_tile += BK
    cm = pid // tiles_n * BM + tl.arange(0, BM)
    cn = pid % tiles_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))
