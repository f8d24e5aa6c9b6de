# A tutorial-style fused attention forward (online softmax, one program per
# BM rows of one head), the kernel bench/attention_cubins.py runs under
# Triton's JIT and as Kiln cubins. Q, K, V and Out are [Z * H, N_CTX,
# HEAD_DIM], rows contiguous. With CAUSAL, row m attends to columns <= m.
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
             HEAD_DIM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
             CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    base = off_h.to(tl.int64) * stride_h
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = N_CTX
    if CAUSAL:
        hi = (start_m + 1) * BM
    for start_n in range(0, hi, BN):
        kt = tl.load(K + base + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, kt)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))


@triton.jit
def attn_fwd_block_ptr(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
                       HEAD_DIM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                       CAUSAL: tl.constexpr):
    # The same attention with block pointers (make_block_ptr, advance), as
    # attention kernels written for Triton 2.x load their tiles; K is read
    # through a column-major block of its transpose.
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    base = off_h.to(tl.int64) * stride_h
    q_block = tl.make_block_ptr(Q + base, (N_CTX, HEAD_DIM), (stride_m, 1), (start_m * BM, 0),
                                (BM, HEAD_DIM), (1, 0))
    kt_block = tl.make_block_ptr(K + base, (HEAD_DIM, N_CTX), (1, stride_m), (0, 0),
                                 (HEAD_DIM, BN), (0, 1))
    v_block = tl.make_block_ptr(V + base, (N_CTX, HEAD_DIM), (stride_m, 1), (0, 0),
                                (BN, HEAD_DIM), (1, 0))
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    q = tl.load(q_block)
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = N_CTX
    if CAUSAL:
        hi = (start_m + 1) * BM
    for start_n in range(0, hi, BN):
        kt = tl.load(kt_block)
        qk = tl.dot(q, kt)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_block)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
        kt_block = tl.advance(kt_block, (0, BN))
        v_block = tl.advance(v_block, (BN, 0))
    acc = acc / l_i[:, None]
    o_block = tl.make_block_ptr(Out + base, (N_CTX, HEAD_DIM), (stride_m, 1), (start_m * BM, 0),
                                (BM, HEAD_DIM), (1, 0))
    tl.store(o_block, acc.to(tl.float16))
