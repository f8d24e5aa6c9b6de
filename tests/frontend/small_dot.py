# tl.dot with M or N under 16 (issue 13: mamba's Mamba-3 step kernel
# multiplies a [64, 128] state by a [128, 1] query): a product and a sum
# along K in the accumulator's type, as upstream accepts (it pads for the
# tensor cores); K under 16 stays an error (builtin_diagnostics.test). The
# kernel is the differential corpus's (tests/kernels/language).
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n matvec -s "a_ptr=*bf16, x_ptr=*bf16, out_ptr=*fp32, M=64, K=128" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n matvec -s "a_ptr=*i8, x_ptr=*i8, out_ptr=*i32, M=64, K=128" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=INT8
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n matvec -s "a_ptr=*bf16, x_ptr=*bf16, out_ptr=*fp32, M=64, K=128" --arch sm_80 --emit cubin -o /dev/null
# CHECK-LABEL: func.func @matvec
# CHECK-NOT: kiln.dot
# CHECK: arith.extf {{.*}} : tensor<64x128xbf16> to tensor<64x128xf32>
# CHECK: arith.mulf {{.*}} : tensor<64x128x1xf32>
# CHECK: kiln.reduce {{.*}} {axis = 1 : i32} : (tensor<64x128x1xf32>) -> tensor<64x1xf32>
# INT8-LABEL: func.func @matvec
# INT8-NOT: kiln.dot
# INT8: arith.muli {{.*}} : tensor<64x128x1xi32>
