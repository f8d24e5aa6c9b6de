// RUN: %kiln-opt --kiln-assign-layouts="num-warps=4" %s | FileCheck %s

// Layouts of a tensor-core matmul (tests/lit/pipeline_dots_to_ptx.py's mm_bt,
// 128x64x32, b transposed) on sm_90a: the accumulator chain (the zeros it
// starts from, the loop-carried value, the dot) in the mma layout with all
// four warps along M (one warpgroup, wgmma's fragment); a's tile in the
// coalesced row-major blocked layout (16-byte chunks along K); b's tile, whose
// addresses run down its columns, in a column-major blocked layout decided
// backwards from its load (chunks along K, dimension 0), through the loop
// that advances its pointers. The loop carries no conversion.

// CHECK: arith.constant dense<0.000000e+00> : tensor<128x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
// CHECK: scf.for {{.*}} -> (tensor<128x32x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>>, tensor<128x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>, tensor<32x64x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>>)
// CHECK-NOT: convert_layout
// CHECK: kiln.load {{.*}} -> tensor<128x32xf16, #kiln_gpu.blocked<{sizePerThread = [1, 8]
// CHECK-NOT: convert_layout
// CHECK: kiln.load {{.*}} -> tensor<32x64xf16, #kiln_gpu.blocked<{sizePerThread = [8, 1]
// CHECK-NOT: convert_layout
// CHECK: kiln.dot {{.*}} -> tensor<128x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
// CHECK-NOT: convert_layout
// CHECK: scf.yield
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @mm_bt(%arg0: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %arg1: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %arg2: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %arg3: i32 {kiln.divisibility = 16 : i32}, %arg4: i32 {kiln.divisibility = 16 : i32}, %arg5: i32 {kiln.divisibility = 16 : i32}, %arg6: i32 {kiln.divisibility = 16 : i32}, %arg7: i32 {kiln.divisibility = 16 : i32}, %arg8: i32 {kiln.divisibility = 16 : i32}) {
    %c31_i32 = arith.constant 31 : i32
    %c63_i32 = arith.constant 63 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<128x32xf16>
    %c0_i32 = arith.constant 0 : i32
    %c32_i32 = arith.constant 32 : i32
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
    %c128_i32 = arith.constant 128 : i32
    %c1_i32 = arith.constant 1 : i32
    %c64_i32 = arith.constant 64 : i32
    %0 = kiln.program_id 0 : i32
    %1 = arith.addi %arg4, %c63_i32 : i32
    %2 = arith.divsi %1, %c64_i32 : i32
    %3 = arith.divsi %0, %2 : i32
    %4 = arith.muli %3, %c128_i32 : i32
    %5 = kiln.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %6 = kiln.splat %4 : i32 -> tensor<128xi32>
    %7 = arith.addi %6, %5 : tensor<128xi32>
    %8 = kiln.splat %arg3 : i32 -> tensor<128xi32>
    %9 = arith.remsi %7, %8 : tensor<128xi32>
    %10 = arith.remsi %0, %2 : i32
    %11 = arith.muli %10, %c64_i32 : i32
    %12 = kiln.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %13 = kiln.splat %11 : i32 -> tensor<64xi32>
    %14 = arith.addi %13, %12 : tensor<64xi32>
    %15 = kiln.splat %arg4 : i32 -> tensor<64xi32>
    %16 = arith.remsi %14, %15 : tensor<64xi32>
    %17 = kiln.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %18 = kiln.expand_dims %9 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    %19 = kiln.splat %arg6 : i32 -> tensor<128x1xi32>
    %20 = arith.muli %18, %19 : tensor<128x1xi32>
    %21 = kiln.splat %arg0 : !kiln.ptr<f16> -> tensor<128x1x!kiln.ptr<f16>>
    %22 = kiln.addptr %21, %20 : tensor<128x1x!kiln.ptr<f16>>, tensor<128x1xi32>
    %23 = kiln.expand_dims %17 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %24 = kiln.broadcast %22 : tensor<128x1x!kiln.ptr<f16>> -> tensor<128x32x!kiln.ptr<f16>>
    %25 = kiln.broadcast %23 : tensor<1x32xi32> -> tensor<128x32xi32>
    %26 = kiln.addptr %24, %25 : tensor<128x32x!kiln.ptr<f16>>, tensor<128x32xi32>
    %27 = kiln.expand_dims %17 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %28 = kiln.splat %arg1 : !kiln.ptr<f16> -> tensor<32x1x!kiln.ptr<f16>>
    %29 = kiln.addptr %28, %27 : tensor<32x1x!kiln.ptr<f16>>, tensor<32x1xi32>
    %30 = kiln.expand_dims %16 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %31 = kiln.splat %arg7 : i32 -> tensor<1x64xi32>
    %32 = arith.muli %30, %31 : tensor<1x64xi32>
    %33 = kiln.broadcast %29 : tensor<32x1x!kiln.ptr<f16>> -> tensor<32x64x!kiln.ptr<f16>>
    %34 = kiln.broadcast %32 : tensor<1x64xi32> -> tensor<32x64xi32>
    %35 = kiln.addptr %33, %34 : tensor<32x64x!kiln.ptr<f16>>, tensor<32x64xi32>
    %36 = arith.addi %arg5, %c31_i32 : i32
    %37 = arith.divsi %36, %c32_i32 : i32
    %38:3 = scf.for %arg9 = %c0_i32 to %37 step %c1_i32 iter_args(%arg10 = %26, %arg11 = %cst_1, %arg12 = %35) -> (tensor<128x32x!kiln.ptr<f16>>, tensor<128x64xf32>, tensor<32x64x!kiln.ptr<f16>>)  : i32 {
      %56 = arith.muli %arg9, %c32_i32 : i32
      %57 = arith.subi %arg5, %56 : i32
      %58 = kiln.splat %57 : i32 -> tensor<1x32xi32>
      %59 = arith.cmpi slt, %23, %58 : tensor<1x32xi32>
      %60 = kiln.broadcast %59 : tensor<1x32xi1> -> tensor<128x32xi1>
      %61 = kiln.load %arg10, mask %60, other %cst_0 : (tensor<128x32x!kiln.ptr<f16>>, tensor<128x32xi1>, tensor<128x32xf16>) -> tensor<128x32xf16>
      %62 = kiln.splat %57 : i32 -> tensor<32x1xi32>
      %63 = arith.cmpi slt, %27, %62 : tensor<32x1xi32>
      %64 = kiln.broadcast %63 : tensor<32x1xi1> -> tensor<32x64xi1>
      %65 = kiln.load %arg12, mask %64, other %cst : (tensor<32x64x!kiln.ptr<f16>>, tensor<32x64xi1>, tensor<32x64xf16>) -> tensor<32x64xf16>
      %66 = kiln.dot %61, %65, %arg11, tf32 : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
      %67 = kiln.splat %c32_i32 : i32 -> tensor<128x32xi32>
      %68 = kiln.addptr %arg10, %67 : tensor<128x32x!kiln.ptr<f16>>, tensor<128x32xi32>
      %69 = kiln.splat %c32_i32 : i32 -> tensor<32x64xi32>
      %70 = kiln.addptr %arg12, %69 : tensor<32x64x!kiln.ptr<f16>>, tensor<32x64xi32>
      scf.yield %68, %66, %70 : tensor<128x32x!kiln.ptr<f16>>, tensor<128x64xf32>, tensor<32x64x!kiln.ptr<f16>>
    }
    %39 = kiln.expand_dims %7 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    %40 = kiln.splat %arg8 : i32 -> tensor<128x1xi32>
    %41 = arith.muli %39, %40 : tensor<128x1xi32>
    %42 = kiln.splat %arg2 : !kiln.ptr<f16> -> tensor<128x1x!kiln.ptr<f16>>
    %43 = kiln.addptr %42, %41 : tensor<128x1x!kiln.ptr<f16>>, tensor<128x1xi32>
    %44 = kiln.expand_dims %14 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %45 = kiln.broadcast %43 : tensor<128x1x!kiln.ptr<f16>> -> tensor<128x64x!kiln.ptr<f16>>
    %46 = kiln.broadcast %44 : tensor<1x64xi32> -> tensor<128x64xi32>
    %47 = kiln.addptr %45, %46 : tensor<128x64x!kiln.ptr<f16>>, tensor<128x64xi32>
    %48 = arith.truncf %38#1 : tensor<128x64xf32> to tensor<128x64xf16>
    %49 = kiln.splat %arg3 : i32 -> tensor<128x1xi32>
    %50 = arith.cmpi slt, %39, %49 : tensor<128x1xi32>
    %51 = kiln.splat %arg4 : i32 -> tensor<1x64xi32>
    %52 = arith.cmpi slt, %44, %51 : tensor<1x64xi32>
    %53 = kiln.broadcast %50 : tensor<128x1xi1> -> tensor<128x64xi1>
    %54 = kiln.broadcast %52 : tensor<1x64xi1> -> tensor<128x64xi1>
    %55 = arith.andi %53, %54 : tensor<128x64xi1>
    kiln.store %47, %48, mask %55 : tensor<128x64x!kiln.ptr<f16>>, tensor<128x64xf16>, tensor<128x64xi1>
    return
  }
}
