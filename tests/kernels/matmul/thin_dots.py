# tl.dot with M or N under 16, large enough that a product and a sum in
# registers would not fit (8 x 32 x 64 at 4 warps spilled): the operands'
# rows (columns) repeated up to 16 for the tensor cores, one copy of each
# result row (column) kept. Accumulators carried in, out_dtype, int8, tf32,
# fp8 and batched forms (batched dots, and 2-D ones of 8 rows, are not
# padded: their mma tiles hold the thin shape repeated); matvec
# (gather_thin_dot_wide_rand.py) stays a product and a sum.
#
# kiln-variant: -n thin_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=8, N=32, K=64"
# kiln-variant: -n thin_dot -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, M=4, N=128, K=64"
# kiln-variant: -n thin_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=64, N=8, K=128"
# kiln-variant: -n thin_dot_i8 -s "a_ptr=*i8:16, b_ptr=*i8:16, c_ptr=*i32:16, M=8, N=64, K=64"
# kiln-variant: -n thin_dot -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=2, N=128, K=64"
# kiln-variant: -n thin_dot_f16_out -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=8, N=64, K=128"
# kiln-variant: -n thin_batched_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, B=2, M=4, N=64, K=64"
# kiln-covers: thin_dot: tl.dot with M or N under 16; tl.dot(acc=)
# kiln-covers: thin_dot_i8: tl.dot with M or N under 16; tl.dot(out_dtype=)
# kiln-covers: thin_dot_f16_out: tl.dot with M or N under 16; tl.dot(out_dtype=)
# kiln-variant: -n thin_batched_dot -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, B=4, M=4, N=4, K=64, num_warps=1"
# kiln-variant: -n thin_batched_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, B=2, M=8, N=8, K=128"
# kiln-variant: -n thin_batched_dot -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, B=4, M=16, N=4, K=64"
# kiln-variant: -n thin_batched_dot -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*fp32:16, B=4, M=4, N=8, K=64, num_warps=1"
# kiln-variant: -n thin_batched_dot_i8 -s "a_ptr=*i8:16, b_ptr=*i8:16, c_ptr=*i32:16, B=4, M=2, N=64, K=64"
# kiln-variant: -n thin_batched_dot_loop -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, B=16, M=4, N=4, K=256, BK=64"
# kiln-variant: -n thin_batched_dot_loop -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, B=8, M=4, N=2, K=128, BK=64, num_warps=1"
# kiln-covers: thin_batched_dot: tl.dot with M or N under 16
# kiln-covers: thin_batched_dot_i8: tl.dot with M or N under 16; tl.dot(out_dtype=)
# kiln-covers: thin_batched_dot_loop: tl.dot with M or N under 16; tl.dot(acc=)
# kiln-variant: -n thin_dot_loop -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=8, N=64, K=256, BK=32, A_COLUMNS=False, num_warps=2"
# kiln-variant: -n thin_dot_loop -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=8, N=16, K=256, BK=32, A_COLUMNS=False, num_warps=8"
# kiln-variant: -n thin_dot_loop -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, M=8, N=32, K=256, BK=64, A_COLUMNS=True"
# kiln-variant: -n thin_dot_loop -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=8, N=32, K=128, BK=32, A_COLUMNS=True"
# kiln-variant: -n thin_dot_loop -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*fp32:16, M=8, N=64, K=256, BK=64, A_COLUMNS=False"
# kiln-covers: thin_dot_loop: tl.dot with M or N under 16; tl.dot(acc=)
# kiln-variant: -n thin_chained_dots -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp32:16, n=i32:16, M=8, D=64, BN=32, num_warps=1"
# kiln-variant: -n thin_chained_dots -s "q_ptr=*fp8e5:16, k_ptr=*fp8e5:16, v_ptr=*fp8e5:16, o_ptr=*fp32:16, n=i32:16, M=8, D=64, BN=32, num_warps=2"
# kiln-covers: thin_chained_dots: tl.dot with M or N under 16; tl.dot
# kiln-variant: -n vector_dots -s "x_ptr=*bf16:16, y_ptr=*bf16:16, w_ptr=*bf16:16, rows_ptr=*fp32:16, cols_ptr=*fp32:16, total_ptr=*fp32:16, M=64, K=64, N=32"
# kiln-variant: -n batched_matvec -s "a_ptr=*fp16:16, x_ptr=*fp16:16, c_ptr=*fp32:16, B=4, M=16, K=64"
# kiln-covers: vector_dots: tl.dot with M or N under 16; tl.full
# kiln-covers: batched_matvec: tl.dot with M or N under 16
import triton
import triton.language as tl


