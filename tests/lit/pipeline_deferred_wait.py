# Attention's p @ v, whose result is only carried and is read in the next
# iteration after q @ k's full wait (acc * alpha), stays in flight until
# that wait: no dot_wait follows it, and q @ k's wait ties the carried
# accumulator, so the next q @ k issues right behind it on the tensor cores.
# Only with TMA rings (host descriptors on sm_90a). In one warpgroup the
# copies refilling the slot p @ v read go right after q @ k's wait; with two,
# they wait for a barrier at the iteration's end.
# RUN: %kilnc compile %s -n attention_step -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, *fp32:16, i32:16, 64, 64" -w 4 --ns=3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=W4
# RUN: %kilnc compile %s -n attention_step -s "tensordesc<fp16[128,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, *fp32:16, i32:16, 128, 64" -w 8 --ns=3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=W8
# With two stages the copies cannot wait for the slot's last read: p @ v is
# waited for at once.
# RUN: %kilnc compile %s -n attention_step -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, *fp32:16, i32:16, 64, 64" -w 4 --ns=2 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=S2
# The same source with descriptors made from aligned pointers: the kernel
# encodes k's and v's tensor maps (kiln.make_tensor_map, 128 bytes each of
# the program's global scratch) and the rings are TMA rings too.
# RUN: %kilnc compile %s -n attention_step_from_pointers -s "*fp16:16, *fp16:16, *fp16:16, *fp32:16, i32:16, 64, 64" -w 4 --ns=3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefixes=MAPS,W4
# defer-waits=false (kiln-opt --kiln-pipeline's defer-dot-waits): p @ v is
# waited for in its own iteration, and the module is not marked.
# RUN: %kilnc compile %s -n attention_step -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, *fp32:16, i32:16, 64, 64" -w 4 --ns=3 --arch sm_90a --emit kiln -o %t.kiln.mlir
# RUN: %kiln-opt --kiln-pipeline="arch=sm_90a num-warps=4 num-stages=3 stop-after=gpu defer-dot-waits=false" %t.kiln.mlir | FileCheck %s --check-prefix=NODEFER
# RUN: %kiln-opt --kiln-pipeline="arch=sm_90a num-warps=4 num-stages=3 stop-after=gpu" %t.kiln.mlir | FileCheck %s --check-prefix=MARKED
# MARKED: kiln_gpu.deferred_dot_waits
# NODEFER-NOT: kiln_gpu.deferred_dot_waits
# NODEFER: kiln_gpu.shared_dot {{.*}} {async}
# NODEFER-NEXT: kiln_gpu.dot_wait %{{[0-9]+}} {pending = 0 : i32}
# NODEFER: %[[PV:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# NODEFER-NEXT: %[[PVW:.*]] = kiln_gpu.dot_wait %[[PV]] {pending = 0 : i32}
# NODEFER: scf.yield %[[PVW]],
# kilnc compiles that form where ptxas serializes the deferred one's wgmma:
# tutorial 06's forward at HEAD_DIM 64 under the 3-blocks-per-SM register
# cap (168) serializes them deferred, not waited (CUDA 13's ptxas).
# RUN: %kilnc compile %S/../realworld/tutorials/python/tutorials/06-fused-attention.py -n _attn_fwd -s "sm_scale=fp32, M=*fp32, Z=i32, H=i32, desc_q=*fp16, desc_k=*fp16, desc_v=*fp16, desc_o=*fp16, N_CTX=i32, HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=1, warp_specialize=False, IS_HOPPER=True, num_warps=4, num_stages=3" --aligned --arch sm_90a -o %t.t06.cubin --resource-usage 2>&1 | FileCheck %s --check-prefix=T06
# T06-NOT: serialized
# T06: 168 registers, 0 bytes spill stores, 0 bytes spill loads
# T06-NOT: serialized
# In the PTX, p @ v's group is still pending at the loop's back edge.
# RUN: %kilnc compile %s -n attention_step -s "tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, tensordesc<fp16[64,64]>:16, *fp32:16, i32:16, 64, 64" -w 4 --ns=3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# MAPS: kiln_gpu.global_scratch_bytes = 256
# MAPS: kiln.make_tensor_map %arg1, [%arg4, %c64_i32], [%c64_i64, %c1_i64], scratch %arg5 {box = array<i64: 64, 64>, scratch_offset = 0 : i64, swizzle = 128 : i32}
# MAPS-NEXT: kiln.make_tensor_map %arg2, {{.*}} scratch_offset = 128

# W4: scf.for {{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = {{.*}}, %[[M:[a-z0-9_]+]] = {{.*}}, %[[L:[a-z0-9_]+]] = {{.*}}, %{{.*}} = %c0_i32, %{{.*}} = %c2_i32, %{{.*}} = %c0_i32)
# W4: kiln_gpu.shared_dot {{.*}} {async}
# W4-NEXT: %[[QK:[0-9]+]]:2 = kiln_gpu.dot_wait %{{[0-9]+}}, %[[ACC]] {pending = 0 : i32}
# W4-NOT: kiln_gpu.barrier
# W4: kiln_gpu.async_tma_copy
# W4: kiln_gpu.async_tma_copy
# W4: arith.mulf %[[QK]]#1,
# W4: %[[PV:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# W4-NOT: kiln_gpu.dot_wait
# W4-NOT: kiln_gpu.barrier
# W4: scf.yield %[[PV]],
# W4-NEXT: {{^ *\}$}}
# W4-NEXT: kiln_gpu.dot_wait {{.*}} {pending = 0 : i32}

# W8: kiln_gpu.shared_dot {{.*}} {async}
# W8-NEXT: kiln_gpu.dot_wait %{{[0-9]+}}, %arg{{[0-9]+}} {pending = 0 : i32}
# W8: %[[PV:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# W8-NEXT: kiln_gpu.barrier
# W8-NEXT: arith.cmpi
# W8: kiln_gpu.async_tma_copy
# W8: scf.yield %[[PV]],

# S2: kiln_gpu.shared_dot {{.*}} {async}
# S2-NEXT: kiln_gpu.dot_wait %{{[0-9]+}} {pending = 0 : i32}
# S2: kiln_gpu.shared_dot {{.*}} {async}
# S2-NEXT: kiln_gpu.dot_wait %{{[0-9]+}} {pending = 0 : i32}

# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# PTX: wgmma.wait_group.sync.aligned 0;
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# PTX-NOT: wgmma.wait_group
# PTX: bra {{.*}};
# PTX: wgmma.wait_group.sync.aligned 0;


@triton.jit
def _attend(q, k_desc, v_desc, out_ptr, N, BM: tl.constexpr, D: tl.constexpr):
    BN: tl.constexpr = 64
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for start in range(0, N, BN):
        k = k_desc.load([start, 0])
        qk = tl.dot(q, k.T)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([start, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    offs_m = tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    tl.store(out_ptr + offs_m[:, None] * D + offs_d[None, :], acc)


@triton.jit
def attention_step(q_desc, k_desc, v_desc, out_ptr, N, BM: tl.constexpr, D: tl.constexpr):
    _attend(q_desc.load([0, 0]), k_desc, v_desc, out_ptr, N, BM, D)


@triton.jit
def attention_step_from_pointers(q_ptr, k_ptr, v_ptr, out_ptr, N, BM: tl.constexpr, D: tl.constexpr):
    q_desc = tl.make_tensor_descriptor(q_ptr, [N, D], [D, 1], [BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, [N, D], [D, 1], [64, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, [N, D], [D, 1], [64, D])
    _attend(q_desc.load([0, 0]), k_desc, v_desc, out_ptr, N, BM, D)
