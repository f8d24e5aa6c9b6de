"""Real-world cases: the fourteenth sample (tests/realworld/MANIFEST.fourteenth):
ring-attention-pytorch's flash attention forward and backward (the Triton
flash attention each ring shard runs), segment-anything-fast's flash
attention with the decomposed relative position bias, LightX2V's sparse
linear attention (forward, dq and dk/dv backward, the block mean pooling)
and two of its DiT norm kernels, and AMD aiter's plain-Triton GEMMs (bf16,
split-K, fp8 and int8 with per-token/per-channel scales, DeepSeek-V3's
block-scaled fp8) and prefill attention, which compile for CUDA too.
bench/realworld_cases.py says what a case is.

Configs are each launcher's own, as MANIFEST.fourteenth gives them (ring
attention's fixed 128 x 128 forward and its backward's first autotune
config; segment-anything-fast's saved A100 table; LightX2V's fixed configs
and first autotune configs; aiter's MI300X JSON configs without the
AMD-only keys); grids as each launcher computes them; sizes those the
manifest names: a 4096-token ring shard of 8 heads, SAM's image encoder at
batch 32 (64 x 64 = 4096 tokens), Wan2.1-T2V-1.3B at 480p and 81 frames
(12 heads of 128, hidden 1536, 32760 tokens), Llama-3-8B for aiter's
GEMMs and prefill, DeepSeek-V3's down projection for the block-scaled fp8
GEMM. Kernels of tl.dot count FLOPs, the others bytes.

Signatures are written without alignment hints (realworld_cubins.py --list
adds the ones Triton's JIT specializes on).
"""

from realworld_case_rules import TRL, cached, case, cdiv, fp8_e4m3

CASES = []

# --- ring-attention-pytorch (ring_attention_pytorch/triton_flash_attn.py) ---------------
# Loaded as a tutorial is (kernels, helpers and imports only): at import the
# module looks up the `triton-nightly` distribution and exits when it is not
# installed. A ring shard: batch 2 x 4096 tokens, 8 heads, bf16 [batch, seq,
# heads, dim] (randn), the strides the launcher passes (stride(0), stride(2),
# stride(1)); m and lse fp32 [batch, heads, 4096] (seqlen rounded to 128).
# EVEN_M/N/HEADDIM True from its heuristics. CACHE_KEY_SEQLEN_Q/K seqlen //
# 32. Forward: 128 x 128 blocks, 1 stage, 4 warps at head dim 64, 8 at 128;
# grid (4096 / 128, batch x heads).
RB, RS, RH = 2, 4096, 8
RATT = TRL + "ring_attention/ring_attention_pytorch/triton_flash_attn.py"
RROW = RB * RH * RS  # m, lse, delta: [batch, heads, seqlen_q_rounded]


def ring_strides(prefix, d, names=("b", "h", "m")):
    """[batch, seq, heads, d] strides as the launcher passes them."""
    return {f"stride_{prefix}{names[0]}": RS * RH * d, f"stride_{prefix}{names[1]}": d,
            f"stride_{prefix}{names[2]}": RH * d}


def key_padding(torch, device):
    """The key-padding bias ring attention builds with torch.where, a row
    [batch, keys]: 0 for the batch's valid keys, -finfo(fp32).max past them
    (batch 0 all 4096 valid, batch 1 3584)."""
    valid = torch.tensor([RS, RS - 512], device=device)
    keep = torch.arange(RS, device=device)[None, :] < valid[:, None]
    return torch.where(keep, 0.0, -torch.finfo(torch.float32).max)


# The forward's [b, h, i, j] and the backward's [b, 1, 1, j].
ring_bias = cached(lambda torch, g, device: dict(
    matrix=key_padding(torch, device)[:, None, None, :].expand(RB, RH, RS, RS).contiguous().reshape(-1)))
ring_bias_vector = cached(lambda torch, g, device: dict(vector=key_padding(torch, device).reshape(-1)))

RING_FWD_SIG = (
    "Q=*bf16, K=*bf16, V=*bf16, Bias={bias}, Out=*bf16, M=*fp32, Lse=*fp32, softmax_scale=fp32, stride_qb=i32, "
    "stride_qh=i32, stride_qm=i32, stride_kb=i32, stride_kh=i32, stride_kn=i32, stride_vb=i32, stride_vh=i32, "
    "stride_vn=i32, stride_bb=i32, stride_bh=i32, stride_bm=i32, stride_ob=i32, stride_oh=i32, stride_om=i32, "
    "nheads=i32, seqlen_q=i32, seqlen_k=i32, seqlen_q_rounded=i32, headdim=i32, CACHE_KEY_SEQLEN_Q=i32, "
    "CACHE_KEY_SEQLEN_K=i32, HAS_BIAS={has_bias}, IS_CAUSAL={causal}, CAUSAL_MASK_DIAGONAL=False, "
    "LOAD_ACCUMULATED={load}, RETURN_NORMALIZED_OUTPUT={load}, SOFTCLAMP_QK_SIM=False, SOFTCLAMP_VALUE=50.0, "
    "BLOCK_HEADDIM={d}, EVEN_M=True, EVEN_N=True, EVEN_HEADDIM=True, BLOCK_M=128, BLOCK_N=128, "
    "num_warps={warps}, num_stages=1")
