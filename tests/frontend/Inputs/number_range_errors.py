# Python integers that the weakly typed result of an operation cannot hold:
# upstream Triton 3.6 rejects each of these kernels (number_ranges.test).
import triton
import triton.language as tl


@triton.jit
def add_out_of_int8(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x + 300)


@triton.jit
def mask_out_of_int8(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x & 0x80)


@triton.jit
def add_out_of_int32(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, (x + 2**40).to(tl.int32))


@triton.jit
def unsigned_minus_negative(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x - (-1))


@triton.jit
def where_out_of_int8(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.where(x > 0, x, 300))


@triton.jit
def augmented_out_of_uint8(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    x += 256
    tl.store(x_ptr + offs, x)
