# The dtype a python number takes beside a value, as upstream Triton 3.6
# gives it: weakly typed in arithmetic operators and tl.where (an fp16 block
# plus 1.0 stays fp16), but a tensor of its own type (int32, fp32) in
# comparisons, tl.maximum/minimum/clamp and tl.fma (an fp16 block compared
# with 0.1 compares in fp32; tl.maximum(fp16, 0.0) is fp32), and bf16 widened
# to fp32 by tl.maximum/minimum/clamp. The asserts are upstream's answers
# (run_upstream.py compiles every variant). A number of a higher kind (bool
# < int < float) than the value promotes its own type with the value's
# (weak_numbers); integers must fit the result (tests/frontend/
# number_ranges.test has upstream's errors). A number assigned to a name or
# returned by a jit function is a tensor of its own type upstream, not weak
# (assigned_numbers): `s = 0.5; x_fp16 * s` is fp32.
#
# kiln-variant: -n number_types -s "x_ptr=*fp16, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.float16, FMA=tl.float32, WHEREF=tl.float16, ADDF=tl.float16, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*bf16, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.float32, FMA=tl.float32, WHEREF=tl.bfloat16, ADDF=tl.bfloat16, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*i8, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.int32, FMA=tl.float32, WHEREF=tl.float32, ADDF=tl.float32, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*i32, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.int32, FMA=tl.float32, WHEREF=tl.float32, ADDF=tl.float32, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*fp64, out_ptr=*i1, MAXF=tl.float64, MAXI=tl.float64, FMA=tl.float64, WHEREF=tl.float64, ADDF=tl.float64, BLOCK=64"
# kiln-variant: -n thresholds -s "x_ptr=*fp16, out_ptr=*i8, BLOCK=256"
# kiln-variant: -n thresholds -s "x_ptr=*bf16, out_ptr=*i8, BLOCK=256"
# kiln-variant: -n assigned_numbers -s "h_ptr=*fp16, i8_ptr=*i8, out_ptr=*fp32, B=128, BLOCK=128"
# kiln-variant: -n weak_numbers -s "h_ptr=*fp16, b_ptr=*i1, i8_ptr=*i8, u8_ptr=*u8, i32_ptr=*i32, u32_ptr=*u32, i64_ptr=*i64, out_ptr=*fp64, BLOCK=64"
# kiln-covers: number_types: type promotion; scalar vs tensor
# kiln-covers: thresholds: scalar vs tensor
# kiln-covers: assigned_numbers: type promotion; scalar vs tensor; float literal
# kiln-covers: weak_numbers: type promotion; scalar vs tensor; int literal (i64); bool literal
import triton
import triton.language as tl


@triton.jit
def _half():
    return 0.5


@triton.jit
def number_types(x_ptr, out_ptr, MAXF: tl.constexpr, MAXI: tl.constexpr, FMA: tl.constexpr,
                 WHEREF: tl.constexpr, ADDF: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    c = x > 0
    tl.static_assert(tl.maximum(x, -1.0).dtype == MAXF)
    tl.static_assert(tl.minimum(-1.0, x).dtype == MAXF)
    tl.static_assert(tl.clamp(x, -1.0, 1.0).dtype == MAXF)
    tl.static_assert(tl.maximum(x, 2).dtype == MAXI)
    tl.static_assert(tl.fma(x, 2.0, 1.0).dtype == FMA)
    tl.static_assert(tl.where(c, x, 0.0).dtype == WHEREF)
    tl.static_assert((x + 1.0).dtype == ADDF)
    tl.store(out_ptr + tl.arange(0, BLOCK), c)


@triton.jit
def thresholds(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # 0.1 is not an fp16 (or bf16) value: upstream compares in fp32, so an
    # element equal to 0.1 rounded to fp16 is below it (or above it).
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    flags = (x > 0.1).to(tl.int8) + 2 * (x >= 0.1).to(tl.int8) + 4 * (x == 0.1).to(tl.int8) \
        + 8 * (0.3 < x).to(tl.int8) + 16 * (x != 0.3).to(tl.int8)
    tl.store(out_ptr + offs, flags)


@triton.jit
def weak_numbers(h_ptr, b_ptr, i8_ptr, u8_ptr, i32_ptr, u32_ptr, i64_ptr, out_ptr,
                 BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.load(h_ptr + offs)
    b = tl.load(b_ptr + offs)
    i8 = tl.load(i8_ptr + offs)
    u8 = tl.load(u8_ptr + offs)
    i32 = tl.load(i32_ptr + offs)
    u32 = tl.load(u32_ptr + offs)
    i64 = tl.load(i64_ptr + offs)
    tl.static_assert((h + True).dtype == tl.float16)
    tl.static_assert((b + 1).dtype == tl.int32)
    tl.static_assert((b + 3000000000).dtype == tl.uint32)
    tl.static_assert((b & True).dtype == tl.int1)
    tl.static_assert((i8 + 127).dtype == tl.int8)
    tl.static_assert((i8 + -128).dtype == tl.int8)
    tl.static_assert((u8 + 255).dtype == tl.uint8)
    tl.static_assert((i32 * 0.5).dtype == tl.float32)
    tl.static_assert((i32 * 1e-300).dtype == tl.float64)
    tl.static_assert((h * 1e-300).dtype == tl.float16)
    tl.static_assert((u32 + 4000000000).dtype == tl.uint32)
    tl.static_assert((i64 + 2**40).dtype == tl.int64)
    tl.static_assert(tl.where(i8 > 0, i8, -128).dtype == tl.int8)
    total = (i32 * 1e-300) + (h + True) + (i8 + 127) + (u8 + 255) + (u32 + 4000000000) + (i64 + 2**40) + (b + 1)
    tl.store(out_ptr + offs, total)


@triton.jit
def assigned_numbers(h_ptr, i8_ptr, out_ptr, B: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.load(h_ptr + offs)
    i8 = tl.load(i8_ptr + offs)
    scale = 0.5
    tl.static_assert((h * scale).dtype == tl.float32)
    tl.static_assert((h * 0.5).dtype == tl.float16)
    k: tl.constexpr = 0.5
    tl.static_assert((h * k).dtype == tl.float16)
    one = 1
    tl.static_assert((i8 + one).dtype == tl.int32)
    step = B
    tl.static_assert((i8 + step).dtype == tl.int32)
    tl.static_assert((h + _half()).dtype == tl.float32)
    a, b = 2, 0.25
    tl.static_assert((i8 * a).dtype == tl.int32)
    tl.static_assert((h - b).dtype == tl.float32)
    neg = -scale
    tl.static_assert((h * neg).dtype == tl.float32)
    tl.static_assert(tl.where(h > 0, h, scale).dtype == tl.float32)
    count = 0
    count += 1
    tl.static_assert((i8 + count).dtype == tl.int32)
    out = h * scale + (i8 + one).to(tl.float32) + (h + _half()) + h * neg + (h - b) + i8 * a
    tl.store(out_ptr + offs, out)
