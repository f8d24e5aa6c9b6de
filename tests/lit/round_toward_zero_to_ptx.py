# fp_downcast_rounding="rtz" becomes PTX's cvt.rz (LLVM's constrained fptrunc
# would come out of the NVPTX backend as cvt.rn, rounding to nearest).
# RUN: %kilnc compile %s -n rtz -s "*fp32, *fp64, *fp16, *bf16, *fp32, *fp16" --arch sm_90a --emit ptx -o - | FileCheck %s
# fp32 to fp8e5 toward zero (upstream's only rtz conversion to fp8): fp16
# toward zero, its high byte. Others to fp8 are errors, as upstream.
# RUN: %kilnc compile %s -n rtz_fp8 -s "*fp32, *fp8e5" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FP8
# RUN: not %kilnc compile %s -n rtz_fp8 -s "*fp16, *fp8e5" --arch sm_90a --emit ptx -o - 2>&1 | FileCheck %s --check-prefix=FP8-F16
# RUN: not %kilnc compile %s -n rtz_fp8 -s "*fp32, *fp8e4nv" --arch sm_90a --emit ptx -o - 2>&1 | FileCheck %s --check-prefix=FP8-E4
import triton
import triton.language as tl


# CHECK-LABEL: .entry rtz(
# CHECK-DAG: cvt.rz.f16.f32
# CHECK-DAG: cvt.rz.bf16.f32
# CHECK-DAG: cvt.rz.f32.f64
# CHECK-NOT: cvt.rn.f16.f32
# CHECK: ret;
@triton.jit
def rtz(x_ptr, d_ptr, h_ptr, b_ptr, f_ptr, dh_ptr):
    r = tl.arange(0, 128)
    x = tl.load(x_ptr + r)
    d = tl.load(d_ptr + r)
    tl.store(h_ptr + r, x.to(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(b_ptr + r, x.to(tl.bfloat16, fp_downcast_rounding="rtz"))
    tl.store(f_ptr + r, d.to(tl.float32, fp_downcast_rounding="rtz"))
    tl.store(dh_ptr + r, d.to(tl.float16, fp_downcast_rounding="rtz"))


# FP8-LABEL: .entry rtz_fp8(
# FP8: cvt.rz.f16.f32
# FP8: shr.{{[us]}}16 %rs{{[0-9]+}}, %rs{{[0-9]+}}, 8;
# FP8-NOT: cvt.rn.satfinite.e5m2x2
# FP8-F16: round_toward_zero_to_ptx.py:[[@LINE+5]]:71: error: fp_downcast_rounding="rtz" to fp8 is supported only from fp32 to fp8e5 (as in Triton), not from fp16 to fp8e5
# FP8-E4: round_toward_zero_to_ptx.py:[[@LINE+4]]:71: error: fp_downcast_rounding="rtz" to fp8 is supported only from fp32 to fp8e5 (as in Triton), not from fp32 to fp8e4nv
@triton.jit
def rtz_fp8(x_ptr, y_ptr):
    r = tl.arange(0, 128)
    tl.store(y_ptr + r, tl.load(x_ptr + r).to(y_ptr.dtype.element_ty, fp_downcast_rounding="rtz"))
