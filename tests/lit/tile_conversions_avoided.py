# Three ways kiln-assign-layouts avoids moving a whole tile between
# layouts through shared memory (FLA's backward kernels did all three):
# a tile summed whole (tl.sum without an axis) is flattened where its
# elements are, each thread's registers becoming the 1-D result's
# (reshape with allow_reorder); arithmetic over broadcasts of vectors
# (`exp2(g[:, None] - g[None, :])`) read in a dot's accumulator layout is
# computed there, over the vectors converted; and a widened tile read there
# (`k.to(tl.float32)`) is converted before it is widened.
# RUN: %kilnc compile %s -n summed_whole -s "x_ptr=*bf16:16, y_ptr=*bf16:16, out_ptr=*fp32" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SUM
# RUN: %kilnc compile %s -n decayed -s "a_ptr=*bf16:16, b_ptr=*bf16:16, g_ptr=*fp32:16, out_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=DECAY
# RUN: %kilnc compile %s -n widened -s "a_ptr=*bf16:16, b_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WIDE
import triton
import triton.language as tl


# x and y are read down their columns: flattened in row-major order, their
# product's elements would all change threads.
# SUM-NOT: kiln_gpu.convert_layout
# SUM: kiln.reshape %{{.*}} {allow_reorder = true} : tensor<64x64xf32, #kiln_gpu.blocked<{{.*}}>> -> tensor<4096xf32, #kiln_gpu.blocked<{sizePerThread = [32], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
# SUM-NOT: kiln_gpu.convert_layout
@triton.jit
def summed_whole(x_ptr, y_ptr, out_ptr):
    r = tl.arange(0, 64)
    tile = r[:, None] + r[None, :] * 64
    x = tl.load(x_ptr + tile)
    y = tl.load(y_ptr + tile)
    tl.store(out_ptr, tl.sum(x.to(tl.float32) * y.to(tl.float32)))


# The decays' vector is converted to the accumulator's two slices; no
# 64 x 64 tile is converted into the accumulator's layout.
# DECAY-DAG: kiln_gpu.convert_layout %{{.*}} : tensor<64xf32, {{.*}}> -> tensor<64xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma
# DECAY-DAG: kiln_gpu.convert_layout %{{.*}} : tensor<64xf32, {{.*}}> -> tensor<64xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma
# DECAY-NOT: -> tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>{{$}}
# DECAY: kiln_gpu.shared_dot
@triton.jit
def decayed(a_ptr, b_ptr, g_ptr, out_ptr):
    r = tl.arange(0, 64)
    tile = r[:, None] * 64 + r[None, :]
    g = tl.load(g_ptr + r)
    acc = tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile))
    tl.store(out_ptr + tile, acc * tl.exp2(g[:, None] - g[None, :]))


# WIDE: %[[K:.*]] = kiln_gpu.convert_layout %{{.*}} : tensor<64x64xbf16, #kiln_gpu.blocked<{{.*}}>> -> tensor<64x64xbf16, #kiln_gpu.mma
# WIDE-NEXT: arith.extf %[[K]] : tensor<64x64xbf16, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>> to tensor<64x64xf32, #kiln_gpu.mma
# WIDE-NOT: kiln_gpu.convert_layout %{{.*}} : tensor<64x64xf32
@triton.jit
def widened(a_ptr, b_ptr, k_ptr, out_ptr):
    r = tl.arange(0, 64)
    tile = r[:, None] * 64 + r[None, :]
    acc = tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile))
    k = tl.load(k_ptr + tile)
    tl.store(out_ptr + r, tl.sum(acc * k.to(tl.float32), axis=1))
