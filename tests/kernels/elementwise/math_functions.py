# The math functions of triton.language on fp32 and fp64 blocks.
#
# kiln-variant: -n unary_math -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512"
# kiln-variant: -n unary_math -s "x_ptr=*fp64, out_ptr=*fp64, n=i32, BLOCK=256"
# kiln-variant: -n rounding_math -s "x_ptr=*fp32, y_ptr=*fp32, z_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512"
# kiln-variant: -n activations -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, lo=fp32, hi=fp32, BLOCK=1024"
# kiln-variant: -n activations -s "x_ptr=*fp16, out_ptr=*fp16, n=i32, lo=fp32, hi=fp32, BLOCK=1024"
# kiln-covers: unary_math: tl.exp; tl.exp2; tl.log; tl.log2; tl.sqrt; tl.rsqrt; tl.sin; tl.cos; tl.erf; tl.abs; tl.floor; tl.ceil; tl.float64
# kiln-covers: rounding_math: tl.fma; tl.fdiv; tl.div_rn; tl.sqrt_rn; tl.abs
# kiln-covers: activations: tl.sigmoid; tl.clamp; tl.maximum; tl.minimum; tl.abs; tl.where
import triton
import triton.language as tl


@triton.jit
def unary_math(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.abs(tl.load(x_ptr + offs, mask=m, other=1.0)) + 1.0
    r = tl.exp(-x) + tl.exp2(x * 0.5) + tl.log(x) + tl.log2(x)
    r += tl.sqrt(x) + tl.rsqrt(x)
    r += tl.sin(x) * tl.cos(x) + tl.erf(x)
    r += tl.floor(x) - tl.ceil(x)
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def rounding_math(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)
    z = tl.load(z_ptr + offs, mask=m, other=1.0)
    r = tl.fma(x, y, z)
    r += tl.fdiv(x, y) + tl.fdiv(x, y, ieee_rounding=True)
    r += tl.div_rn(x, y) + tl.sqrt_rn(tl.abs(z))
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def _silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def activations(x_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    relu = tl.maximum(x, 0.0)
    relu6 = tl.minimum(relu, 6.0)
    hard = tl.clamp(x, lo, hi)
    leaky = tl.where(x > 0, x, 0.01 * x)
    y = _silu(x) + relu6 + hard + leaky + tl.sigmoid(tl.abs(x))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=m)
