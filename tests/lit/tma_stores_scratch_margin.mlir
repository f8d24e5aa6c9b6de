// RUN: %kiln-opt --kiln-tma-stores="scratch-margin=0" %s | FileCheck %s --check-prefix=TIGHT
// RUN: %kiln-opt --kiln-tma-stores %s | FileCheck %s --check-prefix=MARGIN

// A 16 KB tile beside a 200 KB ring: it fits in sm_90a's 227 KB only
// without the default 16 KB left for single ops' scratch. With no margin
// (kilnc's first attempt) the tile is kept across the loop and the module
// says so: kilnc compiles again with the default margin if shared memory
// then runs out. With the default, each store waits for its own tile.
// TIGHT: module attributes {{.*}}kiln_gpu.tight_tma_store_tiles
// TIGHT: kiln_gpu.local_alloc : <4x200x128xf16
// TIGHT: %[[TILE:.*]] = kiln_gpu.local_alloc : <64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
// TIGHT-NEXT: scf.for
// TIGHT-NEXT: kiln_gpu.tma_store_wait %[[TILE]]
// TIGHT-NEXT: kiln_gpu.barrier
// TIGHT-NEXT: kiln_gpu.local_store %{{.*}}, %[[TILE]]
// MARGIN-NOT: tight_tma_store_tiles
// MARGIN: scf.for
// MARGIN-NEXT: kiln_gpu.local_alloc
// MARGIN-NEXT: kiln_gpu.local_store
// MARGIN: kiln_gpu.async_tma_store
// MARGIN-NEXT: kiln_gpu.tma_store_wait
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
#S = #kiln_gpu.nvmma_shared<swizzle = 128>
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.num_warps = 4 : i32} {
func.func @tile_beside_a_ring(%map: !kiln.tensormap, %ptrs: tensor<64x128x!kiln.ptr<f16>, #mma>,
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
