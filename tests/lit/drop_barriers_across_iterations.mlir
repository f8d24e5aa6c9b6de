// RUN: %kiln-opt --kiln-drop-closing-barriers %s | FileCheck %s

// Barriers the next barrier makes redundant: one whose accesses since the
// barrier before it do not conflict with the ops up to the next barrier,
// including one that writes bytes the next ops do not touch; at a loop
// body's end the next iteration's first barrier, with one barrier added
// after the loop where the code there conflicts; scratch counted from its
// base; all of it in loops only; and a proxy fence repeated with only wgmma
// dots since the last.

#B = #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#C = #kiln_gpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#M = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
#S = #kiln_gpu.nvmma_shared<swizzle = 32>
#T = #kiln_gpu.nvmma_shared<swizzle = 32, transposed = true>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
  // In the body: the first dot's closing barrier goes (the store after it
  // writes other bytes); the one before the second dot stays (it reads the
  // stored tile); the body's last goes, since the next iteration stores
  // only the first tile before its first barrier, and a barrier after the
  // loop orders the last iteration's reads before the store there.
  // CHECK-LABEL: func.func @back_edge
  // CHECK: scf.for
  // CHECK-NEXT: kiln_gpu.local_store
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.local_store
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.shared_dot
  // CHECK-NEXT: scf.yield
  // CHECK-NEXT: {{^ *}$}}
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.local_store
  func.func @back_edge(%x: tensor<64x16xf16, #B>, %acc: tensor<64x64xf32, #M>, %n: i32) -> tensor<64x64xf32, #M> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    %c = kiln_gpu.local_alloc {offset = 4096 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %d = kiln_gpu.local_alloc {offset = 6144 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %acc) -> (tensor<64x64xf32, #M>) : i32 {
      kiln_gpu.local_store %x, %c : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
      kiln_gpu.barrier
      %e = kiln_gpu.shared_dot %c, %b, %s : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      kiln_gpu.local_store %x, %d : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
      kiln_gpu.barrier
      %f = kiln_gpu.shared_dot %d, %a, %e : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      scf.yield %f : tensor<64x64xf32, #M>
    }
    kiln_gpu.local_store %x, %d : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.barrier
    return %r : tensor<64x64xf32, #M>
  }

  // The next iteration writes the tile the body's last dot reads before
  // any barrier: that barrier stays, and none is added after the loop.
  // CHECK-LABEL: func.func @back_edge_conflict
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: scf.yield
  // CHECK-NEXT: {{^ *}$}}
  // CHECK-NEXT: return
  func.func @back_edge_conflict(%x: tensor<64x16xf16, #B>, %acc: tensor<64x64xf32, #M>, %n: i32) -> tensor<64x64xf32, #M> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    %c = kiln_gpu.local_alloc {offset = 4096 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %acc) -> (tensor<64x64xf32, #M>) : i32 {
      kiln_gpu.local_store %x, %c : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
      kiln_gpu.barrier
      %e = kiln_gpu.shared_dot %c, %b, %s : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      scf.yield %e : tensor<64x64xf32, #M>
    }
    return %r : tensor<64x64xf32, #M>
  }

  // In a loop, scratch starting past the tiles the dot read does not touch
  // them: the barrier goes; a second barrier with nothing since the first
  // goes too.
  // CHECK-LABEL: func.func @scratch_past_tiles
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.convert_layout
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: {{^ *}$}}
  func.func @scratch_past_tiles(%x: tensor<64x16xf16, #B>, %acc: tensor<64x64xf32, #M>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    scf.for %i = %c0 to %n step %c1 : i32 {
      kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
      kiln_gpu.barrier
      %d = kiln_gpu.shared_dot %a, %b, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
      kiln_gpu.barrier
      kiln_gpu.barrier
      %u = kiln_gpu.convert_layout %x {kiln_gpu.scratch_base = 4096 : i64} : tensor<64x16xf16, #B> -> tensor<64x16xf16, #C>
      kiln_gpu.barrier
    }
    return
  }

  // Outside loops, where a barrier costs once, only one after pure reads
  // before ops without scratch goes: of the dot's two closing barriers, the
  // one before the conversion stays.
  // CHECK-LABEL: func.func @straight_line_keeps
  // CHECK: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.convert_layout
  func.func @straight_line_keeps(%x: tensor<64x16xf16, #B>, %acc: tensor<64x64xf32, #M>) -> tensor<64x16xf16, #C> {
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.barrier
    %d = kiln_gpu.shared_dot %a, %b, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    kiln_gpu.barrier
    %u = kiln_gpu.convert_layout %x {kiln_gpu.scratch_base = 4096 : i64} : tensor<64x16xf16, #B> -> tensor<64x16xf16, #C>
    kiln_gpu.barrier
    return %u : tensor<64x16xf16, #C>
  }

  // Two staged wgmma dots each fenced: the second fence repeats the first
  // (only a wgmma dot read shared memory between them) and goes, and then
  // the barrier between the dots. A local load (the generic proxy) between
  // fences keeps the third; the barrier before that load goes (reads only).
  // Fences go outside loops too.
  // CHECK-LABEL: func.func @repeated_fence
  // CHECK: kiln_gpu.fence_async_shared
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NEXT: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.local_load
  // CHECK-NEXT: kiln_gpu.fence_async_shared
  // CHECK-NEXT: kiln_gpu.barrier
  func.func @repeated_fence(%x: tensor<64x16xf16, #B>, %acc: tensor<64x64xf32, #M>) -> tensor<64x64xf32, #M> {
    %a = kiln_gpu.local_alloc {offset = 0 : i64} : !kiln_gpu.memdesc<64x16xf16, #S>
    %b = kiln_gpu.local_alloc {offset = 2048 : i64} : !kiln_gpu.memdesc<16x64xf16, #T>
    kiln_gpu.local_store %x, %a : tensor<64x16xf16, #B>, !kiln_gpu.memdesc<64x16xf16, #S>
    kiln_gpu.fence_async_shared
    kiln_gpu.barrier
    %d = kiln_gpu.shared_dot %a, %b, %acc : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.fence_async_shared
    kiln_gpu.barrier
    %e = kiln_gpu.shared_dot %a, %b, %d : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    %l = kiln_gpu.local_load %a : !kiln_gpu.memdesc<64x16xf16, #S> -> tensor<64x16xf16, #B>
    kiln_gpu.fence_async_shared
    kiln_gpu.barrier
    %f = kiln_gpu.shared_dot %a, %b, %e : !kiln_gpu.memdesc<64x16xf16, #S>, !kiln_gpu.memdesc<16x64xf16, #T>, tensor<64x64xf32, #M> -> tensor<64x64xf32, #M>
    kiln_gpu.barrier
    return %f : tensor<64x64xf32, #M>
  }
}
