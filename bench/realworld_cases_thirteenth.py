"""Real-world cases: the thirteenth sample (tests/realworld/MANIFEST.thirteenth):
FLASHNN's tensor-core kernels (flash attention v2 with GQA, the fused MoE
GEMMs in fp16, W8A8 and A16W4, the weight-only A16W8/A16W4 split-K GEMMs,
the W8A8 GEMM, paged decode attention with tensor cores and its partition
reduction), FastVideo's sliding tile attention and KIVI's quantized-key
batched product. bench/realworld_cases.py says what a case is.

Configs are each launcher's own with autotuning off (FLASHNN's default:
`autotune_triton_kernels` unset, so its base config or the one config of its
non-tuning list; FastVideo's first autotune config; KIVI's launcher picks),
as MANIFEST.thirteenth gives them; grids as each launcher computes them;
sizes LLM-sized (Llama-3-8B: 32 query heads over 8 KV heads of 128, hidden
4096, FFN 14336; Mixtral-8x7B's MoE: 8 experts, top-2, d_model 4096, FFN
14336, 4096 tokens; decode at 16 tokens for the weight-only GEMMs, whose
tiles are 16 rows, and 32-64 sequences of 4096 for paged attention;
HunyuanVideo's 30 x 48 x 80 latent canvas; Llama-2-7B decode for KIVI).
Kernels without tl.dot and decode kernels whose dots are 16 rows count
bytes, the others FLOPs.

Signatures are written without alignment hints (realworld_cubins.py --list
adds the ones Triton's JIT specializes on).
"""

from realworld_case_rules import TRL, case, cdiv, moe_routing

CASES = []

# --- FLASHNN (flashnn/triton_kernels) ------------------------------------------------------
# Imported as flashnn.triton_kernels.X from tests/realworld/flashnn (its
# package __init__ files left out: they import every module, and its
# torch-module wrappers); flashnn.kernel_backend, which the kernels' modules
# import for get_autotune_triton_kernels, needs only torch. The fused MoE
# modules import triton_utils, which imports loguru for its logger (absent
# on the GPU machine): a stand-in.
FN_ROOT = TRL + "flashnn"
FN = FN_ROOT + "/flashnn/triton_kernels/"
FN_RULES = dict(package=FN_ROOT, stubs={"loguru": dict(logger=None)})

