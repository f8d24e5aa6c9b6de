# tl.range(..., flatten=True) over a persistent kernel's tiles, whose K loop
# loads through host descriptors (TMA copies on sm_90a): kiln-flatten-loops
# fuses the two loops, so the pipeliner keeps the ring full across tiles.
# - An scf.if picks the flattened loop, or the nested one when the K loop
#   runs no iteration.
# - In the flattened loop the tile's offsets are computed in an scf.if at
#   its first iteration, twice: once S-1 iterations ahead for the copies,
#   once for the epilogue (the pipeliner keeps a current copy of the
#   recurrence that the stage runs ahead).
# - The accumulator restarts from zero at each tile: the dot takes use_c,
#   which becomes wgmma's scale-d (selp from a predicate, not a constant).
# - The epilogue, in an scf.if at the tile's last iteration, waits for the
#   dot inside (dot_wait 0) while the loop otherwise keeps one in flight.
# RUN: %kilnc compile %s -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# --no-flatten, plain sm_90 (cp.async, no TMA) and pointer loads keep the
# loops nested, with the same results.
# RUN: %kilnc compile %s --no-flatten -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=NESTED
# RUN: %kilnc compile %s -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=NESTED
# RUN: %kilnc compile %s -n persistent_pointers -s "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=NESTED
import triton
import triton.language as tl

# GPU: scf.if
# GPU: kiln_gpu.async_tma_copy
# GPU: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32 iter_args(
# GPU: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32 : i32
# GPU: scf.if %[[FIRST]] -> (i32, i32
# GPU: arith.divsi
# GPU: scf.if %{{.*}} -> (i32, i32
# GPU: kiln_gpu.wait_barrier
# GPU: %[[USE:.*]] = arith.cmpi ne, %{{.*}}, %c0_i32 : i32
# GPU: %[[D:.*]] = kiln_gpu.shared_dot {{.*}} use_c %[[USE]] {async}
# GPU: %[[W:.*]] = kiln_gpu.dot_wait %[[D]] {pending = 1 : i32}
# GPU: scf.if
# GPU-NEXT: kiln_gpu.dot_wait %[[W]] {pending = 0 : i32}
# GPU: kiln_gpu.async_tma_store
# GPU: kiln_gpu.async_tma_copy
# GPU: scf.yield
# GPU: } else {
# GPU: scf.for
# GPU: scf.for
# GPU: kiln_gpu.shared_dot
# GPU-NOT: use_c

# PTX: selp.b32 %[[S:r[0-9]+]], 1, 0, %p{{[0-9]+}};
# PTX: setp.ne.b32 p, %[[S]], 0;
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16

# NESTED-NOT: use_c
# NESTED: scf.for
# NESTED: scf.for
# NESTED-NOT: use_c


@triton.jit
def persistent(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        m = (tile // num_n) * BM
        n = (tile % num_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([m, k]), b_desc.load([n, k]).T, acc)
        c_desc.store([m, n], acc)


@triton.jit
def persistent_pointers(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        rm = (tile // num_n) * BM + tl.arange(0, BM)
        rn = (tile % num_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            rk = k + tl.arange(0, BK)
            x = tl.load(a + rm[:, None] * K + rk[None, :])
            y = tl.load(b + rk[:, None] * N + rn[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)


# A flattened loop keeps its ring live through the epilogue, whose layout
# conversion for the pointer store (128 x 256 floats) then needs 128 KiB
# more: past sm_90a's 227 KiB. kilnc compiles the kernel again with the
# loops nested, where that conversion reuses the ring's bytes.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %kilnc compile %s -n persistent_pointer_store -s "tensordesc<fp16[128,64]>:16, tensordesc<fp16[256,64]>:16, *fp32:16, i32:16, i32:16, i32:16, 128, 256, 64" -w 8 --arch sm_90a -o %t/big.cubin --metadata %t/big.json
# RUN: FileCheck %s --check-prefix=REFIT < %t/big.json
# REFIT: "shared_bytes": 147{{[0-9][0-9][0-9]}},
@triton.jit
def persistent_pointer_store(a_desc, b_desc, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                             BK: tl.constexpr):
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        m = (tile // num_n) * BM
        n = (tile % num_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([m, k]), b_desc.load([n, k]).T, acc)
        rm = m + tl.arange(0, BM)
        rn = n + tl.arange(0, BN)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)
