# tl.softmax (and x.softmax()): upstream Triton 3.6's definition, tl.max
# along dim (0 when None), subtract, tl.exp, tl.sum, then tl.fdiv: a fast
# arith.divf, or kiln.precise_divf with ieee_rounding=True. tl.max widens
# fp16 to fp32, so the result of an fp16 softmax is fp32, as upstream's.
# RUN: %kilnc compile %s -n rows -s "*fp16, *fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=ROWS
# RUN: %kilnc compile %s -n vector -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=VECTOR
# RUN: %kilnc compile %s -n columns -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=COLUMNS
import triton
import triton.language as tl


# ROWS-LABEL: func.func @rows
# ROWS: arith.extf %{{.*}} : tensor<16x64xf16> to tensor<16x64xf32>
# ROWS: kiln.reduce %{{.*}} {axis = 1 : i32} : (tensor<16x64xf32>) -> tensor<16xf32>
# ROWS: arith.maxnumf %{{.*}}, %{{.*}} : f32
# ROWS: kiln.expand_dims %{{.*}} {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
# ROWS: arith.subf %{{.*}}, %{{.*}} : tensor<16x64xf32>
# ROWS: math.exp %{{.*}} : tensor<16x64xf32>
# ROWS: kiln.reduce %{{.*}} {axis = 1 : i32} : (tensor<16x64xf32>) -> tensor<16xf32>
# ROWS: arith.addf %{{.*}}, %{{.*}} : f32
# ROWS: arith.divf %{{.*}}, %{{.*}} : tensor<16x64xf32>
# ROWS-NOT: kiln.precise_divf
@triton.jit
def rows(x_ptr, out_ptr):
    offs = tl.arange(0, 16)[:, None] * 64 + tl.arange(0, 64)[None, :]
    x = tl.load(x_ptr + offs)
    y = tl.softmax(x, dim=1, keep_dims=True)
    tl.static_assert(y.dtype == tl.float32)
    tl.store(out_ptr + offs, y)


# A 1-D block reduces to scalars; the method form with IEEE division (its
# max, exp and sum are the same values as the first call's).
# VECTOR-LABEL: func.func @vector
# VECTOR: kiln.reduce %{{.*}} {axis = 0 : i32} : (tensor<128xf32>) -> f32
# VECTOR: arith.maxnumf
# VECTOR: %[[NUM:.*]] = math.exp %{{.*}} : tensor<128xf32>
# VECTOR: kiln.reduce %[[NUM]] {axis = 0 : i32} : (tensor<128xf32>) -> f32
# VECTOR: %[[DEN:.*]] = kiln.splat
# VECTOR: arith.divf %[[NUM]], %[[DEN]] : tensor<128xf32>
# VECTOR: kiln.precise_divf %[[NUM]], %[[DEN]] : tensor<128xf32>
@triton.jit
def vector(x_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.softmax(x) + x.softmax(ieee_rounding=True))


# dim=None is dim 0: along the columns of a 2-D block, whose max and sum
# broadcast back without keep_dims.
# COLUMNS-LABEL: func.func @columns
# COLUMNS: kiln.reduce %{{.*}} {axis = 0 : i32} : (tensor<8x32xf32>) -> tensor<32xf32>
# COLUMNS: kiln.expand_dims %{{.*}} {axis = 0 : i32} : tensor<32xf32> -> tensor<1x32xf32>
# COLUMNS: math.exp %{{.*}} : tensor<8x32xf32>
# COLUMNS: kiln.reduce %{{.*}} {axis = 0 : i32} : (tensor<8x32xf32>) -> tensor<32xf32>
# COLUMNS: arith.divf %{{.*}}, %{{.*}} : tensor<8x32xf32>
@triton.jit
def columns(x_ptr):
    offs = tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.softmax(x, dim=-2))
