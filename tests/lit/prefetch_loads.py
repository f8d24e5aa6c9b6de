# In a loop kiln-pipeline-dots rewrote, a small load that feeds no dot
# (attention backward's m: a row of floats per iteration) is loaded one
# iteration ahead: once before the loop for the first iteration, then at the
# end of each iteration for the next one (masked off past the last), and the
# loop carries it. A load whose address comes from another load (a gather)
# stays where it is.
# RUN: %kilnc compile %s -n rows -s "*fp16:16, *fp16:16, *fp32:16, *i32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s
# A loop that stores to global memory keeps its loads where they are: the
# next iteration's load could have to see this iteration's store.
# RUN: %kilnc compile %s -n rows_stored -s "*fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=STORED
# A scalar load, a carried pointer's (SageAttention's per-block k scale,
# `k_scale = tl.load(K_scale_ptr)`, then `K_scale_ptr += 1`), goes ahead too.
# RUN: %kilnc compile %s -n scaled_rows -s "*fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SCALAR
# SCALAR: %[[S0:[0-9]+]] = kiln.load %{{.*}}, mask %{{.*}}, other %{{.*}} : (!kiln.ptr<f32>, i1, f32) -> f32
# SCALAR: scf.for {{.*}}, %[[S:arg[0-9]+]] = %[[S0]])
# SCALAR-NOT: kiln.load %{{.*}} : (!kiln.ptr<f32>) -> f32
# SCALAR: kiln.splat %[[S]]
# SCALAR: %[[S1:[0-9]+]] = kiln.load %{{.*}}, mask %{{.*}}, other %{{.*}} : (!kiln.ptr<f32>, i1, f32) -> f32
# SCALAR: scf.yield {{.*}}, %[[S1]] :
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
# CHECK: kiln.load %{{[0-9]+}} : (tensor<32x!kiln.ptr<f32>
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
