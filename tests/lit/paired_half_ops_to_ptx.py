# 16-bit float element-wise ops are paired into f16x2/bf16x2 instructions
# (the SLP vectorizer in the O3 pipeline, as upstream Triton runs it): a
# dequantized weight times its scale is one mul.f16x2 for two elements. A
# multiply feeding an add is a multiply-add first, so pairing keeps the
# backend's FMA contraction (compiler/target/HalfMulAdds.h): fma.rn.f16x2,
# never a paired mul beside scalar adds. --kiln-slp-vectorize=false leaves
# every op scalar.
# RUN: %kilnc compile %s -n dequant_scale -s "w_ptr=*i8:16, s_ptr=*fp16:16, out_ptr=*fp16:16, BLOCK=1024" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SCALE
# RUN: %kilnc compile %s -n dequant_scale -s "w_ptr=*i8:16, s_ptr=*fp16:16, out_ptr=*fp16:16, BLOCK=1024" --arch sm_90a --emit ptx -o - --kiln-slp-vectorize=false | FileCheck %s --check-prefix=SCALAR
# RUN: %kilnc compile %s -n mul_add -s "x_ptr=*fp16:16, y_ptr=*fp16:16, z_ptr=*fp16:16, out_ptr=*fp16:16, BLOCK=1024" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FMA
# RUN: %kilnc compile %s -n mul_add -s "x_ptr=*bf16:16, y_ptr=*bf16:16, z_ptr=*bf16:16, out_ptr=*bf16:16, BLOCK=1024" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FMA-BF16
import triton
import triton.language as tl


# SCALE-NOT: mul.f16{{[[:space:]]}}
# SCALE-COUNT-4: mul.f16x2
# SCALE-NOT: mul.f16{{[[:space:]]}}
# SCALAR-NOT: mul.f16x2
# SCALAR-COUNT-8: mul.f16{{[[:space:]]}}
# SCALAR-NOT: mul.f16
@triton.jit
def dequant_scale(w_ptr, s_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    w = tl.load(w_ptr + offs).to(tl.float16)
    tl.store(out_ptr + offs, w * tl.load(s_ptr + offs))


# FMA-NOT: {{(mul|add|sub)}}.f16
# FMA-COUNT-4: fma.rn.f16x2
# FMA-NOT: {{(mul|add|sub)}}.f16
# FMA-BF16-NOT: {{(mul|add|sub)}}.bf16
# FMA-BF16-COUNT-4: fma.rn.bf16x2
# FMA-BF16-NOT: {{(mul|add|sub)}}.bf16
@triton.jit
def mul_add(x_ptr, y_ptr, z_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    tl.store(out_ptr + offs, x * y - z)
