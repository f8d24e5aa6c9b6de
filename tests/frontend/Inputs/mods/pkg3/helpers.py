# Helpers that kernels.py takes with `from .helpers import *`.
import triton
import triton.language as tl

OFFSET = 5.0


@triton.jit
def twice(x):
    return x * 2.0


@triton.jit
def _private_helper(x):
    return x
