// RUN: %kiln-opt --canonicalize %s | FileCheck %s

// `acc += tl.dot(a, b)`: the add of a zero-accumulator dot folds into the
// dot, which then accumulates into acc.

// CHECK-LABEL: func.func @folds
func.func @folds(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %acc: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  // CHECK: %[[D:.*]] = kiln.dot %arg0, %arg1, %arg2, tf32
  // CHECK-NOT: arith.addf
  // CHECK: return %[[D]]
  %d = kiln.dot %a, %b, %zero, tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  %s = arith.addf %acc, %d : tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

// Integer dots too, with the dot on either side of the add.
// CHECK-LABEL: func.func @integers
func.func @integers(%a: tensor<16x32xi8>, %b: tensor<32x16xi8>, %acc: tensor<16x16xi32>) -> tensor<16x16xi32> {
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  // CHECK: %[[D:.*]] = kiln.dot %arg0, %arg1, %arg2, tf32
  // CHECK: return %[[D]]
  %d = kiln.dot %a, %b, %zero, tf32 : tensor<16x32xi8> * tensor<32x16xi8> -> tensor<16x16xi32>
  %s = arith.addi %d, %acc : tensor<16x16xi32>
  return %s : tensor<16x16xi32>
}

// An accumulator computed after the dot: the dot moves down to the add.
// CHECK-LABEL: func.func @accumulator_after
func.func @accumulator_after(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = kiln.dot %a, %b, %zero, tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  // CHECK: %[[ACC:.*]] = arith.mulf
  // CHECK: kiln.dot %arg0, %arg1, %[[ACC]], tf32
  %acc = arith.mulf %x, %x : tensor<16x16xf32>
  %s = arith.addf %d, %acc : tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

// Not folded: a dot read elsewhere too, a non-zero accumulator, fp8
// operands that may accumulate imprecisely, a dot outside the add's loop.
// CHECK-LABEL: func.func @kept
func.func @kept(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %f: tensor<16x32xf8E4M3FN>, %g: tensor<32x16xf8E4M3FN>, %acc: tensor<16x16xf32>, %n: index) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %one = arith.constant dense<1.0> : tensor<16x16xf32>
  // CHECK-COUNT-4: arith.addf
  %d = kiln.dot %a, %b, %zero, tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  %s = arith.addf %acc, %d : tensor<16x16xf32>
  %e = kiln.dot %a, %b, %one, tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  %t = arith.addf %acc, %e : tensor<16x16xf32>
  %h = kiln.dot %f, %g, %zero, tf32 : tensor<16x32xf8E4M3FN> * tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>
  %u = arith.addf %acc, %h : tensor<16x16xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = kiln.dot %a, %b, %zero, tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %acc) -> tensor<16x16xf32> {
    %w = arith.addf %v, %l : tensor<16x16xf32>
    scf.yield %w : tensor<16x16xf32>
  }
  return %s, %d, %t, %u, %r : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// fp8 with imprecise accumulation turned off folds.
// CHECK-LABEL: func.func @fp8_precise
func.func @fp8_precise(%f: tensor<16x32xf8E4M3FN>, %g: tensor<32x16xf8E4M3FN>, %acc: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  // CHECK: kiln.dot %arg0, %arg1, %arg2
  // CHECK-NOT: arith.addf
  %h = kiln.dot %f, %g, %zero, tf32 {max_num_imprecise_acc = 0 : i32} : tensor<16x32xf8E4M3FN> * tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>
  %u = arith.addf %acc, %h : tensor<16x16xf32>
  return %u : tensor<16x16xf32>
}
