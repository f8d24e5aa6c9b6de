# On sm_90a a kernel whose dots' tiles are too short for its num_warps to
# put all warps along M (four warps a warpgroup, 16 rows each: 8 warps need
# 128 rows) splits N between its warpgroups, as upstream does: each
# warpgroup's wgmma computes its own adjacent columns of the accumulator
# (`instrN`), with its own columns of b's tile. 16-bit columns must fill a
# 128-byte swizzle panel of an N-major b; narrower ones (64 x 64 at 8
# warps) are compiled for the warps that tile M instead (fewer warps: the
# metadata keeps the config's num_warps and says what launches start in
# launch_warps). sm_80 has no wgmma: 8 warps.
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=128, num_warps=8" --arch sm_90a -o %t.cubin --metadata - | FileCheck %s --check-prefix=META
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=128, num_warps=8" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=128, num_warps=8" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=64, num_warps=8" --arch sm_90a -o %t64.cubin --metadata - | FileCheck %s --check-prefix=NARROW
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=64, num_warps=8" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=NARROW-PTX
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=128, num_warps=8" --arch sm_80 -o %t80.cubin --metadata - | FileCheck %s --check-prefix=SM80
# 128-row tiles take wgmma with 8 warps along M as asked.
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=128, BN=128, num_warps=8" --arch sm_90a -o %t128.cubin --metadata - | FileCheck %s --check-prefix=TALL
import triton
import triton.language as tl


# META: "num_warps": 8,
# META-NOT: launch_warps
# GPU: #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 64}>
# PTX: .reqntid 256, 1, 1
# The second warpgroup's b starts one 128-byte panel (64 rows x 128 bytes)
# further on: its index (tid / 128, from lane 0) times 8192.
# PTX: shfl.sync.idx.b32 [[G:%r[0-9]+]], {{%r[0-9]+}}, 0, 31, -1;
# PTX: shl.b32 {{%r[0-9]+}}, [[G]], 13;
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# PTX-NOT: wgmma.mma_async.sync.aligned.m64n128k16
# NARROW: "num_warps": 8,
# NARROW: "launch_warps": 4,
# NARROW-PTX: .reqntid 128, 1, 1
# NARROW-PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# SM80: "num_warps": 8,
# SM80-NOT: launch_warps
# A kernel that reads its warps (tl.extra.cuda.num_warps) keeps them: the
# same narrow tile at 8 warps takes mma.sync, not fewer warps.
# RUN: %kilnc compile %s -n gemm_reading_warps -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=64, num_warps=8" --arch sm_90a -o %tfixed.cubin --metadata - | FileCheck %s --check-prefix=FIXED
# RUN: %kilnc compile %s -n gemm_reading_warps -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, BN=64, num_warps=8" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FIXED-PTX
# FIXED: "num_warps": 8,
# FIXED-NOT: launch_warps
# FIXED-PTX: .reqntid 256, 1, 1
# FIXED-PTX: mma.sync.aligned.m16n8k16
# TALL: "num_warps": 8,
# TALL-NOT: launch_warps
@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, 64)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, 64):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@triton.jit
def gemm_reading_warps(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr):
    gemm(a_ptr, b_ptr, c_ptr, K, BM, BN)
    # num_warps read as a value (here stored beside the product).
    tl.store(c_ptr + BM * BN + tl.arange(0, 32), tl.full([32], tl.extra.cuda.num_warps(), tl.float16))
