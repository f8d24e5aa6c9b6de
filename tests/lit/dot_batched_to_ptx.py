# Batched (3-D) tl.dot runs on mma.sync: the 3-D tensors take the batched
# mma layout (warps along the batch first, then M and N, each batch the 2-D
# m16n8 accumulator), and the staged lowering (compiler/conversion/
# DotToLLVM.cpp) stacks the batches of a and b in shared memory and issues
# one mma.sync per 16x8 tile of every batch. Never wgmma, never the FMA loop.
# RUN: %kilnc compile %s -n bmm -s "*fp16:16, *fp16:16, *fp32:16, i32:16, 2, 64, 32, 32" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=LAYOUT
# RUN: %kilnc compile %s -n bmm -s "*fp16:16, *fp16:16, *fp32:16, i32:16, 2, 64, 32, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=F16
# RUN: %kilnc compile %s -n bmm -s "*fp16:16, *fp16:16, *fp32:16, i32:16, 8, 16, 16, 16" --arch sm_80 -w 8 --emit gpu -o - | FileCheck %s --check-prefix=LAYOUT-W8
# RUN: %kilnc compile %s -n bmm -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 2, 32, 32, 16" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=TF32
# RUN: %kilnc compile %s -n bmm -s "*i8:16, *i8:16, *i32:16, i32:16, 2, 32, 32, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=I8
# fp64 has no tensor-core flavour: the multiply-add loop in a blocked layout.
# RUN: %kilnc compile %s -n bmm -s "*fp64:16, *fp64:16, *fp64:16, i32:16, 2, 16, 16, 16" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=F64
import triton
import triton.language as tl

# LAYOUT: #kiln_gpu.mma<{warpsPerCTA = [2, 2, 1]}>
# LAYOUT: kiln.dot {{.*}} -> tensor<2x64x32xf32, #kiln_gpu.mma<{warpsPerCTA = [2, 2, 1]}>>
# F16-NOT: wgmma
# F16-NOT: fma.rn.f32
# F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# LAYOUT-W8: kiln.dot {{.*}} -> tensor<8x16x16xf32, #kiln_gpu.mma<{warpsPerCTA = [8, 1, 1]}>>
# TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# I8: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
# F64-NOT: kiln_gpu.mma
# F64: kiln.dot {{.*}}#kiln_gpu.blocked


@triton.jit
def bmm(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr, BM: tl.constexpr,
        BN: tl.constexpr, BK: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, BM)[None, :, None]
    rn = tl.arange(0, BN)[None, None, :]
    acc = tl.zeros((B, BM, BN), dtype=c_ptr.dtype.element_ty)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rb * (BM * K) + rm * K + k0 + tl.arange(0, BK)[None, None, :])
        b = tl.load(b_ptr + rb * (K * BN) + (k0 + tl.arange(0, BK)[None, :, None]) * BN + rn)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rb * (BM * BN) + rm * BN + rn, acc)
