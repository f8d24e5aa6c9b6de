# A store whose addresses let one instruction take fewer elements than the
# loaded value's layout gives each thread is stored from a layout of that
# many a thread, converted through shared memory, so a warp's lanes write
# neighbouring elements (vLLM's paged KV-cache write: 0.42x Triton before).
#
# `scatter`: 1024 bf16 loaded 16 bytes a thread, stored through offsets
# whose contiguity is unknown (a runtime x splits each row): one element a
# thread, lanes along the row.
# RUN: %kilnc compile %s -n scatter -s "*bf16:16, *bf16:16, i32:16, i32, 1024" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SCATTER
# SCATTER: kiln.load {{.*}} : (tensor<1024x!kiln.ptr<bf16>, #kiln_gpu.blocked<{sizePerThread = [8]
# SCATTER: kiln_gpu.convert_layout {{.*}} -> tensor<1024xbf16, #kiln_gpu.blocked<{sizePerThread = [1]
# SCATTER: kiln.store {{.*}} : tensor<1024x!kiln.ptr<bf16>, #kiln_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32]
# RUN: %kilnc compile %s -n scatter -s "*bf16:16, *bf16:16, i32:16, i32, 1024" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SCATTER-PTX
# SCATTER-PTX: ld.global.v4.b32
# SCATTER-PTX-NOT: ld.global
# SCATTER-PTX: st.shared.v4.b32
# SCATTER-PTX: bar.sync
# SCATTER-PTX-COUNT-8: st.global.b16
# SCATTER-PTX-NOT: st.global
#
# `widen`: bf16 widened and stored as fp32 through aligned pointers. A
# 1-D layout of 8 a thread (one 16-byte bf16 load) would store two 16-byte
# halves of every sector; converting before the store costs more than that
# (measured on Liger's RMSNorm backward and Mamba-2's state passing). The
# layout holds what one fp32 store takes instead, 4 a thread: 8-byte loads
# and 16-byte stores, every sector whole, nothing converted (Thunder's
# cross-entropy forward: 0.79 -> 0.98 of Triton).
# RUN: %kilnc compile %s -n widen -s "*bf16:16, *fp32:16, 1024" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WIDEN
# RUN: %kilnc compile %s -n widen -s "*bf16:16, *fp32:16, 1024" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WIDEN-PTX
# WIDEN-NOT: convert_layout
# WIDEN: kiln.store {{.*}} : tensor<1024x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [4]
# WIDEN-PTX-COUNT-2: ld.global.v2.b32
# WIDEN-PTX-NOT: ld.global
# WIDEN-PTX-COUNT-2: st.global.v4.b32
# WIDEN-PTX-NOT: st.global
#
# `paged`: vLLM's key-cache addresses (head, 16-byte piece, block slot),
# deeper index math than a quick look follows: still recomputed in the
# store's layout (its pointers are not moved through shared memory).
# RUN: %kilnc compile %s -n paged -s "*bf16:16, *bf16:16, i32:16, i32:16, i32, 1024" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=PAGED
# PAGED: kiln.load {{.*}}sizePerThread = [8]
# PAGED: kiln_gpu.convert_layout {{.*}} : tensor<1024xbf16, {{.*}} -> tensor<1024xbf16
# PAGED-NOT: convert_layout
# PAGED: kiln.store {{.*}} : tensor<1024x!kiln.ptr<bf16>, #kiln_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32]
#
# `aligned`: the same copy through addresses known contiguous and aligned
# keeps the load's layout: nothing to convert.
# RUN: %kilnc compile %s -n aligned -s "*bf16:16, *bf16:16, 1024" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=ALIGNED
# ALIGNED-NOT: convert_layout
# ALIGNED: kiln.store {{.*}} : tensor<1024x!kiln.ptr<bf16>, #kiln_gpu.blocked<{sizePerThread = [8]
#
# `row_stats`: a [4, 1] row statistic of a tile stored beside it holds one
# element a thread however wide the tile's layout: stored where it is.
# RUN: %kilnc compile %s -n row_stats -s "*bf16:16, *fp32:16, i32:16, 4, 1024" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=STATS
# STATS-NOT: convert_layout
import triton
import triton.language as tl


@triton.jit
def scatter(src, dst, stride, x, n: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, n)
    v = tl.load(src + row * stride + i)
    tl.store(dst + (i // x) * (x * 16) + i % x + row * x, v)


@triton.jit
def widen(src, dst, n: tl.constexpr):
    i = tl.program_id(0) * n + tl.arange(0, n)
    tl.store(dst + i, tl.load(src + i).to(tl.float32))


@triton.jit
def paged(src, cache, head_size, block_size, x, n: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(src + token).to(tl.int32)
    i = tl.arange(0, n)
    head = i // head_size
    piece = (i % head_size) // x
    target = ((slot // block_size) * (n // x) * block_size * x + head * (head_size // x) * block_size * x +
              piece * block_size * x + (slot % block_size) * x + (i % head_size) % x)
    tl.store(cache + target, tl.load(src + token * n + i))


@triton.jit
def aligned(src, dst, n: tl.constexpr):
    i = tl.program_id(0) * n + tl.arange(0, n)
    tl.store(dst + i, tl.load(src + i))


@triton.jit
def row_stats(src, out, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    x = tl.load(src + rows[:, None] * stride + tl.arange(0, BN)[None, :]).to(tl.float32)
    tl.store(out + rows[:, None], tl.sum(x, axis=1, keep_dims=True))
