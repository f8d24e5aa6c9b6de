# Module-level host code a kernel file carries that Kiln does not run:
#
# - a tl.constexpr default computed by host code (vLLM's `FP8_MAX:
#   tl.constexpr = float8_info.max`, `float8_info = torch.finfo(...)`) is
#   evaluated only when the signature leaves the parameter out, and its
#   error reported then;
# - a run-time parameter defaulting to None is None when left out;
# - `if platform.is_rocm(): ... elif platform.is_xpu(): ... else: ...`
#   takes the branch a CUDA GPU takes (platform probes by name), not the
#   first whose imports resolve (also through a module-level flag,
#   `_is_hip = is_hip()`, as SGLang keeps it);
# - tl.inline_asm_elementwise constraints naming other counts of registers
#   than the call passes are an error, not an LLVM crash.
#
# RUN: %kilnc compile %s -n clamp_fp8 -s "x_ptr=*fp32, out_ptr=*fp32, scale_ptr=*fp32, FP8_MIN=-448.0, FP8_MAX=448.0, BLOCK=128" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=GIVEN
# GIVEN-LABEL: func.func @clamp_fp8
# GIVEN: arith.constant {{.*}}4.480000e+02
# RUN: %kilnc compile %s -n clamp_fp8 -s "x_ptr=*fp32, out_ptr=*fp32, FP8_MIN=-448.0, FP8_MAX=448.0, BLOCK=128" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=NONE
# NONE-LABEL: func.func @clamp_fp8(%arg0: !kiln.ptr<f32>, %arg1: !kiln.ptr<f32>)
# RUN: not %kilnc compile %s -n clamp_fp8 -s "x_ptr=*fp32, out_ptr=*fp32, scale_ptr=*fp32, FP8_MIN=-448.0, BLOCK=128" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=LEFTOUT
# LEFTOUT: error: bad signature for 'clamp_fp8': parameter 'FP8_MAX' is missing from the signature and its default cannot be evaluated at compile time (give its value):
# LEFTOUT: host_defaults_and_platforms.py:37:15: error: module 'torch' cannot be used inside a Triton kernel
# RUN: %kilnc compile %s -n rounded -s "x_ptr=*fp32, out_ptr=*i8, BLOCK=128" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PLATFORM
# PLATFORM-LABEL: func.func @rounded
# PLATFORM: kiln.extern_elementwise "__nv_roundf"({{.*}}) {libname = "libdevice"
# RUN: %kilnc compile %s -n rounded_by_flag -s "x_ptr=*fp32, out_ptr=*i8, BLOCK=128" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=FLAG
# FLAG-LABEL: func.func @rounded_by_flag
# FLAG: kiln.extern_elementwise "__nv_rintf"
# RUN: not %kilnc compile %s -n bad_constraints -s "x_ptr=*fp32, out_ptr=*fp16, BLOCK=128" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=CONSTRAINTS
# CONSTRAINTS: host_defaults_and_platforms.py:104:67: error: the constraints name 1 outputs and 1 inputs, but with pack=2 each call takes 1 output and 2 input registers (one per element of 32 bits or more, narrower elements packed 32 bits a register)
import torch
import triton
import triton.language as tl

from platforms import current_platform

float8_info = torch.finfo(current_platform.fp8_dtype())


@triton.jit
def clamp_fp8(x_ptr, out_ptr, scale_ptr=None, FP8_MIN: tl.constexpr = float8_info.min,
              FP8_MAX: tl.constexpr = float8_info.max, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if scale_ptr is not None:
        x = x * tl.load(scale_ptr)
    tl.store(out_ptr + offs, tl.clamp(x, FP8_MIN, FP8_MAX))


if current_platform.is_rocm():

    @triton.jit
    def round_int8(x):
        return tl.extra.hip.libdevice.round(x).to(tl.int8)

elif current_platform.is_xpu():

    @triton.jit
    def round_int8(x):
        return tl.extra.intel.libdevice.round(x).to(tl.int8)

else:

    @triton.jit
    def round_int8(x):
        return tl.extra.cuda.libdevice.round(x).to(tl.int8)


# SGLang's form: the probe's value kept in a module-level flag.
_is_hip = current_platform.is_rocm()

if _is_hip:

    @triton.jit
    def to_int8(x):
        return tl.extra.hip.libdevice.rint(x).to(tl.int8)

else:

    @triton.jit
    def to_int8(x):
        return tl.extra.cuda.libdevice.rint(x).to(tl.int8)


@triton.jit
def rounded_by_flag(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if _is_hip:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.int8))
    else:
        tl.store(out_ptr + offs, to_int8(tl.load(x_ptr + offs)))


@triton.jit
def rounded(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, round_int8(tl.load(x_ptr + offs)))


@triton.jit
def bad_constraints(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("cvt.rn.f16x2.f32 $0, $1, $1;", "=r,r", [x], dtype=tl.float16,
                                  is_pure=True, pack=2)
    tl.store(out_ptr + offs, y)
