// RUN: %kiln-opt --canonicalize %s | FileCheck %s

// tl.max(-x) and tl.min(-x) on integers: the reduction runs over x - 1 with
// the dual combiner and its result is complemented (max(-x) = ~min(x - 1),
// exact for every input), so no negation reaches the max/min chain that
// ptxas fuses into VIMNMX3 (compiler/ir/ReduceOfNegation.cpp). A float
// reduction and a reduction of something else stay as they are.
// CHECK-LABEL: func.func @max_of_negation
// CHECK-NOT: arith.subi %{{.*}}, %arg0
// CHECK: %[[SHIFTED:.*]] = arith.subi %arg0, %{{.*}} : tensor<64x32xi32>
// CHECK: %[[MIN:.*]] = kiln.reduce %[[SHIFTED]] {axis = 0 : i32}
// CHECK: arith.minsi
// CHECK: arith.xori %[[MIN]], %{{.*}} : tensor<32xi32>
func.func @max_of_negation(%x: tensor<64x32xi32>) -> tensor<32xi32> {
  %zero = arith.constant dense<0> : tensor<64x32xi32>
  %neg = arith.subi %zero, %x : tensor<64x32xi32>
  %m = kiln.reduce %neg {axis = 0 : i32} : (tensor<64x32xi32>) -> tensor<32xi32> {
  ^bb0(%a: i32, %b: i32):
    %c = arith.maxsi %a, %b : i32
    kiln.reduce.return %c : i32
  }
  return %m : tensor<32xi32>
}

// CHECK-LABEL: func.func @min_of_negation_to_scalar
// CHECK: kiln.reduce
// CHECK: arith.maxsi
// CHECK: arith.xori %{{.*}}, %{{.*}} : i64
func.func @min_of_negation_to_scalar(%x: tensor<128xi64>) -> i64 {
  %zero = arith.constant dense<0> : tensor<128xi64>
  %neg = arith.subi %zero, %x : tensor<128xi64>
  %m = kiln.reduce %neg {axis = 0 : i32} : (tensor<128xi64>) -> i64 {
  ^bb0(%a: i64, %b: i64):
    %c = arith.minsi %b, %a : i64
    kiln.reduce.return %c : i64
  }
  return %m : i64
}

// CHECK-LABEL: func.func @max_of_other
// CHECK: arith.subi %{{.*}}, %arg0
// CHECK: arith.maxsi
// CHECK-NOT: arith.xori
func.func @max_of_other(%x: tensor<64xi32>) -> i32 {
  %two = arith.constant dense<2> : tensor<64xi32>
  %d = arith.subi %two, %x : tensor<64xi32>
  %m = kiln.reduce %d {axis = 0 : i32} : (tensor<64xi32>) -> i32 {
  ^bb0(%a: i32, %b: i32):
    %c = arith.maxsi %a, %b : i32
    kiln.reduce.return %c : i32
  }
  return %m : i32
}
