# Dots over tiles gathered through indices loaded in the same loop: a
# decode attention over a page table (a group's query heads as 16 rows,
# keys and values fetched token by token) and a GEMM whose b rows are
# picked by an index vector. kilnc pipelines both: the index loads run
# ahead of the cp.async copies that use them, masked past the loop's end.
#
# kiln-variant: -n paged_decode -s "Q=*fp16:16, K=*fp16:16, V=*fp16:16, Out=*fp16:16, Pages=*i32:16, lengths=*i32:16, stride_page=i32:16, sm_scale=fp32, GROUP=4, D=64, BLOCK_N=16, STAGES=2, num_warps=2"
# kiln-variant: -n paged_decode -s "Q=*bf16:16, K=*bf16:16, V=*bf16:16, Out=*bf16:16, Pages=*i32:16, lengths=*i32:16, stride_page=i32:16, sm_scale=fp32, GROUP=8, D=128, BLOCK_N=32, STAGES=3, num_warps=4"
# kiln-variant: -n gathered_rows_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, idx_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=64, BK=32, STAGES=3"
# kiln-variant: -n gathered_rows_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, idx_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=16, BN=64, BK=32, STAGES=4, num_warps=2"
# kiln-variant: -n gathered_columns_matmul -s "x_ptr=*fp16:16, w_ptr=*fp16:16, rows_ptr=*i64:16, out_ptr=*fp16:16, M=i32, rank=i32, BM=32, BN=128, R=64, WIDTH=4096"
# kiln-covers: paged_decode: tl.range(num_stages=, loop_unroll_factor=); tl.dot
# kiln-covers: gathered_rows_matmul: tl.range(num_stages=, loop_unroll_factor=); tl.dot
import triton
import triton.language as tl


@triton.jit
def paged_decode(Q, K, V, Out, Pages, lengths, stride_page, sm_scale,
                 GROUP: tl.constexpr, D: tl.constexpr, BLOCK_N: tl.constexpr,
                 STAGES: tl.constexpr):
    # One program per sequence and KV head; K and V are [tokens, heads, D],
    # Q and Out [sequences, heads * GROUP, D].
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    kv_heads = tl.num_programs(1)
    rows = tl.arange(0, 16)
    offs_d = tl.arange(0, D)
    length = tl.load(lengths + seq)
    q_rows = (seq * kv_heads * GROUP + kv_head * GROUP + rows) * D
    q = tl.load(Q + q_rows[:, None] + offs_d[None, :], mask=rows[:, None] < GROUP, other=0.0)
    m_i = tl.full([16], float("-inf"), tl.float32)
    l_i = tl.zeros([16], tl.float32)
    acc = tl.zeros([16, D], tl.float32)
    for start in tl.range(0, length, BLOCK_N, num_stages=STAGES):
        offs_n = start + tl.arange(0, BLOCK_N)
        live = offs_n < length
        token = tl.load(Pages + seq * stride_page + offs_n, mask=live, other=0)
        k = tl.load(K + (token[None, :] * kv_heads + kv_head) * D + offs_d[:, None],
                    mask=live[None, :], other=0.0)
        s = tl.dot(q, k) * sm_scale
        s = tl.where(live[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        v = tl.load(V + (token[:, None] * kv_heads + kv_head) * D + offs_d[None, :],
                    mask=live[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
    out = acc / tl.maximum(l_i, 1e-30)[:, None]
    tl.store(Out + q_rows[:, None] + offs_d[None, :], out.to(Out.dtype.element_ty),
             mask=rows[:, None] < GROUP)


@triton.jit
def gathered_rows_matmul(a_ptr, b_ptr, idx_ptr, c_ptr, M, N, K,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                         STAGES: tl.constexpr):
    # c = a @ b[idx]: a is M x K, b has N columns, idx K rows of it. The
    # index load is unmasked (K is a multiple of BK) and reads idx_ptr's K
    # entries exactly.
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for k in tl.range(0, K, BK, num_stages=STAGES):
        rows = tl.load(idx_ptr + k + offs_k)
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :],
                    mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptr + rows[:, None] * N + offs_n[None, :],
                    mask=offs_n[None, :] < N, other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def gathered_columns_matmul(x_ptr, w_ptr, rows_ptr, out_ptr, M, rank, BM: tl.constexpr,
                            BN: tl.constexpr, R: tl.constexpr, WIDTH: tl.constexpr):
    # S-LoRA's expand: out[m, n] += x[m, :] @ w[:, n], where column n of w
    # is `rank` contiguous values of row rows[n * rank // WIDTH] of a pool
    # starting at (n * rank) % WIDTH. The columns run down contiguous memory
    # but for the wrap at WIDTH, and no load of them is a vector.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rr = tl.arange(0, R)
    x = tl.load(x_ptr + rm[:, None] * R + rr[None, :], mask=rm[:, None] < M, other=0.0)
    row = tl.load(rows_ptr + rn * rank // WIDTH)
    w = tl.load(w_ptr + row[None, :] * WIDTH + (rn[None, :] * rank + rr[:, None]) % WIDTH,
                mask=rr[:, None] < rank, other=0.0)
    out_ptrs = out_ptr + rm[:, None] * WIDTH + rn[None, :]
    out = tl.load(out_ptrs, mask=rm[:, None] < M, other=0.0)
    out += tl.dot(x, w).to(tl.float16)
    tl.store(out_ptrs, out, mask=rm[:, None] < M)
