# Combining and separating blocks: tl.join/tl.split (a new minor axis of 2),
# tl.interleave, and tl.cat.
#
# kiln-variant: -n complex_multiply -s "a_ptr=*fp32, b_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n interleave_halves -s "x_ptr=*fp16, y_ptr=*fp16, out_ptr=*fp16, BLOCK=128"
# kiln-variant: -n concat_blocks -s "x_ptr=*i32, y_ptr=*i32, out_ptr=*i32, BLOCK=64"
# kiln-covers: complex_multiply: tl.join; tl.split; tuple unpacking; tl.reshape
# kiln-covers: interleave_halves: tl.interleave
# kiln-variant: -n split_halves -s "x_ptr=*fp32, lo_ptr=*fp32, hi_ptr=*fp32, R=16, C=64"
# kiln-covers: concat_blocks: tl.cat; tl.sum
# kiln-covers: split_halves: tl.split; tl.permute; tl.reshape
import triton
import triton.language as tl


@triton.jit
def complex_multiply(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # a, b, out hold n complex numbers as (re, im) pairs.
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    pair = tl.arange(0, 2 * BLOCK) + tl.program_id(0) * 2 * BLOCK
    a = tl.reshape(tl.load(a_ptr + pair, mask=pair < 2 * n, other=0.0), (BLOCK, 2))
    b = tl.reshape(tl.load(b_ptr + pair, mask=pair < 2 * n, other=0.0), (BLOCK, 2))
    ar, ai = tl.split(a)
    br, bi = tl.split(b)
    out = tl.join(ar * br - ai * bi, ar * bi + ai * br)     # [BLOCK, 2]
    tl.store(out_ptr + pair, tl.reshape(out, (2 * BLOCK,)), mask=pair < 2 * n)


@triton.jit
def interleave_halves(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + tl.arange(0, 2 * BLOCK), tl.interleave(x, y))


@triton.jit
def concat_blocks(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    both = tl.cat(tl.load(x_ptr + offs), tl.load(y_ptr + offs), can_reorder=True)
    # cat may reorder elements: only order-independent results are meaningful.
    tl.store(out_ptr, tl.sum(both, axis=0))



# A tile's left and right halves, as upstream's tutorial 09 takes an
# accumulator's (reshape to (R, 2, C // 2), permute, split).
@triton.jit
def split_halves(x_ptr, lo_ptr, hi_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    x = tl.load(x_ptr + rows * C + tl.arange(0, C)[None, :])
    lo, hi = tl.split(tl.permute(tl.reshape(x, (R, 2, C // 2)), (0, 2, 1)))
    half = rows * (C // 2) + tl.arange(0, C // 2)[None, :]
    tl.store(lo_ptr + half, lo)
    tl.store(hi_ptr + half, hi * 2.0)
