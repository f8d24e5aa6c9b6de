# A state carried from chunk to chunk through tensor-core dots, as the
# delta rule's chunked forward runs it (FLA's chunk_gated_delta_rule_fwd_h):
# each chunk stores the state, subtracts w @ state (the state rounded to
# bf16) from its values, and adds kᵀ @ those new values to the state. Both
# dots have an operand computed in the loop from carried values or the
# other dot's result; their loaded operands (w, and k read down its
# columns) and the values are still copied ahead of the iteration.
#
# delta_rule_state_halves holds a state of 128 key rows as two halves
# (FLA's K = 128 in blocks of 64): v_new = v - w1 @ h1 - w2 @ h2, the
# second dot accumulating the first's result.
#
# kiln-variant: -n delta_rule_state -s "k_ptr=*bf16:16, w_ptr=*bf16:16, v_ptr=*bf16:16, h_ptr=*bf16:16, v_new_ptr=*bf16:16, final_ptr=*fp32:16, T=i32, stride_t=i32:16, K=64, BV=32, BT=64"
# kiln-variant: -n delta_rule_state_halves -s "k_ptr=*bf16:16, w_ptr=*bf16:16, v_ptr=*bf16:16, v_new_ptr=*bf16:16, final_ptr=*fp32:16, T=i32, stride_t=i32:16, BV=32, BT=64"
# kiln-covers: delta_rule_state: tl.dot
# kiln-covers: delta_rule_state_halves: tl.dot
import triton
import triton.language as tl


@triton.jit
def delta_rule_state(k_ptr, w_ptr, v_ptr, h_ptr, v_new_ptr, final_ptr, T, stride_t, K: tl.constexpr,
                     BV: tl.constexpr, BT: tl.constexpr):
    # k, w [T, K] (rows stride_t apart), v [T, BV] bf16; h [chunks, K, BV]
    # and v_new [T, BV] bf16 out; final [K, BV] fp32 out.
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, BV)
    h = tl.zeros([K, BV], dtype=tl.float32)
    for t in range(0, T, BT):
        o_t = t + tl.arange(0, BT)
        m_t = o_t < T
        tl.store(h_ptr + (t // BT) * K * BV + o_k[:, None] * BV + o_v[None, :], h.to(tl.bfloat16))
        w = tl.load(w_ptr + o_t[:, None] * stride_t + o_k[None, :], mask=m_t[:, None], other=0.0)
        v = tl.load(v_ptr + o_t[:, None] * BV + o_v[None, :], mask=m_t[:, None], other=0.0)
        v_new = v - tl.dot(w, h.to(tl.bfloat16))
        tl.store(v_new_ptr + o_t[:, None] * BV + o_v[None, :], v_new.to(tl.bfloat16), mask=m_t[:, None])
        k = tl.load(k_ptr + o_k[:, None] + o_t[None, :] * stride_t, mask=m_t[None, :], other=0.0)
        h += tl.dot(k, v_new.to(tl.bfloat16))
    tl.store(final_ptr + o_k[:, None] * BV + o_v[None, :], h)


@triton.jit
def delta_rule_state_halves(k_ptr, w_ptr, v_ptr, v_new_ptr, final_ptr, T, stride_t, BV: tl.constexpr,
                            BT: tl.constexpr):
    # k, w [T, 128] (rows stride_t apart), v [T, BV] bf16; v_new [T, BV]
    # bf16 out; final [128, BV] fp32 out.
    o_k = tl.arange(0, 64)
    o_v = tl.arange(0, BV)
    h1 = tl.zeros([64, BV], dtype=tl.float32)
    h2 = tl.zeros([64, BV], dtype=tl.float32)
    for t in range(0, T, BT):
        o_t = t + tl.arange(0, BT)
        m_t = o_t < T
        w1 = tl.load(w_ptr + o_t[:, None] * stride_t + o_k[None, :], mask=m_t[:, None], other=0.0)
        w2 = tl.load(w_ptr + o_t[:, None] * stride_t + 64 + o_k[None, :], mask=m_t[:, None], other=0.0)
        b_v = tl.dot(w1, h1.to(tl.bfloat16))
        b_v += tl.dot(w2, h2.to(tl.bfloat16))
        v = tl.load(v_ptr + o_t[:, None] * BV + o_v[None, :], mask=m_t[:, None], other=0.0)
        v_new = v - b_v
        tl.store(v_new_ptr + o_t[:, None] * BV + o_v[None, :], v_new.to(tl.bfloat16), mask=m_t[:, None])
        k1 = tl.load(k_ptr + o_k[:, None] + o_t[None, :] * stride_t, mask=m_t[None, :], other=0.0)
        k2 = tl.load(k_ptr + 64 + o_k[:, None] + o_t[None, :] * stride_t, mask=m_t[None, :], other=0.0)
        h1 += tl.dot(k1, v_new.to(tl.bfloat16))
        h2 += tl.dot(k2, v_new.to(tl.bfloat16))
    tl.store(final_ptr + o_k[:, None] * BV + o_v[None, :], h1)
    tl.store(final_ptr + 64 * BV + o_k[:, None] * BV + o_v[None, :], h2)
