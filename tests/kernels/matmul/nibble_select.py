# A weight-only GEMM whose loop picks each packed byte's low or high nibble
# with an `if` on the iteration, as GPT-QModel's GGUF Q4_K kernels do: two
# 32-row steps of K read one 32-row tile of bytes, the even step its low
# nibbles, the odd its high ones, scaled per step. The `if` computes the b
# operand from a tile loaded in the body (nothing in it touches memory),
# so the pipeliner still copies the byte tile ahead with cp.async. At 8
# rows (a decode step) the dot is thin and padded to the tensor cores' 16.
#
# kiln-variant: -n nibble_select_matmul -s "x_ptr=*fp16:16, q_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=8, BN=16, num_warps=2, num_stages=2"
# kiln-variant: -n nibble_select_matmul -s "x_ptr=*fp16:16, q_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=32, BN=64, num_warps=4, num_stages=3"
import triton
import triton.language as tl


@triton.jit
def nibble_select_matmul(x_ptr, q_ptr, s_ptr, out_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    # out = x @ w, x [M, K] fp16, w[k, n] = nibble(q[(k // 64) * 32 + k % 32, n], (k // 32) % 2)
    # * s[k // 32, n] - 8 * s[k // 32, n]: q [K // 2, N] u8, s [K // 32, N] fp16.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for step in range(0, K // 32):
        rk = step * 32 + tl.arange(0, 32)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        rows = (step // 2) * 32 + tl.arange(0, 32)
        packed = tl.load(q_ptr + rows[:, None] * N + rn[None, :])
        if step % 2 == 0:
            q = packed & 0x0F
        else:
            q = packed >> 4
        s = tl.load(s_ptr + step * N + rn)
        w = q.to(tl.float16) * s[None, :] - 8.0 * s[None, :]
        acc += tl.dot(x, w)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
