# Arithmetic operators on blocks and scalars, with Triton's promotion rules:
# float op int → float, narrower → wider, Python numbers take the block's type.
#
# kiln-variant: -n float_ops -s "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n float_ops -s "x_ptr=*fp16, y_ptr=*fp16, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n float_ops -s "x_ptr=*fp64, y_ptr=*fp64, out_ptr=*fp64, n=i32, BLOCK=128"
# kiln-variant: -n int_ops -s "x_ptr=*i32, y_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256"
# kiln-variant: -n int_ops -s "x_ptr=*i64, y_ptr=*i64, out_ptr=*i64, n=i32, BLOCK=256"
# kiln-variant: -n int_ops -s "x_ptr=*i8, y_ptr=*i8, out_ptr=*i16, n=i32, BLOCK=256"
# kiln-variant: -n int_ops -s "x_ptr=*i16, y_ptr=*i16, out_ptr=*i16, n=i32, BLOCK=256"
# kiln-variant: -n unsigned_ops -s "x_ptr=*u32, y_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=256"
# kiln-variant: -n unsigned_ops -s "x_ptr=*u8, y_ptr=*u8, out_ptr=*u8, n=i32, BLOCK=256"
# kiln-variant: -n unsigned_ops -s "x_ptr=*u16, y_ptr=*u16, out_ptr=*u16, n=i32, BLOCK=256"
# kiln-variant: -n unsigned_ops -s "x_ptr=*u64, y_ptr=*u64, out_ptr=*u64, n=i32, BLOCK=256"
# kiln-variant: -n mixed_promotion -s "a_ptr=*i32, b_ptr=*fp16, c_ptr=*bf16, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-covers: float_ops: + - * /; % on floats; unary - +; float literal; type promotion; tl.float16; tl.float32; tl.float64
# kiln-covers: int_ops: + - * /; // and % on signed ints; & | ^ ~; << >>; unary - +; int literal (i32); tl.int8; tl.int16; tl.int32; tl.int64; overflow (wrap-around)
# kiln-covers: unsigned_ops: // and % on unsigned ints; << >>; & | ^ ~; tl.uint8; tl.uint16; tl.uint32; tl.uint64
# kiln-covers: mixed_promotion: type promotion; tl.bfloat16; tl.float16; scalar vs tensor
import triton
import triton.language as tl


@triton.jit
def float_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)
    r = x + y
    r = r - x * 2.5
    r = r * -y
    r = r / (y + 3)
    r = r + x % y
    r = r - +0.125 * -(-1)
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def int_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    y = tl.where(y == 0, 1, y)
    q = x // y          # rounds toward zero, as in C
    r = x % y           # takes the sign of x, as in C
    b = (x & 0x0F) | (y ^ 3)
    s = (x << 2) >> 1
    v = q + r * 7 - b + s + ~x + (-y)
    tl.store(out_ptr + offs, v, mask=m)


@triton.jit
def unsigned_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1) | 1
    v = (x // y) + (x % y) + (x >> 3) + (x << 1) + (x & y) + (x | y) + (x ^ y) + ~x
    tl.store(out_ptr + offs, v, mask=m)


@triton.jit
def mixed_promotion(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=0)   # int32
    b = tl.load(b_ptr + offs, mask=m, other=0)   # float16
    c = tl.load(c_ptr + offs, mask=m, other=0)   # bfloat16
    ab = a + b          # int32 + fp16 → fp16
    bc = b * c          # fp16 * bf16 → fp16 (fp16 outranks bf16)
    half = b * 0.5      # a Python float keeps fp16
    scaled = a * 3      # a Python int keeps int32
    tl.store(out_ptr + offs, ab + bc + half + scaled, mask=m)
