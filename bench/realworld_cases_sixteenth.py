"""Real-world cases: the sixteenth sample (tests/realworld/MANIFEST.sixteenth):
S-LoRA's LoRA shrink/expand prefill GEMMs, its GPTQ-style int4 GEMMs (the
grouped matmul4 and the dequantize-in-loop s2 form) and int8 x int8 GEMM, its
Llama-2-70B GQA prefill attention; matmulfreellm's HGRN chunked scan (both
passes of the forward) and fused recurrent scan; accelerated-scan's
first-order associative scans, forward and backward; nano-vllm's KV-cache
store; Whisper's DTW. bench/realworld_cases.py says what a case is.

Configs are each launcher's own (or the first autotune config), as
MANIFEST.sixteenth gives them; grids as each launcher computes them; sizes
those the manifest names: Llama-2-7B serving (hidden 4096, 8 requests of 512
prompt tokens, LoRA rank 64 from four adapters in the unified pool), a 2048
x 4096 x 4096 projection for the quantized GEMMs, Llama-2-70B's GQA (64
query heads over 8 KV heads of 128) at 4 prompts of 2048, HGRN-Bit 1.3B
(batch 4, 2048 tokens, width 2048), accelerated-scan at [8, 1536, 4096],
Qwen3-0.6B's KV cache (8 heads x 128, bf16), Whisper's 37 text tokens
against 1500 frames. Kernels of tl.dot count FLOPs, the others bytes.

Left out: matmulfreellm's fused BitNet norm + quantization kernels
(tl.math.round, which upstream Triton 3.6 rejects: KNOWN_FAILURES).
accelerated-scan's launchers pass enable_fp_fusion=False, a launch option
realworld_cubins.py does not pass to either side: both compile with FMA
contraction here.

Signatures are written without alignment hints (realworld_cubins.py --list
adds the ones Triton's JIT specializes on).
"""

from realworld_case_rules import TRL, cached, case, cdiv

CASES = []

SLORA = dict(package=TRL + "slora")
SL = TRL + "slora/slora/"

# --- S-LoRA: the LoRA prefill GEMMs (models/peft/triton_kernel/lora/lora_prefill.py) -----------
# Llama-2-7B (hidden 4096), 8 requests of 512 prompt tokens each (int32
# b_start_loc/b_seq_len), each request on one of four rank-64 adapters
# (req_bins int64, request i -> adapter i % 4). The unified pool: the A
# matrices in key_buffer, the B matrices in value_buffer, both viewed [-1,
# 4096] fp16 (randn * 0.02); each adapter holds 4 x 64 rows (q, k, v, o;
# a_len = 4 * rank) at rows a_loc[a_start ...], a_loc int64 a permutation of
# the pool's 1024 rows. The q projection (qkvo 0). Shrink: x [tokens, 4096]
# randn -> delta [tokens, 64] (BLOCK_N 16, BLOCK_M 32, BLOCK_K 128, 4 warps,
# 1 stage); expand: delta (randn * 0.5) -> q [tokens, 4096] (randn, added
# into), scalings fp16 [4] = alpha / r (0.25), BLOCK_N 128 (TILE 128),
# BLOCK_RANK 64, 4 warps, 2 stages.
LB, LS, HID, RANK, NAD = 8, 512, 4096, 64, 4
LT = LB * LS
POOL = NAD * 4 * RANK
LORA_TABLES = dict(
    B_Loc=("perm", "int64", POOL),
    B_Lora_Start_Loc=lambda torch, gen: torch.arange(NAD, dtype=torch.int64, device="cuda") * (4 * RANK),
    B_Lora_Ranks=("full", "int64", NAD, 4 * RANK),
    B_Start_Loc=lambda torch, gen: torch.arange(LB, dtype=torch.int32, device="cuda") * LS,
    B_Seqlen=("full", "int32", LB, LS),
    B_Indicies=lambda torch, gen: torch.arange(LB, dtype=torch.int64, device="cuda") % NAD)
