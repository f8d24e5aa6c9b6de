# Kernels that import helpers from sibling modules, relative and absolute,
# with libdevice imported the ways real files do.
import operator

import torch
import triton
import triton.language as tl

from .. import utils as u
from ..utils import scale_by_factor
from pkg.utils import OFFSET
import pkg.utils as absolute_utils


def compare_version(package, op, version):
    import importlib.metadata

    return op(importlib.metadata.version(package), version)


if compare_version("triton", operator.ge, "3.0.0"):
    try:
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt

try:
    from triton.language.libdevice import tanh  # Triton 2.x: gone in 3.x
except ImportError:
    from triton.language.extra import libdevice

    tanh = libdevice.tanh


@triton.jit
def imported_helpers(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = scale_by_factor(x) + u.scale_by_factor(x) + OFFSET + absolute_utils.FACTOR
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def libdevice_forms(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = rsqrt(x) + tanh(x) + tl.extra.cuda.libdevice.exp(x) + tl.math.exp2(x)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def uses_missing(x_ptr):
    from_missing(x_ptr)


from .missing import from_missing  # noqa: E402  (not among the sources)
