# fp8 GEMM without fast accumulation: `acc += tl.dot(a, b)` on fp8 operands
# stays a dot from zero and an fp32 add (the tensor cores accumulate fp8
# products at reduced precision; FBGEMM's _kernel_matmul_fp8_row_no_fast_acc
# has this form). Where the accumulator takes 128 registers a thread (128 x
# 256 over 8 warps, 128 x 128 over 4), the dot and the add become one
# shared_dot that adds c after its product (kiln-sum-dots-apart): its wgmma
# runs 128 columns at a time, each slice added to the accumulator, so the
# product never takes a second whole tile of registers. 64 x 128 over 4
# warps (64 registers) keeps its dot in flight as before.
#
# `fp8_matmul_bounded_imprecise` accumulates in the dot with
# `max_num_imprecise_acc=MOST` (FBGEMM's fast-accumulation GEMM passes 32):
# on sm_90a the tensor cores sum MOST of K at a time from zero and each
# partial sum is added to the fp32 accumulator, as upstream does (MOST=96
# over K 128: sums of 96 and of the last 32).
#
# kiln-variant: -n fp8_matmul_sum_apart -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*bf16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=64, num_warps=8, num_stages=3"
# kiln-variant: -n fp8_matmul_sum_apart -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=3"
# kiln-variant: -n fp8_matmul_sum_apart -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*bf16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=64, BN=128, BK=64, num_warps=4, num_stages=3"
# kiln-variant: -n fp8_matmul_bounded_imprecise -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=128, MOST=32, num_warps=8, num_stages=3"
# kiln-variant: -n fp8_matmul_bounded_imprecise -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=128, MOST=96, num_warps=8, num_stages=3"
# kiln-variant: -n fp8_matmul_bounded_imprecise -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=64, BN=128, BK=64, MOST=64, num_warps=4, num_stages=3"
# kiln-covers: fp8_matmul_sum_apart: tl.dot; tl.where; tl.zeros
# kiln-covers: fp8_matmul_bounded_imprecise: tl.dot
import triton
import triton.language as tl


@triton.jit
def fp8_matmul_sum_apart(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # c = a @ b^T: a is M x K and b is N x K, both K-contiguous; ragged rows
    # and columns read row and column 0 again and are not stored.
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rows_in = tl.where(rows < M, rows, 0)
    cols_in = tl.where(cols < N, cols, 0)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(a_ptr + rows_in[:, None] * stride_am + k[None, :], mask=k[None, :] < K, other=0.0)
        b = tl.load(b_ptr + k[:, None] + cols_in[None, :] * stride_bn, mask=k[:, None] < K, other=0.0)
        acc += tl.dot(a, b)
    c = acc.to(c_ptr.dtype.element_ty)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], c, mask=mask)


@triton.jit
def fp8_matmul_bounded_imprecise(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                                 MOST: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rows_in = tl.where(rows < M, rows, 0)
    cols_in = tl.where(cols < N, cols, 0)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(a_ptr + rows_in[:, None] * stride_am + k[None, :], mask=k[None, :] < K, other=0.0)
        b = tl.load(b_ptr + k[:, None] + cols_in[None, :] * stride_bn, mask=k[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=MOST)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc, mask=mask)
