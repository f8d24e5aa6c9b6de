# A scalar indexed as a block (issue 13: torchao's blockwise fp8 kernels
# write `pid_n[:, None] * s + pid_m[None, :] * t`): the ':' indices stand
# for no dimension and each None makes a block of shape [1], as upstream
# splats a scalar in expand_dims.
# RUN: %kilnc compile %s -n scalar_index -s "out_ptr=*i32, s=i32, t=i32" --arch sm_90a --emit kiln -o - | FileCheck %s
import triton
import triton.language as tl


# CHECK-LABEL: func.func @scalar_index
# CHECK: kiln.splat {{.*}} : i32 -> tensor<1xi32>
# CHECK: kiln.store {{.*}} : tensor<1x!kiln.ptr<i32>>
@triton.jit
def scalar_index(out_ptr, s, t):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs = pid_n[:, None] * s + pid_m[None, :] * t
    tl.store(out_ptr + offs, offs)
