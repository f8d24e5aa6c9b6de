# kiln-pipeline-dots pipelines dots over tiles gathered through indices the
# loop loads (paged attention's token slots, a GEMM over picked b rows): the
# index loads join the load stage, run S-1 iterations ahead with it, masked
# off past the loop's last iteration (an unmasked one too: it may not read
# past its indices), and kiln-prefetch-loads then loads them one iteration
# earlier still, so that the copies do not wait for them.
# RUN: %kilnc compile %s -n decode -s "*fp16:16, *fp16:16, *fp16:16, *i32:16, *fp32:16, i32:16" -w 2 --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=DECODE
# RUN: %kilnc compile %s -n picked_rows -s "*fp16:16, *fp16:16, *i32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=PICKED
# A loop that stores keeps its loads where they are: an index load moved
# ahead could miss the store of an earlier iteration.
# RUN: %kilnc compile %s -n picked_rows_stored -s "*fp16:16, *fp16:16, *i32:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=STORED
import triton
import triton.language as tl

# The prologue: the first iteration's indices, then its k and v copies.
# DECODE: kiln.load {{.*}}, mask {{.*}} -> tensor<16xi32
# DECODE: kiln_gpu.async_copy {{.*}} : tensor<64x16x!kiln.ptr<f16>
# DECODE: kiln_gpu.async_copy {{.*}} : tensor<16x64x!kiln.ptr<f16>
# The second iteration's indices, carried into the loop.
# DECODE: %[[I0:[0-9]+]] = kiln.load {{.*}}, mask {{.*}} -> tensor<16xi32
# DECODE: scf.for {{.*}}, %[[I:arg[0-9]+]] = %[[I0]])
# DECODE: kiln_gpu.async_wait {pending = 0 : i32}
# DECODE-NEXT: kiln_gpu.barrier
# DECODE: kiln_gpu.convert_layout %[[I]]
# DECODE: kiln_gpu.async_copy {{.*}} : tensor<64x16x!kiln.ptr<f16>
# DECODE: kiln_gpu.async_copy {{.*}} : tensor<16x64x!kiln.ptr<f16>
# q @ k on 16 rows, warps along N; p then goes to every warp whole (the
# warps along M wrap around its 16 rows) for p @ v.
# DECODE: kiln_gpu.shared_dot {{.*}} -> tensor<16x16xf32, #kiln_gpu.mma<{warpsPerCTA = [1, 2]}>>
# DECODE: kiln_gpu.convert_layout {{.*}} : tensor<16x16xf16, #kiln_gpu.mma<{warpsPerCTA = [1, 2]}>> -> tensor<16x16xf16, #kiln_gpu.mma<{warpsPerCTA = [2, 1]}>>
# DECODE: kiln_gpu.shared_dot {{.*}} : tensor<16x16xf16, #kiln_gpu.mma<{warpsPerCTA = [2, 1]}>>
# DECODE: %[[I1:[0-9]+]] = kiln.load {{.*}}, mask {{.*}} -> tensor<16xi32
# DECODE: scf.yield {{.*}}, %[[I1]] :


@triton.jit
def decode(q_ptr, k_ptr, v_ptr, pages_ptr, out_ptr, n):
    rows = tl.arange(0, 16)
    offs_d = tl.arange(0, 64)
    q = tl.load(q_ptr + rows[:, None] * 64 + offs_d[None, :])
    acc = tl.zeros([16, 64], tl.float32)
    for start in range(0, n, 16):
        offs_n = start + tl.arange(0, 16)
        token = tl.load(pages_ptr + offs_n, mask=offs_n < n, other=0)
        k = tl.load(k_ptr + token[None, :] * 64 + offs_d[:, None])
        p = tl.dot(q, k)
        v = tl.load(v_ptr + token[:, None] * 64 + offs_d[None, :])
        acc += tl.dot(p.to(tl.float16), v)
    tl.store(out_ptr + rows[:, None] * 64 + offs_d[None, :], acc)


# The unmasked index load gets a mask in the prologue (iterations 0 and 1
# of 3 stages) and in the loop (iteration i + 2, loaded at i - 1 and
# carried).
# PICKED: kiln.load {{.*}}, mask {{.*}}, other {{.*}} -> tensor<32xi32
# PICKED: kiln.load {{.*}}, mask {{.*}}, other {{.*}} -> tensor<32xi32
# PICKED: %[[P0:[0-9]+]] = kiln.load {{.*}}, mask {{.*}}, other {{.*}} -> tensor<32xi32
# PICKED: scf.for {{.*}}, %[[P:arg[0-9]+]] = %[[P0]])
# PICKED-NOT: kiln.load
# PICKED: kiln_gpu.shared_dot {{.*}} {async}
# PICKED: kiln_gpu.async_copy
# PICKED: kiln_gpu.async_copy
# PICKED: %[[P1:[0-9]+]] = kiln.load {{.*}}, mask {{.*}}, other {{.*}} -> tensor<32xi32
# PICKED: scf.yield {{.*}}, %[[P1]] :


@triton.jit
def picked_rows(a_ptr, b_ptr, idx_ptr, c_ptr, K):
    rm = tl.arange(0, 64)
    rn = tl.arange(0, 64)
    rk = tl.arange(0, 32)
    acc = tl.zeros([64, 64], tl.float32)
    for k in range(0, K, 32):
        picked = tl.load(idx_ptr + k + rk)
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + picked[:, None] * 64 + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * 64 + rn[None, :], acc)


# No copies ahead: each iteration loads its indices, then copies its a and b
# tiles where they are loaded (kiln-stage-dots) and waits for them before
# the dot, before the store.
# STORED-NOT: kiln_gpu.async_copy
# STORED: scf.for
# STORED: kiln.load %{{[0-9]+}} : (tensor<32x!kiln.ptr<i32>
# STORED: kiln_gpu.async_copy
# STORED: kiln_gpu.async_copy
# STORED: kiln_gpu.async_wait {pending = 0 : i32}
# STORED: kiln_gpu.shared_dot
# STORED: kiln.store


@triton.jit
def picked_rows_stored(a_ptr, b_ptr, idx_ptr, c_ptr, K):
    rm = tl.arange(0, 64)
    rn = tl.arange(0, 64)
    rk = tl.arange(0, 32)
    acc = tl.zeros([64, 64], tl.float32)
    for k in range(0, K, 32):
        picked = tl.load(idx_ptr + k + rk)
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + picked[:, None] * 64 + rn[None, :])
        acc += tl.dot(a, b)
        tl.store(idx_ptr + k + rk, picked + 1)
    tl.store(c_ptr + rm[:, None] * 64 + rn[None, :], acc)
