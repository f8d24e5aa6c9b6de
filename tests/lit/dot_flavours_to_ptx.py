# The tensor-core flavours of tl.dot (compiler/ir/TensorCoreFlavour.h) in a
# pipelined loop: every instruction takes 32 bytes of K, so tf32 is
# m16n8k8 and int8 and fp8 are m16n8k32 on mma.sync. K-contiguous tiles load
# with ldmatrix (any element size); 32- and 8-bit tiles contiguous along N
# load element by element. wgmma takes tf32 and int8 only with both tiles
# K-contiguous (its transpose bits are for 16-bit types), so mm_nn stays on
# mma.sync on sm_90a and mm_nt goes to wgmma. input_precision="ieee" keeps
# fp32 on the CUDA cores. sm_90's mma.sync has no fp8 of its own (ptxas
# expands it): there each fp8 fragment word is widened to two f16x2 words
# and multiplied by two m16n8k16; sm_89's is native.
# RUN: %kilnc compile %s -n mm_nn -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 64, 64, 32, 0" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=TF32-NN
# RUN: %kilnc compile %s -n mm_nn -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 64, 64, 32, 0" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TF32-NN-90A
# RUN: %kilnc compile %s -n mm_nt -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 64, 64, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TF32-NT-90A
# RUN: %kilnc compile %s -n mm_nn -s "*i8:16, *i8:16, *i32:16, i32:16, 64, 64, 64, 1" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=I8-NN
# RUN: %kilnc compile %s -n mm_nt -s "*i8:16, *i8:16, *i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=I8-NT-90A
# RUN: %kilnc compile %s -n mm_nt -s "*fp8e4nv:16, *fp8e4nv:16, *fp32:16, i32:16, 64, 64, 64" --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=F8-NT-90
# RUN: %kilnc compile %s -n mm_nt -s "*fp8e4nv:16, *fp8e4nv:16, *fp32:16, i32:16, 64, 64, 64" --arch sm_89 --emit ptx -o - | FileCheck %s --check-prefix=F8-NT-89
# RUN: %kilnc compile %s -n mm_ieee -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 64, 64, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=IEEE
import triton
import triton.language as tl

# TF32-NN: cp.async.cg.shared.global
# TF32-NN: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# TF32-NN-NOT: ldmatrix.sync.aligned.m8n8.x2
# TF32-NN: ld.shared.b32
# TF32-NN: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# TF32-NN-90A-NOT: wgmma.mma_async
# TF32-NN-90A: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# TF32-NT-90A: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
# TF32-NT-90A: wgmma.commit_group.sync.aligned
# I8-NN: ld.shared.u8
# I8-NN: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
# I8-NT-90A: wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8
# F8-NT-90: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# F8-NT-90: ldmatrix.sync.aligned.m8n8.x2.shared.b16
# F8-NT-90: cvt.rn.f16x2.e4m3x2
# F8-NT-90: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# F8-NT-90-NOT: m16n8k32
# F8-NT-89: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# F8-NT-89-NOT: cvt.rn.f16x2.e4m3x2
# F8-NT-89: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
# IEEE-NOT: mma.sync
# IEEE: fma.rn.f32


@triton.jit
def mm_nn(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr, INTEGER: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if INTEGER:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * 256 + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * 256 + rn[None, :], acc)


@triton.jit
def mm_nt(a_ptr, bt_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=c_ptr.dtype.element_ty)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(bt_ptr + rn[None, :] * K + (k0 + rk)[:, None])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * 256 + rn[None, :], acc)


@triton.jit
def mm_ieee(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
            BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * 256 + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * 256 + rn[None, :], acc)
