// RUN: %kiln-opt --kiln-rewrite-block-pointers %s | FileCheck %s

// A 2-D block: pointers are base + sum over dims of (offset_d + arange) *
// stride_d in i64; the mask checks 0 <= index < shape in the boundary_check
// dimensions; padding "zero" reads zeros out of bounds. The store checks only
// dimension 1.
// CHECK-LABEL: func.func @tile
// CHECK-SAME: (%[[P:.*]]: !kiln.ptr<f32>, %[[M:.*]]: i64, %[[N:.*]]: i64, %[[SM:.*]]: i64, %[[OM:.*]]: i32, %[[ON:.*]]: i32)
// CHECK-NOT: kiln.make_block_ptr
// CHECK: %[[R0:.*]] = kiln.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
// CHECK: %[[OM64:.*]] = arith.extsi %[[OM]] : i32 to i64
// CHECK: %[[R0W:.*]] = arith.extsi %[[R0]] : tensor<16xi32> to tensor<16xi64>
// CHECK: %[[OMS:.*]] = kiln.splat %[[OM64]] : i64 -> tensor<16xi64>
// CHECK: %[[I0:.*]] = arith.addi %[[OMS]], %[[R0W]] : tensor<16xi64>
// CHECK: %[[I0E:.*]] = kiln.expand_dims %[[I0]] {axis = 1 : i32} : tensor<16xi64> -> tensor<16x1xi64>
// CHECK: %[[SMS:.*]] = kiln.splat %[[SM]] : i64 -> tensor<16x1xi64>
// CHECK: %[[T0:.*]] = arith.muli %[[I0E]], %[[SMS]] : tensor<16x1xi64>
// CHECK: %[[T0B:.*]] = kiln.broadcast %[[T0]] : tensor<16x1xi64> -> tensor<16x64xi64>
// CHECK: kiln.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
// CHECK: arith.extsi %[[ON]] : i32 to i64
// CHECK: %[[I1E:.*]] = kiln.expand_dims %{{.*}} {axis = 0 : i32} : tensor<64xi64> -> tensor<1x64xi64>
// CHECK: %[[T1:.*]] = arith.muli %[[I1E]], %{{.*}} : tensor<1x64xi64>
// CHECK: %[[T1B:.*]] = kiln.broadcast %[[T1]] : tensor<1x64xi64> -> tensor<16x64xi64>
// CHECK: %[[OFF:.*]] = arith.addi %[[T0B]], %[[T1B]] : tensor<16x64xi64>
// CHECK: %[[BASE:.*]] = kiln.splat %[[P]] : !kiln.ptr<f32> -> tensor<16x64x!kiln.ptr<f32>>
// CHECK: %[[PTRS:.*]] = kiln.addptr %[[BASE]], %[[OFF]] : tensor<16x64x!kiln.ptr<f32>>, tensor<16x64xi64>
// CHECK: %[[MS:.*]] = kiln.splat %[[M]] : i64 -> tensor<16x1xi64>
// CHECK: %[[LT0:.*]] = arith.cmpi slt, %[[I0E]], %[[MS]] : tensor<16x1xi64>
// CHECK: %[[GE0:.*]] = arith.cmpi sge, %[[I0E]], %{{.*}} : tensor<16x1xi64>
// CHECK: %[[IN0:.*]] = arith.andi %[[GE0]], %[[LT0]] : tensor<16x1xi1>
// CHECK: %[[IN0B:.*]] = kiln.broadcast %[[IN0]] : tensor<16x1xi1> -> tensor<16x64xi1>
// CHECK: %[[NS:.*]] = kiln.splat %[[N]] : i64 -> tensor<1x64xi64>
// CHECK: arith.cmpi slt, %[[I1E]], %[[NS]] : tensor<1x64xi64>
// CHECK: %[[IN1B:.*]] = kiln.broadcast %{{.*}} : tensor<1x64xi1> -> tensor<16x64xi1>
// CHECK: %[[MASK:.*]] = arith.andi %[[IN0B]], %[[IN1B]] : tensor<16x64xi1>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<16x64xf32>
// CHECK: %[[V:.*]] = kiln.load %[[PTRS]], mask %[[MASK]], other %[[ZERO]] : (tensor<16x64x!kiln.ptr<f32>>, tensor<16x64xi1>, tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK: %[[SPTRS:.*]] = kiln.addptr
// CHECK-NOT: tensor<16x1xi1>
// CHECK: %[[SMASK:.*]] = kiln.broadcast %{{.*}} : tensor<1x64xi1> -> tensor<16x64xi1>
// CHECK-NEXT: kiln.store %[[SPTRS]], %[[V]], mask %[[SMASK]] : tensor<16x64x!kiln.ptr<f32>>, tensor<16x64xf32>, tensor<16x64xi1>
func.func @tile(%p: !kiln.ptr<f32>, %m: i64, %n: i64, %sm: i64, %om: i32, %on: i32) {
  %c1 = arith.constant 1 : i64
  %b = kiln.make_block_ptr %p, [%m, %n], [%sm, %c1], [%om, %on], [1, 0] : !kiln.ptr<f32> -> !kiln.block_ptr<tensor<16x64xf32>>
  %v = kiln.load %b boundary_check = [0, 1] padding = zero : (!kiln.block_ptr<tensor<16x64xf32>>) -> tensor<16x64xf32>
  kiln.store %b, %v boundary_check = [1] : !kiln.block_ptr<tensor<16x64xf32>>, tensor<16x64xf32>
  return
}

