import triton
import triton.language as tl


@triton.jit
def _returns_block(x):
    return tl.zeros([4], tl.float32) + x


@triton.jit
def _mixed(a0, a1):
    return a0, a1.to(tl.float16)


def host_fn(x):
    return x


@triton.jit
def not_a_function(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.map_elementwise(x, x))


@triton.jit
def block_result(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.map_elementwise(_returns_block, x)


@triton.jit
def bad_pack(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.map_elementwise(_mixed, x, pack=0)


@triton.jit
def mixed_pack(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.map_elementwise(_mixed, x, pack=2)


@triton.jit
def no_blocks(x_ptr, BLOCK: tl.constexpr):
    y = tl.map_elementwise(_mixed)


@triton.jit
def scalars_only(x_ptr, a, BLOCK: tl.constexpr):
    tl.store(x_ptr, tl.map_elementwise(_returns_block, a))
