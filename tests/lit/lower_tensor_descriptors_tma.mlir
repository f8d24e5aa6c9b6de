// RUN: %kiln-opt --kiln-lower-tensor-descriptors --split-input-file %s | FileCheck %s

// On a target with TMA, a load through a kernel argument's descriptor keeps
// its tensor map and offsets beside the masked pointers, for
// kiln-pipeline-dots to copy with TMA; a store keeps them too, for
// kiln-tma-stores, when the innermost extent is a whole number of 16-byte
// chunks (TMA stores write whole chunks).
// CHECK-LABEL: func.func @argument_map
// CHECK-SAME: (%[[MAP:.*]]: !kiln.tensormap, %{{.*}}: !kiln.ptr<f16>, %{{.*}}: i32, %{{.*}}: i32 {kiln.divisibility = 8 : i32}, %{{.*}}: i64, %{{.*}}: i64, %[[OM:.*]]: i32, %[[ON:.*]]: i32)
// CHECK: kiln.load %{{.*}}, mask %{{.*}}, other %{{.*}} tensor_map %[[MAP]][%[[OM]], %[[ON]]] :
// CHECK: kiln.store %{{.*}}, mask %{{.*}} tensor_map %[[MAP]][%[[OM]], %[[ON]]] :
module attributes {kiln_gpu.target = "sm_90a"} {
func.func @argument_map(%map: !kiln.tensormap, %p: !kiln.ptr<f16>, %m: i32, %n: i32 {kiln.divisibility = 8 : i32},
                        %sm: i64, %sn: i64, %om: i32, %on: i32) {
  %d = kiln.make_tensor_desc %p, [%m, %n], [%sm, %sn], tensor_map %map : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  kiln.descriptor_store %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}
}

// -----

// NaN padding: TMA fills zeros, so the load has no map (the store, which
// pads nothing, keeps it).
// CHECK-LABEL: func.func @nan_padding
// CHECK: kiln.load %{{.*}}, other %{{[a-z0-9_]+}} :
// CHECK: kiln.store {{.*}} tensor_map %
// CHECK: return
module attributes {kiln_gpu.target = "sm_90a"} {
func.func @nan_padding(%map: !kiln.tensormap, %p: !kiln.ptr<f16>, %m: i32, %n: i32 {kiln.divisibility = 16 : i32},
                       %sm: i64, %sn: i64, %om: i32, %on: i32) {
  %d = kiln.make_tensor_desc %p, [%m, %n], [%sm, %sn], tensor_map %map padding = nan : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  kiln.descriptor_store %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}
}

// -----

// An innermost extent of 4 halves (8 bytes) per hint: a TMA store could
// write past the tensor's edge, so the store keeps only its mask.
// CHECK-LABEL: func.func @half_chunks
// CHECK: kiln.load {{.*}} tensor_map %
// CHECK: kiln.store %{{.*}}, mask %{{[a-z0-9_]+}} :
module attributes {kiln_gpu.target = "sm_90a"} {
func.func @half_chunks(%map: !kiln.tensormap, %p: !kiln.ptr<f16>, %m: i32, %n: i32 {kiln.divisibility = 4 : i32},
                       %sm: i64, %sn: i64, %om: i32, %on: i32) {
  %d = kiln.make_tensor_desc %p, [%m, %n], [%sm, %sn], tensor_map %map : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  kiln.descriptor_store %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}
}

// -----

// A reduction TMA can do (fadd of f32) keeps the map on its atomic; a max
// does not.
// CHECK-LABEL: func.func @reductions
// CHECK: kiln.atomic_rmw fadd relaxed gpu {{.*}} tensor_map %arg0[%arg6, %arg7] :
// CHECK: kiln.atomic_rmw max relaxed gpu %{{.*}}, %{{.*}}, mask %{{[a-z0-9_]+}} :
module attributes {kiln_gpu.target = "sm_90a"} {
func.func @reductions(%map: !kiln.tensormap, %p: !kiln.ptr<f32>, %m: i32, %n: i32 {kiln.divisibility = 16 : i32},
                      %sm: i64, %sn: i64, %om: i32, %on: i32, %v: tensor<32x64xf32>) {
  %d = kiln.make_tensor_desc %p, [%m, %n], [%sm, %sn], tensor_map %map : !kiln.ptr<f32> -> !kiln.tensordesc<tensor<32x64xf32>>
  kiln.descriptor_reduce fadd %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf32>>, tensor<32x64xf32>
  kiln.descriptor_reduce max %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf32>>, tensor<32x64xf32>
  return
}
}

// -----

// Before sm_90 there is no TMA.
// CHECK-LABEL: func.func @no_tma
// CHECK-NOT: tensor_map %
// CHECK: return
module attributes {kiln_gpu.target = "sm_80"} {
func.func @no_tma(%map: !kiln.tensormap, %p: !kiln.ptr<f16>, %m: i32, %n: i32,
                  %sm: i64, %sn: i64, %om: i32, %on: i32) {
  %d = kiln.make_tensor_desc %p, [%m, %n], [%sm, %sn], tensor_map %map : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  kiln.descriptor_store %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}
}
