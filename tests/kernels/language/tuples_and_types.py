# Tuples as values of control flow, and what a kernel can ask of a type:
# tuples carried through for and while loops (only their changing leaves)
# and rebound under a run-time `if`, tuple slices and tl.tuple, block types
# (x.type.is_block(), .shape, .numel), dtype attributes (itemsize, name,
# integer limits, mantissa width) and int.bit_length() in a constexpr
# function; then tl.reduce_or and tl.bitonic_merge.
#
# kiln-variant: -n running_moments -s "x_ptr=*fp32, out_ptr=*fp32, n_chunks=i32, BLOCK=64"
# kiln-variant: -n running_moments -s "x_ptr=*fp16, out_ptr=*fp32, n_chunks=i32, BLOCK=128"
# kiln-variant: -n halving_count -s "x_ptr=*i32, out_ptr=*i32, BLOCK=32"
# kiln-variant: -n pick_pair -s "x_ptr=*fp32, out_ptr=*fp32, mode=i32, BLOCK=64"
# kiln-variant: -n describe_types -s "x_ptr=*fp16, out_ptr=*i32, BLOCK=64"
# kiln-variant: -n describe_types -s "x_ptr=*i8, out_ptr=*i32, BLOCK=16"
# kiln-variant: -n clamp_to_type -s "x_ptr=*i32, out_ptr=*i16, BLOCK=64"
# kiln-variant: -n row_flags -s "x_ptr=*i32, out_ptr=*i32, BM=8, BN=32"
# kiln-variant: -n merge_rows -s "x_ptr=*fp32, out_ptr=*fp32, BM=4, BN=64, DESCENDING=0"
# kiln-variant: -n merge_rows -s "x_ptr=*i32, out_ptr=*i32, BM=2, BN=16, DESCENDING=1"
# kiln-covers: running_moments: tuple carried through a loop
# kiln-covers: halving_count: tuple carried through a loop
# kiln-covers: pick_pair: tuple rebound under run-time if
# kiln-covers: pick_pair: tuple slicing
# kiln-covers: pick_pair: tl.tuple
# kiln-covers: describe_types: type introspection
# kiln-covers: describe_types: int.bit_length()
# kiln-covers: clamp_to_type: type introspection
# kiln-covers: row_flags: tl.reduce_or
# kiln-covers: merge_rows: tl.bitonic_merge
import triton
import triton.language as tl


@triton.jit
def running_moments(x_ptr, out_ptr, n_chunks, BLOCK: tl.constexpr):
    # (count, (sum, sum of squares)): the count is a Python int that the loop
    # turns into a run-time value, the nested pair two blocks.
    offs = tl.arange(0, BLOCK)
    state = (0, (tl.zeros([BLOCK], tl.float32), tl.zeros([BLOCK], tl.float32)))
    shift = (BLOCK, 1)  # unchanged by the loop: stays compile-time
    for i in range(n_chunks):
        x = tl.load(x_ptr + i * BLOCK + offs).to(tl.float32)
        s, sq = state[1]
        state = (state[0] + 1, (s + x, sq + x * x))
    count = state[0]
    s, sq = state[1]
    mean = s / tl.maximum(count, 1)
    tl.store(out_ptr + offs, mean)
    tl.store(out_ptr + shift[0] + offs, sq / tl.maximum(count, shift[1]) - mean * mean)


@triton.jit
def halving_count(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # A while loop carrying (value, steps) until every value is 0.
    offs = tl.arange(0, BLOCK)
    x = tl.abs(tl.load(x_ptr + offs))
    pair = (x, tl.zeros([BLOCK], tl.int32))
    while tl.max(pair[0], 0) > 0:
        v, steps = pair
        pair = (v // 2, steps + (v > 0).to(tl.int32))
    tl.store(out_ptr + offs, pair[1])


@triton.jit
def pick_pair(x_ptr, out_ptr, mode, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    t = tl.tuple([x, x + 1.0, x * 2.0, 7])
    if mode > 0:
        t = (t[0] - 1.0, t[1], t[2] * t[2], 9)
    elif mode < 0:
        t = (t[1], t[0], t[2], -1)
    head = t[:2]
    tail = t[2:]
    every_other = t[::2]
    tl.store(out_ptr + offs, head[0] * head[1] + tail[1] + every_other[1])
    tl.store(out_ptr + BLOCK + offs, t[-1] + tail[0])


@triton.constexpr_function
def index_bits(n):
    return n.bit_length()


@triton.jit
def describe_types(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    out = tl.zeros([BLOCK], tl.int32)
    if x.type.is_block():
        out += x.type.shape[0] + x.type.numel
    s = tl.sum(x, 0)
    if not s.type.is_block():
        out += 1000
    out += x.dtype.itemsize * 10 + x.type.element_ty.primitive_bitwidth
    if x.dtype.is_floating():
        out += x.dtype.fp_mantissa_width * 100000
    if x.dtype.name == "fp16":
        out += 2000
    if x.dtype.name == "int8":
        out += 3000
    out += index_bits(BLOCK) * 10000
    tl.store(out_ptr + offs, out)


@triton.jit
def clamp_to_type(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # Saturating narrowing with the target type's limits.
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    ty: tl.constexpr = out_ptr.dtype.element_ty
    hi: tl.constexpr = ty.get_int_max_value()
    lo: tl.constexpr = ty.get_int_min_value()
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(x, lo), hi).to(ty))


@triton.jit
def row_flags(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    tl.store(out_ptr + rows, tl.reduce_or(x, 1))
    tl.store(out_ptr + BM + cols, x.reduce_or(0, keep_dims=True).reshape(BN))


@triton.jit
def merge_rows(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, DESCENDING: tl.constexpr):
    # Any input gives a definite result; a bitonic row comes out sorted.
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    y = tl.bitonic_merge(x, descending=DESCENDING)
    tl.store(out_ptr + rows[:, None] * BN + cols[None, :], y)
