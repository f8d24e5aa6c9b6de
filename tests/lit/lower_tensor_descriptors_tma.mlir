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
// write past the tensor's edge, so the store checks the extent at run time
// (a whole number of 8-half chunks) and keeps only its mask otherwise.
// CHECK-LABEL: func.func @half_chunks
// CHECK-SAME: %[[N:[a-z0-9_]+]]: i32 {kiln.divisibility = 4 : i32}
// CHECK: kiln.load {{.*}} tensor_map %
// CHECK: %[[C7:.*]] = arith.constant 7 : i32
// CHECK: %[[REST:.*]] = arith.andi %[[N]], %[[C7]] : i32
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[REST]], %{{.*}} : i32
// CHECK: scf.if %[[WHOLE]] {
// CHECK: kiln.store {{.*}} tensor_map %
// CHECK: } else {
// CHECK: kiln.store %{{.*}}, mask %{{[a-z0-9_]+}} :
// CHECK-NEXT: }
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

// -----

// A descriptor the kernel makes, at an aligned base (16 bytes) with a row
// stride of whole 16-byte chunks (8 halves): each access TMA may serve gets
// a kiln.make_tensor_map of its own (unshaped: the pass that adopts it sets
// the box), over the kernel's new last parameter, the global scratch buffer.
// CHECK-LABEL: func.func @device_made
// CHECK-SAME: %[[SCRATCH:[a-z0-9_]+]]: !kiln.ptr<i8>) attributes {kiln.global_scratch}
// CHECK-DAG: %[[STORE_MAP:.*]] = kiln.make_tensor_map %arg0, [%arg1, %arg2], [%[[SM:.*]], %{{.*}}], scratch %[[SCRATCH]] : !kiln.ptr<f16>, !kiln.ptr<i8>
// CHECK-DAG: %[[LOAD_MAP:.*]] = kiln.make_tensor_map %arg0, [%arg1, %arg2], [%[[SM]], %{{.*}}], scratch %[[SCRATCH]] : !kiln.ptr<f16>, !kiln.ptr<i8>
// CHECK: kiln.load {{.*}} tensor_map %[[LOAD_MAP]][%arg4, %arg5] :
// CHECK: kiln.store {{.*}} tensor_map %[[STORE_MAP]][%arg4, %arg5] :
module attributes {kiln_gpu.target = "sm_90a"} {
func.func @device_made(%p: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %m: i32, %n: i32 {kiln.divisibility = 16 : i32},
                       %s: i32 {kiln.divisibility = 8 : i32}, %om: i32, %on: i32) {
  %s64 = arith.extsi %s : i32 to i64
  %one = arith.constant 1 : i64
  %d = kiln.make_tensor_desc %p, [%m, %n], [%s64, %one] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  kiln.descriptor_store %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}
}

// -----

// What a tensor map needs is not known: a row stride of 4 halves (8 bytes),
// a base argument of unknown alignment (the variant's to know). No map; the
// kernel still takes the scratch buffer (its signature is the same on
// every arch).
// CHECK-LABEL: func.func @not_encodable
// CHECK-SAME: !kiln.ptr<i8>) attributes {kiln.global_scratch}
// CHECK-NOT: kiln.make_tensor_map
// CHECK-NOT: tensor_map %
// CHECK: return
module attributes {kiln_gpu.target = "sm_90a"} {
func.func @not_encodable(%p: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %q: !kiln.ptr<f16>, %m: i32, %n: i32,
                         %s: i32 {kiln.divisibility = 4 : i32}, %s16: i32 {kiln.divisibility = 16 : i32},
                         %om: i32, %on: i32, %trips: index) {
  %one = arith.constant 1 : i64
  %s64 = arith.extsi %s : i32 to i64
  %d = kiln.make_tensor_desc %p, [%m, %n], [%s64, %one] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  %s16w = arith.extsi %s16 : i32 to i64
  %e = kiln.make_tensor_desc %q, [%m, %n], [%s16w, %one] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  kiln.descriptor_store %e[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}
}

// -----

// A descriptor made in a loop gets its map there (encoded in every
// iteration); one made from a pointer the kernel loads takes
// tl.make_tensor_descriptor's alignment contract (`assumes_alignment`).
// CHECK-LABEL: func.func @made_in_loop
// CHECK: scf.for
// CHECK: kiln.make_tensor_map %arg0, {{.*}} : !kiln.ptr<f16>, !kiln.ptr<i8>
// CHECK-NOT: assumes_alignment
// CHECK: scf.if
// CHECK: kiln.store {{.*}} tensor_map %
// CHECK: %[[LOADED:.*]] = kiln.int_to_ptr
// CHECK: kiln.make_tensor_map %[[LOADED]], {{.*}} {assumes_alignment} : !kiln.ptr<f16>, !kiln.ptr<i8>
module attributes {kiln_gpu.target = "sm_90a"} {
func.func @made_in_loop(%p: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %pp: !kiln.ptr<i64> {kiln.divisibility = 16 : i32},
                        %m: i32, %n: i32, %s16: i32 {kiln.divisibility = 16 : i32},
                        %om: i32, %on: i32, %trips: index, %v: tensor<32x64xf16>) {
  %one = arith.constant 1 : i64
  %s16w = arith.extsi %s16 : i32 to i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %trips step %c1 {
    %f = kiln.make_tensor_desc %p, [%m, %n], [%s16w, %one] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
    kiln.descriptor_store %f[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
    %address = kiln.load %pp : (!kiln.ptr<i64>) -> i64
    %q = kiln.int_to_ptr %address : i64 -> !kiln.ptr<f16>
    %g = kiln.make_tensor_desc %q, [%m, %n], [%s16w, %one] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
    %w = kiln.descriptor_load %g[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  }
  return
}
}

// -----

// Before sm_90 no map is made, but a kernel that makes descriptors takes
// the scratch buffer all the same.
// CHECK-LABEL: func.func @device_made_sm80
// CHECK-SAME: !kiln.ptr<i8>) attributes {kiln.global_scratch}
// CHECK-NOT: kiln.make_tensor_map
module attributes {kiln_gpu.target = "sm_80"} {
func.func @device_made_sm80(%p: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %m: i32, %n: i32 {kiln.divisibility = 16 : i32},
                            %om: i32, %on: i32) {
  %s = arith.constant 64 : i64
  %one = arith.constant 1 : i64
  %d = kiln.make_tensor_desc %p, [%m, %n], [%s, %one] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%om, %on] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  kiln.descriptor_store %d[%om, %on], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x64xf16>
  return
}
}
