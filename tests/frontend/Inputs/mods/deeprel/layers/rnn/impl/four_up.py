import triton
import triton.language as tl

from ....utils import thrice, twice
from ....utils.ops import twice as twice_again


@triton.jit
def four_up(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, twice_again(thrice(twice(x))))
