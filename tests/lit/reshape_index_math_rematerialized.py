# Index math that goes through tl.reshape is recomputed where it is read,
# like other index math: the reshape's operand takes the layout that keeps
# each element of the reader's layout in its thread. AWQ's dequantizer (in
# vLLM and GPTQModel) builds its shifts as an [8] broadcast to [1024, 8] and
# reshaped to [32, 256]; the reshape had taken a layout of 256 registers a
# thread, converted through shared memory twice: 255 registers, 2.8 KB of
# spills and 4096 SASS instructions, now 64 registers and 568 (Triton 552).
# RUN: %kilnc compile %s -n unpack -s "q_ptr=*i32:16, out_ptr=*i32:16" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n unpack -s "q_ptr=*i32:16, out_ptr=*i32:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# The shifts, reshaped from [4, 2] to [8] and from [1024, 8] to [32, 256]
# where the unpacked words are held:
# CHECK: kiln.reshape {{.*}} : tensor<4x2xi32, #kiln_gpu.blocked<{sizePerThread = [4, 2], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>> -> tensor<8xi32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.blocked<{sizePerThread = [4, 8], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>}>>
# CHECK: kiln.reshape {{.*}} : tensor<1024x8xi32, #kiln_gpu.blocked<{sizePerThread = [4, 8], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>> -> tensor<32x256xi32, #kiln_gpu.blocked<{sizePerThread = [1, 32], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>
# The words are converted once, for the store: 128 bytes a thread along its
# rows would write an eighth of each line per warp store, so the store takes
# 16 bytes a thread as Triton's coalesced store does (one barrier).
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln_gpu.convert_layout %{{.*}} : tensor<32x256xi32, #kiln_gpu.blocked<{sizePerThread = [1, 32], {{.*}}>> -> tensor<32x256xi32, #kiln_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32]
# CHECK-NEXT: kiln.store
# PTX: bar.sync
# PTX-NOT: bar.sync
# PTX: st.global.v4.b32


@triton.jit
def unpack(q_ptr, out_ptr):
    rows = tl.arange(0, 32)
    words = tl.load(q_ptr + rows[:, None] * 32 + tl.arange(0, 32)[None, :])
    words = tl.interleave(words, words)
    words = tl.interleave(words, words)
    words = tl.interleave(words, words)
    order = ((tl.arange(0, 2) * 4)[None, :] + tl.arange(0, 4)[:, None]).reshape(8)
    shifts = tl.broadcast_to((order * 4)[None, :], (32 * 32, 8))
    shifts = tl.reshape(shifts, (32, 256))
    nibbles = (words >> shifts) & 0xF
    tl.store(out_ptr + rows[:, None] * 256 + tl.arange(0, 256)[None, :], nibbles)
