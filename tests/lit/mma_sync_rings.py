# The mma.sync path's rings and ldmatrix addresses.
#
# Rings of num_stages - 1 slots, Triton's depth on that path (ldmatrix reads
# a slot before the barrier that precedes its refill): 128x128x64 at 4
# stages takes 96 KB (two blocks an SM on sm_90, where 128 KB left one),
# 128x256x64 at 3 stages two slots; wgmma keeps num_stages (its reads stay
# in flight into the next iteration).
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=4" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=SHORT
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=4" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=SHORT
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=256, BK=64, num_warps=8, num_stages=3" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=WIDE
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=4" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WGMMA
#
# With many fragments a k-tile (128x128x128 over 4 warps: 8 k steps of 4 a
# and 8 b tiles a warp), one address register per k step for a, its other
# row tiles at constant offsets (32 rows of 128-byte swizzled lines apart:
# 4096 bytes, whole swizzle periods), instead of an address each (604 bytes
# of spills on plain sm_90; 0.50 of Triton's mma.sync path on the H200, now
# 0.67 without spills).
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=128, num_warps=4, num_stages=4" --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=SHARED
#
# b's fragments two n-tiles an ldmatrix.x4 where a warp has at most two
# rows of mma tiles (each b fragment then feeds one or two mma.syncs:
# attention's 16- and 32-row warp tiles), for b row-major (.trans) and b read through tl.trans (k-major
# lines, as attention's k); with four rows of tiles (64x64 a warp), one
# n-tile an ldmatrix.x2.
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=16, BN=64, BK=32, num_warps=1, num_stages=3" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PAIRED
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=16, BN=64, BK=32, B_T=True, num_warps=1, num_stages=3" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PAIRED-BT
# RUN: %kilnc compile %s -n matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, num_warps=4, num_stages=4" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SINGLE
import triton
import triton.language as tl

# Per k step of 16 (BK = 32: two), one a fragment and four pairs of b
# tiles, lanes 16-31 addressing the tile 8 columns further.
# PAIRED-NOT: ldmatrix.sync.aligned.m8n8.x2
# PAIRED-COUNT-8: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
# PAIRED-NOT: ldmatrix.sync.aligned.m8n8.x2
# PAIRED-BT-NOT: ldmatrix.sync.aligned.m8n8.x2
# PAIRED-BT-COUNT-10: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# PAIRED-BT-NOT: ldmatrix.sync.aligned.m8n8.x2
# SINGLE-NOT: ldmatrix.sync.aligned.m8n8.x4.trans
# SINGLE: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
# SINGLE-NOT: ldmatrix.sync.aligned.m8n8.x4.trans

# SHORT: kiln_gpu.buffer_bytes = 98304
# SHORT: kiln_gpu.local_alloc {{.*}} <3x128x64xf16
# SHORT: kiln_gpu.local_alloc {{.*}} <3x64x128xf16
# WIDE: kiln_gpu.local_alloc {{.*}} <2x128x64xf16
# WIDE: kiln_gpu.local_alloc {{.*}} <2x64x256xf16
# WGMMA: kiln_gpu.local_alloc {{.*}} <4x128x64xf16
# WGMMA: kiln_gpu.local_alloc {{.*}} <4x64x128xf16
# SHARED: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [[[A:%r[0-9]+]]];
# SHARED-NEXT: // end inline asm
# SHARED-NEXT: add.s32 {{%r[0-9]+}}, [[A]], 4096;
# SHARED: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# SHARED-NEXT: // end inline asm
# SHARED-NEXT: add.s32 {{%r[0-9]+}}, [[A]], 8192;
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           B_T: tl.constexpr = False):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    # B_T: b stored N x K, read through tl.trans (stride_bk then steps n).
    if B_T:
        b_ptrs = b_ptr + rn[:, None] * stride_bk + rk[None, :]
    else:
        b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        if B_T:
            b = tl.trans(tl.load(b_ptrs))
        else:
            b = tl.load(b_ptrs)
        acc = tl.dot(tl.load(a_ptrs), b, acc)
        a_ptrs += BK
        b_ptrs += BK if B_T else BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))
