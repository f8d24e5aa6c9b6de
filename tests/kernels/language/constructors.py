# Block constructors: tl.arange with a non-zero start, tl.zeros and
# tl.zeros_like, tl.full with run-time and compile-time values, in several
# dtypes and ranks.
#
# kiln-variant: -n fill_patterns -s "out_ptr=*fp32, value=fp32, BLOCK=256"
# kiln-variant: -n fill_patterns -s "out_ptr=*fp16, value=fp32, BLOCK=128"
# kiln-variant: -n fill_2d -s "out_ptr=*i32, fill=i32, M=16, N=32"
# kiln-variant: -n fill_2d -s "out_ptr=*u8, fill=i32, M=8, N=8"
# kiln-covers: fill_patterns: tl.arange; tl.zeros; tl.zeros_like; tl.full
# kiln-covers: fill_2d: tl.full; tl.zeros; tl.arange; x[:, None]; x[None, :]
import triton
import triton.language as tl


@triton.jit
def fill_patterns(out_ptr, value, BLOCK: tl.constexpr):
    ramp = tl.arange(16, 16 + BLOCK).to(tl.float32)
    z = tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty)
    zl = tl.zeros_like(ramp)
    f = tl.full([BLOCK], value, tl.float32)
    c = tl.full((BLOCK,), 7, dtype=tl.int32)
    tl.store(out_ptr + tl.arange(0, BLOCK), z + zl + f + c + ramp)


@triton.jit
def fill_2d(out_ptr, fill, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    grid = tl.full((M, N), fill, dtype=tl.int32) + tl.zeros((M, N), dtype=tl.int32)
    tl.store(out_ptr + r[:, None] * N + c[None, :], grid + r[:, None] - c[None, :])
