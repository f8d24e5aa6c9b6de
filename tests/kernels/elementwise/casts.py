# Conversions between every dtype: .to(dtype) with value conversion, bitcasts
# of equal width, fp downcast rounding, and implicit casts of store values.
#
# kiln-variant: -n convert -s "in_ptr=*fp32, out_ptr=*fp16, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp32, out_ptr=*bf16, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp16, out_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp32, out_ptr=*fp64, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp64, out_ptr=*i64, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*i32, out_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*u8, out_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*i8, out_ptr=*i64, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*i64, out_ptr=*i16, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*u16, out_ptr=*u64, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*u32, out_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp32, out_ptr=*u8, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*i1, out_ptr=*i32, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp32, out_ptr=*i1, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp16, out_ptr=*fp8e4nv, n=i32, BLOCK=1024"
# kiln-variant: -n convert -s "in_ptr=*fp8e5, out_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n convert_to_dtype -s "in_ptr=*fp32, out_ptr=*fp16, n=i32, DTYPE=tl.float16, BLOCK=512"
# kiln-variant: -n convert_to_dtype -s "in_ptr=*fp32, out_ptr=*fp8e5, n=i32, DTYPE=tl.float8e5, BLOCK=512"
# kiln-variant: -n convert_to_dtype -s "in_ptr=*i32, out_ptr=*u32, n=i32, DTYPE=tl.uint32, BLOCK=512"
# kiln-variant: -n bitcasts -s "f_ptr=*fp32, i_ptr=*i32, h_ptr=*fp16, s_ptr=*i16, n=i32, BLOCK=256"
# kiln-variant: -n downcast_rounding -s "in_ptr=*fp32, out_ptr=*fp16, n=i32, BLOCK=256"
# kiln-variant: -n downcast_rounding -s "in_ptr=*fp32, out_ptr=*fp8e5, n=i32, BLOCK=256"
# kiln-covers: convert: .to(dtype); ptr.dtype.element_ty; tl.float16; tl.bfloat16; tl.float32; tl.float64; tl.int1; tl.int8; tl.int16; tl.int32; tl.int64; tl.uint8; tl.uint16; tl.uint32; tl.uint64; tl.float8e4nv; tl.float8e5
# kiln-covers: convert_to_dtype: .to(dtype); dtype as a constexpr argument; tl.float8e5; tl.uint32
# kiln-covers: bitcasts: .to(dtype, bitcast=True); tl.int16
# kiln-covers: downcast_rounding: .to(dtype); string argument
import triton
import triton.language as tl


@triton.jit
def convert(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(in_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def convert_to_dtype(in_ptr, out_ptr, n, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x.to(DTYPE), mask=offs < n)


@triton.jit
def bitcasts(f_ptr, i_ptr, h_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    f = tl.load(f_ptr + offs, mask=m)
    bits = f.to(tl.int32, bitcast=True)
    tl.store(i_ptr + offs, bits & 0x7FFFFFFF, mask=m)
    h = tl.load(h_ptr + offs, mask=m)
    tl.store(s_ptr + offs, h.to(tl.int16, bitcast=True), mask=m)


@triton.jit
def downcast_rounding(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs, mask=offs < n)
    y = x.to(out_ptr.dtype.element_ty, fp_downcast_rounding="rtz")
    tl.store(out_ptr + offs, y, mask=offs < n)
