# A flat persistent GEMM (FBGEMM's fp8 row-wise GEMMs' form): its row and
# column offsets are loop-carried and computed again in an `if` at a tile's
# first step, and its accumulator is stored and zeroed in an `if` at the
# tile's last step.
# - kiln-assign-layouts carries the offsets in the layouts the copies read
#   them in (the if's results, the loop's arguments and what starts them,
#   retyped together): no iteration converts them. They had been converted
#   from a 1-D layout every k step, through shared memory (4 barriers).
# - kiln-pipeline-dots moves the zeroing to the next tile's first step: the
#   dot there does not add its accumulator (use_c), its wgmma stays in
#   flight across iterations (pending 1), and the epilogue waits for it.
# RUN: %kilnc compile %S/../kernels/matmul/persistent_reset_after.py -n flat_persistent_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, GROUP=8, NUM_SMS=3, num_warps=8" --arch sm_90a --emit gpu -o - | FileCheck %s
# (The kernel is the corpus's: tests/kernels/matmul/persistent_reset_after.py.)

# CHECK: scf.for
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln_gpu.shared_dot {{.*}} use_c
# CHECK-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 1 : i32}
# CHECK: scf.if
# CHECK-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# CHECK: scf.yield
