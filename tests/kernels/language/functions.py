# @triton.jit helpers: constexpr parameters, defaults, keyword arguments,
# tuples returned and unpacked, helpers calling helpers, a helper passed as
# a constexpr function argument, and helpers with no return value.
#
# kiln-variant: -n call_styles -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n call_styles -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128, SCALE=3"
# kiln-variant: -n divmod_kernel -s "a_ptr=*i32, b_ptr=*i32, q_ptr=*i32, r_ptr=*i32, n=i32, BLOCK=256"
# kiln-variant: -n apply_fn -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n store_helper_kernel -s "out_ptr=*fp32, n=i32, BLOCK=64"
# kiln-variant: -n given_fn -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, FN=_cube, BLOCK=256"
# kiln-variant: -n given_fn -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, FN=None, BLOCK=256"
# kiln-variant: -n given_fn -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-covers: call_styles: tl.constexpr parameter; default argument; keyword argument; helper call (inlined); return
# kiln-covers: divmod_kernel: helper returning a tuple; tuple unpacking; // and % on signed ints
# kiln-covers: apply_fn: @triton.jit helper; jit function as an argument
# kiln-covers: given_fn: jit function as a constexpr kernel argument
# kiln-covers: store_helper_kernel: helper call (inlined); return
import triton
import triton.language as tl


@triton.jit
def _affine(x, scale, shift=0.0, SQUARE: tl.constexpr = False):
    y = x * scale + shift
    if SQUARE:
        y = y * y
    return y


@triton.jit
def call_styles(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr = 2):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    a = _affine(x, SCALE)
    b = _affine(x, 0.5, 1.0)
    c = _affine(x, scale=1.5, SQUARE=True)
    d = _affine(shift=-1.0, x=x, scale=SCALE)
    tl.store(out_ptr + offs, a + b + c + d, mask=offs < n)


@triton.jit
def _divmod(a, b):
    return a // b, a % b


@triton.jit
def divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=0)
    b = tl.load(b_ptr + offs, mask=offs < n, other=1)
    q, r = _divmod(a, b)
    pair = _divmod(a, 7)
    tl.store(q_ptr + offs, q + pair[0], mask=offs < n)
    tl.store(r_ptr + offs, r + pair[1], mask=offs < n)


@triton.jit
def _cube(x):
    return x * x * x


@triton.jit
def _apply(x, fn: tl.constexpr):
    return fn(x)


@triton.jit
def apply_fn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, _apply(x, _cube), mask=offs < n)


@triton.jit
def _softsign(x):
    return x / (1.0 + tl.abs(x))


@triton.jit
def given_fn(x_ptr, out_ptr, n, FN: tl.constexpr = _softsign, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if FN is not None:
        x = FN(x)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def _store_ramp(ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ptr + offs, offs.to(tl.float32), mask=offs < n)
    return


@triton.jit
def store_helper_kernel(out_ptr, n, BLOCK: tl.constexpr):
    _store_ramp(out_ptr, n, BLOCK)
