# Helpers chosen by module-level conditions, as fla's ops/utils/op.py does.
import os

import torch
import triton
import triton.language as tl
from packaging import version

from .device import HAS_TRITON, IS_BLACKWELL, IS_GATHER_SUPPORTED

if HAS_TRITON:
    BIAS = 100.0
else:
    BIAS = 200.0

if os.environ.get("PKG_FAST_OPS", "0") == "1":
    @triton.jit
    def scale(x):
        return x * 3.0
else:
    @triton.jit
    def scale(x):
        return x * 5.0

if IS_BLACKWELL:
    @triton.jit
    def shift(x):
        return x + 10.0
else:
    @triton.jit
    def shift(x):
        return x + 20.0

if not IS_GATHER_SUPPORTED:
    @triton.jit
    def gather(src, index, axis):
        return None
else:
    gather = tl.gather

if version.parse(triton.__version__) >= version.parse("3.0"):
    OFFSET = 7.0
elif "PKG_OLD" in os.environ:
    OFFSET = 8.0
else:
    OFFSET = 9.0

if hasattr(triton.language, "_experimental_make_tensor_descriptor"):
    make_descriptor = triton.language._experimental_make_tensor_descriptor
elif hasattr(triton.language, "make_tensor_descriptor"):
    make_descriptor = triton.language.make_tensor_descriptor
else:
    make_descriptor = None


def runtime_choice():
    return torch.cuda.get_device_name(0).startswith("NVIDIA H")


if runtime_choice():
    @triton.jit
    def undecided(x):
        return x * 2.0
else:
    @triton.jit
    def undecided(x):
        return x * 4.0

STRICT = os.environ["PKG_STRICT"] == "1"