RING_SIZES = dict(nheads=RH, seqlen_q=RS, seqlen_k=RS, seqlen_q_rounded=RS, CACHE_KEY_SEQLEN_Q=RS // 32,
                  CACHE_KEY_SEQLEN_K=RS // 32)

# The first pass of a causal ring (nothing accumulated yet: m and lse start
# at -inf, the unnormalized output, m and lse stored) at head dim 64.
D = 64
QKV = RB * RS * RH * D
CASES.append(case(
    "ring_attn_fwd_causal_d64_first_pass", RATT, "_fwd_kernel",
    RING_FWD_SIG.format(bias="None", has_bias=False, causal=True, load=False, d=D, warps=4),
    dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
         Out=("zeros", "bfloat16", QKV), M=("zeros", "float32", RROW), Lse=("zeros", "float32", RROW),
         softmax_scale=D ** -0.5, **ring_strides("q", D), **ring_strides("k", D, "bhn"),
         **ring_strides("v", D, "bhn"), stride_bb=0, stride_bh=0, stride_bm=0,  # no bias: the host's zeros
         **ring_strides("o", D), headdim=D, **RING_SIZES),
    # fp32 sums of 64 and up to 4096 products in another order, exp and log
    # to an ulp; the unnormalized output in bf16.
    (RS // 128, RB * RH), ["Out", "M", "Lse"], bytes=2 * 4 * QKV + 2 * 4 * RROW, tol=1e-2,
    flops=2 * RB * RH * RS * RS * D))

# A later pass at head dim 128 with the key-padding bias (fp32 [b, h, i, j]
# from torch.where; the forward reads each (b, h)'s first row), loading the
# accumulated output, m and lse of the earlier passes (the output randn, m
# in [0.5, 1.5], lse in [8, 9]: log of about 4096 keys' sums), returning
# the normalized output and lse.
D = 128
QKV = RB * RS * RH * D
CASES.append(case(
    "ring_attn_fwd_bias_d128_accumulated", RATT, "_fwd_kernel",
    RING_FWD_SIG.format(bias="*fp32", has_bias=True, causal=False, load=True, d=D, warps=8),
    dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
         Bias=ring_bias("matrix"), Out=("randn", "bfloat16", QKV), M=("uniform", "float32", RROW, 0.5, 1.5),
         Lse=("uniform", "float32", RROW, 8.0, 9.0), softmax_scale=D ** -0.5, **ring_strides("q", D),
         **ring_strides("k", D, "bhn"), **ring_strides("v", D, "bhn"), stride_bb=RH * RS * RS,
         stride_bh=RS * RS, stride_bm=RS, **ring_strides("o", D), headdim=D, **RING_SIZES),
    # As above; the output rescaled by exp(m - lse) and rounded to bf16.
    (RS // 128, RB * RH), ["Out", "Lse"], bytes=2 * 5 * QKV + 4 * RB * RH * RS + 4 * 2 * RROW, tol=1e-2,
    flops=4 * RB * RH * RS * RS * D))

# Backward: the first autotune config (128 x 128, not sequence-parallel: one
# program per (batch, head) walks every column block, dq read, added to
# and written back in fp32 each block; 8 warps, 1 stage). Grid (1, batch x
# heads). dq accumulates into fp32 zeros (the config's pre-hook zeroes it):
# reset before every run. LSE in [7, 8] (above any row's scaled q.k here,
# so that p stays under 1), delta in [-1, 1]; do randn; dk and dv bf16.
# Causal at head dim 64 and non-causal with the [b, 1, 1, j] key-padding
# bias ("vector", expanded: zero head and row strides) at 128.
RING_BWD_SIG = (
    "Q=*bf16, K=*bf16, V=*bf16, Bias={bias}, DO=*bf16, DQ=*fp32, DK=*bf16, DV=*bf16, LSE=*fp32, D=*fp32, "
    "softmax_scale=fp32, stride_qb=i32, stride_qh=i32, stride_qm=i32, stride_kb=i32, stride_kh=i32, "
    "stride_kn=i32, stride_vb=i32, stride_vh=i32, stride_vn=i32, stride_bb=i32, stride_bh=i32, stride_bm=i32, "
    "stride_dob=i32, stride_doh=i32, stride_dom=i32, stride_dqb=i32, stride_dqh=i32, stride_dqm=i32, "
    "stride_dkb=i32, stride_dkh=i32, stride_dkn=i32, stride_dvb=i32, stride_dvh=i32, stride_dvn=i32, "
    "nheads=i32, seqlen_q=i32, seqlen_k=i32, seqlen_q_rounded=i32, headdim=i32, CACHE_KEY_SEQLEN_Q=i32, "
    "CACHE_KEY_SEQLEN_K=i32, BIAS_TYPE='{bias_type}', IS_CAUSAL={causal}, CAUSAL_MASK_DIAGONAL=False, "
    "SOFTCLAMP_QK_SIM=False, SOFTCLAMP_VALUE=50.0, BLOCK_HEADDIM={d}, SEQUENCE_PARALLEL=False, EVEN_M=True, "
    "EVEN_N=True, EVEN_HEADDIM=True, BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=1")
for cid, D, causal, bias_type in (("ring_attn_bwd_causal_d64", 64, True, "none"),
                                  ("ring_attn_bwd_key_padding_d128", 128, False, "vector")):
    QKV = RB * RS * RH * D
    args = dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
                DO=("randn", "bfloat16", QKV), DQ=("zeros", "float32", QKV), DK=("zeros", "bfloat16", QKV),
                DV=("zeros", "bfloat16", QKV), LSE=("uniform", "float32", RROW, 7.0, 8.0),
                D=("uniform", "float32", RROW, -1.0, 1.0), softmax_scale=D ** -0.5, headdim=D, **RING_SIZES)
    for prefix, names in (("q", "bhm"), ("k", "bhn"), ("v", "bhn"), ("do", "bhm"), ("dq", "bhm"),
                          ("dk", "bhn"), ("dv", "bhn")):
        args.update(ring_strides(prefix, D, names))
    if bias_type == "vector":
        args.update(Bias=ring_bias_vector("vector"), stride_bb=RS, stride_bh=0, stride_bm=0)
    else:
        args.update(stride_bb=0, stride_bh=0, stride_bm=0)
    CASES.append(case(
        cid, RATT, "_bwd_kernel",
        RING_BWD_SIG.format(bias="*fp32" if bias_type == "vector" else "None", bias_type=bias_type,
                            causal=causal, d=D),
        args,
        # bf16 operands, fp32 sums of 4096 products in another order; dq
        # in fp32 summed over 32 column blocks, dk and dv rounded to bf16.
        (1, RB * RH), ["DQ", "DK", "DV"], bytes=2 * 7 * QKV + 4 * 2 * QKV + 8 * RROW, tol=2e-2, reset=["DQ"],
        flops=5 * 2 * RB * RH * RS * RS * D // (2 if causal else 1)))

# --- segment-anything-fast (segment_anything_fast/flash_4.py) --------------------------
# Loaded as a tutorial is: at import the module registers a torch library
# op. _fwd_kernel_aligned on the image encoder's global attention at batch
# 32: 64 x 64 = 4096 tokens, bf16 [batch, heads, 4096, dim] (randn) with
# rel_h_w [batch, heads, 4096, 128] (the 64 rel_h and 64 rel_w terms per
# query, randn); configs from the library's saved A100 table: ViT-B (12
# heads of 64: 128 x 64, 4 warps, 3 stages) and ViT-H (16 heads of 80,
# padded to 128 as the caller pads them: 128 x 64, 8 warps, 3 stages;
# sm_scale 80 ** -0.5). Grid (4096 / 128, batch x heads, 1).
SZ, SN = 32, 4096
SAM_SIG = ("Q=*bf16, K=*bf16, V=*bf16, B0=*bf16, sm_scale=fp32, Out=*bf16, stride_qh=i32, stride_qm=i32, "
           "stride_qk=i32, stride_kh=i32, stride_kn=i32, stride_kk=i32, stride_vh=i32, stride_vk=i32, "
           "stride_vn=i32, stride_oh=i32, stride_om=i32, stride_on=i32, stride_b0h=i32, stride_b0m=i32, Z=i32, "
           "H=i32, N_CTX=i32, P_SEQ=i32, OUT_DTYPE=tl.bfloat16, BIAS_LAST_SIZE=64, B0_NUMEL=128, "
           "BLOCK_DMODEL={d}, BLOCK_M=128, BLOCK_N=64, num_warps={warps}, num_stages=3")
for cid, H, D, dim, warps in (("sam_fast_flash_rel_pos_vit_b_b32", 12, 64, 64, 4),
                              ("sam_fast_flash_rel_pos_vit_h_b32", 16, 128, 80, 8)):
    QKV, BIAS = SZ * H * SN * D, SZ * H * SN * 128
    strides = {}
    for prefix, names in (("q", "hmk"), ("k", "hnk"), ("v", "hkn"), ("o", "hmn")):
        strides.update({f"stride_{prefix}{names[0]}": SN * D, f"stride_{prefix}{names[1]}": D,
                        f"stride_{prefix}{names[2]}": 1})
    CASES.append(case(
        cid, TRL + "sam_fast/segment_anything_fast/flash_4.py", "_fwd_kernel_aligned",
        SAM_SIG.format(d=D, warps=warps),
        dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
             B0=("randn", "bfloat16", BIAS), sm_scale=dim ** -0.5, Out=("zeros", "bfloat16", QKV),
             stride_b0h=SN * 128, stride_b0m=128, Z=SZ, H=H, N_CTX=SN, P_SEQ=0, **strides),
        # fp32 sums of D and 4096 products in another order, exp2 to an ulp;
        # q scaled and the bias terms added in bf16 alike; bf16 out.
        (SN // 128, SZ * H, 1), ["Out"], bytes=2 * (4 * QKV + BIAS), tol=1e-2,
        flops=4 * SZ * H * SN * SN * D))

# --- LightX2V's sparse linear attention (common/ops/attn/kernels/sla_kernel.py) -----------
# Loaded as a tutorial is (the files import nothing the sample lacks; their
# package __init__ files are not in it). Wan2.1-T2V-1.3B at 480p, 81
# frames: 32760 tokens, 12 heads, [1, 12, 32760, dim] contiguous bf16
# (randn). The block map as get_block_map builds it: each query block's
# top 10 % (51) of the 512 64-token key blocks (distinct, in no order:
# topk(sorted=False)), an int64 LUT [1, 12, query blocks, 51], and the int8
# map [1, 12, query blocks, 512] with 1 at those blocks. The forward's
# fixed config (3 stages; 8 warps at head dim 128 with 64 x 64 blocks, 4
# at 64 with 128 x 64), grid (query blocks, 12). FLOPs: each query block
# against its 51 key blocks (the last one 56 keys, counted whole).
SH, SL = 12, 32760
SLA = TRL + "lightx2v/lightx2v/common/ops/attn/kernels/sla_kernel.py"
SKB = cdiv(SL, 64)  # key blocks
STOPK = int(0.1 * SKB)


def sla_block_map(query_blocks):
    def build(torch, g, device):
        rows = SH * query_blocks
        lut = torch.rand(rows, SKB, generator=g, device=device).argsort(dim=1)[:, :STOPK].contiguous()
        block_map = torch.zeros(rows, SKB, dtype=torch.int8, device=device)
        block_map.scatter_(1, lut, 1)
        return dict(lut=lut.reshape(-1), map=block_map.reshape(-1))
    return cached(build)


SLA_MAP = {64: sla_block_map(cdiv(SL, 64)), 128: sla_block_map(cdiv(SL, 128))}
for cid, D, bm, warps in (("lightx2v_sla_fwd_wan_d128", 128, 64, 8),
                          ("lightx2v_sla_fwd_d64_bm128", 64, 128, 4)):
    QKV, MB = SH * SL * D, cdiv(SL, bm)
    CASES.append(case(
        cid, SLA, "_attn_fwd",
        f"Q=*bf16, K=*bf16, V=*bf16, qk_scale={D ** -0.5}, topk={STOPK}, LUT=*i64, LSE=*fp32, OS=*bf16, L={SL}, "
        f"M_BLOCKS={MB}, D={D}, BLOCK_M={bm}, BLOCK_N=64, num_warps={warps}, num_stages=3",
        dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
             LUT=SLA_MAP[bm]("lut"), LSE=("zeros", "float32", SH * SL), OS=("zeros", "bfloat16", QKV)),
        # fp32 sums of D and 3264 products in another order, exp2 and log2
        # to an ulp; bf16 out.
        (MB, SH), ["OS", "LSE"], bytes=2 * 2 * QKV + 2 * 2 * SH * MB * STOPK * 64 * D + 8 * SH * MB * STOPK
        + 4 * SH * SL, tol=1e-2, flops=4 * SH * MB * bm * STOPK * 64 * D))

# Its backward at head dim 128 (the backward's fixed config: 8 warps, 5
# stages): do randn, LSE (base 2, as the forward stores it) in [12, 13],
# above any row's scaled q.k here and about log2 of 3264 keys' sums, delta
# in [-0.5, 0.5]. dq: the 64-row query blocks over their LUT (its loop 2
# stages), grid (512, 12), three dots a key block. dk/dv: one program per
# 64-key block walks every 64-row query block, computing only where the
# block map says (four dots); with 64-row query blocks, and with the
# manifest's 128-row ones (M_BLOCKS 256, BLOCK_SLICE_FACTOR 2: the map
# read once per two 64-row slices), grid (512, 12).
D = 128
QKV = SH * SL * D
SLA_BWD_IN = dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
                  DOS=("randn", "bfloat16", QKV), LSE=("uniform", "float32", SH * SL, 12.0, 13.0),
                  DELTAS=("uniform", "float32", SH * SL, -0.5, 0.5))
