# C = A @ B over strided tensors, as upstream's matmul tutorial indexes them:
# the strides are arguments, so one kernel serves row-major, column-major and
# transposed views. Called row-major with unit strides (stride_ak, stride_bn,
# stride_cn equal to 1), the build's unit-stride variant runs: it takes those
# three equal to 1, so its loads and stores are vectorized along the rows.
# tests/e2e/unit_stride_gpu_test.cc runs it; tests/lit/unit_strides.py checks
# what each variant compiles to.
import triton
import triton.language as tl


@triton.jit
def strided_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        k_left = K - kt * BK
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_tile, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK * stride_ak
        b_tile += BK * stride_bk
    c_tile = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_tile, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
