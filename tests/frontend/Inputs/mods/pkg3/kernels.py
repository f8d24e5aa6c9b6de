# Kernels as the third real-world sample (issue 13) writes them: under a
# module-level `if` on a host call, made by a host function that imports
# triton itself, using helpers from `from .helpers import *`, beside host
# code Kiln does not parse.
import torch
from torch.utils._triton import has_triton

from .helpers import *

if has_triton():
    import triton
    import triton.language as tl

    SCALE = 3.0

    @triton.jit
    def guarded_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, twice(x) * SCALE + OFFSET)

    @triton.jit
    def uses_private(x_ptr):
        tl.store(x_ptr, _private_helper(tl.load(x_ptr)))

    def block_sizes(configs):
        # A set comprehension: host code Kiln does not parse, skipped.
        return {c.kwargs["BLOCK"] for c in configs}

else:

    def guarded_kernel(*args):
        raise RuntimeError("no triton")


def make_kernel():
    if not has_triton():
        return None
    import triton
    import triton.language as tl

    FACTOR = 7.0

    @triton.jit
    def factory_kernel(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * FACTOR)

    return factory_kernel
