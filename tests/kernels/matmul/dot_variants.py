# tl.dot over the operand types Hopper supports, with an accumulator,
# input_precision (tf32, tf32x3, bf16x3, bf16x6, ieee) for fp32 inputs, in
# one tile and in a pipelined K loop, out_dtype, integer dot products, and
# batched 3-D dots in a K loop.
#
# kiln-variant: -n dot_tile -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=64, N=64, K=32"
# kiln-variant: -n dot_halves -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=64, N=128, K=64"
# kiln-variant: -n dot_tile -s "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*fp32, M=64, N=128, K=64"
# kiln-variant: -n dot_tile -s "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*fp32, M=64, N=64, K=64"
# kiln-variant: -n dot_tile -s "a_ptr=*fp8e5, b_ptr=*fp8e5, c_ptr=*fp32, M=64, N=64, K=64"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='tf32', M=32, N=32, K=32"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='tf32x3', M=32, N=32, K=32"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='ieee', M=32, N=32, K=32"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='bf16x3', M=32, N=32, K=32"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='bf16x6', M=32, N=32, K=32"
# kiln-variant: -n matmul_fp32_precision -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, PRECISION='tf32x3', BM=64, BN=64, BK=32"
# kiln-variant: -n matmul_fp32_precision -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, PRECISION='bf16x3', BM=64, BN=64, BK=32"
# kiln-variant: -n matmul_fp32_precision -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, PRECISION='bf16x6', BM=64, BN=64, BK=32, num_warps=8"
# kiln-variant: -n dot_batched -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, K=i32, B=2, BM=64, BN=32, BK=32"
# kiln-variant: -n dot_batched -s "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*fp32, K=i32, B=4, BM=16, BN=16, BK=16"
# kiln-variant: -n dot_batched -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, K=i32, B=8, BM=16, BN=32, BK=16, num_warps=8"
# kiln-variant: -n dot_batched -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, K=i32, B=2, BM=32, BN=32, BK=16"
# kiln-variant: -n dot_batched -s "a_ptr=*i8, b_ptr=*i8, c_ptr=*i32, K=i32, B=2, BM=32, BN=32, BK=32"
# kiln-variant: -n dot_batched -s "a_ptr=*fp8e5, b_ptr=*fp8e5, c_ptr=*fp32, K=i32, B=2, BM=32, BN=32, BK=32"
# kiln-variant: -n dot_fp16_out -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=64, N=64, K=64"
# kiln-variant: -n dot_int8 -s "a_ptr=*i8, b_ptr=*i8, c_ptr=*i32, M=64, N=64, K=64"
# kiln-variant: -n dot_transposed -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=64, N=64, K=64"
# kiln-covers: dot_tile: tl.dot; tl.dot(acc=); tl.float8e4nv; tl.float8e5; tl.bfloat16
# kiln-covers: dot_halves: tl.dot; tl.split; tl.permute
# kiln-covers: dot_fp32_precision: tl.dot(input_precision=); string argument
# kiln-covers: matmul_fp32_precision: tl.dot(input_precision=); tl.dot(acc=)
# kiln-covers: dot_batched: tl.dot(acc=); tl.zeros; tl.float8e5
# kiln-covers: dot_fp16_out: tl.dot(out_dtype=); tl.float16
# kiln-covers: dot_int8: tl.dot; tl.int8; tl.int32
# kiln-covers: dot_transposed: tl.trans; tl.dot; .T
import triton
import triton.language as tl


@triton.jit
def _tile(ptr, R: tl.constexpr, C: tl.constexpr):
    return tl.load(ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])


@triton.jit
def dot_tile(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = _tile(a_ptr, M, K)
    b = _tile(b_ptr, K, N)
    acc = tl.zeros((M, N), dtype=tl.float32)
    acc = tl.dot(a, b, acc=acc)
    acc += tl.dot(a, b)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], acc)


# The accumulator stored in two halves of its columns, as tutorial 09's
# EPILOGUE_SUBTILE does (the right half scaled, so that swapped halves show).
@triton.jit
def dot_halves(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    acc = tl.dot(_tile(a_ptr, M, K), _tile(b_ptr, K, N))
    lo, hi = tl.split(tl.permute(tl.reshape(acc, (M, 2, N // 2)), (0, 2, 1)))
    rows = tl.arange(0, M)[:, None] * N
    cols = tl.arange(0, N // 2)[None, :]
    tl.store(c_ptr + rows + cols, lo.to(tl.float16))
    tl.store(c_ptr + rows + N // 2 + cols, (hi * 0.5).to(tl.float16))


@triton.jit
def dot_fp32_precision(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr,
                       M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = _tile(a_ptr, M, K)
    b = _tile(b_ptr, K, N)
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


@triton.jit
def matmul_fp32_precision(a_ptr, b_ptr, c_ptr, M, N, K, PRECISION: tl.constexpr,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def dot_batched(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, BM)[None, :, None]
    rn = tl.arange(0, BN)[None, None, :]
    acc = tl.zeros((B, BM, BN), dtype=c_ptr.dtype.element_ty)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rb * (BM * K) + rm * K + k0 + tl.arange(0, BK)[None, None, :])
        b = tl.load(b_ptr + rb * (K * BN) + (k0 + tl.arange(0, BK)[None, :, None]) * BN + rn)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rb * (BM * BN) + rm * BN + rn, acc)


@triton.jit
def dot_fp16_out(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = _tile(a_ptr, M, K)
    b = _tile(b_ptr, K, N)
    c = tl.dot(a, b, out_dtype=tl.float16)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


@triton.jit
def dot_int8(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = _tile(a_ptr, M, K)
    b = _tile(b_ptr, K, N)
    c = tl.dot(a, b, out_dtype=tl.int32)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


@triton.jit
def dot_transposed(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = _tile(a_ptr, M, K)
    bt = _tile(b_ptr, N, K)                 # B stored as [N, K]
    c = tl.dot(a, tl.trans(bt)) + tl.dot(a, bt.T)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)
