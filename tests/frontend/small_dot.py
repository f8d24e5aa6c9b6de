# tl.dot with M or N under 16 (issue 13: mamba's Mamba-3 step kernel
# multiplies a [64, 128] state by a [128, 1] query): small enough (at most
# 64 products a thread), a product and a sum along K in the accumulator's
# type; larger ones go to the tensor cores padded (PADDED, below, and
# tests/kernels/matmul/thin_dots.py); K under 16 stays an error
# (builtin_diagnostics.test). The kernel is the differential corpus's
# (tests/kernels/language).
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
#
# RUN: %kilnc compile %S/../kernels/matmul/thin_dots.py -n thin_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=8, N=32, K=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PADDED
# PADDED-LABEL: func.func @thin_dot
# PADDED: kiln.broadcast {{.*}} : tensor<1x8x64xf16> -> tensor<2x8x64xf16>
# PADDED: kiln.reshape {{.*}} : tensor<2x8x64xf16> -> tensor<16x64xf16>
# PADDED: kiln.dot {{.*}} -> tensor<16x32xf32>
# PADDED: kiln.reshape {{.*}} : tensor<16x32xf32> -> tensor<2x8x32xf32>
# PADDED: kiln.reduce {{.*}} {axis = 0 : i32} : (tensor<2x8x32xf32>) -> tensor<8x32xf32>
