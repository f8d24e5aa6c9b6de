# `tl.range(..., warp_specialize=True)` on sm_90a: a producer warpgroup past
# num_warps issues the TMA copies of the matmul loop's operands into a
# ring, the num_warps consumer warps wait for each slot (full barrier), run
# wgmma on it and release it (empty barrier, one arrival per consumer
# thread) once the next wgmma's wait shows it read.
# - persistent: the marked loop runs over tiles, the dot loop inside it;
#   the producer keeps only the tile and box arithmetic. The epilogue's TMA
#   store stays with the consumers.
# - inner: the marked loop is the dot loop itself.
# - The kernel starts 32 * (8 + 4) threads with .maxnreg 168 (what 384
#   threads may have); setmaxnreg then gives the producer 40 and the
#   consumers 232. After the split, the consumers' barriers name their 256
#   threads (bar.sync 1, 256): the producer warps never reach them.
# - Without the option, and on sm_80 (no TMA, no setmaxnreg), nothing
#   changes: 256 threads, no producer.
# RUN: %kilnc compile %s -n persistent -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 128, 128, 64, 132, True" -w 8 --ns 3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n persistent -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 128, 128, 64, 132, True" -w 8 --ns 3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n persistent -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 64, 128, 64, 132, True" -w 4 --ns 3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=W4
# RUN: %kilnc compile %s -n inner -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 128, 128, 64, True" -w 8 --ns 3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=INNER
# RUN: %kilnc compile %s -n persistent -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 128, 128, 64, 132, False" -w 8 --ns 3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PLAIN
# RUN: %kilnc compile %s -n persistent -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 128, 128, 64, 132, True" -w 8 --ns 3 --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PLAIN
import triton
import triton.language as tl

# GPU: module attributes {{.*}}kiln_gpu.producer_warps = 4
# GPU: kiln_gpu.init_barrier %{{.*}}, 1 :
# GPU: kiln_gpu.init_barrier %{{.*}}, 256 :
# GPU: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU: %[[WARP:.*]] = kiln_gpu.warp_index
# GPU-NEXT: %[[PRODUCER:.*]] = arith.cmpi uge, %[[WARP]], %c8_i32
# GPU-NEXT: scf.if %[[PRODUCER]] {
# GPU-NEXT: kiln_gpu.set_max_registers 40
# GPU: kiln_gpu.tensor_map_acquire
# GPU: scf.for
# GPU: scf.for
# GPU: kiln_gpu.wait_barrier
# GPU: kiln_gpu.async_tma_copy {{.*}}, %true {kiln_gpu.warp_issued}
# GPU: kiln_gpu.async_tma_copy {{.*}}, %true {kiln_gpu.warp_issued}
# GPU-NOT: kiln_gpu.shared_dot
# GPU: } else {
# GPU-NEXT: kiln_gpu.set_max_registers increase 232
# GPU-NOT: kiln_gpu.async_tma_copy
# GPU: scf.for
# GPU: scf.for
# GPU: kiln_gpu.wait_barrier
# GPU: kiln_gpu.wait_barrier
# GPU: kiln_gpu.shared_dot {{.*}} {async}
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 1 : i32}
# GPU: kiln_gpu.arrive_barrier
# GPU: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# GPU: kiln_gpu.arrive_barrier
# GPU: kiln_gpu.async_tma_store
# GPU-NOT: kiln_gpu.async_tma_copy

# PTX: .reqntid 384, 1, 1
# PTX-NEXT: .maxnreg 168
# PTX: bar.sync 0;
# PTX: setmaxnreg.dec.sync.aligned.u32 40;
# PTX: fence.proxy.tensormap::generic.acquire.gpu
# PTX: mbarrier.try_wait.parity.shared::cta.b64
# PTX: cp.async.bulk.tensor.2d
# PTX: setmaxnreg.inc.sync.aligned.u32 232;
# PTX-NOT: bar.sync 0;
# PTX: wgmma.mma_async
# PTX: mbarrier.arrive.shared::cta.b64 _
# PTX: bar.sync 1, 256;
# PTX-NOT: bar.sync 0;

# With 4 consumer warps and a 64-row tile, the shared memory leaves room for
# two blocks per SM, and the consumers keep 216 registers with two: each
# block's 256 threads start with 128 (a 128x128 tile of 4 stages, one block
# per SM, starts with 248, which the consumers keep: setmaxnreg.inc may not
# lower the count).
# W4: .reqntid 256, 1, 1
# W4-NEXT: .maxnreg 128
# W4: setmaxnreg.dec.sync.aligned.u32 40;
# W4: setmaxnreg.inc.sync.aligned.u32 216;
# W4: bar.sync 1, 128;

# INNER: module attributes {{.*}}kiln_gpu.producer_warps = 4
# INNER: kiln_gpu.set_max_registers 40
# INNER: scf.for
# INNER: kiln_gpu.async_tma_copy {{.*}} {kiln_gpu.warp_issued}
# INNER: } else {
# INNER-NEXT: kiln_gpu.set_max_registers increase 232
# INNER: scf.for
# INNER: kiln_gpu.shared_dot

# PLAIN: .reqntid 256, 1, 1
# PLAIN-NOT: .maxnreg
# PLAIN-NOT: setmaxnreg
# PLAIN-NOT: bar.sync 1


@triton.jit
def persistent(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               NUM_SMS: tl.constexpr, WS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, warp_specialize=WS):
        pm = tile // num_pid_n
        pn = tile % num_pid_n
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(tl.cdiv(K, BK)):
            a = a_desc.load([pm * BM, k * BK])
            b = b_desc.load([pn * BN, k * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def inner(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, WS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(tl.cdiv(K, BK), warp_specialize=WS):
        a = a_desc.load([pm * BM, k * BK])
        b = b_desc.load([pn * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))
