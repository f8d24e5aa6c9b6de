# GEMMs whose global accesses fill the sectors they touch only in a layout
# of their own: an fp32 accumulator stored beside bf16 operand tiles (16
# bytes a thread, not the 32 the bf16 tiles' layout gives), an fp32 tile
# scaled and rounded to bf16 before the dot (copied 16 bytes a thread), and
# a b stored N x K loaded once, outside any loop (read 16 bytes at a time
# down its columns), and split-K's partial tiles added atomically (as many
# elements a thread as one vector atomic takes). Shapes as Mamba-2's chunk
# kernels use them. And an operand computed from two tiles whose addresses
# run down their columns (GLA's keys scaled by their decays, as FLA's
# chunk_h keeps them: K contiguous, tokens a row apart): copied 16 bytes at
# a time down the columns, not an element at a time along the rows.
#
# kiln-variant: -n decayed_state -s "x_ptr=*bf16:16, b_ptr=*bf16:16, out_ptr=*fp32:16, dt_ptr=*fp32:16, hdim=i32, dstate=i32, L=i32, stride_x_seq=i32:16, stride_x_hdim=i32:1, stride_b_seq=i32:16, stride_b_dstate=i32:1, stride_o_m=i32:16, stride_o_n=i32:1, BM=64, BN=128, BK=32"
# kiln-variant: -n scaled_rows_matmul -s "cb_ptr=*fp32:16, x_ptr=*bf16:16, out_ptr=*fp32:16, dt_ptr=*fp32:16, M=i32, N=i32, K=i32, stride_cb=i32:16, stride_x=i32:16, stride_out=i32:16, BM=128, BN=64, BK=64"
# kiln-variant: -n transposed_b_once -s "c_ptr=*bf16:16, s_ptr=*bf16:16, out_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_c=i32:16, stride_s_n=i32:16, stride_out=i32:16, BM=64, BN=64, BK=128"
# kiln-variant: -n split_k_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_a=i32:16, stride_b=i32:16, stride_c=i32:16, BM=128, BN=128, BK=64, SPLIT_K=4"
# kiln-variant: -n split_k_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32, N=i32, K=i32:16, stride_a=i32:16, stride_b=i32:16, stride_c=i32:16, BM=64, BN=128, BK=64, SPLIT_K=3"
# kiln-variant: -n decayed_keys_state -s "k_ptr=*bf16:16, gk_ptr=*fp32:16, v_ptr=*bf16:16, h_ptr=*fp32:16, T=i32, stride_t=i32:16, BK=64, BV=64, BT=64"
# kiln-covers: split_k_matmul: tl.dot; tl.atomic_add
# kiln-covers: decayed_keys_state: tl.dot; tl.exp2
# kiln-covers: decayed_state: tl.dot
# kiln-covers: scaled_rows_matmul: tl.dot
# kiln-covers: transposed_b_once: tl.dot
import triton
import triton.language as tl


@triton.jit
def decayed_state(x_ptr, b_ptr, out_ptr, dt_ptr, hdim, dstate, L, stride_x_seq, stride_x_hdim,
                  stride_b_seq, stride_b_dstate, stride_o_m, stride_o_n, BM: tl.constexpr,
                  BN: tl.constexpr, BK: tl.constexpr):
    # out = x^T @ (b * exp(-dt)[:, None]): x [L, hdim], b [L, dstate] bf16,
    # dt [L] fp32, out [hdim, dstate] fp32.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    x_ptrs = x_ptr + (offs_m[:, None] * stride_x_hdim + offs_k[None, :] * stride_x_seq)
    b_ptrs = b_ptr + (offs_n[None, :] * stride_b_dstate + offs_k[:, None] * stride_b_seq)
    dt_ptrs = dt_ptr + offs_k
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, L, BK):
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < hdim) & (offs_k[None, :] < L - k), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < L - k) & (offs_n[None, :] < dstate),
                    other=0.0).to(tl.float32)
        dt = tl.load(dt_ptrs, mask=offs_k < L - k, other=0.0)
        b *= tl.exp(-dt)[:, None]
        acc += tl.dot(x, b.to(tl.bfloat16))
        x_ptrs += BK * stride_x_seq
        b_ptrs += BK * stride_b_seq
        dt_ptrs += BK
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    out_ptrs = out_ptr + (offs_m[:, None] * stride_o_m + offs_n[None, :] * stride_o_n)
    tl.store(out_ptrs, acc, mask=(offs_m[:, None] < hdim) & (offs_n[None, :] < dstate))


