# tl.multiple_of / tl.max_contiguous decide the width of loads and stores.
import triton
import triton.language as tl


@triton.jit
def hinted_rows(x_ptr, out_ptr, stride, BLOCK: tl.constexpr, HINT: tl.constexpr):
    row = tl.program_id(0)
    start = row * stride
    if HINT:
        start = tl.multiple_of(start, 16)
    cols = tl.max_contiguous(tl.arange(0, BLOCK), BLOCK)
    x = tl.load(x_ptr + start + cols)
    tl.store(out_ptr + start + cols, x)


@triton.jit
def hinted_pointers(x_ptr, out_ptr, start, BLOCK: tl.constexpr):
    ptrs = tl.multiple_of(x_ptr + start + tl.arange(0, BLOCK), 16)
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(ptrs))
