# fp8 conversions: cvt with satfinite from sm_89; before, e5m2 in software
# (the high byte of an f16, f32 rounded to odd first) and e4m3 refused, as
# upstream Triton does.
# RUN: %kilnc compile %s -n narrow -s "*fp32, *fp8e4nv" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=E4M3
# RUN: %kilnc compile %s -n narrow -s "*fp16, *fp8e5" --arch sm_89 --emit ptx -o - | FileCheck %s --check-prefix=E5M2-F16
# RUN: %kilnc compile %s -n widen -s "*fp8e4nv, *fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WIDEN
# RUN: %kilnc compile %s -n narrow -s "*fp32, *fp8e5" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SOFT
# RUN: %kilnc compile %s -n widen -s "*fp8e5, *fp32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SOFT-WIDEN
# RUN: not %kilnc compile %s -n narrow -s "*fp32, *fp8e4nv" --arch sm_86 --emit ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=OLD
import triton
import triton.language as tl


# One cvt converts a thread's two elements (the second in the high byte).
# E4M3: cvt.rn.satfinite.e4m3x2.f32 %rs{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
# E4M3-NOT: cvt.rn.satfinite
# E5M2-F16: mov.b32 kiln_pair, {%rs{{[0-9]+}}, %rs{{[0-9]+}}}; cvt.rn.satfinite.e5m2x2.f16x2
# E5M2-F16-NOT: cvt.rn.satfinite
# SOFT-NOT: cvt.rn.satfinite
# SOFT: cvt.rz.f16.f32
# OLD: error: 'arith.truncf' op fp8e4nv conversions need sm_89 or newer
@triton.jit
def narrow(x_ptr, out_ptr):
    offs = tl.arange(0, 256)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty))


# WIDEN: cvt.rn.f16x2.e4m3x2
# WIDEN: cvt.f32.f16
# SOFT-WIDEN-NOT: cvt.rn.f16x2
# SOFT-WIDEN: cvt.f32.f16
@triton.jit
def widen(x_ptr, out_ptr):
    offs = tl.arange(0, 256)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))
