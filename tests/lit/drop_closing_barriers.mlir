// RUN: %kiln-opt --kiln-drop-closing-barriers %s | FileCheck %s

// A staged dot's closing barrier goes where the ops up to the next barrier
// of its block write none of the bytes read since the barrier before it
// (the next barrier orders those reads before later writes); it stays where
// one does, where an op takes scratch (from byte 0 or anything), where the
// block ends first, and where it publishes a wait for copies.

#B = #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#C = #kiln_gpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#M = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
#S = #kiln_gpu.nvmma_shared<swizzle = 32>
#T = #kiln_gpu.nvmma_shared<swizzle = 32, transposed = true>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
  // The next tile lies past the first dot's: its barrier goes. The second
  // dot's closing barrier ends the function: it stays.
  // CHECK-LABEL: func.func @drop
  // CHECK: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.local_alloc {offset = 4096
  // CHECK-NEXT: kiln_gpu.local_store
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: return
  func.func @drop(%x: tensor<64x16xf16, #B>, %y: tensor<16x64xf16, #B>, %acc: tensor<64x64xf32, #M>) -> tensor<64x64xf32, #M> {
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #S>
    kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.local_store %y, %b : tensor<16x64xf16, #B>, !kiln_gpu.memdesc<16x64xf16, #S>
    kiln_gpu.barrier
    %d = kiln_gpu.shared_dot %a, %b, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #S>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    %c = kiln_gpu.local_alloc {offset = 4096 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.local_store %x, %c : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.barrier
    %e = kiln_gpu.shared_dot %c, %b, %d : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #S>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    return %e : tensor<64x64xf32, #M>
  }

  // The next tile takes bytes of the first dot's b (seen through a
  // transposed view): the barrier stays.
  // CHECK-LABEL: func.func @overlap
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  func.func @overlap(%x: tensor<64x16xf16, #B>, %y: tensor<64x16xf16, #B>, %acc: tensor<64x64xf32, #M>) -> tensor<64x64xf32, #M> {
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.local_store %y, %b : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    %bt = kiln_gpu.memdesc_trans %b : !kiln_gpu.memdesc<64x16xf16, #S> -> !kiln_gpu.memdesc<16x64xf16, #T>
    kiln_gpu.barrier
    %d = kiln_gpu.shared_dot %a, %bt, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    %c = kiln_gpu.local_alloc {offset = 3072 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.local_store %x, %c : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.barrier
    %e = kiln_gpu.shared_dot %c, %bt, %d : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    return %e : tensor<64x64xf32, #M>
  }

  // A layout conversion's scratch may start at byte 0: the barrier stays.
  // CHECK-LABEL: func.func @scratch
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.convert_layout
  func.func @scratch(%x: tensor<64x16xf16, #B>, %y: tensor<16x64xf16, #B>, %acc: tensor<64x64xf32, #M>) -> tensor<64x16xf16, #C> {
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #S>
    kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.local_store %y, %b : tensor<16x64xf16, #B>, !kiln_gpu.memdesc<16x64xf16, #S>
    kiln_gpu.barrier
    %d = kiln_gpu.shared_dot %a, %b, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #S>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    %u = kiln_gpu.convert_layout %x : tensor<64x16xf16, #B> -> tensor<64x16xf16, #C>
    kiln_gpu.barrier
    return %u : tensor<64x16xf16, #C>
  }

  // In a loop body that ends before another barrier (the next iteration's
  // stores come first), and after a wait for copies, the barrier stays.
  // CHECK-LABEL: func.func @loop_and_wait
  // CHECK: scf.for
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: scf.yield
  // CHECK: kiln_gpu.async_wait
  // CHECK-NEXT: kiln_gpu.barrier
  func.func @loop_and_wait(%x: tensor<64x16xf16, #B>, %y: tensor<16x64xf16, #B>, %acc: tensor<64x64xf32, #M>, %n: i32) -> tensor<64x64xf32, #M> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #S>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %acc) -> (tensor<64x64xf32, #M>) : i32 {
      kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
      kiln_gpu.local_store %y, %b : tensor<16x64xf16, #B>, !kiln_gpu.memdesc<16x64xf16, #S>
      kiln_gpu.barrier
      %d = kiln_gpu.shared_dot %a, %b, %s : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #S>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      scf.yield %d : tensor<64x64xf32, #M>
    }
    kiln_gpu.barrier
    %e = kiln_gpu.shared_dot %a, %b, %r : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #S>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.async_wait {pending = 0 : i32}
    kiln_gpu.barrier
    %f = kiln_gpu.local_load %b : !kiln_gpu.memdesc<16x64xf16, #S> -> tensor<16x64xf16, #B>
    kiln_gpu.barrier
    return %e : tensor<64x64xf32, #M>
  }
}
