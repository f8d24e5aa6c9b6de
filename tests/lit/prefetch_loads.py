# In a loop kiln-pipeline-dots rewrote, a small load that is not an
# operand tile is loaded ahead. A float vector in a blocked layout that
# reaches a dot's operand rides with the operand tiles: kiln-pipeline-dots
# copies it as a 1 x N row into a ring of its own and reads it back where it
# was loaded (tests/lit/vector_rings.py). Other small loads (attention
# backward's m in the slice of the accumulator's layout, an index, a
# scalar, a vector only scaling a carried accumulator) go into registers:
# before the loop for the first iterations, then at the end of each
# iteration for a later one (masked off past the last), and the loop
# carries the values in flight. As far ahead as the copies run (S - 1) when
# those values take at most 6 registers a thread beyond the next
# iteration's, else one iteration ahead. A load whose address comes from
# another load (a gather) stays where it is.
# RUN: %kilnc compile %s -n rows -s "*fp16:16, *fp16:16, *fp32:16, *i32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s
# A loop that stores to global memory keeps its loads where they are: the
# next iteration's load could have to see this iteration's store.
# RUN: %kilnc compile %s -n rows_stored -s "*fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=STORED
# A volatile load in the loop (Mamba-3's backward reloads dO and V so)
# writes nothing: the loads beside it still go ahead (upstream's pipeliner
# moves them too; here m, loaded in a blocked layout, in its ring), while it
# stays in its iteration.
# RUN: %kilnc compile %s -n rows_volatile -s "*fp16:16, *fp16:16, *fp32:16, *fp32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=VOLATILE
# VOLATILE: kiln_gpu.async_copy {{.*}} : tensor<1x32x!kiln.ptr<f32>
# VOLATILE: scf.for
# VOLATILE: kiln_gpu.local_load {{.*}} -> tensor<1x32xf32
# VOLATILE: kiln.load {{.*}} volatile : (tensor<32x!kiln.ptr<f32>
# VOLATILE: kiln_gpu.async_copy {{.*}} : tensor<1x32x!kiln.ptr<f32>
# VOLATILE: scf.yield
# A scalar load, a carried pointer's (SageAttention's per-block k scale,
# `k_scale = tl.load(K_scale_ptr)`, then `K_scale_ptr += 1`), goes ahead too.
# RUN: %kilnc compile %s -n scaled_rows -s "*fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SCALAR
# SCALAR: %[[P1:[0-9]+]] = kiln.addptr %arg2, %c1_i32
# SCALAR: %[[S0:[0-9]+]] = kiln.load %arg2, mask %{{.*}}, other %{{.*}} : (!kiln.ptr<f32>, i1, f32) -> f32
# SCALAR: %[[S1:[0-9]+]] = kiln.load %[[P1]], mask %{{.*}}, other %{{.*}} : (!kiln.ptr<f32>, i1, f32) -> f32
# SCALAR: scf.for {{.*}}, %[[S:arg[0-9]+]] = %[[S0]], %[[S1A:arg[0-9]+]] = %[[S1]], %[[P:arg[0-9]+]] = %{{[0-9]+}})
# SCALAR-NOT: kiln.load %{{.*}} : (!kiln.ptr<f32>) -> f32
# SCALAR: kiln.splat %[[S]]
# SCALAR: %[[PN:[0-9]+]] = kiln.addptr %[[P]], %c1_i32
# SCALAR: %[[S2:[0-9]+]] = kiln.load %[[P]], mask %{{.*}}, other %{{.*}} : (!kiln.ptr<f32>, i1, f32) -> f32
# SCALAR: scf.yield {{.*}}, %[[S1A]], %[[S2]], %[[PN]] :
# Per-row scales of a, a column of strided words (no cp.async: 2 bytes
# apart, one register a thread), read from the induction variable: three
# iterations ahead where the copies run three, the loop carrying the three.
# (A contiguous row of scales is copied with the tile it scales instead:
# tests/lit/pipeline_packed_runs.test. Scales applied to a product, after
# the dot, stay one iteration ahead.)
# RUN: %kilnc compile %s -n group_scaled -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16" -ns 4 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GROUP
# GROUP: %[[G0:[0-9]+]] = kiln.load {{.*}} -> tensor<64xf16
# GROUP: %[[G1:[0-9]+]] = kiln.load {{.*}} -> tensor<64xf16
# GROUP: %[[G2:[0-9]+]] = kiln.load {{.*}} -> tensor<64xf16
# GROUP: scf.for %[[IV:arg[0-9]+]] = {{.*}}, %[[A:arg[0-9]+]] = %[[G0]], %[[B:arg[0-9]+]] = %[[G1]], %[[C:arg[0-9]+]] = %[[G2]])
# GROUP-NOT: kiln.load
# GROUP: kiln.expand_dims %[[A]]
# GROUP: %[[AHEAD:[0-9]+]] = arith.addi %[[IV]], %c3_i32
# GROUP: arith.cmpi slt, %[[AHEAD]]
# GROUP: %[[G3:[0-9]+]] = kiln.load {{.*}} -> tensor<64xf16
# GROUP: scf.yield {{.*}}, %[[B]], %[[C]], %[[G3]] :
# STORED: scf.for
# STORED: kiln.load %{{[0-9]+}} : (tensor<32x!kiln.ptr<f32>
# STORED: kiln.store
# STORED: scf.yield
import triton
import triton.language as tl

