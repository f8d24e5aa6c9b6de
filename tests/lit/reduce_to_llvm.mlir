// RUN: %kiln-opt --kiln-to-llvm --reconcile-unrealized-casts %s | FileCheck %s

// A 1-D reduction over 4 warps: 8 elements combined in each thread, 5
// butterfly shuffles across the warp, then one shared-memory slot per warp,
// read back by every thread between two barriers. Only lane 0 of each warp
// writes its warp's slot: after the butterflies of a combine that is not
// commutative, the lanes may disagree. The two reductions share
// one pool (16 bytes: the larger one's four f32 slots), the kernel's dynamic
// shared memory.
// CHECK: module attributes {{{.*}}kiln_gpu.shared_bytes = 16 : i64
// CHECK: llvm.mlir.global external @kiln_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-NOT: llvm.mlir.global
// CHECK-LABEL: llvm.func @rowmax
// CHECK-COUNT-8: ex2.approx.f32
// CHECK-COUNT-7: llvm.intr.maxnum
// CHECK-COUNT-5: nvvm.shfl.sync {{ *}}bfly
// CHECK: llvm.mlir.addressof @kiln_smem : !llvm.ptr<3>
// CHECK: %[[LANE:.*]] = llvm.and %{{.*}}, %{{.*}} : i32
// CHECK: %[[FIRST:.*]] = llvm.icmp "eq" %[[LANE]], %{{.*}} : i32
// CHECK: llvm.cond_br %[[FIRST]], ^[[WRITE:.*]], ^[[AFTER:[a-z0-9]*]]
// CHECK: ^[[WRITE]]:
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NEXT: llvm.br ^[[AFTER]]
// CHECK: ^[[AFTER]]:
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-4: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
// CHECK: llvm.call @__nv_logf
#blocked = #kiln_gpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#small = #kiln_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {kiln_gpu.num_warps = 4 : i32, kiln_gpu.threads_per_warp = 32 : i32} {
  func.func @rowmax(%src: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %dst: !kiln.ptr<f32>) {
    %r = kiln.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %sp = kiln.splat %src : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>, #blocked>
    %p = kiln.addptr %sp, %r : tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %v = kiln.load %p : (tensor<1024x!kiln.ptr<f32>, #blocked>) -> tensor<1024xf32, #blocked>
    %e = math.exp %v : tensor<1024xf32, #blocked>
    %m = kiln.reduce %e {axis = 0 : i32} : (tensor<1024xf32, #blocked>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %c = arith.maxnumf %a, %b : f32
      kiln.reduce.return %c : f32
    }
    %l = math.log %m : f32
    kiln.store %dst, %l : !kiln.ptr<f32>, f32
    return
  }

  func.func @small_sum(%src: !kiln.ptr<i32>) -> i32 {
    %r = kiln.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #small>
    %s = kiln.reduce %r {axis = 0 : i32} : (tensor<64xi32, #small>) -> i32 {
    ^bb0(%a: i32, %b: i32):
      %c = arith.addi %a, %b : i32
      kiln.reduce.return %c : i32
    }
    return %s : i32
  }
}

// A tensor smaller than the CTA: 64 elements over 128 threads, one each;
// lanes hold distinct elements, warps 2 and 3 hold copies, so two slots
// (the array<2 x i32> above).
// CHECK-LABEL: llvm.func @small_sum
// CHECK-COUNT-5: nvvm.shfl.sync {{ *}}bfly
// CHECK-NOT: nvvm.shfl.sync
// CHECK: nvvm.barrier0
