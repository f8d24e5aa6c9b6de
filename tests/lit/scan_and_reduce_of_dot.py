# A dot's result both summed along its rows and scanned along them
# (Mamba-2's ddA_cumsum backward): the scan reads a blocked copy (the mma
# layout puts warps along the scanned axis), and the row sum reads the same
# copy where fewer warps share its axis, so the tile leaves the accumulator
# layout once an iteration. The running row sum, broadcast into the
# scanned tile, moves to the tile's layout; the tile does not move back.
# RUN: %kilnc compile %S/../kernels/reductions/scans.py -n scan_of_dot -s "a_ptr=*bf16:16, b_ptr=*bf16:16, out_ptr=*fp32:16, n=i32:16, BM=32, BN=32, BK=64, num_warps=4" --arch sm_90a --emit gpu -o - | FileCheck %s
# (The kernel is the corpus's: tests/kernels/reductions/scans.py.)

# CHECK: scf.for
# CHECK: kiln_gpu.shared_dot
# CHECK: kiln_gpu.convert_layout {{.*}} : tensor<32x32xf32, #kiln_gpu.mma<{{.*}}>> -> tensor<32x32xf32, #kiln_gpu.blocked
# CHECK-NOT: tensor<32x32xf32, #kiln_gpu.mma
# CHECK: kiln.reduce {{.*}} {axis = 1 : i32{{.*}}} : (tensor<32x32xf32, #kiln_gpu.blocked
# CHECK-NOT: tensor<32x32xf32, #kiln_gpu.mma
# CHECK: kiln.scan {{.*}} : (tensor<32x32xf32, #kiln_gpu.blocked
# CHECK-NOT: tensor<32x32xf32, #kiln_gpu.mma
# CHECK: kiln.reduce {{.*}} {axis = 0 : i32{{.*}}} : (tensor<32x32xf32, #kiln_gpu.blocked
# CHECK: scf.yield

