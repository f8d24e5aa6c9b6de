// RUN: %kiln-opt %s | %kiln-opt | FileCheck %s
// RUN: %kiln-opt --split-input-file --verify-diagnostics %S/Inputs/invalid_builtin_ops.mlir

// The shape, compute and memory ops of the kiln dialect round-trip.

// CHECK-LABEL: func.func @shapes
// CHECK: kiln.expand_dims %{{.*}} {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
// CHECK: kiln.broadcast %{{.*}} : tensor<16x1xf32> -> tensor<16x32xf32>
// CHECK: kiln.reshape %{{.*}} {allow_reorder = true} : tensor<16x32xf32> -> tensor<512xf32>
// CHECK: kiln.trans %{{.*}}, [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
// CHECK: kiln.join %{{.*}}, %{{.*}} : tensor<16xf32> -> tensor<16x2xf32>
// CHECK: kiln.split %{{.*}} : tensor<16x2xf32> -> tensor<16xf32>
// CHECK: kiln.cat %{{.*}}, %{{.*}} : tensor<16xf32> -> tensor<32xf32>
func.func @shapes(%x: tensor<16xf32>) {
  %e = kiln.expand_dims %x {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %b = kiln.broadcast %e : tensor<16x1xf32> -> tensor<16x32xf32>
  %r = kiln.reshape %b {allow_reorder = true} : tensor<16x32xf32> -> tensor<512xf32>
  %t = kiln.trans %b, [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
  %j = kiln.join %x, %x : tensor<16xf32> -> tensor<16x2xf32>
  %lo, %hi = kiln.split %j : tensor<16x2xf32> -> tensor<16xf32>
  %c = kiln.cat %lo, %hi : tensor<16xf32> -> tensor<32xf32>
  return
}

// CHECK-LABEL: func.func @compute
// CHECK: kiln.precise_sqrt %{{.*}} : tensor<16xf32>
// CHECK: kiln.precise_divf %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: kiln.extern_elementwise "__nv_powf"(%{{.*}}, %{{.*}}) {libname = "libdevice", pure} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// CHECK: kiln.inline_asm_elementwise "mov.b32 $0, $1;"(%{{.*}}) {constraints = "=r,r", packed_element = 1 : i32, pure = true} : (tensor<16xf32>) -> tensor<16xi32>
// CHECK: kiln.dot %{{.*}}, %{{.*}}, %{{.*}}, ieee : tensor<16x32xf16> * tensor<32x16xf16> -> tensor<16x16xf32>
func.func @compute(%x: tensor<16xf32>, %a: tensor<16x32xf16>, %b: tensor<32x16xf16>, %c: tensor<16x16xf32>) {
  %s = kiln.precise_sqrt %x : tensor<16xf32>
  %d = kiln.precise_divf %x, %s : tensor<16xf32>
  %p = kiln.extern_elementwise "__nv_powf"(%x, %d) {libname = "libdevice", pure} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %i = kiln.inline_asm_elementwise "mov.b32 $0, $1;"(%x) {constraints = "=r,r", packed_element = 1 : i32, pure = true} : (tensor<16xf32>) -> tensor<16xi32>
  %m = kiln.dot %a, %b, %c, ieee : tensor<16x32xf16> * tensor<32x16xf16> -> tensor<16x16xf32>
  return
}

// CHECK-LABEL: func.func @memory
// CHECK: kiln.atomic_rmw fadd acq_rel gpu %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<16x!kiln.ptr<f32>>, tensor<16xf32>, tensor<16xi1>
// CHECK: kiln.atomic_cas relaxed cta %{{.*}}, %{{.*}}, %{{.*}} : !kiln.ptr<i32>, i32
// CHECK: kiln.make_block_ptr %{{.*}}, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}], [1, 0] : !kiln.ptr<f16> -> !kiln.block_ptr<tensor<64x32xf16>>
// CHECK: kiln.advance %{{.*}}, [%{{.*}}, %{{.*}}] : !kiln.block_ptr<tensor<64x32xf16>>
// CHECK: kiln.load %{{.*}} boundary_check = [0] padding = nan cache = cg : (!kiln.block_ptr<tensor<64x32xf16>>) -> tensor<64x32xf16>
// CHECK: kiln.store %{{.*}}, %{{.*}} boundary_check = [1] evict = evict_first : !kiln.block_ptr<tensor<64x32xf16>>, tensor<64x32xf16>
// CHECK: kiln.ptr_cast %{{.*}} : !kiln.ptr<f16> -> !kiln.ptr<i16>
// CHECK: kiln.ptr_to_int %{{.*}} : !kiln.ptr<f16> -> i64
// CHECK: kiln.int_to_ptr %{{.*}} : i64 -> !kiln.ptr<f32>
func.func @memory(%p: tensor<16x!kiln.ptr<f32>>, %v: tensor<16xf32>, %m: tensor<16xi1>,
                  %q: !kiln.ptr<i32>, %i: i32, %h: !kiln.ptr<f16>, %n: i64, %o: i32) {
  %old = kiln.atomic_rmw fadd acq_rel gpu %p, %v, mask %m : tensor<16x!kiln.ptr<f32>>, tensor<16xf32>, tensor<16xi1>
  %prev = kiln.atomic_cas relaxed cta %q, %i, %i : !kiln.ptr<i32>, i32
  %bp = kiln.make_block_ptr %h, [%n, %n], [%n, %n], [%o, %o], [1, 0] : !kiln.ptr<f16> -> !kiln.block_ptr<tensor<64x32xf16>>
  %next = kiln.advance %bp, [%o, %o] : !kiln.block_ptr<tensor<64x32xf16>>
  %t = kiln.load %next boundary_check = [0] padding = nan cache = cg : (!kiln.block_ptr<tensor<64x32xf16>>) -> tensor<64x32xf16>
  kiln.store %next, %t boundary_check = [1] evict = evict_first : !kiln.block_ptr<tensor<64x32xf16>>, tensor<64x32xf16>
  %c = kiln.ptr_cast %h : !kiln.ptr<f16> -> !kiln.ptr<i16>
  %a = kiln.ptr_to_int %h : !kiln.ptr<f16> -> i64
  %f = kiln.int_to_ptr %a : i64 -> !kiln.ptr<f32>
  return
}
