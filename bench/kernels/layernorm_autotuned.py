# Layer norm forward in the form of upstream's tutorial 05 (one row per
# program; mean, variance and normalize loops over the row in chunks of
# BLOCK; the row's mean and 1/std stored for the backward pass), with the
# chunk size and warps left to @triton.autotune, keyed on the row width N:
# the memory-bound kernel of bench/tune_matmul.sh. Upstream Triton autotunes
# this same file in the same run.
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=2),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=8),
        triton.Config({"BLOCK": 2048}, num_warps=2),
        triton.Config({"BLOCK": 2048}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 2048}, num_warps=16),
        triton.Config({"BLOCK": 4096}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=16),
        triton.Config({"BLOCK": 8192}, num_warps=4),
        triton.Config({"BLOCK": 8192}, num_warps=8),
        triton.Config({"BLOCK": 8192}, num_warps=16),
    ],
    key=["N"],
)
@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, N, eps,
                     BLOCK: tl.constexpr):
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
