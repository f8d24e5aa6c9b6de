// RUN: %kiln-opt --kiln-lower-tensor-descriptors %s | FileCheck %s
// RUN: not %kiln-opt --kiln-lower-tensor-descriptors --split-input-file %S/Inputs/descriptor_errors.mlir 2>&1 | FileCheck %S/Inputs/descriptor_errors.mlir --check-prefix=ERR

// A kernel-argument descriptor (the ABI: tensor map, base, shape, strides)
// loaded and stored at offsets: pointers base + sum over dims of
// (offset_d + arange) * stride_d in i64, masked in every dimension by
// 0 <= index < shape (the i32 extents, widened); loads read zeros outside.
// The tensor map is not read.
// CHECK-LABEL: func.func @copy
// CHECK-SAME: (%[[MAP:.*]]: !kiln.tensormap, %[[P:.*]]: !kiln.ptr<f16>, %[[M:.*]]: i32, %[[N:.*]]: i32, %[[SM:.*]]: i64, %[[SN:.*]]: i64, %[[OM:.*]]: i32, %[[ON:.*]]: i32)
// CHECK-NOT: kiln.make_tensor_desc
// CHECK: %[[M64:.*]] = arith.extsi %[[M]] : i32 to i64
// CHECK: %[[N64:.*]] = arith.extsi %[[N]] : i32 to i64
// CHECK: %[[OM64:.*]] = arith.extsi %[[OM]] : i32 to i64
// CHECK: %[[I0:.*]] = kiln.expand_dims %{{.*}} {axis = 1 : i32} : tensor<32xi64> -> tensor<32x1xi64>
// CHECK: %[[SMS:.*]] = kiln.splat %[[SM]] : i64 -> tensor<32x1xi64>
// CHECK: arith.muli %[[I0]], %[[SMS]] : tensor<32x1xi64>
// CHECK: %[[ON64:.*]] = arith.extsi %[[ON]] : i32 to i64
// CHECK: %[[I1:.*]] = kiln.expand_dims %{{.*}} {axis = 0 : i32} : tensor<64xi64> -> tensor<1x64xi64>
// CHECK: %[[SNS:.*]] = kiln.splat %[[SN]] : i64 -> tensor<1x64xi64>
// CHECK: %[[BASE:.*]] = kiln.splat %[[P]] : !kiln.ptr<f16> -> tensor<32x64x!kiln.ptr<f16>>
// CHECK: %[[PTRS:.*]] = kiln.addptr %[[BASE]]
// CHECK: %[[MS:.*]] = kiln.splat %[[M64]] : i64 -> tensor<32x1xi64>
// CHECK: arith.cmpi slt, %[[I0]], %[[MS]] : tensor<32x1xi64>
// CHECK: arith.cmpi sge, %[[I0]], %{{.*}} : tensor<32x1xi64>
// CHECK: %[[NS:.*]] = kiln.splat %[[N64]] : i64 -> tensor<1x64xi64>
// CHECK: arith.cmpi slt, %[[I1]], %[[NS]] : tensor<1x64xi64>
// CHECK: %[[MASK:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<32x64xi1>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
// CHECK: %[[V:.*]] = kiln.load %[[PTRS]], mask %[[MASK]], other %[[ZERO]] : (tensor<32x64x!kiln.ptr<f16>>, tensor<32x64xi1>, tensor<32x64xf16>) -> tensor<32x64xf16>
// CHECK: kiln.store %{{.*}}, %[[V]], mask %{{.*}} : tensor<32x64x!kiln.ptr<f16>>, tensor<32x64xf16>, tensor<32x64xi1>
// CHECK-NOT: kiln.descriptor_store
func.func @copy(%map: !kiln.tensormap, %p: !kiln.ptr<f16>, %m: i32, %n: i32,
                %sm: i64, %sn: i64, %om: i32, %on: i32) {
  %d = kiln.make_tensor_desc %p, [%m, %n], [%sm, %sn], tensor_map %map : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  kiln.descriptor_store %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}

// NaN padding; a reduction becomes a masked, relaxed GPU-scope atomic.
// CHECK-LABEL: func.func @nan_and_add
// CHECK: %[[NAN:.*]] = arith.constant dense<0x7FC00000> : tensor<64xf32>
// CHECK: kiln.load %{{.*}}, mask %{{.*}}, other %[[NAN]]
// CHECK: kiln.atomic_rmw fadd relaxed gpu %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<64x!kiln.ptr<f32>>, tensor<64xf32>, tensor<64xi1>
func.func @nan_and_add(%p: !kiln.ptr<f32>, %n: i32, %o: i32) {
  %one = arith.constant 1 : i64
  %d = kiln.make_tensor_desc %p, [%n], [%one] padding = nan : !kiln.ptr<f32> -> !kiln.tensordesc<tensor<64xf32>>
  %v = kiln.descriptor_load %d[%o] : !kiln.tensordesc<tensor<64xf32>> -> tensor<64xf32>
  kiln.descriptor_reduce fadd %d[%o], %v : !kiln.tensordesc<tensor<64xf32>>, tensor<64xf32>
  return
}

// A descriptor used inside a loop keeps its parts loop-invariant: only the
// offset is carried.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<16xf32>)
// CHECK: kiln.load
// CHECK-NOT: tensordesc
func.func @in_loop(%p: !kiln.ptr<f32>, %n: i32) -> tensor<16xf32> {
  %one = arith.constant 1 : i64
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %d = kiln.make_tensor_desc %p, [%n], [%one] : !kiln.ptr<f32> -> !kiln.tensordesc<tensor<16xf32>>
  %r = scf.for %i = %c0 to %n step %c16 iter_args(%acc = %zero) -> (tensor<16xf32>) : i32 {
    %v = kiln.descriptor_load %d[%i] : !kiln.tensordesc<tensor<16xf32>> -> tensor<16xf32>
    %s = arith.addf %acc, %v : tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
