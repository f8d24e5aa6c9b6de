# Float vectors loaded in a tensor-core loop beside its operand tiles, which
# Kiln's pipeliner copies with the tiles into rings of their own (as 1 x N
# rows or N x 1 columns of the layouts they are sliced from) and reads back
# where they were loaded.
#
# `decayed_chunk_state`: a chunked scan's state update, as Mamba-2's
# chunk_state computes it: s[n, k] = sum over t of x[t, n] * 2^g[t] * b[t, k],
# the decays g a vector of each chunk that scales the a operand (a row of
# the operand's layout) and is also summed as it is (the same values in a
# 1-D layout: a second ring). T need not divide by BT: the last chunk's
# rows past T are masked.
# `row_decayed_scores`: attention backward's form, a row of statistics
# subtracted from the scores (in the accumulator's layout) that become the
# next dot's a in registers, beside a column of scales applied to the
# carried accumulator only: both stay in registers, loaded ahead.
#
# kiln-variant: -n decayed_chunk_state -s "x_ptr=*fp16:16, b_ptr=*fp16:16, g_ptr=*fp32:16, s_ptr=*fp32:16, gsum_ptr=*fp32:16, T=i32, BN=64, BK=64, BT=64, num_stages=2"
# kiln-variant: -n decayed_chunk_state -s "x_ptr=*fp16:16, b_ptr=*fp16:16, g_ptr=*fp32:16, s_ptr=*fp32:16, gsum_ptr=*fp32:16, T=i32, BN=64, BK=64, BT=32, num_stages=3"
# kiln-variant: -n row_decayed_scores -s "q_ptr=*fp16:16, k_ptr=*fp16:16, m_ptr=*fp32:16, w_ptr=*fp32:16, dk_ptr=*fp32:16, n=i32, num_stages=3"
import triton
import triton.language as tl


@triton.jit
def decayed_chunk_state(x_ptr, b_ptr, g_ptr, s_ptr, gsum_ptr, T, BN: tl.constexpr,
                        BK: tl.constexpr, BT: tl.constexpr):
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rt = tl.arange(0, BT)
    acc = tl.zeros((BN, BK), dtype=tl.float32)
    for c in range(0, tl.cdiv(T, BT)):
        t = c * BT + rt
        live = t < T
        g = tl.load(g_ptr + t, mask=live, other=0.0)
        # x [T, BN] read as its transpose [BN, BT]; b [T, BK].
        x = tl.load(x_ptr + t[None, :] * BN + rn[:, None], mask=live[None, :], other=0.0)
        b = tl.load(b_ptr + t[:, None] * BK + rk[None, :], mask=live[:, None], other=0.0)
        xs = (x * tl.exp2(g)[None, :]).to(tl.float16)
        acc = tl.dot(xs, b, acc)
        tl.store(gsum_ptr + c, tl.sum(g, axis=0))
    tl.store(s_ptr + rn[:, None] * BK + rk[None, :], acc)


@triton.jit
def row_decayed_scores(q_ptr, k_ptr, m_ptr, w_ptr, dk_ptr, n):
    # k [64, 64]; q [n, 64] read 32 rows at a time as qT [64, 32]; m [n];
    # w [n // 32, 64]: per block, a scale of each of dk's rows.
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 32):
        qT = tl.load(q_ptr + (start + rm)[None, :] * 64 + rd[:, None])
        m = tl.load(m_ptr + start + rm)
        w = tl.load(w_ptr + (start // 32) * 64 + rn)
        p = tl.exp2(tl.dot(k, qT) - m[None, :]).to(tl.float16)
        dk = dk * w[:, None] + tl.dot(p, tl.trans(qT))
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)
