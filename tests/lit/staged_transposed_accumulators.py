# A dot operand that is the transpose of another dot's result, cast
# (`tl.dot(tl.trans(s).to(tl.bfloat16), k)`, Mamba-3's backward dq), is
# written into its staging tile as the accumulator holds it, through the
# tile's transposed view (memdesc_trans), with no layout conversion first:
# the conversion's trip through shared memory went (the fp32 tile twice,
# and its barriers). In a pipelined loop and in straight-line code
# (kiln-stage-dots) on wgmma (sm_90a), and in a loop on mma.sync (sm_80;
# its straight-line dots stage their operands in the lowering).
# RUN: %kilnc compile %S/../kernels/matmul/transposed_accumulators.py -n in_loop -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, n=i32, BT=64, D=128, num_warps=4, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=LOOP
# RUN: %kilnc compile %S/../kernels/matmul/transposed_accumulators.py -n straight -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, BT=64, D=128, num_warps=4" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=STRAIGHT
# RUN: %kilnc compile %S/../kernels/matmul/transposed_accumulators.py -n in_loop -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, n=i32, BT=64, D=128, num_warps=4, num_stages=2" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=MMA
# RUN: %kilnc compile %S/../kernels/matmul/transposed_accumulators.py -n in_loop -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, n=i32, BT=64, D=128, num_warps=4, num_stages=2" --arch sm_80 --emit ptx -o /dev/null
# RUN: %kilnc compile %S/../kernels/matmul/transposed_accumulators.py -n in_loop -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, n=i32, BT=64, D=128, num_warps=4, num_stages=2" --arch sm_90a --emit ptx -o /dev/null
# RUN: %kilnc compile %S/../kernels/matmul/transposed_accumulators.py -n straight -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, BT=64, D=128, num_warps=4" --arch sm_90a --emit ptx -o /dev/null

# LOOP: scf.for
# LOOP-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64xf32, #kiln_gpu.mma
# LOOP: [[S:%[0-9]+]] = kiln_gpu.dot_wait
# LOOP-NOT: kiln.trans
# LOOP: [[TILE:%[0-9]+]] = kiln_gpu.memdesc_index {{.*}} -> <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# LOOP-NEXT: [[CAST:%[0-9]+]] = arith.truncf [[S]] : tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>> to tensor<64x64xbf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# LOOP-NEXT: [[VIEW:%[0-9]+]] = kiln_gpu.memdesc_trans [[TILE]] : <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>> -> <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# LOOP-NEXT: kiln_gpu.local_store [[CAST]], [[VIEW]]
# LOOP: kiln_gpu.shared_dot [[TILE]],

# MMA: scf.for
# MMA-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64xf32, #kiln_gpu.mma
# MMA: [[VIEW:%[0-9]+]] = kiln_gpu.memdesc_trans {{%[0-9]+}} : <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>> -> <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# MMA-NEXT: kiln_gpu.local_store {{%[0-9]+}}, [[VIEW]] : tensor<64x64xbf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>

# STRAIGHT-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64xf32, #kiln_gpu.mma
# STRAIGHT: [[CAST:%[0-9]+]] = arith.truncf {{.*}} : tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>> to tensor<64x64xbf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# STRAIGHT: [[VIEW:%[0-9]+]] = kiln_gpu.memdesc_trans [[TILE:%[0-9]+]] : <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>> -> <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# STRAIGHT-NEXT: kiln_gpu.local_store [[CAST]], [[VIEW]]
# STRAIGHT: kiln_gpu.shared_dot [[TILE]],
