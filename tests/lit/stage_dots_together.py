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


# GPU: %[[A:.*]] = kiln_gpu.local_alloc {{.*}}: <64x64xf16
# GPU-NEXT: kiln_gpu.local_store %{{.*}}, %[[A]]
# GPU-NEXT: %[[B:.*]] = kiln_gpu.local_alloc
# GPU-NEXT: kiln_gpu.local_store %{{.*}}, %[[B]]
# GPU-NEXT: %[[C:.*]] = kiln_gpu.local_alloc
# GPU-NEXT: kiln_gpu.local_store %{{.*}}, %[[C]]
# GPU-NEXT: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU-NEXT: %[[X:.*]] = kiln_gpu.shared_dot %[[A]], %[[B]], %{{.*}} {async}
# GPU-NEXT: %[[Y:.*]] = kiln_gpu.shared_dot %[[A]], %[[C]], %{{.*}} {async}
# GPU-NEXT: kiln_gpu.dot_wait %[[X]], %[[Y]] {pending = 0 : i32}
# GPU-NEXT: kiln_gpu.barrier
# GPU-NOT: kiln_gpu.local_alloc
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
# CHAIN-NOT: async
# CHAIN-NEXT: kiln_gpu.barrier
# CHAIN: kiln_gpu.shared_dot
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
