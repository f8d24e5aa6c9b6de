# Operand tiles whose rows are wider than what the preferred layout (made for
# the narrowest tile) covers get their own row layout. At BK = 32, a's
# 64-byte rows give the preferred layout 4 lanes a row; b's 512-byte rows
# then take one warp a row (32 lanes, 16 bytes each: whole 128-byte lines)
# instead of 8 rows by halves. An fp8 a beside a narrower fp16 c keeps 16
# fp8 (16-byte cp.async) a thread instead of c's 8.
# RUN: %kilnc compile %s -n mm -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 256, 32, False" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WIDE
# RUN: %kilnc compile %s -n mm -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 128, 256, 64, False" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SAME
# RUN: %kilnc compile %s -n mm -s "*fp8e4nv:16, *fp8e4nv:16, *fp16:16, i32:16, 128, 32, 64, True" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=FP8
# RUN: %kilnc compile %s -n mm -s "*fp8e4nv:16, *fp8e4nv:16, *fp16:16, i32:16, 128, 32, 64, True" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FP8-PTX
import triton
import triton.language as tl

# WIDE: kiln_gpu.async_copy {{.*}} : tensor<64x32x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1]
# WIDE: kiln_gpu.async_copy {{.*}} : tensor<32x256x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1]

# 128-byte rows of a cover whole lines already: b keeps the preferred layout.
# SAME: kiln_gpu.async_copy {{.*}} : tensor<128x64x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]
# SAME: kiln_gpu.async_copy {{.*}} : tensor<64x256x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]

# FP8: kiln_gpu.async_copy {{.*}} : tensor<128x64x!kiln.ptr<f8E4M3FN>, #kiln_gpu.blocked<{sizePerThread = [1, 16], threadsPerWarp = [8, 4]
# FP8: kiln.store {{.*}}sizePerThread = [1, 8], threadsPerWarp = [8, 4]
# FP8-PTX: cp.async.cg.shared.global [ {{.*}} ], [ {{.*}} ], 16
# FP8-PTX-NOT: cp.async.ca.shared.global [ {{.*}} ], [ {{.*}} ], 8


# B_COLUMNS: b given as bᵀ (N x K, K-contiguous), as fp8 wgmma reads it.
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
       B_COLUMNS: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        if B_COLUMNS:
            b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        else:
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))
