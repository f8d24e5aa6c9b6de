# A 2-D load or store whose addresses run down the tile's columns (and not
# along its rows) gets a layout with the columns fastest, vectorized along
# them, as upstream's coalescing does; the tile is converted between it and
# the layout the rest of the kernel uses. In the rows' layout each thread's
# elements were a column's stride apart: torchao's fp8 quantization wrote
# its column-major output one byte per store, a warp's stores scattered
# over as many rows.
# RUN: %kilnc compile %S/../kernels/memory/strided_access.py -n column_major_read -s "src_ptr=*fp32:16, dst_ptr=*fp32:16, M=i32, N=i32, src_stride=i32:16, dst_stride=i32:16, BM=64, BN=64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=READ
# RUN: %kilnc compile %S/../kernels/memory/strided_access.py -n column_major_write -s "src_ptr=*bf16:16, dst_ptr=*bf16:16, M=i32, N=i32, src_stride=i32:16, dst_stride=i32:16, BM=128, BN=32" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WRITE
# RUN: %kilnc compile %S/../kernels/memory/strided_access.py -n column_major_write -s "src_ptr=*bf16:16, dst_ptr=*bf16:16, M=i32:16, N=i32, src_stride=i32:16, dst_stride=i32:16, BM=128, BN=32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# Without the hint on the column stride the columns' addresses are still
# consecutive but not known aligned: one element a thread, a warp's 32
# lanes down one column (64 bytes), not 32 rows apart.
# RUN: %kilnc compile %S/../kernels/memory/strided_access.py -n column_major_write -s "src_ptr=*bf16:16, dst_ptr=*bf16:16, M=i32, N=i32, src_stride=i32:16, dst_stride=i32, BM=128, BN=32" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=UNKNOWN

# READ: kiln.load {{.*}} -> tensor<64x64xf32, #kiln_gpu.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>>
# READ: kiln_gpu.convert_layout {{.*}} -> tensor<64x64xf32, #kiln_gpu.blocked<{sizePerThread = [1, 4], {{.*}}order = [1, 0]}>>
# READ: kiln.store {{.*}} : tensor<64x64x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [1, 4], {{.*}}order = [1, 0]}>>

# WRITE: kiln.load {{.*}} -> tensor<128x32xbf16, #kiln_gpu.blocked<{sizePerThread = [1, 8], {{.*}}order = [1, 0]}>>
# WRITE: kiln_gpu.convert_layout {{.*}} -> tensor<128x32xbf16, #kiln_gpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>>
# WRITE-NEXT: kiln.store

# With M a multiple of 16 the mask is uniform down each run of 8 rows:
# one 16-byte store a thread.
# PTX: st.global.v4.b32

# UNKNOWN: kiln.store {{.*}} : tensor<128x32x!kiln.ptr<bf16>, #kiln_gpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>>
