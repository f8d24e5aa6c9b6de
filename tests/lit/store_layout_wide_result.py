# A tensor-core result stored in a type wider than the operand tiles the
# preferred layout was made for (an fp8 matmul's fp16 C): the loads keep 16
# fp8 per thread (16-byte cp.async), the store gets 8 fp16 per thread, so a
# warp's 16-byte stores cover whole sectors (with the loads' layout each
# store would write half of every sector it touches). Its pointers and mask
# are recomputed in that layout; only the accumulator moves.
# RUN: %kilnc compile %s -n mm8 -s "*fp8e4nv:16, *fp8e4nv:16, *fp16:16, i32:16, 128, 128, 128" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n mm8 -s "*fp8e4nv:16, *fp8e4nv:16, *fp16:16, i32:16, 128, 128, 128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# CHECK: kiln_gpu.async_copy {{.*}}sizePerThread = [1, 16]
# CHECK-COUNT-1: kiln_gpu.convert_layout
# CHECK-SAME: #kiln_gpu.mma
# CHECK: kiln.store {{.*}}sizePerThread = [1, 8], threadsPerWarp = [2, 16]
# PTX: st.global.v4.b32
# PTX-NOT: st.global.v4.b32 [ {{.*}} + 16 ]


@triton.jit
def mm8(a_ptr, bt_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(bt_ptr + rn[None, :] * K + (k + rk)[:, None])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16),
             mask=rm[:, None] < K)
