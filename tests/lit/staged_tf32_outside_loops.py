# tf32 dots outside loops on sm_90a (Lightning Attention-2's inter-block
# backward): kiln-assign-layouts gives them wgmma's layout whatever their
# operands' order, since kiln-stage-dots writes each into a K-major tile
# (a loaded one, bf16 converted by `.to(tl.float32)` too, copied where it is
# loaded, by cp.async). An operand
# loaded as fp32 with N contiguous would be copied into its K-major tile one
# 4-byte element at a time (0.63 of Triton on an H200), so its dot keeps
# mma.sync (kiln.dot), while the others take wgmma from cp.async copies
# (0.58 -> 1.15 of Triton with both).
# RUN: %kilnc compile %s -n two_dots -s "do_ptr=*bf16:16, kv_ptr=*fp32:16, dq_ptr=*fp32:16, k_ptr=*bf16:16, dv_ptr=*fp32:16, M=64, D=128, E=128" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n two_dots -s "do_ptr=*bf16:16, kv_ptr=*fp32:16, dq_ptr=*fp32:16, k_ptr=*bf16:16, dv_ptr=*fp32:16, M=64, D=128, E=128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# Alone, such a dot keeps kiln.dot (mma.sync), in the same layout: warps
# along M (Lightning Attention-2's inter-block forward, 1.28 -> 1.32 of
# Triton on an H200).
# RUN: %kilnc compile %s -n n_contiguous -s "k_ptr=*bf16:16, kv_ptr=*fp32:16, dv_ptr=*fp32:16, M=64, D=128, E=128" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ALONE
import triton
import triton.language as tl


# CHECK-LABEL: func.func @two_dots
# do @ kv^T: kv^T loaded with K (e) contiguous, copied by cp.async.
# CHECK: kiln_gpu.async_copy
# CHECK: kiln_gpu.shared_dot
# CHECK-SAME: #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
# k @ kv: kv row-major, N contiguous: mma.sync from registers.
# CHECK: kiln.dot
# CHECK-NOT: kiln_gpu.shared_dot
# PTX: cp.async.cg.shared.global
# PTX: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
# PTX: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
@triton.jit
def two_dots(do_ptr, kv_ptr, dq_ptr, k_ptr, dv_ptr, M: tl.constexpr,
             D: tl.constexpr, E: tl.constexpr):
    rm = tl.arange(0, M)
    rd = tl.arange(0, D)
    re = tl.arange(0, E)
    do = tl.load(do_ptr + rm[:, None] * E + re[None, :]).to(tl.float32)
    kv_trans = tl.load(kv_ptr + rd[None, :] * E + re[:, None])
    dq = tl.dot(do, kv_trans)
    tl.store(dq_ptr + rm[:, None] * D + rd[None, :], dq)
    k = tl.load(k_ptr + rm[:, None] * D + rd[None, :]).to(tl.float32)
    kv = tl.load(kv_ptr + rd[:, None] * E + re[None, :])
    dv = tl.dot(k, kv)
    tl.store(dv_ptr + rm[:, None] * E + re[None, :], dv)


# ALONE-LABEL: func.func @n_contiguous
# ALONE-NOT: kiln_gpu.shared_dot
# ALONE: kiln.dot
# ALONE-SAME: #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>
@triton.jit
def n_contiguous(k_ptr, kv_ptr, dv_ptr, M: tl.constexpr, D: tl.constexpr,
                 E: tl.constexpr):
    rm = tl.arange(0, M)
    rd = tl.arange(0, D)
    re = tl.arange(0, E)
    k = tl.load(k_ptr + rm[:, None] * D + rd[None, :]).to(tl.float32)
    kv = tl.load(kv_ptr + rd[:, None] * E + re[None, :])
    tl.store(dv_ptr + rm[:, None] * E + re[None, :], tl.dot(k, kv))
