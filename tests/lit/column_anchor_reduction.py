# A kernel whose largest access runs down its columns lays its 2-D tensors
# out columns-first, as that access wants, and the column vector beside it
# takes the same layout: scattermoe's decode GEMV sums x * w down K-
# contiguous weight tiles. In the rows' layout of the [128, 1] x, each
# weight tile was converted through 32 KiB of shared memory and summed
# across lanes and warps (255 registers, 988 bytes spilled; 104 and none
# now, as Triton's 128).
# RUN: %kilnc compile %s -n gemv_down_columns -s "x_ptr=*bf16:16, w_ptr=*bf16:16, y_ptr=*bf16:16, stride_wn=i32:16, K=4096, BLOCK_N=128, BLOCK_K=128" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl


# CHECK: module attributes {kiln_gpu.buffer_bytes = 0 : i64
# CHECK: scf.for
# CHECK: kiln.load {{.*}} -> tensor<128x1xbf16, #kiln_gpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>>
# CHECK: kiln.load {{.*}} -> tensor<128x128xbf16, #kiln_gpu.blocked<{sizePerThread = [8, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>>
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln.reduce {{.*}}axis = 0
# CHECK: scf.yield
@triton.jit
def gemv_down_columns(x_ptr, w_ptr, y_ptr, stride_wn, K: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rk = tl.arange(0, BLOCK_K)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    x_ptrs = x_ptr + rk[:, None]
    w_ptrs = w_ptr + rk[:, None] + rn[None, :] * stride_wn
    acc = tl.zeros((1, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K // BLOCK_K):
        acc += tl.sum(tl.load(x_ptrs) * tl.load(w_ptrs), axis=0)[None, :]
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    tl.store(y_ptr + rn[None, :], acc)
