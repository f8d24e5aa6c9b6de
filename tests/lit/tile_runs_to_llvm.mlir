// RUN: %kiln-opt --kiln-to-llvm --reconcile-unrealized-casts %s | FileCheck %s

// A packed weight's 64 x 128 words where rows 8k..8k+7 share one address
// (kiln_gpu.runs = 8 down the rows) live in an 8 x 128 tile: one row of
// words per run. Copied from the default row layout, whose lanes 8 and 16
// and warp 1 hold rows of the same run, only the threads with those bits
// clear copy (tid & 56 == 0), each its 16 chunks of 16 bytes, predicated;
// read back in a layout holding whole runs (8 rows x 4 words a thread),
// each thread reads one 16-byte chunk per run, not eight.
#rows = #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#runs = #kiln_gpu.blocked<{sizePerThread = [8, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #kiln_gpu.nvmma_shared<swizzle = 128>
module attributes {kiln_gpu.num_warps = 4 : i32, kiln_gpu.threads_per_warp = 32 : i32, kiln_gpu.target = "sm_90a"} {
  // CHECK-LABEL: llvm.func @runs
  // (Compilers order the creation of an op's operands differently: only
  // the uses are pinned.)
  // CHECK: %[[MASK:.*]] = llvm.mlir.constant(56 : i32)
  // CHECK: %[[COPIES:.*]] = llvm.and %{{.*}}, %[[MASK]] : i32
  // CHECK: %[[OWNER:.*]] = llvm.icmp "eq" %[[COPIES]]
  // CHECK: %[[BIT:.*]] = llvm.zext %[[OWNER]] : i1 to i32
  // CHECK-COUNT-16: @p cp.async.cg.shared.global [ $0 ], [ $1 ], 16, $2; }", "r,l,r,r" {{.*}}, %[[BIT]] :
  // CHECK-NOT: cp.async.cg
  // CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xi32>
  // CHECK-NOT: llvm.load
  // CHECK: llvm.return
  func.func @runs(%b: !kiln.ptr<i32>, %n: i32) -> tensor<64x128xi32, #runs> {
    %tile = kiln_gpu.local_alloc {offset = 0 : i64} : <8x128xi32, #shared>
    %rk = kiln.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32, #kiln_gpu.slice<{dim = 1, parent = #rows}>>
    %c8 = arith.constant dense<8> : tensor<64xi32, #kiln_gpu.slice<{dim = 1, parent = #rows}>>
    %word = arith.divsi %rk, %c8 : tensor<64xi32, #kiln_gpu.slice<{dim = 1, parent = #rows}>>
    %w2 = kiln.expand_dims %word {axis = 1 : i32} : tensor<64xi32, #kiln_gpu.slice<{dim = 1, parent = #rows}>> -> tensor<64x1xi32, #rows>
    %ns = kiln.splat %n : i32 -> tensor<64x1xi32, #rows>
    %wrow = arith.muli %w2, %ns : tensor<64x1xi32, #rows>
    %wb = kiln.broadcast %wrow : tensor<64x1xi32, #rows> -> tensor<64x128xi32, #rows>
    %rn = kiln.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32, #kiln_gpu.slice<{dim = 0, parent = #rows}>>
    %n2 = kiln.expand_dims %rn {axis = 0 : i32} : tensor<128xi32, #kiln_gpu.slice<{dim = 0, parent = #rows}>> -> tensor<1x128xi32, #rows>
    %nb = kiln.broadcast %n2 : tensor<1x128xi32, #rows> -> tensor<64x128xi32, #rows>
    %off = arith.addi %wb, %nb : tensor<64x128xi32, #rows>
    %base = kiln.splat %b : !kiln.ptr<i32> -> tensor<64x128x!kiln.ptr<i32>, #rows>
    %ptrs = kiln.addptr %base, %off : tensor<64x128x!kiln.ptr<i32>, #rows>, tensor<64x128xi32, #rows>
    kiln_gpu.async_copy %ptrs, %tile {kiln_gpu.runs = array<i32: 8, 1>, kiln_gpu.vec = 4 : i32} : tensor<64x128x!kiln.ptr<i32>, #rows>, <8x128xi32, #shared>
    kiln_gpu.async_commit_group
    kiln_gpu.async_wait {pending = 0 : i32}
    kiln_gpu.barrier
    %v = kiln_gpu.local_load %tile {kiln_gpu.runs = array<i32: 8, 1>} : <8x128xi32, #shared> -> tensor<64x128xi32, #runs>
    return %v : tensor<64x128xi32, #runs>
  }
}
