import triton
import triton.language as tl

from ...utils import twice


@triton.jit
def three_up(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, twice(tl.load(x_ptr + offs)))
