# A rank no load, store or dot uses takes its layout from a reshape into a
# rank that one does (Transformer Engine's mHC forward: an [M, C, 4] result
# computed in 3-D, stored reshaped to [M, 4C]): the store's 8-element runs
# split as [2, 4] per thread, so the reshape keeps every element in its
# thread and the store stays 16 bytes wide. The default 3-D layout (4
# lanes along the 4) stored 2 bytes at a time after a trip through shared
# memory.
# RUN: %kilnc compile %s -n interleaved -s "x_ptr=*bf16:16, w_ptr=*fp32:16, out_ptr=*bf16:16, M=2, C=256, num_warps=1" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n interleaved -s "x_ptr=*bf16:16, w_ptr=*fp32:16, out_ptr=*bf16:16, M=2, C=256, num_warps=1" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# Beside a batched dot (TE's mHC backward: [M, 4, 4] gradients of tiles
# reshaped from 2-D loads) the same holds for the shapes that do not
# broadcast into the dot's result, which keeps its mma layout.
# RUN: %kilnc compile %s -n beside_batched_dot -s "g_ptr=*bf16:16, x_ptr=*bf16:16, h_ptr=*fp32:16, out_ptr=*bf16:16, acc_ptr=*fp32:16, M=4, C=64, num_warps=1" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=DOT
import triton
import triton.language as tl

# DOT: kiln.dot {{.*}} -> tensor<4x4x4xf32, #kiln_gpu.mma
# DOT-NOT: kiln_gpu.convert_layout {{.*}} : tensor<4x64x4x
# DOT: kiln.reshape {{.*}} : tensor<4x64x4xbf16, #kiln_gpu.blocked<{sizePerThread = [1, 2, 4], threadsPerWarp = [1, 32, 1], warpsPerCTA = [1, 1, 1], order = [2, 1, 0]}>> -> tensor<4x256xbf16, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>>

# CHECK: kiln.reshape {{.*}} : tensor<2x256x4xbf16, #kiln_gpu.blocked<{sizePerThread = [1, 2, 4], threadsPerWarp = [1, 32, 1], warpsPerCTA = [1, 1, 1], order = [2, 1, 0]}>> -> tensor<2x1024xbf16, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>>
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln.store
# PTX-COUNT-8: st.global.v4.b32
# PTX-NOT: st.global


@triton.jit
def interleaved(x_ptr, w_ptr, out_ptr, M: tl.constexpr, C: tl.constexpr):
    rm = tl.arange(0, M)
    rc = tl.arange(0, C)
    rcn = tl.arange(0, C * 4)
    x = tl.load(x_ptr + rm[:, None] * C + rc[None, :])
    w = tl.load(w_ptr + tl.arange(0, 4))
    out = x[:, :, None].to(tl.float32) * w[None, None, :]
    out = tl.reshape(out.to(tl.bfloat16), (M, C * 4))
    tl.store(out_ptr + rm[:, None] * C * 4 + rcn[None, :], out)


@triton.jit
def beside_batched_dot(g_ptr, x_ptr, h_ptr, out_ptr, acc_ptr, M: tl.constexpr, C: tl.constexpr):
    rm = tl.arange(0, M)
    rcn = tl.arange(0, C * 4)
    offs = rm[:, None] * C * 4 + rcn[None, :]
    g = tl.reshape(tl.load(g_ptr + offs), (M, C, 4))
    x = tl.reshape(tl.load(x_ptr + offs), (M, C, 4))
    acc = tl.dot(tl.trans(x, (0, 2, 1)), g)
    h = tl.load(h_ptr + tl.arange(0, 4))
    # Built from a 2-D tile, as TE's gradient from its output's slices.
    y = tl.load(x_ptr + rm[:, None] * C + tl.arange(0, C)[None, :])
    out = y[:, :, None].to(tl.float32) * h[None, None, :]
    tl.store(out_ptr + offs, tl.reshape(out.to(tl.bfloat16), (M, C * 4)))
    tl.store(acc_ptr + tl.arange(0, M * 16), tl.reshape(acc, (M * 16,)))
