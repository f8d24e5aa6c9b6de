// RUN: %kiln-opt --kiln-tma-stores --split-input-file %s | FileCheck %s

// On sm_90a a store through a kernel argument's tensor map goes through an
// nvmma_shared tile (lines swizzled by their bytes, up to 128) and TMA:
// every thread writes its elements, fences them for the async proxy and
// meets the others; thread 0 stores the box and waits until the tile is
// read; the tile's bytes are free after the last barrier. The box (rows x
// one swizzle panel) and swizzle join kiln_gpu.tensor_maps.
// CHECK-LABEL: module attributes
// CHECK-SAME: kiln_gpu.tensor_maps = {"0" = {box = array<i64: 64, 64>, swizzle = 128 : i32}}
// CHECK-LABEL: func.func @store_tile
// CHECK: %[[TILE:.*]] = kiln_gpu.local_alloc : <64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
// CHECK-NEXT: kiln_gpu.local_store %{{.*}}, %[[TILE]]
// CHECK-NEXT: kiln_gpu.fence_async_shared
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.async_tma_store %arg0[%arg3, %arg4], %[[TILE]]
// CHECK-NEXT: kiln_gpu.tma_store_wait %[[TILE]]
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NOT: kiln.store
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
func.func @store_tile(%map: !kiln.tensormap, %ptrs: tensor<64x128x!kiln.ptr<f16>, #mma>,
                      %v: tensor<64x128xf16, #mma>, %om: i32, %on: i32) {
  kiln.store %ptrs, %v tensor_map %map[%om, %on] : tensor<64x128x!kiln.ptr<f16>, #mma>, tensor<64x128xf16, #mma>
  return
}
}

// -----

// A map that a TMA copy already reads with another box keeps its store
// masked, and the recorded encoding stands.
// CHECK-LABEL: module attributes
// CHECK-SAME: kiln_gpu.tensor_maps = {"0" = {box = array<i64: 32, 32>, swizzle = 64 : i32}}
// CHECK-LABEL: func.func @other_box
// CHECK-NOT: kiln_gpu.async_tma_store
// CHECK: kiln.store
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32,
                   kiln_gpu.tensor_maps = {"0" = {box = array<i64: 32, 32>, swizzle = 64 : i32}}} {
func.func @other_box(%map: !kiln.tensormap, %ptrs: tensor<64x128x!kiln.ptr<f16>, #mma>,
                     %v: tensor<64x128xf16, #mma>, %om: i32, %on: i32) {
  kiln.store %ptrs, %v tensor_map %map[%om, %on] : tensor<64x128x!kiln.ptr<f16>, #mma>, tensor<64x128xf16, #mma>
  return
}
}

// -----

// Lines TMA cannot swizzle (24 bytes), and targets without wgmma, keep the
// masked store.
// CHECK-LABEL: func.func @short_lines
// CHECK-NOT: kiln_gpu.async_tma_store
// CHECK: kiln.store
#blocked = #kiln_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
func.func @short_lines(%map: !kiln.tensormap, %ptrs: tensor<64x12x!kiln.ptr<f16>, #blocked>,
                       %v: tensor<64x12xf16, #blocked>, %om: i32, %on: i32) {
  kiln.store %ptrs, %v tensor_map %map[%om, %on] : tensor<64x12x!kiln.ptr<f16>, #blocked>, tensor<64x12xf16, #blocked>
  return
}
}

// -----

// CHECK-LABEL: func.func @plain_sm90
// CHECK-NOT: kiln_gpu.async_tma_store
// CHECK: kiln.store
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
module attributes {kiln_gpu.target = "sm_90", kiln_gpu.num_warps = 4 : i32} {
func.func @plain_sm90(%map: !kiln.tensormap, %ptrs: tensor<64x128x!kiln.ptr<f16>, #mma>,
                      %v: tensor<64x128xf16, #mma>, %om: i32, %on: i32) {
  kiln.store %ptrs, %v tensor_map %map[%om, %on] : tensor<64x128x!kiln.ptr<f16>, #mma>, tensor<64x128xf16, #mma>
  return
}
}

// -----