LORA = SL + "models/peft/triton_kernel/lora/lora_prefill.py"
CASES.append(case(
    "slora_lora_shrink_r64_llama2_7b_prefill", LORA, "_shrink_fwd_kernel",
    "X=*fp16, W=*fp16, B_Loc=*i64, B_Lora_Start_Loc=*i64, B_Lora_Ranks=*i64, B_Start_Loc=*i32, B_Seqlen=*i32, "
    "B_Indicies=*i64, Out=*fp16, qkvo=i32, stride_xbs=i32, stride_xh=i32, stride_wbs=i32, stride_wh=i32, "
    f"stride_obs=i32, stride_oh=i32, BLOCK_M=32, BLOCK_DMODEL={HID}, BLOCK_N=16, BLOCK_K=128, num_warps=4, "
    "num_stages=1",
    dict(X=("randn", "float16", LT * HID), W=("randn", "float16", POOL * HID, 0.02), **LORA_TABLES,
         Out=("zeros", "float16", LT * RANK), qkvo=0, stride_xbs=HID, stride_xh=1, stride_wbs=HID, stride_wh=1,
         stride_obs=RANK, stride_oh=1),
    # fp32 sums of 4096 products in another order; fp16 out.
    (LB, cdiv(RANK, 16), cdiv(LS, 32)), ["Out"], bytes=2 * (LT * HID + NAD * RANK * HID + LT * RANK), tol=1e-2,
    flops=2 * LT * RANK * HID, **SLORA))
CASES.append(case(
    "slora_lora_expand_r64_llama2_7b_prefill", LORA, "_expand_fwd_kernel",
    "X=*fp16, W=*fp16, scale=*fp16, B_Loc=*i64, B_Lora_Start_Loc=*i64, B_Lora_Ranks=*i64, B_Start_Loc=*i32, "
    "B_Seqlen=*i32, B_Indicies=*i64, Out=*fp16, qkvo=i32, stride_xbs=i32, stride_xh=i32, stride_wbs=i32, "
    f"stride_wh=i32, stride_obs=i32, stride_oh=i32, BLOCK_M=32, BLOCK_DMODEL={HID}, BLOCK_N=128, "
    f"BLOCK_RANK={RANK}, TILE_N=128, num_warps=4, num_stages=2",
    dict(X=("randn", "float16", LT * RANK, 0.5), W=("randn", "float16", POOL * HID, 0.02),
         scale=("full", "float16", NAD, 0.25), **LORA_TABLES, Out=("randn", "float16", LT * HID), qkvo=0,
         stride_xbs=RANK, stride_xh=1, stride_wbs=HID, stride_wh=1, stride_obs=HID, stride_oh=1),
    # fp32 sums of 64 products in another order, scaled and added to fp16
    # q: an fp16 rounding apart. (Timed runs keep adding into Out.)
    (LB, cdiv(HID, 128), cdiv(LS, 32)), ["Out"], bytes=2 * (LT * RANK + NAD * RANK * HID + 2 * LT * HID),
    tol=1e-2, flops=2 * LT * RANK * HID, **SLORA))

