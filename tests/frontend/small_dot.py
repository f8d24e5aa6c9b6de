# tl.dot with M or N under 16 (issue 13: mamba's Mamba-3 step kernel
# multiplies a [64, 128] state by a [128, 1] query): a matrix-vector product
# small enough (at most 64 products a thread) is a product and a sum along K
# in the accumulator's type; larger ones, and thin matrices (M and N both
# over 1) of any size, go to the tensor cores: padded (PADDED, below, and
# tests/kernels/matmul/thin_dots.py), or of 8 rows as they are (SMALL);
# K under 16 stays an error
# (builtin_diagnostics.test). The kernel is the differential corpus's
# (tests/kernels/language).
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n matvec -s "a_ptr=*bf16, x_ptr=*bf16, out_ptr=*fp32, M=64, K=128" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n matvec -s "a_ptr=*i8, x_ptr=*i8, out_ptr=*i32, M=64, K=128" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=INT8
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n matvec -s "a_ptr=*bf16, x_ptr=*bf16, out_ptr=*fp32, M=64, K=128" --arch sm_80 --emit cubin -o /dev/null
# A matrix-vector product (M or N of 1) stays in the operands' rank: the
# column is laid along the rows (a row down the columns) and the products
# summed along K, in the layout of that rank (no 3-D product whose default
# layout can put every thread along K).
# CHECK-LABEL: func.func @matvec
# CHECK-NOT: kiln.dot
# CHECK: kiln.trans {{.*}}, [1, 0] : tensor<128x1xbf16> -> tensor<1x128xbf16>
# CHECK: arith.extf {{.*}} : tensor<64x128xbf16> to tensor<64x128xf32>
# CHECK: arith.mulf {{.*}} : tensor<64x128xf32>
# CHECK: kiln.reduce {{.*}} {axis = 1 : i32} : (tensor<64x128xf32>) -> tensor<64xf32>
# CHECK: kiln.expand_dims {{.*}} {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
# INT8-LABEL: func.func @matvec
# INT8-NOT: kiln.dot
# INT8: arith.muli {{.*}} : tensor<64x128xi32>
#
# A column of ones is a splat in its new shape; a row times a matrix sums
# down the columns; a batched one keeps its rank.
# RUN: %kilnc compile %S/../kernels/matmul/thin_dots.py -n vector_dots -s "x_ptr=*bf16:16, y_ptr=*bf16:16, w_ptr=*bf16:16, rows_ptr=*fp32:16, cols_ptr=*fp32:16, total_ptr=*fp32:16, M=64, K=64, N=32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=VECTOR
# VECTOR-LABEL: func.func @vector_dots
# VECTOR-NOT: kiln.dot
# VECTOR: arith.constant dense<1.000000e+00> : tensor<1x64xf32>
# VECTOR: kiln.reduce {{.*}} {axis = 1 : i32} : (tensor<64x64xf32>) -> tensor<64xf32>
# VECTOR: kiln.reduce {{.*}} {axis = 1 : i32} : (tensor<1x64xf32>) -> tensor<1xf32>
# VECTOR: kiln.trans {{.*}}, [1, 0] : tensor<1x64xbf16> -> tensor<64x1xbf16>
# VECTOR: arith.mulf {{.*}} : tensor<64x32xf32>
# VECTOR: kiln.reduce {{.*}} {axis = 0 : i32} : (tensor<64x32xf32>) -> tensor<32xf32>
# VECTOR: kiln.expand_dims {{.*}} {axis = 0 : i32} : tensor<32xf32> -> tensor<1x32xf32>
# RUN: %kilnc compile %S/../kernels/matmul/thin_dots.py -n batched_matvec -s "a_ptr=*fp16:16, x_ptr=*fp16:16, c_ptr=*fp32:16, B=4, M=16, K=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=BATCHED
# BATCHED-LABEL: func.func @batched_matvec
# BATCHED-NOT: kiln.dot
# BATCHED: kiln.trans {{.*}}, [0, 2, 1] : tensor<4x64x1xf16> -> tensor<4x1x64xf16>
# BATCHED: kiln.reduce {{.*}} {axis = 2 : i32} : (tensor<4x16x64xf32>) -> tensor<4x16xf32>
#
# RUN: %kilnc compile %S/../kernels/matmul/thin_dots.py -n thin_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=4, N=32, K=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PADDED
# PADDED-LABEL: func.func @thin_dot
# PADDED: kiln.broadcast {{.*}} : tensor<1x4x64xf16> -> tensor<4x4x64xf16>
# PADDED: kiln.reshape {{.*}} : tensor<4x4x64xf16> -> tensor<16x64xf16>
# PADDED: kiln.dot {{.*}} -> tensor<16x32xf32>
# PADDED: kiln.reshape {{.*}} : tensor<16x32xf32> -> tensor<4x4x32xf32>
# PADDED: kiln.reduce {{.*}} {axis = 0 : i32} : (tensor<4x4x32xf32>) -> tensor<4x32xf32>
# Of 8 rows, the dot stays one: its mma.sync tiles hold the rows twice
# (GPT-QModel's GGUF GEMM at 8 decode tokens: 8 x 32 by 32 x 16 on 2 warps;
# summed along K across lanes it took 320 shuffles a step, padded it copied
# a through registers into a second shared tile).
# RUN: %kilnc compile %S/../kernels/matmul/thin_dots.py -n thin_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=8, N=16, K=32, num_warps=2" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SMALL
# RUN: %kilnc compile %S/../kernels/matmul/thin_dots.py -n thin_dot -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=8, N=32, K=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SMALL
# SMALL-LABEL: func.func @thin_dot
# SMALL-NOT: kiln.reshape
# SMALL: kiln.dot {{.*}} -> tensor<8x{{16|32}}xf32>
# SMALL-NOT: kiln.reduce
