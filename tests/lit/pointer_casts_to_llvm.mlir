// RUN: %kiln-opt --kiln-to-llvm %s | FileCheck %s

// LLVM pointers are opaque: a cast of bool pointers to byte pointers leaves
// the addresses as they are, and the load reads bytes through them.
#b = #kiln_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {kiln_gpu.num_warps = 4 : i32, kiln_gpu.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: llvm.func @bools_as_bytes
  // CHECK: %[[P:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i1
  // CHECK-NOT: kiln.ptr_cast
  // CHECK: ld.global.b8 {{.*}} %[[P]]
  func.func @bools_as_bytes(%p: !kiln.ptr<i1>, %q: !kiln.ptr<i8>) {
    %r = kiln.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #b>
    %s = kiln.splat %p : !kiln.ptr<i1> -> tensor<128x!kiln.ptr<i1>, #b>
    %a = kiln.addptr %s, %r : tensor<128x!kiln.ptr<i1>, #b>, tensor<128xi32, #b>
    %c = kiln.ptr_cast %a : tensor<128x!kiln.ptr<i1>, #b> -> tensor<128x!kiln.ptr<i8>, #b>
    %v = kiln.load %c : (tensor<128x!kiln.ptr<i8>, #b>) -> tensor<128xi8, #b>
    %t = kiln.splat %q : !kiln.ptr<i8> -> tensor<128x!kiln.ptr<i8>, #b>
    %o = kiln.addptr %t, %r : tensor<128x!kiln.ptr<i8>, #b>, tensor<128xi32, #b>
    kiln.store %o, %v : tensor<128x!kiln.ptr<i8>, #b>, tensor<128xi8, #b>
    return
  }
}
