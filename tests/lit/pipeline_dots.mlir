// RUN: %kiln-opt --kiln-pipeline-dots="num-stages=4" --kiln-allocate-shared %s | FileCheck %s

// kiln-pipeline-dots on a 64x64x32 fp16 loop (sm_80: ldmatrix + mma.sync,
// synchronous). Both operand loads become cp.async copies into rings of
// three swizzled tiles (num_stages - 1 on the mma.sync path, as Triton's),
// three iterations ahead; the carried pointers start three steps ahead;
// the copies in the loop are masked by iv + 3 < ub and, as Triton's,
// refill the slot the iteration's dot read, behind a barrier after it
// (three iterations in flight while the next one waits).
// kiln-allocate-shared places the rings side by side (1024-aligned).

#B = #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#SB0 = #kiln_gpu.slice<{dim = 0, parent = #B}>
#SB1 = #kiln_gpu.slice<{dim = 1, parent = #B}>
#M = #kiln_gpu.mma<{warpsPerCTA = [2, 2]}>

// CHECK: module attributes {kiln_gpu.buffer_bytes = 24576 : i64
module attributes {kiln_gpu.num_warps = 4 : i32, kiln_gpu.target = "sm_80", kiln_gpu.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @pipelined
  // CHECK: kiln_gpu.local_alloc {offset = 0 : i64} : <3x64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 64>>
  // CHECK: kiln_gpu.local_alloc {offset = 12288 : i64} : <3x32x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
  // Prologue: iterations 0, 1 and 2, each copy masked by its iteration < ub.
  // CHECK: arith.cmpi slt, %c0_i32
  // CHECK: kiln_gpu.async_copy {{.*}} mask {{.*}} {kiln_gpu.vec = 8 : i32}
  // CHECK: kiln_gpu.async_copy
  // CHECK: kiln_gpu.async_commit_group
  // CHECK: kiln_gpu.async_copy
  // CHECK: kiln_gpu.async_copy
  // CHECK: kiln_gpu.async_commit_group
  // CHECK: kiln_gpu.memdesc_index {{.*}}[%c2_i32
  // CHECK: kiln_gpu.async_copy
  // CHECK: kiln_gpu.async_copy
  // CHECK: kiln_gpu.async_commit_group
  // CHECK: scf.for {{.*}} iter_args({{.*}}, %[[SLOT:[a-z0-9_]+]] = %c0_i32{{[_0-9]*}}) ->
  // CHECK: kiln_gpu.async_wait {pending = 2 : i32}
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NOT: fence_async_shared
  // CHECK: kiln_gpu.memdesc_index {{.*}}[%[[SLOT]]]
  // CHECK: kiln_gpu.memdesc_index {{.*}}[%[[SLOT]]]
  // CHECK-NEXT: kiln_gpu.shared_dot
  // CHECK-NEXT: kiln_gpu.barrier
  // CHECK-NOT: dot_wait
  // CHECK: kiln_gpu.memdesc_index {{.*}}[%[[SLOT]]]
  // CHECK: kiln_gpu.async_copy
  // CHECK: kiln_gpu.memdesc_index {{.*}}[%[[SLOT]]]
  // CHECK: kiln_gpu.async_copy
  // CHECK-NEXT: kiln_gpu.async_commit_group
  // CHECK: scf.yield
  // CHECK: kiln_gpu.async_wait {pending = 0 : i32}
  // CHECK-NEXT: kiln_gpu.barrier
  func.func @pipelined(%a: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %b: !kiln.ptr<f16> {kiln.divisibility = 16 : i32},
                       %K: i32 {kiln.divisibility = 16 : i32}, %sa: i32 {kiln.divisibility = 16 : i32},
                       %sb: i32 {kiln.divisibility = 16 : i32}) -> tensor<64x64xf32, #M> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %acc0 = arith.constant dense<0.0> : tensor<64x64xf32, #M>
    %za = arith.constant dense<0.0> : tensor<64x32xf16, #B>
    %zb = arith.constant dense<0.0> : tensor<32x64xf16, #B>
    // a: a + rm * sa + rk; b: b + rk * sb + rn
    %rm = kiln.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #SB1>
    %rk0 = kiln.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #SB0>
    %rk1 = kiln.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #SB1>
    %rn = kiln.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #SB0>
    %rm2 = kiln.expand_dims %rm {axis = 1 : i32} : tensor<64xi32, #SB1> -> tensor<64x1xi32, #B>
    %sas = kiln.splat %sa : i32 -> tensor<64x1xi32, #B>
    %rows = arith.muli %rm2, %sas : tensor<64x1xi32, #B>
    %as = kiln.splat %a : !kiln.ptr<f16> -> tensor<64x1x!kiln.ptr<f16>, #B>
    %ar = kiln.addptr %as, %rows : tensor<64x1x!kiln.ptr<f16>, #B>, tensor<64x1xi32, #B>
    %rk2 = kiln.expand_dims %rk0 {axis = 0 : i32} : tensor<32xi32, #SB0> -> tensor<1x32xi32, #B>
    %arb = kiln.broadcast %ar : tensor<64x1x!kiln.ptr<f16>, #B> -> tensor<64x32x!kiln.ptr<f16>, #B>
    %rkb = kiln.broadcast %rk2 : tensor<1x32xi32, #B> -> tensor<64x32xi32, #B>
    %a0 = kiln.addptr %arb, %rkb : tensor<64x32x!kiln.ptr<f16>, #B>, tensor<64x32xi32, #B>
    %rk3 = kiln.expand_dims %rk1 {axis = 1 : i32} : tensor<32xi32, #SB1> -> tensor<32x1xi32, #B>
    %sbs = kiln.splat %sb : i32 -> tensor<32x1xi32, #B>
    %krows = arith.muli %rk3, %sbs : tensor<32x1xi32, #B>
    %bs = kiln.splat %b : !kiln.ptr<f16> -> tensor<32x1x!kiln.ptr<f16>, #B>
    %br = kiln.addptr %bs, %krows : tensor<32x1x!kiln.ptr<f16>, #B>, tensor<32x1xi32, #B>
    %rn2 = kiln.expand_dims %rn {axis = 0 : i32} : tensor<64xi32, #SB0> -> tensor<1x64xi32, #B>
    %brb = kiln.broadcast %br : tensor<32x1x!kiln.ptr<f16>, #B> -> tensor<32x64x!kiln.ptr<f16>, #B>
    %rnb = kiln.broadcast %rn2 : tensor<1x64xi32, #B> -> tensor<32x64xi32, #B>
    %b0 = kiln.addptr %brb, %rnb : tensor<32x64x!kiln.ptr<f16>, #B>, tensor<32x64xi32, #B>
    %steps = arith.divsi %K, %c32 : i32
    %r:3 = scf.for %i = %c0 to %steps step %c1 iter_args(%ap = %a0, %acc = %acc0, %bp = %b0)
        -> (tensor<64x32x!kiln.ptr<f16>, #B>, tensor<64x64xf32, #M>, tensor<32x64x!kiln.ptr<f16>, #B>) : i32 {
      %done = arith.muli %i, %c32 : i32
      %left = arith.subi %K, %done : i32
      %ls = kiln.splat %left : i32 -> tensor<1x32xi32, #B>
      %m1 = arith.cmpi slt, %rk2, %ls : tensor<1x32xi32, #B>
      %ma = kiln.broadcast %m1 : tensor<1x32xi1, #B> -> tensor<64x32xi1, #B>
      %x = kiln.load %ap, mask %ma, other %za : (tensor<64x32x!kiln.ptr<f16>, #B>, tensor<64x32xi1, #B>, tensor<64x32xf16, #B>) -> tensor<64x32xf16, #B>
      %y = kiln.load %bp : (tensor<32x64x!kiln.ptr<f16>, #B>) -> tensor<32x64xf16, #B>
      %d = kiln.dot %x, %y, %acc, tf32 : tensor<64x32xf16, #B> * tensor<32x64xf16, #B> -> tensor<64x64xf32, #M>
      %step = kiln.splat %c32 : i32 -> tensor<64x32xi32, #B>
      %an = kiln.addptr %ap, %step : tensor<64x32x!kiln.ptr<f16>, #B>, tensor<64x32xi32, #B>
      %bstep = arith.muli %sb, %c32 : i32
      %bsteps = kiln.splat %bstep : i32 -> tensor<32x64xi32, #B>
      %bn = kiln.addptr %bp, %bsteps : tensor<32x64x!kiln.ptr<f16>, #B>, tensor<32x64xi32, #B>
      scf.yield %an, %d, %bn : tensor<64x32x!kiln.ptr<f16>, #B>, tensor<64x64xf32, #M>, tensor<32x64x!kiln.ptr<f16>, #B>
    }
    return %r#1 : tensor<64x64xf32, #M>
  }

  // The loop also stores through the pointers it advances: the load stage
  // is not closed, so the loop stays as it is.
  // CHECK-LABEL: func.func @stage_used_elsewhere
  // CHECK-NOT: kiln_gpu.local_alloc
  // CHECK: kiln.dot
  func.func @stage_used_elsewhere(%a: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %K: i32) -> tensor<64x64xf32, #M> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc0 = arith.constant dense<0.0> : tensor<64x64xf32, #M>
    %r = kiln.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #SB0>
    %r2 = kiln.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #SB0> -> tensor<1x64xi32, #B>
    %rb = kiln.broadcast %r2 : tensor<1x64xi32, #B> -> tensor<64x64xi32, #B>
    %s = kiln.splat %a : !kiln.ptr<f16> -> tensor<64x64x!kiln.ptr<f16>, #B>
    %p0 = kiln.addptr %s, %rb : tensor<64x64x!kiln.ptr<f16>, #B>, tensor<64x64xi32, #B>
    %res:2 = scf.for %i = %c0 to %K step %c1 iter_args(%p = %p0, %acc = %acc0)
        -> (tensor<64x64x!kiln.ptr<f16>, #B>, tensor<64x64xf32, #M>) : i32 {
      %x = kiln.load %p : (tensor<64x64x!kiln.ptr<f16>, #B>) -> tensor<64x64xf16, #B>
      %y = kiln.load %p : (tensor<64x64x!kiln.ptr<f16>, #B>) -> tensor<64x64xf16, #B>
      %d = kiln.dot %x, %y, %acc, tf32 : tensor<64x64xf16, #B> * tensor<64x64xf16, #B> -> tensor<64x64xf32, #M>
      kiln.store %p, %x : tensor<64x64x!kiln.ptr<f16>, #B>, tensor<64x64xf16, #B>
      %n = kiln.addptr %p, %rb : tensor<64x64x!kiln.ptr<f16>, #B>, tensor<64x64xi32, #B>
      scf.yield %n, %d : tensor<64x64x!kiln.ptr<f16>, #B>, tensor<64x64xf32, #M>
    }
    return %res#1 : tensor<64x64xf32, #M>
  }
}
