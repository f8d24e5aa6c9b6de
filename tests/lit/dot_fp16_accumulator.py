# tl.dot(..., out_dtype=tl.float16) on the tensor cores: the operands go in
# as fp16, the dot accumulates in fp32 and is rounded to fp16 once per
# tl.dot (the accumulator is widened, the product rounded). In a loop the
# fp16 accumulator is carried; each iteration's dot is pipelined like any
# other (wgmma on sm_90a, mma.sync on sm_80).
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=KILN
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WGMMA
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=MMA
import triton
import triton.language as tl

# KILN: arith.extf {{.*}} : tensor<64x64xf16> to tensor<64x64xf32>
# KILN: kiln.dot {{.*}} -> tensor<64x64xf32>
# KILN: arith.truncf {{.*}} : tensor<64x64xf32> to tensor<64x64xf16>
# WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# MMA: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32


@triton.jit
def mm16(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
