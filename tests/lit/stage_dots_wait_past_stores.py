# kiln-stage-dots: a dot whose a is copied into its tile with cp.async where
# it is loaded and whose b is computed in registers (a weight-only decode
# GEMM: int8 weights converted to fp16, 16 rows, so mma.sync on sm_90a too)
# waits for the copy after storing b's tile, behind the one barrier that
# shows both tiles to the dot: staged stores need no barrier before them
# (the last reader of their bytes closed with one). Before, the wait had its
# own barrier ahead of b's store: three barriers an iteration, Triton's
# code two.
# RUN: %kilnc compile %s -n dequant_gemm -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp32:16, K=i32:16, num_warps=4, num_stages=1" --arch sm_90a --emit gpu -o - | FileCheck %s
# Plain sm_90 (mma.sync everywhere) the same.
# RUN: %kilnc compile %s -n dequant_gemm -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp32:16, K=i32:16, num_warps=4, num_stages=1" --arch sm_90 --emit gpu -o - | FileCheck %s
# The PTX has two barriers in the loop.
# RUN: %kilnc compile %s -n dequant_gemm -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp32:16, K=i32:16, num_warps=4, num_stages=1" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl


# CHECK-LABEL: func.func @dequant_gemm
# CHECK: scf.for
# CHECK: %[[A:.*]] = kiln_gpu.local_alloc {{.*}} : <16x64xf16
# CHECK-NEXT: kiln_gpu.async_copy %{{.*}}, %[[A]]
# CHECK-NEXT: kiln_gpu.async_commit_group
# CHECK-NOT: kiln_gpu.barrier
# CHECK: arith.sitofp
# CHECK-NOT: kiln_gpu.barrier
# CHECK: %[[B:.*]] = kiln_gpu.local_alloc {{.*}} : <64x32xf16
# CHECK-NEXT: kiln_gpu.local_store %{{.*}}, %[[B]]
# CHECK-NEXT: kiln_gpu.async_wait {pending = 0 : i32}
# CHECK-NEXT: kiln_gpu.barrier
# CHECK-NEXT: kiln_gpu.shared_dot %[[A]], %[[B]]
# The dot's closing barrier goes below the next iteration's load of b (the
# barrier orders shared memory only), so that ptxas may issue it first.
# CHECK-NOT: kiln_gpu.barrier
# CHECK: kiln.load
# CHECK-NEXT: kiln_gpu.barrier
# CHECK-NEXT: scf.yield
# PTX: cp.async.commit_group
# PTX-NOT: bar.sync
# PTX: cp.async.wait_group 0
# PTX-NOT: bar.sync
# PTX: bar.sync 0
# PTX-NOT: bar.sync
# PTX: mma.sync
# PTX: bar.sync 0
# PTX-NOT: bar.sync
# PTX: bra.uni
@triton.jit
def dequant_gemm(a_ptr, b_ptr, c_ptr, K):
    rm = tl.arange(0, 16)
    rn = tl.arange(0, 32)
    rk = tl.arange(0, 64)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rn[:, None] * K + rk[None, :]
    acc = tl.zeros((16, 32), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, 64)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * 64, other=0.0)
        b = tl.load(b_ptrs, mask=rk[None, :] < K - k * 64, other=0)
        acc += tl.dot(a, tl.trans(b.to(tl.float16)))
        a_ptrs += 64
        b_ptrs += 64
    tl.store(c_ptr + rm[:, None] * 32 + rn[None, :], acc)
