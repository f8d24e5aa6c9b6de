# A scalar indexed as a block (issue 13: torchao's blockwise fp8 kernels
# write `pid_n[:, None] * s + pid_m[None, :] * t`): the ':' indices stand
# for no dimension and each None makes a block of shape [1], as upstream
# splats a scalar in expand_dims.
# RUN: %kilnc compile %s -n scalar_index -s "out_ptr=*i32, s=i32, t=i32" --arch sm_90a --emit kiln -o - | FileCheck %s
# A scalar indexed with an int: upstream's tuple parameter (mamba's rotary
# step kernel takes q.stride() as one argument) given a scalar type; the
# error names the tuple form (tuple_params.py).
# RUN: not %kilnc compile %s -n tuple_strides -s "x_ptr=*fp32, stride_x=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=TUPLE
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


# TUPLE: scalar_subscript.py:28:31: error: a run-time scalar of type i32 cannot be indexed with an int; a kernel parameter that upstream takes as a tuple (x.stride()) needs a tuple type in the signature, e.g. stride=(i32, i32)
@triton.jit
def tuple_strides(x_ptr, stride_x):
    tl.store(x_ptr + stride_x[0], 1.0)
