# tl.dot over the operand types Hopper supports, with an accumulator,
# input_precision (tf32, tf32x3, ieee) for fp32 inputs, out_dtype, and
# integer dot products.
#
# kiln-variant: -n dot_tile -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=64, N=64, K=32"
# kiln-variant: -n dot_tile -s "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*fp32, M=64, N=128, K=64"
# kiln-variant: -n dot_tile -s "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*fp32, M=64, N=64, K=64"
# kiln-variant: -n dot_tile -s "a_ptr=*fp8e5, b_ptr=*fp8e5, c_ptr=*fp32, M=64, N=64, K=64"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='tf32', M=32, N=32, K=32"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='tf32x3', M=32, N=32, K=32"
# kiln-variant: -n dot_fp32_precision -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, PRECISION='ieee', M=32, N=32, K=32"
# kiln-variant: -n dot_fp16_out -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=64, N=64, K=64"
# kiln-variant: -n dot_int8 -s "a_ptr=*i8, b_ptr=*i8, c_ptr=*i32, M=64, N=64, K=64"
# kiln-variant: -n dot_transposed -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=64, N=64, K=64"
# kiln-covers: dot_tile: tl.dot; tl.dot(acc=); tl.float8e4nv; tl.float8e5; tl.bfloat16
# kiln-covers: dot_fp32_precision: tl.dot(input_precision=); string argument
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


@triton.jit
def dot_fp32_precision(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr,
                       M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = _tile(a_ptr, M, K)
    b = _tile(b_ptr, K, N)
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


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
