// RUN: %kiln-opt --kiln-allocate-shared --allow-unregistered-dialect %s | FileCheck %s

// Buffers whose lives overlap take distinct, 1024-aligned offsets; a buffer
// defined after another's last use reuses its bytes; a loop keeps alive the
// buffers it uses to its end. Ops that take scratch arrays inside a buffer's
// life get a scratch base past the live buffers.

#B = #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#C = #kiln_gpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#S = #kiln_gpu.nvmma_shared<swizzle = 128>

// CHECK: module attributes {kiln_gpu.buffer_bytes = 17408 : i64}
module {
  // CHECK-LABEL: func.func @lives
  func.func @lives(%n: i32, %t: tensor<64x64xf16, #B>) -> tensor<64x64xf16, #C> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // CHECK: kiln_gpu.local_alloc {offset = 0 : i64} : <2x32x64xf16
    %a = kiln_gpu.local_alloc : !kiln_gpu.memdesc<2x32x64xf16, #S>
    // 100 bytes do not end on a 1024 boundary: the next buffer starts at 9216.
    // CHECK: kiln_gpu.local_alloc {offset = 8192 : i64} : <2x5x5xf16
    %b = kiln_gpu.local_alloc : !kiln_gpu.memdesc<2x5x5xf16, #S>
    // CHECK: kiln_gpu.local_alloc {offset = 9216 : i64} : <2x32x64xf16
    %c = kiln_gpu.local_alloc : !kiln_gpu.memdesc<2x32x64xf16, #S>
    scf.for %i = %c0 to %n step %c1 : i32 {
      %x = kiln_gpu.memdesc_index %a[%i] : !kiln_gpu.memdesc<2x32x64xf16, #S> -> !kiln_gpu.memdesc<32x64xf16, #S>
      %z = kiln_gpu.memdesc_index %c[%i] : !kiln_gpu.memdesc<2x32x64xf16, #S> -> !kiln_gpu.memdesc<32x64xf16, #S>
      kiln_gpu.barrier
    }
    %y = kiln_gpu.memdesc_index %b[%c0] : !kiln_gpu.memdesc<2x5x5xf16, #S> -> !kiln_gpu.memdesc<5x5xf16, #S>
    // Only %b is live here: scratch starts past it.
    // CHECK: kiln_gpu.convert_layout {{.*}} {kiln_gpu.scratch_base = 8304 : i64}
    %u = kiln_gpu.convert_layout %t : tensor<64x64xf16, #B> -> tensor<64x64xf16, #C>
    %w = kiln_gpu.memdesc_index %b[%c1] : !kiln_gpu.memdesc<2x5x5xf16, #S> -> !kiln_gpu.memdesc<5x5xf16, #S>
    // Every buffer is dead: this one reuses offset 0, and scratch after it
    // starts at 0 again.
    // CHECK: kiln_gpu.local_alloc {offset = 0 : i64} : <1x64x64xf16
    %d = kiln_gpu.local_alloc : !kiln_gpu.memdesc<1x64x64xf16, #S>
    // CHECK: kiln_gpu.convert_layout
    // CHECK-NOT: scratch_base
    // CHECK-SAME: -> tensor<64x64xf16
    %v = kiln_gpu.convert_layout %t : tensor<64x64xf16, #B> -> tensor<64x64xf16, #C>
    return %v : tensor<64x64xf16, #C>
  }

  // A transposed view reads its buffer's bytes: it keeps the buffer alive,
  // so %f, allocated before the view's use, cannot take %e's bytes.
  // CHECK-LABEL: func.func @transposed_view
  func.func @transposed_view() {
    %c0 = arith.constant 0 : i32
    // CHECK: kiln_gpu.local_alloc {offset = 0 : i64} : <1x32x64xf16
    %e = kiln_gpu.local_alloc : !kiln_gpu.memdesc<1x32x64xf16, #S>
    %x = kiln_gpu.memdesc_index %e[%c0] : !kiln_gpu.memdesc<1x32x64xf16, #S> -> !kiln_gpu.memdesc<32x64xf16, #S>
    %t = kiln_gpu.memdesc_trans %x : !kiln_gpu.memdesc<32x64xf16, #S> -> !kiln_gpu.memdesc<64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
    // CHECK: kiln_gpu.local_alloc {offset = 4096 : i64} : <1x32x64xf16
    %f = kiln_gpu.local_alloc : !kiln_gpu.memdesc<1x32x64xf16, #S>
    %y = kiln_gpu.memdesc_index %f[%c0] : !kiln_gpu.memdesc<1x32x64xf16, #S> -> !kiln_gpu.memdesc<32x64xf16, #S>
    "test.use"(%t, %y) : (!kiln_gpu.memdesc<64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>, !kiln_gpu.memdesc<32x64xf16, #S>) -> ()
    return
  }
}
