# A float vector a tensor-core loop loads beside its operand tiles, which
# reaches a dot's a or b, is copied with the tiles into a ring of its own
# (kiln-pipeline-dots' widenLoopVectors): loaded as the 1 x N row of the 2-D
# layout it is a slice of (a 1-D blocked layout: its 2-D form), copied S - 1
# iterations ahead and read back where it was loaded, after the copies'
# wait and barrier. Users that read it as a vector go through a reshape of
# the row (it renames registers). A vector that only scales the carried
# accumulator, or a row of the accumulator's layout that reaches an a read
# from registers (attention backward's m, subtracted from the scores that
# become p), stays a load into registers, ahead (kiln-prefetch-loads).
# - A chunked scan's decays g: `x * exp2(g)[None, :]` (the a operand, in
#   the operand's layout) and `tl.sum(g)` (a 1-D blocked layout): two rings.
# - Attention backward's form: m subtracted from the scores (a row of the
#   accumulator's layout; p is read from registers) beside w, a column of
#   scales of the carried dk: both stay in registers.
# - sm_80's mma.sync loop too.
# RUN: %kilnc compile %s -n decayed_chunk_state -s "x_ptr=*fp16:16, b_ptr=*fp16:16, g_ptr=*fp32:16, s_ptr=*fp32:16, gsum_ptr=*fp32:16, T=i32, BN=64, BK=64, BT=64, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SCAN
# RUN: %kilnc compile %s -n decayed_chunk_state -s "x_ptr=*fp16:16, b_ptr=*fp16:16, g_ptr=*fp32:16, s_ptr=*fp32:16, gsum_ptr=*fp32:16, T=i32, BN=64, BK=64, BT=64, num_stages=3" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=SCAN
# RUN: %kilnc compile %s -n row_decayed_scores -s "q_ptr=*fp16:16, k_ptr=*fp16:16, m_ptr=*fp32:16, w_ptr=*fp32:16, dk_ptr=*fp32:16, n=i32, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ROWS
# The disabled form keeps the scan's decays in registers.
# RUN: %kilnc compile %s -n decayed_chunk_state -s "x_ptr=*fp16:16, b_ptr=*fp16:16, g_ptr=*fp32:16, s_ptr=*fp32:16, gsum_ptr=*fp32:16, T=i32, BN=64, BK=64, BT=64, num_stages=2" --arch sm_90a --emit gpu --kiln-vector-rings=false -o - | FileCheck %s --check-prefix=OFF
import triton
import triton.language as tl

# SCAN-NOT: kiln.load {{.*}} -> tensor<64xf32
# SCAN-DAG: kiln_gpu.async_copy {{.*}} : tensor<1x64x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [8, 1]
# SCAN-DAG: kiln_gpu.async_copy {{.*}} : tensor<1x64x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4]
# SCAN: scf.for
# SCAN-NOT: kiln.load {{.*}} -> tensor<64xf32
# SCAN: kiln_gpu.async_wait
# SCAN-NEXT: kiln_gpu.barrier
# SCAN-NOT: kiln.load {{.*}} -> tensor<64xf32
# SCAN: %[[SUMMED:[0-9]+]] = kiln_gpu.local_load {{.*}} -> tensor<1x64xf32, #kiln_gpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4]
# SCAN: %[[G:[0-9]+]] = kiln.reshape %[[SUMMED]] {{.*}} -> tensor<64xf32, #kiln_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
# SCAN: %[[SCALES:[0-9]+]] = kiln_gpu.local_load {{.*}} -> tensor<1x64xf32, #kiln_gpu.blocked<{sizePerThread = [8, 1]
# SCAN: %[[GS:[0-9]+]] = kiln.reshape %[[SCALES]]
# SCAN: math.exp2 %[[GS]]
# SCAN: kiln.reduce %[[G]]
# SCAN-NOT: kiln.load {{.*}} -> tensor<64xf32
# SCAN: scf.yield


@triton.jit
def decayed_chunk_state(x_ptr, b_ptr, g_ptr, s_ptr, gsum_ptr, T, BN: tl.constexpr,
                        BK: tl.constexpr, BT: tl.constexpr):
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rt = tl.arange(0, BT)
    acc = tl.zeros((BN, BK), dtype=tl.float32)
    for c in range(0, tl.cdiv(T, BT)):
        t = c * BT + rt
        live = t < T
        g = tl.load(g_ptr + t, mask=live, other=0.0)
        x = tl.load(x_ptr + t[None, :] * BN + rn[:, None], mask=live[None, :], other=0.0)
        b = tl.load(b_ptr + t[:, None] * BK + rk[None, :], mask=live[:, None], other=0.0)
        xs = (x * tl.exp2(g)[None, :]).to(tl.float16)
        acc = tl.dot(xs, b, acc)
        tl.store(gsum_ptr + c, tl.sum(g, axis=0))
    tl.store(s_ptr + rn[:, None] * BK + rk[None, :], acc)


# m and w are loaded before the loop into registers and carried; neither
# is copied.
# ROWS-NOT: kiln_gpu.local_load {{.*}}xf32
# ROWS-NOT: kiln_gpu.async_copy {{.*}}x!kiln.ptr<f32>
# ROWS: %[[M0:[0-9]+]] = kiln.load {{.*}} -> tensor<32xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma
# ROWS: %[[W0:[0-9]+]] = kiln.load {{.*}} -> tensor<64xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma
# ROWS: scf.for {{.*}}, %[[M:arg[0-9]+]] = %[[M0]], %[[W:arg[0-9]+]] = %[[W0]])
# ROWS-NOT: kiln_gpu.local_load {{.*}}xf32
# ROWS: kiln.expand_dims %[[M]]
# ROWS: kiln.expand_dims %[[W]]
# ROWS: %[[M1:[0-9]+]] = kiln.load {{.*}} -> tensor<32xf32
# ROWS: %[[W1:[0-9]+]] = kiln.load {{.*}} -> tensor<64xf32
# ROWS: scf.yield {{.*}}, %[[M1]], %[[W1]] :
# OFF-NOT: kiln_gpu.local_load {{.*}}1x64xf32
# OFF: kiln.load {{.*}} -> tensor<64xf32
# OFF: scf.for


@triton.jit
def row_decayed_scores(q_ptr, k_ptr, m_ptr, w_ptr, dk_ptr, n):
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 32):
        qT = tl.load(q_ptr + (start + rm)[None, :] * 64 + rd[:, None])
        m = tl.load(m_ptr + start + rm)
        w = tl.load(w_ptr + (start // 32) * 64 + rn)
        p = tl.exp2(tl.dot(k, qT) - m[None, :]).to(tl.float16)
        dk = dk * w[:, None] + tl.dot(p, tl.trans(qT))
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)
