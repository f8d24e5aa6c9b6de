"""Real-world cases: the fifteenth sample (tests/realworld/MANIFEST.fifteenth):
modded-nanogpt's dynamic-composition attention correction (the forward at
training and evaluation length, the backward's dv/dw and dq/dk passes) and
Muon's X X^T kernel, text-generation-inference's GPTQ GEMM (decode and
prefill) and its varlen Triton flash attention (Llama-3-8B, Phi-2), and
Sparse-VideoGen's dynamic block-sparse attention. bench/realworld_cases.py
says what a case is.

Configs are each launcher's own, as MANIFEST.fifteenth gives them; grids
as each launcher computes them; sizes those the manifest names: the
GPT-2-small speedrun's last stage (49152 tokens a rank, 6 heads of 128,
model dim 768), Llama-2-7B 4-bit GPTQ (group 128), Llama-3-8B prefill,
HunyuanVideo 720p (24 heads of 128, 118800 video tokens). Kernels of
tl.dot count FLOPs, the others bytes.

Left out: modded-nanogpt's ReLU^2 MLP GEMM (linear_relu_square_kernel), which
takes host TMA descriptors (`tensordesc` arguments) that realworld_cubins.py
does not build.

Signatures are written without alignment hints (realworld_cubins.py --list
adds the ones Triton's JIT specializes on).
"""

from realworld_case_rules import TRL, cached, case, cdiv

CASES = []

# --- modded-nanogpt dc_triton_kernels.py: the post-only DC correction -------------------------
# Layer 10's correction to the FA3 output: q/k/v bf16 [1, T, 6, 128]
# contiguous (randn), post weights bf16 [1, T, 6] (randn * 0.5), window
# 112, BLOCK_M 16, BLOCK_K 128 (the launcher's max(128, 2 ** bit_length(112
# + 16 - 2))), the document-bounds tables int32 [T] as
# _build_doc_bounds_tables makes them from cu_seqlens (here: N_DOCS
# documents cut at distinct random points), the base (FA3's output) bf16
# [T, 6, 128] randn, the output like it. Grid (T / 16,).
DC = TRL + "modded_nanogpt/dc_triton_kernels.py"
DH, DD, WIN = 6, 128, 112
DROW = DH * DD  # a token's q/k/v row


def doc_tables(T, n_docs):
    def build(torch, g, device):
        cuts = torch.randperm(T - 1, generator=g, device=device)[:n_docs - 1].sort().values + 1
        cu = torch.cat([torch.zeros(1, dtype=torch.int64, device=device), cuts,
                        torch.full((1,), T, dtype=torch.int64, device=device)])
        idx = torch.searchsorted(cu, torch.arange(T, device=device), right=True) - 1
        return dict(start=cu[idx].to(torch.int32), end=cu[idx + 1].to(torch.int32))
    return cached(build)


DC_FWD_SIG = (
    "Q=*bf16, K=*bf16, V=*bf16, POST_W1=*bf16, POST_W2=*bf16, DOC_START_TABLE=*i32, DOC_END_TABLE=*i32, "
    "A_BUF=*bf16, LSE={lse}, BASE=*bf16, OUT=*bf16, stride_qt=i32, stride_qh=i32, stride_qd=i32, stride_kt=i32, "
    "stride_kh=i32, stride_kd=i32, stride_vt=i32, stride_vh=i32, stride_vd=i32, stride_w1t=i32, stride_w1h=i32, "
    "stride_w2t=i32, stride_w2h=i32, stride_at=i32, stride_aw=i32, stride_lt=i32, stride_lh=i32, stride_bh=i32, "
    "stride_bt=i32, stride_bd=i32, stride_oh=i32, stride_ot=i32, stride_od=i32, scaling=fp32, T={T}, "
    "WINDOW=112, N_DOCS={docs}, CU_SEARCH_ITERS={iters}, BLOCK_M=16, BLOCK_K=128, BLOCK_D=128, "
    "STORE_AUX={aux}, STORE_A_BUF=False, ADD_BASE=True, num_warps=4, num_stages=3")


