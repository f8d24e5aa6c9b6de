# Kernels with one shape or type error each, for builtin_diagnostics.test.
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def broadcast_mismatch(x_ptr):
    a = tl.arange(0, 16)[None, :]
    b = tl.arange(0, 32)[None, :]
    tl.store(x_ptr + a, a + b)


@triton.jit
def int_subscript(x_ptr):
    a = tl.arange(0, 16)
    tl.store(x_ptr + a, a[0])


@triton.jit
def reshape_count(x_ptr):
    a = tl.arange(0, 16)
    tl.store(x_ptr + a, tl.reshape(a, (4, 8)))


@triton.jit
def trans_rank(x_ptr):
    a = tl.reshape(tl.arange(0, 64), (2, 4, 8))
    tl.store(x_ptr + a, tl.trans(a, 1, 0))


@triton.jit
def split_size(x_ptr):
    a = tl.arange(0, 16)
    lo, hi = tl.split(a)


@triton.jit
def cat_order(x_ptr):
    a = tl.arange(0, 16)
    tl.store(x_ptr + tl.arange(0, 32), tl.cat(a, a))


@triton.jit
def broadcast_to_shape(x_ptr):
    a = tl.arange(0, 16)
    b = tl.broadcast_to(a, (8, 32))


@triton.jit
def expand_axis(x_ptr):
    a = tl.arange(0, 16)
    b = tl.expand_dims(a, 3)


@triton.jit
def reduce_axis(x_ptr):
    a = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, tl.sum(a, axis=1))


@triton.jit
def xor_sum_float(x_ptr):
    a = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, tl.xor_sum(a))


@triton.jit
def _pair(a, b):
    return a + b, a * b


@triton.jit
def combine_count(x_ptr):
    a = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, tl.reduce(a, 0, _pair))


@triton.jit
def _broken(a, b):
    return a + c


@triton.jit
def combine_error(x_ptr):
    a = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, tl.reduce(a, 0, _broken))


@triton.jit
def sum_scalar(x_ptr):
    tl.store(x_ptr, tl.sum(tl.load(x_ptr)))


@triton.jit
def exp_half(x_ptr):
    r = tl.arange(0, 16)
    tl.store(x_ptr + r, tl.exp(tl.load(x_ptr + r)))


@triton.jit
def libdevice_half(x_ptr):
    r = tl.arange(0, 16)
    tl.store(x_ptr + r, libdevice.exp(tl.load(x_ptr + r)))


@triton.jit
def clamp_int(x_ptr):
    r = tl.arange(0, 16)
    tl.store(x_ptr + r, tl.clamp(r, 0, 4))


@triton.jit
def atomic_half(x_ptr):
    tl.atomic_max(x_ptr, 1.0)


@triton.jit
def dot_k(x_ptr):
    a = tl.zeros((32, 16), dtype=tl.float16)
    b = tl.zeros((32, 32), dtype=tl.float16)
    tl.store(x_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], tl.dot(a, b))


@triton.jit
def dot_small(x_ptr):
    a = tl.zeros((8, 8), dtype=tl.float16)
    tl.store(x_ptr + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :], tl.dot(a, a.T))


@triton.jit
def block_ptr_mask(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (16,), (0,))
    tl.load(bp, mask=tl.arange(0, 16) < 8)


@triton.jit
def boundary_without_block_ptr(x_ptr):
    tl.load(x_ptr + tl.arange(0, 16), boundary_check=(0,))


@triton.jit
def padding_nan_int(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64,), (1,), (0,), (16,), (0,))
    tl.load(bp, boundary_check=0, padding_option="nan")


@triton.jit
def bad_cache(x_ptr):
    tl.load(x_ptr + tl.arange(0, 16), cache_modifier=".wb")


@triton.jit
def block_ptr_lengths(x_ptr):
    bp = tl.make_block_ptr(x_ptr, (64, 64), (64, 1), (0,), (16, 16), (1, 0))


@triton.jit
def bitcast_width(x_ptr):
    r = tl.arange(0, 16)
    tl.store(x_ptr + r, tl.load(x_ptr + r).to(tl.float16, bitcast=True))


@triton.jit
def int_to_fp8(x_ptr):
    r = tl.arange(0, 16)
    tl.store(x_ptr + r, r.to(tl.float8e4nv))


@triton.jit
def rand_float_offset(x_ptr):
    r = tl.arange(0, 16)
    tl.store(x_ptr + r, tl.rand(0, r.to(tl.float32)))


@triton.jit
def cat_rank(x_ptr):
    a = tl.arange(0, 16)[:, None] + tl.arange(0, 4)[None, :]
    tl.store(x_ptr + tl.arange(0, 32), tl.sum(tl.cat(a, a, can_reorder=True), axis=1))


@triton.jit
def max_of_two_scalars(x_ptr, n):
    # Liger's online-softmax idiom: the second argument of tl.max is its axis.
    m = tl.load(x_ptr)
    for i in range(0, n):
        m = tl.max(m, tl.load(x_ptr + i))
    tl.store(x_ptr, m)


@triton.jit
def dot_scaled_format(x_ptr):
    a = tl.load(x_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :])
    tl.store(x_ptr, tl.sum(tl.sum(tl.dot_scaled(a, None, "e3m2", a, None, "e4m3"), 1), 0))


@triton.jit
def dot_scaled_scale_shape(a_ptr, s_ptr, c_ptr):
    r = tl.arange(0, 64)
    a = tl.load(a_ptr + r[:, None] * 64 + r[None, :])
    s = tl.load(s_ptr + r[:, None] * 4 + tl.arange(0, 4)[None, :])
    c = tl.dot_scaled(a, s, "e4m3", a, None, "e4m3")
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], c)


@triton.jit
def dot_scaled_fp8_scales(a_ptr, s_ptr, c_ptr):
    r = tl.arange(0, 64)
    a = tl.load(a_ptr + r[:, None] * 64 + r[None, :])
    s = tl.load(s_ptr + r[:, None] * 4 + tl.arange(0, 4)[None, :])
    c = tl.dot_scaled(a, s, "e2m1", a, None, "e2m1")
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], c)


@triton.jit
def dot_scaled_batched(a_ptr, c_ptr):
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
    a3 = tl.reshape(a, (2, 16, 32))
    c = tl.dot_scaled(a3, None, "bf16", tl.trans(a3, 0, 2, 1), None, "bf16")
    tl.store(c_ptr + tl.arange(0, 512), tl.reshape(c, (512,)))


@triton.jit
def sin_int(out_ptr):
    tl.store(out_ptr + tl.arange(0, 16), tl.sin(8) + tl.zeros((16,), tl.float32))


@triton.jit
def topk_not_power_of_two(out_ptr):
    x = tl.load(out_ptr + tl.arange(0, 64))
    tl.store(out_ptr + tl.arange(0, 4), tl.topk(x, 3)[:4])


# Names Triton 3.6's triton.language does not have: rejected upstream too.
@triton.jit
def math_round(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.math.round(x))


@triton.jit
def no_such_builtin(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.frobnicate(x))
