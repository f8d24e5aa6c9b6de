func.func @broadcast_non_unit(%x: tensor<16x2xf32>) {
  // expected-error @+1 {{dimension 1 of size 2 cannot broadcast to 32}}
  %b = kiln.broadcast %x : tensor<16x2xf32> -> tensor<16x32xf32>
  return
}

// -----

func.func @expand_dims_shape(%x: tensor<16xf32>) {
  // expected-error @+1 {{result shape must be the operand's with a 1 at axis 0}}
  %e = kiln.expand_dims %x {axis = 0 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<16xf32>) {
  // expected-error @+1 {{operand and result have different element counts}}
  %r = kiln.reshape %x : tensor<16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @trans_order(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{order must be a permutation of 0..1}}
  %t = kiln.trans %x, [0, 0] : tensor<16x32xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @split_size(%x: tensor<16x4xf32>) {
  // expected-error @+1 {{the minor dimension must have size 2}}
  %lo, %hi = kiln.split %x : tensor<16x4xf32> -> tensor<16xf32>
  return
}

// -----

func.func @dot_k(%a: tensor<16x32xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{K differs: a is 16x32, b is 16x16}}
  %d = kiln.dot %a, %b, %c, tf32 : tensor<16x32xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @dot_small(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>, %c: tensor<8x8xf32>) {
  // expected-error @+1 {{M must be at least 8, N and K at least 16, got M=8, N=8, K=16}}
  %d = kiln.dot %a, %b, %c, tf32 : tensor<8x16xf16> * tensor<16x8xf16> -> tensor<8x8xf32>
  return
}

// -----

func.func @dot_batched_small_k(%a: tensor<2x4x8xf16>, %b: tensor<2x8x4xf16>, %c: tensor<2x4x4xf32>) {
  // expected-error @+1 {{K must be at least 16, got M=4, N=4, K=8}}
  %d = kiln.dot %a, %b, %c, tf32 : tensor<2x4x8xf16> * tensor<2x8x4xf16> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @atomic_type(%p: !kiln.ptr<f32>, %v: f32) {
  // expected-error @+1 {{umax needs integer values}}
  %o = kiln.atomic_rmw umax acq_rel gpu %p, %v : !kiln.ptr<f32>, f32
  return
}

// -----

func.func @block_load_mask(%p: !kiln.block_ptr<tensor<16xf32>>, %m: tensor<16xi1>) {
  // expected-error @+1 {{block-pointer accesses take no mask}}
  %v = kiln.load %p, mask %m : (!kiln.block_ptr<tensor<16xf32>>, tensor<16xi1>) -> tensor<16xf32>
  return
}

// -----

func.func @block_ptr_rank(%p: !kiln.ptr<f32>, %n: i64, %o: i32) {
  // expected-error @+1 {{shape, strides, offsets and order need 2 entries each (the block's rank)}}
  %bp = kiln.make_block_ptr %p, [%n], [%n], [%o], [0] : !kiln.ptr<f32> -> !kiln.block_ptr<tensor<16x16xf32>>
  return
}

// -----

func.func @boundary_check_pointer(%p: tensor<16x!kiln.ptr<f32>>) {
  // expected-error @+1 {{boundary_check and padding need a block pointer}}
  %v = kiln.load %p boundary_check = [0] : (tensor<16x!kiln.ptr<f32>>) -> tensor<16xf32>
  return
}
