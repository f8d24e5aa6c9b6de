# fp32 dots with input_precision "tf32x3", "bf16x3" and "bf16x6" run on
# mma.sync (compiler/ir/TensorCoreFlavour.h), in a pipelined loop (from the
# cp.async ring) and in a single dot (staged): each operand word splits in
# registers into a high part, the high part clamped to finite values and
# the low part(s); tf32x3 takes three m16n8k8 tf32 products, the bf16
# emulations pack two k steps' tf32 fragments into m16n8k16 bf16 words, with
# three or six products. None of them takes wgmma on sm_90a.
# RUN: %kilnc compile %s -n mm -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 'tf32x3', 64, 64, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=TF32X3
# RUN: %kilnc compile %s -n mm -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 'tf32x3', 64, 64, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TF32X3-90A
# RUN: %kilnc compile %s -n mm -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 'bf16x3', 64, 64, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=BF16X3
# RUN: %kilnc compile %s -n mm -s "*fp32:16, *fp32:16, *fp32:16, i32:16, 'bf16x6', 64, 64, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=BF16X6
# RUN: %kilnc compile %s -n one_dot -s "*fp32:16, *fp32:16, *fp32:16, 'tf32x3'" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=STAGED
# RUN: %kilnc compile %s -n one_dot -s "*fp32:16, *fp32:16, *fp32:16, 'bf16x3'" --arch sm_80 --emit llvm -o - | FileCheck %s --check-prefix=STAGED-BF16
import triton
import triton.language as tl

# TF32X3: cp.async.cg.shared.global
# TF32X3: cvt.rna.tf32.f32
# TF32X3: max.f32
# TF32X3: min.f32
# TF32X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# TF32X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# TF32X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# TF32X3-NOT: fma.rn.f32
# TF32X3-90A-NOT: wgmma
# TF32X3-90A: cvt.rna.tf32.f32
# TF32X3-90A: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# BF16X3: cp.async.cg.shared.global
# BF16X3: cvt.rn.bf16.f32
# BF16X3: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# BF16X3-NOT: m16n8k8
# BF16X6-NOT: wgmma
# BF16X6: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# STAGED-NOT: fma.rn.f32
# STAGED: cvt.rna.tf32.f32
# STAGED: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# STAGED-BF16: fcmp ord float
# STAGED-BF16: fptrunc float {{.*}} to bfloat
# STAGED-BF16: m16n8k16.row.col.f32.bf16.bf16.f32


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, PRECISION: tl.constexpr, BM: tl.constexpr,
       BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * 256 + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * 256 + rn[None, :], acc)


@triton.jit
def one_dot(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr):
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + r[:, None] * 32 + r[None, :], c)
