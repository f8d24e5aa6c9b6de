# Tutorial (our version): functions that triton.language lacks, from CUDA's
# libdevice through triton.language.extra.
#
# kiln-variant: -n asin_kernel -s "x_ptr=*fp32, y_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n asin_kernel -s "x_ptr=*fp64, y_ptr=*fp64, n=i32, BLOCK=512"
# kiln-variant: -n gelu_tanh -s "x_ptr=*fp32, y_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-covers: asin_kernel: from triton.language.extra import libdevice; libdevice functions; tl.float64
# kiln-covers: gelu_tanh: from triton.language.extra import libdevice; libdevice functions; tl.constexpr global
import triton
import triton.language as tl
from triton.language.extra import libdevice

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, libdevice.asin(x), mask=offs < n)


@triton.jit
def gelu_tanh(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (1.0 + libdevice.tanh(inner))
    tl.store(y_ptr + offs, y, mask=offs < n)
