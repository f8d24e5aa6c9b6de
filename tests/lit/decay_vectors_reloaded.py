# A small vector loaded in a loop with a dot and read in two layouts, as
# a gated state's per-channel decay is (GLA's chunk_h: `h *= exp2(g_last)[:,
# None]` beside the accumulator, `k * exp2(g_last[:, None] - g)` beside the
# decayed operand), is loaded again for each (L1 serves the copies), with
# the exp2 computed where it is read: no conversion of it through shared
# memory, and its two barriers, in every iteration (0.85 of Triton on the
# H200 with them).
# RUN: %kilnc compile %s -n decayed_state -s "*bf16:16, *bf16:16, *fp32:16, *fp32:16, i32:16, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s
# CHECK: scf.for
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64xf32
# CHECK: kiln_gpu.shared_dot
import triton
import triton.language as tl


@triton.jit
def decayed_state(k, v, g, h, T, BK: tl.constexpr, BV: tl.constexpr, BT: tl.constexpr):
    o_k = tl.arange(0, BK)
    o_v = tl.arange(0, BV)
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    for i_t in range(tl.cdiv(T, BT)):
        o_t = i_t * BT + tl.arange(0, BT)
        b_k = tl.load(k + o_k[:, None] + o_t[None, :] * BK, mask=(o_t < T)[None, :], other=0.0)
        b_v = tl.load(v + o_t[:, None] * BV + o_v[None, :], mask=(o_t < T)[:, None], other=0.0)
        last = tl.minimum((i_t + 1) * BT, T) - 1
        b_g_last = tl.load(g + last * BK + o_k)
        b_g = tl.load(g + o_k[:, None] + o_t[None, :] * BK, mask=(o_t < T)[None, :], other=0.0)
        b_h *= tl.exp2(b_g_last)[:, None]
        b_k = (b_k * tl.exp2(b_g_last[:, None] - b_g)).to(b_k.dtype)
        b_h += tl.dot(b_k, b_v)
    tl.store(h + o_k[:, None] * BV + o_v[None, :], b_h)
