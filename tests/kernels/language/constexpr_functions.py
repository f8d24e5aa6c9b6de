# @triton.constexpr_function helpers are plain Python upstream: Kiln runs
# them as host Python when their arguments are compile-time values a host
# function can take (numbers, strings, tuples), so loops over lists, list
# and dict comprehensions and the math module work there; one that takes a dtype is
# evaluated like a jit helper.
#
# kiln-variant: -n sized_copy -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, WANT=20"
# kiln-variant: -n sized_copy -s "x_ptr=*fp16, out_ptr=*fp16, n=i32, WANT=100"
# kiln-covers: sized_copy: constexpr function as host Python
import math

import triton
import triton.language as tl


@triton.constexpr_function
def block_for(n):
    for size in [16, 32, 64]:
        if size >= n:
            return size
    return 128


@triton.constexpr_function
def scales(count):
    return [1.0 / (k + 1) for k in range(count)]


@triton.constexpr_function
def exponent(n):
    return int(math.log2(n))


@triton.constexpr_function
def chunks_of(size):
    return {s: s // 16 for s in (16, 32, 64, 128) if s > 16}.get(size, 1)


@triton.constexpr_function
def widen(dtype):
    return dtype.primitive_bitwidth < 32


@triton.jit
def sized_copy(x_ptr, out_ptr, n, WANT: tl.constexpr):
    BLOCK: tl.constexpr = block_for(WANT)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    if widen(x.dtype):
        y = x.to(tl.float32) * scales(4)[exponent(BLOCK) % 4]
    else:
        y = x * scales(3)[2]
    y = y + chunks_of(BLOCK)
    tl.store(out_ptr + offs, y.to(x.dtype), mask=offs < n)
