# An fp8 quantizer's saturation, tl.clamp(y, -c, c), is one
# min.xorsign.abs.f32 per element where the target has it (sm_86 and
# later), as upstream lowers it, and a max and a min before (sm_80); a
# clamp that is not symmetric keeps the max and the min. tl.abs is LLVM's
# fabs (abs.f32, no flush to zero, as upstream), not libdevice's
# __nv_fabsf (abs.ftz.f32 under the ftz flag).
# RUN: %kilnc compile %s -n saturate -s "*fp32:16, *fp32:16, 448.0, 448.0" --arch sm_90a --emit ptx -o - | FileCheck %s
# RUN: %kilnc compile %s -n saturate -s "*fp32:16, *fp32:16, 448.0, 448.0" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SM80
# RUN: %kilnc compile %s -n saturate -s "*fp32:16, *fp32:16, 448.0, 240.0" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ASYM
# CHECK-NOT: abs.ftz
# CHECK: abs.f32
# CHECK-NOT: min.f32
# CHECK: min.xorsign.abs.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
# CHECK-NOT: min.f32
# CHECK: st.global
# SM80-NOT: xorsign
# SM80: max.f32
# SM80: min.f32
# ASYM-NOT: xorsign
# ASYM: min.f32
import triton
import triton.language as tl


@triton.jit
def saturate(x_ptr, y_ptr, LOW: tl.constexpr, HIGH: tl.constexpr):
    offs = tl.arange(0, 256)
    x = tl.load(x_ptr + offs)
    amax = tl.max(tl.abs(x))
    y = tl.clamp(x * (HIGH / amax), -LOW, HIGH)
    tl.store(y_ptr + offs, y)
