# A kiln.reshape that splits and merges several dimensions at once (the
# bitonic sorts libraries write with tl.reshape to [n, 2, m] and back:
# Transformer Engine's MoE permutation) gets the blocked layout that keeps
# every element in its thread: each lane and warp of the operand's layout
# holds the same bit of the row-major flat index in the result's. The
# stages below move no data between threads; they went through shared
# memory at every reshape (60 shared accesses and barriers here; TE's
# _row_id_map_pass_3_kernel 299 shared accesses and 192 barriers -> 79 and
# 28, 128 -> 40 registers).
# RUN: %kilnc compile %s -n swap_stages -s "x_ptr=*i32:16, out_ptr=*i32:16, n=i32" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n swap_stages -s "x_ptr=*i32:16, out_ptr=*i32:16, n=i32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# CHECK: kiln.reshape {{.*}} : tensor<64xi32, #kiln_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>> -> tensor<2x2x16xi32, #kiln_gpu.blocked<{sizePerThread = [1, 1, 1], threadsPerWarp = [1, 2, 16], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>>
# CHECK: kiln.reshape {{.*}} : tensor<2x2x16xi32, {{.*}} -> tensor<64xi32, #kiln_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
# CHECK: kiln.reshape {{.*}} -> tensor<4x2x8xi32, #kiln_gpu.blocked<{sizePerThread = [1, 1, 1], threadsPerWarp = [2, 2, 8], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>>
# The last stage: the pair's halves in one lane's neighbours, 16 pairs of
# rows over the warp's lanes and two warps, the other two copies.
# CHECK: kiln.reshape {{.*}} -> tensor<32x2x1xi32, #kiln_gpu.blocked<{sizePerThread = [1, 1, 1], threadsPerWarp = [16, 2, 1], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>>
# CHECK-NOT: kiln_gpu.convert_layout
# PTX-NOT: st.shared
# PTX-NOT: ld.shared
# PTX-NOT: bar.sync


@triton.jit
def swap_stages(x_ptr, out_ptr, n):
    off = tl.arange(0, 64)
    x = tl.load(x_ptr + off, mask=off < n, other=-1)
    for i in tl.static_range(1, 6):
        y = tl.reshape(x, [2**i, 2, 2 ** (5 - i)])
        right = tl.arange(0, 2)[None, :, None]
        lo = tl.sum(y * (1 - right), 1)
        hi = tl.sum(y * right, 1)
        lo = tl.reshape(tl.broadcast_to(lo[:, None, :], [2**i, 2, 2 ** (5 - i)]), [64])
        hi = tl.reshape(tl.broadcast_to(hi[:, None, :], [2**i, 2, 2 ** (5 - i)]), [64])
        x = tl.where(lo > hi, x ^ lo ^ hi, x)
    tl.store(out_ptr + off, x, mask=off < n)
