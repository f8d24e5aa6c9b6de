# A small per-k vector loaded in a dot's loop from pointers the loop carries
# (DeepSeek-V3's row scales `a_s`, Mamba-2's `dA_cumsum` and `dt` rows) is
# loaded in the layout its broadcast wants: the loop carries its pointers in
# that layout (converted once, before the loop), and no iteration converts
# the vector through shared memory between barriers. So is element-wise math
# over such loads (`dt_k * 2`). Where the conversion stays within warps (a
# vector every warp holds whole), it is kept: a few shuffles cost less than
# loading the replicas.
# RUN: %kilnc compile %s -n row_scaled -s "a_ptr=*fp16:16, b_ptr=*fp16:16, s_ptr=*fp32:16, c_ptr=*fp32:16, K=i32:16, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ROWS
# RUN: %kilnc compile %s -n decayed -s "a_ptr=*fp16:16, b_ptr=*fp16:16, d_ptr=*fp32:16, t_ptr=*fp32:16, c_ptr=*fp32:16, K=i32:16, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=DECAY
import triton
import triton.language as tl


# ROWS: scf.for
# ROWS-SAME: tensor<64x!kiln.ptr<f32>, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma
# ROWS-NOT: kiln_gpu.convert_layout
# ROWS: kiln.load {{.*}} -> tensor<64xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma
# ROWS-NOT: kiln_gpu.convert_layout
# ROWS: scf.yield
@triton.jit
def row_scaled(a_ptr, b_ptr, s_ptr, c_ptr, K):
    r = tl.arange(0, 64)
    k = tl.arange(0, 32)
    a_ptrs = a_ptr + r[:, None] * K + k[None, :]
    b_ptrs = b_ptr + k[:, None] * 64 + r[None, :]
    s_ptrs = s_ptr + r * (K // 32)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for i in range(0, K // 32):
        s = tl.load(s_ptrs)
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs)) * s[:, None]
        a_ptrs += 32
        b_ptrs += 32 * 64
        s_ptrs += 1
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], acc)


# DECAY: scf.for
# DECAY-NOT: kiln_gpu.convert_layout
# DECAY: math.exp {{.*}} : tensor<64x64xf32
# DECAY-NOT: kiln_gpu.convert_layout
# DECAY: scf.yield
@triton.jit
def decayed(a_ptr, b_ptr, d_ptr, t_ptr, c_ptr, K):
    r = tl.arange(0, 64)
    a_ptrs = a_ptr + r[:, None] * K + r[None, :]
    b_ptrs = b_ptr + r[:, None] * 64 + r[None, :]
    d_ptrs = d_ptr + r
    t_ptrs = t_ptr + r
    d_m = tl.load(d_ptr + r)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for i in range(0, K, 64):
        d_k = tl.load(d_ptrs, mask=r < K - i, other=0.0)
        t_k = tl.load(t_ptrs, mask=r < K - i, other=0.0)
        a = tl.load(a_ptrs).to(tl.float32) * tl.exp(d_m[:, None] - d_k[None, :]) * (t_k * 2.0)[None, :]
        acc += tl.dot(a.to(tl.float16), tl.load(b_ptrs))
        a_ptrs += 64
        b_ptrs += 64 * 64
        d_ptrs += 64
        t_ptrs += 64
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], acc)
