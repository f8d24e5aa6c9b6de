import torch
import triton
import triton.language as tl

SCALE: tl.constexpr = 2


def host_helper(x):
    return x


@triton.jit
def undefined_name(x_ptr):
    tl.store(x_ptr, y)


@triton.jit
def bad_keyword(x_ptr):
    tl.load(x_ptr, mask_=None)


@triton.jit
def non_pow2_range(x_ptr):
    tl.store(x_ptr + tl.arange(0, 100), 1.0)


@triton.jit
def load_needs_pointer(n):
    tl.load(n)


@triton.jit
def inner(x):
    return tl.arange(0, x)


@triton.jit
def error_in_helper(x_ptr, N: tl.constexpr):
    offs = inner(N)
    tl.store(x_ptr + offs, 0.0)


@triton.jit
def recursive(x_ptr):
    recursive(x_ptr)


@triton.jit
def shape_mismatch(x_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    tl.store(x_ptr + a, a + b)


@triton.jit
def calls_host(x_ptr):
    host_helper(x_ptr)


@triton.jit
def uses_torch(x_ptr):
    tl.store(x_ptr, torch.zeros(1))


@triton.jit
def pointer_times(x_ptr):
    tl.store(x_ptr * 2, 1.0)


@triton.jit
def float_shift(x_ptr):
    v = tl.load(x_ptr)
    tl.store(x_ptr, v << 1)


@triton.jit
def static_assert_fails(x_ptr, N: tl.constexpr):
    tl.static_assert(N % 16 == 0, "N must be a multiple of 16")


@triton.jit
def good(x_ptr, n, N: tl.constexpr = 16 * SCALE):
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
