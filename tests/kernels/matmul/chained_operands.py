# A dot whose operand is another dot's fp32 result: FLA's WY-representation
# backward multiplies `dot(dot(k^T, w), m)` per chunk, and a product computed
# once before a loop feeds a dot in every iteration. On sm_90a both dots run
# on wgmma, the second's operand written from the first's accumulator to a
# shared tile (tf32).
#
# kiln-variant: -n dot_of_dot -s "k_ptr=*bf16:16, w_ptr=*bf16:16, out_ptr=*fp32:16, NT=i32, BT=64, BK=64"
# kiln-variant: -n dot_of_dot -s "k_ptr=*bf16:16, w_ptr=*bf16:16, out_ptr=*fp32:16, NT=i32, BT=32, BK=32"
# kiln-variant: -n invariant_dot_operand -s "x_ptr=*fp32:16, z_ptr=*fp32:16, out_ptr=*fp32:16, N=i32, BT=64"
# kiln-covers: dot_of_dot: tl.dot; tl.trans; tl.where
# kiln-covers: invariant_dot_operand: tl.dot
import triton
import triton.language as tl


@triton.jit
def dot_of_dot(k_ptr, w_ptr, out_ptr, NT, BT: tl.constexpr, BK: tl.constexpr):
    # m = (k_{NT-1}^T w_{NT-1}) ... (k_0^T w_0) applied to the identity, each
    # chunk a [BT, BK] block of k and of w.
    o_t = tl.arange(0, BT)
    o_k = tl.arange(0, BK)
    b_m = tl.where(o_k[:, None] == o_k[None, :], 1.0, 0.0)
    for i_t in range(NT):
        rows = i_t * BT + o_t
        b_k = tl.load(k_ptr + rows[:, None] * BK + o_k[None, :])
        b_w = tl.load(w_ptr + rows[:, None] * BK + o_k[None, :])
        b_m = tl.dot(tl.dot(tl.trans(b_k), b_w), b_m)
    tl.store(out_ptr + o_k[:, None] * BK + o_k[None, :], b_m)


@triton.jit
def invariant_dot_operand(x_ptr, z_ptr, out_ptr, N, BT: tl.constexpr):
    # out_i = (x @ x) @ z_i for N blocks z_i: the square is computed once.
    o = tl.arange(0, BT)
    tile = o[:, None] * BT + o[None, :]
    b_a = tl.load(x_ptr + tile)
    b_c = tl.dot(b_a, b_a)
    for i in range(N):
        b_v = tl.load(z_ptr + i * BT * BT + tile)
        tl.store(out_ptr + i * BT * BT + tile, tl.dot(b_c, b_v))
