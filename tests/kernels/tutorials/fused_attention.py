# Tutorial (our version): attention forward, O = softmax(Q K^T * scale) V, one
# program per (BLOCK_M query rows, batch*head). Keys and values stream through
# in BLOCK_N blocks with an online softmax (running row max m and row sum l,
# in base 2); with CAUSAL, blocks left of the diagonal run unmasked and the
# diagonal blocks masked. Also writes the log-sum-exp of each row.
#
# kiln-variant: -n attention_fwd -s "q_ptr=*fp16, k_ptr=*fp16, v_ptr=*fp16, o_ptr=*fp16, lse_ptr=*fp32, sm_scale=fp32, stride_qz=i64, stride_qh=i64, stride_qm=i64, stride_kz=i64, stride_kh=i64, stride_kn=i64, stride_vz=i64, stride_vh=i64, stride_vn=i64, stride_oz=i64, stride_oh=i64, stride_om=i64, H=i32, N_CTX=i32, HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=False, num_warps=4"
# kiln-variant: -n attention_fwd -s "q_ptr=*fp16, k_ptr=*fp16, v_ptr=*fp16, o_ptr=*fp16, lse_ptr=*fp32, sm_scale=fp32, stride_qz=i64, stride_qh=i64, stride_qm=i64, stride_kz=i64, stride_kh=i64, stride_kn=i64, stride_vz=i64, stride_vh=i64, stride_vn=i64, stride_oz=i64, stride_oh=i64, stride_om=i64, H=i32, N_CTX=i32, HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL=True, num_warps=8"
# kiln-variant: -n attention_fwd -s "q_ptr=*fp16, k_ptr=*fp16, v_ptr=*fp16, o_ptr=*fp16, lse_ptr=*fp32, sm_scale=fp32, stride_qz=i64, stride_qh=i64, stride_qm=i64, stride_kz=i64, stride_kh=i64, stride_kn=i64, stride_vz=i64, stride_vh=i64, stride_vn=i64, stride_oz=i64, stride_oh=i64, stride_om=i64, H=i32, N_CTX=i32, HEAD_DIM=512, BLOCK_M=64, BLOCK_N=64, CAUSAL=True, num_warps=8, num_stages=1"
# kiln-variant: -n attention_fwd -s "q_ptr=*bf16, k_ptr=*bf16, v_ptr=*bf16, o_ptr=*bf16, lse_ptr=*fp32, sm_scale=fp32, stride_qz=i64, stride_qh=i64, stride_qm=i64, stride_kz=i64, stride_kh=i64, stride_kn=i64, stride_vz=i64, stride_vh=i64, stride_vn=i64, stride_oz=i64, stride_oh=i64, stride_om=i64, H=i32, N_CTX=i32, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=32, CAUSAL=True"
# kiln-covers: attention_fwd: helper returning a tuple; tuple unpacking; tl.dot; tl.dot(acc=); tl.exp2; tl.log2; tl.full; tl.multiple_of; tl.static_assert; tl.max; float("inf"); bool literal
import triton
import triton.language as tl

LOG2_E = tl.constexpr(1.4426950408889634)


@triton.jit
def _attend(acc, m_i, l_i, q, k_base, v_base, stride_kn, stride_vn, lo, hi, offs_m, offs_d,
            qk_scale, ON_DIAGONAL: tl.constexpr, BLOCK_N: tl.constexpr):
    for n_start in tl.range(lo, hi, BLOCK_N):
        n0 = tl.multiple_of(n_start, BLOCK_N)
        offs_n = n0 + tl.arange(0, BLOCK_N)
        kt = tl.load(k_base + offs_n[None, :] * stride_kn + offs_d[:, None])
        s = tl.dot(q, kt) * qk_scale
        if ON_DIAGONAL:
            s = tl.where(offs_m[:, None] >= offs_n[None, :], s, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        rescale = tl.exp2(m_i - m_new)
        l_i = l_i * rescale + tl.sum(p, 1)
        v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc * rescale[:, None])
        m_i = m_new
    return acc, m_i, l_i


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale,
                  stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
                  stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om,
                  H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  CAUSAL: tl.constexpr):
    tl.static_assert(BLOCK_M % BLOCK_N == 0, "BLOCK_M must be a multiple of BLOCK_N")
    m_block = tl.program_id(0)
    zh = tl.program_id(1)
    z = zh // H
    h = zh % H
    q_base = q_ptr + z * stride_qz + h * stride_qh
    k_base = k_ptr + z * stride_kz + h * stride_kh
    v_base = v_ptr + z * stride_vz + h * stride_vh
    o_base = o_ptr + z * stride_oz + h * stride_oh

    offs_m = m_block * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * LOG2_E

    if CAUSAL:
        diag = m_block * BLOCK_M
        acc, m_i, l_i = _attend(acc, m_i, l_i, q, k_base, v_base, stride_kn, stride_vn, 0, diag,
                                offs_m, offs_d, qk_scale, False, BLOCK_N)
        acc, m_i, l_i = _attend(acc, m_i, l_i, q, k_base, v_base, stride_kn, stride_vn, diag,
                                diag + BLOCK_M, offs_m, offs_d, qk_scale, True, BLOCK_N)
    else:
        acc, m_i, l_i = _attend(acc, m_i, l_i, q, k_base, v_base, stride_kn, stride_vn, 0, N_CTX,
                                offs_m, offs_d, qk_scale, ON_DIAGONAL=False, BLOCK_N=BLOCK_N)
    lse = m_i + tl.log2(l_i)
    out = acc / l_i[:, None]
    tl.store(lse_ptr + zh * N_CTX + offs_m, lse)
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :], out.to(o_ptr.dtype.element_ty))
