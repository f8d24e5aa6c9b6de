# A tensor-core loop inside an `if` (vLLM's decode attention: `if
# split_kv_end > split_kv_start:` around its loop, q loaded above the `if`)
# is pipelined like an unguarded one: q is copied once into its own tile
# before the loop, k runs through a cp.async ring. Before, q was looked for
# in the loop's own block only and the loop was left unpipelined (vLLM's MLA
# decode: k held in registers, 255 registers and spills, 0.25x Triton).
# RUN: %kilnc compile %s -n guarded -s "Q=*bf16:16, K=*bf16:16, Out=*fp32:16, n=i32, stride_k=i32:16, D=128, BN=32, BH=16, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n guarded -s "Q=*bf16:16, K=*bf16:16, Out=*fp32:16, n=i32, stride_k=i32:16, D=128, BN=32, BH=16, num_stages=2" --arch sm_80 --emit gpu -o - | FileCheck %s
# CHECK-LABEL: func.func @guarded
# CHECK: scf.if
# CHECK: kiln_gpu.async_copy {{.*}} : tensor<16x128x!kiln.ptr<bf16>
# CHECK: kiln_gpu.async_copy {{.*}} : tensor<128x32x!kiln.ptr<bf16>
# CHECK: scf.for
# CHECK: kiln_gpu.async_copy {{.*}} : tensor<128x32x!kiln.ptr<bf16>
import triton
import triton.language as tl


@triton.jit
def guarded(Q, K, Out, n, stride_k, D: tl.constexpr, BN: tl.constexpr, BH: tl.constexpr):
    offs_h = tl.arange(0, BH)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_h[:, None] * D + offs_d[None, :])
    acc = tl.zeros([BH, D], dtype=tl.float32)
    m = tl.zeros([BH], dtype=tl.float32) - float("inf")
    if n > 0:
        for start in range(0, n, BN):
            offs_n = start + tl.arange(0, BN)
            k = tl.load(K + offs_n[None, :] * stride_k + offs_d[:, None], mask=offs_n[None, :] < n, other=0.0)
            qk = tl.dot(q, k)
            mn = tl.maximum(tl.max(qk, 1), m)
            p = tl.exp(qk - mn[:, None])
            acc *= tl.exp(m - mn)[:, None]
            acc += tl.dot(p.to(k.dtype), tl.trans(k))
            m = mn
    tl.store(Out + offs_h[:, None] * D + offs_d[None, :], acc)
