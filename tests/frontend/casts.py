# Conversions between every dtype: .to(dtype) (value conversion, with
# fp_downcast_rounding), .to(dtype, bitcast=True), fp8 through wider floats,
# pointer casts; zeros_like/full_like keep the input's shape.
# RUN: %kilnc compile %s -n float_casts -s "*fp32, *fp8e4nv, *fp8e5, *bf16, *fp16" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=FLOAT
# RUN: %kilnc compile %s -n int_casts -s "*i8, *u16, *i64, *i1" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=INT
# RUN: %kilnc compile %s -n bitcasts -s "*fp32, *fp16" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=BITCAST
# RUN: %kilnc compile %s -n like -s "*fp16" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=LIKE
import triton
import triton.language as tl


# FLOAT-LABEL: func.func @float_casts
# FLOAT: arith.truncf %{{.*}} : tensor<32xf32> to tensor<32xf8E4M3FN>
# FLOAT: arith.truncf %{{.*}} toward_zero : tensor<32xf32> to tensor<32xf16>
# fp8e4nv to fp8e5 goes through fp32.
# FLOAT: arith.extf %{{.*}} : tensor<32xf8E4M3FN> to tensor<32xf32>
# FLOAT: arith.truncf %{{.*}} : tensor<32xf32> to tensor<32xf8E5M2>
# bf16 to fp16 goes through fp32.
# FLOAT: arith.extf %{{.*}} : tensor<32xbf16> to tensor<32xf32>
# FLOAT: arith.truncf %{{.*}} : tensor<32xf32> to tensor<32xf16>
@triton.jit
def float_casts(f_ptr, e4_ptr, e5_ptr, b_ptr, h_ptr):
    r = tl.arange(0, 32)
    x = tl.load(f_ptr + r)
    e4 = x.to(tl.float8e4nv)
    tl.store(e4_ptr + r, e4)
    tl.store(h_ptr + r, x.to(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(e5_ptr + r, e4.to(tl.float8e5))
    tl.store(h_ptr + r, tl.load(b_ptr + r).to(tl.float16))


# INT-LABEL: func.func @int_casts
# INT: arith.extsi %{{.*}} : tensor<32xi8> to tensor<32xi64>
# INT: arith.extui %{{.*}} : tensor<32xi16> to tensor<32xi64>
# INT: arith.trunci %{{.*}} : tensor<32xi64> to tensor<32xi8>
# INT: arith.cmpi ne, %{{.*}}, %{{.*}} : tensor<32xi64>
# INT: arith.uitofp %{{.*}} : tensor<32xi16> to tensor<32xf32>
# INT: arith.fptosi %{{.*}} : tensor<32xf32> to tensor<32xi8>
@triton.jit
def int_casts(i8_ptr, u16_ptr, i64_ptr, b_ptr):
    r = tl.arange(0, 32)
    a = tl.load(i8_ptr + r)
    u = tl.load(u16_ptr + r)
    tl.store(i64_ptr + r, a.to(tl.int64) + u.to(tl.int64))
    w = tl.load(i64_ptr + r)
    tl.store(i8_ptr + r, w.to(tl.int8))
    tl.store(b_ptr + r, w.to(tl.int1))
    tl.store(i8_ptr + r, u.to(tl.float32).to(tl.int8))


# BITCAST-LABEL: func.func @bitcasts
# BITCAST: arith.bitcast %{{.*}} : tensor<32xf32> to tensor<32xi32>
# BITCAST: arith.bitcast %{{.*}} : tensor<32xf16> to tensor<32xi16>
# int32 to uint32 keeps the value: nothing to emit.
# BITCAST-NOT: arith.bitcast %{{.*}} : tensor<32xi32> to tensor<32xi32>
@triton.jit
def bitcasts(f_ptr, h_ptr):
    r = tl.arange(0, 32)
    bits = tl.load(f_ptr + r).to(tl.int32, bitcast=True)
    ubits = bits.to(tl.uint32, bitcast=True)
    hbits = tl.load(h_ptr + r).to(tl.int16, bitcast=True)
    tl.store(f_ptr + r, (ubits >> 1).to(tl.float32) + hbits.to(tl.float32))


# LIKE-LABEL: func.func @like
# LIKE-DAG: arith.constant dense<0.000000e+00> : tensor<32xf16>
# LIKE-DAG: arith.constant dense<2.500000e+00> : tensor<32xf32>
@triton.jit
def like(h_ptr):
    r = tl.arange(0, 32)
    h = tl.load(h_ptr + r)
    z = tl.zeros_like(h)
    f = tl.full_like(h, 2.5, dtype=tl.float32)
    tl.store(h_ptr + r, h + z + f)
