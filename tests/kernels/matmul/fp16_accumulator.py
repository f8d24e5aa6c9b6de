# fp16 accumulators on the tensor cores: tl.dot(..., out_dtype=tl.float16)
# on fp16 operands sums in fp16, as upstream runs it (wgmma's and
# mma.sync's f16 accumulators, two sums to a register). gemlite's GEMMs
# carry such an accumulator through the K loop (acc_dtype=tl.float16);
# SageAttention adds an fp16 product of each step into an fp32 sum. K need
# not divide by BK: the last step is masked. A batched (3-D) fp16 dot takes
# mma.sync's f16 accumulator per batch; one with M below 16 is a product
# and a sum in fp32, rounded once.
#
# kiln-variant: -n carried_fp16_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=128, BK=64, num_stages=4"
# kiln-variant: -n carried_fp16_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=32, num_warps=4, num_stages=3"
# kiln-variant: -n fp16_steps_fp32_sum -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=64, BK=64, num_warps=8, num_stages=3"
# kiln-variant: -n batched_fp16_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, B=4, M=32, N=64, K=64"
# kiln-variant: -n thin_fp16_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=8, N=64, K=64"
# kiln-covers: carried_fp16_matmul: tl.dot(out_dtype=); tl.dot(acc=); tl.float16
# kiln-covers: fp16_steps_fp32_sum: tl.dot(out_dtype=); tl.float16
# kiln-covers: batched_fp16_dot: tl.dot(out_dtype=); tl.float16
# kiln-covers: thin_fp16_dot: tl.dot(out_dtype=); tl.float16
import triton
import triton.language as tl


@triton.jit
def carried_fp16_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # c (fp16) = a (M x K) @ b (K x N), row-major, summed in fp16.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc=acc, out_dtype=tl.float16)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def fp16_steps_fp32_sum(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Each step's product is an fp16 dot; the steps add up in fp32, scaled
    # down as attention rescales its accumulator.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = acc * 0.75
        acc += tl.dot(a, b, out_dtype=tl.float16)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def batched_fp16_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rb * M * K + rm * K + rk[None, None, :])
    b = tl.load(b_ptr + rb * K * N + rk[None, :, None] * N + rn)
    tl.store(c_ptr + rb * M * N + rm * N + rn, tl.dot(a, b, out_dtype=tl.float16))


@triton.jit
def thin_fp16_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.float16))
