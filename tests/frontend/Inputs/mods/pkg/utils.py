# Helpers a kernel in another module imports; their names resolve here.
import triton
import triton.language as tlx

FACTOR: tlx.constexpr = 2
OFFSET = 3


@triton.jit
def scale_by_factor(x):
    return x * FACTOR + OFFSET


def host_only(*args, **kwargs):
    return {k: v for k, v in kwargs.items()}
