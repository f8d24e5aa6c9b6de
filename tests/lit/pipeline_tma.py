# On sm_90a, a dot operand loaded through a kernel argument's descriptor
# fills its ring with TMA: thread 0 arms the slot's mbarrier with the tile's
# bytes and issues cp.async.bulk.tensor, one box per swizzle panel; every
# thread waits on the slot's mbarrier phase (its parity flips as the reads
# wrap) before the first dot that reads the tile. The tile lands as it is in
# memory, so `b.T` is a memdesc_trans view (K-major for wgmma). With one
# warpgroup and the dot in flight, no bar.sync is left in the loop.
# RUN: %kilnc compile %s -n matmul_tma -s "tensordesc<fp16[64,32]>:16, tensordesc<fp16[128,32]>:16, *fp32:16, i32:16, 64, 128, 32" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n matmul_tma -s "tensordesc<fp16[64,32]>:16, tensordesc<fp16[128,32]>:16, *fp32:16, i32:16, 64, 128, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# Lines of 256 bytes: two 128-byte panels, so two boxes per tile.
# RUN: %kilnc compile %s -n matmul_tma -s "tensordesc<fp16[64,128]>:16, tensordesc<fp16[128,128]>:16, *fp32:16, i32:16, 64, 128, 128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PANELS
# The metadata tells the launcher how to encode each map it reads.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %kilnc compile %s -n matmul_tma -s "tensordesc<fp16[64,128]>:16, tensordesc<fp16[128,128]>:16, *fp32:16, i32:16, 64, 128, 128" --arch sm_90a -o %t/k.cubin --metadata %t/k.json
# RUN: FileCheck %s --check-prefix=META < %t/k.json
# Plain sm_90 (mma.sync) and sm_80 copy with cp.async from the pointers,
# and their metadata asks for no tensor map.
# RUN: %kilnc compile %s -n matmul_tma -s "tensordesc<fp16[64,32]>:16, tensordesc<fp16[128,32]>:16, *fp32:16, i32:16, 64, 128, 32" --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=CPASYNC
# RUN: %kilnc compile %s -n matmul_tma -s "tensordesc<fp16[64,32]>:16, tensordesc<fp16[128,32]>:16, *fp32:16, i32:16, 64, 128, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=CPASYNC
# RUN: %kilnc compile %s -n matmul_tma -s "tensordesc<fp16[64,32]>:16, tensordesc<fp16[128,32]>:16, *fp32:16, i32:16, 64, 128, 32" --arch sm_90 -o %t/p.cubin --metadata %t/p.json
# RUN: FileCheck %s --check-prefix=NOMAP < %t/p.json
# A descriptor load outside any pipelined loop stays a masked load.
# RUN: %kilnc compile %s -n copy_block -s "tensordesc<fp16[64,32]>:16, *fp16:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PLAIN
import triton
import triton.language as tl

# GPU: kiln_gpu.local_alloc {{.*}} <3x64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 64>>
# GPU: kiln_gpu.local_alloc {{.*}} <3x128x32xf16, #kiln_gpu.nvmma_shared<swizzle = 64>>
# GPU: kiln_gpu.local_alloc {{.*}} <3x1x1xi64, #kiln_gpu.nvmma_shared<swizzle = 0>>
# GPU: kiln_gpu.init_barrier {{.*}}, 1
# GPU: kiln_gpu.fence_async_shared
# GPU-NEXT: kiln_gpu.barrier
# GPU: kiln_gpu.async_tma_copy %arg0[{{.*}}], {{.*}} : <64x32xf16, #kiln_gpu.nvmma_shared<swizzle = 64>>, <1x1xi64
# GPU: kiln_gpu.async_tma_copy %arg6[{{.*}}], {{.*}} : <128x32xf16, #kiln_gpu.nvmma_shared<swizzle = 64>>, <1x1xi64
# GPU: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %c0_i32, %{{.*}} = %c2_i32, %[[PHASE:.*]] = %c0_i32)
# GPU-NOT: kiln_gpu.barrier
# GPU: kiln_gpu.wait_barrier {{.*}}, %[[PHASE]]
# GPU: kiln_gpu.wait_barrier {{.*}}, %[[PHASE]]
# GPU: kiln_gpu.memdesc_trans {{.*}} -> <32x128xf16, #kiln_gpu.nvmma_shared<swizzle = 64, transposed = true>>
# GPU: kiln_gpu.shared_dot {{.*}} {async}
# GPU-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 1 : i32}
# GPU: kiln_gpu.async_tma_copy
# GPU: kiln_gpu.async_tma_copy
# GPU-NOT: kiln_gpu.barrier
# GPU: arith.xori %[[PHASE]], %c1_i32
# GPU: scf.yield
# The loop may run no iteration: it and the last wait go under an if that it
# runs, the other path taking the initial accumulator.
# GPU: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}
# GPU-NEXT: scf.yield
# GPU-NEXT: {{^ *\} else \{$}}
# GPU-NEXT: scf.yield
# GPU-NEXT: {{^ *\}$}}
# GPU-NEXT: kiln_gpu.barrier
# GPU: kiln_gpu.inval_barrier
# GPU-NOT: kiln_gpu.async_copy
# GPU-NOT: kiln_gpu.async_wait

# PTX: @p mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 1;
# PTX: @p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%[[BAR:r[0-9]+]]], 4096; @p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%[[BAR]]]; }
# PTX: mbarrier.try_wait.parity.shared::cta.b64
# PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# PTX: wgmma.wait_group.sync.aligned 1;
# PTX: mbarrier.inval.shared::cta.b64
# PTX-NOT: cp.async.cg
# PTX-NOT: cp.async.wait_group

# PANELS: mbarrier.arrive.expect_tx.shared::cta.b64 _, [%{{r[0-9]+}}], 16384; @p cp.async.bulk.tensor.2d{{.*}}; @p cp.async.bulk.tensor.2d{{.*}}; }
# PANELS: mbarrier.arrive.expect_tx.shared::cta.b64 _, [%{{r[0-9]+}}], 32768; @p cp.async.bulk.tensor.2d{{.*}}; @p cp.async.bulk.tensor.2d{{.*}}; }

# META: "name": "a_desc",
# META: "tensor_map": {
# META-NEXT: "box": [
# META-NEXT: 64,
# META-NEXT: 64
# META-NEXT: ],
# META-NEXT: "swizzle": 128
# META: "name": "b_desc",
# META: "tensor_map": {
# META-NEXT: "box": [
# META-NEXT: 128,
# META-NEXT: 64
# META: "name": "c_ptr",
# META-NOT: tensor_map

# CPASYNC-NOT: cp.async.bulk
# CPASYNC: cp.async.cg.shared.global
# CPASYNC-NOT: cp.async.bulk
# NOMAP-NOT: tensor_map

# PLAIN-NOT: cp.async
# PLAIN-NOT: mbarrier
# PLAIN: ld.global


@triton.jit
def matmul_tma(a_desc, b_desc, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([pid_n * BN, k])
        acc = tl.dot(a, b.T, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * 1024 + rn[None, :], acc)


@triton.jit
def copy_block(src_desc, dst_ptr):
    x = src_desc.load([tl.program_id(0) * 64, 0])
    r = tl.arange(0, 64)
    c = tl.arange(0, 32)
    tl.store(dst_ptr + r[:, None] * 32 + c[None, :], x)