def dc_qkv_strides(*prefixes):
    out = {}
    for p in prefixes:
        out.update({f"stride_{p}t": DROW, f"stride_{p}h": DD, f"stride_{p}d": 1})
    return out


# Training (T 49152, 128 documents: the fp32 LSE [1, T, 6] stored for the
# backward) and evaluation (262144 tokens, 896 documents, no LSE: the
# launcher points LSE and A_BUF at the bf16 output with zero strides; here a
# one-element bf16 buffer that is never touched).
for cid, T, docs, aux in (("nanogpt_dc_corr_fwd_train_t49152", 49152, 128, True),
                          ("nanogpt_dc_corr_fwd_eval_t262144", 262144, 896, False)):
    tables = doc_tables(T, docs)
    N = T * DROW
    args = dict(Q=("randn", "bfloat16", N), K=("randn", "bfloat16", N), V=("randn", "bfloat16", N),
                POST_W1=("randn", "bfloat16", T * DH, 0.5), POST_W2=("randn", "bfloat16", T * DH, 0.5),
                DOC_START_TABLE=tables("start"), DOC_END_TABLE=tables("end"), A_BUF=("zeros", "bfloat16", 1),
                BASE=("randn", "bfloat16", N), OUT=("zeros", "bfloat16", N), **dc_qkv_strides("q", "k", "v"),
                stride_w1t=DH, stride_w1h=1, stride_w2t=DH, stride_w2h=1, stride_at=0, stride_aw=0,
                stride_bh=DD, stride_bt=DROW, stride_bd=1, stride_oh=DD, stride_ot=DROW, stride_od=1,
                scaling=DD ** -0.5)
    if aux:
        args.update(LSE=("zeros", "float32", T * DH), stride_lt=DH, stride_lh=1)
    else:
        args.update(LSE=("zeros", "bfloat16", 1), stride_lt=0, stride_lh=0)
    CASES.append(case(
        cid, DC, "_dc_postonly_corr_fwd_wsmall_cached_kernel",
        DC_FWD_SIG.format(lse="*fp32" if aux else "*bf16", T=T, docs=docs, iters=max(1, docs.bit_length()),
                          aux=aux),
        args,
        # fp32 sums of 128 products in another order, exp2 and log to an
        # ulp; the mixed probabilities rounded to bf16 for the second dot;
        # bf16 out.
        (cdiv(T, 16),), ["OUT", "LSE"] if aux else ["OUT"],
        bytes=2 * 5 * N + 8 * T + 2 * 2 * T * DH + (4 * T * DH if aux else 0), tol=1e-2,
        # Each program: two 16 x 128 x 128 dots a head.
        flops=4 * T * DH * 128 * DD))

# The backward (training, T 49152): do randn; LSE fp32 [1, T, 6] in [5, 6]
# (about log of 112 keys' sums, above any row's scaled q.k here so that
# the probabilities stay under 1). The dv/dw pass (8 warps, 1 stage): dv
# by bf16 atomics into zeros (reset), dA fp32 [1, T, 112], the soft dot
# fp32 [1, T, 6], the post weights' gradients bf16 [1, T, 6]. Grid (T / 16,).
T = 49152
N = T * DROW
DC_TABLES = doc_tables(T, 128)
DC_BWD_IN = dict(Q=("randn", "bfloat16", N), K=("randn", "bfloat16", N), POST_W1=("randn", "bfloat16", T * DH, 0.5),
                 DOC_START_TABLE=DC_TABLES("start"), DOC_END_TABLE=DC_TABLES("end"),
                 LSE=("uniform", "float32", T * DH, 5.0, 6.0), scaling=DD ** -0.5, stride_lt=DH, stride_lh=1)
