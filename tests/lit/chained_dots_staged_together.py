# Two wgmma dots of a pipelined loop, the second accumulating the first's
# result, whose computed operands (the carried state's halves, as the gated
# delta rule's `b_v = dot(w1, h1); b_v += dot(w2, h2)`) are ready before
# the first: both staging tiles are written behind one barrier and the dots
# are issued back to back, the first not waited for (the tensor cores
# chain the accumulator). Staged apart, the iteration waited for the first,
# wrote the second's tile and met a barrier before issuing it.
# RUN: %kilnc compile %s -n two_state_halves -s "*bf16:16, *bf16:16, *bf16:16, *fp32:16, i32:16, 64, 64, 32" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n two_state_halves -s "*bf16:16, *bf16:16, *bf16:16, *fp32:16, i32:16, 64, 64, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# CHECK: scf.for
# CHECK: kiln_gpu.local_store
# CHECK: kiln_gpu.local_store
# CHECK-NEXT: kiln_gpu.fence_async_shared
# CHECK-NEXT: kiln_gpu.barrier
# CHECK-NEXT: %[[FIRST:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# CHECK-NOT: kiln_gpu.dot_wait
# CHECK-NOT: kiln_gpu.barrier
# CHECK: kiln_gpu.shared_dot %{{.*}}, %{{.*}}, %[[FIRST]] {async}
# CHECK-NEXT: kiln_gpu.dot_wait
# The eight k16 steps of the two dots, one commit group each, and one wait.
# PTX: wgmma.fence
# PTX-COUNT-4: wgmma.mma_async
# PTX: wgmma.commit_group
# PTX-NOT: wgmma.wait_group
# PTX-COUNT-4: wgmma.mma_async
# PTX: wgmma.commit_group
# PTX: wgmma.wait_group.sync.aligned 0
import triton
import triton.language as tl


@triton.jit
def two_state_halves(w, v, k, h_out, T, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    o_k = tl.arange(0, BK)
    o_v = tl.arange(0, BV)
    h1 = tl.zeros([BK, BV], dtype=tl.float32)
    h2 = tl.zeros([BK, BV], dtype=tl.float32)
    for i_t in range(tl.cdiv(T, BT)):
        o_t = i_t * BT + tl.arange(0, BT)
        w1 = tl.load(w + o_t[:, None] * (2 * BK) + o_k[None, :])
        w2 = tl.load(w + o_t[:, None] * (2 * BK) + BK + o_k[None, :])
        b_v = tl.dot(w1, h1.to(w1.dtype))
        b_v += tl.dot(w2, h2.to(w2.dtype))
        b_v = tl.load(v + o_t[:, None] * BV + o_v[None, :]) - b_v
        k1 = tl.load(k + o_k[:, None] + o_t[None, :] * (2 * BK))
        k2 = tl.load(k + BK + o_k[:, None] + o_t[None, :] * (2 * BK))
        h1 += tl.dot(k1, b_v.to(k1.dtype))
        h2 += tl.dot(k2, b_v.to(k2.dtype))
    tl.store(h_out + o_k[:, None] * BV + o_v[None, :], h1)
    tl.store(h_out + BK * BV + o_k[:, None] * BV + o_v[None, :], h2)