// In a loop's body (a persistent kernel's tiles) the tile, when it fits
// beside the other buffers, lives for the whole loop: each store waits for
// the previous one to have read the tile, so a store overlaps the next
// iteration's work; one more wait follows the loop.
// CHECK-LABEL: func.func @store_per_tile
// CHECK: %[[TILE:.*]] = kiln_gpu.local_alloc : <64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
// CHECK-NEXT: scf.for
// CHECK-NEXT: kiln_gpu.tma_store_wait %[[TILE]]
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.local_store %{{.*}}, %[[TILE]]
// CHECK-NEXT: kiln_gpu.fence_async_shared
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.async_tma_store %arg0[%{{.*}}, %arg4], %[[TILE]]
// CHECK-NEXT: }
// CHECK-NEXT: kiln_gpu.tma_store_wait %[[TILE]]
// CHECK-NEXT: kiln_gpu.barrier
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
func.func @store_per_tile(%map: !kiln.tensormap, %ptrs: tensor<64x128x!kiln.ptr<f16>, #mma>,
                          %v: tensor<64x128xf16, #mma>, %n: i32, %on: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  scf.for %om = %c0 to %n step %c64 : i32 {
    kiln.store %ptrs, %v tensor_map %map[%om, %on] : tensor<64x128x!kiln.ptr<f16>, #mma>, tensor<64x128xf16, #mma>
  }
  return
}
}

// -----

// The same in a while loop's body, under an if (tutorial 08's loop over a
// group's tiles, its store behind the run-time chunk check).
// CHECK-LABEL: func.func @store_per_tile_while
// CHECK: %[[TILE:.*]] = kiln_gpu.local_alloc : <64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
// CHECK-NEXT: scf.while
// CHECK: scf.if
// CHECK-NEXT: kiln_gpu.tma_store_wait %[[TILE]]
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.local_store %{{.*}}, %[[TILE]]
// CHECK-NEXT: kiln_gpu.fence_async_shared
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.async_tma_store %arg0[%{{.*}}, %arg4], %[[TILE]]
// CHECK: kiln_gpu.tma_store_wait %[[TILE]]
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: return
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
func.func @store_per_tile_while(%map: !kiln.tensormap, %ptrs: tensor<64x128x!kiln.ptr<f16>, #mma>,
                                %v: tensor<64x128xf16, #mma>, %n: i32, %on: i32, %fits: i1) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %last = scf.while (%om = %c0) : (i32) -> i32 {
    %more = arith.cmpi slt, %om, %n : i32
    scf.condition(%more) %om : i32
  } do {
  ^bb0(%om: i32):
    scf.if %fits {
      kiln.store %ptrs, %v tensor_map %map[%om, %on] : tensor<64x128x!kiln.ptr<f16>, #mma>, tensor<64x128xf16, #mma>
    }
    %next = arith.addi %om, %c64 : i32
    scf.yield %next : i32
  }
  return
}
}

// -----

// Where the tile would not fit beside the other buffers (200 KB of them
// here), each store waits for its own tile instead.
// CHECK-LABEL: func.func @no_room_for_a_tile
// CHECK: scf.for
// CHECK-NEXT: kiln_gpu.local_alloc
// CHECK-NEXT: kiln_gpu.local_store
// CHECK: kiln_gpu.async_tma_store
// CHECK-NEXT: kiln_gpu.tma_store_wait
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
#S = #kiln_gpu.nvmma_shared<swizzle = 128>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
func.func @no_room_for_a_tile(%map: !kiln.tensormap, %ptrs: tensor<64x128x!kiln.ptr<f16>, #mma>,
                              %v: tensor<64x128xf16, #mma>, %n: i32, %on: i32) {
  %ring = kiln_gpu.local_alloc : !kiln_gpu.memdesc<4x200x128xf16, #S>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  scf.for %om = %c0 to %n step %c64 : i32 {
    kiln.store %ptrs, %v tensor_map %map[%om, %on] : tensor<64x128x!kiln.ptr<f16>, #mma>, tensor<64x128xf16, #mma>
  }
  return
}
}

// -----

// A descriptor reduction TMA can do (an add, old values unread) goes the
// same way, combined into memory by cp.reduce.async.bulk.tensor; a max
// stays an atomic.
// CHECK-LABEL: func.func @reductions
// CHECK: kiln_gpu.local_store
// CHECK: kiln_gpu.async_tma_store %arg0[%arg3, %arg4], %{{.*}} {reduce = "add"}
// CHECK: kiln.atomic_rmw max
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
func.func @reductions(%map: !kiln.tensormap, %ptrs: tensor<64x32x!kiln.ptr<f32>, #mma>,
                      %v: tensor<64x32xf32, #mma>, %om: i32, %on: i32) {
  %old = kiln.atomic_rmw fadd relaxed gpu %ptrs, %v tensor_map %map[%om, %on] : tensor<64x32x!kiln.ptr<f32>, #mma>, tensor<64x32xf32, #mma>
  %old2 = kiln.atomic_rmw max relaxed gpu %ptrs, %v tensor_map %map[%om, %on] : tensor<64x32x!kiln.ptr<f32>, #mma>, tensor<64x32xf32, #mma>
  return
}
}
