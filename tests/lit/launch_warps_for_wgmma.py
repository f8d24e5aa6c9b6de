# On sm_90a a kernel whose dots' tiles are too short for its num_warps to
# take wgmma (four warps a warpgroup along M, 16 rows each: 8 warps need
# 128 rows) but long enough for fewer is compiled for those: DeepSeek-V3's
# fp8 GEMM asks for 8 warps on 64-row tiles (mma.sync before, 0.31 of
# Triton's speed on the H200). The metadata keeps the config's num_warps
# and says what launches start in launch_warps. sm_80 has no wgmma: 8 warps.
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, num_warps=8" --arch sm_90a -o %t.cubin --metadata - | FileCheck %s --check-prefix=META
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, num_warps=8" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=64, num_warps=8" --arch sm_80 -o %t80.cubin --metadata - | FileCheck %s --check-prefix=SM80
# 128-row tiles take wgmma with 8 warps as asked.
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, BM=128, num_warps=8" --arch sm_90a -o %t128.cubin --metadata - | FileCheck %s --check-prefix=TALL
import triton
import triton.language as tl


# META: "num_warps": 8,
# META: "launch_warps": 4,
# PTX: .reqntid 128, 1, 1
# PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# SM80: "num_warps": 8,
# SM80-NOT: launch_warps
# TALL: "num_warps": 8,
# TALL-NOT: launch_warps
@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, 128)
    rk = tl.arange(0, 64)
    acc = tl.zeros((BM, 128), dtype=tl.float32)
    for k in range(0, K, 64):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * 128 + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * 128 + rn[None, :], acc.to(tl.float16))
