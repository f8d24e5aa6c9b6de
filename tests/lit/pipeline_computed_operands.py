# A dot operand computed in registers from a tile loaded in the loop (a
# weight-only int8 GEMM: the int8 weight converted to fp16 for the dot) is
# pipelined as a loaded operand is. The int8 tile gets a ring of cp.async
# copies, num_stages - 1 iterations ahead (16 bytes each: the tile has its
# own row layout, as an operand tile would, not the fp16 tiles' 8-byte one);
# each iteration reads its slot back where the load was (local_load),
# converts it, and writes the result into a staging tile the dot reads
# (local_store, then a proxy fence for wgmma and a barrier). Two staging
# tiles used in turn keep the wgmma in flight (wait_group 1). Without this
# the loop was not pipelined at all (0.29-0.36 of Triton on the H200).
# RUN: %kilnc compile %s -n w8a16 -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n w8a16 -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WGMMA
# On sm_80 (mma.sync) the dot completes in its iteration: one staging tile,
# read with ldmatrix, and no proxy fence. (On sm_90a one tile too, where
# that lets another block share the SM.)
# RUN: %kilnc compile %s -n w8a16 -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=64, BN=64, BK=32, num_warps=4, num_stages=3" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=MMA
# At 4 stages the two staging tiles would keep a second block off the SM
# (120 KiB); one tile (104 KiB) lets it in, and the dot completes in its
# iteration.
# RUN: %kilnc compile %s -n w8a16 -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=4" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ONE
# A tile one dot reads through a computation and another reads as it is
# would need a ring of both kinds: the loop is not pipelined (the short ring
# was read with the long ring's slot index, past its end); kiln-stage-dots
# stages its dots' operands: a and b copied into their tiles with cp.async
# where they are loaded, `a * 2.0` computed from a read of a's tile and
# written into a tile of its own.
# RUN: %kilnc compile %s -n two_readers -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, BM=64, BN=64, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=TWO
import triton
import triton.language as tl

# ONE: kiln_gpu.local_alloc {{.*}} : <1x64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# ONE: scf.for
# ONE: kiln_gpu.shared_dot {{.*}} {async}
# ONE-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}

# GPU: kiln_gpu.local_alloc {{.*}} : <3x128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU: kiln_gpu.local_alloc {{.*}} : <2x64x128xi8, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU: kiln_gpu.local_alloc {{.*}} : <2x64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU: kiln_gpu.async_copy {{.*}} {kiln_gpu.vec = 16 : i32} : tensor<64x128x!kiln.ptr<i8>, #kiln_gpu.blocked<{sizePerThread = [1, 16]
# GPU: scf.for
# GPU: kiln_gpu.async_wait {pending = 1 : i32}
# GPU-NEXT: kiln_gpu.barrier
# GPU-NEXT: [[SLOT:%[0-9]+]] = kiln_gpu.memdesc_index %{{[0-9]+}}{{\[}}[[SHORT:%arg[0-9]+]]{{\]}} : <2x64x128xi8
# GPU-NEXT: [[INT8:%[0-9]+]] = kiln_gpu.local_load [[SLOT]]
# GPU-NEXT: [[FP16:%[0-9]+]] = arith.sitofp [[INT8]]
# GPU: [[STAGED:%[0-9]+]] = kiln_gpu.memdesc_index {{.*}} -> <64x128xf16
# GPU-NEXT: kiln_gpu.local_store [[FP16]], [[STAGED]]
# GPU-NEXT: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU-NEXT: kiln_gpu.shared_dot {{%[0-9]+}}, [[STAGED]], {{.*}} {async}
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 1 : i32}
# The int8 ring has a slot fewer than the stages: the slot read at the
# iteration's start is refilled, after the staging barrier.
# GPU: [[REFILL:%[0-9]+]] = kiln_gpu.memdesc_index %{{[0-9]+}}{{\[}}[[SHORT]]{{\]}} : <2x64x128xi8
# GPU: kiln_gpu.async_copy {{.*}}, [[REFILL]]
# The staging tile alternates: the carried index flips each iteration.
# GPU: [[NEXT:%[0-9]+]] = arith.xori %arg15, %c1_i32
# GPU: scf.yield {{.*}}, [[NEXT]], {{%[0-9]+}} :

# WGMMA: cp.async.cg.shared.global [ {{%r[0-9]+}} ], [ {{%rd[0-9]+}} ], 16,
# WGMMA-NOT: cp.async.ca
# WGMMA: cp.async.wait_group 1;
# WGMMA-NEXT: // end inline asm
# WGMMA-NEXT: bar.sync 0;
# WGMMA: ld.shared.v4.b32
# WGMMA: cvt.rn.f16.s16
# WGMMA: st.shared.v4.b32
# WGMMA: fence.proxy.async.shared::cta;
# WGMMA: bar.sync 0;
# WGMMA: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# WGMMA: wgmma.wait_group.sync.aligned 1;

# MMA: kiln_gpu.local_alloc {{.*}} : <1x32x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# MMA: scf.for
# MMA: kiln_gpu.local_load
# MMA: kiln_gpu.local_store
# MMA-NOT: kiln_gpu.fence_async_shared
# MMA: kiln_gpu.barrier
# With the dot complete in its iteration, the copies follow that barrier
# (the int8 ring's slot just read among them).
# MMA: kiln_gpu.async_copy
# MMA: kiln_gpu.async_commit_group
# MMA: kiln_gpu.shared_dot
# MMA-NOT: {async}
# MMA-SAME: -> tensor<64x64xf32
@triton.jit
def w8a16(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b.to(tl.float16), acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


# TWO-LABEL: func.func @two_readers
# TWO: scf.for
# TWO-NEXT: %[[A:.*]] = kiln_gpu.local_alloc
# TWO-NEXT: kiln_gpu.async_copy %{{.*}}, %[[A]]
# TWO-NEXT: kiln_gpu.async_commit_group
# TWO-NEXT: %[[B:.*]] = kiln_gpu.local_alloc
# TWO-NEXT: kiln_gpu.async_copy %{{.*}}, %[[B]]
# TWO-NEXT: kiln_gpu.async_commit_group
# TWO-NEXT: kiln_gpu.async_wait {pending = 1 : i32}
# TWO-NEXT: kiln_gpu.barrier
# TWO-NEXT: kiln_gpu.local_load %[[A]]
# TWO: kiln_gpu.local_store
# TWO: kiln_gpu.async_wait {pending = 0 : i32}
# TWO: kiln_gpu.shared_dot %{{.*}}, %[[B]]
# TWO: kiln_gpu.shared_dot %[[A]], %[[B]]
# TWO-NOT: kiln.dot
# TWO-NOT: kiln.load
@triton.jit
def two_readers(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc1 = tl.zeros((BM, BN), dtype=tl.float32)
    acc2 = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc1 = tl.dot(a * 2.0, b, acc1)
        acc2 = tl.dot(a, b, acc2)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], (acc1 + acc2).to(tl.float16))
