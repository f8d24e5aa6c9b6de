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
# kiln-variant: -n unpack_int4_rows -s "q_ptr=*u8:16, out_ptr=*bf16:16, BK=16, BN=256"
# kiln-variant: -n split_pairs -s "x_ptr=*fp32:16, out_ptr=*fp32:16, BM=64, BN=128"
# kiln-covers: unpack_int4_rows: tl.join; tl.permute; tl.reshape
# kiln-covers: split_pairs: tl.split; tl.reshape
# kiln-variant: -n unpack_awq_words -s "q_ptr=*i32:16, z_ptr=*i32:16, out_ptr=*i32:16, R=32, C=32"
# kiln-covers: unpack_awq_words: tl.interleave; tl.reshape; tl.broadcast_to
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


@triton.jit
def unpack_int4_rows(q_ptr, out_ptr, BK: tl.constexpr, BN: tl.constexpr):
    # out[2k + j, n] = nibble j of q[k, n] (low first), as bf16: the join,
    # transpose and row merge torchao's HQQ GEMM unpacks its weights with
    # (kilnc keeps every element in its thread: a renaming of registers).
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    q = tl.load(q_ptr + rk[:, None] * BN + rn[None, :])
    lo = (q & 15).to(tl.float16).to(tl.bfloat16)
    hi = (q >> 4).to(tl.float16).to(tl.bfloat16)
    w = tl.join(lo, hi).permute(0, 2, 1).reshape(2 * BK, BN)
    rw = tl.arange(0, 2 * BK)
    tl.store(out_ptr + rw[:, None] * BN + rn[None, :], w)


@triton.jit
def split_pairs(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    # out[m, i] = x[m, 2i]^2 + x[m, 2i + 1]^2: pairs split off each row.
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    re, im = tl.split(tl.reshape(x, (BM, BN // 2, 2)))
    rh = tl.arange(0, BN // 2)
    tl.store(out_ptr + rm[:, None] * (BN // 2) + rh[None, :], re * re + im * im)


@triton.jit
def unpack_awq_words(q_ptr, z_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    # AWQ's unpacking (vLLM's and GPTQModel's dequantizer): each 32-bit word
    # interleaved 8 times, then its nibbles shifted out in the order
    # [0, 4, 1, 5, 2, 6, 3, 7], the shifts an [8] broadcast and reshaped to
    # the block; one row of zero points broadcast down the rows.
    rows = tl.arange(0, R)
    words = tl.load(q_ptr + rows[:, None] * C + tl.arange(0, C)[None, :])
    words = tl.interleave(words, words)
    words = tl.interleave(words, words)
    words = tl.interleave(words, words)
    order = ((tl.arange(0, 2) * 4)[None, :] + tl.arange(0, 4)[:, None]).reshape(8)
    shifts = tl.broadcast_to((order * 4)[None, :], (R * C, 8))
    shifts = tl.reshape(shifts, (R, C * 8))
    zeros = tl.load(z_ptr + tl.arange(0, 1)[:, None] * C + tl.arange(0, C)[None, :])
    zeros = tl.interleave(zeros, zeros)
    zeros = tl.interleave(zeros, zeros)
    zeros = tl.interleave(zeros, zeros)
    zeros = tl.broadcast_to(zeros, (R, C * 8))
    nibbles = ((words >> shifts) & 0xF) - ((zeros >> shifts) & 0xF)
    tl.store(out_ptr + rows[:, None] * (C * 8) + tl.arange(0, C * 8)[None, :], nibbles)
