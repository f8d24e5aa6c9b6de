# tl.inline_asm_elementwise: PTX applied element by element, with one and
# two inputs, several outputs, and packed 8-bit elements; groups of wider
# elements (pack=2 over 32-bit blocks, 16-bit ones at pack=4), one register
# per 32-bit element and two halves a register (as upstream passes them).
#
# kiln-variant: -n shift_left_asm -s "x_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=512"
# kiln-variant: -n funnel_and_sum -s "x_ptr=*u32, y_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=512"
# kiln-variant: -n packed_bytes -s "x_ptr=*u8, out_ptr=*u8, n=i32, BLOCK=1024"
# kiln-variant: -n paired_words -s "x_ptr=*fp32, y_ptr=*i32, out_ptr=*fp16, n=i32, BLOCK=512"
# kiln-variant: -n paired_halves -s "x_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=512"
# kiln-covers: paired_words: tl.inline_asm_elementwise
# kiln-covers: paired_halves: tl.inline_asm_elementwise
# kiln-covers: shift_left_asm: tl.inline_asm_elementwise; string argument
# kiln-covers: funnel_and_sum: tl.inline_asm_elementwise; tuple unpacking
# kiln-covers: packed_bytes: tl.inline_asm_elementwise; tl.uint8
import triton
import triton.language as tl


@triton.jit
def shift_left_asm(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def funnel_and_sum(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.load(y_ptr + offs, mask=offs < n)
    hi, lo = tl.inline_asm_elementwise(
        "shf.l.wrap.b32 $0, $2, $3, 5;\n\tadd.u32 $1, $2, $3;",
        "=r,=r,r,r", [x, y], dtype=(tl.uint32, tl.uint32), is_pure=True, pack=1)
    tl.store(out_ptr + offs, hi ^ lo, mask=offs < n)


@triton.jit
def packed_bytes(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    # Four uint8 elements per 32-bit register: swap the nibbles of each byte.
    y = tl.inline_asm_elementwise(
        "{ .reg .b32 a, b; shl.b32 a, $1, 4; shr.b32 b, $1, 4; and.b32 a, a, 0xF0F0F0F0; "
        "and.b32 b, b, 0x0F0F0F0F; or.b32 $0, a, b; }",
        "=r,r", [x], dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def paired_words(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = tl.load(y_ptr + offs, mask=offs < n, other=0)
    # Two elements a call, as mamba's stochastic rounding: $1, $2 are x's
    # pair, $3, $4 y's (a register each); $0 the two fp16 results in one
    # register, their lowest bits flipped where both of y's words have bit 0.
    z = tl.inline_asm_elementwise(
        "{ .reg .b32 t; and.b32 t, $3, $4; and.b32 t, t, 1; mul.lo.u32 t, t, 0x10001; "
        "cvt.rn.f16x2.f32 $0, $2, $1; xor.b32 $0, $0, t; }",
        "=r,r,r,r,r", [x, y], dtype=tl.float16, is_pure=True, pack=2)
    tl.store(out_ptr + offs, z, mask=offs < n)


@triton.jit
def paired_halves(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    # Four halves a call, two to a register: each pair swapped.
    y = tl.inline_asm_elementwise(
        "{ prmt.b32 $0, $2, 0, 0x1032; prmt.b32 $1, $3, 0, 0x1032; }",
        "=r,=r,r,r", [x], dtype=tl.float16, is_pure=True, pack=4)
    tl.store(out_ptr + offs, y, mask=offs < n)
