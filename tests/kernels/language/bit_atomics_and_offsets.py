# Forms upstream Triton 3.6 compiles that Kiln took from a sweep of the
# language: bitwise atomics on fp32 (on the bits: atom.and/or/xor.b32), a
# pointer plus a bool block (0 or 1), tl.cat of int8 with uint8 (the first
# operand's type), a tl.constexpr tuple as the block shape (SHAPE=(8, 16) in
# the signature) and getattr/hasattr on values.
#
# kiln-variant: -n float_bits -s "x_ptr=*fp32, and_ptr=*fp32, or_ptr=*fp32, bits_ptr=*i32, i8_ptr=*i8, u8_ptr=*u8, sum_ptr=*i32, BLOCK=128"
# kiln-variant: -n tuple_shape -s "x_ptr=*fp32, out_ptr=*fp32, SHAPE=(8, 16)"
# kiln-covers: float_bits: tl.atomic_and; tl.atomic_or; tl.atomic_xor; tl.cat
# kiln-covers: tuple_shape: tl.constexpr parameter; type introspection
import triton
import triton.language as tl


@triton.jit
def float_bits(x_ptr, and_ptr, or_ptr, bits_ptr, i8_ptr, u8_ptr, sum_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # x > 0 is a bool block; as an offset it is 0 or 1.
    first_two = tl.load(x_ptr + (x > 0))
    tl.store(bits_ptr + BLOCK + offs, first_two.to(tl.int32, bitcast=True))
    old_and = tl.atomic_and(and_ptr + offs, x)
    old_or = tl.atomic_or(or_ptr + offs, x)
    # The old and-bits xored into the or-result: what was there before, read
    # back as int32.
    flipped = tl.atomic_xor(or_ptr + offs, old_and)
    tl.store(bits_ptr + offs, (flipped + old_or).to(tl.int32, bitcast=True))
    small = tl.load(i8_ptr + tl.arange(0, 16))
    wide = tl.load(u8_ptr + tl.arange(0, 16))
    both = tl.cat(small, wide, can_reorder=True)
    tl.static_assert(both.dtype == tl.int8)
    # The order of a reorderable cat is the compiler's: its sum is not.
    tl.store(sum_ptr, tl.sum(both.to(tl.int32)))


@triton.jit
def tuple_shape(x_ptr, out_ptr, SHAPE: tl.constexpr):
    tl.static_assert(len(SHAPE) == 2)
    rows = tl.arange(0, SHAPE[0])
    cols = tl.arange(0, SHAPE[1])
    offs = rows[:, None] * SHAPE[1] + cols[None, :]
    x = tl.load(x_ptr + offs)
    tl.static_assert(getattr(x, "shape") == (SHAPE[0], SHAPE[1]))
    tl.static_assert(hasattr(x, "dtype") and not hasattr(SHAPE, "dtype"))
    tl.store(out_ptr + offs, x * 2 + tl.sum(x, axis=1)[:, None])
