// RUN: %kiln-opt --kiln-place-tensor-maps %s | FileCheck %s

// After the passes that adopt tensor maps: a map no TMA copy or store reads
// goes (the masked load that named it loses it), a map equal to an earlier
// one (same tensor, box and swizzle) merges into it, and the kept maps take
// 128 bytes each of the program's share of the global scratch buffer, whose
// size the module records.

#B = #kiln_gpu.nvmma_shared<swizzle = 0>
#T = #kiln_gpu.nvmma_shared<swizzle = 128>
// CHECK: module attributes {kiln_gpu.global_scratch_bytes = 256 : i64
module attributes {kiln_gpu.target = "sm_90a"} {
// CHECK-LABEL: func.func @maps
func.func @maps(%a: !kiln.ptr<f16>, %b: !kiln.ptr<f16>, %m: i32, %s: i64, %one: i64, %o: i32, %p: i1,
                %tile: !kiln_gpu.memdesc<64x64xf16, #T>, %bar: !kiln_gpu.memdesc<1x1xi64, #B>,
                %ptrs: tensor<64x64x!kiln.ptr<f16>>, %scratch: !kiln.ptr<i8>) attributes {kiln.global_scratch} {
  // CHECK: %[[A:.*]] = kiln.make_tensor_map %arg0, {{.*}} {box = array<i64: 64, 64>, scratch_offset = 0 : i64, swizzle = 128 : i32}
  // CHECK-NEXT: %[[B:.*]] = kiln.make_tensor_map %arg1, {{.*}} {box = array<i64: 64, 64>, scratch_offset = 128 : i64, swizzle = 128 : i32}
  // CHECK-NOT: kiln.make_tensor_map
  %unused = kiln.make_tensor_map %a, [%m, %m], [%s, %one], scratch %scratch : !kiln.ptr<f16>, !kiln.ptr<i8>
  %a1 = kiln.make_tensor_map %a, [%m, %m], [%s, %one], scratch %scratch {box = array<i64: 64, 64>, swizzle = 128 : i32} : !kiln.ptr<f16>, !kiln.ptr<i8>
  %b1 = kiln.make_tensor_map %b, [%m, %m], [%s, %one], scratch %scratch {box = array<i64: 64, 64>, swizzle = 128 : i32} : !kiln.ptr<f16>, !kiln.ptr<i8>
  %a2 = kiln.make_tensor_map %a, [%m, %m], [%s, %one], scratch %scratch {box = array<i64: 64, 64>, swizzle = 128 : i32} : !kiln.ptr<f16>, !kiln.ptr<i8>
  // CHECK: kiln.load %{{[a-z0-9_]+}} : (tensor<64x64x!kiln.ptr<f16>>) -> tensor<64x64xf16>
  %v = kiln.load %ptrs tensor_map %unused[%o, %o] : (tensor<64x64x!kiln.ptr<f16>>, !kiln.tensormap, i32, i32) -> tensor<64x64xf16>
  // CHECK: kiln_gpu.async_tma_copy %[[A]]
  kiln_gpu.async_tma_copy %a1[%o, %o], %tile, %bar, %p : !kiln_gpu.memdesc<64x64xf16, #T>, !kiln_gpu.memdesc<1x1xi64, #B>
  // CHECK: kiln_gpu.async_tma_copy %[[B]]
  kiln_gpu.async_tma_copy %b1[%o, %o], %tile, %bar, %p : !kiln_gpu.memdesc<64x64xf16, #T>, !kiln_gpu.memdesc<1x1xi64, #B>
  // CHECK: kiln_gpu.async_tma_copy %[[A]]
  kiln_gpu.async_tma_copy %a2[%o, %o], %tile, %bar, %p : !kiln_gpu.memdesc<64x64xf16, #T>, !kiln_gpu.memdesc<1x1xi64, #B>
  return
}
}
