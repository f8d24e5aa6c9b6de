# Forms upstream Triton 3.6 compiles that a third sweep of the language
# found Kiln rejecting: a constexpr string's Python operations (`+`, `*`,
# ordering, len, str methods), a Python int beside a float tensor in
# tl.div_rn, tl.reshape of a one-element block to (), tl.sort of booleans,
# and a load whose mask is larger than its block of pointers (both
# broadcast); and f-strings of compile-time values and ints past int64 (a
# fourth sweep).
#
# kiln-variant: -n named_activation -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, ACT='Leaky_ReLU ', BLOCK=128"
# kiln-variant: -n named_activation -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, ACT='gelu', BLOCK=128"
# kiln-variant: -n shapes_and_flags -s "x_ptr=*fp32, out_ptr=*fp32, flags_ptr=*i32, col_ptr=*fp32, sum_ptr=*fp32"
# kiln-covers: named_activation: string argument; tl.static_assert; tl.where
# kiln-covers: shapes_and_flags: tl.div_rn; tl.reshape; tl.sort; tl.load(mask=, other=)
# kiln-variant: -n formatted_names -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, ACT='ReLU', BLOCK=128"
# kiln-variant: -n formatted_names -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, ACT='gelu', BLOCK=64"
# kiln-covers: formatted_names: f-string
# kiln-variant: -n hashed_keys -s "x_ptr=*i64, out_ptr=*i64, n=i32, BLOCK=128"
# kiln-covers: hashed_keys: int literal (u64)
import triton
import triton.language as tl


@triton.jit
def named_activation(x_ptr, out_ptr, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(len(ACT) > 0)
    name: tl.constexpr = ACT.strip().lower().replace("_", "")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if name.startswith("leaky"):
        slope = 0.01 * (name.count("l") + 1)
        y = tl.where(x > 0, x, x * slope)
    elif name + "_tanh" == "gelu_tanh" and name < "relu":
        y = 0.5 * x * (1 + tl.erf(x * 0.7071067811865476))
    else:
        y = x
    if (name * 2).endswith("relu"):
        y = y * 2
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def shapes_and_flags(x_ptr, out_ptr, flags_ptr, col_ptr, sum_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.div_rn(x, 3))
    flags = tl.sort(x > 0)
    tl.store(flags_ptr + offs, flags.to(tl.int32))
    first = tl.load(x_ptr + tl.arange(0, 1))
    tl.store(sum_ptr, tl.reshape(first, ()) + 1.0)
    # A column of x (pointers [16, 1]) under a [16, 4] mask: [16, 4].
    cols = tl.arange(0, 4)
    m = (offs[:, None] < 12) & (cols[None, :] < 3)
    wide = tl.load(x_ptr + offs[:, None], mask=m, other=-1.0)
    tl.store(col_ptr + offs[:, None] * 4 + cols[None, :], wide)


@triton.jit
def formatted_names(x_ptr, out_ptr, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 32 == 0, f"BLOCK={BLOCK} must be a multiple of 32")
    key: tl.constexpr = f"{ACT.lower()}_{BLOCK}"
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if key == "relu_128":
        y = tl.maximum(x, 0.0)
    else:
        y = x * len(f"{key!r}")  # 'gelu_64' with its quotes: 9
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def hashed_keys(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0).to(tl.uint64)
    h = x * 0x9E3779B97F4A7C15  # a uint64 constant
    h = (h ^ (h >> 29)) & 0xFFFFFFFFFFFFFFFF
    top: tl.constexpr = 2**63 - 1
    tl.store(out_ptr + offs, (h & top).to(tl.int64), mask=offs < n)
