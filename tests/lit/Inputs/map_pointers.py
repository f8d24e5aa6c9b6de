# tl.map_elementwise over a block of pointers, loaded from under a branch
# (upstream Triton 3.6 fails to lower pointer operands of the op).
import triton
import triton.language as tl


@triton.jit
def _take_if_positive(x, p):
    result = x
    if x > 0:
        result = tl.load(p)
    return result


@triton.jit
def guarded_gather(x_ptr, table_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    idx = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    y = tl.map_elementwise(_take_if_positive, x, table_ptr + idx)
    tl.store(out_ptr + offs, y, mask=offs < n)