MB = cdiv(SL, 64)
CASES.append(case(
    "lightx2v_sla_bwd_dq_wan_d128", SLA, "_attn_bwd_dq",
    f"Q=*bf16, K=*bf16, V=*bf16, LSE=*fp32, DELTAS=*fp32, DOS=*bf16, DQ=*bf16, LUT=*i64, qk_scale={D ** -0.5}, "
    f"topk={STOPK}, L={SL}, M_BLOCKS={MB}, D={D}, BLOCK_M=64, BLOCK_N=64, num_warps=8, num_stages=5",
    dict(SLA_BWD_IN, DQ=("zeros", "bfloat16", QKV), LUT=SLA_MAP[64]("lut")),
    # bf16 operands, fp32 sums of 128 and 3264 products in another order,
    # exp2 to an ulp; bf16 out.
    (MB, SH), ["DQ"], bytes=2 * 3 * QKV + 2 * 2 * 2 * SH * MB * STOPK * 64 * D + 8 * SH * (SL + MB * STOPK),
    tol=2e-2, flops=6 * SH * MB * 64 * STOPK * 64 * D))
for cid, bm, slices in (("lightx2v_sla_bwd_dkdv_wan_d128", 64, 1),
                        ("lightx2v_sla_bwd_dkdv_wan_d128_bm128", 128, 2)):
    MB = cdiv(SL, bm)
    CASES.append(case(
        cid, SLA, "_attn_bwd_dkdv",
        "Q=*bf16, K=*bf16, V=*bf16, DOS=*bf16, DK=*bf16, DV=*bf16, qk_scale=fp32, KBID=*i8, LSE=*fp32, "
        f"DELTAS=*fp32, L={SL}, M_BLOCKS={MB}, N_BLOCKS={SKB}, D={D}, BLOCK_M={bm}, BLOCK_N=64, "
        f"BLOCK_SLICE_FACTOR={slices}, num_warps=8, num_stages=5",
        dict(SLA_BWD_IN, DK=("zeros", "bfloat16", QKV), DV=("zeros", "bfloat16", QKV), qk_scale=D ** -0.5,
             KBID=SLA_MAP[bm]("map")),
        # As the dq kernel's, over the query blocks that chose the key
        # block; bf16 out.
        (SKB, SH), ["DK", "DV"], bytes=2 * 4 * QKV + 2 * 2 * 2 * SH * MB * STOPK * bm * D + SH * MB * SKB,
        tol=2e-2, flops=8 * SH * MB * STOPK * bm * 64 * D))

