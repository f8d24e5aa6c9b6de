# A dot too small for the layout of the kernel's largest dot takes a layout
# of its own. modded-nanogpt's windowed attention backward computes 16 x 128
# scores (q @ kᵀ) beside a 128 x 128 dot (pᵀ @ do) at 8 warps; in the large
# dot's layout, all warps along M, every warp computed and held the whole
# 16 x 128 tile (64 registers a thread a tile, six tiles live: 13 KB of
# spills, 0.14 of Triton). Now the scores' warps go along N, 8 registers a
# thread a tile, while the 128 x 128 dot keeps its wgmma layout; on plain
# sm_90 (mma.sync for both) the same holds.
# RUN: %kilnc compile %s -n scores_and_grad -s "q_ptr=*bf16:16, k_ptr=*bf16:16, do_ptr=*bf16:16, s_ptr=*fp32:16, dv_ptr=*fp32:16, num_warps=8" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n scores_and_grad -s "q_ptr=*bf16:16, k_ptr=*bf16:16, do_ptr=*bf16:16, s_ptr=*fp32:16, dv_ptr=*fp32:16, num_warps=8" --arch sm_90 --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl


# CHECK: kiln_gpu.shared_dot {{.*}} -> tensor<16x128xf32, #kiln_gpu.mma<{warpsPerCTA = [1, 8]}>>
# CHECK: kiln_gpu.shared_dot {{.*}} -> tensor<128x128xf32, #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>>
# CHECK-NOT: tensor<16x128xf32, #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>>
@triton.jit
def scores_and_grad(q_ptr, k_ptr, do_ptr, s_ptr, dv_ptr):
    m = tl.arange(0, 16)
    n = tl.arange(0, 128)
    q = tl.load(q_ptr + m[:, None] * 128 + n[None, :])
    k = tl.load(k_ptr + n[:, None] * 128 + n[None, :])
    s = tl.dot(q, tl.trans(k))
    p = tl.exp2(s - tl.max(s, 1)[:, None])
    tl.store(s_ptr + m[:, None] * 128 + n[None, :], p)
    do = tl.load(do_ptr + m[:, None] * 128 + n[None, :])
    dv = tl.dot(tl.trans(p.to(tl.bfloat16)), do)
    tl.store(dv_ptr + n[:, None] * 128 + n[None, :], dv)
