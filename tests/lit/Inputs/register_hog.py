# A kernel that keeps 16384 floats live in one warp across a reduction: ptxas
# spills (tests/lit/resource_usage.test).
import triton
import triton.language as tl


@triton.jit
def register_hog(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * tl.sum(x, axis=0))
