# A second module with a jit function of the same name as one in score.py.
import triton


@triton.jit
def clipped(x, scale):
    return x
