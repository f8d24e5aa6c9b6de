# kilnc compile --aligned-pointers: the build's aligned-pointers variant,
# every pointer `:16` and nothing assumed of the integers (docs/usage.md
# "Alignment is automatic"): counts such as a batch of 1 or 12 heads keep the
# accesses and the TMA that aligned tensors allow.
# RUN: rm -rf %t && mkdir -p %t

# Only the pointers get the hint; equal-to-1 and hinted integers stay.
# RUN: %kilnc compile %S/../e2e/strided_matmul.py -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=i32, N=i32, K=i32:16, stride_am=i32, stride_ak=i32:1, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=64, BN=64, BK=32" --aligned-pointers --arch sm_90a -o %t/mm.cubin --metadata %t/mm.json
# RUN: FileCheck %s --check-prefix=MATMUL < %t/mm.json
# MATMUL: "signature": "*fp16:16, *fp16:16, *fp32:16, i32, i32, i32:16, i32, i32:1, i32, i32, i32, i32, 64, 64, 32",

# Whole blocks from aligned pointers: 128-bit accesses whatever n is; the
# general variant goes element by element.
# RUN: %kilnc compile %s -n block_copy -s "src=*fp32, dst=*fp32, n=i32, BLOCK=512" --aligned-pointers --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=COPY
# RUN: %kilnc compile %s -n block_copy -s "src=*fp32, dst=*fp32, n=i32, BLOCK=512" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=COPY-GENERAL
# COPY: .param .u64 .ptr .global .align 16 block_copy_param_0
# COPY: ld.global.v4.b32
# COPY: st.global.v4.b32
# COPY-GENERAL-NOT: ld.global.v4
# COPY-GENERAL: ld.global.b32
# COPY-GENERAL-NOT: ld.global.v4

# A descriptor made in the kernel from an aligned pointer and constant
# strides: TMA on sm_90a, rows counted by an integer of any value.
# RUN: %kilnc compile %s -n rows_dot -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, rows=i32, BM=64" --aligned-pointers --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TMA
# RUN: %kilnc compile %s -n rows_dot -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, rows=i32, BM=64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TMA-GENERAL
# TMA: tensormap.replace.tile.global_address
# TMA: cp.async.bulk.tensor.2d
# TMA-GENERAL-NOT: cp.async.bulk.tensor

# Exclusive with the variants that assume the integers too.
# RUN: not %kilnc compile %s -n block_copy -s "src=*fp32, dst=*fp32, n=i32, BLOCK=512" --aligned-pointers --aligned --arch sm_90a -o %t/x.cubin 2>&1 | FileCheck %s --check-prefix=BOTH
# BOTH: error: --aligned-pointers assumes nothing of the integers; --aligned assumes them divisible by 16: give one of the two

import triton
import triton.language as tl


@triton.jit
def block_copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if (tl.program_id(0) + 1) * BLOCK <= n:
        tl.store(dst + offs, tl.load(src + offs))
    else:
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


@triton.jit
def rows_dot(a_ptr, b_ptr, c_ptr, rows, BM: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[rows, 256], strides=[256, 1], block_shape=[BM, 64])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[64, 256], strides=[256, 1], block_shape=[64, 64])
    acc = tl.zeros((BM, 64), dtype=tl.float32)
    for k in range(0, 256, 64):
        acc = tl.dot(a_desc.load([tl.program_id(0) * BM, k]), b_desc.load([0, k]).T, acc)
    offs = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, 64)
    tl.store(c_ptr + offs[:, None] * 64 + cols[None, :], acc, mask=offs[:, None] < rows)
