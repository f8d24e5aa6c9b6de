# `tl.range(..., warp_specialize=True)` on attention's loops (tutorial 06's
# form on sm_90a): q @ k^T reads q, loaded once, from shared memory, and k
# from a ring; p @ v reads p from registers and v from a ring.
# - The producer copies k and then v into their rings, each slot after its
#   empty barrier; causal, it runs both loops, the slot count running on
#   from the first into the second, which reuses the first's rings and
#   barriers (one k ring and one v ring in all).
# - The consumers store q to its tile (fence, barrier), then per iteration
#   wait for k's slot, run q @ k^T and wait for it, which also completes
#   the previous iteration's p @ v (its carried acc tied to the wait): they
#   release the previous v slot and this k slot. p @ v stays in flight to
#   the next iteration's wait; after the loop it is waited for and its
#   slot released.
# - HEAD_DIM 64 on 4 warps: 83 KB of shared memory leave room for two
#   blocks per SM, so the kernel starts its 256 threads with 128 registers
#   and the consumers take 216.
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, 128, 64, 64, True, True" -w 4 --ns 3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, 128, 64, 64, True, True" -w 4 --ns 3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, 128, 64, 64, True, False" -w 4 --ns 3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=PLAIN
import triton
import triton.language as tl

# GPU: module attributes {{.*}}kiln_gpu.producer_warps = 4
# GPU: kiln_gpu.local_alloc {{.*}} : <1x128x64xf16
# GPU: kiln_gpu.local_alloc {{.*}} : <3x64x64xf16
# GPU: kiln_gpu.local_alloc {{.*}} : <3x64x64xf16
# GPU-NOT: kiln_gpu.local_alloc {{.*}} : <3x64x64xf16
# GPU: kiln_gpu.set_max_registers 40
# GPU: %[[FIRST:.*]] = scf.for
# GPU: kiln_gpu.wait_barrier
# GPU: kiln_gpu.async_tma_copy {{.*}} {kiln_gpu.warp_issued}
# GPU: kiln_gpu.wait_barrier
# GPU: kiln_gpu.async_tma_copy {{.*}} {kiln_gpu.warp_issued}
# GPU: scf.for {{.*}} iter_args(%{{.*}} = %[[FIRST]])
# GPU: kiln_gpu.async_tma_copy {{.*}} {kiln_gpu.warp_issued}
# GPU: kiln_gpu.async_tma_copy {{.*}} {kiln_gpu.warp_issued}
# GPU: } else {
# GPU-NEXT: kiln_gpu.set_max_registers increase
# GPU-NOT: kiln_gpu.async_tma_copy
# GPU: kiln_gpu.local_store
# GPU-NEXT: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU: %[[LOOP:.*]]:4 = scf.for
# GPU: kiln_gpu.wait_barrier
# GPU: kiln_gpu.shared_dot {{.*}} {async} : !kiln_gpu.memdesc<128x64xf16
# GPU-NEXT: kiln_gpu.dot_wait %{{.*}}, %arg{{[0-9]+}} {pending = 0 : i32}
# GPU: scf.if
# GPU: kiln_gpu.arrive_barrier
# GPU: kiln_gpu.arrive_barrier
# GPU: kiln_gpu.wait_barrier
# GPU: kiln_gpu.shared_dot {{.*}} {async} : tensor<128x64xf16
# GPU-NOT: kiln_gpu.dot_wait
# GPU: scf.yield
# GPU: kiln_gpu.dot_wait %[[LOOP]]#0 {pending = 0 : i32}
# GPU: kiln_gpu.arrive_barrier
# GPU: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[LOOP]]#3)
# GPU-NOT: kiln_gpu.async_tma_copy

# PTX: .reqntid 256, 1, 1
# PTX-NEXT: .maxnreg 128
# PTX: setmaxnreg.dec.sync.aligned.u32 40;
# PTX: setmaxnreg.inc.sync.aligned.u32 216;
# PTX: bar.sync 1, 128;
# PTX: wgmma.mma_async

# PLAIN-NOT: producer_warps
# PLAIN-NOT: set_max_registers
# PLAIN: kiln_gpu.async_tma_copy
# PLAIN-NOT: warp_issued

@triton.jit
def _inner(acc, l_i, m_i, q, k_desc, v_desc, lo, hi, start, BM: tl.constexpr, BN: tl.constexpr,
           MASK: tl.constexpr, WS: tl.constexpr):
    offs_m = start + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    for n in tl.range(lo, hi, BN, warp_specialize=WS):
        k = k_desc.load([n, 0])
        qk = tl.dot(q, k.T)
        if MASK:
            qk = tl.where(offs_m[:, None] >= n + offs_n[None, :], qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attention(q_ptr, k_ptr, v_ptr, o_ptr, N, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
              CAUSAL: tl.constexpr, WS: tl.constexpr):
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[N, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[N, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[N, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[N, D], strides=[D, 1], block_shape=[BM, D])
    start = tl.program_id(0) * BM
    q = q_desc.load([start, 0])
    m_i = tl.zeros([BM], tl.float32) - 1.0e6
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    if CAUSAL:
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_desc, v_desc, 0, start, start, BM, BN, False, WS)
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_desc, v_desc, start, start + BM, start, BM, BN, True, WS)
    else:
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_desc, v_desc, 0, N, start, BM, BN, False, WS)
    o_desc.store([start, 0], (acc / l_i[:, None]).to(tl.float16))
