# A loop's carried index vector (`offs_k += BK`, cheap to start and to
# step) that the iteration turns into values of other layouts gets a
# carried copy per layout: SGLang's and vLLM's scaled GEMM mask both
# operands with `offs_k < K`, which was converted from the vector's own
# layout into a slice of each operand's, through shared memory with four
# barriers, every iteration (fp8 variant: 21 barriers, now 7; Triton 9).
# RUN: %kilnc compile %s -n masked_k -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl

# The copies, one in a slice of each operand's layout:
# CHECK: scf.for {{.*}} -> ({{.*}}tensor<64xi32, #kiln_gpu.slice<{dim = 0, {{.*}}tensor<64xi32, #kiln_gpu.slice<{dim = 1,
# CHECK-NOT: kiln_gpu.convert_layout {{.*}}xi1
# CHECK: scf.yield


@triton.jit
def masked_k(a_ptr, b_ptr, c_ptr, M, N, K):
    rm = tl.program_id(0) * 64 + tl.arange(0, 64)
    rn = tl.arange(0, 128)
    offs_k = tl.arange(0, 64)
    a_ptrs = a_ptr + rm[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + rn[None, :]
    acc = tl.zeros((64, 128), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, 64)):
        masks_k = offs_k < K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & masks_k[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=masks_k[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        offs_k += 64
        a_ptrs += 64
        b_ptrs += 64 * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
