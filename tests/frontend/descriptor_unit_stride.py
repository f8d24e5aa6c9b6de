# tl.make_tensor_descriptor whose last stride is a parameter the signature
# says equals 1 (`i32:1`, upstream's equal-to-1 specialization, which
# makes it a constexpr there; issue 13: mamba's Mamba-3 kernels pass
# `stride_q_qkdim`).
# RUN: %kilnc compile %s -n unit_last_stride -s "x_ptr=*bf16, n=i32, stride_row=i32, stride_col=i32:1, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n unit_last_stride -s "x_ptr=*bf16, n=i32, stride_row=i32, stride_col=i32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=RUNTIME
import triton
import triton.language as tl


# CHECK-LABEL: func.func @unit_last_stride
# CHECK: kiln.make_tensor_desc
# RUNTIME: descriptor_unit_stride.py:18:9: error: the last stride of a tensor descriptor must be the constant 1, got a run-time scalar of type i32
@triton.jit
def unit_last_stride(x_ptr, n, stride_row, stride_col, BLOCK: tl.constexpr):
    desc = tl.make_tensor_descriptor(
        x_ptr, shape=[n, n],
        strides=[stride_row, stride_col],
        block_shape=[BLOCK, BLOCK])
    tile = desc.load([0, 0])
    desc.store([0, 0], tile * 2)
