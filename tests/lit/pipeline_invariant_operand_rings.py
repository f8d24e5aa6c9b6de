# On sm_90a at 8 warps, a loop whose dot reads an operand computed before it
# (attention's q, scaled after its load) is pipelined: q is written to its
# tile once, before the loop (fence and barrier), and k and v come through
# cp.async rings; the module is marked kiln_gpu.invariant_operand_rings.
# kilnc then compiles the kernel again without the rings (kiln-pipeline's
# invariant-rings=false: kiln-stage-dots copies each iteration's tiles) and
# keeps the ringed form unless the other holds more blocks an SM: at head
# dim 64 and 2 stages the rings (48 KiB) leave the blocks an SM as they are
# and are kept; at head dim 128 and 4 stages they take 160 KiB, one block an
# SM where the per-iteration tiles' 64 KiB allow two (triton-lang/kernels'
# causal forward: 1.17 of Triton without rings, 0.98 with), and the kernel
# is compiled without them. At 4 warps such loops are not pipelined on sm_90a.
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, fp32, 64, 128, 64" -w 8 --ns=2 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=RINGS
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, fp32, 64, 128, 64" -w 8 --ns=2 --arch sm_90a --emit kiln -o %t.kiln.mlir
# RUN: %kiln-opt --kiln-pipeline="arch=sm_90a num-warps=8 num-stages=2 stop-after=gpu invariant-rings=false" %t.kiln.mlir | FileCheck %s --check-prefix=PLAIN
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, fp32, 128, 128, 64" -w 4 --ns=3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=PLAIN
# RUN: rm -rf %t && mkdir -p %t
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, fp32, 64, 128, 64" -w 8 --ns=2 --arch sm_90a -o %t/d64.cubin --metadata %t/d64.json
# RUN: FileCheck %s --check-prefix=KEPT < %t/d64.json
# RUN: %kilnc compile %s -n attention -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32:16, fp32, 128, 128, 64" -w 8 --ns=4 --arch sm_90a -o %t/d128.cubin --metadata %t/d128.json
# RUN: FileCheck %s --check-prefix=DROPPED < %t/d128.json
import triton
import triton.language as tl

# RINGS: module attributes {{.*}}kiln_gpu.invariant_operand_rings
# RINGS: kiln_gpu.local_alloc {{.*}} <2x64x64xf16
# RINGS: kiln_gpu.local_alloc {{.*}} <2x64x64xf16
# RINGS: kiln_gpu.local_alloc {{.*}} <1x128x64xf16
# RINGS: kiln_gpu.local_store
# RINGS-NEXT: kiln_gpu.fence_async_shared
# RINGS-NEXT: kiln_gpu.barrier
# RINGS: kiln_gpu.async_copy
# RINGS: scf.for
# RINGS: kiln_gpu.async_copy
# RINGS: kiln_gpu.shared_dot {{.*}} {async} : !kiln_gpu.memdesc<128x64xf16
# PLAIN-NOT: kiln_gpu.invariant_operand_rings
# PLAIN-NOT: <2x64x64xf16
# PLAIN: scf.for
# KEPT: "shared_bytes": 49152,
# DROPPED: "shared_bytes": 65536,


@triton.jit
def attention(q_ptr, k_ptr, v_ptr, o_ptr, n, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + d[None, :])
    q = (q * scale).to(tl.float16)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    m_i = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    for start in range(0, n, BN):
        cols = start + tl.arange(0, BN)
        k = tl.load(k_ptr + cols[None, :] * D + d[:, None])
        s = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + cols[:, None] * D + d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + rows[:, None] * D + d[None, :], acc.to(tl.float16))
