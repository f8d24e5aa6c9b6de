# A masked load whose `other` is a zero tile broadcast to the load's shape
# (FBGEMM's `_0 = tl.zeros((1, 1), dtype)`, `tl.load(A, mask=..., other=_0)`)
# fills with zeros as `other=0.0` does, so kiln-pipeline-dots stages it with
# cp.async into its ring (AsyncCopies.h's isZero looks through broadcasts,
# reshapes and layout conversions of a zero constant), on sm_90a (wgmma)
# and sm_80 (mma.sync) alike.
# RUN: %kilnc compile %s -n zero_tile_other_matmul -s "A=*fp16:16, B=*fp16:16, C=*fp16:16, M=i32, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=64, BN=64, BK=32, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n zero_tile_other_matmul -s "A=*fp8e5:16, B=*fp8e5:16, C=*bf16:16, M=i32, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=64, BN=64, BK=64, num_stages=3" --arch sm_80 --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl

# CHECK: kiln_gpu.async_copy
# CHECK: kiln_gpu.async_copy
# CHECK: scf.for
# CHECK-NOT: kiln.load
# CHECK: kiln_gpu.async_copy
# CHECK: kiln_gpu.async_copy
# CHECK: scf.yield


@triton.jit
def zero_tile_other_matmul(A, B, C, M, N, K, stride_am, stride_bk, stride_cm,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + (rm % M)[:, None] * stride_am + rk[None, :]
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    _0 = tl.zeros((1, 1), dtype=C.dtype.element_ty)
    for k in range(0, tl.cdiv(K, BK)):
        rem = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < rem, other=_0)
        b = tl.load(b_ptrs, mask=rk[:, None] < rem, other=_0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc.to(C.dtype.element_ty), mask=mask)
