// RUN: %kiln-opt --split-input-file --kiln-to-llvm --reconcile-unrealized-casts %s | FileCheck %s

// A 1-D reduction over 32 warps. After the butterflies across each warp's
// lanes and the barrier, every lane reads one warp's partial (lane l the one
// of warp l) instead of all 32, the lanes combine them with 5 more
// butterflies, and lane 0, which combined them in warp order, gives its
// result to the others (compiler/conversion/ReduceToLLVM.cpp).
// CHECK-LABEL: llvm.func @rowsum32
// CHECK-COUNT-5: nvvm.shfl.sync {{ *}}bfly
// CHECK: nvvm.barrier0
// CHECK: %[[LANE:.*]] = llvm.and %{{.*}}, %{{.*}} : i32
// CHECK: %[[POS:.*]] = llvm.and %[[LANE]], %{{.*}} : i32
// CHECK: llvm.mul %[[POS]]
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load
// CHECK-COUNT-5: nvvm.shfl.sync {{ *}}bfly
// CHECK: nvvm.shfl.sync {{ *}}idx
// CHECK-NOT: llvm.load
// CHECK: nvvm.barrier0
#blocked = #kiln_gpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [32], order = [0]}>
module attributes {kiln_gpu.num_warps = 32 : i32, kiln_gpu.threads_per_warp = 32 : i32} {
  func.func @rowsum32(%src: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %dst: !kiln.ptr<f32>) {
    %r = kiln.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32, #blocked>
    %sp = kiln.splat %src : !kiln.ptr<f32> -> tensor<4096x!kiln.ptr<f32>, #blocked>
    %p = kiln.addptr %sp, %r : tensor<4096x!kiln.ptr<f32>, #blocked>, tensor<4096xi32, #blocked>
    %v = kiln.load %p : (tensor<4096x!kiln.ptr<f32>, #blocked>) -> tensor<4096xf32, #blocked>
    %s = kiln.reduce %v {axis = 0 : i32} : (tensor<4096xf32, #blocked>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      kiln.reduce.return %c : f32
    }
    kiln.store %dst, %s : !kiln.ptr<f32>, f32
    return
  }
}

// -----

// Over 16 warps every thread reads the 16 partials and combines them in
// warp order, one after another (measured faster than butterflies or
// pairwise combining there).
// CHECK-LABEL: llvm.func @rowsum16
// CHECK: nvvm.barrier0
// CHECK-COUNT-16: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK: nvvm.barrier0
#blocked = #kiln_gpu.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [16], order = [0]}>
module attributes {kiln_gpu.num_warps = 16 : i32, kiln_gpu.threads_per_warp = 32 : i32} {
  func.func @rowsum16(%src: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %dst: !kiln.ptr<f32>) {
    %r = kiln.make_range {start = 0 : i32, end = 4096 : i32} : tensor<4096xi32, #blocked>
    %sp = kiln.splat %src : !kiln.ptr<f32> -> tensor<4096x!kiln.ptr<f32>, #blocked>
    %p = kiln.addptr %sp, %r : tensor<4096x!kiln.ptr<f32>, #blocked>, tensor<4096xi32, #blocked>
    %v = kiln.load %p : (tensor<4096x!kiln.ptr<f32>, #blocked>) -> tensor<4096xf32, #blocked>
    %s = kiln.reduce %v {axis = 0 : i32} : (tensor<4096xf32, #blocked>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      kiln.reduce.return %c : f32
    }
    kiln.store %dst, %s : !kiln.ptr<f32>, f32
    return
  }
}
