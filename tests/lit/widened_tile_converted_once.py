# A widened tile read in the accumulator's layout twice, once in arithmetic
# over a broadcast vector (`acc += x * (d + q[:, None])` beside
# `tl.sum(s * x, axis=1)`, Mamba-3's backward's dO): kiln-assign-layouts
# converts the bf16 tile once, for both, and widens it there; the vector is
# rebroadcast in the accumulator's layout. Before, the fp32 product was
# converted too (twice the bytes through shared memory, two more barriers).
# RUN: %kilnc compile %s -n widened_twice -s "a_ptr=*bf16:16, b_ptr=*bf16:16, x_ptr=*bf16:16, q_ptr=*fp32:16, rows_ptr=*fp32:16, d=fp32, BM=64, BN=64, BK=64" --arch sm_90a --emit gpu -o - | FileCheck %s
# Read so once, the product is converted as before (converting the tile and
# the vector would add the vector's barriers and save nothing).
# RUN: %kilnc compile %s -n widened_once -s "a_ptr=*bf16:16, b_ptr=*bf16:16, x_ptr=*bf16:16, q_ptr=*fp32:16, rows_ptr=*fp32:16, d=fp32, BM=64, BN=64, BK=64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ONCE
import triton
import triton.language as tl

# CHECK-LABEL: func.func @widened_twice
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64x
# CHECK: kiln_gpu.convert_layout {{.*}} : tensor<64x64xbf16, #kiln_gpu.blocked<{{.*}}>> -> tensor<64x64xbf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64x
# CHECK: kiln.reduce
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64x
# CHECK: kiln.reduce
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} : tensor<64x64x
# CHECK: return

# ONCE-LABEL: func.func @widened_once
# ONCE: kiln_gpu.convert_layout {{.*}} : tensor<64x64xf32, #kiln_gpu.blocked<{{.*}}>> -> tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>


@triton.jit
def widened_twice(a_ptr, b_ptr, x_ptr, q_ptr, rows_ptr, d, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    s = tl.dot(a, b)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    q = tl.load(q_ptr + rm)
    acc = s + x * (d + q[:, None])
    tl.store(rows_ptr + rm, tl.sum(acc, axis=1) + tl.sum(s * x, axis=1))


@triton.jit
def widened_once(a_ptr, b_ptr, x_ptr, q_ptr, rows_ptr, d, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    s = tl.dot(a, b)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    q = tl.load(q_ptr + rm)
    acc = s + x * (d + q[:, None])
    tl.store(rows_ptr + rm, tl.sum(acc, axis=1))
