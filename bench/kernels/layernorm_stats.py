import triton
import triton.language as tl


@triton.jit
def layernorm_stats_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, N, eps,
                           BLOCK: tl.constexpr):
    """Layer norm forward as the fused tutorial kernel has it: one row per
    program, three loops over the row in chunks of BLOCK columns (mean,
    variance, normalize), and the row's mean and 1/std written out for the
    backward pass (one fp32 scalar each per program)."""
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + cols, mask=cols < N, other=0.).to(tl.float32)
        v = tl.where(cols < N, v - mean, 0.)
        acc2 += v * v
    rstd = 1 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        valid = cols < N
        w = tl.load(w_ptr + cols, mask=valid)
        b = tl.load(b_ptr + cols, mask=valid)
        v = tl.load(x_ptr + cols, mask=valid, other=0.).to(tl.float32)
        normed = (v - mean) * rstd
        tl.store(y_ptr + cols, normed * w + b, mask=valid)
