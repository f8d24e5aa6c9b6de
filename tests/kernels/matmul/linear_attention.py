# Linear attention with a decaying state, in blocks of rows, as Lightning
# Attention-2's forward runs it: bf16 q, k and v widened to fp32, four tf32
# dots an iteration. Within a block, (q kᵀ masked by the causal decay) v;
# across blocks, q @ state, the state carried in the accumulator's layout
# and read back as the b of that dot before it takes kᵀ @ v. kv's dot reads
# its carried state as it is, the other operands are computed from tiles
# loaded in the loop: on sm_90a all four run on wgmma with the tiles copied
# ahead and the state staged each iteration.
#
# kiln-variant: -n decayed_linear_attention -s "q_ptr=*bf16:16, k_ptr=*bf16:16, v_ptr=*bf16:16, o_ptr=*bf16:16, decay=fp32, T=i32, D=128, E=32, BT=64"
# kiln-covers: decayed_linear_attention: tl.dot
import triton
import triton.language as tl


@triton.jit
def decayed_linear_attention(q_ptr, k_ptr, v_ptr, o_ptr, decay, T, D: tl.constexpr, E: tl.constexpr,
                             BT: tl.constexpr):
    # q, k [T, D] and v [T, E] bf16 of one head; o [T, E] bf16 out.
    rows = tl.arange(0, BT)
    o_d = tl.arange(0, D)
    o_e = tl.arange(0, E)
    q_decay = tl.exp(-decay * rows[:, None].to(tl.float32))
    k_decay = tl.exp(-decay * (BT - rows[None, :]).to(tl.float32))
    block_decay = tl.exp(-decay * BT)
    apart = rows[:, None] - rows[None, :]
    causal = tl.where(apart >= 0, tl.exp(-decay * apart.to(tl.float32)), 0.0)
    state = tl.zeros([D, E], dtype=tl.float32)
    for t in range(0, T, BT):
        r = t + rows
        inside = r < T
        q = tl.load(q_ptr + r[:, None] * D + o_d[None, :], mask=inside[:, None], other=0.0).to(tl.float32)
        kt = tl.load(k_ptr + r[None, :] * D + o_d[:, None], mask=inside[None, :], other=0.0).to(tl.float32)
        v = tl.load(v_ptr + r[:, None] * E + o_e[None, :], mask=inside[:, None], other=0.0).to(tl.float32)
        within = tl.dot(tl.dot(q, kt) * causal, v)
        across = tl.dot(q, state) * q_decay
        tl.store(o_ptr + r[:, None] * E + o_e[None, :], (within + across).to(tl.bfloat16), mask=inside[:, None])
        state = block_decay * state + tl.dot(kt * k_decay, v)