@triton.jit
def thin_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, c))


@triton.jit
def thin_dot_i8(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # Upstream takes an int32 accumulator with out_dtype=tl.int32 only.
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, c, out_dtype=tl.int32))


@triton.jit
def thin_dot_f16_out(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.float16))


@triton.jit
def thin_batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                     K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rb * M * K + rm * K + rk[None, None, :])
    b = tl.load(b_ptr + rb * K * N + rk[None, :, None] * N + rn)
    tl.store(c_ptr + rb * M * N + rm * N + rn, tl.dot(a, b))


@triton.jit
def thin_batched_dot_i8(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                        K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rb * M * K + rm * K + rk[None, None, :])
    b = tl.load(b_ptr + rb * K * N + rk[None, :, None] * N + rn)
    c = tl.load(c_ptr + rb * M * N + rm * N + rn)
    tl.store(c_ptr + rb * M * N + rm * N + rn, tl.dot(a, b, c, out_dtype=tl.int32))


@triton.jit
def thin_batched_dot_loop(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                          K: tl.constexpr, BK: tl.constexpr):
    # The accumulator carried through a loop over K, as Transformer Engine's
    # mHC backward carries its [4, 4, 4] gradient.
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk = tl.arange(0, BK)
    acc = tl.zeros((B, M, N), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rb * M * K + rm * K + k + rk[None, None, :])
        b = tl.load(b_ptr + rb * K * N + (k + rk[None, :, None]) * N + rn)
        acc = tl.dot(a, b, acc=acc)
    tl.store(c_ptr + rb * M * N + rm * N + rn, acc)


@triton.jit
def thin_dot_loop(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                  BK: tl.constexpr, A_COLUMNS: tl.constexpr):
    # A decode step's GEMM: 8 rows of a over a loop along K, the tiles
    # copied ahead; a stored row-major, or column-major (its M contiguous).
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, BK)
    acc = tl.zeros((M, N), dtype=tl.float32)
    for k in range(0, K, BK):
        if A_COLUMNS:
            a = tl.load(a_ptr + (k + rk[None, :]) * M + rm[:, None])
        else:
            a = tl.load(a_ptr + rm[:, None] * K + k + rk[None, :])
        b = tl.load(b_ptr + (k + rk[:, None]) * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def thin_chained_dots(q_ptr, k_ptr, v_ptr, o_ptr, n, M: tl.constexpr, D: tl.constexpr,
                      BN: tl.constexpr):
    # Attention-shaped chain at 8 query rows (a decode step's grouped
    # heads): p = q @ k, then p @ v with p computed in registers.
    rm = tl.arange(0, M)
    rd = tl.arange(0, D)
    rn = tl.arange(0, BN)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((M, D), dtype=tl.float32)
    for s in range(0, n, BN):
        k = tl.load(k_ptr + (s + rn[None, :]) * D + rd[:, None])
        p = tl.dot(q, k)
        p = tl.exp(p - tl.max(p, 1)[:, None])
        v = tl.load(v_ptr + (s + rn[:, None]) * D + rd[None, :])
        acc += tl.dot(p.to(v.dtype), v)
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc)


@triton.jit
def vector_dots(x_ptr, y_ptr, w_ptr, rows_ptr, cols_ptr, total_ptr, M: tl.constexpr,
                K: tl.constexpr, N: tl.constexpr):
    # Matrix-vector products as Mamba-3's backward takes them: row sums of
    # an element-wise product by a column of ones (N = 1), a row of ones
    # times that column (M = N = 1), and a row times a matrix (M = 1).
    rm = tl.arange(0, M)
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * K + rk[None, :])
    y = tl.load(y_ptr + rm[:, None] * K + rk[None, :])
    rows = tl.dot(x * y, tl.full([K, 1], 1, dtype=x.dtype))
    tl.store(rows_ptr + rm, rows.reshape(M))
    total = tl.dot(tl.full([1, M], 1, dtype=tl.float32), rows)
    tl.store(total_ptr + tl.arange(0, 1), total.reshape(1))
    w = tl.load(w_ptr + rk[:, None] * N + rn[None, :])
    cols = tl.dot(tl.load(x_ptr + rk)[None, :], w)
    tl.store(cols_ptr + rn[None, :], cols)


@triton.jit
def batched_matvec(a_ptr, x_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rb * M * K + rm * K + rk[None, None, :])
    x = tl.load(x_ptr + rb * K + rk[None, :, None])
    c = tl.load(c_ptr + rb * M + rm)
    tl.store(c_ptr + rb * M + rm, tl.dot(a, x, c))
