// The verifiers of the descriptor ops (lower_tensor_descriptors.mlir).

// ERR: error: 'kiln.make_tensor_desc' op shape and strides need 2 entries each (the block's rank)
func.func @short_shape(%p: !kiln.ptr<f16>, %m: i32, %s: i64) {
  %d = kiln.make_tensor_desc %p, [%m], [%s] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  return
}

// -----

// ERR: error: 'kiln.make_tensor_desc' op the block's element type must be the base's pointee
func.func @element(%p: !kiln.ptr<f32>, %m: i32, %s: i64) {
  %d = kiln.make_tensor_desc %p, [%m], [%s] : !kiln.ptr<f32> -> !kiln.tensordesc<tensor<64xf16>>
  return
}

// -----

// ERR: error: 'kiln.descriptor_load' op needs one offset per dimension of the block (2), got 1
func.func @offsets(%p: !kiln.ptr<f16>, %m: i32, %s: i64, %o: i32) {
  %d = kiln.make_tensor_desc %p, [%m, %m], [%s, %s] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  %v = kiln.descriptor_load %d[%o] : !kiln.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
  return
}

// -----

// ERR: error: 'kiln.descriptor_store' op value type 'tensor<32x32xf16>' is not the descriptor's block type 'tensor<32x64xf16>'
func.func @store_shape(%p: !kiln.ptr<f16>, %m: i32, %s: i64, %o: i32, %v: tensor<32x32xf16>) {
  %d = kiln.make_tensor_desc %p, [%m, %m], [%s, %s] : !kiln.ptr<f16> -> !kiln.tensordesc<tensor<32x64xf16>>
  kiln.descriptor_store %d[%o, %o], %v : !kiln.tensordesc<tensor<32x64xf16>>, tensor<32x32xf16>
  return
}

// -----

// ERR: error: 'kiln.descriptor_reduce' op fadd needs floats, got 'i32'
func.func @fadd_int(%p: !kiln.ptr<i32>, %m: i32, %s: i64, %o: i32, %v: tensor<64xi32>) {
  %d = kiln.make_tensor_desc %p, [%m], [%s] : !kiln.ptr<i32> -> !kiln.tensordesc<tensor<64xi32>>
  kiln.descriptor_reduce fadd %d[%o], %v : !kiln.tensordesc<tensor<64xi32>>, tensor<64xi32>
  return
}
