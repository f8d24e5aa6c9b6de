# tl.float8e4b15: e4m3 with exponent bias 15 (no inf or NaN; 1.75 at most),
# upstream's fp8 format for every NVIDIA target. Conversions from fp16 and
# fp32 (fp32 goes to fp16 toward zero first; the magnitude is clamped to 1.75
# and rounded half up), to fp16, bf16, fp32 and wider; loads and stores of
# its bytes, through *fp8e4b15 pointers or u8 ones bitcast; tl.dot of two
# fp8e4b15 blocks (widened to fp16, as upstream multiplies them).
#
# kiln-variant: -n round_trip -s "in_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n round_trip -s "in_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=1024"
# kiln-variant: -n round_trip -s "in_ptr=*fp16, out_ptr=*bf16, n=i32, BLOCK=512"
# kiln-variant: -n round_trip -s "in_ptr=*fp32, out_ptr=*fp64, n=i32, BLOCK=256"
# kiln-variant: -n encode -s "in_ptr=*fp32, out_ptr=*u8, n=i32, BLOCK=1024"
# kiln-variant: -n encode -s "in_ptr=*fp16, out_ptr=*fp8e4b15, n=i32, BLOCK=1024"
# kiln-variant: -n decode -s "in_ptr=*u8, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n decode -s "in_ptr=*fp8e4b15, out_ptr=*fp16, n=i32, BLOCK=256"
# kiln-variant: -n dot_e4b15 -s "a_ptr=*u8, b_ptr=*u8, c_ptr=*fp32, M=i32, N=i32, K=i32, BM=64, BN=64, BK=32"
# kiln-variant: -n dot_e4b15 -s "a_ptr=*u8, b_ptr=*u8, c_ptr=*fp32, M=i32, N=i32, K=i32, BM=16, BN=32, BK=16" --arch sm_80
# kiln-variant: -n dtype_fields -s "out_ptr=*i32"
# kiln-covers: round_trip: tl.float8e4b15
# kiln-covers: encode: tl.float8e4b15
# kiln-covers: decode: tl.float8e4b15
# kiln-covers: dot_e4b15: tl.dot of fp8e4b15
import triton
import triton.language as tl


@triton.jit
def round_trip(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(in_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x.to(tl.float8e4b15).to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def encode(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(in_ptr + offs, mask=m).to(tl.float8e4b15)
    if out_ptr.dtype.element_ty == tl.uint8:
        tl.store(out_ptr + offs, y.to(tl.uint8, bitcast=True), mask=m)
    else:
        tl.store(out_ptr + offs, y, mask=m)


@triton.jit
def decode(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(in_ptr + offs, mask=m)
    if x.dtype == tl.uint8:
        x = x.to(tl.float8e4b15, bitcast=True)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def dot_e4b15(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a.to(tl.float8e4b15, bitcast=True), b.to(tl.float8e4b15, bitcast=True), acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def dtype_fields(out_ptr):
    d: tl.constexpr = tl.float8e4b15
    tl.static_assert(d.is_fp8())
    tl.static_assert(d.is_fp8e4b15())
    tl.static_assert(not d.is_fp8e4nv())
    tl.store(out_ptr, d.primitive_bitwidth * 100 + d.fp_mantissa_width * 10 + d.exponent_bias)
