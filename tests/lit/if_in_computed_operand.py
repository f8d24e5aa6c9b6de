# An `if` in the computation of a dot operand from a tile loaded in the
# loop (GPT-QModel's GGUF Q4_K GEMMs: `if subblock % 2 == 0: q = packed &
# 0x0F else: q = packed >> 4`) does not keep kiln-pipeline-dots from the
# loop: nothing in it touches memory, so it computes in place from the tile
# read back out of its ring, which cp.async fills ahead, as without the
# `if`. On sm_80 and sm_90a; at 8 x 16 (a decode step, the thin dot padded
# to 16) the bytes' 16-byte lines are too short for a ring and only x gets
# one, which the `if` kept from it too.
# RUN: %kilnc compile %s -n nibble_select_matmul -s "x_ptr=*fp16:16, q_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=32, BN=64, num_warps=4, num_stages=3" --arch sm_80 --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n nibble_select_matmul -s "x_ptr=*fp16:16, q_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=32, BN=64, num_warps=4, num_stages=3" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n nibble_select_matmul -s "x_ptr=*fp16:16, q_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=8, BN=16, num_warps=2, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=DECODE
import triton
import triton.language as tl

# CHECK: kiln_gpu.async_copy {{.*}} : tensor<32x64x!kiln.ptr<i8>
# CHECK: scf.for
# CHECK: kiln_gpu.local_load {{.*}} -> tensor<32x64xi8
# CHECK: scf.if
# CHECK: kiln_gpu.async_copy {{.*}} : tensor<32x64x!kiln.ptr<i8>
# DECODE: kiln_gpu.async_copy {{.*}} : tensor<8x32x!kiln.ptr<f16>
# DECODE: scf.for
# DECODE: kiln_gpu.async_copy {{.*}} : tensor<8x32x!kiln.ptr<f16>
# DECODE: scf.if


@triton.jit
def nibble_select_matmul(x_ptr, q_ptr, s_ptr, out_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for step in range(0, K // 32):
        rk = step * 32 + tl.arange(0, 32)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        rows = (step // 2) * 32 + tl.arange(0, 32)
        packed = tl.load(q_ptr + rows[:, None] * N + rn[None, :])
        if step % 2 == 0:
            q = packed & 0x0F
        else:
            q = packed >> 4
        s = tl.load(s_ptr + step * N + rn)
        w = q.to(tl.float16) * s[None, :] - 8.0 * s[None, :]
        acc += tl.dot(x, w)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
