# A persistent loop whose K loop advances carried pointers (`a_ptrs +=
# BLOCK_K * stride`), flattened on sm_90a: each tile's first iteration
# restarts the pointers, which the flattened loop picks with arith.select on
# pointer tensors. Their elements lower as LLVM pointers (the select once
# built kiln pointers into the struct of LLVM ones and failed to lower).
# RUN: %kilnc compile %s -n persistent -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, 128, 128, 64, 132" -w 8 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n persistent -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, 128, 128, 64, 132" -w 8 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# GPU: scf.for
# GPU-SAME: tensor<128x64x!kiln.ptr<f16>
# GPU: arith.select %{{.*}} : tensor<128x64x!kiln.ptr<f16>
# GPU: kiln_gpu.shared_dot
# GPU-NOT: scf.for

# PTX: .entry persistent
# PTX: cp.async.cg.shared.global
# PTX: wgmma.mma_async


@triton.jit
def persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, NUM_SMS: tl.constexpr):
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    offs_k = tl.arange(0, BK)
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=True):
        offs_m = (tile // num_pid_n) * BM + tl.arange(0, BM)
        offs_n = (tile % num_pid_n) * BN + tl.arange(0, BN)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(tl.cdiv(K, BK)):
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
            acc = tl.dot(a, b, acc)
            a_ptrs += BK
            b_ptrs += BK * stride_bk
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
        tl.store(c_ptrs, acc.to(tl.float16))
