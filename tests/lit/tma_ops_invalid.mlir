// RUN: %kiln-opt %s --split-input-file --verify-diagnostics

// mbarriers are one 8-byte word; a TMA copy fills one swizzled row-major
// tile of whole panels; a load's tensor map comes with one box offset per
// dimension.

#B = #kiln_gpu.nvmma_shared<swizzle = 0>
func.func @barrier_of_two_words(%b: !kiln_gpu.memdesc<1x2xi64, #B>) {
  // expected-error @below {{the barrier must be one mbarrier}}
  kiln_gpu.init_barrier %b, 1 : !kiln_gpu.memdesc<1x2xi64, #B>
  return
}

// -----

#B = #kiln_gpu.nvmma_shared<swizzle = 0>
func.func @no_arrivals(%b: !kiln_gpu.memdesc<1x1xi64, #B>) {
  // expected-error @below {{the arrival count must be positive}}
  kiln_gpu.init_barrier %b, 0 : !kiln_gpu.memdesc<1x1xi64, #B>
  return
}

// -----

#B = #kiln_gpu.nvmma_shared<swizzle = 0>
func.func @wait_on_a_tile(%t: !kiln_gpu.memdesc<1x1xi32, #B>, %phase: i32) {
  // expected-error @below {{the barrier must be one mbarrier}}
  kiln_gpu.wait_barrier %t, %phase : !kiln_gpu.memdesc<1x1xi32, #B>
  return
}

// -----

#B = #kiln_gpu.nvmma_shared<swizzle = 0>
#T = #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>
func.func @transposed_tile(%map: !kiln.tensormap, %t: !kiln_gpu.memdesc<64x64xf16, #T>,
                           %b: !kiln_gpu.memdesc<1x1xi64, #B>, %o: i32, %p: i1) {
  // expected-error @below {{copies into one swizzled, row-major nvmma_shared tile}}
  kiln_gpu.async_tma_copy %map[%o, %o], %t, %b, %p : !kiln_gpu.memdesc<64x64xf16, #T>, !kiln_gpu.memdesc<1x1xi64, #B>
  return
}

// -----

#B = #kiln_gpu.nvmma_shared<swizzle = 0>
#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @partial_panel(%map: !kiln.tensormap, %t: !kiln_gpu.memdesc<64x32xf16, #S>,
                         %b: !kiln_gpu.memdesc<1x1xi64, #B>, %o: i32, %p: i1) {
  // expected-error @below {{the tile must be whole panels of at most 256 rows}}
  kiln_gpu.async_tma_copy %map[%o, %o], %t, %b, %p : !kiln_gpu.memdesc<64x32xf16, #S>, !kiln_gpu.memdesc<1x1xi64, #B>
  return
}

// -----

#B = #kiln_gpu.nvmma_shared<swizzle = 0>
#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @one_offset(%map: !kiln.tensormap, %t: !kiln_gpu.memdesc<64x64xf16, #S>,
                      %b: !kiln_gpu.memdesc<1x1xi64, #B>, %o: i32, %p: i1) {
  // expected-error @below {{needs one offset per dimension of the tile}}
  kiln_gpu.async_tma_copy %map[%o], %t, %b, %p : !kiln_gpu.memdesc<64x64xf16, #S>, !kiln_gpu.memdesc<1x1xi64, #B>
  return
}

// -----

func.func @load_map_without_offsets(%p: tensor<8x!kiln.ptr<f32>>, %map: !kiln.tensormap) {
  // expected-error @below {{a tensor map needs one box offset per dimension of a tensor result}}
  %v = kiln.load %p tensor_map %map[] : (tensor<8x!kiln.ptr<f32>>, !kiln.tensormap) -> tensor<8xf32>
  return
}

// -----

// A TMA store reads one swizzled, row-major tile of whole panels.
#S = #kiln_gpu.nvmma_shared<swizzle = 0>
func.func @tma_store_unswizzled(%map: !kiln.tensormap, %t: !kiln_gpu.memdesc<64x64xf16, #S>, %o: i32) {
  // expected-error @below {{stores from one swizzled, row-major nvmma_shared tile}}
  kiln_gpu.async_tma_store %map[%o, %o], %t : !kiln_gpu.memdesc<64x64xf16, #S>
  return
}

