# A python number beside an fp16/bf16 value: weakly typed in arithmetic and
# tl.where (the value's type), but an fp32 (int32) tensor in comparisons,
# tl.maximum/minimum/clamp and tl.fma, which widen the value to it, as
# upstream Triton types them; tl.maximum of bf16 values computes in fp32.
#
# RUN: %kilnc compile %s -n forms -s "x_ptr=*fp16, y_ptr=*bf16, out_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
# The comparison: x widened, 0.1 exact in fp32.
# CHECK: %[[C:.*]] = arith.constant 1.000000e-01 : f32
# CHECK: %[[XW:.*]] = arith.extf %[[X:.*]] : tensor<64xf16> to tensor<64xf32>
# CHECK: arith.cmpf ogt, %[[XW]], %{{.*}} : tensor<64xf32>
# tl.maximum(x, 0.0) in fp32.
# CHECK: arith.maxnumf %{{.*}}, %{{.*}} : tensor<64xf32>
# tl.maximum of two bf16 blocks in fp32.
# CHECK: arith.extf %{{.*}} : tensor<64xbf16> to tensor<64xf32>
# CHECK: arith.maxnumf %{{.*}}, %{{.*}} : tensor<64xf32>
# x + 1.0 and tl.where(c, x, 0.0) stay fp16.
# CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<64xf16>
# CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<64xi1>, tensor<64xf16>
import triton
import triton.language as tl


@triton.jit
def forms(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    c = x > 0.1
    relu = tl.maximum(x, 0.0)
    m = tl.maximum(y, y + 1)
    s = tl.where(c, x + 1.0, 0.0)
    tl.store(out_ptr + offs, relu + m + s)
