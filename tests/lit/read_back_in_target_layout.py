# A tile read back from its cp.async ring (one a dot operand is computed
# from) whose only reader converts it into another layout, as the gated
# delta rule's `tl.load(p_v) - b_v` reads v beside a dot's result, is read
# back in that layout: every thread's copies are visible after the
# iteration's wait and barrier, so no conversion through shared memory, and
# its two barriers, follow.
# RUN: %kilnc compile %s -n corrected_state -s "*bf16:16, *bf16:16, *bf16:16, *fp32:16, i32:16, 64, 64, 32" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n corrected_state -s "*bf16:16, *bf16:16, *bf16:16, *fp32:16, i32:16, 64, 64, 32" --arch sm_80 --emit gpu -o - | FileCheck %s
# CHECK: scf.for
# CHECK: kiln_gpu.async_wait
# CHECK-NEXT: kiln_gpu.barrier
# CHECK: kiln_gpu.local_load %{{.*}} -> tensor<64x32xbf16, #kiln_gpu.mma
# CHECK-NOT: kiln_gpu.convert_layout %{{.*}} : tensor<64x32xbf16, #kiln_gpu.blocked<{{.*}}>> -> tensor<64x32xbf16, #kiln_gpu.mma
# CHECK: scf.yield
import triton
import triton.language as tl


@triton.jit
def corrected_state(w, v, k, h_out, T, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    o_k = tl.arange(0, BK)
    o_v = tl.arange(0, BV)
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    for i_t in range(tl.cdiv(T, BT)):
        o_t = i_t * BT + tl.arange(0, BT)
        b_w = tl.load(w + o_t[:, None] * BK + o_k[None, :])
        b_v = tl.load(v + o_t[:, None] * BV + o_v[None, :]) - tl.dot(b_w, b_h.to(b_w.dtype))
        b_k = tl.load(k + o_k[:, None] + o_t[None, :] * BK)
        b_h += tl.dot(b_k, b_v.to(b_k.dtype))
    tl.store(h_out + o_k[:, None] * BV + o_v[None, :], b_h)