# The mean pooling get_block_map runs on q and k first (sla_util.py
# compress_kernel): 64-token means of [1, 12, 32760, 128] bf16, grid (512,
# 12), the default 4 warps.
CASES.append(case(
    "lightx2v_sla_mean_pool_wan_d128", TRL + "lightx2v/lightx2v/common/ops/attn/utils/sla_util.py",
    "compress_kernel", f"X=*bf16, XM=*bf16, L={SL}, D=128, BLOCK_L=64",
    dict(X=("randn", "bfloat16", SH * SL * 128), XM=("zeros", "bfloat16", SH * SKB * 128)),
    # fp32 sums of 64 in another order; bf16 out.
    (SKB, SH), ["XM"], bytes=2 * SH * SL * 128 + 2 * SH * SKB * 128, tol=1e-2))

# --- LightX2V's DiT norms (common/ops/norm/triton_ops.py) ----------------------------------
# Loaded as a tutorial is (its magi_compiler import and custom-op
# registrations left out). Wan's hidden states [32760, 1536] bf16 (randn):
# the tiled RMS norm (rms_norm_kernel: 16 rows a program, BLOCK_SIZE_DIM
# 2048, the default 4 warps; weight randn, grid cdiv(32760, 16)), and the
# modulation x * (1 + scale) + shift with Wan's [1, 1, 1536] scale and
# shift broadcast over the tokens (expanded: zero token stride), 128 x 128
# tiles, 4 warps, 2 stages, grid (cdiv(32760, 128), 1536 / 128, 1).
NORM = TRL + "lightx2v/lightx2v/common/ops/norm/triton_ops.py"
WL, WC = SL, 1536
CASES.append(case(
    "lightx2v_rms_norm_tiled_wan", NORM, "_rms_norm_tiled_onepass",
    f"y_ptr=*bf16, x_ptr=*bf16, w_ptr=*bf16, SEQ={WL}, DIM={WC}, EPS=1e-06, BLOCK_SIZE_SEQ=16, "
    "BLOCK_SIZE_DIM=2048",
    dict(y_ptr=("zeros", "bfloat16", WL * WC), x_ptr=("randn", "bfloat16", WL * WC), w_ptr=("randn", "bfloat16", WC)),
    # fp32 sums of 1536 squares in another order, rsqrt approximate in
    # both; bf16 out.
    (cdiv(WL, 16),), ["y_ptr"], bytes=2 * 2 * WL * WC + 2 * WC, tol=1e-2))
