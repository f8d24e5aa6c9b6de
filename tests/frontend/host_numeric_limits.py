# Module-level constants from torch's type limits (FlagGems' topk, fp8
# quantizers): torch.finfo/iinfo of a torch dtype, wrapped in tl.constexpr
# or not, evaluated as host Python.
# RUN: %kilnc compile %s -n clamp_to_limits -s "x=*fp32, y=*fp32, BLOCK=16" --arch sm_90a --emit kiln -o - | FileCheck %s
# CHECK-DAG: arith.constant dense<4.480000e+02> : tensor<16xf32>
# CHECK-DAG: arith.constant dense<1.270000e+02> : tensor<16xf32>
# CHECK-DAG: arith.constant dense<-3.40282347E+38> : tensor<16xf32>
# CHECK-DAG: arith.constant dense<6.550400e+04> : tensor<16xf32>
import torch
import triton
import triton.language as tl

_MIN_F32 = tl.constexpr(torch.finfo(torch.float32).min)
_MAX_I8 = tl.constexpr(torch.iinfo(torch.int8).max)
FP8_MAX = torch.finfo(torch.float8_e4m3fn).max
F16_MAX: tl.constexpr = torch.finfo(torch.float16).max


@triton.jit
def clamp_to_limits(x, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.maximum(tl.load(x + o), _MIN_F32)
    tl.store(y + o, tl.minimum(v + _MAX_I8 + FP8_MAX, F16_MAX))
