import triton
import triton.language as tl

from .op import BIAS, OFFSET, STRICT, gather, make_descriptor, scale, shift, undecided


@triton.jit
def chosen(x_ptr, i_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    idx = tl.load(i_ptr + offs)
    y = shift(scale(gather(x, idx, 0))) + OFFSET + BIAS
    tl.store(out_ptr + offs, y)


@triton.jit
def uses_undecided(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, undecided(tl.load(x_ptr + offs)))


@triton.jit
def uses_environ(x_ptr):
    if STRICT:
        tl.store(x_ptr, 1.0)


@triton.jit
def uses_descriptor(x_ptr, n, BLOCK: tl.constexpr):
    desc = make_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    desc.store([0], desc.load([0]) * 2.0)
