# The kernel ABI of a descriptor parameter (docs/architecture.md): a 128-byte,
# 64-byte-aligned tensor map by value, the base (16-byte aligned), the i32
# extents and the i64 strides; then the other parameters. The fallback
# lowering reads everything but the tensor map, with masked accesses. On
# sm_90a, with extents in whole 16-byte chunks (`:16`), the store goes
# through shared memory and the tensor map (TMA, which writes whole chunks).
# RUN: %kilnc compile %s -n scale -s "tensordesc<fp32[32,64]>, tensordesc<fp32[32,64]>, fp32, 32, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefixes=CHECK,MASKED
# RUN: %kilnc compile %s -n scale -s "tensordesc<fp32[32,64]>, tensordesc<fp32[32,64]>, fp32, 32, 64" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefixes=CHECK,MASKED
# RUN: %kilnc compile %s -n scale -s "tensordesc<fp32[32,64]>:16, tensordesc<fp32[32,64]>:16, fp32, 32, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefixes=CHECK,TMA
# Without a hint on the extents, the bounds mask may change within any
# vector along the contiguous dimension: scalar accesses. With `:16` (the
# aligned variant's, which the launcher checks), 16-byte ones.
# RUN: %kilnc compile %s -n scale -s "tensordesc<fp32[32,64]>, tensordesc<fp32[32,64]>, fp32, 32, 64" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SCALAR
# RUN: %kilnc compile %s -n scale -s "tensordesc<fp32[32,64]>:16, tensordesc<fp32[32,64]>:16, fp32, 32, 64" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=VECTOR
# RUN: %kilnc compile %s -n scale -s "tensordesc<fp32[32,64]>, tensordesc<fp32[32,64]>, fp32, 32, 64" --aligned --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=VECTOR
import triton
import triton.language as tl


# CHECK-LABEL: .entry scale(
# CHECK-NEXT: .param .align 64 .b8 scale_param_0[128],
# CHECK-NEXT: .param .u64 .ptr .global .align 16 scale_param_1,
# CHECK-NEXT: .param .u32 scale_param_2,
# CHECK-NEXT: .param .u32 scale_param_3,
# CHECK-NEXT: .param .u64 scale_param_4,
# CHECK-NEXT: .param .u64 scale_param_5,
# CHECK-NEXT: .param .align 64 .b8 scale_param_6[128],
# CHECK-NEXT: .param .u64 .ptr .global .align 16 scale_param_7,
# CHECK: .param .f32 scale_param_12
# CHECK-NOT: scale_param_0
# CHECK: ld.global
# MASKED: st.global
# TMA-NOT: st.global
# TMA: st.shared.v4.b32
# TMA: fence.proxy.async.shared::cta
# TMA-NEXT: // end inline asm
# TMA-NEXT: bar.sync 0;
# TMA: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
# TMA: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
# TMA: cp.async.bulk.commit_group
# TMA: cp.async.bulk.wait_group.read 0
# SCALAR-NOT: ld.global.v4
# SCALAR-NOT: st.global.v4
# VECTOR: ld.global.v4.b32
# VECTOR: st.global.v4.b32
@triton.jit
def scale(src, dst, alpha, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    dst.store([m, n], src.load([m, n]) * alpha)
