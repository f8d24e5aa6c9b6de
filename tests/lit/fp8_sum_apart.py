# fp8 `acc += tl.dot(a, b)` stays a dot from zero and an fp32 add. With a
# 128 x 256 accumulator over 8 warps (128 registers a thread), the dot and
# the add become one shared_dot that adds c after its product
# (kiln-sum-dots-apart), and its wgmma lowering runs 128 columns at a time:
# each slice's chain from zero (scale-d 0 first), committed and waited for,
# then added to the accumulator, so the product never takes a second whole
# tile of registers (it took 256 live registers and spilled around every
# wgmma before).
# RUN: %kilnc compile %S/../kernels/matmul/fp8_sum_apart.py -n fp8_matmul_sum_apart -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*bf16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=64, num_warps=8, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %S/../kernels/matmul/fp8_sum_apart.py -n fp8_matmul_sum_apart -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*bf16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=64, num_warps=8, num_stages=3" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# A 64 x 128 accumulator over 4 warps (64 registers) keeps its dot in flight.
# RUN: %kilnc compile %S/../kernels/matmul/fp8_sum_apart.py -n fp8_matmul_sum_apart -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*bf16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=64, BN=128, BK=64, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SMALL
# max_num_imprecise_acc=32 over K 128 (FBGEMM's fast-accumulation GEMM):
# each 32 of K summed from zero and added to the fp32 accumulator, as
# upstream does; several sums a slice, so 64 columns a slice: 4 slices of 4
# partial sums each, 16 single wgmmas (the previous compiler ignored the
# bound and accumulated all of K in the tensor cores).
# RUN: %kilnc compile %S/../kernels/matmul/fp8_sum_apart.py -n fp8_matmul_bounded_imprecise -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*fp32:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=128, MOST=32, num_warps=8, num_stages=3" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=BOUNDED
# (The kernels are the corpus's: tests/kernels/matmul/fp8_sum_apart.py.)

# BOUNDED: wgmma.fence.sync.aligned;
# BOUNDED: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
# BOUNDED-NOT: wgmma.mma_async
# BOUNDED: wgmma.commit_group.sync.aligned;
# BOUNDED-NOT: wgmma.mma_async
# BOUNDED: wgmma.wait_group.sync.aligned 0;
# BOUNDED-COUNT-32: add.f32
# BOUNDED: wgmma.fence.sync.aligned;
# BOUNDED-COUNT-15: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
# BOUNDED-NOT: wgmma.mma_async

# GPU: scf.for
# GPU-NOT: kiln_gpu.dot_wait
# GPU: kiln_gpu.shared_dot %{{.*}}, %{{.*}}, %[[ACC:.*]] {add_c_after}
# GPU-NOT: kiln_gpu.dot_wait
# GPU-NOT: arith.addf
# GPU: scf.yield

# PTX: wgmma.fence.sync.aligned;
# PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
# PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
# PTX: wgmma.commit_group.sync.aligned;
# PTX: wgmma.wait_group.sync.aligned 0;
# PTX-COUNT-64: add.f32
# PTX: wgmma.fence.sync.aligned;
# PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
# PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
# PTX: wgmma.commit_group.sync.aligned;
# PTX: wgmma.wait_group.sync.aligned 0;
# PTX-COUNT-64: add.f32
# PTX-NOT: wgmma.mma_async

# SMALL: kiln_gpu.shared_dot {{.*}} {async}
# SMALL-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# SMALL-NEXT: arith.addf