@triton.jit
def scaled_rows_matmul(cb_ptr, x_ptr, out_ptr, dt_ptr, M, N, K, stride_cb, stride_x, stride_out,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # out = (cb * dt[None, :]).to(bf16) @ x: cb [M, K] fp32, dt [K] fp32,
    # x [K, N] bf16, out [M, N] fp32.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    cb_ptrs = cb_ptr + rm[:, None] * stride_cb + rk[None, :]
    x_ptrs = x_ptr + rk[:, None] * stride_x + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        cb = tl.load(cb_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        dt = tl.load(dt_ptr + k + rk, mask=rk < K - k, other=0.0)
        cb *= dt[None, :]
        x = tl.load(x_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(cb.to(tl.bfloat16), x)
        cb_ptrs += BK
        x_ptrs += BK * stride_x
    tl.store(out_ptr + rm[:, None] * stride_out + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def transposed_b_once(c_ptr, s_ptr, out_ptr, M, N, K, stride_c, stride_s_n, stride_out,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # out = c @ s^T with K <= BK: c [M, K], s [N, K] bf16, out [M, N] fp32.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    c = tl.load(c_ptr + rm[:, None] * stride_c + rk[None, :],
                mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
    s = tl.load(s_ptr + rn[None, :] * stride_s_n + rk[:, None],
                mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
    acc = tl.dot(c, s)
    tl.store(out_ptr + rm[:, None] * stride_out + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def split_k_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr, SPLIT_K: tl.constexpr):
    # c += a @ b over every SPLIT_K-th step of K from program (m, n, k):
    # a [M, K], b [K, N] fp16, c [M, N] (fp32 or fp16) zeroed by the host.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.program_id(2) * BK + tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_a + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_b + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK * SPLIT_K):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK * SPLIT_K
        b_ptrs += BK * SPLIT_K * stride_b
    tl.atomic_add(c_ptr + rm[:, None] * stride_c + rn[None, :], acc.to(c_ptr.dtype.element_ty),
                  mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def decayed_keys_state(k_ptr, gk_ptr, v_ptr, h_ptr, T, stride_t, BK: tl.constexpr, BV: tl.constexpr,
                       BT: tl.constexpr):
    # h = sum over chunks of (k * exp2(gk_last - gk)) @ v, decayed by
    # exp2(gk_last) each chunk: k, gk [T, BK] (bf16, fp32), v [T, BV] bf16,
    # rows stride_t apart; h [BK, BV] fp32. k and gk are read [BK, BT].
    o_k = tl.arange(0, BK)
    o_v = tl.arange(0, BV)
    h = tl.zeros([BK, BV], dtype=tl.float32)
    for t in range(0, T, BT):
        o_t = t + tl.arange(0, BT)
        m_t = o_t < T
        last = min(t + BT, T) - 1
        k = tl.load(k_ptr + o_k[:, None] + o_t[None, :] * stride_t, mask=m_t[None, :], other=0.0)
        gk = tl.load(gk_ptr + o_k[:, None] + o_t[None, :] * stride_t, mask=m_t[None, :], other=0.0)
        gk_last = tl.load(gk_ptr + last * stride_t + o_k)
        v = tl.load(v_ptr + o_t[:, None] * stride_t + o_v[None, :], mask=m_t[:, None], other=0.0)
        h *= tl.exp2(gk_last)[:, None]
        k = (k * tl.exp2(gk_last[:, None] - gk)).to(tl.bfloat16)
        h += tl.dot(k, v)
    tl.store(h_ptr + o_k[:, None] * BV + o_v[None, :], h)