# The first iteration's m and gather index, before the loop, masked (n may
# be 0), carried by the loop.
# m is loaded in the slice of the accumulator's layout that `m[None, :]`
# reads (layout assignment loads it there rather than converting it through
# shared memory each iteration); the gather stays converted.
# CHECK: %[[M0:.*]] = kiln.load {{.*}}, mask {{.*}} -> tensor<32xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma
# CHECK: %[[I0:.*]] = kiln.load {{.*}}, mask {{.*}} -> tensor<32xi32
# CHECK: scf.for {{.*}} = %[[M0]], %{{.*}} = %[[I0]])
# The gathered load stays, unmasked, in its iteration.
# It is issued before the wait for the copies and the barrier, which order
# shared memory only.
# CHECK: kiln.load %{{[0-9]+}} : (tensor<32x!kiln.ptr<f32>
# CHECK-NEXT: kiln_gpu.async_wait
# CHECK-NEXT: kiln_gpu.barrier
# CHECK-NEXT: kiln_gpu.convert_layout
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln_gpu.shared_dot
# The next iteration's, masked by iv + 32 < n.
# CHECK: %[[M1:.*]] = kiln.load {{.*}}, mask {{.*}} -> tensor<32xf32
# CHECK: %[[I1:.*]] = kiln.load {{.*}}, mask {{.*}} -> tensor<32xi32
# CHECK: scf.yield {{.*}}, %[[M1]], %[[I1]] :


@triton.jit
def rows(q_ptr, k_ptr, m_ptr, idx_ptr, dk_ptr, n):
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    qT_ptrs = q_ptr + rm[None, :] * 64 + rd[:, None]
    curr = 0
    for start in range(0, n, 32):
        qT = tl.load(qT_ptrs)
        m = tl.load(m_ptr + curr + rm)
        g = tl.load(m_ptr + tl.load(idx_ptr + curr + rm))
        s = tl.dot(k, qT) - m[None, :] - g[None, :]
        p = s.to(tl.float16)
        dk += tl.dot(p, tl.trans(qT))
        qT_ptrs += 32 * 64
        curr += 32
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)


@triton.jit
def rows_stored(q_ptr, k_ptr, m_ptr, dk_ptr, n):
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    qT_ptrs = q_ptr + rm[None, :] * 64 + rd[:, None]
    curr = 0
    for start in range(0, n, 32):
        qT = tl.load(qT_ptrs)
        m = tl.load(m_ptr + curr + rm)
        s = tl.dot(k, qT) - m[None, :]
        tl.store(m_ptr + curr + 32 + rm, m * 2.0, mask=curr + 32 + rm < n)
        p = s.to(tl.float16)
        dk += tl.dot(p, tl.trans(qT))
        qT_ptrs += 32 * 64
        curr += 32
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)


