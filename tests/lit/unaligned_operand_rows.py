# A dot operand whose rows are contiguous but start at a loaded offset (a
# jagged tensor's rows: FBGEMM's jagged flash attention reads k so) allows
# no vector, so its cp.async copies move 4 bytes at a time. In the rank's
# layout, several elements a thread ([1, 4]), a warp's copy wrote 4 bytes
# into each of 8 lanes' 16-byte pieces across 4 rows: a piece of every
# sector it touched. The operand gets one element a thread with the lanes
# along its rows instead, so each warp copy covers whole sectors (jagged
# flash attention: 0.75 -> 0.82 of Triton). a, aligned, keeps 16-byte copies.
# RUN: %kilnc compile %s -n jagged_rows -s "a_ptr=*fp32:16, b_ptr=*fp32:16, offsets=*i64:16, c_ptr=*fp32:16, K=i32:16, stride_bk=i32, BM=32, BN=32, BK=32" --arch sm_90a --emit gpu -o - | FileCheck %s

# CHECK: kiln_gpu.async_copy {{.*}} {kiln_gpu.vec = 4 : i32} : tensor<32x32x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [1, 4]
# CHECK: kiln_gpu.async_copy {{.*}} {kiln_gpu.vec = 1 : i32} : tensor<32x32x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1]
import triton
import triton.language as tl


@triton.jit
def jagged_rows(a_ptr, b_ptr, offsets, c_ptr, K, stride_bk, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    start = tl.load(offsets + tl.program_id(0))
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + start + (k + rk)[:, None] * stride_bk + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
