# A dot's result both summed along its rows and scanned along them
# (Mamba-2's ddA_cumsum backward): the scan reads a blocked copy (the mma
# layout puts warps along the scanned axis), and the row sum reads the same
# copy where fewer warps share its axis, so the tile leaves the accumulator
# layout once an iteration. The running row sum, broadcast into the
# scanned tile, moves to the tile's layout; the tile does not move back.
# RUN: %kilnc compile %s -n scan_and_sum -s "a_ptr=*bf16:16, b_ptr=*bf16:16, out_ptr=*fp32:16, n=i32:16, BM=32, BN=32, BK=64, num_warps=4" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl

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


@triton.jit
def scan_and_sum(a_ptr, b_ptr, out_ptr, n, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    rowsum = tl.zeros((BM,), dtype=tl.float32)
    for start in range(0, n, BN):
        b = tl.load(b_ptr + rk[:, None] * n + start + rn[None, :])
        acc = tl.dot(a, b)
        mask = rm[:, None] >= start + rn[None, :]
        acc = tl.where(mask, acc, 0.0)
        rowsum_new = rowsum + tl.sum(acc, axis=1)
        acc = rowsum[:, None] + tl.cumsum(acc, axis=1)
        rowsum = rowsum_new
        tl.store(out_ptr + start + rn, tl.sum(acc, axis=0))
