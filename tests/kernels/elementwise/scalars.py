# Run-time scalar parameters of every kind combined with blocks; literals
# typed by value (i32, then i64 beyond 2**31); scalar-only arithmetic.
#
# kiln-variant: -n scale_shift -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, scale=fp32, shift=fp64, BLOCK=256"
# kiln-variant: -n scale_shift -s "x_ptr=*fp16, out_ptr=*fp16, n=i32, scale=fp32, shift=fp32, BLOCK=256"
# kiln-variant: -n int_scalars -s "out_ptr=*i64, a=i32, b=i64, c=u32, d=i8, e=i16, f=u64, g=i1, BLOCK=128"
# kiln-variant: -n literal_types -s "out_ptr=*i64, n=i32, BLOCK=128"
# kiln-covers: scale_shift: scalar vs tensor; type promotion; tl.float64
# kiln-covers: int_scalars: scalar vs tensor; type promotion; tl.int1; tl.int8; tl.int16; tl.uint32; tl.uint64; tl.int64
# kiln-covers: literal_types: int literal (i32); int literal (i64); float literal; bool literal; None; overflow (wrap-around)
import triton
import triton.language as tl


@triton.jit
def scale_shift(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = x * scale + shift
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def int_scalars(out_ptr, a, b, c, d, e, f, g, BLOCK: tl.constexpr):
    s = a + b              # i32 + i64 → i64
    t = c * 2 + d + e      # mixed widths and signedness
    u = f >> 4
    if g:
        s += 1
    offs = tl.arange(0, BLOCK)
    v = offs + s + t.to(tl.int64) + u.to(tl.int64)
    tl.store(out_ptr + offs, v)


@triton.jit
def literal_types(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    small = offs + 2147483647           # fits i32
    big = offs.to(tl.int64) + 4294967296  # needs i64
    flag = True
    nothing = None
    if nothing is None:
        if flag:
            big = big + 1
    half = 0.5
    wrapped = (small + 1).to(tl.int64)  # int32 overflow wraps
    tl.store(out_ptr + offs, big + wrapped + (offs * half).to(tl.int64), mask=offs < n)
