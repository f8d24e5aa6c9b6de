# A dot operand that is the transpose of a loaded tile (`tl.load(...).T`,
# and what tensor descriptors' `desc.load(...).T` lowers to) is pipelined
# too: kiln-pipeline-dots loads it through transposed pointers, and its ring
# holds the tile K-contiguous (nvmma_shared transposed), which wgmma reads
# with a K-major descriptor and mma.sync with ldmatrix.
# RUN: %kilnc compile %s -n qk -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n qk -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n qk -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SM80
# fp8 operands must be K-contiguous for wgmma: the transposed tile is (it is
# loaded through transposed pointers), so the dot takes wgmma, not mma.sync
# (layout assignment looks through the transpose as the pipeliner does).
# RUN: %kilnc compile %s -n qk -s "*fp8e4nv:16, *fp8e4nv:16, *fp32:16, i32:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FP8
import triton
import triton.language as tl

# GPU: kiln_gpu.local_alloc {{.*}} <3x64x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# GPU: scf.for
# GPU-DAG: kiln_gpu.async_copy
# GPU-DAG: kiln_gpu.shared_dot
# GPU: scf.yield
# GPU-NOT: kiln.dot
# PTX: cp.async.cg.shared.global
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# SM80: ldmatrix.sync.aligned.m8n8.x2.shared.b16
# SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# FP8: cp.async.cg.shared.global
# FP8: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
# FP8-NOT: mma.sync


@triton.jit
def qk(q_ptr, k_ptr, out_ptr, n):
    rm = tl.arange(0, 64)
    rd = tl.arange(0, 64)
    q = tl.load(q_ptr + rm[:, None] * 64 + rd[None, :])
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 64):
        rn = start + tl.arange(0, 64)
        k = tl.load(k_ptr + rn[:, None] * 64 + rd[None, :], mask=rn[:, None] < n, other=0.0)
        acc += tl.dot(q, k.T)
    tl.store(out_ptr + rm[:, None] * 64 + rd[None, :], acc)
