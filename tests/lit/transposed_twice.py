# A tile loaded once and read by two dots, one through its transpose and one
# through the transpose of that (tl.trans(qT) where qT = q.T), as Intel's
# flash-attention backward computes dk: kiln.trans of a kiln.trans that
# undoes it folds to the load, so on sm_90a both dots read the one staged
# tile in shared memory (the second through a transposed view of it) and no
# copy of it is made through registers (no local_load, no local_store).
# RUN: %kilnc compile %s -n twice -s "*fp16:16, *fp16:16, *fp16:16, *fp32:16, 64, 32, 64" -w 4 --ns=2 --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=KILN
# RUN: %kilnc compile %s -n twice -s "*fp16:16, *fp16:16, *fp16:16, *fp32:16, 64, 32, 64" -w 4 --ns=2 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# A permutation that is not undone stays.
# RUN: %kilnc compile %s -n thrice -s "*fp16:16, *fp16:16, 32, 64" -w 4 --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=THRICE
import triton
import triton.language as tl

# KILN-LABEL: func.func @twice
# KILN: kiln.load
# KILN: scf.for
# KILN: %[[Q:.*]] = kiln.load
# KILN: %[[QT:.*]] = kiln.trans %[[Q]], [1, 0] : tensor<32x64xf16> -> tensor<64x32xf16>
# KILN-NOT: kiln.trans
# KILN: kiln.dot %{{.*}}, %[[QT]]
# KILN-NOT: kiln.trans
# KILN: kiln.dot %{{.*}}, %[[Q]]

# GPU-LABEL: func.func @twice
# GPU-NOT: kiln_gpu.local_load
# GPU-NOT: kiln_gpu.local_store
# GPU: scf.for
# GPU: kiln_gpu.memdesc_trans
# GPU: kiln_gpu.shared_dot
# GPU: kiln_gpu.shared_dot
# GPU-NOT: kiln_gpu.local_load
# GPU-NOT: kiln_gpu.local_store
# GPU: scf.yield

# THRICE-LABEL: func.func @thrice
# THRICE: kiln.trans %{{.*}}, [1, 0] : tensor<32x64xf16> -> tensor<64x32xf16>
# THRICE-NOT: kiln.trans


@triton.jit
def twice(k_ptr, q_ptr, ds_ptr, dk_ptr, N: tl.constexpr, BM: tl.constexpr, D: tl.constexpr):
    rn = tl.arange(0, N)
    rm = tl.arange(0, BM)
    rd = tl.arange(0, D)
    k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
    dk = tl.zeros([N, D], dtype=tl.float32)
    for m in range(0, 4):
        qT = tl.load(q_ptr + (m * BM + rm[:, None]) * D + rd[None, :]).T
        s = tl.dot(k, qT)
        ds = (s * tl.load(ds_ptr + rn[:, None] * BM + rm[None, :]).to(tl.float32)).to(tl.float16)
        dk = tl.dot(ds, tl.trans(qT), dk)
    tl.store(dk_ptr + rn[:, None] * D + rd[None, :], dk)


@triton.jit
def thrice(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    y = tl.trans(tl.trans(x.T))
    tl.store(y_ptr + tl.arange(0, C)[:, None] * R + tl.arange(0, R)[None, :], y)
