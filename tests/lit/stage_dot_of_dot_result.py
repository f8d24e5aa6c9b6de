# A dot whose operand is the result of a dot staged before it (FLA's
# `dot(dot(k^T, w), m)`): kiln-stage-dots planned both dots first, then
# staged the first and erased it, and staged the second from the erased
# result (a crash). The second reads the value that replaced it.
# RUN: %kilnc compile %s -n dot_of_dot -s "k=*bf16:16, w=*bf16:16, out=*fp32:16, NT=i32, BT=64, BK=64" --arch sm_90a --emit gpu -o - | FileCheck %s
# The loop's dot reads the result of one before the loop (x in bf16: an fp32
# x, row-major, would keep that first dot on mma.sync, staged_tf32_outside_loops.py).
# RUN: %kilnc compile %s -n invariant_operand -s "x=*bf16:16, z=*fp32:16, N=i32, BT=64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=INVARIANT
import triton
import triton.language as tl

# (kiln-pipeline-dots takes this loop since it stages carried operands:
# the first dot's result is waited for and staged in the loop.)
# CHECK: scf.for
# CHECK: %[[FIRST:.+]] = kiln_gpu.shared_dot {{.*}}xbf16
# CHECK: %[[DONE:.+]] = kiln_gpu.dot_wait %[[FIRST]]
# CHECK: %[[TILE:.+]] = kiln_gpu.memdesc_index
# CHECK: kiln_gpu.local_store %[[DONE]], %[[TILE]]
# CHECK: kiln_gpu.shared_dot %[[TILE]], {{.*}}memdesc<64x64xf32


@triton.jit
def dot_of_dot(k, w, out, NT, BT: tl.constexpr, BK: tl.constexpr):
    o_t = tl.arange(0, BT)
    row = tl.arange(0, BK)
    b_m = tl.where(row[:, None] == row[None, :], 1.0, 0.0)
    for i_t in range(NT):
        b_k = tl.load(k + (i_t * BT + o_t)[:, None] * BK + row[None, :])
        b_w = tl.load(w + (i_t * BT + o_t)[:, None] * BK + row[None, :])
        b_m = tl.dot(tl.dot(tl.trans(b_k), b_w), b_m)
    tl.store(out + row[:, None] * BK + row[None, :], b_m)


# INVARIANT: %[[SQUARE:.+]] = kiln_gpu.shared_dot
# INVARIANT: scf.for
# INVARIANT: kiln_gpu.shared_dot


@triton.jit
def invariant_operand(x, z, N, BT: tl.constexpr):
    o = tl.arange(0, BT)
    b_a = tl.load(x + o[:, None] * BT + o[None, :])
    b_c = tl.dot(b_a, b_a)
    for i in range(N):
        b_v = tl.load(z + o[:, None] * BT + o[None, :])
        tl.store(z + o[:, None] * BT + o[None, :], tl.dot(b_c, b_v))
