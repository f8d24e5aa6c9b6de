// RUN: %kiln-opt %s --split-input-file --verify-diagnostics
// kiln.extract: the piece tiles its operand (compiler/ir/KilnShapeOps.td).

func.func @misaligned(%x: tensor<64x128xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{offset 32 of dimension 1 must be a multiple of the result's size there (64)}}
  %0 = kiln.extract %x [0, 32] : tensor<64x128xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @outside(%x: tensor<64x128xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{offset 128 of dimension 1 must be a multiple of the result's size there (64) and leave the piece inside the operand (128)}}
  %0 = kiln.extract %x [0, 128] : tensor<64x128xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @rank(%x: tensor<64x128xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{operand, result and offsets must have one rank}}
  %0 = kiln.extract %x [0, 0] : tensor<64x128xf32> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
