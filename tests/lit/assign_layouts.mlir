// RUN: %kiln-opt --kiln-assign-layouts="num-warps=4" %s | FileCheck %s

// The module records the launch shape.
// CHECK: module attributes {kiln_gpu.num_warps = 4 : i32, kiln_gpu.threads_per_warp = 32 : i32}

// Aligned fp32 access: each thread owns 4 contiguous elements (128 bits).
// CHECK-LABEL: func.func @aligned
// CHECK: kiln.make_range {{.*}} : tensor<1024xi32, #kiln_gpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
// CHECK: kiln.load {{.*}} -> tensor<1024xf32, #kiln_gpu.blocked<{sizePerThread = [4]
func.func @aligned(%p: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}) {
  %r = kiln.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %s = kiln.splat %p : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>>
  %a = kiln.addptr %s, %r : tensor<1024x!kiln.ptr<f32>>, tensor<1024xi32>
  %v = kiln.load %a : (tensor<1024x!kiln.ptr<f32>>) -> tensor<1024xf32>
  return
}

// Unknown alignment: one element per chunk.
// CHECK-LABEL: func.func @unaligned
// CHECK: tensor<1024xf32, #kiln_gpu.blocked<{sizePerThread = [1]
func.func @unaligned(%p: !kiln.ptr<f32>) {
  %r = kiln.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %s = kiln.splat %p : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>>
  %a = kiln.addptr %s, %r : tensor<1024x!kiln.ptr<f32>>, tensor<1024xi32>
  %v = kiln.load %a : (tensor<1024x!kiln.ptr<f32>>) -> tensor<1024xf32>
  return
}

// A tensor smaller than the thread count: never more than one element each.
// CHECK-LABEL: func.func @small
// CHECK: tensor<64xf16, #kiln_gpu.blocked<{sizePerThread = [1]
func.func @small(%p: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}) {
  %r = kiln.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %s = kiln.splat %p : !kiln.ptr<f16> -> tensor<64x!kiln.ptr<f16>>
  %a = kiln.addptr %s, %r : tensor<64x!kiln.ptr<f16>>, tensor<64xi32>
  %v = kiln.load %a : (tensor<64x!kiln.ptr<f16>>) -> tensor<64xf16>
  return
}

// Dense constants are retyped with their tensors.
// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<1.000000e+00> : tensor<256xf32, #kiln_gpu.blocked
func.func @constant() {
  %c = arith.constant dense<1.0> : tensor<256xf32>
  return
}
