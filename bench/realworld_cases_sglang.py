"""Real-world cases from SGLang (sgl-project/sglang v0.5.17,
tests/realworld/sglang): the extend attention, the scaled GEMM and the fused
MoE GEMM at a decode batch (each described below).
bench/realworld_cases.py says what a case is.

Extend attention (prefill with a cached prefix:
`kernels/ops/attention/extend_attention.py`, `_fwd_kernel`), as the Triton
attention backend calls `extend_attention_fwd` on an H100/H200: causal, no
custom mask, no sliding window, sinks or logit cap, unscaled bf16 KV
(k_scale = v_scale = 1.0), one-token pages (PAGE_SIZE 1), num_stages 1, and
the tiles `_get_block_sizes_for_extend_attention` picks for capability 9
(Lq <= 128: 128 x 64; Lq <= 256: 64 x 64; wider: 32 x 64; 8 warps above
Lq 64).

The batch: 4 sequences, each with a 1024-token prefix already in the KV pool
and 1024 new (extend) tokens, 16 query heads. The pool has a slot for every
token (4 x 2048); the prefixes' slots, kv_indices, are a fixed random choice
of 4096 of them (a shuffled arange), as a radix cache that has evicted and
reused slots leaves them. qo_indptr and kv_indptr are the running sums of
the extend and prefix lengths; the grid is (batch, heads, cdiv(max extend
length, BLOCK_M)). The extend q/k/v/o are contiguous [tokens, heads, dim]
(the backend passes k.contiguous(), v.contiguous()); the pool buffers are
[slots, kv heads, dim].

MLA (DeepSeek-V3's absorbed attention): a 576-wide query and key (512 latent
and 64 rope: BLOCK_DMODEL 512 + BLOCK_DPE 64) and a 512-wide value over one
latent KV head shared by all 16 heads (kv_group_num 16). SGLang's MLA pool
hands the kernel one buffer twice, V_Buffer being K_Buffer[..., :512] (row
stride 576); here V_Buffer is a second buffer of that layout (the same
addresses and strides, other values), as the vLLM MLA decode case does. The
extend value is its own contiguous [tokens, 1, 512] tensor.

The modules import SGLang's host-side packages (absent from the sample) for
platform probes, custom-op registration and the MoE's config helpers: stubbed
below, the platform to "neither CUDA nor HIP", so that importing them does
not query a GPU or import sgl_kernel (the launchers that read the answers
are not run; the cases give their Hopper choices). The fused MoE module
imports the real quantization modules of the sample (fp8_kernel.py, the
scaled GEMM's, and int8_kernel.py), which load under the same stubs.
"""

from realworld_case_rules import TRL, case, cdiv, fp8_e4m3, moe_routing

CASES = []

