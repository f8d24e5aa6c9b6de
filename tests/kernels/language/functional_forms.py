# Functions upstream exposes beside the operators and tl.rand: tl.add,
# tl.sub and tl.mul; the Philox rounds alone (tl.philox_impl, on 32- and
# 64-bit counters with a caller's key) and the Box-Muller step
# (tl.pair_uniform_to_normal); tl.range's disable_licm, a while loop's
# tl.condition and tl.TRITON_MAX_TENSOR_NUMEL.
#
# kiln-variant: -n arithmetic_functions -s "x_ptr=*i32, y_ptr=*i32, out_ptr=*i32, BLOCK=128"
# kiln-variant: -n arithmetic_functions -s "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, BLOCK=64"
# kiln-variant: -n philox_rounds -s "c_ptr=*u32, k_ptr=*u32, out_ptr=*u32, ROUNDS=10, BLOCK=128"
# kiln-variant: -n philox_rounds -s "c_ptr=*u64, k_ptr=*u64, out_ptr=*u64, ROUNDS=6, BLOCK=64"
# kiln-variant: -n normal_pairs -s "u_ptr=*fp32, out_ptr=*fp32, BLOCK=128"
# kiln-variant: -n summed_rows -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n summed_rows_while -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n scalar_and_flags -s "x_ptr=*i32, out_ptr=*i32, BLOCK=64"
# kiln-variant: -n scalar_and_flags -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=32"
# kiln-covers: arithmetic_functions: tl.add/tl.sub/tl.mul
# kiln-covers: scalar_and_flags: .item()
# kiln-covers: scalar_and_flags: .logical_and()/.logical_or()
# kiln-covers: philox_rounds: tl.philox_impl
# kiln-covers: normal_pairs: tl.pair_uniform_to_normal
# kiln-covers: summed_rows: tl.range(disable_licm=)
# kiln-covers: summed_rows: tl.TRITON_MAX_TENSOR_NUMEL
# kiln-covers: summed_rows_while: while tl.condition(disable_licm=)
import triton
import triton.language as tl


@triton.jit
def arithmetic_functions(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.add(x, y))
    tl.store(out_ptr + BLOCK + offs, tl.sub(x, 3, sanitize_overflow=False))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.mul(x, y))


@triton.jit
def philox_rounds(c_ptr, k_ptr, out_ptr, ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c = tl.load(c_ptr + offs)
    k0 = tl.load(k_ptr)
    a, b, d, e = tl.philox_impl(c, c ^ 1, c * 0 + 5, c + 7, k0, 12345, ROUNDS)
    tl.store(out_ptr + offs, a)
    tl.store(out_ptr + BLOCK + offs, b)
    tl.store(out_ptr + 2 * BLOCK + offs, d)
    tl.store(out_ptr + 3 * BLOCK + offs, e)


@triton.jit
def normal_pairs(u_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    u1 = tl.load(u_ptr + offs)
    u2 = tl.load(u_ptr + BLOCK + offs)
    n1, n2 = tl.pair_uniform_to_normal(u1, u2)
    tl.store(out_ptr + offs, n1)
    tl.store(out_ptr + BLOCK + offs, n2)


@triton.jit
def summed_rows(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= tl.TRITON_MAX_TENSOR_NUMEL)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(0, n, disable_licm=True):
        acc += tl.load(x_ptr + i * BLOCK + offs)
    tl.store(out_ptr + offs, acc)


@triton.jit
def summed_rows_while(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    i = 0
    while tl.condition(i < n, disable_licm=True):
        acc += tl.load(x_ptr + i * BLOCK + offs)
        i += 1
    tl.store(out_ptr + offs, acc)


@triton.jit
def scalar_and_flags(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    first = tl.load(x_ptr + tl.arange(0, 1)).item()
    x = tl.load(x_ptr + offs)
    keep = (x > 0).logical_and(x < 2).logical_or(x < -1)
    tl.store(out_ptr + offs, tl.where(keep, x * first, 0))
    tl.store(out_ptr + BLOCK, tl.max(x, 0, keep_dims=True).item())
