# Reductions and scans on kiln.reduce/kiln.scan, with upstream Triton's
# result types (checked against Triton 3.6): sum keeps floats and widens
# narrow integers to (u)int32 (bool counts as unsigned); max/min widen
# anything narrower than 32 bits (fp16 → fp32, uint8 → int32); argmax keeps
# the input type and compares with a tie break on the index; reducing a
# 1-D block gives a scalar.
# RUN: %kilnc compile %s -n sums -s "*fp16, *i8, *i1, *fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SUM
# RUN: %kilnc compile %s -n max_min -s "*fp16, *u8, *fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=MAX
# RUN: %kilnc compile %s -n arg_reductions -s "*fp32, *i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=ARG
# RUN: %kilnc compile %s -n custom_reduce -s "*fp32, *i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=CUSTOM
# RUN: %kilnc compile %s -n scans -s "*fp32, *i8" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SCAN
# RUN: %kilnc compile %s -n keep_dims -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=KEEP
# RUN: %kilnc compile %s -n sorts -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SORT
# RUN: %kilnc compile %s -n flips -s "*fp16" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=FLIP
import triton
import triton.language as tl


# SUM-LABEL: func.func @sums
# SUM: kiln.reduce %{{.*}} {axis = 1 : i32} : (tensor<8x16xf16>) -> tensor<8xf16>
# SUM: arith.addf %{{.*}}, %{{.*}} : f16
# SUM: arith.extsi %{{.*}} : tensor<8x16xi8> to tensor<8x16xi32>
# SUM: kiln.reduce %{{.*}} {axis = 1 : i32} : (tensor<8x16xi32>) -> tensor<8xi32>
# SUM: arith.extui %{{.*}} : tensor<8x16xi1> to tensor<8x16xi32>
# Axis None reduces everything: a reshape to 1-D, then a scalar result.
# SUM: arith.extf %{{.*}} : tensor<8x16xf16> to tensor<8x16xf32>
# SUM: kiln.reshape %{{.*}} {allow_reorder = true} : tensor<8x16xf32> -> tensor<128xf32>
# SUM: kiln.reduce %{{.*}} {axis = 0 : i32} : (tensor<128xf32>) -> f32
@triton.jit
def sums(x_ptr, i_ptr, b_ptr, out_ptr):
    offs = tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + offs)
    s = tl.sum(x, axis=1)
    tl.static_assert(s.dtype == tl.float16)
    i = tl.sum(tl.load(i_ptr + offs), 1)
    tl.static_assert(i.dtype == tl.int32)
    b = tl.load(b_ptr + offs).sum(1)
    tl.static_assert(b.dtype == tl.uint32)
    total = tl.sum(x, dtype=tl.float32)
    tl.store(out_ptr + tl.arange(0, 8), s + i + b + total)


# MAX-LABEL: func.func @max_min
# MAX: arith.extf %{{.*}} : tensor<8x16xf16> to tensor<8x16xf32>
# MAX: kiln.reduce %{{.*}} {axis = 0 : i32} : (tensor<8x16xf32>) -> tensor<16xf32>
# MAX: arith.maxnumf %{{.*}}, %{{.*}} : f32
# MAX: arith.extui %{{.*}} : tensor<8x16xi8> to tensor<8x16xi32>
# MAX: arith.minsi %{{.*}}, %{{.*}} : i32
@triton.jit
def max_min(x_ptr, u_ptr, out_ptr):
    offs = tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :]
    m = tl.max(tl.load(x_ptr + offs), axis=0)
    tl.static_assert(m.dtype == tl.float32)
    n = tl.load(u_ptr + offs).min(0)
    tl.static_assert(n.dtype == tl.int32)
    tl.store(out_ptr + tl.arange(0, 16), m + n)


# Values and indices reduce together; the index is a make_range broadcast
# along the other dimensions.
# ARG-LABEL: func.func @arg_reductions
# ARG: %[[IDX:.*]] = kiln.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
# ARG: kiln.expand_dims %[[IDX]] {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
# ARG: kiln.broadcast %{{.*}} : tensor<1x16xi32> -> tensor<8x16xi32>
# ARG: kiln.reduce %{{.*}}, %{{.*}} {axis = 1 : i32} : (tensor<8x16xf32>, tensor<8x16xi32>) -> (tensor<8xf32>, tensor<8xi32>)
# ARG: ^bb0(%[[V1:.*]]: f32, %[[I1:.*]]: i32, %[[V2:.*]]: f32, %[[I2:.*]]: i32):
# ARG: %[[GT:.*]] = arith.cmpf ogt, %[[V1]], %[[V2]] : f32
# ARG: %[[EQ:.*]] = arith.cmpf oeq, %[[V1]], %[[V2]] : f32
# ARG: %[[LT:.*]] = arith.cmpi slt, %[[I1]], %[[I2]] : i32
# ARG: %[[TIE:.*]] = arith.andi %[[EQ]], %[[LT]] : i1
# ARG: %[[TAKE:.*]] = arith.ori %[[GT]], %[[TIE]] : i1
# ARG: arith.select %[[TAKE]], %[[V1]], %[[V2]] : f32
# ARG: arith.select %[[TAKE]], %[[I1]], %[[I2]] : i32
# ARG: kiln.reduce.return %{{.*}}, %{{.*}} : f32, i32
# argmin without the tie break compares values only.
# ARG: arith.cmpf olt
# ARG-NOT: arith.cmpf oeq
# ARG: kiln.reduce.return
@triton.jit
def arg_reductions(x_ptr, out_ptr):
    rows = tl.arange(0, 8)
    offs = rows[:, None] * 16 + tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + offs)
    v, i = tl.max(x, 1, return_indices=True)
    j = tl.argmin(x, axis=1, tie_break_left=False)
    tl.store(out_ptr + rows, i + j + v.to(tl.int32))


