func.func @range_size() {
  // expected-error @+1 {{result has 64 elements, range has 128}}
  %r = kiln.make_range {start = 0 : i32, end = 128 : i32} : tensor<64xi32>
  return
}

// -----

func.func @load_type(%p: tensor<8x!kiln.ptr<f32>>) {
  // expected-error @+1 {{value type 'tensor<8xf16>' does not match pointee type 'f32'}}
  %v = kiln.load %p : (tensor<8x!kiln.ptr<f32>>) -> tensor<8xf16>
  return
}

// -----

func.func @other_without_mask(%p: tensor<8x!kiln.ptr<f32>>, %o: tensor<8xf32>) {
  // expected-error @+1 {{`other` needs a mask}}
  %v = "kiln.load"(%p, %o) <{operandSegmentSizes = array<i32: 1, 0, 1, 0, 0>}> : (tensor<8x!kiln.ptr<f32>>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// expected-error @+1 {{blocked layout sizes must be powers of two}}
func.func @bad_layout(%t: tensor<8xf32, #kiln_gpu.blocked<{sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>) {
  return
}
