// A kernel whose tensor has 3 elements: kiln-assign-layouts rejects it.
module {
  func.func @three(%p: !kiln.ptr<f32>) {
    %r = kiln.make_range {end = 3 : i32, start = 0 : i32} : tensor<3xi32>
    %f = arith.sitofp %r : tensor<3xi32> to tensor<3xf32>
    %ps = kiln.splat %p : !kiln.ptr<f32> -> tensor<3x!kiln.ptr<f32>>
    %a = kiln.addptr %ps, %r : tensor<3x!kiln.ptr<f32>>, tensor<3xi32>
    kiln.store %a, %f : tensor<3x!kiln.ptr<f32>>, tensor<3xf32>
    return
  }
}
