# Dots in one block whose operands are ready before the first of them, none
# reading another's result before the last, are staged together by
# kiln-stage-dots: each distinct operand written to one tile, one proxy
# fence and barrier, the wgmmas issued without waiting and waited for once
# after the last (here: x and y are stored after both dots; a store of x
# between them would keep them apart). FLA's backward kernel (do @ v^T, do @ h, v @ dh) staged
# them one at a time, each waited for before the next, with the later
# operands held in registers through the earlier dots.
# RUN: %kilnc compile %s -n shared_operand -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, x_ptr=*fp32:16, y_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n shared_operand -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, x_ptr=*fp32:16, y_ptr=*fp32:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# A dot that reads the other's result is staged alone, after it.
# RUN: %kilnc compile %s -n chained -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, x_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=CHAIN
import triton
import triton.language as tl


# The operands, loaded here, are copied into their tiles where they are
# loaded (stage_dots_copy_at_loads.py); one wait for the three.
# GPU: %[[A:.*]] = kiln_gpu.local_alloc {{.*}}: <64x64xf16
# GPU-NEXT: kiln_gpu.async_copy %{{.*}}, %[[A]]
# GPU: %[[B:.*]] = kiln_gpu.local_alloc
# GPU-NEXT: kiln_gpu.async_copy %{{.*}}, %[[B]]
# GPU: %[[C:.*]] = kiln_gpu.local_alloc
# GPU-NEXT: kiln_gpu.async_copy %{{.*}}, %[[C]]
# GPU-NEXT: kiln_gpu.async_commit_group
# GPU-NEXT: kiln_gpu.async_wait {pending = 0 : i32}
# GPU-NEXT: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU-NEXT: %[[X:.*]] = kiln_gpu.shared_dot %[[A]], %[[B]], %{{.*}} {async}
# GPU-NEXT: %[[Y:.*]] = kiln_gpu.shared_dot %[[A]], %[[C]], %{{.*}} {async}
# GPU-NEXT: kiln_gpu.dot_wait %[[X]], %[[Y]] {pending = 0 : i32}
# GPU-NEXT: kiln_gpu.barrier
# GPU-NOT: kiln_gpu.local_alloc
# GPU-NOT: kiln_gpu.local_store
# GPU-NOT: kiln.dot
# PTX: wgmma.mma_async
# PTX: wgmma.commit_group
# PTX-NOT: wgmma.wait_group
# PTX: wgmma.mma_async
# PTX: wgmma.commit_group
# PTX-NOT: wgmma.mma_async
# PTX: wgmma.wait_group.sync.aligned 0
@triton.jit
def shared_operand(a_ptr, b_ptr, c_ptr, x_ptr, y_ptr):
    r = tl.arange(0, 64)
    tile = r[:, None] * 64 + r[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    c = tl.load(c_ptr + tile)
    x = tl.dot(a, b)
    y = tl.dot(a, c)
    tl.store(x_ptr + tile, x)
    tl.store(y_ptr + tile, y)


# CHAIN: kiln_gpu.fence_async_shared
# CHAIN-NEXT: kiln_gpu.barrier
# CHAIN-NEXT: %[[X:.*]] = kiln_gpu.shared_dot
# CHAIN-NOT: {async}
# CHAIN-NOT: kiln_gpu.barrier
# The second dot's opening barrier closes the first (whose tiles no op
# between writes): kiln-drop-closing-barriers.
# CHAIN: kiln_gpu.fence_async_shared
# CHAIN-NEXT: kiln_gpu.barrier
# CHAIN-NEXT: kiln_gpu.shared_dot
# CHAIN-NOT: dot_wait
@triton.jit
def chained(a_ptr, b_ptr, c_ptr, x_ptr):
    r = tl.arange(0, 64)
    tile = r[:, None] * 64 + r[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    c = tl.load(c_ptr + tile)
    x = tl.dot(a, b)
    tl.store(x_ptr + tile, tl.dot(x.to(tl.float16), c))


# An operand that is the transpose of another operand of the group (FLA's
# do @ v^T beside v @ dh) reads a memdesc_trans view of that one's tile:
# one tile of v, not two.
# RUN: %kilnc compile %s -n transposed_operand -s "a_ptr=*fp16:16, v_ptr=*fp16:16, c_ptr=*fp16:16, x_ptr=*fp32:16, y_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=VIEW
# VIEW-LABEL: func.func @transposed_operand
# VIEW-NOT: kiln_gpu.local_alloc {{.*}} : <128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# VIEW: %[[VT:.*]] = kiln_gpu.memdesc_trans %[[V:[0-9]+]] : <64x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128>> -> <128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# VIEW-NEXT: kiln_gpu.async_wait {pending = 0 : i32}
# VIEW-NEXT: kiln_gpu.fence_async_shared
# VIEW-NEXT: kiln_gpu.barrier
# VIEW-NEXT: kiln_gpu.shared_dot %{{.*}}, %[[VT]], {{.*}} {async}
# VIEW-NEXT: kiln_gpu.shared_dot %[[V]], %{{.*}} {async}
@triton.jit
def transposed_operand(a_ptr, v_ptr, c_ptr, x_ptr, y_ptr):
    r = tl.arange(0, 64)
    w = tl.arange(0, 128)
    a = tl.load(a_ptr + r[:, None] * 128 + w[None, :])
    v = tl.load(v_ptr + r[:, None] * 128 + w[None, :])
    c = tl.load(c_ptr + w[:, None] * 64 + r[None, :])
    x = tl.dot(a, tl.trans(v))
    y = tl.dot(v, c)
    tl.store(x_ptr + r[:, None] * 64 + r[None, :], x)
    tl.store(y_ptr + r[:, None] * 64 + r[None, :], y)