CASES.append(case(
    "lightx2v_scale_shift_modulation_wan", NORM, "fuse_scale_shift_kernel_blc_opt",
    "x_ptr=*bf16, shift_ptr=*bf16, scale_ptr=*bf16, y_ptr=*bf16, B=i32, L=i32, C=i32, stride_x_b=i32, "
    "stride_x_l=i32, stride_x_c=i32, stride_s_b=i32, stride_s_l=i32, stride_s_c=i32, stride_sc_b=i32, "
    "stride_sc_l=i32, stride_sc_c=i32, SCALE_IS_SCALAR=False, SHIFT_IS_SCALAR=False, BLOCK_L=128, BLOCK_C=128, "
    "num_warps=4, num_stages=2",
    dict(x_ptr=("randn", "bfloat16", WL * WC), shift_ptr=("randn", "bfloat16", WC, 0.1),
         scale_ptr=("randn", "bfloat16", WC, 0.1), y_ptr=("zeros", "bfloat16", WL * WC), B=1, L=WL, C=WC,
         stride_x_b=WL * WC, stride_x_l=WC, stride_x_c=1, stride_s_b=WC, stride_s_l=0, stride_s_c=1,
         stride_sc_b=WC, stride_sc_l=0, stride_sc_c=1),
    # bf16 arithmetic, a multiply-add contracted or not.
    (cdiv(WL, 128), WC // 128, 1), ["y_ptr"], bytes=2 * 2 * WL * WC + 2 * 2 * WC, tol=1e-2))

# --- aiter (aiter/ops/triton/_triton_kernels) ----------------------------------------------
# Imported as aiter.ops.triton._triton_kernels.X from tests/realworld/aiter
# (namespace packages: the sample carries no __init__ files); its
# pid_preprocessing jit helpers (remap_xcd, pid_grid) are the GEMMs' srcs,
# and gemm_config_utils' arch lookup asks the active Triton driver (CUDA
# there). Configs from aiter's
# MI300X JSON as the manifest gives them. The GEMMs take the weight [N, K]
# transposed (w.T: stride_bk 1, stride_bn K); grid NUM_KSPLIT x the tiles.
AITER_ROOT = TRL + "aiter"
AIT = AITER_ROOT + "/aiter/ops/triton/_triton_kernels/"
AIT_RULES = dict(package=AITER_ROOT)
AIT_GEMM_RULES = dict(AIT_RULES, srcs=[AITER_ROOT + "/aiter/ops/triton/utils/_triton/pid_preprocessing.py"])

# bf16 GEMM on Llama-3-8B's up projection (N 14336, K 4096) at the M <= 64
# config: 64 x 128 x 128, GROUP 1, 4 warps, 2 stages, .cg weight loads.
# Unsplit at M 64 (EVEN_MN True), and split-K 4 (SPLITK_BLOCK_SIZE 1024)
# at M 32 into the fp32 partials [4, 32, 14336] (EVEN_MN False; the bias
# is added by the reduce kernel, not this one).
N, K = 14336, 4096
A16W16_SIG = ("a_ptr=*bf16, b_ptr=*bf16, bias_ptr={bias}, c_ptr=*{c}, M=i32, N=i32, K=i32, stride_am=i32, "
              "stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_ck=i32, stride_cm=i32, stride_cn=i32, "
              "BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=1, NUM_KSPLIT={split}, "
              "SPLITK_BLOCK_SIZE={kblock}, EVEN_K=True, EVEN_MN={even}, cache_modifier='.cg', activation='', "
              "use_activation=False, ADD_BIAS={bias_on}, SKIP_REDUCE=False, num_warps=4, num_stages=2")
for cid, m, split in (("aiter_gemm_a16w16_llama3_up_m64", 64, 1),
                      ("aiter_gemm_a16w16_splitk4_bias_llama3_up_m32", 32, 4)):
    args = dict(a_ptr=("randn", "bfloat16", m * K), b_ptr=("randn", "bfloat16", N * K, K ** -0.5),
                c_ptr=("zeros", "bfloat16" if split == 1 else "float32", split * m * N), M=m, N=N, K=K,
                stride_am=K, stride_ak=1, stride_bk=1, stride_bn=K, stride_ck=0 if split == 1 else m * N,
                stride_cm=N, stride_cn=1)
    if split > 1:
        args["bias_ptr"] = ("randn", "bfloat16", N)
    CASES.append(case(
        cid, AIT + "gemm/basic/gemm_a16w16.py", "_gemm_a16_w16_kernel",
        A16W16_SIG.format(bias="None" if split == 1 else "*bf16", c="bf16" if split == 1 else "fp32", split=split,
                          kblock=K // split, even=m % 64 == 0, bias_on=split > 1),
        args,
        # fp32 sums of 4096 (or 1024) products in another order; bf16 or
        # fp32 out.
        (split * cdiv(m, 64) * cdiv(N, 128),), ["c_ptr"],
        bytes=2 * (m * K + N * K) + (2 if split == 1 else 4) * split * m * N, tol=1e-2,
        flops=2 * m * N * K, **AIT_GEMM_RULES))

# Per-token / per-channel scaled 8-bit GEMM (128 x 128 x 128, GROUP 4, 4
# warps, 2 stages) at 512 tokens on the up projection (GRID_MN 4 x 112 =
# 448): fp8 e4m3 (randn * 16, as a per-tensor quantization fills the
# range), scales fp32 [512] and [14336], bf16 out; and int8 (every value in
# [-127, 127]) with a bf16 bias [14336].
M = 512
A8W8_SIG = ("a_ptr=*{t}, b_ptr=*{t}, a_scale_ptr=*fp32, b_scale_ptr=*fp32, bias_ptr={bias}, c_ptr=*bf16, "
            "M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_ck=i32, "
            "stride_cm=i32, stride_cn=i32, HAS_BIAS={has_bias}, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, "
            "BLOCK_SIZE_K=128, GROUP_SIZE_M=4, NUM_KSPLIT=1, SPLITK_BLOCK_SIZE=4096, EVEN_K=True, "
            f"GRID_MN={cdiv(M, 128) * cdiv(N, 128)}, cache_modifier=None, num_warps=4, num_stages=2")
for cid, t, bias in (("aiter_gemm_a8w8_fp8_llama3_up_m512", "fp8e4nv", False),
                     ("aiter_gemm_a8w8_int8_bias_llama3_up_m512", "i8", True)):
    if t == "fp8e4nv":
        a, b = fp8_e4m3(M * K, 16.0), fp8_e4m3(N * K, 16.0)
        a_scale, b_scale = ("uniform", "float32", M, 0.005, 0.02), ("uniform", "float32", N, 5e-4, 1e-3)
    else:
        a, b = ("randint", "int8", M * K, -127, 128), ("randint", "int8", N * K, -127, 128)
        a_scale, b_scale = ("uniform", "float32", M, 0.005, 0.02), ("uniform", "float32", N, 1e-4, 2e-4)
    args = dict(a_ptr=a, b_ptr=b, a_scale_ptr=a_scale, b_scale_ptr=b_scale, c_ptr=("zeros", "bfloat16", M * N),
                M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=1, stride_bn=K, stride_ck=0, stride_cm=N,
                stride_cn=1)
    if bias:
        args["bias_ptr"] = ("randn", "bfloat16", N)
    CASES.append(case(
        cid, AIT + "gemm/basic/gemm_a8w8.py", "_gemm_a8w8_kernel",
        A8W8_SIG.format(t=t, bias="*bf16" if bias else "None", has_bias=bias),
        args,
        # fp8: fp32 sums of 4096 exact products in another order; int8:
        # exact int32 sums; then the same two scales (and the bias, added in
        # bf16); bf16 out.
        (cdiv(M, 128) * cdiv(N, 128),), ["c_ptr"], bytes=M * K + N * K + 2 * M * N + 4 * (M + N), tol=1e-2,
        flops=2 * M * N * K, **AIT_GEMM_RULES))

# DeepSeek-V3's block-scaled fp8 GEMM on its MLP down projection (N 7168, K
# 18432) at 128 tokens (GRID_MN 56): 128 x 128 x 128, GROUP 1, .cg weight
# loads, 4 warps, 2 stages (num_stages, which the kernel also takes as a
# parameter for its K loop); activation scales fp32 [128, 144] (one per
# token and 128 of K), weight scales [56, 144] (per 128 x 128 block) passed
# transposed; fp8 e4m3 randn * 64 (a per-block quantization fills the
# range), scales in [1e-3, 4e-3]. bf16 out.
M, N, K = 128, 7168, 18432
CASES.append(case(
    "aiter_gemm_a8w8_blockscale_dsv3_down_m128", AIT + "gemm/basic/gemm_a8w8_blockscale.py",
    "_gemm_a8w8_blockscale_kernel",
    "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*bf16, a_scale_ptr=*fp32, b_scale_ptr=*fp32, M=i32, N=i32, K=i32, "
    "stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_ck=i32, stride_cm=i32, stride_cn=i32, "
    "stride_ascale_m=i32, stride_ascale_k=i32, stride_bscale_k=i32, stride_bscale_n=i32, GROUP_K=128, "
    "GROUP_N=128, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=1, NUM_KSPLIT=1, "
    f"SPLITK_BLOCK_SIZE={K}, EVEN_K=True, GRID_MN={cdiv(M, 128) * cdiv(N, 128)}, cache_modifier='.cg', "
    "num_warps=4, num_stages=2",
    dict(a_ptr=fp8_e4m3(M * K, 64.0), b_ptr=fp8_e4m3(N * K, 64.0), c_ptr=("zeros", "bfloat16", M * N),
         a_scale_ptr=("uniform", "float32", M * (K // 128), 1e-3, 4e-3),
         b_scale_ptr=("uniform", "float32", (N // 128) * (K // 128), 1e-3, 4e-3), M=M, N=N, K=K, stride_am=K,
         stride_ak=1, stride_bk=1, stride_bn=K, stride_ck=0, stride_cm=N, stride_cn=1, stride_ascale_m=K // 128,
         stride_ascale_k=1, stride_bscale_k=1, stride_bscale_n=K // 128),
    # fp32 sums of 128 exact products a block in another order, scaled and
    # summed over 144 blocks alike; bf16 out.
    (cdiv(M, 128) * cdiv(N, 128),), ["c_ptr"],
    bytes=M * K + N * K + 2 * M * N + 4 * (M + N // 128) * (K // 128), tol=1e-2, flops=2 * M * N * K,
    **AIT_GEMM_RULES))

# The page-size-1 prefill attention (lightllm's _fwd_kernel; 128 x 128, 1
# stage, 8 warps at head dim 128, 4 at 64), causal, on 4 sequences of 4096
# tokens packed [tokens, heads, dim] (B_Start_Loc 0, 4096, ...; B_Seqlen
# 4096 each): Llama-3-8B (32 query heads over 8 KV heads of 128, bf16),
# and the manifest's MHA variant at head dim 64 (32 heads, fp16). Grid
# (4, 32, 4096 / 128). FLOPs: the causal half.
PB, PS, PHQ = 4, 4096, 32
for cid, dt, D, groups, warps in (("aiter_prefill_attn_gqa_llama3_causal", "bf16", 128, 4, 8),
                                  ("aiter_prefill_attn_mha_d64_causal_fp16", "fp16", 64, 1, 4)):
    tdt = {"bf16": "bfloat16", "fp16": "float16"}[dt]
    PHK = PHQ // groups
    QN, KN = PB * PS * PHQ * D, PB * PS * PHK * D
    CASES.append(case(
        cid, AIT + "attention/prefill_attention.py", "_fwd_kernel",
        f"Q=*{dt}, K=*{dt}, V=*{dt}, sm_scale=fp32, B_Start_Loc=*i32, B_Seqlen=*i32, Out=*{dt}, stride_qbs=i32, "
        "stride_qh=i32, stride_kbs=i32, stride_kh=i32, stride_vbs=i32, stride_vh=i32, stride_obs=i32, "
        f"stride_oh=i32, kv_group_num={groups}, BLOCK_M=128, BLOCK_DMODEL={D}, BLOCK_N=128, IS_CAUSAL=True, "
        f"Lk={D}, num_warps={warps}, num_stages=1",
        dict(Q=("randn", tdt, QN), K=("randn", tdt, KN), V=("randn", tdt, KN), sm_scale=D ** -0.5,
             B_Start_Loc=lambda torch, gen: torch.arange(PB, dtype=torch.int32, device="cuda") * PS,
             B_Seqlen=("full", "int32", PB, PS), Out=("zeros", tdt, QN), stride_qbs=PHQ * D, stride_qh=D,
             stride_kbs=PHK * D, stride_kh=D, stride_vbs=PHK * D, stride_vh=D, stride_obs=PHQ * D, stride_oh=D),
        # fp32 sums of D and up to 4096 products in another order, exp to
        # an ulp; out in the operands' type.
        (PB, PHQ, PS // 128), ["Out"], bytes=2 * 2 * (QN + KN), tol=1e-2,
        flops=2 * PB * PHQ * PS * PS * D, **AIT_RULES))
