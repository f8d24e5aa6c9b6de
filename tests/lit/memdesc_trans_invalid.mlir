// RUN: %kiln-opt %s --split-input-file --verify-diagnostics

// A transposed view swaps the tile's shape and flips `transposed`; anything
// else is not the same bytes.

#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @shape_not_swapped(%x: !kiln_gpu.memdesc<32x64xf16, #S>) {
  // expected-error @below {{the result must be '!kiln_gpu.memdesc<64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>'}}
  %t = kiln_gpu.memdesc_trans %x : !kiln_gpu.memdesc<32x64xf16, #S> -> !kiln_gpu.memdesc<32x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
  return
}

// -----

#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @flag_not_flipped(%x: !kiln_gpu.memdesc<32x64xf16, #S>) {
  // expected-error @below {{the result must be}}
  %t = kiln_gpu.memdesc_trans %x : !kiln_gpu.memdesc<32x64xf16, #S> -> !kiln_gpu.memdesc<64x32xf16, #S>
  return
}

// -----

#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @ring(%x: !kiln_gpu.memdesc<2x32x64xf16, #S>) {
  // expected-error @below {{transposes one nvmma_shared tile}}
  %t = kiln_gpu.memdesc_trans %x : !kiln_gpu.memdesc<2x32x64xf16, #S> -> !kiln_gpu.memdesc<2x64x32xf16, #S>
  return
}
