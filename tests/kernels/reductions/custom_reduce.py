# tl.reduce with @triton.jit combine functions: a plain one, and one that
# reduces two blocks at once (value and index) and returns a tuple. Also
# tl.xor_sum on integers.
#
# kiln-variant: -n product_reduce -s "x_ptr=*fp32, out_ptr=*fp32, N=i32, BLOCK=256"
# kiln-variant: -n abs_argmax_reduce -s "x_ptr=*fp32, out_val_ptr=*fp32, out_idx_ptr=*i32, N=i32, BLOCK=512"
# kiln-variant: -n checksum -s "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=1024"
# kiln-variant: -n checksum -s "x_ptr=*u64, out_ptr=*u64, n=i32, BLOCK=256"
# kiln-covers: product_reduce: tl.reduce; @triton.jit helper
# kiln-covers: abs_argmax_reduce: tl.reduce; helper returning a tuple; tuple unpacking; tl.abs
# kiln-covers: checksum: tl.xor_sum; tl.atomic_xor
import triton
import triton.language as tl


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def _pick_larger_magnitude(v1, i1, v2, i2):
    take_first = (tl.abs(v1) > tl.abs(v2)) | ((tl.abs(v1) == tl.abs(v2)) & (i1 < i2))
    return tl.where(take_first, v1, v2), tl.where(take_first, i1, i2)


@triton.jit
def product_reduce(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=1.0)
    tl.store(out_ptr + row, tl.reduce(x, 0, _mul))


@triton.jit
def abs_argmax_reduce(x_ptr, out_val_ptr, out_idx_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    val, idx = tl.reduce((x, cols), axis=0, combine_fn=_pick_larger_magnitude)
    tl.store(out_val_ptr + row, val)
    tl.store(out_idx_ptr + row, idx)


@triton.jit
def checksum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_xor(out_ptr, tl.xor_sum(x, axis=0))
