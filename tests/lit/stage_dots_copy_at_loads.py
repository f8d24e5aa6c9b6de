# kiln-stage-dots copies a staged dot operand loaded from global memory in
# its own block into the operand's tile with cp.async where it is loaded:
# the copy runs under the work between the load and the dot, and no
# register holds the tile (FLA's dq/dk kernel loads q and k after its
# first dots and multiplies them after a softmax-like block: 1474 -> 240
# spill bytes). The first reader waits (async_wait leaving the groups
# committed after this one pending, then a barrier, or the proxy fence and
# barrier the dot has anyway); the loaded values'
# other readers take them from the tile (local_load in the layout they were
# converted to), and a tile last read that way gets a barrier after the read.
# RUN: %kilnc compile %s -n scaled -s "q_ptr=*bf16:16, k_ptr=*bf16:16, x_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n scaled -s "q_ptr=*bf16:16, k_ptr=*bf16:16, x_ptr=*fp32:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# A store between the load and the dot through the loaded argument may
# write what the copy reads: the load stays, and its tile is written where
# the dot is. A store through another kernel argument does not count
# (kernel arguments are taken not to overlap, as the pipeliner takes them):
# k is still copied.
# RUN: %kilnc compile %s -n store_between -s "q_ptr=*bf16:16, k_ptr=*bf16:16, x_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=STORE
# Copied where they are loaded, a's and b's tiles (192 KiB) would live
# through the gather's 64 KiB of scratch: more than sm_90a's 227 KiB. The
# module is marked kiln_gpu.copied_at_loads, and kilnc compiles it again with
# the tiles written right before the dot, which fits.
# RUN: %kilnc compile %s -n gathered_between -s "a_ptr=*bf16:16, b_ptr=*bf16:16, x_ptr=*fp32:16, out_ptr=*fp32:16, y_ptr=*fp32:16, num_warps=8" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=FIRST
# RUN: %kilnc compile %s -n gathered_between -s "a_ptr=*bf16:16, b_ptr=*bf16:16, x_ptr=*fp32:16, out_ptr=*fp32:16, y_ptr=*fp32:16, num_warps=8" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=RETRY
# A copy is issued ahead of region ops before its load (attention's v,
# loaded after q @ k and the softmax's reductions in a one-stage loop),
# with clones of its address arithmetic; not ahead of a pipelined loop,
# whose waits would complete the older group first.
# RUN: %kilnc compile %s -n early_v -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp32:16, n=i32, num_stages=1" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=EARLY
# RUN: %kilnc compile %s -n after_pipelined -s "a_ptr=*fp16:16, b_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp32:16, K=i32, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=LATE
# Not past a second dot: in straight-line code that runs one head after
# another (modded-nanogpt's windowed attention correction, six heads), a
# head's copies go ahead of the previous head's dot and softmax, not to the
# kernel's start, where every head's tiles would live at once.
# RUN: %kilnc compile %s -n heads -s "q_ptr=*bf16:16, k_ptr=*bf16:16, o_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=HEADS
# Off, to compare code with and without it.
# RUN: %kilnc compile %s -n scaled -s "q_ptr=*bf16:16, k_ptr=*bf16:16, x_ptr=*fp32:16" --arch sm_90a --emit gpu -o - --kiln-stage-dots-copy-at-loads=false | FileCheck %s --check-prefix=OFF
import triton
import triton.language as tl


# GPU-LABEL: func.func @scaled
# GPU: %[[Q:.*]] = kiln_gpu.local_alloc {{.*}} : <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# GPU-NEXT: kiln_gpu.async_copy %{{.*}}, %[[Q]] {kiln_gpu.vec = 8 : i32}
# GPU-NEXT: kiln_gpu.async_commit_group
# GPU: %[[K:.*]] = kiln_gpu.local_alloc {{.*}} : <64x64xbf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# GPU-NEXT: kiln_gpu.async_copy %{{.*}}, %[[K]] {kiln_gpu.vec = 8 : i32}
# GPU-NEXT: kiln_gpu.async_commit_group
# The exp2 below runs while the tiles land.
# GPU: math.exp2
# One wait for both tiles; each thread fences the bytes it waited for, and
# one barrier shows them all to the dot.
# GPU: kiln_gpu.async_wait {pending = 0 : i32}
# GPU-NEXT: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU-NEXT: %[[X:.*]] = kiln_gpu.shared_dot %[[Q]], %[[K]]
# q, read after the dot in the accumulator's layout, from its tile; then a
# barrier, as the tile's last reader (which also closes the dot: the dot's
# own closing barrier goes, kiln-drop-closing-barriers).
# GPU-NOT: kiln_gpu.barrier
# GPU: kiln_gpu.local_load %[[Q]] : {{.*}} -> tensor<64x64xbf16, #kiln_gpu.mma
# GPU-NEXT: kiln_gpu.barrier
# GPU-NOT: kiln.load
# GPU-NOT: kiln_gpu.local_store
# PTX: cp.async.cg.shared.global [ {{%r[0-9]+}} ], [ {{%rd[0-9]+}} ], 16,
# PTX: cp.async.commit_group
# PTX: cp.async.wait_group 0;
# PTX-NOT: bar.sync
# PTX: fence.proxy.async.shared::cta;
# PTX-NEXT: // end inline asm
# PTX-NEXT: bar.sync 0;
# PTX-NOT: bar.sync
# PTX: wgmma.mma_async
# OFF-LABEL: func.func @scaled
# OFF-NOT: kiln_gpu.async_copy
# OFF: kiln_gpu.local_store
@triton.jit
def scaled(q_ptr, k_ptr, x_ptr):
    r = tl.arange(0, 64)
    tile = r[:, None] * 64 + r[None, :]
    q = tl.load(q_ptr + tile)
    k = tl.load(k_ptr + tile)
    g = tl.exp2(r.to(tl.float32))
    x = tl.dot(q, tl.trans(k)) * g[:, None]
    tl.store(x_ptr + tile, x * q.to(tl.float32))


