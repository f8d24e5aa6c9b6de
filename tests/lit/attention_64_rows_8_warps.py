# Attention over 64-row tiles at 8 warps on sm_90a (DeepSeek-V3's MLA
# prefill shape: a value wider than one warpgroup's 256 columns, so kilnc
# keeps the 8 warps). p @ v's two warpgroups split its 512 columns (wgmma
# m64n256 each), each reading all of p's rows from its registers; so q @ k^T
# puts all 8 warps along M, the second warpgroup computing a copy of the
# first's 64 rows (m64n64 from shared tiles), and p is read where the
# softmax computed it. The row statistics move between the two layouts'
# slices without leaving registers (the slices agree).
# RUN: %kilnc compile %s -n attention_64_rows -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp16:16, N_CTX=i32:16, D=128, DV=512, num_warps=8, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n attention_64_rows -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp16:16, N_CTX=i32:16, D=128, DV=512, num_warps=8, num_stages=2" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# sm_80 keeps one layout for both dots (mma.sync).
# RUN: %kilnc compile %s -n attention_64_rows -s "q_ptr=*fp16:16, k_ptr=*fp16:16, v_ptr=*fp16:16, o_ptr=*fp16:16, N_CTX=i32:16, D=128, DV=512, num_warps=8, num_stages=2" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=MMA

# GPU: scf.for {{.*}} -> (tensor<64x512xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 256}>>, tensor<64xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>}>>, tensor<64xf32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>}>>
# GPU: kiln_gpu.shared_dot {{.*}} : !kiln_gpu.memdesc<64x128xf16, {{.*}}>, <128x64xf16, {{.*}}>, tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>>
# GPU-NOT: convert_layout {{.*}} tensor<64x64x
# GPU: kiln_gpu.shared_dot {{.*}} : tensor<64x64xf16, #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>>, <64x512xf16, {{.*}}>, tensor<64x512xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 256}>>
# GPU: scf.yield

# PTX-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
# PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
# PTX-NOT: st.shared.f32

# MMA: scf.for {{.*}} -> (tensor<64x512xf32, #kiln_gpu.mma<{warpsPerCTA = [[[WM:[0-9]+]], [[WN:[0-9]+]]]}>>
# MMA-NOT: instrN
import triton
import triton.language as tl


@triton.jit
def attention_64_rows(q_ptr, k_ptr, v_ptr, o_ptr, N_CTX, D: tl.constexpr, DV: tl.constexpr):
    rm = tl.arange(0, 64)
    rn = tl.arange(0, 64)
    rd = tl.arange(0, D)
    rv = tl.arange(0, DV)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    m_i = tl.full([64], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([64], dtype=tl.float32)
    acc = tl.zeros([64, DV], dtype=tl.float32)
    for start in range(0, N_CTX, 64):
        kt = tl.load(k_ptr + (start + rn)[None, :] * D + rd[:, None])
        s = tl.dot(q, kt)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + (start + rn)[:, None] * DV + rv[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * DV + rv[None, :], (acc / l_i[:, None]).to(tl.float16))
