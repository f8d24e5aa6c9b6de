import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, N, eps, BLOCK: tl.constexpr):
    """Layer norm of one row per program, in chunks of BLOCK columns:
    mean, then variance, then the normalized, scaled and shifted output."""
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.).to(tl.float32)
        centered = tl.where(cols < N, x - mean, 0.)
        squares += centered * centered
    rstd = 1 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        valid = cols < N
        w = tl.load(w_ptr + cols, mask=valid)
        b = tl.load(b_ptr + cols, mask=valid)
        x = tl.load(x_ptr + cols, mask=valid, other=0.).to(tl.float32)
        tl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=valid)