// Padding "nan" reads NaN; without padding out-of-bounds elements are left
// undefined (no `other`); without boundary_check nothing is masked.
// CHECK-LABEL: func.func @padding
// CHECK: %[[NAN:.*]] = arith.constant dense<0x7E00> : tensor<128xf16>
// CHECK: kiln.load %{{.*}}, mask %{{.*}}, other %[[NAN]] : (tensor<128x!kiln.ptr<f16>>, tensor<128xi1>, tensor<128xf16>) -> tensor<128xf16>
// CHECK: kiln.load %{{.*}}, mask %{{.*}} : (tensor<128x!kiln.ptr<f16>>, tensor<128xi1>) -> tensor<128xf16>
// CHECK: kiln.load %{{.*}} : (tensor<128x!kiln.ptr<f16>>) -> tensor<128xf16>
func.func @padding(%p: !kiln.ptr<f16>, %n: i64, %o: i32) -> (tensor<128xf16>, tensor<128xf16>, tensor<128xf16>) {
  %c1 = arith.constant 1 : i64
  %b = kiln.make_block_ptr %p, [%n], [%c1], [%o], [0] : !kiln.ptr<f16> -> !kiln.block_ptr<tensor<128xf16>>
  %nan = kiln.load %b boundary_check = [0] padding = nan : (!kiln.block_ptr<tensor<128xf16>>) -> tensor<128xf16>
  %undef = kiln.load %b boundary_check = [0] : (!kiln.block_ptr<tensor<128xf16>>) -> tensor<128xf16>
  %all = kiln.load %b : (!kiln.block_ptr<tensor<128xf16>>) -> tensor<128xf16>
  return %nan, %undef, %all : tensor<128xf16>, tensor<128xf16>, tensor<128xf16>
}

// A block pointer advanced in a loop: the loop carries only the offset that
// changes (an i32); base, shape, strides and the other offset come from
// outside.
// CHECK-LABEL: func.func @loop
// CHECK: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: %[[C64:.*]] = arith.constant 64 : i32
// CHECK: scf.for %{{.*}} = %[[C0]] to %{{.*}} step %[[C64]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[OFF:.*]] = %[[C0]]) -> (tensor<16x64xf32>, i32)
// CHECK: arith.extsi %[[OFF]] : i32 to i64
// CHECK: kiln.load
// CHECK: %[[NEXT:.*]] = arith.addi %[[OFF]], %[[C64]] : i32
// CHECK: scf.yield %{{.*}}, %[[NEXT]] : tensor<16x64xf32>, i32
func.func @loop(%p: !kiln.ptr<f32>, %m: i64, %n: i64, %sm: i64, %k: i32) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c1 = arith.constant 1 : i64
  %zero = arith.constant dense<0.0> : tensor<16x64xf32>
  %b = kiln.make_block_ptr %p, [%m, %n], [%sm, %c1], [%c0, %c0], [1, 0] : !kiln.ptr<f32> -> !kiln.block_ptr<tensor<16x64xf32>>
  %r:2 = scf.for %i = %c0 to %k step %c64 iter_args(%acc = %zero, %q = %b) -> (tensor<16x64xf32>, !kiln.block_ptr<tensor<16x64xf32>>) : i32 {
    %v = kiln.load %q boundary_check = [1] padding = zero : (!kiln.block_ptr<tensor<16x64xf32>>) -> tensor<16x64xf32>
    %s = arith.addf %acc, %v : tensor<16x64xf32>
    %next = kiln.advance %q, [%c0, %c64] : !kiln.block_ptr<tensor<16x64xf32>>
    scf.yield %s, %next : tensor<16x64xf32>, !kiln.block_ptr<tensor<16x64xf32>>
  }
  return %r#0 : tensor<16x64xf32>
}

