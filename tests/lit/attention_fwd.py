# Attention forward, the kernel of issue 14: with HEAD_DIM=64 it crashed the
# compiler (heap corruption in AxisInfoAnalysis, which held references into
# its value map across insertions that could move it; where the map grew
# depended on the kernel, so only some configurations crashed, and later
# compiler changes hid it again). tests/unit/axis_info_test.cc is the
# regression test that fails under ASan on the old analysis; this one keeps
# the kernel compiling through ptxas for sm_90a and sm_80, num_warps 4 and 8,
# HEAD_DIM 64 and 128 (the ASan build of scripts/sanitize.sh runs it too).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 64, 128, 64" --arch sm_90a -w 4 -o %t/d64_sm_90a_w4.cubin --metadata %t/d64_sm_90a_w4.json
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 64, 128, 64" --arch sm_90a -w 8 -o %t/d64_sm_90a_w8.cubin --metadata %t/d64_sm_90a_w8.json
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 64, 128, 64" --arch sm_80 -w 4 -o %t/d64_sm_80_w4.cubin --metadata %t/d64_sm_80_w4.json
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 64, 128, 64" --arch sm_80 -w 8 -o %t/d64_sm_80_w8.cubin --metadata %t/d64_sm_80_w8.json
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 128, 128, 64" --arch sm_90a -w 4 -o %t/d128_sm_90a_w4.cubin --metadata %t/d128_sm_90a_w4.json
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 128, 128, 64" --arch sm_90a -w 8 -o %t/d128_sm_90a_w8.cubin --metadata %t/d128_sm_90a_w8.json
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 128, 128, 64" --arch sm_80 -w 4 -o %t/d128_sm_80_w4.cubin --metadata %t/d128_sm_80_w4.json
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 128, 128, 64" --arch sm_80 -w 8 -o %t/d128_sm_80_w8.cubin --metadata %t/d128_sm_80_w8.json
# RUN: cat %t/d64_sm_90a_w4.json %t/d64_sm_80_w8.json %t/d128_sm_90a_w8.json | FileCheck %s --check-prefix=META
# RUN: %kilnc compile %s -n attn_fwd -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, fp32, i32:16, i32:16, i32:16, 64, 128, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# META: "arch": "sm_90a"
# META: "num_warps": 4
# META: "arch": "sm_80"
# META: "num_warps": 8
# META: "arch": "sm_90a"
# META: "num_warps": 8
# PTX: .entry attn_fwd
# PTX: ex2.approx
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
             HEAD_DIM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    base = off_h.to(tl.int64) * stride_h
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BN):
        kt = tl.load(K + base + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, kt)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))
