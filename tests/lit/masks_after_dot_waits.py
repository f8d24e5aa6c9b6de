# A causal mask added to a scaled dot (`qk * scale + tl.where(m >= n, 0,
# -inf)`) is applied as a select between the two contracted sums, each
# computed from the dot's result after its wait: no select of the two
# constants is left for ptxas to compute while the wgmma group is in
# flight, holding a register per element through it
# (compiler/target/MasksAfterDotWaits.h), but for one several elements
# share (the diagonal's here), which stays one register. Without the scale,
# the mask is the dot's accumulator and nothing changes.
# RUN: %kilnc compile %s -n masked_scores -s "*fp16:16, *fp16:16, *fp32:16, fp32, i32:16, True, 128, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s
# RUN: %kilnc compile %s -n masked_scores -s "*fp16:16, *fp16:16, *fp32:16, fp32, i32:16, False, 128, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ACC
# CHECK-NOT: selp.f32 {{%r[0-9]+}}, 0f
# CHECK: wgmma.wait_group.sync.aligned 0;
# CHECK: fma.rn.f32 [[A:%r[0-9]+]], [[SCALE:%r[0-9]+]], [[QK:%r[0-9]+]], 0f{{FF800000|00000000}};
# CHECK-NEXT: fma.rn.f32 [[B:%r[0-9]+]], [[SCALE]], [[QK]], 0f{{FF800000|00000000}};
# CHECK-NEXT: selp.f32 {{%r[0-9]+}}, [[A]], [[B]], {{%p[0-9]+}};
# ACC: selp.f32 {{%r[0-9]+}}, 0f{{FF800000|00000000}}, 0f{{FF800000|00000000}}
# ACC: wgmma.mma_async
import triton
import triton.language as tl


@triton.jit
def masked_scores(Q, K, Out, sm_scale, N_CTX, SCALED: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  D: tl.constexpr):
    start_m = tl.program_id(0)
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    for start_n in range(0, (start_m + 1) * BM, BN):
        k = tl.load(K + (start_n + offs_n)[:, None] * D + offs_d[None, :])
        qk = tl.dot(q, tl.trans(k))
        causal = offs_m[:, None] >= (start_n + offs_n)[None, :]
        if SCALED:
            qk = qk * sm_scale + tl.where(causal, 0, float("-inf"))
        else:
            qk += tl.where(causal, 0, float("-inf"))
        m_i = tl.maximum(m_i, tl.max(qk, 1))
    tl.store(Out + offs_m, m_i)
