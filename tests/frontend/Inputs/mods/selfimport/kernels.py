import triton
import triton.language as tl

from tp import acts


@triton.jit
def through_package(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, acts.relu(tl.load(x_ptr + offs)))
