# tl.dot of fp8e5 operands before sm_89 (no fp8 mma.sync): the operands are
# widened to fp16, which holds every e5m2 value exactly, and the product
# runs on mma.sync m16n8k16 as upstream's AccelerateMatmul runs it; it was
# the fp32 multiply-add loop (a 128 x 128 x 128 tile spilled 10 KB).
# sm_89 and later keep their own rule (fp8 mma.sync where b is K-contiguous).
# RUN: %kilnc compile %s -n fp8_tile -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*fp32:16" --arch sm_80 --emit kiln -o - | FileCheck %s --check-prefix=KILN
# RUN: %kilnc compile %s -n fp8_tile -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*fp32:16" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SM80
# RUN: %kilnc compile %s -n fp8_tile -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*fp32:16" --arch sm_89 --emit ptx -o - | FileCheck %s --check-prefix=SM89
import triton
import triton.language as tl

# KILN: arith.extf %{{.*}} : tensor<64x64xf8E5M2> to tensor<64x64xf16>
# KILN: arith.extf %{{.*}} : tensor<64x64xf8E5M2> to tensor<64x64xf16>
# KILN: kiln.dot %{{.*}}, %{{.*}}, %{{.*}}, tf32 : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
# SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# SM80-NOT: fma.rn.f32
# SM89: mma.sync
# SM89-NOT: f32.f16.f16.f32


@triton.jit
def fp8_tile(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 64)
    a = tl.load(a_ptr + r[:, None] * 64 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 64 + r[None, :])
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], tl.dot(a, b))