@triton.jit
def rows_volatile(q_ptr, k_ptr, m_ptr, v_ptr, dk_ptr, n):
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    qT_ptrs = q_ptr + rm[None, :] * 64 + rd[:, None]
    curr = 0
    for start in range(0, n, 32):
        qT = tl.load(qT_ptrs)
        m = tl.load(m_ptr + curr + rm)
        v = tl.load(v_ptr + curr + rm, volatile=True)
        s = tl.dot(k, qT) - m[None, :] * v[None, :]
        p = s.to(tl.float16)
        dk += tl.dot(p, tl.trans(qT))
        qT_ptrs += 32 * 64
        curr += 32
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)


@triton.jit
def scaled_rows(q_ptr, k_ptr, scale_ptr, dk_ptr, n):
    rn = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    rm = tl.arange(0, 32)
    k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :])
    dk = tl.zeros((64, 64), dtype=tl.float32)
    qT_ptrs = q_ptr + rm[None, :] * 64 + rd[:, None]
    for start in range(0, n, 32):
        qT = tl.load(qT_ptrs)
        scale = tl.load(scale_ptr)
        p = (tl.dot(k, qT) * scale).to(tl.float16)
        dk += tl.dot(p, tl.trans(qT))
        qT_ptrs += 32 * 64
        scale_ptr += 1
    tl.store(dk_ptr + rn[:, None] * 64 + rd[None, :], dk)


@triton.jit
def group_scaled(a_ptr, b_ptr, scale_ptr, c_ptr, k_tiles):
    rm = tl.arange(0, 64)
    rn = tl.arange(0, 64)
    rk = tl.arange(0, 64)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in range(0, k_tiles):
        a = tl.load(a_ptr + rm[:, None] * 4096 + (k * 64 + rk)[None, :])
        w = tl.load(b_ptr + (k * 64 + rk)[:, None] * 64 + rn[None, :])
        scale = tl.load(scale_ptr + rm * 4096 + k)
        acc = tl.dot((a * scale[:, None]).to(tl.float16), w, acc)
    tl.store(c_ptr + rm[:, None] * 64 + rn[None, :], acc.to(tl.float16))


# A per-block column scale (DeepSeek-V3's and aiter's block-scaled fp8
# GEMMs: `b_scale_ptr + (offs_bn % N) // 128`, runs of 16 equal values) in
# the accumulator's column layout is 32 elements a thread but 8 distinct
# loads: small enough to go one iteration ahead (it waited for its loads
# after each dot before).
# RUN: %kilnc compile %s -n block_scaled -s "*fp8e4nv:16, *fp8e4nv:16, *fp32:16, *fp32:16, i32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=BLOCK
# BLOCK: %[[B0:[0-9]+]] = kiln.load {{.*}} -> tensor<128xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma
# BLOCK: scf.for {{.*}} = %[[B0]]
# BLOCK: kiln_gpu.shared_dot
# BLOCK: %[[B1:[0-9]+]] = kiln.load {{.*}} -> tensor<128xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma
# BLOCK: scf.yield {{.*}}%[[B1]]
@triton.jit
def block_scaled(a_ptr, b_ptr, b_scale_ptr, c_ptr, N, K):
    rm = tl.arange(0, 128)
    rk = tl.arange(0, 128)
    offs_bn = (tl.program_id(0) * 128 + tl.arange(0, 128)) % N
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + offs_bn[None, :]
    scale_ptrs = b_scale_ptr + offs_bn // 128
    acc = tl.zeros((128, 128), dtype=tl.float32)
    for k in range(0, K // 128):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        b_scale = tl.load(scale_ptrs)
        acc += tl.dot(a, b) * b_scale[None, :]
        a_ptrs += 128
        b_ptrs += 128 * N
        scale_ptrs += N // 128
    tl.store(c_ptr + rm[:, None] * N + offs_bn[None, :], acc)