CASES.append(case(
    "nanogpt_dc_corr_bwd_pre_t49152", DC, "_dc_postonly_corr_bwd_pre_wsmall_kernel",
    "Q=*bf16, K=*bf16, V=*bf16, DO=*bf16, POST_W1=*bf16, POST_W2=*bf16, DOC_START_TABLE=*i32, DOC_END_TABLE=*i32, "
    "LSE=*fp32, DA_BUF=*fp32, SOFT_DOT=*fp32, DV=*bf16, GPOST_W1=*bf16, GPOST_W2=*bf16, stride_qt=i32, "
    "stride_qh=i32, stride_qd=i32, stride_kt=i32, stride_kh=i32, stride_kd=i32, stride_vt=i32, stride_vh=i32, "
    "stride_vd=i32, stride_dot=i32, stride_doh=i32, stride_dod=i32, stride_w1t=i32, stride_w1h=i32, "
    "stride_w2t=i32, stride_w2h=i32, stride_at=i32, stride_aw=i32, stride_lt=i32, stride_lh=i32, "
    "stride_dv_t=i32, stride_dv_h=i32, stride_dv_d=i32, stride_gwt=i32, stride_gwh=i32, stride_sdt=i32, "
    "stride_sdh=i32, scaling=fp32, T=49152, WINDOW=112, N_DOCS=128, CU_SEARCH_ITERS=8, BLOCK_M=16, "
    "BLOCK_K=128, BLOCK_D=128, num_warps=8, num_stages=1",
    dict(DC_BWD_IN, V=("randn", "bfloat16", N), DO=("randn", "bfloat16", N),
         POST_W2=("randn", "bfloat16", T * DH, 0.5), DA_BUF=("zeros", "float32", T * WIN),
         SOFT_DOT=("zeros", "float32", T * DH), DV=("zeros", "bfloat16", N), GPOST_W1=("zeros", "bfloat16", T * DH),
         GPOST_W2=("zeros", "bfloat16", T * DH), **dc_qkv_strides("q", "k", "v"), stride_dot=DROW, stride_doh=DD,
         stride_dod=1, stride_w1t=DH, stride_w1h=1, stride_w2t=DH, stride_w2h=1, stride_at=WIN, stride_aw=1,
         stride_dv_t=DROW, stride_dv_h=DD, stride_dv_d=1, stride_gwt=DH, stride_gwh=1, stride_sdt=DH,
         stride_sdh=1),
    # fp32 sums of 128 products in another order, exp2 to an ulp; dv summed
    # by bf16 atomics over about 8 programs in any order.
    (cdiv(T, 16),), ["DA_BUF", "SOFT_DOT", "DV", "GPOST_W1", "GPOST_W2"],
    bytes=2 * 5 * N + 8 * T + 4 * T * DH + 4 * T * WIN + 4 * T * DH + 2 * 4 * T * DH, tol=2e-2, reset=["DV"],
    # Each program and head: q.k, do.v and the dv dot, 16 x 128 x 128.
    flops=6 * T * DH * 128 * DD))

