// RUN: %kiln-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// The wgmma accumulator with warpgroups along N prints its instrN (the
// columns each warpgroup's instruction computes); without it, nothing more
// than the mma.sync layout's warps.

// CHECK: tensor<64x256xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 128}>>
// CHECK: tensor<64x256xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2]}>>
func.func @split_n(%a: tensor<64x256xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 128}>>,
                   %b: tensor<64x256xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2]}>>) {
  return
}

// -----

// Warpgroups are four warps along M.
// expected-error @below {{an mma layout with instrN (warpgroups along N) is 2-D, has a multiple of 4 warps along M}}
func.func @two_warps_along_m(%a: tensor<32x256xf32, #kiln_gpu.mma<{warpsPerCTA = [2, 4], instrN = 64}>>) {
  return
}

// -----

// expected-error @below {{a power of two of at least 8 columns a warpgroup}}
func.func @four_columns(%a: tensor<64x8xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 4}>>) {
  return
}
