# Kernels with bad arguments to tl.softmax, tl.swizzle2d and tl.philox, for
# standard_diagnostics.test (line numbers matter there).
import triton
import triton.language as tl


@triton.jit
def softmax_int(ptr):
    x = tl.load(ptr + tl.arange(0, 16))
    tl.store(ptr + tl.arange(0, 16), tl.softmax(x))


@triton.jit
def softmax_rows(ptr):
    offs = tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :]
    tl.store(ptr + offs, tl.softmax(tl.load(ptr + offs), dim=1))


@triton.jit
def softmax_dim(ptr):
    offs = tl.arange(0, 16)
    tl.store(ptr + offs, tl.softmax(tl.load(ptr + offs), 1))


@triton.jit
def softmax_flag(ptr, flag):
    offs = tl.arange(0, 16)
    tl.store(ptr + offs, tl.softmax(tl.load(ptr + offs), ieee_rounding=flag))


@triton.jit
def swizzle_float(ptr):
    i, j = tl.swizzle2d(tl.program_id(0), tl.program_id(1), 4.0, 4, 2)
    tl.store(ptr + i, j)


@triton.jit
def swizzle_missing(ptr):
    i, j = tl.swizzle2d(tl.program_id(0), tl.program_id(1), 4, 4)
    tl.store(ptr + i, j)


@triton.jit
def philox_width(ptr, seed):
    offs = tl.arange(0, 16)
    a, b, c, d = tl.philox(seed, offs, offs.to(tl.int64), 0, 0)
    tl.store(ptr + offs, a)


@triton.jit
def philox_seed(ptr):
    offs = tl.arange(0, 16)
    a, b, c, d = tl.philox(1.5, offs, 0, 0, 0)
    tl.store(ptr + offs, a)


@triton.jit
def philox_big(ptr, seed):
    offs = tl.arange(0, 16)
    a, b, c, d = tl.philox(seed, offs, 2**40, 0, 0)
    tl.store(ptr + offs, a)


@triton.jit
def philox_rounds(ptr, seed):
    offs = tl.arange(0, 16)
    a, b, c, d = tl.philox(seed, offs, 0, 0, 0, n_rounds=-1)
    tl.store(ptr + offs, a)