# The dq/dk pass (4 warps, 2 stages): dA fp32 [1, T, 112] and the soft dot
# (randn * 0.1, as the dv/dw pass leaves them), dq stored bf16, dk by bf16
# atomics into zeros (reset). Grid (T / 16, 6).
CASES.append(case(
    "nanogpt_dc_corr_bwd_qk_t49152", DC, "_dc_postonly_corr_bwd_qk_wsmall_kernel",
    "Q=*bf16, K=*bf16, POST_W1=*bf16, DOC_START_TABLE=*i32, DOC_END_TABLE=*i32, DA_BUF=*fp32, SOFT_DOT=*fp32, "
    "LSE=*fp32, DQ=*bf16, DK=*bf16, stride_qt=i32, stride_qh=i32, stride_qd=i32, stride_kt=i32, stride_kh=i32, "
    "stride_kd=i32, stride_wt=i32, stride_wh=i32, stride_at=i32, stride_aw=i32, stride_sdt=i32, stride_sdh=i32, "
    "stride_lt=i32, stride_lh=i32, stride_dq_t=i32, stride_dq_h=i32, stride_dq_d=i32, stride_dk_t=i32, "
    "stride_dk_h=i32, stride_dk_d=i32, scaling=fp32, T=49152, WINDOW=112, N_DOCS=128, CU_SEARCH_ITERS=8, "
    "BLOCK_M=16, BLOCK_K=128, BLOCK_D=128, num_warps=4, num_stages=2",
    dict(DC_BWD_IN, DA_BUF=("randn", "float32", T * WIN, 0.1), SOFT_DOT=("randn", "float32", T * DH, 0.1),
         DQ=("zeros", "bfloat16", N), DK=("zeros", "bfloat16", N), **dc_qkv_strides("q", "k", "dq_", "dk_"),
         stride_wt=DH, stride_wh=1, stride_at=WIN, stride_aw=1, stride_sdt=DH, stride_sdh=1),
    # fp32 sums of 128 products in another order, exp2 to an ulp; dk summed
    # by bf16 atomics over about 8 programs in any order.
    (cdiv(T, 16), DH), ["DQ", "DK"], bytes=2 * 4 * N + 8 * T + 4 * T * (WIN + 2 * DH) + 2 * T * DH,
    tol=2e-2, reset=["DK"],
    # Each program: q.k, ds.k and ds^T.q, 16 x 128 x 128.
    flops=6 * T * DH * 128 * DD))

# --- modded-nanogpt triton_kernels.py: Muon's X X^T --------------------------------------------
# Polar Express on the stacked attention bank: 24 square 768 x 768 bf16
# matrices (randn * 768 ** -0.5, normalized as Muon normalizes them) at the
# launcher's K 768 config (128 x 128 x 64, GROUP 8, 8 warps, 4 stages),
# LOWER_UPPER 1 (blocks above the diagonal skipped, the rest stored twice,
# mirrored). Grid 24 x 6 x 6. FLOPs: the 21 computed blocks of 36.
XB, XM = 24, 768
CASES.append(case(
    "nanogpt_muon_xxt_768_b24", TRL + "modded_nanogpt/triton_kernels.py", "XXT_kernel",
    "A_ptr=*bf16, C_ptr=*bf16, M=i32, K=i32, a_stride_b=i32, a_stride_r=i32, a_stride_c=i32, c_stride_b=i32, "
    "c_stride_r=i32, c_stride_c=i32, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, "
    "LOWER_UPPER=1, num_warps=8, num_stages=4",
    dict(A_ptr=("randn", "bfloat16", XB * XM * XM, XM ** -0.5), C_ptr=("zeros", "bfloat16", XB * XM * XM),
         M=XM, K=XM, a_stride_b=XM * XM, a_stride_r=XM, a_stride_c=1, c_stride_b=XM * XM, c_stride_r=XM,
         c_stride_c=1),
    # fp32 sums of 768 products in another order; bf16 out.
    (XB * cdiv(XM, 128) * cdiv(XM, 128),), ["C_ptr"], bytes=2 * 2 * XB * XM * XM, tol=1e-2,
    flops=2 * XB * 21 * 128 * 128 * XM))