# Flash attention v2 forward (triton_flash_attention_forward) on Llama-3-8B
# prefill: batch 4 x 4096 tokens, 32 query heads over 8 KV heads of 128
# (GROUPS 4), fp16 [batch, seq, heads, dim] tensors (randn * 0.5), sm_scale
# 1 / sqrt(128); the strides as the launcher passes them (z, head, seq, dim:
# q.stride(0), stride(-2), stride(1), stride(-1)). Base config 64 x 64, 2
# stages, 8 warps; ORDER_12 False (the default). Grid (N / 64, Z x KV heads,
# GROUPS). Causal (STAGE 3: the off-band blocks, then the diagonal) and not
# (STAGE 1). FLOPs: the causal half for STAGE 3.
FZ, FHQ, FHK, FN_CTX, FD = 4, 32, 8, 4096, 128
FQ, FKV = FZ * FN_CTX * FHQ * FD, FZ * FN_CTX * FHK * FD
for cid, stage, causal in (("flashnn_flash_attn_fwd_gqa_causal_llama3", 3, True),
                           ("flashnn_flash_attn_fwd_gqa_llama3", 1, False)):
    CASES.append(case(
        cid, FN + "flash_attn_v2.py", "_triton_attn_fwd",
        "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, Out=*fp16, stride_qz=i32, stride_qh=i32, stride_qm=i32, "
        "stride_qk=i32, stride_kz=i32, stride_kh=i32, stride_km=i32, stride_kk=i32, stride_vz=i32, "
        "stride_vh=i32, stride_vm=i32, stride_vk=i32, stride_oz=i32, stride_oh=i32, stride_om=i32, "
        f"stride_ok=i32, Z=i32, H=i32, N_CTX=i32, POWER_OF_2_N_CTX={FN_CTX}, BLOCK_M=64, BLOCK_DMODEL={FD}, "
        f"BLOCK_N=64, STAGE={stage}, GROUPS={FHQ // FHK}, ORDER_12=False, num_warps=8, num_stages=2",
        dict(Q=("randn", "float16", FQ, 0.5), K=("randn", "float16", FKV, 0.5), V=("randn", "float16", FKV, 0.5),
             sm_scale=FD ** -0.5, Out=("zeros", "float16", FQ),
             stride_qz=FN_CTX * FHQ * FD, stride_qh=FD, stride_qm=FHQ * FD, stride_qk=1,
             stride_kz=FN_CTX * FHK * FD, stride_kh=FD, stride_km=FHK * FD, stride_kk=1,
             stride_vz=FN_CTX * FHK * FD, stride_vh=FD, stride_vm=FHK * FD, stride_vk=1,
             stride_oz=FN_CTX * FHQ * FD, stride_oh=FD, stride_om=FHQ * FD, stride_ok=1,
             Z=FZ, H=FHK, N_CTX=FN_CTX),
        # fp32 sums of 128 and up to 4096 products in another order, exp2 to
        # an ulp; fp16 out.
        (FN_CTX // 64, FZ * FHK, FHQ // FHK), ["Out"], bytes=2 * 2 * (FQ + FKV),
        flops=(2 if causal else 4) * FZ * FHQ * FN_CTX * FN_CTX * FD, tol=1e-2, **FN_RULES))

# --- FLASHNN's fused MoE (fused_moe_fp16.py, fused_moe_a8w8.py, fused_moe_a16w4.py) -----
# Mixtral-8x7B's MoE layer at 4096 tokens, each routed to 2 distinct random
# experts of 8. The routing tensors are moe_align_block_size's (the
# launchers take them from the caller, which aligns to the BM it passes):
# the (token * 2 + choice) ids grouped by expert, each group padded with
# 8192 to a multiple of BLOCK_SIZE_M, sized 8192 + 8 x (BM - 1); an expert
# id per block; the padded total; fp32 routing weights. w1: A [4096, 4096],
# the gate/up weight [8, 28672, 4096] (N = 2 x 14336), C [4096, 2, 28672];
# w2 (top_k 1 over the expanded rows, routing weights multiplied): the
# activation [8192, 14336], the down weight [8, 4096, 14336], C [8192,
# 4096]. Grid: cdiv(EM, BLOCK_SIZE_M) x cdiv(N, BLOCK_SIZE_N), grouped by
# GROUP_SIZE_M in the kernel. FLOPs: the routed rows'.
MT, ME, MK, MD, MF = 4096, 8, 2, 4096, 14336  # tokens, experts, top-k, d_model, FFN
MROWS, MN1 = MT * MK, 2 * MF
MOE_COMMON = ("topk_weights_ptr=*fp32, sorted_token_ids_ptr=*i32, expert_ids_ptr=*i32, "
              "num_tokens_post_padded_ptr=*i32, N=i32, K=i32, EM=i32, num_valid_tokens=i32, stride_am=i32, "
              "stride_ak=i32, stride_be=i32, stride_bn=i32, stride_bk=i32, stride_cm=i32, stride_cn=i32")


def moe_args(route, em, n, k):
    """The routing, sizes and strides every fused MoE launcher passes (A
    [rows, k], B [8, n, k] as stored, C [8192, n])."""
    return dict(topk_weights_ptr=route("weights"), sorted_token_ids_ptr=route("sorted"),
                expert_ids_ptr=route("experts"), num_tokens_post_padded_ptr=route("post"), N=n, K=k, EM=em,
                num_valid_tokens=MROWS, stride_am=k, stride_ak=1, stride_be=n * k, stride_bn=k, stride_bk=1,
                stride_cm=n, stride_cn=1)


# fp16 (the launcher's base config: BLOCK_SIZE_M the caller's BM, 16; 32 x
# 64, GROUP 8, 2 stages, 4 warps), w1 and w2.
EM16, route16 = moe_routing(MT, ME, MK, 16)
for cid, n, k, rows_a, mul, top_k in (("flashnn_fused_moe_fp16_mixtral_w1", MN1, MD, MT, False, MK),
                                      ("flashnn_fused_moe_fp16_mixtral_w2", MD, MF, MROWS, True, 1)):
    CASES.append(case(
        cid, FN + "fused_moe_fp16.py", "_fused_moe_kernel",
        "A=*fp16, B=*fp16, C=*fp16, " + MOE_COMMON + ", BLOCK_SIZE_M=16, BLOCK_SIZE_N=32, BLOCK_SIZE_K=64, "
        f"GROUP_SIZE_M=8, MUL_ROUTED_WEIGHT={mul}, top_k={top_k}, num_warps=4, num_stages=2",
        dict(moe_args(route16, EM16, n, k), A=("randn", "float16", rows_a * k),
             B=("randn", "float16", ME * n * k, k ** -0.5), C=("zeros", "float16", MROWS * n)),
        # fp32 sums of 4096 or 14336 products in another order; fp16 out.
        (cdiv(EM16, 16) * cdiv(n, 32),), ["C"], bytes=2 * (rows_a * k + ME * n * k + MROWS * n) + 4 * EM16,
        flops=2 * MROWS * n * k, tol=1e-2, **FN_RULES))

# W8A8 (int8 activations with an fp16 scale per token, int8 weights with an
# fp16 scale per expert and channel [8, N]; int32 sums): w1. Its base config
# is 32 x 64 x 64 whatever BM the caller passes, so the routing is aligned
# to 32 (GROUP 8, 2 stages, 4 warps).
EM32, route32 = moe_routing(MT, ME, MK, 32, seed=2)
CASES.append(case(
    "flashnn_fused_moe_a8w8_mixtral_w1", FN + "fused_moe_a8w8.py", "_fused_moe_a8w8_kernel",
    "A=*i8, B=*i8, C=*fp16, alpha_row_ptr=*fp16, alpha_col_ptr=*fp16, " + MOE_COMMON
    + ", stride_scale_be=i32, stride_scale_bn=i32, BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, "
    "GROUP_SIZE_M=8, MUL_ROUTED_WEIGHT=False, top_k=2, num_warps=4, num_stages=2",
    dict(moe_args(route32, EM32, MN1, MD), A=("randint", "int8", MT * MD, -127, 128),
         B=("randint", "int8", ME * MN1 * MD, -127, 128), C=("zeros", "float16", MROWS * MN1),
         alpha_row_ptr=("uniform", "float16", MT, 0.005, 0.02),
         alpha_col_ptr=("uniform", "float16", ME * MN1, 1e-4, 2e-4), stride_scale_be=MN1, stride_scale_bn=1),
    # exact int32 sums, then the same two fp32 products; fp16 out.
    (cdiv(EM32, 32) * cdiv(MN1, 64),), ["C"],
    bytes=MT * MD + ME * MN1 * MD + 2 * MROWS * MN1 + 2 * (MT + ME * MN1) + 4 * EM32,
    flops=2 * MROWS * MN1 * MD, tol=1e-2, **FN_RULES))

# A16W4: fp16 activations, int4 weights packed two to an int8 along N (B
# [8, 14336, 4096]: the kernel's N is half the 28672 output columns; every
# bit pattern), fp16 scales. Per channel (scales [8, 28672], no zero
# points: their strides 1, 1, 1 and None, as the launcher passes them;
# base config 32 x 64, BM 16, GROUP 8, 2 stages, 4 warps) and sub-channel
# with group 128 (BLOCK_SIZE_K the group, scales and fp16 zero points [8,
# 28672, 32]). Grid: cdiv(EM, 16) x cdiv(14336, 32).
MNH = MN1 // 2
A16W4_SIG = ("A=*fp16, B=*i8, C=*fp16, scale_b_ptr=*fp16, zero_points_ptr={zp}, " + MOE_COMMON
             + ", stride_scale_be=i32, stride_scale_bn=i32, stride_scale_bk=i32, stride_zero_points_e=i32, "
             "stride_zero_points_n=i32, stride_zero_points_k=i32, BLOCK_SIZE_M=16, BLOCK_SIZE_N=32, "
             "BLOCK_SIZE_K={bk}, GROUP_SIZE_M=8, MUL_ROUTED_WEIGHT=False, top_k=2, add_zero_points={azp}, "
             "num_warps=4, num_stages=2")
MG = MD // 128
for cid, kernel, bk, sub in (("flashnn_fused_moe_a16w4_perchannel_mixtral_w1", "_fused_moe_kernel_a16w4_perchannel",
                              64, False),
                             ("flashnn_fused_moe_a16w4_g128_zp_mixtral_w1", "_fused_moe_kernel_a16w4_subchannel",
                              128, True)):
    scales = ME * MN1 * (MG if sub else 1)
    args = dict(moe_args(route16, EM16, MNH, MD), A=("randn", "float16", MT * MD),
                B=("randbits", "int8", ME * MNH * MD), C=("zeros", "float16", MROWS * MN1),
                scale_b_ptr=("uniform", "float16", scales, 0.005, 0.02), stride_cm=MN1,
                stride_scale_be=MN1 * (MG if sub else 1), stride_scale_bn=MG if sub else 1, stride_scale_bk=1,
                stride_zero_points_e=MN1 * MG if sub else 1, stride_zero_points_n=MG if sub else 1,
                stride_zero_points_k=1)
    if sub:
        args["zero_points_ptr"] = ("uniform", "float16", scales, -1.0, 1.0)
    CASES.append(case(
        cid, FN + "fused_moe_a16w4.py", kernel,
        A16W4_SIG.format(zp="*fp16" if sub else "None", bk=bk, azp=sub), args,
        # fp32 sums of 4096 products of exact int4 values (per channel) or
        # fp16 scaled ones in another order; fp16 out.
        (cdiv(EM16, 16) * cdiv(MNH, 32),), ["C"],
        bytes=2 * MT * MD + ME * MNH * MD + 2 * MROWS * MN1 + 2 * scales * (2 if sub else 1) + 4 * EM16,
        flops=2 * MROWS * MN1 * MD, tol=1e-2, **FN_RULES))

# --- FLASHNN's quantized GEMMs (gemm_a16w8.py, gemm_a16w4.py, gemm_a8w8.py) -------------
# Weight-only GEMMs as the launchers' non-tuning configs run them: 16-row
# tiles (decode), split-K 4 (each split atomically adds its partial fp16
# tile into C, which the config's pre-hook zeroes: here, every run), 1
# stage, 4 warps; a decode batch of 16 tokens on Llama-3-8B's projections,
# weights as stored ([N, K] int8). Grid (row x column tiles, SPLIT_K).
# Bound by the weight reads: bytes.
WM = 16
A16W8_SIG = ("A=*fp16, B=*i8, C=*fp16, scale_b=*fp16, bias={bias}, zero_points={zp}, M=i32, N=i32, K=i32, "
             "stride_am=i32, stride_ak=i32, stride_bn=i32, stride_bk=i32, stride_cm=i32, stride_cn=i32, "
             "stride_zpk=i32, stride_zpn=i32, stride_scalek=i32, stride_scalen=i32, add_bias={ab}, "
             "add_zero_points={azp}, BLOCK_M=16, BLOCK_N=32, BLOCK_K={bk}, GROUP_M=1, SPLIT_K=4, num_warps=4, "
             "num_stages=1")


def wo_args(n_packed, k, n_out):
    """A [16, k], B [n_packed, k] int8, C [16, n_out] and their strides."""
    return dict(A=("randn", "float16", WM * k), B=("randint", "int8", n_packed * k, -127, 128),
                C=("zeros", "float16", WM * n_out), M=WM, N=n_packed, K=k, stride_am=k, stride_ak=1,
                stride_bn=k, stride_bk=1, stride_cm=n_out, stride_cn=1)


# A16W8 per channel (scales [N]; no bias, no zero points) on the up
# projection (N 14336, K 4096), BLOCK_K 64.
N, K = 14336, 4096
CASES.append(case(
    "flashnn_gemm_a16w8_perchannel_llama3_up_m16", FN + "gemm_a16w8.py", "_triton_gemm_a16w8_per_channel_kernel",
    A16W8_SIG.format(bias="None", zp="None", ab=False, azp=False, bk=64),
    dict(wo_args(N, K, N), scale_b=("uniform", "float16", N, 0.005, 0.02), stride_zpk=0, stride_zpn=0,
         stride_scalek=0, stride_scalen=0),
    # fp32 sums of 1024 products a split in another order, four fp16 atomic
    # adds in any order; fp16 out.
    (cdiv(WM, 16) * cdiv(N, 32), 4), ["C"], bytes=2 * WM * K + N * K + 2 * N + 2 * 4 * WM * N, tol=1e-2,
    reset=["C"], **FN_RULES))

# A16W8 sub-channel, group 128 (BLOCK_K the group; scales and fp16 zero
# points [K / 128, N]) on the down projection (N 4096, K 14336).
N, K = 4096, 14336
G = K // 128
CASES.append(case(
    "flashnn_gemm_a16w8_g128_zp_llama3_down_m16", FN + "gemm_a16w8.py", "_triton_gemm_a16w8_sub_channel_kernel",
    A16W8_SIG.format(bias="None", zp="*fp16", ab=False, azp=True, bk=128),
    dict(wo_args(N, K, N), scale_b=("uniform", "float16", G * N, 0.005, 0.02),
         zero_points=("uniform", "float16", G * N, -1.0, 1.0), stride_zpk=N, stride_zpn=1, stride_scalek=N,
         stride_scalen=1),
    # fp16 (int8 - zero point) * scale, fp32 sums in another order, four
    # fp16 atomic adds in any order; fp16 out.
    (cdiv(WM, 16) * cdiv(N, 32), 4), ["C"], bytes=2 * WM * K + N * K + 2 * 2 * G * N + 2 * 4 * WM * N,
    tol=1e-2, reset=["C"], **FN_RULES))

# A16W4: int4 weights packed two to an int8 along N (quant_w [N / 2, K],
# every bit pattern; the kernel's N is the packed rows), the low and high
# nibbles' two dots interleaved into 2 x BLOCK_N columns; 16 x 64 tiles,
# rescale_m/n/k as the launcher computes them (M // 16, N // 512, K // 512:
# unused). Per channel (scales [N]) on the up projection (N 14336, K 4096,
# BLOCK_K 64), and sub-channel group 128 with fp16 zero points and a bias
# (scales and zero points [K / 128, N], bias [N]) on the down projection (N
# 4096, K 14336).
A16W4_GEMM_SIG = ("A=*fp16, B=*i8, C=*fp16, scale_b=*fp16, bias={bias}, zero_points={zp}, M=i32, N=i32, K=i32, "
                  "rescale_m=i32, rescale_n=i32, rescale_k=i32, stride_am=i32, stride_ak=i32, stride_bn=i32, "
                  "stride_bk=i32, stride_cm=i32, stride_cn=i32, stride_zpk=i32, stride_zpn=i32, stride_scalek=i32, "
                  "stride_scalen=i32, add_bias={ab}, add_zero_points={azp}, BLOCK_M=16, BLOCK_N=64, BLOCK_K={bk}, "
                  "GROUP_M=1, SPLIT_K=4, num_warps=4, num_stages=1")
N, K = 14336, 4096
CASES.append(case(
    "flashnn_gemm_a16w4_perchannel_llama3_up_m16", FN + "gemm_a16w4.py", "_triton_gemm_a16w4_per_channel_kernel",
    A16W4_GEMM_SIG.format(bias="None", zp="None", ab=False, azp=False, bk=64),
    dict(wo_args(N // 2, K, N), B=("randbits", "int8", N // 2 * K), scale_b=("uniform", "float16", N, 0.005, 0.02),
         rescale_m=WM // 16, rescale_n=N // 2 // 512, rescale_k=K // 512, stride_zpk=0, stride_zpn=0,
         stride_scalek=0, stride_scalen=0),
    # fp32 sums of 1024 products of exact int4 values a split in another
    # order, four fp16 atomic adds in any order; fp16 out.
    (cdiv(WM, 16) * cdiv(N // 2, 64), 4), ["C"], bytes=2 * WM * K + N * K // 2 + 2 * N + 2 * 4 * WM * N,
    tol=1e-2, reset=["C"], **FN_RULES))
N, K = 4096, 14336
G = K // 128
CASES.append(case(
    "flashnn_gemm_a16w4_g128_zp_bias_llama3_down_m16", FN + "gemm_a16w4.py", "_triton_gemm_a16w4_sub_channel_kernel",
    A16W4_GEMM_SIG.format(bias="*fp16", zp="*fp16", ab=True, azp=True, bk=128),
    dict(wo_args(N // 2, K, N), B=("randbits", "int8", N // 2 * K),
         scale_b=("uniform", "float16", G * N, 0.005, 0.02), bias=("randn", "float16", N, 0.1),
         zero_points=("uniform", "float16", G * N, -1.0, 1.0), rescale_m=WM // 16, rescale_n=N // 2 // 512,
         rescale_k=K // 512, stride_zpk=N, stride_zpn=1, stride_scalek=N, stride_scalen=1),
    # fp16 (int4 - zero point) * scale, fp32 sums in another order, four
    # fp16 atomic adds in any order; fp16 out.
    (cdiv(WM, 16) * cdiv(N // 2, 64), 4), ["C"],
    bytes=2 * WM * K + N * K // 2 + 2 * 2 * G * N + 2 * N + 2 * 4 * WM * N, tol=1e-2, reset=["C"],
    **FN_RULES))

# W8A8 (int8 A [M, K] and B [N, K], int32 sums, per-row and per-column
# scales of C's type), the launcher's non-tuning config (128 x 64 x 128,
# GROUP 1, 2 stages, 4 warps) and EVEN_K from its heuristic: prefill of 4096
# tokens on Llama-3-8B's up projection (N 14336, K 4096, fp16: EVEN_K True),
# and the manifest's remainder-K shape in bf16 (N 4096, K 11000: EVEN_K
# False, the last K block masked; no stride or K divisible by 16). Grid:
# the tiles.
for cid, n, k, dt, even in (("flashnn_gemm_a8w8_llama3_up_m4096", 14336, 4096, "fp16", True),
                            ("flashnn_gemm_a8w8_bf16_k11000_m4096", 4096, 11000, "bf16", False)):
    m = 4096
    tdt = {"fp16": "float16", "bf16": "bfloat16"}[dt]
    CASES.append(case(
        cid, FN + "gemm_a8w8.py", "_triton_gemm_a8w8_kernel",
        f"A=*i8, B=*i8, C=*{dt}, alpha_row_ptr=*{dt}, alpha_col_ptr=*{dt}, M=i32, N=i32, K=i32, stride_am=i32, "
        "stride_ak=i32, stride_bn=i32, stride_bk=i32, stride_cm=i32, stride_cn=i32, BLOCK_M=128, BLOCK_N=64, "
        f"BLOCK_K=128, GROUP_SIZE_M=1, EVEN_K={even}, num_warps=4, num_stages=2",
        dict(A=("randint", "int8", m * k, -127, 128), B=("randint", "int8", n * k, -127, 128),
             C=("zeros", tdt, m * n), alpha_row_ptr=("uniform", tdt, m, 0.005, 0.02),
             alpha_col_ptr=("uniform", tdt, n, 1e-4, 2e-4), M=m, N=n, K=k, stride_am=k, stride_ak=1, stride_bn=k,
             stride_bk=1, stride_cm=n, stride_cn=1),
        # exact int32 sums, then the same two fp32 products; fp16/bf16 out.
        (cdiv(m, 128) * cdiv(n, 64),), ["C"], bytes=m * k + n * k + 2 * (m * n + m + n), flops=2 * m * n * k,
        tol=1e-2, **FN_RULES))

# --- FLASHNN's paged decode attention with tensor cores (paged_attn.py) ------------------
# Llama-3-8B decode: 32 query heads over 8 KV heads (groups of 4 padded to
# 16 rows of the dot), head 128, fp16 KV cache in 16-token blocks ([blocks,
# 8, 16, 128] each, the block table a permutation), every sequence at 4096
# tokens, attn_scale 1 / sqrt(128); the kernel's first autotune config (0
# stages, 4 warps). paged_attention's split rule on an H100's 132 SMs: 64
# sequences x 8 KV heads > 2 x 132 runs unpartitioned (out [64, 32, 128]
# written directly; the launcher passes out.stride(1) for strides 1-3);
# 32 x 8 < 264 splits 4096 into 8 partitions of 512 (fp16 partial outputs
# [32, 8, 8, 4, 128], fp32 m and l [32, 8, 8, 4]), then reduces them. Grid
# (sequences, KV heads, partitions). Bound by the cache reads: bytes.
PHQ, PHK, PG, PD, PB, PCTX = 32, 8, 4, 128, 16, 4096
PA_SIG = ("m_i_ptr=*fp32, l_i_ptr=*fp32, out_ptr=*fp16, q_ptr=*fp16, k_cache_ptr=*fp16, v_cache_ptr=*fp16, "
          "context_lens_ptr=*i32, block_tables_ptr=*i32, attn_scale=fp32, stride_bt0=i32, stride_bt1=i32, "
          "stride_q0=i32, stride_q1=i32, stride_q2=i32, stride_kv0=i32, stride_kv1=i32, stride_kv2=i32, "
          "stride_kv3=i32, stride_o0=i32, stride_o1=i32, stride_o2=i32, stride_o3=i32, stride_o4=i32, "
          f"HEAD_SIZE={PD}, QUERY_GROUP_SIZE={PG}, PADDED_QUERY_GROUP_SIZE=16, NUM_KV_HEADS={PHK}, "
          f"KV_BLOCK_SIZE={PB}, PARTITION_SIZE={{part}}, num_warps=4, num_stages=0")


def pa_args(nseq, parts):
    blocks = nseq * PCTX // PB
    ml = nseq * PHK * parts * PG
    out = ("zeros", "float16", nseq * PHQ * PD if parts == 1 else ml * PD)
    ostrides = ((PHQ * PD, PD, PD, PD, 1) if parts == 1
                else (PHK * parts * PG * PD, parts * PG * PD, PG * PD, PD, 1))
    return dict(m_i_ptr=("zeros", "float32", ml), l_i_ptr=("zeros", "float32", ml), out_ptr=out,
                q_ptr=("randn", "float16", nseq * PHQ * PD), k_cache_ptr=("randn", "float16", blocks * PHK * PB * PD),
                v_cache_ptr=("randn", "float16", blocks * PHK * PB * PD),
                context_lens_ptr=("full", "int32", nseq, PCTX), block_tables_ptr=("perm", "int32", blocks),
                attn_scale=PD ** -0.5, stride_bt0=PCTX // PB, stride_bt1=1, stride_q0=PHQ * PD, stride_q1=PD,
                stride_q2=1, stride_kv0=PHK * PB * PD, stride_kv1=PB * PD, stride_kv2=PD, stride_kv3=1,
                **{f"stride_o{i}": s for i, s in enumerate(ostrides)})


NSEQ = 64
CASES.append(case(
    "flashnn_paged_attn_w_mma_llama3_decode_b64", FN + "paged_attn.py", "_paged_attn_w_mma_kernel",
    PA_SIG.format(part=0), pa_args(NSEQ, 1),
    # fp32 sums of 128 and 4096 products in another order, exp2 to an ulp;
    # fp16 out.
    (NSEQ, PHK, 1), ["out_ptr"], bytes=2 * 2 * NSEQ * PCTX * PHK * PD + 2 * 2 * NSEQ * PHQ * PD + 4 * NSEQ * PCTX // PB,
    tol=1e-2, **FN_RULES))
NSEQ, NP = 32, PCTX // 512
CASES.append(case(
    "flashnn_paged_attn_w_mma_llama3_decode_b32_split8", FN + "paged_attn.py", "_paged_attn_w_mma_kernel",
    PA_SIG.format(part=512), pa_args(NSEQ, NP),
    # As above over a partition of 512; fp16 partial outputs, fp32 m and l.
    (NSEQ, PHK, NP), ["out_ptr", "m_i_ptr", "l_i_ptr"],
    bytes=2 * 2 * NSEQ * PCTX * PHK * PD + 2 * NSEQ * PHQ * PD + NSEQ * PHK * NP * PG * (2 * PD + 8)
    + 4 * NSEQ * PCTX // PB, tol=1e-2, **FN_RULES))

# Its reduction (_paged_attn_w_mma_v2_reduce_kernel, 4 warps, the first
# autotune config) of those 8 partitions: m the partitions' row maxima
# (randn), l their exp sums (uniform in [1, 512]), the partial outputs
# randn; out [32, 32, 128]. Grid (sequences, KV heads, 1).
ML = NSEQ * PHK * NP * PG
CASES.append(case(
    "flashnn_paged_attn_w_mma_reduce_llama3_b32_split8", FN + "paged_attn.py", "_paged_attn_w_mma_v2_reduce_kernel",
    "out_ptr=*fp16, m_i_ptr=*fp32, l_i_ptr=*fp32, tmp_out_ptr=*fp16, context_lens_ptr=*i32, "
    f"max_num_partitions=i32, stride_o0=i32, stride_o1=i32, stride_o2=i32, HEAD_SIZE={PD}, "
    f"QUERY_GROUP_SIZE={PG}, PADDED_QUERY_GROUP_SIZE=16, NUM_KV_HEADS={PHK}, PARTITION_SIZE=512, "
    f"NUM_PARTITIONS={NP}, num_warps=4",
    dict(out_ptr=("zeros", "float16", NSEQ * PHQ * PD), m_i_ptr=("randn", "float32", ML),
         l_i_ptr=("uniform", "float32", ML, 1.0, 512.0), tmp_out_ptr=("randn", "float16", ML * PD),
         context_lens_ptr=("full", "int32", NSEQ, PCTX), max_num_partitions=NP, stride_o0=PHQ * PD,
         stride_o1=PD, stride_o2=1),
    # exp (approximate in both) and the sums over 8 partitions in another
    # order; fp16 out.
    (NSEQ, PHK, 1), ["out_ptr"], bytes=2 * ML * PD + 8 * ML + 2 * NSEQ * PHQ * PD + 4 * NSEQ, tol=1e-2,
    **FN_RULES))

# --- FastVideo's sliding tile attention (fastvideo_kernel/triton_kernels/st_attn_triton.py)
# Imported as fastvideo_kernel.triton_kernels.st_attn_triton from
# fastvideo-kernel/python (its package __init__ files are not in the
# sample). sliding_tile_attention_triton for HunyuanVideo: a 30 x 48 x 80
# latent canvas in 6 x 8 x 8 tiles (300 tiles of 384 tokens, 115200 image
# tokens) and 256 text tokens, padded to a multiple of 384 (115584 rows),
# head dim 128, bf16; its per-head image-query launch (one head of one
# batch a launch: batch and heads 1) with a 3 x 3 x 3 tile window and the
# text keys, the first autotune config (BLOCK_Q 32, BLOCK_KV 32, 1 stage, 4
# warps), scale 1 / sqrt(128). Grid (1, 1, 300 tiles x 384 / 32). FLOPs:
# each image query against 27 tiles and the 256 text keys.
VT, VH, VW, VTT, VTH, VTW, VTXT, VD = 30, 48, 80, 6, 8, 8, 256, 128
VIMG = VT * VH * VW
VTILE = VTT * VTH * VTW
VSEQ = cdiv(VIMG + VTXT, VTILE) * VTILE
CASES.append(case(
    "fastvideo_sta_hunyuan_img_q_w333", TRL + "fastvideo/fastvideo-kernel/python/fastvideo_kernel/triton_kernels/"
    "st_attn_triton.py", "triton_sta_kernel",
    "Q=*bf16, K=*bf16, V=*bf16, output=*bf16, batch_size=i32, num_heads=i32, seq_len=i32, head_dim=i32, "
    "img_seq_len=i32, text_length=i32, canvas_t=i32, canvas_h=i32, canvas_w=i32, kernel_t=i32, kernel_h=i32, "
    "kernel_w=i32, tile_t=i32, tile_h=i32, tile_w=i32, scale=fp32, has_text=True, text_q=False, BLOCK_Q=32, "
    f"BLOCK_KV=32, BLOCK_DIM={VD}, num_warps=4, num_stages=1",
    dict(Q=("randn", "bfloat16", VSEQ * VD), K=("randn", "bfloat16", VSEQ * VD), V=("randn", "bfloat16", VSEQ * VD),
         output=("zeros", "bfloat16", VSEQ * VD), batch_size=1, num_heads=1, seq_len=VSEQ, head_dim=VD,
         img_seq_len=VIMG, text_length=VTXT, canvas_t=VT, canvas_h=VH, canvas_w=VW, kernel_t=3, kernel_h=3,
         kernel_w=3, tile_t=VTT, tile_h=VTH, tile_w=VTW, scale=VD ** -0.5),
    # fp32 sums of 128 and 10624 products in another order, exp2 to an ulp;
    # bf16 out.
    (1, 1, (VIMG // VTILE) * cdiv(VTILE, 32)), ["output"], bytes=2 * 4 * VSEQ * VD,
    flops=4 * VIMG * (27 * VTILE + VTXT) * VD, tol=1e-2,
    package=TRL + "fastvideo/fastvideo-kernel/python"))

# --- KIVI (quant/matmul.py) ------------------------------------------------------------
# Loaded as a tutorial is (kernels, helpers and imports only); its
# kivi_gemv CUDA extension (imported for the CUDA path, never called here)
# is a stand-in. triton_bmm_fA_qB_outer on Llama-2-7B decode: 16 sequences
# x 32 heads (512 flattened batches), the query [512, 1, 128] fp16 times
# each head's 2-bit quantized keys [512, 128, 4096 / 16] int32 (every bit
# pattern; 4096 cached tokens, per-channel groups of 128 tokens: fp16
# scales and zero points [512, 128, 32]); N > K: BLOCK_SIZE_N 128,
# BLOCK_SIZE_K 32, 4 warps, 7 stages. Grid (512, 4096 / 128). A GEMV
# (tl.sum of the products, no dot): bytes.
KB, KK, KN, KBITS, KGS = 16 * 32, 128, 4096, 2, 128
KW, KG = KN * KBITS // 32, KN // KGS
CASES.append(case(
    "kivi_qbvm_2bit_llama2_decode_b16", TRL + "kivi/quant/matmul.py", "qbvm_kernel",
    "bits=i32, a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, scales_ptr=*fp16, zeros_ptr=*fp16, M=i32, N=i32, K=i32, "
    "stride_abatch=i32, stride_am=i32, stride_ak=i32, stride_bbatch=i32, stride_bk=i32, stride_bn=i32, "
    "stride_cbatch=i32, stride_cm=i32, stride_cn=i32, stride_scales_b=i32, stride_scales_k=i32, "
    "stride_scales_g=i32, stride_zeros_b=i32, stride_zeros_k=i32, stride_zeros_g=i32, groupsize=i32, "
    "BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, num_warps=4, num_stages=7",
    dict(bits=KBITS, a_ptr=("randn", "float16", KB * KK), b_ptr=("randbits", "int32", KB * KK * KW),
         c_ptr=("zeros", "float16", KB * KN), scales_ptr=("uniform", "float16", KB * KK * KG, 0.05, 0.2),
         zeros_ptr=("randn", "float16", KB * KK * KG, 0.5), M=1, N=KN, K=KK, stride_abatch=KK, stride_am=KK,
         stride_ak=1, stride_bbatch=KK * KW, stride_bk=KW, stride_bn=1, stride_cbatch=KN, stride_cm=KN, stride_cn=1,
         stride_scales_b=KK * KG, stride_scales_k=KG, stride_scales_g=1, stride_zeros_b=KK * KG, stride_zeros_k=KG,
         stride_zeros_g=1, groupsize=KGS),
    # fp16 products (and dequantization), their sums in another order; fp16
    # out.
    (KB, KN // 128), ["c_ptr"], bytes=2 * KB * KK + 4 * KB * KK * KW + 2 * 2 * KB * KK * KG + 2 * KB * KN,
    tol=1e-2, stubs={"kivi_gemv": {}}))