ROOT = TRL + "sglang"
FILE = ROOT + "/sglang/kernels/ops/attention/extend_attention.py"
_no = lambda *a, **k: False  # noqa: E731
_decorator = lambda *a, **k: (lambda f: f)  # noqa: E731
STUBS = {
    "sglang.srt.utils": dict(is_cuda=_no, is_hip=_no, is_gfx95_supported=_no, is_cpu=_no, is_musa=_no,
                             is_sm90_supported=_no, is_sm100_supported=_no, is_sm120_supported=_no,
                             cpu_has_amx_support=_no, get_bool_env_var=_no,
                             get_device_core_count=lambda *a: 132, get_device_name=lambda *a: "NVIDIA H200",
                             ceil_align=lambda x, a: (x + a - 1) // a * a, log_info_on_rank0=lambda *a: None),
    "sglang.srt.utils.custom_op": dict(register_custom_op=_decorator),
    "sglang.srt.utils.patch_torch": dict(register_fake_if_exists=_decorator),
    "sglang.srt.layers": dict(deep_gemm_wrapper=None),
    "sglang.srt.layers.moe.utils": dict(get_moe_padding_size=lambda *a: 0),
    "sglang.srt.batch_invariant_ops": dict(is_batch_invariant_mode_enabled=_no),
    "sglang.kernels.jit.utils": dict(is_arch_support_pdl=_no, get_jit_cuda_arch=None, is_hip_runtime=_no,
                                     is_musa_runtime=_no),
}

B, P, E = 4, 1024, 1024  # sequences, prefix tokens and extend tokens each
SLOTS = B * (P + E)  # the KV pool: every token of the batch


def indptr(step):
    return lambda torch, gen: torch.arange(0, B + 1, device="cuda", dtype=torch.int32) * step


def prefix_slots(torch, gen):
    return torch.randperm(SLOTS, generator=gen, device="cuda")[:B * P].to(torch.int32)


def extend_case(id, heads, kv_heads, lq, lv, block_m, sm_scale, v_row=None):
    """v_row: the pool's value row stride, where values live inside wider rows (MLA)."""
    dmodel, dpe = {576: (512, 64), 192: (128, 64)}.get(lq, (lq, 0))
    v_row = v_row or lv
    sig = (
        "Q_Extend=*bf16, K_Extend=*bf16, V_Extend=*bf16, O_Extend=*bf16, LSE_Extend=None, K_Buffer=*bf16, "
        "V_Buffer=*bf16, qo_indptr=*i32, kv_indptr=*i32, kv_indices=*i32, mask_ptr=None, mask_indptr=None, "
        "sink_ptr=None, window_kv_offset_ptr=None, sm_scale=fp32, k_scale=fp32, v_scale=fp32, "
        "kv_group_num=i32, stride_qbs=i32, stride_qh=i32, stride_kbs=i32, stride_kh=i32, stride_vbs=i32, "
        "stride_vh=i32, stride_obs=i32, stride_oh=i32, stride_lse_bs=i32, stride_lse_h=i32, "
        "stride_buf_kbs=i32, stride_buf_kh=i32, stride_buf_vbs=i32, stride_buf_vh=i32, "
        "stride_buf_kpage=i32, stride_buf_ktok=i32, stride_buf_vpage=i32, stride_buf_vtok=i32, "
        f"SLIDING_WINDOW_SIZE=-1, logit_cap=0.0, xai_temperature_len=-1, Lq={lq}, Lv={lv}, "
        f"BLOCK_DMODEL={dmodel}, BLOCK_DPE={dpe}, BLOCK_DV={lv}, BLOCK_M={block_m}, BLOCK_N=64, "
        "USE_CUSTOM_MASK=False, IS_CAUSAL=True, SKIP_PREFIX_CUSTOM_MASK=True, STORE_LSE=False, "
        "SKIP_PREFIX=False, SKIP_EXTEND=False, STORE_TRANSPOSE=False, HAS_SINK=False, PAGE_SIZE=1, "
        "SCORE_MOD=None, Aux0=None, aux0_stride_t=i32, aux0_stride_h=i32, aux0_len=i32, "
        "num_warps=8, num_stages=1")
    T = B * E
    # Pool strides as _extract_kv_strides gives them for a 3-D buffer at
    # page size 1: page stride = token stride = slot stride.
    k_slot, v_slot = kv_heads * lq, kv_heads * v_row
    args = dict(
        Q_Extend=("randn", "bfloat16", T * heads * lq), K_Extend=("randn", "bfloat16", T * kv_heads * lq),
        V_Extend=("randn", "bfloat16", T * kv_heads * lv), O_Extend=("zeros", "bfloat16", T * heads * lv),
        K_Buffer=("randn", "bfloat16", SLOTS * k_slot), V_Buffer=("randn", "bfloat16", SLOTS * v_slot),
        qo_indptr=indptr(E), kv_indptr=indptr(P), kv_indices=prefix_slots,
        sm_scale=sm_scale, k_scale=1.0, v_scale=1.0, kv_group_num=heads // kv_heads,
        stride_qbs=heads * lq, stride_qh=lq, stride_kbs=kv_heads * lq, stride_kh=lq,
        stride_vbs=kv_heads * lv, stride_vh=lv, stride_obs=heads * lv, stride_oh=lv,
        stride_lse_bs=0, stride_lse_h=0, stride_buf_kbs=k_slot, stride_buf_kh=lq,
        stride_buf_vbs=v_slot, stride_buf_vh=v_row, stride_buf_kpage=k_slot, stride_buf_ktok=k_slot,
        stride_buf_vpage=v_slot, stride_buf_vtok=v_slot, aux0_stride_t=0, aux0_stride_h=0, aux0_len=0)
    # Per sequence and head: all E x P prefix scores and the causal half of
    # the E x E extend ones, each a dot of lq and one of lv.
    flops = 2 * B * heads * (E * P + E * E // 2) * (lq + lv)
    # q, the extend k/v and the prefix k/v read once, o written, the indices.
    moved = (2 * T * heads * (lq + lv) + 2 * (T + B * P) * kv_heads * (lq + lv)
             + 4 * B * P + 2 * 4 * (B + 1))
    return case(id, FILE, "_fwd_kernel", sig, args, (B, heads, cdiv(E, block_m)), ["O_Extend"],
                bytes=moved, tol=2e-2, flops=flops, package=ROOT, stubs=STUBS)


# Llama-3-8B at TP2: 16 query heads of 128 over 4 KV heads.
CASES.append(extend_case("sglang_extend_d128_bf16", 16, 4, 128, 128, 128, 128 ** -0.5))
# DeepSeek-V2-Lite's prefill (MHA, forward_normal): 16 heads, a 192-wide
# query/key (128 + 64 rope), 128-wide value, one KV head per query head.
CASES.append(extend_case("sglang_extend_d192_bf16", 16, 16, 192, 128, 64, 192 ** -0.5))
# Head dim 256 (the Gemma / Qwen3-Next width): 16 query heads over 4 KV heads.
CASES.append(extend_case("sglang_extend_d256_bf16", 16, 4, 256, 256, 64, 256 ** -0.5))
# DeepSeek-V3 MLA at TP8: 16 heads over one latent KV head; the softmax
# scale is its qk_head_dim's (192 = 128 + 64), as layer.scaling passes it.
CASES.append(extend_case("sglang_extend_mla_bf16", 16, 1, 576, 512, 32, 192 ** -0.5, v_row=576))


# ---------------------------------------------------------------------------
# The scaled GEMM (`kernels/ops/quantization/fp8_kernel.py`,
# `scaled_mm_kernel`, SGLang's copy of vLLM's compressed-tensors kernel:
# (A @ B) * scale_a * scale_b with the scales per tensor ([1, 1], BLOCK_SIZE_
# SCALE 1) or per token / output channel ([M, 1] / [N, 1], the scale block
# the tile's), an fp32 accumulator for fp8 and int32 for int8, a bias added
# after the cast), as triton_scaled_mm launches it: its heuristic's tiles for
# next_power_of_2(M) (<= 64: 64 x 64 x 256, at N < 8192 for <= 32; <= 128:
# 64 x 128 x 128; larger: 128 x 128 x 128), Triton's default 4 warps and 3
# stages, a 1-D grid over the M x N tiles. A 4096 x 4096 projection, the weight [N, K]
# passed transposed (K contiguous), bf16 out. Values as a per-token /
# per-channel quantization to the full range makes them (int8 +-127, e4m3
# +-448) with the matching scales: activations of about 4 at most, weights
# of std 0.02.
SMM = ROOT + "/sglang/kernels/ops/quantization/fp8_kernel.py"


def scaled_mm_case(id, M, dtype, tile, per_channel, bias=False, flops=True):
    """`dtype` int8 or fp8; `per_channel`: per-token and per-channel scales
    (else per-tensor); `flops`: report TFLOP/s (else GB/s, for the small-M
    launches, bound by reading the weight)."""
    N = K = 4096
    bm, bn, bk = tile
    fp8 = dtype == "fp8"
    sa, sb = (M, N) if per_channel else (1, 1)
    sig = (f"a_ptr=*{'fp8e4nv' if fp8 else 'i8'}, b_ptr=*{'fp8e4nv' if fp8 else 'i8'}, scale_a_ptr=*fp32, "
           f"scale_b_ptr=*fp32, c_ptr=*bf16, bias_ptr={'*bf16' if bias else 'None'}, M=i32, N=i32, K=i32, "
           "stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, "
           f"ACCUMULATOR_DTYPE={'tl.float32' if fp8 else 'tl.int32'}, BLOCK_SIZE_M={bm}, BLOCK_SIZE_N={bn}, "
           f"BLOCK_SIZE_K={bk}, BLOCK_SIZE_SCALE_A={bm if per_channel else 1}, "
           f"BLOCK_SIZE_SCALE_B={bn if per_channel else 1}")
    if fp8:
        a, b = fp8_e4m3(M * K, 100), fp8_e4m3(N * K, 60)
        scale_a, scale_b = ("uniform", "float32", sa, 0.005, 0.01), ("uniform", "float32", sb, 1e-4, 2e-4)
    else:
        a, b = ("randint", "int8", M * K, -127, 128), ("randint", "int8", N * K, -127, 128)
        scale_a, scale_b = ("uniform", "float32", sa, 0.02, 0.04), ("uniform", "float32", sb, 4e-4, 8e-4)
    args = dict(a_ptr=a, b_ptr=b, scale_a_ptr=scale_a, scale_b_ptr=scale_b, c_ptr=("zeros", "bfloat16", M * N),
                M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=1, stride_bn=K, stride_cm=N, stride_cn=1)
    if bias:
        args["bias_ptr"] = ("randn", "bfloat16", N, 0.1)
    rules = dict(flops=2 * M * N * K) if flops else {}
    return case(id, SMM, "scaled_mm_kernel", sig, args, (cdiv(M, bm) * cdiv(N, bn),), ["c_ptr"],
                bytes=M * K + N * K + 2 * M * N + 4 * (sa + sb) + (2 * N if bias else 0),
                # int8: exact int32 sums, then the same two fp32 products and
                # one rounding. fp8: fp32 sums of 4096 in another order.
                tol=1e-2 if fp8 else 0, package=ROOT, stubs=STUBS, **rules)


# 512 tokens (128 programs, one wave), per-token activation and per-channel
# weight scales: fp8 (an FP8-dynamic checkpoint) and int8 (SGLang's
# w8a8_int8 scheme).
CASES.append(scaled_mm_case("sglang_scaled_mm_fp8_bf16", 512, "fp8", (128, 128, 128), True))
CASES.append(scaled_mm_case("sglang_scaled_mm_int8_bf16", 512, "int8", (128, 128, 128), True))
# The two launches bench/results/2026-12-05_static_cliffs compared without a
# GPU (MANIFEST.sixth's scaled_mm_kernel variants), at the batch sizes the
# heuristic gives their tiles: int8 at 64 tokens (64 x 64 x 256, per-token
# and per-channel scales), fp8 at 128 tokens (64 x 128 x 128, per-tensor
# scales, a bf16 bias). 64 programs each, bound by the 16 MB weight: GB/s.
CASES.append(scaled_mm_case("sglang_scaled_mm_int8_m64_bf16", 64, "int8", (64, 64, 256), True, flops=False))
CASES.append(scaled_mm_case("sglang_scaled_mm_fp8_bias_m128_bf16", 128, "fp8", (64, 128, 128), False, bias=True,
                            flops=False))

# ---------------------------------------------------------------------------
# The fused MoE GEMM (`kernels/ops/moe/fused_moe_triton_kernels.py`,
# `fused_moe_kernel`), bf16, at a decode batch: Qwen3-30B-A3B (128 experts,
# top 8, hidden 2048, expert width 768), 64 tokens, as fused_experts runs its
# two GEMMs (MANIFEST.sixth's two bf16 decode variants, the ones
# bench/results/2026-12-05_static_cliffs compared): w13 (gate and up, N = 2 x
# 768, K = 2048; no routed-weight multiply, C [64, 8, 1536]) and w2 (down,
# N = 2048, K = 768, over the 512 activated rows, top_k 1 in the kernel, the
# routed weight multiplied in, C [64, 8, 2048]). Its tuned triton_3_6_0 H200
# config for M 64 (the down GEMM reuses it): 16 x 256 x 128, GROUP_SIZE_M 1,
# 8 warps, 2 stages; even_Ks (K % 128 == 0), no expert filter (no expert
# parallelism), no swap_ab (bf16), no TMA descriptors. The routing is
# moe_align_block_size's for a random top-8 choice: 512 (token, expert)
# pairs over 128 experts, about 4 an expert, each expert's run padded to 16;
# sorted_token_ids sized as SGLang allocates it, 512 + (128 + 1) x 15 =
# 2447 (blocks past num_tokens_post_padded return at once). Bound by reading
# the experts' weights (64 tokens reach all but about 2 of the 128): GB/s,
# the bytes counting every expert's weight once.
M, E, TOPK, HID, INTER, BM = 64, 128, 8, 2048, 768, 16
EM, route = moe_routing(M, E, TOPK, BM, seed=3, em=M * TOPK + (E + 1) * (BM - 1))
FMK = ROOT + "/sglang/kernels/ops/moe/fused_moe_triton_kernels.py"


def fused_moe_case(id, N, K, routed_weight, top_k, router_topk, a_rows):
    """One of fused_experts' GEMMs: `a_rows` rows of A [a_rows, K], the
    weights [E, N, K], C [M * TOPK, N]."""
    sig = ("a_ptr=*bf16, a_desc=None, b_ptr=*bf16, b_desc=None, bias_ptr=None, c_ptr=*bf16, a_scale_ptr=None, "
           "b_scale_ptr=None, topk_weights_ptr=*fp32, sorted_token_ids_ptr=*i32, expert_ids_ptr=*i32, "
           "num_tokens_post_padded_ptr=*i32, add_mask_ptr=None, N=i32, K=i32, EM=i32, num_valid_tokens=i32, "
           "stride_am=i32, stride_ak=i32, stride_be=i32, stride_bk=i32, stride_bn=i32, stride_bias_e=i32, "
           "stride_bias_n=i32, stride_cm=i32, stride_cn=i32, stride_asm=i32, stride_ask=i32, stride_bse=i32, "
           "stride_bsk=i32, stride_bsn=i32, group_n=0, group_k=0, BLOCK_SIZE_M=16, BLOCK_SIZE_N=256, "
           f"BLOCK_SIZE_K=128, GROUP_SIZE_M=1, MUL_ROUTED_WEIGHT={routed_weight}, top_k={top_k}, "
           "compute_type=tl.bfloat16, use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False, "
           "per_channel_quant=False, even_Ks=True, c_sorted=False, filter_expert=False, swap_ab=False, "
           "FUSE_ADD_TO_OUTPUT=False, MASK_OUTPUT=False, FUSE_SUM_ALL_REDUCE=False, LORA_PRESERVE_BASE=False, "
           f"ROUTER_TOPK={router_topk}, num_warps=8, num_stages=2")
    args = dict(a_ptr=("randn", "bfloat16", a_rows * K), b_ptr=("randn", "bfloat16", E * N * K, K ** -0.5),
                c_ptr=("zeros", "bfloat16", M * TOPK * N), topk_weights_ptr=route("weights"),
                sorted_token_ids_ptr=route("sorted"), expert_ids_ptr=route("experts"),
                num_tokens_post_padded_ptr=route("post"), N=N, K=K, EM=EM, num_valid_tokens=M * TOPK,
                stride_am=K, stride_ak=1, stride_be=N * K, stride_bk=1, stride_bn=K, stride_bias_e=0,
                stride_bias_n=0, stride_cm=N, stride_cn=1, stride_asm=0, stride_ask=0, stride_bse=0,
                stride_bsk=0, stride_bsn=0)
    return case(id, FMK, "fused_moe_kernel", sig, args, (cdiv(EM, BM) * cdiv(N, 256),), ["c_ptr"],
                # A, every expert's weight and C once, the slot list, the
                # routed weights where multiplied in.
                bytes=2 * (a_rows * K + E * N * K + M * TOPK * N) + 4 * EM
                + (4 * M * TOPK if routed_weight else 0),
                # fp32 sums of K in another order: a bf16 rounding apart.
                tol=1e-2, package=ROOT, stubs=STUBS)


CASES.append(fused_moe_case("sglang_fused_moe_decode_w13_bf16", 2 * INTER, HID, False, TOPK, 1, M))
CASES.append(fused_moe_case("sglang_fused_moe_decode_w2_bf16", HID, INTER, True, 1, TOPK, M * TOPK))
