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
#   The next copies are issued before it: their slot is free at the wait
#   that follows the dot.
# RUN: %kilnc compile %s -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# --no-flatten and plain sm_90 (mma.sync) keep the loops nested, with the
# same results.
# RUN: %kilnc compile %s --no-flatten -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=NESTED
# RUN: %kilnc compile %s -n persistent -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp32[64,64]>:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=NESTED
# RUN: %kilnc compile %s -n persistent_pointers -s "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=NESTED
# So does a K loop the pipeliner cannot copy asynchronously: pointers of
# unknown alignment (the general variant) load element by element, and
# flattening would gain nothing.
# RUN: %kilnc compile %s -n persistent_pointers -s "*fp16, *fp16, *fp32, i32, i32, i32, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=NESTED
# Pointer loads flatten on sm_90a too. What the K loop computes per tile
# (a row's pointer, a + rm * K) moves into the prologue's scf.if and is
# carried as a 64x1 tensor; the broadcast to the 64x64 tile is rebuilt in
# the loop, where it costs no instruction. The copies of the next tile go
# before the epilogue, right after the wait that frees their slot.
# RUN: %kilnc compile %s -n persistent_pointers -s "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=POINTERS
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
# GPU: kiln_gpu.async_tma_copy
# GPU: scf.if
# GPU-NEXT: kiln_gpu.dot_wait %[[W]] {pending = 0 : i32}
# GPU: kiln_gpu.async_tma_store
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

# POINTERS: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32 iter_args(
# POINTERS: %[[A:.*]]:4 = scf.if %{{.*}} -> (tensor<64xi32
# POINTERS: arith.muli %{{.*}} : tensor<64x1xi32
# POINTERS: scf.yield {{.*}} tensor<64x1x!kiln.ptr<f16>
# POINTERS: kiln.broadcast %[[A]]#3 : tensor<64x1x!kiln.ptr<f16>, {{.*}}> -> tensor<64x64x!kiln.ptr<f16>
# POINTERS: %[[D:.*]] = kiln_gpu.shared_dot {{.*}} use_c %{{.*}} {async}
# POINTERS: %[[W:.*]] = kiln_gpu.dot_wait %[[D]] {pending = 1 : i32}
# POINTERS: kiln_gpu.async_copy
# POINTERS: kiln_gpu.async_copy
# POINTERS: kiln_gpu.async_commit_group
# POINTERS: scf.if
# POINTERS-NEXT: kiln_gpu.dot_wait %[[W]] {pending = 0 : i32}
# POINTERS: kiln.store
# POINTERS: } else {


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
            # (k // BK) * BK: offsets kiln-carry-pointers does not follow, so
            # the pointers stay computed (carried ones keep the loops nested).
            rk = (k // BK) * BK + tl.arange(0, BK)
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


# Tutorial 09's pointer kernel computes its pointers from ki each
# iteration; kiln-carry-pointers carries them instead (tests/lit/
# carry_pointers.py), and carried pointers keep the loops nested, where
# they pipeline: the ring alone (the epilogue reuses its bytes), 147456
# bytes at fp16 and fp8, no spills.
# RUN: %kilnc compile %S/../realworld/tutorials/python/tutorials/09-persistent-matmul.py -n matmul_kernel_persistent --arch sm_90a -o %t/fp16.cubin --metadata %t/fp16.json -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_ak=i32:1, stride_bk=i32:1, stride_bn=i32:16, stride_cm=i32:16, stride_cn=i32:1, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, NUM_SMS=132, num_warps=8, num_stages=3"
# RUN: FileCheck %s --check-prefix=FLAT-FP16 < %t/fp16.json
# FLAT-FP16: "shared_bytes": 147456,
# FLAT-FP16: "spills": 0,
# A flattened kernel that spills more than 128 bytes is compiled again
# nested: here the epilogue adds a 128x256 residual tile, read in the
# accumulator's layout, while the accumulator stays live (nested: the ring
# alone, 147456 bytes).
# RUN: %kilnc compile %s -n persistent_residual -s "*fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp16:16, i32:16, i32:16, i32:16, 128, 256, 64" -w 8 --ns 3 --arch sm_90a -o %t/residual.cubin --metadata %t/residual.json
# RUN: FileCheck %s --check-prefix=SPILLS-NESTED < %t/residual.json
# SPILLS-NESTED: "shared_bytes": 147456,
# RUN: %kilnc compile %S/../realworld/tutorials/python/tutorials/09-persistent-matmul.py -n matmul_kernel_persistent --arch sm_90a -o %t/fp8.cubin --metadata %t/fp8.json -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*fp8e4nv:16, M=i32:16, N=i32:16, K=i32:16, stride_am=i32:16, stride_ak=i32:1, stride_bk=i32:1, stride_bn=i32:16, stride_cm=i32:16, stride_cn=i32:1, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=128, GROUP_SIZE_M=8, NUM_SMS=132, num_warps=8, num_stages=3"
# RUN: FileCheck %s --check-prefix=FLAT-FP8 < %t/fp8.json
# FLAT-FP8: "shared_bytes": 147456,


@triton.jit
def persistent_residual(a, b, c, bias, r, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        rm = (tile // num_n) * BM + tl.arange(0, BM)
        rn = (tile % num_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            rk = k + tl.arange(0, BK)
            acc = tl.dot(tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :]), acc)
        h = acc + tl.load(bias + rn)[None, :]
        h = h + tl.load(r + rm[:, None] * N + rn[None, :]).to(tl.float32)
        tl.store(c + rm[:, None] * N + rn[None, :], h.to(tl.float16))