@triton.jit
def _add_pairs(a0, a1, b0, b1):
    return a0 + b0, a1 * b1


@triton.jit
def _bigger(a, b):
    return tl.where(a > b, a, b)


# A @triton.jit combine function is inlined into the region.
# CUSTOM-LABEL: func.func @custom_reduce
# CUSTOM: kiln.reduce %{{.*}}, %{{.*}} {axis = 0 : i32} : (tensor<32xf32>, tensor<32xi32>) -> (f32, i32)
# CUSTOM: arith.addf
# CUSTOM: arith.muli
# CUSTOM: kiln.reduce.return %{{.*}}, %{{.*}} : f32, i32
# CUSTOM: kiln.reduce %{{.*}} {axis = 0 : i32} : (tensor<32xf32>) -> f32
# CUSTOM: arith.cmpf ogt
# CUSTOM: arith.select
@triton.jit
def custom_reduce(x_ptr, out_ptr):
    r = tl.arange(0, 32)
    x = tl.load(x_ptr + r)
    s, p = tl.reduce((x, r), 0, _add_pairs)
    m = tl.reduce(x, axis=0, combine_fn=_bigger)
    tl.store(out_ptr, p + (s + m).to(tl.int32))


# SCAN-LABEL: func.func @scans
# SCAN: kiln.scan %{{.*}} {axis = 0 : i32} : (tensor<32xf32>) -> tensor<32xf32>
# SCAN: arith.addf
# SCAN: kiln.scan.return
# SCAN: kiln.scan %{{.*}} {axis = 0 : i32, reverse = true} : (tensor<32xf32>) -> tensor<32xf32>
# SCAN: arith.mulf
# cumsum of int8 accumulates in int32.
# SCAN: arith.extsi %{{.*}} : tensor<32xi8> to tensor<32xi32>
# SCAN: kiln.scan %{{.*}} {axis = 0 : i32} : (tensor<32xi32>) -> tensor<32xi32>
# SCAN: kiln.scan %{{.*}} {axis = 0 : i32} : (tensor<32xf32>) -> tensor<32xf32>
# SCAN: arith.maxnumf
@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


@triton.jit
def scans(x_ptr, i_ptr):
    r = tl.arange(0, 32)
    x = tl.load(x_ptr + r)
    a = tl.cumsum(x, 0)
    b = tl.cumprod(x, axis=0, reverse=True)
    c = tl.cumsum(tl.load(i_ptr + r))
    tl.static_assert(c.dtype == tl.int32)
    d = tl.associative_scan(x, 0, _max)
    tl.store(x_ptr + r, a + b + c + d)


# KEEP-LABEL: func.func @keep_dims
# KEEP: kiln.reduce %{{.*}} {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8xf32>
# KEEP: kiln.expand_dims %{{.*}} {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
# KEEP: kiln.reduce %{{.*}} {axis = 0 : i32} : (tensor<128xf32>) -> f32
# KEEP: kiln.splat %{{.*}} : f32 -> tensor<1x1xf32>
# KEEP: kiln.broadcast %{{.*}} : tensor<8x1xf32> -> tensor<8x16xf32>
@triton.jit
def keep_dims(x_ptr):
    offs = tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + offs)
    m = tl.max(x, 1, keep_dims=True)
    t = tl.sum(x, keep_dims=True)
    tl.static_assert(len(t.shape) == 2)
    tl.store(x_ptr + offs, x - m + t)


# tl.sort is a bitonic network on the block viewed as [2, 2, ...]: xor
# reductions find each element's partner, a select swaps.
# SORT-LABEL: func.func @sorts
# SORT: kiln.reshape %{{.*}} : tensor<8xf32> -> tensor<2x2x2xf32>
# SORT: arith.bitcast %{{.*}} : tensor<2x2x2xf32> to tensor<2x2x2xi32>
# SORT: kiln.reduce %{{.*}} {axis = 2 : i32} : (tensor<2x2x2xi32>) -> tensor<2x2xi32>
# SORT: arith.xori
# SORT: arith.select
# SORT: kiln.reshape %{{.*}} : tensor<2x2x2xf32> -> tensor<8xf32>
@triton.jit
def sorts(x_ptr):
    r = tl.arange(0, 8)
    x = tl.load(x_ptr + r)
    tl.store(x_ptr + r, tl.sort(x) + tl.sort(x, descending=True))


# tl.flip swaps the halves at each level of a [2, 2, ...] view of the
# dimension: y ^ xor_sum(y, level, keep_dims=True).
# FLIP-LABEL: func.func @flips
# FLIP: arith.bitcast %{{.*}} : tensor<4x8xf16> to tensor<4x8xi16>
# FLIP: kiln.reshape %{{.*}} : tensor<4x8xi16> -> tensor<4x2x2x2xi16>
# FLIP: kiln.reduce %{{.*}} {axis = 1 : i32} : (tensor<4x2x2x2xi16>) -> tensor<4x2x2xi16>
# FLIP: kiln.reduce %{{.*}} {axis = 2 : i32}
# FLIP: kiln.reduce %{{.*}} {axis = 3 : i32}
# FLIP: kiln.reshape %{{.*}} : tensor<4x2x2x2xi16> -> tensor<4x8xi16>
@triton.jit
def flips(x_ptr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.flip(x, 1))
