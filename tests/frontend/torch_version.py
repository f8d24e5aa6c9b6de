# `tl.constexpr(torch.version.hip is not None)` inside a kernel (issue 13:
# torchao's float8 amax kernel chooses its AMD atomics so): None, as in
# PyTorch's CUDA builds, so the CUDA branch is taken.
# RUN: %kilnc compile %s -n amax -s "x_ptr=*fp32, amax_ptr=*fp32, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
import torch
import triton
import triton.language as tl


# CHECK-LABEL: func.func @amax
# CHECK: kiln.atomic_rmw max acq_rel gpu
@triton.jit
def amax(x_ptr, amax_ptr, BLOCK: tl.constexpr):
    m = tl.max(tl.abs(tl.load(x_ptr + tl.arange(0, BLOCK))))
    if tl.constexpr(torch.version.hip is not None):
        tl.atomic_max(amax_ptr, m, sem="relaxed")
    else:
        tl.atomic_max(amax_ptr, m)
