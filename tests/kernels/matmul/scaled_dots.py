# Dots scaled by small per-k vectors the loop loads from pointers it carries
# and advances: a GEMM whose rows are scaled per k block (DeepSeek-V3's
# block-scaled fp8 GEMM, here in fp16) and a decayed product (Mamba-2's
# chunk scan: a tile weighted by exp(d_m - d_k) * dt_k before its dot).
# kilnc loads those vectors in the layout their broadcast wants; a masked
# copy of a tile whose rows end at a multiple of 16 checks the compares it
# shares between rows 8 apart.
#
# kiln-variant: -n row_scaled_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, s_ptr=*fp32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=32, STAGES=3"
# kiln-variant: -n decayed_matmul -s "a_ptr=*fp32:16, x_ptr=*fp16:16, d_ptr=*fp32:16, t_ptr=*fp32:16, c_ptr=*fp32:16, L=i32, N=i32:16, BM=64, BN=64, BK=64"
# kiln-variant: -n masked_rows -s "x_ptr=*bf16:16, y_ptr=*bf16:16, stride=i32:16, M=i32:16, N=i32, BM=128, BN=128"
# kiln-covers: row_scaled_matmul: tl.range(num_stages=, loop_unroll_factor=); tl.dot
# kiln-covers: decayed_matmul: tl.dot; tl.exp
# kiln-variant: -n carried_k_masks -s "a_ptr=*fp16:16, b_ptr=*fp16:16, sa_ptr=*fp32:16, sb_ptr=*fp32:16, c_ptr=*fp16:16, M=i32, N=i32:16, K=i32, BM=64, BN=128, BK=64"
# kiln-covers: carried_k_masks: tl.dot; tl.trans
import triton
import triton.language as tl


@triton.jit
def row_scaled_matmul(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr, STAGES: tl.constexpr):
    # c = sum over k blocks of (a_k @ b_k) * s[:, k]: one scale per row and
    # k block, s laid out [M, K // BK].
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rows = rm % M
    a_ptrs = a_ptr + rows[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    s_ptrs = s_ptr + rows * (K // BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K // BK, num_stages=STAGES):
        s = tl.load(s_ptrs)
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs)) * s[:, None]
        a_ptrs += BK
        b_ptrs += BK * N
        s_ptrs += 1
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def decayed_matmul(a_ptr, x_ptr, d_ptr, t_ptr, c_ptr, L, N, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    # c[m, n] = sum over k < L of a[m, k] * exp(min(d[m] - d[k], 0)) * t[k] * x[k, n],
    # a [L, L] fp32, x [L, N] fp16, d and t [L]; L need not divide by BK.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    d_m = tl.load(d_ptr + rm, mask=rm < L, other=0.0)
    a_ptrs = a_ptr + rm[:, None] * L + rk[None, :]
    x_ptrs = x_ptr + rk[:, None] * N + rn[None, :]
    d_ptrs = d_ptr + rk
    t_ptrs = t_ptr + rk
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, L, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < L) & (rk[None, :] < L - k), other=0.0)
        d_k = tl.load(d_ptrs, mask=rk < L - k, other=0.0)
        t_k = tl.load(t_ptrs, mask=rk < L - k, other=0.0)
        a *= tl.exp(tl.minimum(d_m[:, None] - d_k[None, :], 0.0)) * t_k[None, :]
        x = tl.load(x_ptrs, mask=rk[:, None] < L - k, other=0.0)
        acc += tl.dot(a.to(tl.float16), x)
        a_ptrs += BK
        x_ptrs += BK * N
        d_ptrs += BK
        t_ptrs += BK
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < L)


@triton.jit
def masked_rows(x_ptr, y_ptr, stride, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # y = 2 x over an [M, N] tile grid; rows past M and columns past N untouched.
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None].to(tl.int64) * stride + cols[None, :]
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2, mask=mask)


@triton.jit
def carried_k_masks(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, BM: tl.constexpr,
                    BN: tl.constexpr, BK: tl.constexpr):
    # SGLang's and vLLM's scaled GEMM: the k offsets the loop carries and
    # advances mask both operands (K need not be a multiple of BK), and the
    # epilogue scales by rows and by a transposed column vector.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        masks_k = offs_k < K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & masks_k[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=masks_k[:, None] & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        offs_k += BK
        a_ptrs += BK
        b_ptrs += BK * N
    scale_a = tl.load(sa_ptr + rm[:, None], mask=rm[:, None] < M, other=0.0)
    scale_b = tl.load(sb_ptr + rn[:, None], mask=rn[:, None] < N, other=0.0)
    acc = scale_b.T * (scale_a * acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))
