import triton
import triton.language as tl


@triton.jit
def broken_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK))
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