# --- text-generation-inference: the GPTQ GEMM (layers/gptq/triton.py) --------------------------
# Llama-2-7B at 4 bits, group 128 (act-order off: g_idx = k // 128): fp16
# activations (randn), int32-packed weights [K / 8, N] and zeros [K / 128,
# N / 8] (every bit pattern), fp16 scales [K / 128, N] in [0.002, 0.01];
# the configs as TGI's autotuner prunes its first one (4 warps, 4 stages):
# the q projection (N = K = 4096) at a single-sequence decode step (M 1, 16
# x 256 x 32) and the gate/up projection (N 11008) at a 2048-token prefill
# (64 x 256 x 32). Grid cdiv(M, BM) x cdiv(N, 256). fp16 out. FLOPs at
# prefill, bytes at decode.
GPTQ = TRL + "tgi/server/text_generation_server/layers/gptq/triton.py"
GK = 4096
for cid, M, N, bm in (("tgi_gptq_4bit_llama2_qproj_decode_m1", 1, 4096, 16),
                      ("tgi_gptq_4bit_llama2_gateup_prefill_m2048", 2048, 11008, 64)):
    G = GK // 128
    CASES.append(case(
        cid, GPTQ, "matmul_248_kernel",
        "a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, scales_ptr=*fp16, zeros_ptr=*i32, g_ptr=*i32, M=i32, N=i32, K=i32, "
        "bits=i32, maxq=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, "
        f"stride_cn=i32, stride_scales=i32, stride_zeros=i32, BLOCK_SIZE_M={bm}, BLOCK_SIZE_N=256, "
        "BLOCK_SIZE_K=32, GROUP_SIZE_M=8, num_warps=4, num_stages=4",
        dict(a_ptr=("randn", "float16", M * GK), b_ptr=("randbits", "int32", GK // 8 * N),
             c_ptr=("zeros", "float16", M * N), scales_ptr=("uniform", "float16", G * N, 0.002, 0.01),
             zeros_ptr=("randbits", "int32", G * N // 8),
             g_ptr=lambda torch, gen: torch.arange(GK, dtype=torch.int32, device="cuda") // 128,
             M=M, N=N, K=GK, bits=4, maxq=15, stride_am=GK, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N,
             stride_cn=1, stride_scales=N, stride_zeros=N // 8),
        # The dequantized fp16 weights alike; fp32 sums of 4096 products in
        # another order; fp16 out.
        (cdiv(M, bm) * cdiv(N, 256),), ["c_ptr"],
        bytes=2 * M * GK + GK * N // 2 + 2 * G * N + G * N // 2 + 4 * GK + 2 * M * N, tol=1e-2,
        # Imported in its package (`from . import custom_autotune`, whose
        # Autotuner wraps the kernel); decode is memory-bound: bytes only.
        package=TRL + "tgi/server", **({"flops": 2 * M * N * GK} if M > 16 else {})))

# --- text-generation-inference: the varlen Triton flash attention --------------------------------
# Its ROCm `triton` engine's attn_fwd (compiled here for CUDA) as rocm.py's
# `attention` calls it for prefill: q/k/v [tokens, heads, dim] views of the
# fused QKV projection (here three buffers of its row stride), 4 sequences
# (cu_seqlens int32), causal, randn; the first autotune config less
# waves_per_eu (256 x 64, 8 warps, 1 stage). Llama-3-8B (32 query and 8 KV
# heads of 128, QKV row 6144, fp16; sequences of 4096, 3072, 2048 and 1024
# tokens) and Phi-2 (32 heads of 80 padded to 128, QKV row 7680, bf16; 2048,
# 1536, 1024 and 512). Grid (max / 256, 32, 4): programs past a sequence's
# end return at once. FLOPs: each sequence's causal half at the real dim.
TGI_ATT = TRL + "tgi/server/text_generation_server/layers/attention/flash_attn_triton.py"
TGI_ATT_SIG = (
    "Q=*{t}, K=*{t}, V=*{t}, bias=None, sm_scale=fp32, L=None, Out=*{t}, stride_qz=i32, stride_qh=i32, "
    "stride_qm=i32, stride_qk=i32, stride_kz=i32, stride_kh=i32, stride_kn=i32, stride_kk=i32, stride_vz=i32, "
    "stride_vh=i32, stride_vk=i32, stride_vn=i32, stride_oz=i32, stride_oh=i32, stride_om=i32, stride_on=i32, "
    "stride_bz=i32, stride_bh=i32, stride_bm=i32, stride_bn=i32, cu_seqlens_q=*i32, cu_seqlens_k=*i32, "
    "dropout_p=fp32, philox_seed=i32, philox_offset_base=i32, encoded_softmax=None, HQ=32, HK={hk}, "
    "ACTUAL_BLOCK_DMODEL={d}, MAX_SEQLENS_Q={smax}, MAX_SEQLENS_K={smax}, VARLEN=True, IS_CAUSAL=True, "
    "BLOCK_M=256, BLOCK_DMODEL=128, BLOCK_N=64, PRE_LOAD_V=False, BIAS_TYPE=0, ENABLE_DROPOUT=False, "
    "RETURN_ENCODED_SOFTMAX=False, num_warps=8, num_stages=1")
AHQ = 32
for cid, t, tdt, AHK, AD, seqs in (
        ("tgi_flash_attn_varlen_llama3_prefill_causal", "fp16", "float16", 8, 128, (4096, 3072, 2048, 1024)),
        ("tgi_flash_attn_varlen_phi2_d80_prefill_causal", "bf16", "bfloat16", 32, 80, (2048, 1536, 1024, 512))):
    TOK, QKVR = sum(seqs), (AHQ + 2 * AHK) * AD
    cu = [0]
    for s_ in seqs:
        cu.append(cu[-1] + s_)
    qkv_strides = {}
    for p, names in (("q", "zhmk"), ("k", "zhnk"), ("v", "zhkn"), ("o", "zhmn")):
        row = AHQ * AD if p == "o" else QKVR
        qkv_strides.update({f"stride_{p}{names[0]}": 0, f"stride_{p}{names[1]}": AD,
                            f"stride_{p}{names[2]}": row, f"stride_{p}{names[3]}": 1})
    CASES.append(case(
        cid, TGI_ATT, "attn_fwd", TGI_ATT_SIG.format(t=t, hk=AHK, d=AD, smax=max(seqs)),
        dict(Q=("randn", tdt, TOK * QKVR), K=("randn", tdt, TOK * QKVR), V=("randn", tdt, TOK * QKVR),
             sm_scale=AD ** -0.5, Out=("zeros", tdt, TOK * AHQ * AD), **qkv_strides, stride_bz=0, stride_bh=0,
             stride_bm=0, stride_bn=0,
             cu_seqlens_q=lambda torch, gen, cu=cu: torch.tensor(cu, dtype=torch.int32, device="cuda"),
             cu_seqlens_k=lambda torch, gen, cu=cu: torch.tensor(cu, dtype=torch.int32, device="cuda"),
             dropout_p=0.0, philox_seed=0x1BF52, philox_offset_base=0x1D4B42),
        # fp32 sums of the head dim's and up to 4096 products in another
        # order, exp2 to an ulp; out in the operands' type.
        (cdiv(max(seqs), 256), AHQ, len(seqs)), ["Out"], bytes=2 * TOK * (2 * AHQ + 2 * AHK) * AD, tol=1e-2,
        flops=sum(2 * AHQ * s_ * s_ * AD for s_ in seqs)))

# --- Sparse-VideoGen: the dynamic block-sparse attention (svg/kmeans_utils.py) -----------------
# SVG2 on HunyuanVideo 720p's video tokens after the semantic permutation:
# q/k/v bf16 [1, 24, 118800, 128] (randn), 50 query and 200 key clusters
# a head (random sizes summing to 118800; int32 cumulative sizes [1, 24,
# 51] and [1, 24, 201]), the bool block map [1, 24, 50, 200] with each query
# cluster's 20 chosen key clusters (10 %); the launcher's long-sequence
# blocks (128 x 64, the default 4 warps). Grid 24 x 50. FLOPs: every query
# against the expected 10 % of the keys its cluster chose.
SH, SS, SQC, SKC, SD, SPICK = 24, 118800, 50, 200, 128, 20


def cluster_cum(g, torch, device, n):
    """Cumulative sizes [24, n + 1] of n clusters a head cut at random
    points (a cluster may be empty; the kernel skips it)."""
    pts = (torch.rand(SH, n - 1, generator=g, device=device) * SS).long().sort(dim=1).values
    zero = torch.zeros(SH, 1, dtype=torch.long, device=device)
    end = torch.full((SH, 1), SS, dtype=torch.long, device=device)
    return torch.cat([zero, pts, end], dim=1)


def svg_build(torch, g, device):
    qc = cluster_cum(g, torch, device, SQC)
    kc = cluster_cum(g, torch, device, SKC)
    picks = torch.rand(SH * SQC, SKC, generator=g, device=device).argsort(dim=1)[:, :SPICK]
    dmap = torch.zeros(SH * SQC, SKC, dtype=torch.bool, device=device)
    dmap.scatter_(1, picks, True)
    return dict(qc=qc.to(torch.int32).reshape(-1), kc=kc.to(torch.int32).reshape(-1), map=dmap.reshape(-1))


SVG = cached(svg_build)


SVG_QKV = SH * SS * SD
svg_strides = {}
for p in "qkvo":
    svg_strides.update({f"stride_{p}b": SH * SS * SD, f"stride_{p}h": SS * SD, f"stride_{p}s": SD,
                        f"stride_{p}d": 1})
CASES.append(case(
    "svg2_dynamic_block_sparse_attn_hunyuan_720p", TRL + "sparse_videogen/svg/kmeans_utils.py",
    "_dynamic_block_sparse_fwd_kernel",
    "Q=*bf16, K=*bf16, V=*bf16, Out=*bf16, dynamic_map=*i1, qc_cum_size=*i32, kc_cum_size=*i32, stride_qb=i32, "
    "stride_qh=i32, stride_qs=i32, stride_qd=i32, stride_kb=i32, stride_kh=i32, stride_ks=i32, stride_kd=i32, "
    "stride_vb=i32, stride_vh=i32, stride_vs=i32, stride_vd=i32, stride_ob=i32, stride_oh=i32, stride_os=i32, "
    "stride_od=i32, stride_dmap_b=i32, stride_dmap_h=i32, stride_dmap_qc=i32, stride_dmap_kc=i32, "
    "stride_qcs_b=i32, stride_qcs_h=i32, stride_qcs_qc=i32, stride_kcs_b=i32, stride_kcs_h=i32, "
    "stride_kcs_kc=i32, B=i32, H=i32, S=i32, D=i32, scale=fp32, QC_NUM=50, KC_NUM=200, BLOCK_M=128, "
    "BLOCK_N=64, BLOCK_D=128",
    dict(Q=("randn", "bfloat16", SVG_QKV), K=("randn", "bfloat16", SVG_QKV), V=("randn", "bfloat16", SVG_QKV),
         Out=("zeros", "bfloat16", SVG_QKV), dynamic_map=SVG("map"), qc_cum_size=SVG("qc"), kc_cum_size=SVG("kc"),
         **svg_strides, stride_dmap_b=SH * SQC * SKC, stride_dmap_h=SQC * SKC, stride_dmap_qc=SKC,
         stride_dmap_kc=1, stride_qcs_b=SH * (SQC + 1), stride_qcs_h=SQC + 1, stride_qcs_qc=1,
         stride_kcs_b=SH * (SKC + 1), stride_kcs_h=SKC + 1, stride_kcs_kc=1, B=1, H=SH, S=SS, D=SD,
         scale=SD ** -0.5),
    # fp32 sums of 128 and about 12000 products in another order, exp to an
    # ulp; bf16 out.
    (SH * SQC,), ["Out"], bytes=2 * 2 * SVG_QKV + 2 * 2 * SVG_QKV * SPICK // SKC * SQC, tol=1e-2,
    flops=4 * SH * SS * (SS * SPICK // SKC) * SD,
    # Imported in its package (`from .timer import ...`); flashinfer and
    # cuVS, which its host code imports, are absent here.
    package=TRL + "sparse_videogen",
    stubs={"flashinfer": {}, "cuvs.cluster.kmeans": dict(KMeansParams=object, fit=None)}))
