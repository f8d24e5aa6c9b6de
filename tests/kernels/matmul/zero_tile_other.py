# A K loop whose masked loads fill with a zero tile rather than a number:
# FBGEMM's fp8 GEMMs write `_0 = tl.zeros((1, 1), dtype=C.dtype.element_ty)`
# and `tl.load(A, mask=rk[None, :] < rem, other=_0)`, the (1, 1) tile
# broadcast to the load's shape (and cast to its element type). cp.async
# fills masked bytes with zeros, so these loads are staged like `other=0.0`
# ones. K is not a multiple of BK: the last iteration's tail is masked;
# M is not one of BM (rows wrap, as tutorial 03's `% M`).
#
# kiln-variant: -n zero_tile_other_matmul -s "A=*fp16:16, B=*fp16:16, C=*fp16:16, M=i32, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=64, BN=64, BK=32, num_stages=3"
# kiln-variant: -n zero_tile_other_matmul -s "A=*fp8e5:16, B=*fp8e5:16, C=*bf16:16, M=i32, N=i32:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=64, BN=64, BK=64, num_stages=3"
import triton
import triton.language as tl


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