// An if choosing between two block pointers gives each part that differs:
// the base (a select, both being known outside) and the offset.
// CHECK-LABEL: func.func @branch
// CHECK-SAME: (%[[A:.*]]: !kiln.ptr<i32>, %[[B:.*]]: !kiln.ptr<i32>, %{{.*}}: i64, %[[C:.*]]: i1)
// CHECK: %[[BASE:.*]] = arith.select %[[C]], %[[A]], %[[B]] : !kiln.ptr<i32>
// CHECK: %[[OFF:.*]] = scf.if %[[C]] -> (i32)
// CHECK: arith.extsi %[[OFF]] : i32 to i64
// CHECK: kiln.splat %[[BASE]] : !kiln.ptr<i32> -> tensor<32x!kiln.ptr<i32>>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0> : tensor<32xi32>
// CHECK: kiln.load %{{.*}}, mask %{{.*}}, other %[[ZERO]]
func.func @branch(%p: !kiln.ptr<i32>, %q: !kiln.ptr<i32>, %n: i64, %c: i1) -> tensor<32xi32> {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c1 = arith.constant 1 : i64
  %a = kiln.make_block_ptr %p, [%n], [%c1], [%c0], [0] : !kiln.ptr<i32> -> !kiln.block_ptr<tensor<32xi32>>
  %b = kiln.make_block_ptr %q, [%n], [%c1], [%c0], [0] : !kiln.ptr<i32> -> !kiln.block_ptr<tensor<32xi32>>
  %r = scf.if %c -> !kiln.block_ptr<tensor<32xi32>> {
    %s = kiln.advance %a, [%c32] : !kiln.block_ptr<tensor<32xi32>>
    scf.yield %s : !kiln.block_ptr<tensor<32xi32>>
  } else {
    scf.yield %b : !kiln.block_ptr<tensor<32xi32>>
  }
  %v = kiln.load %r boundary_check = [0] padding = zero : (!kiln.block_ptr<tensor<32xi32>>) -> tensor<32xi32>
  return %v : tensor<32xi32>
}

// A while loop carries the offsets it advances.
// CHECK-LABEL: func.func @while
// CHECK: scf.while (%[[OFF:.*]] = %{{.*}}) : (i32) -> i32
// CHECK: scf.condition(%{{.*}}) %[[OFF]] : i32
// CHECK: ^bb0(%[[AFTER:.*]]: i32):
// CHECK: kiln.store
// CHECK: %[[NEXT:.*]] = arith.addi %[[AFTER]], %{{.*}} : i32
// CHECK: scf.yield %[[NEXT]] : i32
func.func @while(%p: !kiln.ptr<f32>, %n: i64, %v: tensor<64xf32>) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c1 = arith.constant 1 : i64
  %b = kiln.make_block_ptr %p, [%n], [%c1], [%c0], [0] : !kiln.ptr<f32> -> !kiln.block_ptr<tensor<64xf32>>
  %r = scf.while (%q = %b) : (!kiln.block_ptr<tensor<64xf32>>) -> !kiln.block_ptr<tensor<64xf32>> {
    %go = arith.cmpi slt, %c0, %c64 : i32
    scf.condition(%go) %q : !kiln.block_ptr<tensor<64xf32>>
  } do {
  ^bb0(%q: !kiln.block_ptr<tensor<64xf32>>):
    kiln.store %q, %v boundary_check = [0] : !kiln.block_ptr<tensor<64xf32>>, tensor<64xf32>
    %next = kiln.advance %q, [%c64] : !kiln.block_ptr<tensor<64xf32>>
    scf.yield %next : !kiln.block_ptr<tensor<64xf32>>
  }
  return
}
