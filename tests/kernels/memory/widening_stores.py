# 1-D blocks that load a narrow type and store a wider one. A thread holds
# what one 16-byte store of the widest stored type takes (4 fp32), so each
# warp store covers whole sectors; the bf16 and fp16 loads take 8 bytes a
# lane (kiln-assign-layouts). With 8 a thread, one 16-byte load, the fp32
# store would write half of every sector twice.
# - `widen_sum`: an fp32 sum and its bf16 rounding, from bf16 and fp16.
# - `log_softmax_rows`: one program a row of bf16 logits: an online max and
#   sum, then fp32 log-probabilities stored through a carried pointer
#   (Thunder's cross-entropy forward; 1 warp).
#
# kiln-variant: -n widen_sum -s "x_ptr=*bf16:16, y_ptr=*fp16:16, out_ptr=*fp32:16, rounded_ptr=*bf16:16, n=i32:16, BLOCK=1024"
# kiln-variant: -n log_softmax_rows -s "x_ptr=*bf16:16, out_ptr=*fp32:16, N=i32:16, BLOCK=1024, num_warps=1"
# kiln-covers: widen_sum: tl.load; tl.store; tl.arange
# kiln-covers: log_softmax_rows: tl.load; tl.store; tl.max; tl.sum; tl.exp; tl.log
import triton
import triton.language as tl


@triton.jit
def widen_sum(x_ptr, y_ptr, out_ptr, rounded_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    s = tl.load(x_ptr + i, mask=mask).to(tl.float32) + tl.load(y_ptr + i, mask=mask).to(tl.float32)
    tl.store(out_ptr + i, s, mask=mask)
    tl.store(rounded_ptr + i, s.to(tl.bfloat16), mask=mask)


@triton.jit
def log_softmax_rows(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * N
    ptrs = x_row + cols
    m = -float("inf")
    total = 0.0
    for start in range(0, tl.cdiv(N, BLOCK)):
        x = tl.load(ptrs, mask=cols < N - start * BLOCK, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(tl.max(x, 0), m)
        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
        ptrs += BLOCK
    log_total = tl.log(total)
    ptrs = x_row + cols
    out = out_ptr + row * N + cols
    for start in range(0, tl.cdiv(N, BLOCK)):
        x = tl.load(ptrs, mask=cols < N - start * BLOCK, other=0.0).to(tl.float32)
        tl.store(out, x - m - log_total, mask=cols < N - start * BLOCK)
        ptrs += BLOCK
        out += BLOCK
