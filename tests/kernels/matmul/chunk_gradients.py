# Gradients of one chunk of a linear-attention layer, as FLA's backward
# kernels compute them (chunk_bwd_kernel_dqkwg): several dots read the same
# tiles and none reads another's result, a tile's product is summed whole,
# and decays are applied as exp2 of a difference of one vector's broadcasts.
# Kiln stages the three independent dots together (one barrier, the wgmmas
# issued back to back), sums the product where its elements are, and
# computes the decays in the accumulator's layout instead of converting a
# 64 x 64 tile there.
#
# kiln-variant: -n chunk_gradients -s "q_ptr=*bf16:16, k_ptr=*bf16:16, v_ptr=*bf16:16, g_ptr=*fp32:16, h_ptr=*bf16:16, do_ptr=*bf16:16, dh_ptr=*bf16:16, dq_ptr=*bf16:16, dk_ptr=*bf16:16, dg_ptr=*fp32:16, T=i32, scale=fp32, K=64, V=64, BT=64"
# kiln-covers: chunk_gradients: tl.dot
import triton
import triton.language as tl


@triton.jit
def chunk_gradients(q_ptr, k_ptr, v_ptr, g_ptr, h_ptr, do_ptr, dh_ptr, dq_ptr, dk_ptr, dg_ptr, T, scale,
                    K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
    # q, k [T, K]; v, do [T, V] (bf16); g [T] fp32 (log2 decays, falling);
    # h, dh [chunks, K, V] bf16, read as V x K tiles (down their columns);
    # dq, dk [T, K] bf16 and dg [T] fp32 out. One program per chunk.
    c = tl.program_id(0)
    o_t = c * BT + tl.arange(0, BT)
    m_t = o_t < T
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    v = tl.load(v_ptr + o_t[:, None] * V + o_v[None, :], mask=m_t[:, None], other=0.0)
    do = tl.load(do_ptr + o_t[:, None] * V + o_v[None, :], mask=m_t[:, None], other=0.0)
    state = c * K * V + o_v[:, None] + o_k[None, :] * V
    h = tl.load(h_ptr + state)
    dh = tl.load(dh_ptr + state)
    h_dh = tl.sum(h.to(tl.float32) * dh.to(tl.float32))
    ds = tl.dot(do, tl.trans(v))
    dq = tl.dot(do, h)
    dk = tl.dot(v, dh)

    g = tl.load(g_ptr + o_t, mask=m_t, other=0.0)
    g_last = tl.load(g_ptr + tl.minimum(c * BT + BT, T) - 1)
    k = tl.load(k_ptr + o_t[:, None] * K + o_k[None, :], mask=m_t[:, None], other=0.0)
    q = tl.load(q_ptr + o_t[:, None] * K + o_k[None, :], mask=m_t[:, None], other=0.0)
    dq = dq * tl.exp2(g)[:, None] * scale
    dk = dk * tl.where(m_t, tl.exp2(g_last - g), 0)[:, None]
    total = h_dh * tl.exp2(g_last) + tl.sum(dk * k)
    causal = (o_t[:, None] >= o_t[None, :]) & m_t[:, None] & m_t[None, :]
    ds = tl.where(causal, ds * tl.exp2(g[:, None] - g[None, :]), 0).to(tl.bfloat16)
    dq = tl.dot(ds, k, dq)
    dk = tl.dot(tl.trans(ds), q, dk)
    dg = tl.sum(dq * q, axis=1) - tl.sum(dk * k, axis=1)
    dg = tl.where(o_t < tl.minimum(c * BT + BT, T) - 1, dg, dg + total)
    tl.store(dq_ptr + o_t[:, None] * K + o_k[None, :], dq.to(tl.bfloat16), mask=m_t[:, None])
    tl.store(dk_ptr + o_t[:, None] * K + o_k[None, :], dk.to(tl.bfloat16), mask=m_t[:, None])
    tl.store(dg_ptr + o_t, dg, mask=m_t)
