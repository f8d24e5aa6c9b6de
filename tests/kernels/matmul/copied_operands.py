# Dot operands loaded from global memory and copied into shared tiles with
# cp.async where they are loaded, as Kiln does on sm_90a for dots outside
# pipelined loops, and rings read back into registers in two-stage loops.
#
# `reread_operands`: q and k feed a dot outside any loop and are read again
# elsewhere: k summed before the dot (read back in its own layout), q
# multiplied into the product after it (read back in the accumulator's);
# k is read transposed (a view of its tile). Rows past T are masked.
# `decayed_state`: a recurrent state h = h * decay + (k * gates)^T-style
# product over chunks of T, as FLA's chunk_h computes it: the gated keys
# are computed in registers from read-back tiles, at two stages (rings of
# both slots, copies a whole iteration ahead) and at three.
# `one_stage_attention`: q @ k^T, a row softmax and p @ v in a loop of one
# stage: v's copy is issued at the iteration's top, ahead of the first dot
# and the reductions, and waited for before the second dot.
# `summed_and_transposed`: a loop of one stage whose tile feeds two dots,
# as it is and transposed, and a sum: one copy per iteration, the second
# dot reading a transposed view of it.
#
# kiln-variant: -n reread_operands -s "q_ptr=*bf16:16, k_ptr=*bf16:16, x_ptr=*fp32:16, s_ptr=*fp32, T=i32, BT=64, D=128"
# kiln-variant: -n decayed_state -s "k_ptr=*bf16:16, g_ptr=*fp32:16, v_ptr=*bf16:16, h_ptr=*fp32:16, T=i32, K=64, V=64, BT=64, num_stages=2"
# kiln-variant: -n decayed_state -s "k_ptr=*bf16:16, g_ptr=*fp32:16, v_ptr=*bf16:16, h_ptr=*fp32:16, T=i32, K=64, V=64, BT=64, num_stages=3"
# kiln-variant: -n summed_and_transposed -s "q_ptr=*fp16:16, k_ptr=*fp16:16, dk_ptr=*fp32:16, s_ptr=*fp32, n=i32, num_stages=1"
# kiln-variant: -n one_stage_attention -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp32:16, n=i32, num_stages=1"
# kiln-covers: reread_operands: tl.dot; tl.trans; tl.sum
# kiln-covers: decayed_state: tl.dot; for over range
# kiln-covers: summed_and_transposed: tl.dot; tl.trans
# kiln-covers: one_stage_attention: tl.dot; tl.max; tl.sum; tl.exp
import triton
import triton.language as tl


@triton.jit
def reread_operands(q_ptr, k_ptr, x_ptr, s_ptr, T, BT: tl.constexpr, D: tl.constexpr):
    # q, k [T, D]; x [T, BT] per program's rows: (q @ k^T) * exp2(-row) * q[:, :BT];
    # s [programs]: the sum of the program's k rows.
    c = tl.program_id(0)
    o_t = c * BT + tl.arange(0, BT)
    m_t = o_t < T
    o_d = tl.arange(0, D)
    q = tl.load(q_ptr + o_t[:, None] * D + o_d[None, :], mask=m_t[:, None], other=0.0)
    k = tl.load(k_ptr + o_t[:, None] * D + o_d[None, :], mask=m_t[:, None], other=0.0)
    tl.store(s_ptr + c, tl.sum(k.to(tl.float32)))
    decay = tl.exp2(-(tl.arange(0, BT).to(tl.float32)) / BT)
    x = tl.dot(q, tl.trans(k)) * decay[:, None]
    q_head = tl.load(q_ptr + o_t[:, None] * D + tl.arange(0, BT)[None, :], mask=m_t[:, None], other=0.0)
    x = x * q_head.to(tl.float32)
    tl.store(x_ptr + o_t[:, None] * BT + tl.arange(0, BT)[None, :], x, mask=m_t[:, None])


@triton.jit
def decayed_state(k_ptr, g_ptr, v_ptr, h_ptr, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
    # k, g [T, K] (g: log2 gates, falling), v [T, V]; h [K, V] out (fp32).
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    h = tl.zeros([K, V], dtype=tl.float32)
    for i_t in range(tl.cdiv(T, BT)):
        o_t = i_t * BT + tl.arange(0, BT)
        m_t = o_t < T
        last = tl.minimum(i_t * BT + BT, T) - 1
        # [K, BT]: read down the columns of the [T, K] arrays.
        k = tl.load(k_ptr + o_k[:, None] + o_t[None, :] * K, mask=m_t[None, :], other=0.0)
        g = tl.load(g_ptr + o_k[:, None] + o_t[None, :] * K, mask=m_t[None, :], other=0.0)
        g_last = tl.load(g_ptr + last * K + o_k)
        v = tl.load(v_ptr + o_t[:, None] * V + o_v[None, :], mask=m_t[:, None], other=0.0)
        h *= tl.exp2(g_last)[:, None]
        k = (k * tl.exp2(g_last[:, None] - g)).to(k.dtype)
        h += tl.dot(k, v)
    tl.store(h_ptr + o_k[:, None] * V + o_v[None, :], h)


@triton.jit
def summed_and_transposed(q_ptr, k_ptr, dk_ptr, s_ptr, n):
    # k [64, 64]; q [n, 64], read 32 rows at a time as qT [64, 32];
    # dk = sum over blocks of (k @ qT) @ qT^T; s: the sum of every q.
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    total = tl.zeros((64, 32), dtype=tl.float32)
    qT_ptrs = q_ptr + rm[None, :] * 64 + rd[:, None]
    for start in range(0, n, 32):
        qT = tl.load(qT_ptrs)
        total += qT.to(tl.float32)
        s = tl.dot(k, qT) * 0.125
        dk += tl.dot(s.to(tl.float16), tl.trans(qT))
        qT_ptrs += 32 * 64
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)
    tl.store(s_ptr, tl.sum(total))


@triton.jit
def one_stage_attention(q_ptr, k_ptr, v_ptr, o_ptr, n):
    # q [64, 64]; k, v [n, 64]; o [64, 64] = softmax(q k^T) v over n keys,
    # n a multiple of 64 (rows past n masked anyway).
    r = tl.arange(0, 64)
    q = tl.load(q_ptr + r[:, None] * 64 + r[None, :])
    m_i = tl.full([64], float("-inf"), tl.float32)
    l_i = tl.zeros([64], dtype=tl.float32)
    acc = tl.zeros([64, 64], dtype=tl.float32)
    for start in range(0, n, 64):
        keys = start + r
        k = tl.load(k_ptr + keys[None, :] * 64 + r[:, None], mask=keys[None, :] < n, other=0.0)
        s = tl.dot(q, k) * 0.125
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + keys[:, None] * 64 + r[None, :], mask=keys[:, None] < n, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + r[:, None] * 64 + r[None, :], acc / l_i[:, None])
