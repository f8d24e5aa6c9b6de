# A tuple parameter as upstream passes `x.stride()`: the rows of a strided
# matrix scaled into a contiguous one. Built with the column stride a
# constexpr element (`stride=(i32, 1)`, the launcher checks it and runs that
# variant for unit strides) and a run-time one (every other call), and
# autotuned with the same tuple (class_tuple_launch_test.cc).
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, out_ptr, stride, n_cols, alpha, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride[0] + cols * stride[1], mask=mask)
        tl.store(out_ptr + row * n_cols + cols, x * alpha, mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64}, num_warps=2),
        triton.Config({"BLOCK": 256}, num_warps=4),
    ],
    key=["n_cols"],
)
@triton.jit
def tuned_scale_rows(x_ptr, out_ptr, stride, n_cols, alpha,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride[0] + cols * stride[1], mask=mask)
        tl.store(out_ptr + row * n_cols + cols, x * alpha, mask=mask)
