# tl.dot_scaled: microscaled (MX) operands, e8m0 scales (one uint8 per 32
# elements along K), fp4 (e2m1) packed two per byte along K, fp8, bf16 and
# fp16 operands, an accumulator, a missing scale, fast_math, and a pipelined
# K loop mixing e4m3 and e2m1 as upstream's tutorial 10 does.
#
# kiln-variant: -n dot_scaled_tile -s "a_ptr=*fp8e4nv, a_scale_ptr=*u8, b_ptr=*fp8e4nv, b_scale_ptr=*u8, c_ptr=*fp32, M=64, N=64, K=64, A_FORMAT='e4m3', B_FORMAT='e4m3'"
# kiln-variant: -n dot_scaled_tile -s "a_ptr=*u8, a_scale_ptr=*u8, b_ptr=*u8, b_scale_ptr=*u8, c_ptr=*fp32, M=64, N=64, K=128, A_FORMAT='e2m1', B_FORMAT='e2m1'"
# kiln-variant: -n dot_scaled_tile -s "a_ptr=*fp8e5, a_scale_ptr=*u8, b_ptr=*u8, b_scale_ptr=*u8, c_ptr=*fp32, M=32, N=64, K=64, A_FORMAT='e5m2', B_FORMAT='e2m1'"
# kiln-variant: -n dot_scaled_tile -s "a_ptr=*bf16, a_scale_ptr=*u8, b_ptr=*fp8e4nv, b_scale_ptr=*u8, c_ptr=*fp32, M=64, N=32, K=64, A_FORMAT='bf16', B_FORMAT='e4m3', B_SCALED=False"
# kiln-variant: -n dot_scaled_tile -s "a_ptr=*fp16, a_scale_ptr=*u8, b_ptr=*u8, b_scale_ptr=*u8, c_ptr=*fp32, M=64, N=64, K=64, A_FORMAT='fp16', B_FORMAT='e2m1', FAST_MATH=True"
# kiln-variant: -n dot_scaled_matmul -s "a_ptr=*fp8e4nv:16, a_scale_ptr=*u8:16, b_ptr=*u8:16, b_scale_ptr=*u8:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=128"
# kiln-covers: dot_scaled_tile: tl.dot_scaled; string argument
# kiln-covers: dot_scaled_matmul: tl.dot_scaled; for over tl.range
import triton
import triton.language as tl


@triton.jit
def dot_scaled_tile(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr,
                    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                    A_FORMAT: tl.constexpr, B_FORMAT: tl.constexpr,
                    B_SCALED: tl.constexpr = True, FAST_MATH: tl.constexpr = False):
    # a is [M, K] and b is [K, N] in elements; e2m1 holds two per byte along K.
    KA: tl.constexpr = K // 2 if A_FORMAT == "e2m1" else K
    KB: tl.constexpr = K // 2 if B_FORMAT == "e2m1" else K
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(b_ptr + tl.arange(0, KB)[:, None] * N + tl.arange(0, N)[None, :])
    # Scales: [M, K / 32] for a and [N, K / 32] for b (not transposed).
    a_scale = tl.load(a_scale_ptr + tl.arange(0, M)[:, None] * (K // 32)
                      + tl.arange(0, K // 32)[None, :])
    if B_SCALED:
        b_scale = tl.load(b_scale_ptr + tl.arange(0, N)[:, None] * (K // 32)
                          + tl.arange(0, K // 32)[None, :])
    else:
        b_scale = None
    acc = tl.full((M, N), 1.0, tl.float32)
    acc = tl.dot_scaled(a, a_scale, A_FORMAT, b, b_scale, B_FORMAT, acc, fast_math=FAST_MATH)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], acc)


@triton.jit
def dot_scaled_matmul(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # a: e4m3 [M, K] row-major; b: e2m1 [K / 2, N] bytes; scales [M, K / 32]
    # and [N, K / 32] row-major.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rkb = tl.arange(0, BK // 2)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=2):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k0 // 2 + rkb)[:, None] * N + rn[None, :])
        sa = tl.load(a_scale_ptr + rm[:, None] * (K // 32) + (k0 // 32 + rs)[None, :],
                     mask=rm[:, None] < M, other=127)
        sb = tl.load(b_scale_ptr + rn[:, None] * (K // 32) + (k0 // 32 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, "e4m3", b, sb, "e2m1", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