// -----

#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @tma_store_one_offset(%map: !kiln.tensormap, %t: !kiln_gpu.memdesc<64x64xf16, #S>, %o: i32) {
  // expected-error @below {{needs one offset per dimension of the tile}}
  kiln_gpu.async_tma_store %map[%o], %t : !kiln_gpu.memdesc<64x64xf16, #S>
  return
}

// -----

// A local store writes a tile of the value's shape and element type.
#S = #kiln_gpu.nvmma_shared<swizzle = 128>
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
func.func @local_store_other_shape(%v: tensor<64x64xf16, #mma>, %t: !kiln_gpu.memdesc<64x128xf16, #S>) {
  // expected-error @below {{writes into an nvmma_shared tile of the value's shape and element type}}
  kiln_gpu.local_store %v, %t : tensor<64x64xf16, #mma>, !kiln_gpu.memdesc<64x128xf16, #S>
  return
}

// -----

// A store's tensor map comes with one box offset per dimension.
#mma = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
func.func @store_map_one_offset(%map: !kiln.tensormap, %p: tensor<64x64x!kiln.ptr<f16>, #mma>, %v: tensor<64x64xf16, #mma>, %o: i32) {
  // expected-error @below {{a tensor map needs one box offset per dimension of a tensor value}}
  kiln.store %p, %v tensor_map %map[%o] : tensor<64x64x!kiln.ptr<f16>, #mma>, tensor<64x64xf16, #mma>
  return
}

// -----

// TMA reduces with add, and, or or xor.
#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @tma_reduce_min(%map: !kiln.tensormap, %t: !kiln_gpu.memdesc<64x64xf16, #S>, %o: i32) {
  // expected-error @below {{reduces with add, and, or or xor; got min}}
  kiln_gpu.async_tma_store %map[%o, %o], %t {reduce = "min"} : !kiln_gpu.memdesc<64x64xf16, #S>
  return
}

// -----

// A tensor map the kernel encodes: a box per dimension, of 1 to 256
// elements; a swizzle TMA has; 128-byte slots of the scratch buffer.
func.func @box_rank(%p: !kiln.ptr<f16>, %m: i32, %s: i64, %scratch: !kiln.ptr<i8>) {
  // expected-error @below {{the box needs one extent per dimension}}
  %map = kiln.make_tensor_map %p, [%m, %m], [%s, %s], scratch %scratch {box = array<i64: 64>} : !kiln.ptr<f16>, !kiln.ptr<i8>
  return
}

// -----

func.func @box_too_large(%p: !kiln.ptr<f16>, %m: i32, %s: i64, %scratch: !kiln.ptr<i8>) {
  // expected-error @below {{box extents must lie in [1, 256]}}
  %map = kiln.make_tensor_map %p, [%m, %m], [%s, %s], scratch %scratch {box = array<i64: 512, 64>} : !kiln.ptr<f16>, !kiln.ptr<i8>
  return
}

// -----

func.func @odd_swizzle(%p: !kiln.ptr<f16>, %m: i32, %s: i64, %scratch: !kiln.ptr<i8>) {
  // expected-error @below {{the swizzle is 0, 32, 64 or 128 bytes}}
  %map = kiln.make_tensor_map %p, [%m, %m], [%s, %s], scratch %scratch {box = array<i64: 64, 64>, swizzle = 16 : i32} : !kiln.ptr<f16>, !kiln.ptr<i8>
  return
}

// -----

func.func @unaligned_slot(%p: !kiln.ptr<f16>, %m: i32, %s: i64, %scratch: !kiln.ptr<i8>) {
  // expected-error @below {{a tensor map's scratch offset is a multiple of 128}}
  %map = kiln.make_tensor_map %p, [%m, %m], [%s, %s], scratch %scratch {scratch_offset = 64 : i64} : !kiln.ptr<f16>, !kiln.ptr<i8>
  return
}

// -----

func.func @strides_per_extent(%p: !kiln.ptr<f16>, %m: i32, %s: i64, %scratch: !kiln.ptr<i8>) {
  // expected-error @below {{needs one to five extents and as many strides}}
  %map = kiln.make_tensor_map %p, [%m, %m], [%s], scratch %scratch : !kiln.ptr<f16>, !kiln.ptr<i8>
  return
}
