# The dtype a python number takes beside a value, as upstream Triton 3.6
# gives it: weakly typed in arithmetic operators and tl.where (an fp16 block
# plus 1.0 stays fp16), but a tensor of its own type (int32, fp32) in
# comparisons, tl.maximum/minimum/clamp and tl.fma (an fp16 block compared
# with 0.1 compares in fp32; tl.maximum(fp16, 0.0) is fp32), and bf16 widened
# to fp32 by tl.maximum/minimum/clamp. The asserts are upstream's answers
# (run_upstream.py compiles every variant).
#
# kiln-variant: -n number_types -s "x_ptr=*fp16, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.float16, FMA=tl.float32, WHEREF=tl.float16, ADDF=tl.float16, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*bf16, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.float32, FMA=tl.float32, WHEREF=tl.bfloat16, ADDF=tl.bfloat16, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*i8, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.int32, FMA=tl.float32, WHEREF=tl.float32, ADDF=tl.float32, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*i32, out_ptr=*i1, MAXF=tl.float32, MAXI=tl.int32, FMA=tl.float32, WHEREF=tl.float32, ADDF=tl.float32, BLOCK=64"
# kiln-variant: -n number_types -s "x_ptr=*fp64, out_ptr=*i1, MAXF=tl.float64, MAXI=tl.float64, FMA=tl.float64, WHEREF=tl.float64, ADDF=tl.float64, BLOCK=64"
# kiln-variant: -n thresholds -s "x_ptr=*fp16, out_ptr=*i8, BLOCK=256"
# kiln-variant: -n thresholds -s "x_ptr=*bf16, out_ptr=*i8, BLOCK=256"
# kiln-covers: number_types: type promotion; scalar vs tensor
# kiln-covers: thresholds: scalar vs tensor
import triton
import triton.language as tl


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