# --- S-LoRA: the int4 GEMMs (common/basemodel/triton_kernel/dequantize_gemm_int4.py) ----------
# Llama-2-7B's 4096 x 4096 projection for 2048 prompt tokens, 4-bit weights
# in group 128: fp16 activations (randn), every bit pattern of the packed
# weights and zero points, fp16 scales in [0.002, 0.01]. matmul4_kernel (the
# GPTQ layout: weights [K / 8, N] packed along K, scales [K / 128, N], zeros
# [K / 128, N / 8]; grouped, NO_GROUPS False; its first autotune config, 64 x
# 256 x 32, 4 warps, 4 stages; grid cdiv(M, 64) * cdiv(N, 256)) and the s2
# matmul_kernel (quantize_int4's layout: the same shapes, the weight's
# nibbles minus the zero point's, times the scale, in the loop; 64 x 128 x
# 32, SPLIT_K 1; grid (cdiv(M, 64) * cdiv(N, 128), 1)).
QM, QN, QK, QG = 2048, 4096, 4096, 128
QGS = QK // QG
Q4_BYTES = 2 * QM * QK + QK * QN // 2 + 2 * QGS * QN + QGS * QN // 2 + 2 * QM * QN
Q4 = SL + "common/basemodel/triton_kernel/dequantize_gemm_int4.py"
CASES.append(case(
    "slora_int4_gptq_matmul4_g128_m2048", Q4, "matmul4_kernel",
    "a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, scales_ptr=*fp16, zeros_ptr=*i32, M=i32, N=i32, K=i32, "
    "stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, "
    "stride_scales_g=i32, stride_scales_n=i32, stride_zeros_g=i32, stride_zeros_n=i32, groupsize=i32, "
    "NO_GROUPS=False, BLOCK_SIZE_M=64, BLOCK_SIZE_N=256, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, num_warps=4, "
    "num_stages=4",
    dict(a_ptr=("randn", "float16", QM * QK), b_ptr=("randbits", "int32", QK // 8 * QN),
         c_ptr=("zeros", "float16", QM * QN), scales_ptr=("uniform", "float16", QGS * QN, 0.002, 0.01),
         zeros_ptr=("randbits", "int32", QGS * QN // 8), M=QM, N=QN, K=QK, stride_am=QK, stride_ak=1,
         stride_bk=QN, stride_bn=1, stride_cm=QN, stride_cn=1, stride_scales_g=QN, stride_scales_n=1,
         stride_zeros_g=QN // 8, stride_zeros_n=1, groupsize=QG),
    # fp16 b = q * s - z * s, rounded alike or contracted; fp32 sums of 4096
    # products in another order; fp16 out.
    (cdiv(QM, 64) * cdiv(QN, 256),), ["c_ptr"], bytes=Q4_BYTES, tol=1e-2, flops=2 * QM * QN * QK, **SLORA))
CASES.append(case(
    "slora_int4_s2_matmul_g128_m2048", Q4, "matmul_kernel",
    "a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, bs_ptr=*fp16, bzp_ptr=*i32, M=i32, N=i32, K=i32, stride_am=i32, "
    "stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, stride_bsk=i32, "
    "stride_bsn=i32, stride_bzpk=i32, stride_bzpn=i32, group_size=i32, BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, "
    "BLOCK_SIZE_K=32, GROUP_SIZE_M=8, SPLIT_K=1, num_warps=4, num_stages=4",
    dict(a_ptr=("randn", "float16", QM * QK), b_ptr=("randbits", "int32", QK // 8 * QN),
         c_ptr=("zeros", "float16", QM * QN), bs_ptr=("uniform", "float16", QGS * QN, 0.002, 0.01),
         bzp_ptr=("randbits", "int32", QGS * QN // 8), M=QM, N=QN, K=QK, stride_am=QK, stride_ak=1,
         stride_bk=QN, stride_bn=1, stride_cm=QN, stride_cn=1, stride_bsk=QN, stride_bsn=1,
         stride_bzpk=QN // 8, stride_bzpn=1, group_size=QG),
    # (q - z) * s rounded to fp16 alike; fp32 sums of 4096 products in
    # another order; fp16 out.
    (cdiv(QM, 64) * cdiv(QN, 128), 1), ["c_ptr"], bytes=Q4_BYTES, tol=1e-2, flops=2 * QM * QN * QK, **SLORA))

# --- S-LoRA: the int8 GEMM (common/basemodel/triton_kernel/quantize_gemm_int8.py) -------------
# The same projection in int8: activations quantized per row (int8 in
# [-127, 127], fp16 row scales in [0.005, 0.02]), the weight per column as
# quantize_int8(axis=0) leaves it (column-major, "col major will accelerate
# i8xi8 kernel": stride_bk 1, stride_bn K), int32 accumulation, fp16 out;
# the first autotune config (128 x 256 x 64, GROUP 8, SPLIT_K 1, 8 warps, 3
# stages). Grid (cdiv(M, 128) * cdiv(N, 256), 1).
CASES.append(case(
    "slora_int8_matmul_rowcol_m2048", SL + "common/basemodel/triton_kernel/quantize_gemm_int8.py", "matmul_kernel",
    "a_ptr=*i8, as_ptr=*fp16, b_ptr=*i8, bs_ptr=*fp16, c_ptr=*fp16, M=i32, N=i32, K=i32, stride_am=i32, "
    "stride_ak=i32, stride_asm=i32, stride_bk=i32, stride_bn=i32, stride_bsn=i32, stride_cm=i32, "
    "stride_cn=i32, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, SPLIT_K=1, "
    "num_warps=8, num_stages=3",
    dict(a_ptr=("randint", "int8", QM * QK, -127, 128), as_ptr=("uniform", "float16", QM, 0.005, 0.02),
         b_ptr=("randint", "int8", QK * QN, -127, 128), bs_ptr=("uniform", "float16", QN, 0.005, 0.02),
         c_ptr=("zeros", "float16", QM * QN), M=QM, N=QN, K=QK, stride_am=QK, stride_ak=1, stride_asm=1,
         stride_bk=1, stride_bn=QK, stride_bsn=1, stride_cm=QN, stride_cn=1),
    # Exact int32 sums; two scale products and the fp16 rounding.
    (cdiv(QM, 128) * cdiv(QN, 256), 1), ["c_ptr"], bytes=QM * QK + QK * QN + 2 * (QM + QN) + 2 * QM * QN,
    tol=1e-3, flops=2 * QM * QN * QK, **SLORA))

# --- S-LoRA: Llama-2's GQA prefill attention (models/llama2/.../context_flashattention_nopad.py) -
# Llama-2-70B: 4 prompts of 2048 tokens packed (int32 b_start_loc /
# b_seq_len), q [tokens, 64, 128], k/v [tokens, 8, 128] fp16 randn, causal;
# its `triton >= 2.1.0` branch at head dim 128: BLOCK 128 x 128, 8 warps, 1
# stage. Grid (4, 64, 2048 / 128). FLOPs: the causal half.
AB, AS, AH, AHK, AD = 4, 2048, 64, 8, 128
AT = AB * AS
CASES.append(case(
    "slora_llama2_70b_context_attn_gqa_fp16", SL + "models/llama2/triton_kernel/context_flashattention_nopad.py",
    "_fwd_kernel",
    "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, B_Start_Loc=*i32, B_Seqlen=*i32, Out=*fp16, stride_qbs=i32, "
    "stride_qh=i32, stride_qd=i32, stride_kbs=i32, stride_kh=i32, stride_kd=i32, stride_vbs=i32, "
    "stride_vh=i32, stride_vd=i32, stride_obs=i32, stride_oh=i32, stride_od=i32, kv_group_num=i32, "
    f"BLOCK_M=128, BLOCK_DMODEL={AD}, BLOCK_N=128, num_warps=8, num_stages=1",
    dict(Q=("randn", "float16", AT * AH * AD), K=("randn", "float16", AT * AHK * AD),
         V=("randn", "float16", AT * AHK * AD), sm_scale=AD ** -0.5,
         B_Start_Loc=lambda torch, gen: torch.arange(AB, dtype=torch.int32, device="cuda") * AS,
         B_Seqlen=("full", "int32", AB, AS), Out=("zeros", "float16", AT * AH * AD),
         stride_qbs=AH * AD, stride_qh=AD, stride_qd=1, stride_kbs=AHK * AD, stride_kh=AD, stride_kd=1,
         stride_vbs=AHK * AD, stride_vh=AD, stride_vd=1, stride_obs=AH * AD, stride_oh=AD, stride_od=1,
         kv_group_num=AH // AHK),
    # exp and row sums in another order; P rounded to fp16 for the second
    # dot; fp16 out.
    (AB, AH, cdiv(AS, 128)), ["Out"], bytes=2 * 2 * AT * AH * AD + 2 * 2 * AT * AHK * AD, tol=1e-2,
    flops=2 * AB * AH * AS * AS * AD, **SLORA))

# --- matmulfreellm: HGRN's scans (mmfreelm/ops/hgrn/chunk.py, recurrent_fuse.py) ---------------
# HGRN-Bit 1.3B: x and g fp16 [4, 1, 2048, 2048] (B, H, T, D), x randn, the
# chunked scan's g a log forget gate (uniform in [-0.1, 0]), the recurrent
# scan's a forget gate (uniform in [0.9, 1]). The chunked forward's first
# pass (its first autotune config: BD 32, 1 warp; BT 128; grid (D / 32, T /
# 128, B * H)) writes gc and o fp32; its second pass (BD 64, 8 warps; grid
# (D / 64, B * H)) adds each chunk's carried-in state to o in place. The
# fused recurrent forward (BD 32, 1 warp; grid (D / 32, B * H)), no initial
# or final state.
HB, HT, HD = 4, 2048, 2048
HN = HB * HT * HD
HGRN = dict(package=TRL + "matmulfreellm")
CHUNK = TRL + "matmulfreellm/mmfreelm/ops/hgrn/chunk.py"
CASES.append(case(
    "mmfreelm_hgrn_chunk_fwd_h_t2048_d2048", CHUNK, "chunk_hgrn_fwd_kernel_h",
    f"x=*fp16, g=*fp16, gc=*fp32, o=*fp32, h0=None, T={HT}, D={HD}, BT=128, BD=32, USE_INITIAL_STATE=False, "
    "num_warps=1",
    dict(x=("randn", "float16", HN), g=("uniform", "float16", HN, -0.1, 0.0), gc=("zeros", "float32", HN),
         o=("zeros", "float32", HN)),
    # exp to an ulp, contracted or not, over up to 128 steps.
    (cdiv(HD, 32), cdiv(HT, 128), HB), ["gc", "o"], bytes=2 * 2 * HN + 2 * 4 * HN, tol=1e-4, **HGRN))
CASES.append(case(
    "mmfreelm_hgrn_chunk_fwd_o_t2048_d2048", CHUNK, "chunk_hgrn_fwd_kernel_o",
    f"gc=*fp32, o=*fp32, s_h=i32, s_t=i32, s_d=i32, T={HT}, D={HD}, BT=128, BD=32, num_warps=1",
    dict(gc=lambda torch, gen: -(torch.rand(HB * HT // 128, 128, HD, generator=gen, device="cuda") * 0.1)
         .cumsum(1).reshape(-1),
         o=("randn", "float32", HN), s_h=HT * HD, s_t=HD, s_d=1),
    # exp to an ulp, contracted or not, carried across 16 chunks. (Timed
    # runs keep adding into o.) The first autotune config (BD 32, one
    # warp): each chunk reads the last row of o the previous one stored,
    # with no barrier between, so with several warps the result depends on
    # which warp gets there first, under Kiln and Triton alike (both drift
    # from a sequential reference, and from their own reruns: H100,
    # 2026-12-07, at BD 64 and 8 warps).
    (cdiv(HD, 32), HB), ["o"], bytes=2 * 4 * HN + 4 * HN, tol=1e-4, **HGRN))
CASES.append(case(
    "mmfreelm_hgrn_fused_recurrent_fwd_t2048_d2048", TRL + "matmulfreellm/mmfreelm/ops/hgrn/recurrent_fuse.py",
    "fused_recurrent_hgrn_fwd_kernel",
    f"x=*fp16, g=*fp16, o=*fp16, h0=None, ht=None, T={HT}, D={HD}, BD=32, USE_INITIAL_STATE=False, "
    "STORE_FINAL_STATE=False, num_warps=1",
    dict(x=("randn", "float16", HN), g=("uniform", "float16", HN, 0.9, 1.0), o=("zeros", "float16", HN)),
    # g * h + x contracted or not; fp16 out.
    (cdiv(HD, 32), HB), ["o"], bytes=3 * 2 * HN, tol=1e-3, **HGRN))

# --- accelerated-scan: the first-order scans through tl.associative_scan (scalar.py) -----------
# [batch 8, channels 1536, 4096 steps] fp32 contiguous: forget gates in [0.8,
# 1], inputs and the output gradient randn; the backward's states as the
# forward leaves them (randn here: the kernel only multiplies by them).
# BLOCK its default 2048 (two blocks a sequence), the default 4 warps. Grid
# (8, 1536).
SB, SC, ST = 8, 1536, 4096
SN = SB * SC * ST
SCAN = dict(package=TRL + "accelerated_scan")
SCALAR = TRL + "accelerated_scan/accelerated_scan/scalar.py"
CASES.append(case(
    "accel_scan_scalar_fwd_8x1536x4096", SCALAR, "forward_scan",
    "forget=*fp32, inputs=*fp32, states=*fp32, seqlen=i32",
    dict(forget=("uniform", "float32", SN, 0.8, 1.0), inputs=("randn", "float32", SN),
         states=("zeros", "float32", SN), seqlen=ST),
    # The scan's tree and the x * f + x' contractions: a few fp32 roundings.
    (SB, SC), ["states"], bytes=3 * 4 * SN, tol=1e-5, **SCAN))
CASES.append(case(
    "accel_scan_scalar_bwd_8x1536x4096", SCALAR, "backward_scan",
    "forget=*fp32, states=*fp32, d_output=*fp32, d_inputs=*fp32, d_forget=*fp32, seqlen=i32",
    dict(forget=("uniform", "float32", SN, 0.8, 1.0), states=("randn", "float32", SN),
         d_output=("randn", "float32", SN), d_inputs=("zeros", "float32", SN), d_forget=("zeros", "float32", SN),
         seqlen=ST),
    # The reverse scan's tree and contractions: a few fp32 roundings.
    (SB, SC), ["d_inputs", "d_forget"], bytes=5 * 4 * SN, tol=1e-5, **SCAN))

# --- nano-vllm: the KV-cache store (nanovllm/layers/attention.py) ------------------------------
# Qwen3-0.6B (8 KV heads x 128: D 1024, bf16) storing a prefill batch of
# 8192 tokens' keys and values (contiguous [tokens, 8, 128], randn) into a
# cache of 64 blocks of 256 slots ([16384, 1024] each, zeros), slot_mapping
# int32 8192 distinct random slots. Grid (8192,), the default 4 warps.
KT, KD, KSLOTS = 8192, 1024, 64 * 256
CASES.append(case(
    "nano_vllm_store_kvcache_qwen3_0p6b_t8192", TRL + "nano_vllm/nanovllm/layers/attention.py",
    "store_kvcache_kernel",
    f"key_ptr=*bf16, key_stride=i32, value_ptr=*bf16, value_stride=i32, k_cache_ptr=*bf16, v_cache_ptr=*bf16, "
    f"slot_mapping_ptr=*i32, D={KD}",
    dict(key_ptr=("randn", "bfloat16", KT * KD), key_stride=KD, value_ptr=("randn", "bfloat16", KT * KD),
         value_stride=KD, k_cache_ptr=("zeros", "bfloat16", KSLOTS * KD),
         v_cache_ptr=("zeros", "bfloat16", KSLOTS * KD),
         slot_mapping_ptr=lambda torch, gen: torch.randperm(KSLOTS, generator=gen, device="cuda")[:KT]
         .to(torch.int32)),
    # Copies: exact.
    (KT,), ["k_cache_ptr", "v_cache_ptr"], bytes=2 * 2 * 2 * KT * KD + 4 * KT, tol=0,
    # Imported in its package; flash-attn and nanovllm.utils, which the
    # file imports for its Attention module, are absent here.
    package=TRL + "nano_vllm",
    stubs={"flash_attn": dict(flash_attn_varlen_func=None, flash_attn_with_kvcache=None),
           "nanovllm.utils": {}, "nanovllm.utils.context": dict(get_context=None)}))

# --- Whisper: word timestamps' DTW (whisper/triton_ops.py) ------------------------------------
# timing.dtw_cuda on 37 text tokens x 1500 audio frames: x (randn, as the
# negated, normalized cross-attention weights) skewed as dtw_cuda skews it
# (padded with inf, [N + M, M] fp32), the cost matrix [N + M + 2, M + 2] inf
# but cost[0, 0] = 0, the trace int32 zeros. One program, BLOCK_SIZE 1024,
# the default 4 warps. Rows 0 and 1 are never written: reruns are
# idempotent.
DM, DN = 37, 1500


def dtw_build(torch, g, device):
    x = torch.randn(DM, DN, generator=g, device=device)
    skew = torch.nn.functional.pad(x, (0, DM + 1), value=float("inf")).flatten()[:DM * (DN + DM)]
    skew = skew.reshape(DM, DN + DM).T.contiguous().reshape(-1)
    cost = torch.full((DN + DM + 2, DM + 2), float("inf"), device=device)
    cost[0, 0] = 0
    return dict(x=skew, cost=cost.reshape(-1))


DTW = cached(dtw_build)
CASES.append(case(
    "whisper_dtw_37x1500", TRL + "whisper/whisper/triton_ops.py", "dtw_kernel",
    "cost=*fp32, trace=*i32, x=*fp32, x_stride=i32, cost_stride=i32, trace_stride=i32, N=i32, M=i32, "
    "BLOCK_SIZE=1024",
    dict(cost=DTW("cost"), trace=("zeros", "int32", (DN + DM + 2) * (DM + 2)), x=DTW("x"), x_stride=DM,
         cost_stride=DM + 2, trace_stride=DM + 2, N=DN, M=DM),
    # Sums and minimums of the same values in the same order: exact.
    (1,), ["cost", "trace"], bytes=4 * (DN + DM) * DM + 2 * 4 * (DN + DM + 2) * (DM + 2), tol=0,
    package=TRL + "whisper"))
