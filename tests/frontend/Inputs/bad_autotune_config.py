import triton
import triton.language as tl

@triton.autotune(configs=[
        triton.Config({"BLOCK": 128}),
        triton.Config({"BLOCK": 100}),
    ], key=[])
@triton.jit
def copy(x_ptr, BLOCK: tl.constexpr):
    # A config the kernel cannot take: tl.arange needs a power of 2.
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))
