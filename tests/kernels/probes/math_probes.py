# One minimal kernel per math builtin, so that docs/language.md can say
# exactly which ones kilnc supports: each loads x, applies one function and
# stores the result. All share one variant form.
#
# kiln-variant: -n probe_exp -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_exp2 -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_log -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_log2 -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_sqrt -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_sqrt_rn -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_rsqrt -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_sin -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_cos -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_sigmoid -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_erf -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_floor -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_ceil -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_abs -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_maximum -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_minimum -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_clamp -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_fma -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_fdiv -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_div_rn -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_where -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_libdevice -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-covers: probe_exp: tl.exp
# kiln-covers: probe_exp2: tl.exp2
# kiln-covers: probe_log: tl.log
# kiln-covers: probe_log2: tl.log2
# kiln-covers: probe_sqrt: tl.sqrt
# kiln-covers: probe_sqrt_rn: tl.sqrt_rn
# kiln-covers: probe_rsqrt: tl.rsqrt
# kiln-covers: probe_sin: tl.sin
# kiln-covers: probe_cos: tl.cos
# kiln-covers: probe_sigmoid: tl.sigmoid
# kiln-covers: probe_erf: tl.erf
# kiln-covers: probe_floor: tl.floor
# kiln-covers: probe_ceil: tl.ceil
# kiln-covers: probe_abs: tl.abs
# kiln-covers: probe_maximum: tl.maximum
# kiln-covers: probe_minimum: tl.minimum
# kiln-covers: probe_clamp: tl.clamp
# kiln-covers: probe_fma: tl.fma
# kiln-covers: probe_fdiv: tl.fdiv
# kiln-covers: probe_div_rn: tl.div_rn
# kiln-covers: probe_where: tl.where
# kiln-covers: probe_libdevice: libdevice functions; from triton.language.extra import libdevice
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def probe_exp(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.exp(x), mask=offs < n)


@triton.jit
def probe_exp2(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.exp2(x), mask=offs < n)


@triton.jit
def probe_log(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.log(x), mask=offs < n)


@triton.jit
def probe_log2(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.log2(x), mask=offs < n)


@triton.jit
def probe_sqrt(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.sqrt(x), mask=offs < n)


@triton.jit
def probe_sqrt_rn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.sqrt_rn(x), mask=offs < n)


@triton.jit
def probe_rsqrt(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.rsqrt(x), mask=offs < n)


@triton.jit
def probe_sin(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.sin(x), mask=offs < n)


@triton.jit
def probe_cos(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.cos(x), mask=offs < n)


@triton.jit
def probe_sigmoid(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.sigmoid(x), mask=offs < n)


@triton.jit
def probe_erf(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.erf(x), mask=offs < n)


@triton.jit
def probe_floor(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.floor(x), mask=offs < n)


@triton.jit
def probe_ceil(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.ceil(x), mask=offs < n)


@triton.jit
def probe_abs(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.abs(x), mask=offs < n)


@triton.jit
def probe_maximum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.5), mask=offs < n)


@triton.jit
def probe_minimum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.minimum(x, 0.5), mask=offs < n)


@triton.jit
def probe_clamp(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.clamp(x, -1.0, 1.0), mask=offs < n)


@triton.jit
def probe_fma(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.fma(x, x, 1.0), mask=offs < n)


@triton.jit
def probe_fdiv(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.fdiv(x, x + 1.0), mask=offs < n)


@triton.jit
def probe_div_rn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.div_rn(x, x + 1.0), mask=offs < n)


@triton.jit
def probe_where(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.where(x > 0, x, 0.0), mask=offs < n)


@triton.jit
def probe_libdevice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, libdevice.tanh(x), mask=offs < n)
