# A load outside loops of fewer elements than the kernel has threads, read
# after a matmul loop in the accumulator's layout (a per-row scale, widened
# and broadcast: `acc * a_scale.to(tl.float32)[:, None]`), or in both of its
# slices (FLA's `b_g[:, None] - b_g[None, :]`), is loaded in each layout it
# is read in (L1 serves the replicas): no conversion of it through shared
# memory, with its two barriers, in the epilogue. A load of as many
# elements as threads (b_scale, 256 of them, 8 warps) is left to the
# conversion, from a layout that gives each thread one element (the rank's
# layout would put 32 threads on its unit dimension, each loading, widening
# and storing all 32 of its copies).
# RUN: %kilnc compile %s -n row_scaled -s "*fp8e4nv:16, *fp8e4nv:16, *bf16:16, *bf16:16, *bf16:16, i32:16, 128, 256, 64" -w 8 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ROW
# RUN: %kilnc compile %s -n decayed_after_loop -s "*bf16:16, *fp32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=DECAY
# RUN: %kilnc compile %s -n decayed_after_loop -s "*bf16:16, *fp32:16, *fp32:16, i32:16" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=DECAY
import triton
import triton.language as tl

# ROW: kiln.load %{{.*}} -> tensor<128x1xbf16, #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>>
# ROW: scf.for
# ROW-NOT: kiln_gpu.convert_layout {{.*}} : tensor<128x1x
# ROW: kiln_gpu.convert_layout {{.*}} : tensor<1x256xf32, #kiln_gpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 8], order = [1, 0]}>> -> tensor<1x256xf32, #kiln_gpu.mma
# ROW-NOT: kiln_gpu.convert_layout {{.*}} : tensor<128x1x


@triton.jit
def row_scaled(a, b, c, a_scale, b_scale, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    s_a = tl.load(a_scale + rm[:, None])
    s_b = tl.load(b_scale + rn[None, :])
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] + rn[None, :] * K)
        acc = tl.dot(x, y, acc)
    acc = acc * s_a.to(tl.float32) * s_b.to(tl.float32)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.bfloat16))


# DECAY: scf.for
# DECAY-DAG: kiln.load %{{.*}} -> tensor<64xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma
# DECAY-DAG: kiln.load %{{.*}} -> tensor<64xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma
# DECAY-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64xf32
# DECAY: kiln.store


@triton.jit
def decayed_after_loop(k, g, out, K):
    r = tl.arange(0, 64)
    acc = tl.zeros([64, 64], dtype=tl.float32)
    for i in range(0, K, 64):
        x = tl.load(k + r[:, None] * K + (i + r)[None, :])
        acc += tl.dot(x, tl.trans(x))
    b_g = tl.load(g + r)
    acc *= tl.exp2(b_g[:, None] - b_g[None, :])
    tl.store(out + r[:, None] * 64 + r[None, :], acc)
