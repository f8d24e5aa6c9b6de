# A two-stage loop of one mma.sync dot takes rings of one slot, refilled
# behind the barrier after the dot read it, where two slots would leave an
# SM fewer blocks: a decode GEMM's 16 x 256 x 128 tiles over 8 warps (the
# fused MoE config SGLang and vLLM tune for small batches) need 136 KB of
# rings with two slots, one block an SM, and 68 KB with one, two blocks, as
# Triton's. Smaller tiles keep both slots (copies a whole iteration ahead).
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, K=i32:16, BN=256, BK=128, num_warps=8, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=DECODE
# RUN: %kilnc compile %s -n gemm -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, K=i32:16, BN=64, BK=64, num_warps=4, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SMALL
import triton
import triton.language as tl

# DECODE: kiln_gpu.local_alloc {{.*}} : <1x16x128xbf16
# DECODE: kiln_gpu.local_alloc {{.*}} : <1x128x256xbf16
# DECODE: scf.for
# DECODE: kiln_gpu.shared_dot
# DECODE-NEXT: kiln_gpu.barrier
# DECODE: kiln_gpu.async_copy
# SMALL: kiln_gpu.local_alloc {{.*}} : <2x16x64xbf16
# SMALL: kiln_gpu.local_alloc {{.*}} : <2x64x64xbf16


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, K, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, 16)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((16, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * 4096 + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * 4096 + rn[None, :], acc)
