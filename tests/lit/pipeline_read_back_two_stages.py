# In a two-stage loop, a tile read back into registers (an operand computed
# from it: FLA's chunk_h scales k by exp2 of its gate before k @ v) gets a
# ring of both slots, not one slot fewer than the stages as at three or
# more: where no dot stays in flight across iterations, the next
# iteration's copies go right after the iteration's top barrier, into the
# slot the previous iteration read back, and have the whole iteration to
# land. With one slot they waited for the reads and the staging barrier
# (FLA's chunk_h with vector decays on the H200: 0.94 of Triton).
# RUN: %kilnc compile %s -n decayed -s "k_ptr=*fp16:16, g_ptr=*fp32:16, v_ptr=*fp16:16, h_ptr=*fp32:16, T=i32, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s
# At three stages the read-back rings keep a slot fewer (2 of 3).
# RUN: %kilnc compile %s -n decayed -s "k_ptr=*fp16:16, g_ptr=*fp32:16, v_ptr=*fp16:16, h_ptr=*fp32:16, T=i32, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=THREE
# Off, to compare code with and without it: one slot.
# RUN: %kilnc compile %s -n decayed -s "k_ptr=*fp16:16, g_ptr=*fp32:16, v_ptr=*fp16:16, h_ptr=*fp32:16, T=i32, num_stages=2" --arch sm_90a --emit gpu -o - --kiln-full-read-back-rings=false | FileCheck %s --check-prefix=OFF
import triton
import triton.language as tl

# CHECK-DAG: kiln_gpu.local_alloc {{.*}} : <2x64x64xf32
# CHECK-DAG: kiln_gpu.local_alloc {{.*}} : <2x64x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
# CHECK: scf.for {{.*}} iter_args({{.*}}%[[READ:arg[0-9]+]] = %c0_i32, %[[WRITE:arg[0-9]+]] = %c1_i32
# CHECK-NEXT: arith.addi
# CHECK-NEXT: kiln_gpu.async_wait {pending = 0 : i32}
# CHECK-NEXT: kiln_gpu.barrier
# CHECK-NOT: kiln_gpu.local_load
# CHECK: kiln_gpu.memdesc_index {{.*}}[%[[WRITE]]]
# CHECK: kiln_gpu.async_copy
# CHECK: kiln_gpu.async_commit_group
# CHECK: kiln_gpu.memdesc_index {{.*}}[%[[READ]]]
# CHECK-NEXT: kiln_gpu.local_load
# CHECK: kiln_gpu.shared_dot
# THREE-DAG: kiln_gpu.local_alloc {{.*}} : <2x64x64xf32
# THREE-DAG: kiln_gpu.local_alloc {{.*}} : <3x64x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>
# OFF: kiln_gpu.local_alloc {{.*}} : <1x64x64xf32
@triton.jit
def decayed(k_ptr, g_ptr, v_ptr, h_ptr, T):
    r = tl.arange(0, 64)
    h = tl.zeros((64, 64), dtype=tl.float32)
    for t in range(0, T, 64):
        k = tl.load(k_ptr + r[:, None] + (t + r[None, :]) * 64)
        g = tl.load(g_ptr + r[:, None] + (t + r[None, :]) * 64)
        v = tl.load(v_ptr + (t + r[:, None]) * 64 + r[None, :])
        h = h * 0.5 + tl.dot((k * tl.exp2(g)).to(tl.float16), v)
    tl.store(h_ptr + r[:, None] * 64 + r[None, :], h)
