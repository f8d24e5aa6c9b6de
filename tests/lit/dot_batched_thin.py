# A batched tl.dot thinner than the mma.sync tile (here [4, 4, 64] by
# [4, 64, 4], Transformer Engine mHC backward's shape) stays one kiln.dot
# and is not padded. The batched mma layout holds it repeated: its lanes and
# registers past the 4 rows and 4 columns hold copies, with zero bases. The
# front end used to repeat a's rows and b's columns up to 16, which built
# every copy in registers (TE's backward: 4.8 KB of spills, 0.09 of Triton
# 3.6; 56 bytes and 0.59 now).
# RUN: %kilnc compile %s -n thin -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, num_warps=1" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=KILN
# RUN: %kilnc compile %s -n thin -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, num_warps=1" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n thin -s "a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16, num_warps=1" --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# KILN-NOT: kiln.reduce
# KILN: kiln.dot {{.*}} : tensor<4x4x64xbf16> * tensor<4x64x4xbf16> -> tensor<4x4x4xf32>
# KILN-NOT: kiln.reduce
# GPU: kiln.dot {{.*}} -> tensor<4x4x4xf32, #kiln_gpu.mma<{warpsPerCTA = [1, 1, 1]}>>
# PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# PTX-NOT: st.local
# PTX-NOT: ld.local


@triton.jit
def thin(a_ptr, b_ptr, c_ptr):
    rb = tl.arange(0, 4)[:, None, None]
    rm = tl.arange(0, 4)[None, :, None]
    rn = tl.arange(0, 4)[None, None, :]
    rk = tl.arange(0, 64)
    a = tl.load(a_ptr + rb * 256 + rm * 64 + rk[None, None, :])
    b = tl.load(b_ptr + rb * 256 + rk[None, :, None] * 4 + rn)
    tl.store(c_ptr + rb * 16 + rm * 4 + rn, tl.dot(a, b))