# STORE-LABEL: func.func @store_between
# STORE: kiln.load
# STORE-NOT: kiln.load
# STORE: kiln_gpu.async_copy
# STORE: kiln.store
# STORE: kiln.store
# STORE: kiln_gpu.local_store
# STORE: kiln_gpu.shared_dot
@triton.jit
def store_between(q_ptr, k_ptr, x_ptr):
    r = tl.arange(0, 64)
    tile = r[:, None] * 64 + r[None, :]
    q = tl.load(q_ptr + tile)
    k = tl.load(k_ptr + tile)
    tl.store(q_ptr + tile, q * 2)
    tl.store(x_ptr + tile, k.to(tl.float32))
    tl.store(x_ptr + tile, tl.dot(q, k))


# FIRST: kiln_gpu.copied_at_loads
# FIRST: kiln_gpu.async_copy
# FIRST: kiln_gpu.async_copy
# RETRY-NOT: cp.async.cg
# RETRY: wgmma.mma_async
@triton.jit
def gathered_between(a_ptr, b_ptr, x_ptr, out_ptr, y_ptr):
    rm = tl.arange(0, 128)
    rk = tl.arange(0, 256)
    rn = tl.arange(0, 256)
    a = tl.load(a_ptr + rm[:, None] * 256 + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * 256 + rn[None, :])
    r = tl.arange(0, 128)
    x = tl.load(x_ptr + r[:, None] * 128 + r[None, :])
    idx = (r[:, None] * 7 + r[None, :]) % 128
    tl.store(y_ptr + r[:, None] * 128 + r[None, :], tl.gather(x, idx, axis=0))
    tl.store(out_ptr + rm[:, None] * 256 + rn[None, :], tl.dot(a, b))


# EARLY: scf.for
# EARLY: %[[V:.*]] = kiln_gpu.local_alloc {{.*}} : <64x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# EARLY-NEXT: kiln_gpu.async_copy %{{.*}}, %[[V]]
# EARLY: kiln_gpu.shared_dot
# EARLY: kiln.reduce
# EARLY: kiln_gpu.shared_dot %{{.*}}, %[[V]]
@triton.jit
def early_v(q_ptr, k_ptr, v_ptr, o_ptr, n):
    r = tl.arange(0, 64)
    q = tl.load(q_ptr + r[:, None] * 64 + r[None, :])
    acc = tl.zeros([64, 64], dtype=tl.float32)
    for start in range(0, n, 64):
        k = tl.load(k_ptr + (start + r[None, :]) * 64 + r[:, None])
        s = tl.dot(q, k)
        p = tl.exp(s - tl.max(s, axis=1)[:, None])
        v = tl.load(v_ptr + (start + r[:, None]) * 64 + r[None, :])
        acc += tl.dot(p.to(tl.float16), v)
    tl.store(o_ptr + r[:, None] * 64 + r[None, :], acc)


# LATE: scf.for
# LATE: scf.yield
# LATE: %[[V:.*]] = kiln_gpu.local_alloc {{.*}} : <64x64xf16
# LATE-NEXT: kiln_gpu.async_copy %{{.*}}, %[[V]]
@triton.jit
def after_pipelined(a_ptr, b_ptr, v_ptr, o_ptr, K):
    r = tl.arange(0, 64)
    acc = tl.zeros([64, 64], dtype=tl.float32)
    for k in range(0, K, 64):
        a = tl.load(a_ptr + r[:, None] * K + (k + r)[None, :])
        b = tl.load(b_ptr + (k + r)[:, None] * 64 + r[None, :])
        acc += tl.dot(a, b)
    v = tl.load(v_ptr + r[:, None] * 64 + r[None, :])
    tl.store(o_ptr + r[:, None] * 64 + r[None, :], tl.dot(acc.to(tl.float16), v))


# HEADS-LABEL: func.func @heads
# Two heads' tiles are copied before the first dot, the third's after it
# and after the barrier that closes it: the third's tiles take bytes of the
# first's, which another warp may still be reading before that barrier.
# HEADS-COUNT-4: kiln_gpu.async_copy
# HEADS-NOT: kiln_gpu.async_copy
# HEADS: kiln_gpu.shared_dot
# HEADS-NEXT: kiln_gpu.barrier
# HEADS-NOT: kiln_gpu.shared_dot
# HEADS-COUNT-2: kiln_gpu.async_copy
# HEADS-NOT: kiln_gpu.async_copy
# HEADS: kiln_gpu.shared_dot
# HEADS-NOT: kiln_gpu.async_copy
# HEADS: kiln_gpu.shared_dot
@triton.jit
def _head(q_ptr, k_ptr, H: tl.constexpr):
    rm = tl.arange(0, 16)
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    q = tl.load(q_ptr + H * 4096 + rm[:, None] * 64 + rd[None, :])
    k = tl.load(k_ptr + H * 4096 + rn[:, None] * 64 + rd[None, :])
    s = tl.dot(q, tl.trans(k))
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    return p / tl.sum(p, axis=1)[:, None]


@triton.jit
def heads(q_ptr, k_ptr, o_ptr):
    p = _head(q_ptr, k_ptr, 0) + _head(q_ptr, k_ptr, 1) + _head(q_ptr, k_ptr, 2)
    rm = tl.arange(0, 16)
    rn = tl.arange(0, 64)
    tl.store(o_ptr + rm[:, None] * 64 + rn[None, :], p)
