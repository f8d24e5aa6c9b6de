# Module-level names used by kernels: tl.constexpr globals (Triton 3.6 rejects
# plain numeric globals unless TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1), several kernels and helpers in one file, the cuda form of the
# libdevice import, and host-side Python that kernels never touch.
#
# kiln-variant: -n scaled_copy -s "x_ptr=*fp32, out_ptr=*fp32, n=i32"
# kiln-variant: -n scaled_copy -s "x_ptr=*fp16, out_ptr=*fp16, n=i32"
# kiln-variant: -n clipped_tanh -s "x_ptr=*fp32, out_ptr=*fp32, n=i32"
# kiln-variant: -n uses_helpers -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-covers: scaled_copy: tl.constexpr global; import triton; import triton.language as tl; several kernels per file
# kiln-covers: clipped_tanh: from triton.language.extra.cuda import libdevice; libdevice functions; tl.constexpr global
# kiln-covers: uses_helpers: @triton.jit helper; helper call (inlined); nested helper calls; several kernels per file
import math

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

BLOCK_SIZE = tl.constexpr(512)
SCALE = triton.language.constexpr(3)
CLIP = tl.constexpr(0.95)
HOST_ONLY_TABLE = {"not": "used by kernels"}


def host_launcher(n):
    # Host code beside the kernels: ignored unless a kernel uses it.
    return (math.ceil(n / 512),)


@triton.jit
def scaled_copy(x_ptr, out_ptr, n):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * SCALE, mask=offs < n)


@triton.jit
def clipped_tanh(x_ptr, out_ptr, n):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.minimum(tl.maximum(libdevice.tanh(x), -CLIP), CLIP)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def _square(x):
    return x * x


@triton.jit
def _sum_of_squares(a, b):
    return _square(a) + _square(b)


@triton.jit
def uses_helpers(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, _sum_of_squares(x, x + 1), mask=offs < n)
