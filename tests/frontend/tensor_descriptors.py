# Tensor descriptors: `tensordesc<T[d0,...]>` parameters (upstream's host
# TensorDescriptor arguments) arrive as the descriptor ABI (tensor map, base
# 16-byte aligned, i32 extents, i64 strides of which the last is the constant
# 1) and one kiln.make_tensor_desc; tl.make_tensor_descriptor makes one in
# the kernel; desc.load/store/atomic_* become kiln.descriptor_* ops. The
# positional signature form takes the brackets too.
# RUN: %kilnc compile %s -n host_copy -s "in_desc=tensordesc<fp16[64, 32]>, out_desc=tensordesc<fp16[64,32]>, BM=64, BN=32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=HOST
# RUN: %kilnc compile %s -n host_copy -s "tensordesc<fp16[64,32]>, tensordesc<fp16[64,32]>, 64, 32" --arch sm_80 --emit kiln -o - | FileCheck %s --check-prefix=HOST
# RUN: %kilnc compile %s -n device_made -s "x_ptr=*bf16, y_ptr=*fp32, M=i32, N=i64, stride=i32, BM=16, BN=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=DEVICE
# RUN: %kilnc compile %s -n pointer_or_descriptor -s "x=*fp32, n=i32, B=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PTR
# RUN: %kilnc compile %s -n pointer_or_descriptor -s "x=tensordesc<fp32[64]>, n=i32, B=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=DESC
# RUN: %kilnc compile %s -n reductions -s "a=tensordesc<i32[8,16]>, b=tensordesc<u32[8,16]>, c=tensordesc<fp16[8,16]>" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=REDUCE
import triton
import triton.language as tl


# HOST-LABEL: func.func @host_copy
# HOST-SAME: (%[[MAP0:.*]]: !kiln.tensormap, %[[P0:.*]]: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %[[M0:.*]]: i32, %[[N0:.*]]: i32, %[[S0:.*]]: i64 {kiln.divisibility = 8 : i32}, %{{.*}}: i64, %[[MAP1:.*]]: !kiln.tensormap, %[[P1:.*]]: !kiln.ptr<f16> {kiln.divisibility = 16 : i32},
# HOST: %[[ONE:.*]] = arith.constant 1 : i64
# HOST: %[[D0:.*]] = kiln.make_tensor_desc %[[P0]], [%[[M0]], %[[N0]]], [%[[S0]], %[[ONE]]], tensor_map %[[MAP0]] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<64x32xf16>>
# HOST: %[[D1:.*]] = kiln.make_tensor_desc %[[P1]], {{.*}} tensor_map %[[MAP1]]
# HOST: %[[V:.*]] = kiln.descriptor_load %[[D0]][%{{.*}}, %{{.*}}] : !kiln.tensordesc<tensor<64x32xf16>> -> tensor<64x32xf16>
# HOST: kiln.descriptor_store %[[D1]][%{{.*}}, %{{.*}}], %{{.*}} : !kiln.tensordesc<tensor<64x32xf16>>, tensor<64x32xf16>
@triton.jit
def host_copy(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    tl.static_assert(in_desc.block_shape == (BM, BN))
    tl.static_assert(in_desc.dtype == tl.float16)
    x = in_desc.load([m, n])
    out_desc.store([m, n], x + 1.0)


# DEVICE-LABEL: func.func @device_made
# DEVICE: %[[N32:.*]] = arith.trunci %{{.*}} : i64 to i32
# DEVICE: %[[S64:.*]] = arith.extsi %{{.*}} : i32 to i64
# DEVICE: %[[X:.*]] = kiln.make_tensor_desc %{{.*}}, [%{{.*}}, %[[N32]]], [%[[S64]], %{{.*}}] : !kiln.ptr<bf16> -> !kiln.tensordesc<tensor<16x64xbf16>>
# DEVICE: %[[Y:.*]] = kiln.make_tensor_desc %{{.*}} padding = nan : !kiln.ptr<f32> -> !kiln.tensordesc<tensor<16x64xf32>>
# DEVICE: kiln.descriptor_load %[[X]]
# DEVICE: kiln.descriptor_load %[[Y]]
@triton.jit
def device_made(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    x = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride, 1], block_shape=[BM, BN])
    y = tl.make_tensor_descriptor(y_ptr, [M, N], [stride, 1], [BM, BN], padding_option="nan")
    m = tl.program_id(0) * BM
    v = x.load([m, 0]).to(tl.float32) + y.load([m, 0])
    tl.store_tensor_descriptor(y, [m, 0], v)
    w = tl.load_tensor_descriptor(y, [m, BN])
    y.store([m, BN], w)


@triton.jit
def _maybe_make(desc_or_ptr, n, B: tl.constexpr):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, [n], [1], [B])


# PTR-LABEL: func.func @pointer_or_descriptor
# PTR-SAME: (%{{.*}}: !kiln.ptr<f32>, %{{.*}}: i32)
# PTR: kiln.make_tensor_desc
# PTR-NOT: tensor_map
# PTR: kiln.descriptor_load
# DESC-LABEL: func.func @pointer_or_descriptor
# DESC-SAME: (%{{.*}}: !kiln.tensormap, %{{.*}}: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %{{.*}}: i32, %{{.*}}: i64, %{{.*}}: i32)
# DESC: kiln.make_tensor_desc {{.*}} tensor_map
# DESC-NOT: kiln.make_tensor_desc
# DESC: kiln.descriptor_load
@triton.jit
def pointer_or_descriptor(x, n, B: tl.constexpr):
    d = _maybe_make(x, n, B)
    d.store([B], d.load([0]) * 2)


# REDUCE-LABEL: func.func @reductions
# REDUCE: kiln.descriptor_reduce add
# REDUCE: kiln.descriptor_reduce max
# REDUCE: kiln.descriptor_reduce xor
# REDUCE: kiln.descriptor_reduce umin
# REDUCE: kiln.descriptor_reduce fadd {{.*}} tensor<8x16xf16>
@triton.jit
def reductions(a, b, c):
    v = tl.full((8, 16), 3, tl.int32)
    a.atomic_add([0, 0], v)
    a.atomic_max([0, 0], v)
    a.atomic_xor([8, 0], v)
    b.atomic_min([0, 16], v.to(tl.uint32))
    c.atomic_add([0, 0], tl.zeros((8, 16), tl.float16))
