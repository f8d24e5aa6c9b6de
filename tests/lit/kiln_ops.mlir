// RUN: %kiln-opt %s | %kiln-opt | FileCheck %s
// RUN: %kiln-opt --split-input-file --verify-diagnostics %S/Inputs/invalid_ops.mlir

// The kiln dialect round-trips.
// CHECK-LABEL: func.func @ops
// CHECK: kiln.program_id 1 : i32
// CHECK: kiln.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// CHECK: kiln.splat %{{.*}} : !kiln.ptr<bf16> -> tensor<128x!kiln.ptr<bf16>>
// CHECK: kiln.addptr
// CHECK: kiln.load %{{.*}}, mask %{{.*}}, other %{{.*}} : (tensor<128x!kiln.ptr<bf16>>, tensor<128xi1>, tensor<128xbf16>) -> tensor<128xbf16>
// CHECK: kiln.store %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<128x!kiln.ptr<bf16>>, tensor<128xbf16>, tensor<128xi1>
func.func @ops(%p: !kiln.ptr<bf16>, %m: tensor<128xi1>, %o: tensor<128xbf16>) {
  %pid = kiln.program_id 1 : i32
  %r = kiln.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %s = kiln.splat %p : !kiln.ptr<bf16> -> tensor<128x!kiln.ptr<bf16>>
  %a = kiln.addptr %s, %r : tensor<128x!kiln.ptr<bf16>>, tensor<128xi32>
  %v = kiln.load %a, mask %m, other %o : (tensor<128x!kiln.ptr<bf16>>, tensor<128xi1>, tensor<128xbf16>) -> tensor<128xbf16>
  kiln.store %a, %v, mask %m : tensor<128x!kiln.ptr<bf16>>, tensor<128xbf16>, tensor<128xi1>
  return
}
