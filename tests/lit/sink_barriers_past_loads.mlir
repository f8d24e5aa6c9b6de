// RUN: %kiln-opt --kiln-drop-closing-barriers %s | FileCheck %s

// In a loop, a barrier kiln-drop-closing-barriers keeps moves below the
// global loads just after it (and their address arithmetic), up to the
// first op that touches shared memory, so that ptxas may issue the loads
// before the wait: not past a volatile load, nor past a shared-memory read.
// So does a wait for copies. Outside loops nothing moves.

#B = #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#M = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
#S = #kiln_gpu.nvmma_shared<swizzle = 32>
#T = #kiln_gpu.nvmma_shared<swizzle = 32, transposed = true>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
  // The dot's closing barrier stays (the conversion's scratch overlaps its
  // tiles) but goes below the load of the block the conversion moves.
  // CHECK-LABEL: func.func @sinks
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln.addptr
  // CHECK-NEXT: kiln.load
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.convert_layout
  func.func @sinks(%p: tensor<64x64x!kiln.ptr<f32>, #B>, %o: tensor<64x64xi32, #B>, %acc: tensor<64x64xf32, #M>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    scf.for %i = %c0 to %n step %c1 : i32 {
      kiln_gpu.barrier
      %d = kiln_gpu.shared_dot %a, %b, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      %q = kiln.addptr %p, %o : tensor<64x64x!kiln.ptr<f32>, #B>, tensor<64x64xi32, #B>
      %v = kiln.load %q : (tensor<64x64x!kiln.ptr<f32>, #B>) -> tensor<64x64xf32, #B>
      %c = kiln_gpu.convert_layout %v {kiln_gpu.scratch_base = 0 : i64} : tensor<64x64xf32, #B> -> tensor<64x64xf32, #M>
      %r = arith.addf %c, %d : tensor<64x64xf32, #M>
    }
    return
  }

  // A volatile load keeps its place after the barrier, and so does a load
  // after a shared-memory read.
  // CHECK-LABEL: func.func @stays
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln.load {{.*}} volatile
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.local_load
  // CHECK-NEXT: kiln.load
  func.func @stays(%p: tensor<64x64x!kiln.ptr<f32>, #B>, %acc: tensor<64x64xf32, #M>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    scf.for %i = %c0 to %n step %c1 : i32 {
      kiln_gpu.barrier
      %d = kiln_gpu.shared_dot %a, %b, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      %v = kiln.load %p volatile : (tensor<64x64x!kiln.ptr<f32>, #B>) -> tensor<64x64xf32, #B>
      %c = kiln_gpu.convert_layout %v {kiln_gpu.scratch_base = 0 : i64} : tensor<64x64xf32, #B> -> tensor<64x64xf32, #M>
      %e = kiln_gpu.shared_dot %a, %b, %c : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      %x = kiln_gpu.local_load %a : !kiln_gpu.memdesc<64x16xf16, #S> -> tensor<64x16xf16, #B>
      %w = kiln.load %p : (tensor<64x64x!kiln.ptr<f32>, #B>) -> tensor<64x64xf32, #B>
      kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    }
    return
  }

  // A pipelined loop's wait for its ring's copies, then a gathered load.
  // CHECK-LABEL: func.func @copies
  // CHECK: scf.for
  // CHECK-NEXT: kiln.load
  // CHECK-NEXT: kiln_gpu.async_wait
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.convert_layout
  func.func @copies(%p: tensor<64x64x!kiln.ptr<f32>, #B>, %acc: tensor<64x64xf32, #M>, %n: i32) -> tensor<64x64xf32, #M> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %acc) -> (tensor<64x64xf32, #M>) : i32 {
      kiln_gpu.async_wait {pending = 1 : i32}
      kiln_gpu.barrier
      %v = kiln.load %p : (tensor<64x64x!kiln.ptr<f32>, #B>) -> tensor<64x64xf32, #B>
      %c = kiln_gpu.convert_layout %v {kiln_gpu.scratch_base = 0 : i64} : tensor<64x64xf32, #B> -> tensor<64x64xf32, #M>
      %t = arith.addf %s, %c : tensor<64x64xf32, #M>
      scf.yield %t : tensor<64x64xf32, #M>
    }
    return %r : tensor<64x64xf32, #M>
  }

  // Outside loops nothing moves (there a barrier's place also shapes
  // ptxas' straight-line schedule).
  // CHECK-LABEL: func.func @straight_line
  // CHECK: kiln_gpu.async_wait
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln.load
  func.func @straight_line(%p: tensor<64x64x!kiln.ptr<f32>, #B>) -> tensor<64x64xf32, #M> {
    kiln_gpu.async_wait {pending = 0 : i32}
    kiln_gpu.barrier
    %v = kiln.load %p : (tensor<64x64x!kiln.ptr<f32>, #B>) -> tensor<64x64xf32, #B>
    %c = kiln_gpu.convert_layout %v {kiln_gpu.scratch_base = 0 : i64} : tensor<64x64xf32, #B> -> tensor<64x64xf32, #M>
    return %c : tensor<64x64xf32, #M>
  }
}
