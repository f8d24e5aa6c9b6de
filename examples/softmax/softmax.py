import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    """Row-wise softmax: one program per row, the whole row in one block."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    valid = cols < n_cols
    row_in = tl.load(in_ptr + row * in_stride + cols, mask=valid, other=-float("inf"))
    shifted = row_in - tl.max(row_in, axis=0)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_stride + cols, numerator / denominator, mask=valid)
