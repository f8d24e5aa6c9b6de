# tf32 dots that no pipelined loop feeds take the staged mma.sync lowering
# (compiler/conversion/DotToLLVM.cpp): each operand is written to shared
# memory, then read a fragment word at a time. tf32 fragments hold one
# element a word, so each operand is staged with its rows along the
# dimension its registers run: b loaded with N contiguous (a row-major
# weight) is stored in rows along K, four elements a store, a loaded with M
# contiguous (aᵀ given) the same way. `rows_then_columns` reads a and b
# row-major, `columns_then_rows` both transposed; `scores_times_values` is
# attention's p @ v at 32 rows over 4 warps (too few for wgmma): p comes
# from an accumulator, v with N contiguous; its loop holds the loop over
# q @ kᵀ's chunks of D, as FBGEMM's jagged attention's does, so nothing
# pipelines v. Large K is staged in chunks. `decayed_state` is Lightning
# Attention-2's per-block state kᵀ v: both operands computed in a
# pipelined loop (kᵀ, M contiguous, scaled by a decay; v widened from
# bf16) and written each iteration into staging tiles in their registers'
# order, read by mma.sync.
#
# kiln-variant: -n rows_then_columns -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=32, N=128, K=32"
# kiln-variant: -n rows_then_columns -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=64, N=64, K=128"
# kiln-variant: -n columns_then_rows -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=32, N=64, K=64"
# kiln-variant: -n columns_then_rows -s "a_ptr=*fp32:16, b_ptr=*fp32:16, c_ptr=*fp32:16, M=16, N=8, K=32"
# kiln-variant: -n scores_times_values -s "q_ptr=*fp32:16, k_ptr=*fp32:16, v_ptr=*fp32:16, o_ptr=*fp32:16, S=i32, M=32, N=32, D=128, CHUNK=32"
# kiln-variant: -n decayed_state -s "k_ptr=*bf16:16, v_ptr=*bf16:16, s_ptr=*fp32, kv_ptr=*fp32:16, D=64, E=64, CHUNK=32, CHUNKS=4"
# kiln-covers: rows_then_columns: tl.dot
# kiln-covers: columns_then_rows: tl.dot
# kiln-covers: scores_times_values: tl.dot; tl.exp; tl.max; tl.sum
# kiln-covers: decayed_state: tl.dot; tl.exp
import triton
import triton.language as tl


@triton.jit
def rows_then_columns(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                      K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def columns_then_rows(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                      K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rk[None, :] * M + rm[:, None])
    b = tl.load(b_ptr + rn[None, :] * K + rk[:, None])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def scores_times_values(q_ptr, k_ptr, v_ptr, o_ptr, S, M: tl.constexpr,
                        N: tl.constexpr, D: tl.constexpr,
                        CHUNK: tl.constexpr):
    rm = tl.program_id(0) * M + tl.arange(0, M)
    rd = tl.arange(0, D)
    rc = tl.arange(0, CHUNK)
    acc = tl.zeros((M, D), dtype=tl.float32)
    m_i = tl.zeros((M,), dtype=tl.float32) - float("inf")
    l_i = tl.zeros((M,), dtype=tl.float32)
    for start in range(0, S, N):
        rn = start + tl.arange(0, N)
        s = tl.zeros((M, N), dtype=tl.float32)
        for c in range(0, D, CHUNK):
            q = tl.load(q_ptr + rm[:, None] * D + (c + rc)[None, :])
            kt = tl.load(k_ptr + rn[None, :] * D + (c + rc)[:, None])
            s += tl.dot(q, kt)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc / l_i[:, None])


@triton.jit
def decayed_state(k_ptr, v_ptr, s_ptr, kv_ptr, D: tl.constexpr,
                  E: tl.constexpr, CHUNK: tl.constexpr, CHUNKS: tl.constexpr):
    block = tl.program_id(0)
    rc = tl.arange(0, CHUNK)
    rd = tl.arange(0, D)
    re = tl.arange(0, E)
    base = block * CHUNK * CHUNKS
    s = tl.load(s_ptr)
    kv = tl.zeros((D, E), dtype=tl.float32)
    for j in range(CHUNKS):
        rows = base + j * CHUNK + rc
        kt = tl.load(k_ptr + rows[None, :] * D + rd[:, None]).to(tl.float32)
        v = tl.load(v_ptr + rows[:, None] * E + re[None, :]).to(tl.float32)
        decay = tl.exp(-s * (CHUNK * CHUNKS - (j * CHUNK + rc[None, :])))
        kv += tl.dot(kt * decay, v)
    tl.store(kv_ptr + block * D * E + rd[:, None] * E + re[None, :], kv)
