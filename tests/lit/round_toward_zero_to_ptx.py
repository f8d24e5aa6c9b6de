# fp_downcast_rounding="rtz" becomes PTX's cvt.rz (LLVM's constrained fptrunc
# would come out of the NVPTX backend as cvt.rn, rounding to nearest).
# RUN: %kilnc compile %s -n rtz -s "*fp32, *fp64, *fp16, *bf16, *fp32, *fp16" --arch sm_90a --emit ptx -o - | FileCheck %s
# RUN: not %kilnc compile %s -n rtz_fp8 -s "*fp32, *fp8e5" --arch sm_90a --emit ptx -o - 2>&1 | FileCheck %s --check-prefix=FP8
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


# FP8: round_toward_zero_to_ptx.py:[[@LINE+4]]:60: error: fp_downcast_rounding="rtz" to fp8e5 is not supported (as in Triton): fp8 conversions round to nearest even
@triton.jit
def rtz_fp8(x_ptr, y_ptr):
    r = tl.arange(0, 128)
    tl.store(y_ptr + r, tl.load(x_ptr + r).to(tl.float8e5, fp_downcast_rounding="rtz"))
