# Score modifiers a caller passes to the kernels as constexpr values; the
# kernels' module does not import them.
import triton
import triton.language as tl

BIAS: tl.constexpr = 0.5


@triton.jit
def add_bias(x, scale):
    return x * scale + BIAS


@triton.jit
def clipped(x, scale):
    return tl.minimum(x * scale, 4.0)


def host_helper(x):
    return x
