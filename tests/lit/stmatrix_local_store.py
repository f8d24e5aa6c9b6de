# A 16-bit accumulator written to a swizzled (nvmma_shared) tile for a TMA
# store goes by stmatrix: each lane's eight elements of a matrix row are one
# 16-byte chunk of the tile, whatever the 128-byte swizzle does to the
# chunk's place, so each instruction stores four 8x8 matrices. A 128x128
# fp16 tile over 4 warps is 128 elements per thread: 16 stmatrix.x4 (instead
# of 64 st.shared.b32), at one address per thread XORed with a constant per
# instruction (the swizzle mixes lane and register bits, so no immediate
# offsets). An fp32 tile is no b16 matrix: 8-byte stores.
# RUN: %kilnc compile %s -n matmul_store -s "tensordesc<fp16[128,64]>:16, tensordesc<fp16[64,128]>:16, tensordesc<fp16[128,128]>:16, i32:16, 128, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FP16
# RUN: %kilnc compile %s -n matmul_store -s "tensordesc<fp16[128,64]>:16, tensordesc<fp16[64,128]>:16, tensordesc<fp32[128,128]>:16, i32:16, 128, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FP32
import triton
import triton.language as tl

# FP16: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# FP16: bar.sync 0
# FP16-NOT: st.shared
# FP16: xor.b32
# FP16-COUNT-16: stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
# FP16-NOT: stmatrix
# FP16-NOT: st.shared
# FP16: bar.sync 0
# FP16: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group

# FP32-NOT: stmatrix
# FP32-COUNT-64: st.shared.v2.b32
# FP32-NOT: stmatrix
# FP32: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group


@triton.jit
def matmul_store(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(a_desc.load([0, k]), b_desc.load([k, 0]))
    c_desc.store([0, 0], acc.to(c_desc.dtype))
