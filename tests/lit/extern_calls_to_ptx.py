# libdevice calls become calls of the declared __nv_* function, which the
# target links (no extern declaration is left in the PTX); tl.sqrt_rn and
# tl.div_rn become the IEEE-rounded instructions, not the approximations.
# RUN: %kilnc compile %s -n libdevice_calls -s "*fp32, *fp32, i32" --arch sm_90a --emit gpu -o - | %kiln-opt --kiln-to-llvm | FileCheck %s --check-prefix=LLVM
# RUN: %kilnc compile %s -n libdevice_calls -s "*fp32, *fp32, i32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n rounded -s "*fp32, *fp32, i32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=RN32
import triton
import triton.language as tl
from triton.language.extra import libdevice


# LLVM-DAG: llvm.func @__nv_atan2f(f32, f32) -> f32
# LLVM-DAG: llvm.func @__nv_cbrtf(f32) -> f32
# LLVM-LABEL: llvm.func @libdevice_calls
# LLVM: llvm.call @__nv_atan2f(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
# LLVM: llvm.call @__nv_cbrtf(%{{.*}}) : (f32) -> f32
# PTX: .entry libdevice_calls(
# PTX-NOT: .extern .func
# PTX-NOT: call{{.*}}__nv_
# PTX: st.global
@triton.jit
def libdevice_calls(x_ptr, out_ptr, n):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = libdevice.atan2(x, x + 1.0) + libdevice.cbrt(x)
    tl.store(out_ptr + offs, y, mask=offs < n)


# RN32: sqrt.rn.f32
# RN32: div.rn.f32
# RN32-NOT: sqrt.approx
@triton.jit
def rounded(x_ptr, out_ptr, n):
    offs = tl.arange(0, 256)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.div_rn(tl.sqrt_rn(x), x + 3.0)
    tl.store(out_ptr + offs, y, mask=offs < n)
