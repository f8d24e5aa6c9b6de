// RUN: %kiln-opt --kiln-to-llvm --reconcile-unrealized-casts %s | FileCheck %s

#blocked = #kiln_gpu.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {kiln_gpu.num_warps = 4 : i32, kiln_gpu.threads_per_warp = 32 : i32} {
  // The kernel is an NVVM kernel with its thread count and aligned pointers.
  // CHECK-LABEL: llvm.func @copy(%{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64}, %{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64}, %{{.*}}: i32)
  // CHECK-SAME: nvvm.kernel
  // CHECK-SAME: nvvm.reqntid = array<i32: 128, 1, 1>
  // CHECK: nvvm.read.ptx.sreg.ctaid.x
  // CHECK: nvvm.read.ptx.sreg.tid.x
  // Each thread's 8 elements are two chunks of 4: two predicated 128-bit
  // loads and stores.
  // CHECK-COUNT-2: llvm.inline_asm has_side_effects asm_dialect = att "@$5 ld.global.v4.b32 { $0, $1, $2, $3 }, [ $4 + 0 ];", "=r,=r,=r,=r,l,b,0,1,2,3"
  // CHECK-COUNT-2: llvm.inline_asm has_side_effects asm_dialect = att "@$1 st.global.v4.b32 [ $0 + 0 ], { $2, $3, $4, $5 };", "l,b,r,r,r,r"
  // CHECK: llvm.return
  func.func @copy(%src: !kiln.ptr<f32> {kiln.divisibility = 16 : i32},
                  %dst: !kiln.ptr<f32> {kiln.divisibility = 16 : i32},
                  %n: i32 {kiln.divisibility = 16 : i32}) {
    %c1024 = arith.constant 1024 : i32
    %pid = kiln.program_id 0 : i32
    %base = arith.muli %pid, %c1024 : i32
    %r = kiln.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %b = kiln.splat %base : i32 -> tensor<1024xi32, #blocked>
    %offs = arith.addi %b, %r : tensor<1024xi32, #blocked>
    %nn = kiln.splat %n : i32 -> tensor<1024xi32, #blocked>
    %mask = arith.cmpi slt, %offs, %nn : tensor<1024xi32, #blocked>
    %sp = kiln.splat %src : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>, #blocked>
    %p = kiln.addptr %sp, %offs : tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %v = kiln.load %p, mask %mask : (tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xi1, #blocked>) -> tensor<1024xf32, #blocked>
    %dp = kiln.splat %dst : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>, #blocked>
    %q = kiln.addptr %dp, %offs : tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    kiln.store %q, %v, mask %mask : tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xf32, #blocked>, tensor<1024xi1, #blocked>
    return
  }

  // A mask that may change inside a chunk (n of unknown divisibility) forces
  // one predicated scalar access per element.
  // CHECK-LABEL: llvm.func @unaligned_bound
  // CHECK-COUNT-8: "@$2 ld.global.b32 $0, [ $1 + 0 ];", "=r,l,b,0"
  // CHECK-NOT: ld.global
  func.func @unaligned_bound(%src: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %n: i32) {
    %r = kiln.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %nn = kiln.splat %n : i32 -> tensor<1024xi32, #blocked>
    %mask = arith.cmpi slt, %r, %nn : tensor<1024xi32, #blocked>
    %sp = kiln.splat %src : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>, #blocked>
    %p = kiln.addptr %sp, %r : tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %v = kiln.load %p, mask %mask : (tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xi1, #blocked>) -> tensor<1024xf32, #blocked>
    return
  }

  // arith.select with a scalar condition on tensors (kiln-flatten-loops'
  // accumulator reset): the condition serves every element; each of the
  // thread's elements is selected.
  // CHECK-LABEL: llvm.func @select_scalar_condition
  // CHECK-COUNT-8: llvm.select %{{[a-z0-9_]+}}, %{{.*}} : i1, f32
  // CHECK-NOT: llvm.select
  // CHECK: llvm.return
  func.func @select_scalar_condition(%p: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %c: i1) {
    %r = kiln.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32, #blocked>
    %sp = kiln.splat %p : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>, #blocked>
    %q = kiln.addptr %sp, %r : tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
    %v = kiln.load %q : (tensor<1024x!kiln.ptr<f32>, #blocked>) -> tensor<1024xf32, #blocked>
    %zero = arith.constant dense<0.0> : tensor<1024xf32, #blocked>
    %s = arith.select %c, %zero, %v : tensor<1024xf32, #blocked>
    kiln.store %q, %s : tensor<1024x!kiln.ptr<f32>, #blocked>, tensor<1024xf32, #blocked>
    return
  }
}
