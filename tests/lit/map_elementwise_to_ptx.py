# tl.map_elementwise: the function is the region of a kiln.map_elementwise
# (scalar block arguments, kiln.map_elementwise.return), copied once per
# element group a thread holds when lowered: each copy keeps its own
# branches, so an element runs only its side of an `if` and its own trip
# count of a `while`.
#
# RUN: %kilnc compile %S/../kernels/language/map_elementwise.py -n selu_kernel -s "x_ptr=*fp32:16, out_ptr=*fp32:16, n=i32:16, alpha=fp32, BLOCK=512" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=KILN
# KILN: kiln.map_elementwise %{{.*}}, %{{.*}} {pack = 1 : i32} : (tensor<512xf32>, tensor<512xf32>) -> tensor<512xf32> {
# KILN-NEXT: ^bb0(%[[X:.*]]: f32, %[[ALPHA:.*]]: f32):
# KILN: scf.if
# KILN: math.exp
# KILN: kiln.map_elementwise.return %{{.*}} : f32
#
# 512 elements, 4 warps: four per thread, four copies, each branching
# around its exp.
# RUN: %kilnc compile %S/../kernels/language/map_elementwise.py -n selu_kernel -s "x_ptr=*fp32:16, out_ptr=*fp32:16, n=i32:16, alpha=fp32, BLOCK=512" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SELU
# SELU: ld.global.v4.b32 { %[[E0:r[0-9]+]], %[[E1:r[0-9]+]], %[[E2:r[0-9]+]], %[[E3:r[0-9]+]] }
# SELU: setp.gt.f32 %[[P0:p[0-9]+]], %[[E0]], 0f00000000;
# SELU-NEXT: @%[[P0]] bra
# SELU: ex2.approx.f32
# SELU: setp.gt.f32 %[[P1:p[0-9]+]], %[[E1]], 0f00000000;
# SELU-NEXT: @%[[P1]] bra
# SELU: ex2.approx.f32
# SELU: setp.gt.f32 %[[P2:p[0-9]+]], %[[E2]], 0f00000000;
# SELU-NEXT: @%[[P2]] bra
# SELU: ex2.approx.f32
# SELU: setp.gt.f32 %[[P3:p[0-9]+]], %[[E3]], 0f00000000;
# SELU-NEXT: @%[[P3]] bra
# SELU: ex2.approx.f32
# SELU: st.global.v4.b32 [ %rd{{[0-9]+}} + 0 ], { %[[E0]], %[[E1]], %[[E2]], %[[E3]] };
#
# A while loop per element: two elements a thread, two loops.
# RUN: %kilnc compile %S/../kernels/language/map_elementwise.py -n collatz_kernel -s "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WHILE
# WHILE-COUNT-2: setp.gt.s32 {{.*}}, 1;
#
# pack=2: two elements of each argument per copy; the layout gives each
# thread a multiple of two where the shape allows.
# RUN: %kilnc compile %S/../kernels/language/map_elementwise.py -n sorted_pairs -s "a_ptr=*fp16, b_ptr=*fp16, lo_ptr=*fp16, hi_ptr=*fp16, n=i32, BLOCK=256" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=PACK
# PACK: kiln.map_elementwise {{.*}} {pack = 2 : i32} : (tensor<256xf16, #kiln_gpu.blocked<{sizePerThread = [2]
# PACK-NEXT: ^bb0(%{{.*}}: f16, %{{.*}}: f16, %{{.*}}: f16, %{{.*}}: f16):
#
# Errors.
# RUN: not %kilnc compile %S/../frontend/Inputs/map_elementwise_errors.py -n not_a_function -s "x_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=NOTFN
# NOTFN: map_elementwise_errors.py:22:62: error: tl.map_elementwise needs a @triton.jit function as its first argument, then the blocks to map it over
# RUN: not %kilnc compile %S/../frontend/Inputs/map_elementwise_errors.py -n block_result -s "x_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BLOCKRESULT
# BLOCKRESULT: error: the function given to tl.map_elementwise must return scalars, got
# RUN: not %kilnc compile %S/../frontend/Inputs/map_elementwise_errors.py -n bad_pack -s "x_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BADPACK
# BADPACK: error: tl.map_elementwise: pack must be a positive compile-time int
# RUN: not %kilnc compile %S/../frontend/Inputs/map_elementwise_errors.py -n mixed_pack -s "x_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=MIXED
# MIXED: error: the function given to tl.map_elementwise returns elements of one result in different types
# RUN: not %kilnc compile %S/../frontend/Inputs/map_elementwise_errors.py -n no_blocks -s "x_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=NOBLOCKS
# NOBLOCKS: error: tl.map_elementwise needs at least one block to map over
# RUN: not %kilnc compile %S/../frontend/Inputs/map_elementwise_errors.py -n scalars_only -s "x_ptr=*fp32, a=fp32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=SCALARS
# SCALARS: error: tl.map_elementwise maps over blocks, and every argument here is a scalar; call the function directly
#
# Fewer elements a thread than pack (128 elements over 4 warps, pack=2):
# the group runs on a copy of the thread's one element and keeps one result
# of each (upstream Triton 3.6 fails to compile this).
# RUN: %kilnc compile %S/../kernels/language/map_elementwise.py -n sorted_pairs -s "a_ptr=*fp32, b_ptr=*fp32, lo_ptr=*fp32, hi_ptr=*fp32, n=i32, BLOCK=128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SHORT
# SHORT-COUNT-1: min.f32
# SHORT-NOT: min.f32
# SHORT-COUNT-1: max.f32
# SHORT-NOT: max.f32
#
# Pointer operands: each copy loads only when its element is positive.
# RUN: %kilnc compile %S/Inputs/map_pointers.py -n guarded_gather -s "x_ptr=*fp32, table_ptr=*fp32, idx_ptr=*i32, out_ptr=*fp32, n=i32, BLOCK=256" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=POINTERS
# POINTERS: setp.leu.f32 %[[P0:p[0-9]+]], %r{{[0-9]+}}, 0f00000000;
# POINTERS-NEXT: @%[[P0]] bra $L__BB0_[[L0:[0-9]+]];
# POINTERS: ld.global.b32
# POINTERS: $L__BB0_[[L0]]:
# POINTERS: setp.leu.f32 %[[P1:p[0-9]+]], %r{{[0-9]+}}, 0f00000000;
# POINTERS-NEXT: @%[[P1]] bra $L__BB0_[[L1:[0-9]+]];
# POINTERS: ld.global.b32
# POINTERS: $L__BB0_[[L1]]:
