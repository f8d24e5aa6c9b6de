"""Real-world cases: vLLM's serving kernels (vllm-project/vllm 0.26.0, the
fifth sample under tests/realworld/vllm): the fused MoE GEMM (bf16, and fp8
with DeepSeek-V3's 128 x 128 block scales), the MLA split-KV decode
attention (stage 1 over the paged latent cache, stage 2 merging the splits),
the unified paged attention for prefill and for long-context decode (its 3D
split-softmax form), the merge of attention states, the per-token-group fp8
quantization and block-scaled fp8 GEMM, LoRA shrink/expand, AWQ's
dequantization and the compressed-tensors scaled (fp8) GEMM.
bench/realworld_cases.py says what a case is.

Sizes are serving-sized: 4096 tokens for prefill and MoE (Qwen3-30B-A3B:
128 experts, top 8, hidden 2048, expert width 768; DeepSeek-V3 at TP8: 256
experts, top 8, hidden 7168, expert width 256), Llama-3-8B attention (32
query heads of 128 over 8 KV heads, 16-token KV blocks), DeepSeek-V3's MLA
(128 heads, a 576-wide latent+rope key, 512-wide value, 64-token pages).
Configs are what vLLM's host code picks on an H200: its tuned JSON files
(fused_moe/configs/E=...,device_name=NVIDIA_H200*.json,
quantization/utils/configs/N=...,K=...,device_name=NVIDIA_H200*.json) for
the token count nearest the case's, else the launcher's own constants and
defaults (named beside each case).

The modules import vLLM's host-side packages, which the sample does not
carry: they load with the stand-ins below (the real vllm/triton_utils
package, its platform probe stubbed to "Triton present"). MoE routing is
built as moe_align_block_size builds it (token-expert pairs sorted by
expert, each expert's run padded to BLOCK_SIZE_M with the invalid id
M * top_k), from a fixed random top-k choice of distinct experts per token.

The unified attention and merge_attn_states kernels default their
FP8_MIN/FP8_MAX parameters to `float8_info.min/.max` with `float8_info =
torch.finfo(current_platform.fp8_dtype())` at module level: kilnc evaluates
such a default only when the signature leaves the parameter out (these cases
give both).
"""

import logging
import os

from realworld_case_rules import TRL, case, cdiv, fp8_e4m3, moe_routing

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = []
PENDING = []  # cases kilnc does not compile yet (not run), each saying why

ROOT = TRL + "vllm"
V = ROOT + "/vllm/"
OPS = V + "v1/attention/ops/"


class _CudaPlatform:
    """vllm.platforms.current_platform on an H100/H200, for what these
    modules ask at import or in the launchers this batch does not run."""
    is_rocm = staticmethod(lambda: False)
    is_xpu = staticmethod(lambda: False)
    is_cuda = staticmethod(lambda: True)
    is_cuda_alike = staticmethod(lambda: True)
    is_fp8_fnuz = staticmethod(lambda: False)
    has_device_capability = staticmethod(lambda c: (9, 0) >= (c if isinstance(c, tuple) else divmod(c, 10)))
    is_device_capability = staticmethod(lambda c: c == 90)
    is_device_capability_family = staticmethod(lambda c: c == 90)
    get_device_capability = staticmethod(lambda: (9, 0))
    fp8_dtype = staticmethod(lambda: __import__("torch").float8_e4m3fn)


class _Anything:
    """A host-side name the batch never uses but the module reads at import
    (a default argument's MoEActivation.SILU, an annotation's `Config |
    None`): any attribute, call, subscript or union of it is itself."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __or__(self, other):
        return self

    __ror__ = __or__


ANY = _Anything()


class _KVQuantMode:
    NONE, FP8_PER_TENSOR, INT8_PER_TOKEN_HEAD, FP8_PER_TOKEN_HEAD, INT4_PER_TOKEN_HEAD = range(5)


def _parse_version(text):
    """packaging.version.parse for "3.6.0"-like versions: a comparable tuple."""
    return tuple(int(p) for p in text.split("+")[0].split(".")[:3] if p.isdigit())


# Stand-ins for the vLLM modules these files import for their host code (and
# packaging, which the decode attention reads Triton's version with and
# .triton-venv lacks).
STUBS = {
    "packaging": dict(version=type("version", (), dict(parse=staticmethod(_parse_version)))),
    "vllm.triton_utils.importing": dict(HAS_TRITON=True, TritonPlaceholder=ANY, TritonLanguagePlaceholder=ANY),
    "vllm.envs": dict(VLLM_BATCH_INVARIANT=False, VLLM_LORA_ENABLE_DUAL_STREAM=False,
                      VLLM_TUNED_CONFIG_FOLDER=None),
    "vllm.logger": dict(init_logger=logging.getLogger),
    "vllm.platforms": dict(current_platform=_CudaPlatform),
    "vllm._custom_ops": {},
    "vllm.utils.platform_utils": dict(get_device_name_as_file_name=lambda: "NVIDIA_H200",
                                      num_compute_units=lambda *a: 132),
    "vllm.utils.torch_utils": dict(direct_register_custom_op=lambda *a, **k: None, async_tensor_h2d=ANY,
                                   is_quantized_kv_cache=ANY),
    "vllm.utils.math_utils": dict(next_power_of_2=lambda n: 1 << (n - 1).bit_length(), cdiv=cdiv,
                                  RCP_LN2=1.4426950408889634),
    "vllm.utils.deep_gemm": dict(get_tma_aligned_size=ANY, is_deep_gemm_e8m0_used=lambda: False,
                                 transform_sf_into_required_layout=ANY),
    "vllm.v1.kv_cache_interface": dict(KVQuantMode=_KVQuantMode),
    "vllm.model_executor.layers.fused_moe.modular_kernel": {},
    "vllm.model_executor.layers.fused_moe.activation": dict(MoEActivation=ANY, apply_moe_activation=ANY),
    "vllm.model_executor.layers.fused_moe.config": dict(FUSED_MOE_UNQUANTIZED_CONFIG=ANY,
                                                        FusedMoEQuantConfig=ANY, _get_config_dtype_str=ANY),
    "vllm.model_executor.layers.fused_moe.moe_align_block_size": dict(moe_align_block_size=ANY),
    "vllm.model_executor.layers.fused_moe.utils": dict(enable_swap_ab=ANY, moe_kernel_quantize_input=ANY),
    "vllm.model_executor.layers.quantization.utils.quant_utils": dict(get_fp8_min_max=ANY),
    "vllm.model_executor.layers.quantization.utils.w8a8_utils": dict(all_close_1d=ANY,
                                                                     per_tensor_dequantize=ANY),
    "vllm.model_executor.parameter": dict(BlockQuantScaleParameter=ANY, ChannelQuantScaleParameter=ANY,
                                          PerTensorScaleParameter=ANY),
    "vllm.model_executor.utils": dict(set_weight_attrs=ANY),
}
# kilnc's --src: the vllm.triton_utils package every file imports tl and
# triton from, and what each kernel imports jit functions from.
TRITON_UTILS = [V + "triton_utils/__init__.py", V + "triton_utils/importing.py"]


def vllm_case(id, path, kernel, sig, args, grid, outputs, bytes, tol, srcs=(), **rules):
    return case(id, V + path, kernel, sig, args, grid, outputs, bytes=bytes, tol=tol, package=ROOT,
                stubs=STUBS, srcs=TRITON_UTILS + list(srcs), **rules)


FM_COMMON = ("topk_weights_ptr=*fp32, sorted_token_ids_ptr=*i32, expert_ids_ptr=*i32, "
             "num_tokens_post_padded_ptr=*i32, N=i32, K=i32, EM=i32, num_valid_tokens=i32, stride_am=i32, "
             "stride_ak=i32, stride_be=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, "
             "stride_asm=i32, stride_ask=i32, stride_bse=i32, stride_bsk=i32, stride_bsn=i32, stride_bbe=i32, "
             "stride_bbn=i32")

# fused_moe_kernel, bf16: Qwen3-30B-A3B's gate/up projection (w13: N = 2 x
# 768, K = 2048) over 4096 tokens x top 8, as fused_experts runs the first
# GEMM (no routed-weight multiply, C [M, top_k, N]). Its H200 config
# (E=128,N=768,device_name=NVIDIA_H200.json, M 4096): 128 x 256 x 64,
# GROUP_SIZE_M 16, 8 warps, 4 stages; SPLIT_K 1 as the launcher sets it.
M, E, TOPK, N, K, BM = 4096, 128, 8, 1536, 2048, 128
EM, route = moe_routing(M, E, TOPK, BM)
CASES.append(vllm_case(
    "vllm_fused_moe_bf16", "model_executor/layers/fused_moe/fused_moe.py", "fused_moe_kernel",
    "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, b_bias_ptr=None, a_scale_ptr=None, b_scale_ptr=None, "
    + FM_COMMON + ", group_n=0, group_k=0, naive_block_assignment=False, BLOCK_SIZE_M=128, "
    "BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=16, SPLIT_K=1, MUL_ROUTED_WEIGHT=False, top_k=8, "
    "compute_type=tl.bfloat16, use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False, "
    "per_channel_quant=False, HAS_BIAS=False, SWAP_AB=False, num_warps=8, num_stages=4",
    dict(a_ptr=("randn", "bfloat16", M * K), b_ptr=("randn", "bfloat16", E * N * K, K ** -0.5),
         c_ptr=("zeros", "bfloat16", M * TOPK * N), topk_weights_ptr=route("weights"),
         sorted_token_ids_ptr=route("sorted"), expert_ids_ptr=route("experts"),
         num_tokens_post_padded_ptr=route("post"), N=N, K=K, EM=EM, num_valid_tokens=M * TOPK,
         stride_am=K, stride_ak=1, stride_be=N * K, stride_bk=1, stride_bn=K, stride_cm=N, stride_cn=1,
         stride_asm=0, stride_ask=0, stride_bse=0, stride_bsk=0, stride_bsn=0, stride_bbe=0, stride_bbn=0),
    # fp32 sums of 2048 in another order: a bf16 rounding apart.
    (cdiv(EM, BM) * cdiv(N, 256),), ["c_ptr"],
    bytes=2 * (M * K + E * N * K + M * TOPK * N) + 4 * EM, tol=1e-2, flops=2 * M * TOPK * N * K))

# fused_moe_kernel, fp8 w8a8 with 128 x 128 block scales: DeepSeek-V3 at TP8
# (256 experts, w13: N = 2 x 256, K = 7168), 4096 tokens x top 8, the
# activation quantized per token-group of 128 (a_scale [M, 56]), the
# weights per 128 x 128 block (b_scale [E, 4, 56]). Its H200 config
# (E=256,N=256,...,dtype=fp8_w8a8,block_shape=[128,128].json, M 4096): 64 x
# 128 x 128, GROUP_SIZE_M 16, 4 warps, 3 stages; SWAP_AB False (BLOCK_SIZE_M
# 64).
M, E, TOPK, N, K, BM = 4096, 256, 8, 512, 7168, 64
EM, route = moe_routing(M, E, TOPK, BM, seed=2)
CASES.append(vllm_case(
    "vllm_fused_moe_fp8_block", "model_executor/layers/fused_moe/fused_moe.py", "fused_moe_kernel",
    "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*bf16, b_bias_ptr=None, a_scale_ptr=*fp32, b_scale_ptr=*fp32, "
    + FM_COMMON + ", group_n=128, group_k=128, naive_block_assignment=False, BLOCK_SIZE_M=64, "
    "BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=16, SPLIT_K=1, MUL_ROUTED_WEIGHT=False, top_k=8, "
    "compute_type=tl.bfloat16, use_fp8_w8a8=True, use_int8_w8a8=False, use_int8_w8a16=False, "
    "per_channel_quant=False, HAS_BIAS=False, SWAP_AB=False, num_warps=4, num_stages=3",
    dict(a_ptr=fp8_e4m3(M * K, 60), b_ptr=fp8_e4m3(E * N * K, 60), c_ptr=("zeros", "bfloat16", M * TOPK * N),
         a_scale_ptr=("uniform", "float32", M * (K // 128), 0.01, 0.02),
         b_scale_ptr=("uniform", "float32", E * (N // 128) * (K // 128), 1e-4, 2e-4),
         topk_weights_ptr=route("weights"), sorted_token_ids_ptr=route("sorted"),
         expert_ids_ptr=route("experts"), num_tokens_post_padded_ptr=route("post"), N=N, K=K, EM=EM,
         num_valid_tokens=M * TOPK, stride_am=K, stride_ak=1, stride_be=N * K, stride_bk=1, stride_bn=K,
         stride_cm=N, stride_cn=1, stride_asm=K // 128, stride_ask=1, stride_bse=(N // 128) * (K // 128),
         stride_bsk=1, stride_bsn=K // 128, stride_bbe=0, stride_bbn=0),
    # fp32 sums of 56 scaled block products in another order; bf16 out.
    (cdiv(EM, BM) * cdiv(N, 128),), ["c_ptr"],
    bytes=M * K + E * N * K + 2 * M * TOPK * N + 4 * (M + E * N // 128) * (K // 128) + 4 * EM, tol=1e-2,
    flops=2 * M * TOPK * N * K))

# MLA decode, stage 1 (_fwd_grouped_kernel_stage1), as the Triton MLA
# backend calls decode_attention_fwd with is_mla: DeepSeek-V3's 128 heads
# on one latent KV head (kv_group_num 128), Lk 576 (BLOCK_DMODEL 512 +
# BLOCK_DPE 64 for the rope part), Lv 512, bf16, 64 sequences of 4096
# cached tokens in 64-token pages (the block table a permutation of the
# pages). Its constants: BLOCK_N 32, BLOCK_H 16, 4 warps, 2 stages;
# num_kv_splits from _compute_num_kv_splits (next_pow2(4096 / 512) = 8).
# The latent cache is read as K (576 wide) and V (its first 512); vLLM
# passes one tensor twice, here V is a second buffer of the same layout.
# Att_Out [batch, heads, splits, Lv + 1] fp32 (the partial outputs and
# each split's log-sum-exp).
B, H, S, LK, LV, PAGE, SPLITS = 64, 128, 4096, 576, 512, 64, 8
PAGES = B * S // PAGE
CASES.append(vllm_case(
    "vllm_mla_decode_stage1_bf16", "v1/attention/ops/triton_decode_attention.py", "_fwd_grouped_kernel_stage1",
    "Q=*bf16, K_Buffer=*bf16, V_Buffer=*bf16, sm_scale=fp32, Req_to_tokens=*i32, B_Seqlen=*i32, Att_Out=*fp32, "
    "stride_req_to_tokens_b=i32, stride_qbs=i32, stride_qh=i32, stride_buf_kpbs=i32, stride_buf_kbs=i32, "
    "stride_buf_kh=i32, stride_buf_vpbs=i32, stride_buf_vbs=i32, stride_buf_vh=i32, stride_mid_ob=i32, "
    "stride_mid_oh=i32, stride_mid_os=i32, k_scale=*fp32, v_scale=*fp32, kv_group_num=128, q_head_num=128, "
    f"BLOCK_DMODEL=512, BLOCK_DPE=64, BLOCK_DV=512, BLOCK_N=32, BLOCK_H=16, NUM_KV_SPLITS={SPLITS}, "
    f"PAGE_SIZE={PAGE}, logit_cap=0.0, Lk={LK}, Lv={LV}, IS_MLA=True, num_warps=4, num_stages=2",
    dict(Q=("randn", "bfloat16", B * H * LK), K_Buffer=("randn", "bfloat16", PAGES * PAGE * LK),
         V_Buffer=("randn", "bfloat16", PAGES * PAGE * LK), sm_scale=192 ** -0.5,
         Req_to_tokens=("perm", "int32", PAGES), B_Seqlen=("full", "int32", B, S),
         Att_Out=("zeros", "float32", B * H * SPLITS * (LV + 1)),
         stride_req_to_tokens_b=S // PAGE, stride_qbs=H * LK, stride_qh=LK, stride_buf_kpbs=PAGE * LK,
         stride_buf_kbs=LK, stride_buf_kh=LK, stride_buf_vpbs=PAGE * LK, stride_buf_vbs=LK, stride_buf_vh=LK,
         stride_mid_ob=H * SPLITS * (LV + 1), stride_mid_oh=SPLITS * (LV + 1), stride_mid_os=LV + 1,
         k_scale=("full", "float32", 1, 1.0), v_scale=("full", "float32", 1, 1.0)),
    # exp and row sums in another order; fp32 partials.
    (B, cdiv(H, 16), SPLITS), ["Att_Out"],
    bytes=2 * B * H * LK + 2 * B * S * (LK + LV) + 4 * B * H * SPLITS * (LV + 1), tol=1e-2,
    flops=2 * B * H * S * (LK + LV)))

# MLA decode, stage 2 (_fwd_kernel_stage2): the 8 splits' partial outputs
# merged by their log-sum-exps into o [64, 128, 512] and lse [64, 128] (bf16,
# q's dtype, as the backend allocates them); its launch: 4 warps, 2 stages,
# grid (batch, heads). The partials here are random (the last column of
# each split, its lse, in the same range as the values).
CASES.append(vllm_case(
    "vllm_mla_decode_stage2_bf16", "v1/attention/ops/triton_decode_attention.py", "_fwd_kernel_stage2",
    "Mid_O=*fp32, o=*bf16, lse=*bf16, B_Seqlen=*i32, stride_mid_ob=i32, stride_mid_oh=i32, stride_mid_os=i32, "
    f"stride_obs=i32, stride_oh=i32, stride_lse_bs=i32, NUM_KV_SPLITS={SPLITS}, BLOCK_DV=512, Lv={LV}, "
    "num_warps=4, num_stages=2",
    dict(Mid_O=("randn", "float32", B * H * SPLITS * (LV + 1)), o=("zeros", "bfloat16", B * H * LV),
         lse=("zeros", "bfloat16", B * H), B_Seqlen=("full", "int32", B, S),
         stride_mid_ob=H * SPLITS * (LV + 1), stride_mid_oh=SPLITS * (LV + 1), stride_mid_os=LV + 1,
         stride_obs=H * LV, stride_oh=LV, stride_lse_bs=H),
    # exp of the lse differences in another order; bf16 out.
    (B, H), ["o", "lse"], bytes=4 * B * H * SPLITS * (LV + 1) + 2 * B * H * (LV + 1), tol=1e-2))

# Per-token-group fp8 quantization (_per_token_group_quant_fp8): DeepSeek-V3's
# activations before a block-scaled GEMM, 4096 tokens x 7168, groups of 128
# (one program a group: 229376 programs of 1 warp, BLOCK 128, 1 stage, as
# per_token_group_quant_fp8 launches it; on CUDA vLLM runs its C++ op for
# contiguous inputs and this kernel for the rest), e4m3 +-448, row-major
# scales.
M, K, G = 4096, 7168, 128
CASES.append(vllm_case(
    "vllm_per_token_group_quant_fp8", "model_executor/layers/quantization/utils/fp8_utils.py",
    "_per_token_group_quant_fp8",
    "y_ptr=*bf16, y_q_ptr=*fp8e4nv, y_s_ptr=*fp32, group_size=i32, y_num_columns=i32, y_row_stride=i32, "
    "eps=fp32, fp8_min=-448.0, fp8_max=448.0, use_ue8m0=False, BLOCK=128, num_warps=1, num_stages=1",
    dict(y_ptr=("randn", "bfloat16", M * K), y_q_ptr=("zeros", "float8_e4m3fn", M * K),
         y_s_ptr=("zeros", "float32", M * K // G), group_size=G, y_num_columns=K, y_row_stride=K, eps=1e-10),
    # max, one division and a cast: exact.
    (M * K // G,), ["y_q_ptr", "y_s_ptr"], bytes=2 * M * K + M * K + 4 * M * K // G, tol=0))

# Block-scaled fp8 GEMM (_w8a8_triton_block_scaled_mm), DeepSeek-V3's
# N = 7168, K = 2048 projection over 4096 tokens, bf16 out; per-128-group
# activation scales [M, 16] and 128 x 128 weight-block scales [56, 16]. Its
# H200 config (N=7168,K=2048,...,block_shape=[128,128].json, M 4096): 64 x
# 128 x 128, GROUP_SIZE_M 64, 4 warps, 3 stages.
M, N, K = 4096, 7168, 2048
CASES.append(vllm_case(
    "vllm_w8a8_block_fp8_mm", "model_executor/layers/quantization/utils/fp8_utils.py",
    "_w8a8_triton_block_scaled_mm",
    "A=*fp8e4nv, B=*fp8e4nv, C=*bf16, As=*fp32, Bs=*fp32, M=i32, N=i32, K=i32, group_n=i32, group_k=i32, "
    "stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, "
    "stride_As_m=i32, stride_As_k=i32, stride_Bs_k=i32, stride_Bs_n=i32, BLOCK_SIZE_M=64, "
    "BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=64, num_warps=4, num_stages=3",
    dict(A=fp8_e4m3(M * K, 60), B=fp8_e4m3(N * K, 60), C=("zeros", "bfloat16", M * N),
         As=("uniform", "float32", M * (K // 128), 0.01, 0.02),
         Bs=("uniform", "float32", (N // 128) * (K // 128), 1e-4, 2e-4), M=M, N=N, K=K, group_n=128,
         group_k=128, stride_am=K, stride_ak=1, stride_bk=1, stride_bn=K, stride_cm=N, stride_cn=1,
         stride_As_m=K // 128, stride_As_k=1, stride_Bs_k=1, stride_Bs_n=K // 128),
    # fp32 sums of 16 scaled block products in another order; bf16 out.
    (cdiv(M, 64) * cdiv(N, 128),), ["C"], bytes=M * K + N * K + 2 * M * N + 4 * (M + N // 128) * (K // 128),
    tol=1e-2, flops=2 * M * N * K))

# LoRA shrink (_lora_shrink_kernel): 4096 tokens (1024 for each of 4
# adapters, already grouped) through rank-16 A matrices of a 4096-wide
# layer, one slice, bf16 in, fp32 out [1, M, 16]. get_lora_op_configs'
# defaults at batch >= 128: 32 x 16 x 32, SPLIT_K 8 (partial sums added with
# atomics, so the output is zeroed before each run), GROUP_SIZE_M 8, 4
# warps, 2 stages; grid (8 x 128 x 1, 1 slice, 4 adapters).
M, K, R, NL = 4096, 4096, 16, 4
LORA_ROWS = dict(token_indices_sorted_by_lora_ids=("arange", "int32", M),
                 num_tokens_per_lora=("full", "int32", NL, M // NL),
                 # M and NL bound now: a later case reassigns M (512), and a
                 # start list read then overlapped the adapters' rows (both
                 # compilers' outputs raced).
                 lora_token_start_loc=lambda torch, gen, m=M, nl=NL: torch.arange(
                     0, m + 1, m // nl, dtype=torch.int32, device="cuda"),
                 lora_ids=("arange", "int32", NL))
CASES.append(vllm_case(
    "vllm_lora_shrink_bf16", "lora/ops/triton_ops/lora_shrink_op.py", "_lora_shrink_kernel",
    "input_ptr=*bf16, lora_ptr=*bf16, out_ptr=*fp32, M=i32, N=i32, K=i32, "
    "token_indices_sorted_by_lora_ids=*i32, num_tokens_per_lora=*i32, lora_token_start_loc=*i32, "
    "lora_ids=*i32, scaling=fp32, input_d0_stride=i32, input_d1_stride=i32, lora_d0_stride=i32, "
    "lora_d1_stride=i32, lora_d2_stride=i32, output_d0_stride=i32, output_d1_stride=i32, "
    "output_d2_stride=i32, BLOCK_M=32, BLOCK_N=16, BLOCK_K=32, EVEN_K=True, SPLIT_K=8, GROUP_SIZE_M=8, "
    "SLICE_NUM=1, USE_GDC=False, launch_pdl=False, num_warps=4, num_stages=2",
    dict(input_ptr=("randn", "bfloat16", M * K), lora_ptr=("randn", "bfloat16", NL * R * K, K ** -0.5),
         out_ptr=("zeros", "float32", M * R), M=M, N=R, K=K, scaling=1.0, input_d0_stride=K,
         input_d1_stride=1, lora_d0_stride=R * K, lora_d1_stride=K, lora_d2_stride=1,
         output_d0_stride=M * R, output_d1_stride=R, output_d2_stride=1, **LORA_ROWS),
    # fp32 split-K partials added atomically in another order.
    (8 * cdiv(M, 32) * cdiv(R, 16), 1, NL), ["out_ptr"], bytes=2 * M * K + 2 * NL * R * K + 4 * M * R,
    tol=1e-3, reset=["out_ptr"], srcs=[V + "lora/ops/triton_ops/kernel_utils.py"]))

# LoRA expand (_lora_expand_kernel): the shrink's fp32 [1, M, 16] through
# rank-16 B matrices [4, 4096, 16] back to the 4096-wide bf16 output, added
# to it (ADD_INPUTS, CAST_TYPE for the fp32 input); get_lora_op_configs'
# defaults for one slice: 64 x 128 x 32 (EVEN_K False at rank 16), 4 warps,
# 2 stages; grid (64 x 32, 1 slice, 4 adapters).
CASES.append(vllm_case(
    "vllm_lora_expand_bf16", "lora/ops/triton_ops/lora_expand_op.py", "_lora_expand_kernel",
    "input_ptr=*fp32, lora_ptr=*bf16, out_ptr=*bf16, M=i32, N=i32, K=i32, "
    "token_indices_sorted_by_lora_ids=*i32, num_tokens_per_lora=*i32, lora_token_start_loc=*i32, "
    "lora_ids=*i32, slice_start_loc=i32, input_d0_stride=i32, input_d1_stride=i32, input_d2_stride=i32, "
    "ls_d0_ptr=i32, ls_d1_ptr=i32, ls_d2_ptr=i32, output_d0_stride=i32, output_d1_stride=i32, "
    "output_hs_ptr=i32, BLOCK_M=64, BLOCK_N=128, BLOCK_K=32, EVEN_K=False, ADD_INPUTS=True, CAST_TYPE=True, "
    "SLICE_NUM=1, SAME_STRIDE=True, USE_GDC=False, launch_pdl=False, num_warps=4, num_stages=2",
    dict(input_ptr=("randn", "float32", M * R), lora_ptr=("randn", "bfloat16", NL * K * R, R ** -0.5),
         out_ptr=("zeros", "bfloat16", M * K), M=M, N=K, K=R, slice_start_loc=0, input_d0_stride=M * R,
         input_d1_stride=R, input_d2_stride=1, ls_d0_ptr=K * R, ls_d1_ptr=R, ls_d2_ptr=1,
         output_d0_stride=K, output_d1_stride=1, output_hs_ptr=K, **LORA_ROWS),
    # fp32 sums of 16 in another order, added to bf16: a rounding apart.
    (cdiv(M, 64) * cdiv(K, 128), 1, NL), ["out_ptr"], bytes=4 * M * R + 2 * NL * K * R + 2 * 2 * M * K,
    tol=1e-2, reset=["out_ptr"], srcs=[V + "lora/ops/triton_ops/kernel_utils.py"]))

# Unified attention (kernel_unified_attention), as unified_attention
# launches it for Llama-3-8B (32 query heads of 128 over 8 KV heads: 4
# queries a KV head, BLOCK_M 16, BLOCK_Q 4), bf16, KV cache in 16-token
# blocks ([blocks, 16, 8, 128] each for K and V; vLLM's are the two halves
# of one [blocks, 16, 8, 256] tensor), causal, no sinks/alibi/softcap; its
# default launch (4 warps, Triton's default stages).
UA_SIG = (
    "output_ptr=*bf16, query_ptr=*bf16, key_cache_ptr=*bf16, value_cache_ptr=*bf16, sink_ptr=None, "
    "block_tables_ptr=*i32, seq_lens_ptr=*i32, alibi_slopes_ptr=None, qq_bias_ptr=None, scale=fp32, "
    "q_scale=None, k_scale=*fp32, v_scale=*fp32, out_scale=fp32, softcap=fp32, num_query_heads=32, "
    "num_queries_per_kv=4, block_table_stride=i64, query_stride_0=i64, query_stride_1=i64, "
    "output_stride_0=i64, output_stride_1=i64, qq_bias_stride_0=i64, BLOCK_SIZE=16, TILE_SIZE={tile}, "
    "HEAD_SIZE=128, HEAD_SIZE_PADDED=128, USE_ALIBI_SLOPES=False, USE_ALIBI_SQRT=False, USE_QQ_BIAS=False, "
    "USE_SOFTCAP=False, USE_SINKS=False, SLIDING_WINDOW=0, USE_CAUSAL=True, USE_PER_SEQ_CAUSAL=False, "
    "per_seq_causal_ptr=None, USE_MM_PREFIX=False, MAX_MM_RANGES=0, mm_prefix_range_ptr=None, "
    "rswa_prefix_lens_ptr=*i32, R_SWA_WINDOW=0, USE_R_SWA=False, stride_k_cache_0=i64, stride_k_cache_1=i64, "
    "stride_k_cache_2=i64, stride_k_cache_3=1, stride_v_cache_0=i64, stride_v_cache_1=i64, "
    "stride_v_cache_2=i64, stride_v_cache_3=1, query_start_len_ptr=*i32, BLOCK_Q=4, num_seqs=i32, "
    "BLOCK_M=16, NUM_SEGMENTS_PER_SEQ={segments}, USE_FP8=False, IS_3D={is3d}, segm_output_ptr={segm}, "
    "segm_max_ptr={segm}, segm_expsum_ptr={segm}, k_scale_cache_ptr=None, v_scale_cache_ptr=None, "
    "stride_ks_blk=None, stride_ks_slot=None, stride_ks_head=None, stride_vs_blk=None, stride_vs_slot=None, "
    "stride_vs_head=None, FP8_MIN=-448.0, FP8_MAX=448.0")


def ua_args(nseq, qlen, ctx, segments):
    """q [nseq * qlen, 32, 128], the cache for nseq sequences of ctx tokens
    (blocks a permutation), query_start_loc by qlen."""
    T, blocks = nseq * qlen, nseq * ctx // 16
    args = dict(
        output_ptr=("zeros", "bfloat16", T * 32 * 128), query_ptr=("randn", "bfloat16", T * 32 * 128),
        key_cache_ptr=("randn", "bfloat16", blocks * 16 * 8 * 128),
        value_cache_ptr=("randn", "bfloat16", blocks * 16 * 8 * 128),
        block_tables_ptr=("perm", "int32", blocks), seq_lens_ptr=("full", "int32", nseq, ctx),
        scale=128 ** -0.5, k_scale=("full", "float32", 1, 1.0), v_scale=("full", "float32", 1, 1.0),
        out_scale=1.0, softcap=0.0, block_table_stride=ctx // 16, query_stride_0=32 * 128, query_stride_1=128,
        output_stride_0=32 * 128, output_stride_1=128, qq_bias_stride_0=0,
        rswa_prefix_lens_ptr=("full", "int32", nseq, ctx),
        stride_k_cache_0=16 * 8 * 128, stride_k_cache_1=8 * 128, stride_k_cache_2=128,
        stride_v_cache_0=16 * 8 * 128, stride_v_cache_1=8 * 128, stride_v_cache_2=128,
        query_start_len_ptr=lambda torch, gen: torch.arange(0, T + 1, qlen, dtype=torch.int32, device="cuda"),
        num_seqs=nseq)
    if segments > 1:
        for name in ("segm_output_ptr", "segm_max_ptr", "segm_expsum_ptr"):
            args[name] = ("zeros", "float32", T * 32 * segments * (128 if name == "segm_output_ptr" else 1))
    return args


# Prefill: 4 prompts of 4096 tokens with no cached prefix, the 2D kernel
# (TILE_SIZE 32 for prefill), grid (16384 / 4 + 4 = 4100 query blocks, 8
# KV heads).
NS, QL = 4, 4096
CASES.append(vllm_case(
    "vllm_unified_attention_prefill_bf16", "v1/attention/ops/triton_unified_attention.py",
    "kernel_unified_attention", UA_SIG.format(tile=32, segments=1, is3d=False, segm="None"),
    ua_args(NS, QL, QL, 1),
    # exp and row sums in another order; bf16 out.
    (NS * QL // 4 + NS, 8), ["output_ptr"], bytes=2 * NS * QL * 128 * (2 * 32 + 2 * 8),
    tol=1e-2, flops=4 * NS * 32 * QL * QL * 128 // 2,
    srcs=[OPS + "triton_attention_helpers.py"]))

# Decode, 16 sequences of 8192 cached tokens (at most seq_threshold_3D = 128
# / 8 KV heads sequences take the 3D path): one query each, the softmax split
# into 16 segments (NUM_PAR_SOFTMAX_SEGMENTS) each of TILE_SIZE 16 tiles
# (bf16 decode), grid (16 / 4 + 16 = 20, 8, 16), partial outputs in fp32
# [tokens, heads, 16, 128] for reduce_segments.
NS, CTX = 16, 8192
CASES.append(vllm_case(
    "vllm_unified_attention_decode_3d_bf16", "v1/attention/ops/triton_unified_attention.py",
    "kernel_unified_attention", UA_SIG.format(tile=16, segments=16, is3d=True, segm="*fp32"),
    ua_args(NS, 1, CTX, 16),
    # exp and row sums in another order; fp32 partials.
    (NS // 4 + NS, 8, 16), ["segm_output_ptr", "segm_max_ptr", "segm_expsum_ptr"],
    bytes=2 * 2 * NS * CTX * 8 * 128 + 2 * NS * 32 * 128 + 4 * NS * 32 * 16 * 130, tol=1e-2,
    flops=4 * NS * 32 * CTX * 128, srcs=[OPS + "triton_attention_helpers.py"]))

# merge_attn_states_kernel: MLA chunked prefill's merge of the context and
# new-token partial attentions, DeepSeek-V3's 128 heads x v_head_dim 128,
# 8192 tokens, bf16, LSEs [heads, tokens] fp32 (prefill_tokens_with_context,
# a constexpr, the token count); no output LSE, no fp8 output; grid
# (tokens, heads), Triton's default launch.
T, H, D = 8192, 128, 128
CASES.append(vllm_case(
    "vllm_merge_attn_states_bf16", "v1/attention/ops/triton_merge_attn_states.py", "merge_attn_states_kernel",
    "output=*bf16, output_lse=None, prefix_output=*bf16, prefix_lse=*fp32, suffix_output=*bf16, "
    f"suffix_lse=*fp32, prefix_head_stride=i32, output_head_stride=i32, output_scale=None, HEAD_SIZE={D}, "
    f"PADDED_HEAD_SIZE={D}, OUTPUT_LSE=False, prefill_tokens_with_context={T}, USE_FP8=False, "
    "FP8_MIN=-448.0, FP8_MAX=448.0",
    dict(output=("zeros", "bfloat16", T * H * D), prefix_output=("randn", "bfloat16", T * H * D),
         prefix_lse=("randn", "float32", H * T), suffix_output=("randn", "bfloat16", T * H * D),
         suffix_lse=("randn", "float32", H * T), prefix_head_stride=D, output_head_stride=D),
    # two exps and a weighted sum; bf16 out.
    (T, H), ["output"], bytes=2 * 3 * T * H * D + 2 * 4 * H * T, tol=1e-2))

# AWQ dequantization (awq_triton.py's awq_dequantize_kernel: int32 words of
# eight 4-bit weights in AWQ's interleaved order, unpacked with three
# interleaves and per-nibble shifts, (q - zero) * scale per group of 128
# rows), fp16 out, as AWQLinearMethod runs it for 256 tokens or more
# (dequantize the layer, then a plain matmul; with VLLM_USE_TRITON_AWQ, which
# routes ops.awq_dequantize here): a 4096 x 4096 fp16 layer (Llama-2-7B's
# attention projections) at AWQ's usual group size 128. qweight [4096, 512],
# zeros [32, 512] (packed like qweight), scales [32, 4096]; the launcher's
# 32 x 32 blocks of words (32 rows x 256 outputs), grid (512 / 32, 4096 /
# 32), Triton's default 4 warps.
K, N, G = 4096, 4096, 128
CASES.append(vllm_case(
    "vllm_awq_dequantize_fp16", "model_executor/layers/quantization/awq_triton.py", "awq_dequantize_kernel",
    "qweight_ptr=*i32, scales_ptr=*fp16, zeros_ptr=*i32, group_size=i32, result_ptr=*fp16, num_cols=i32, "
    "num_rows=i32, BLOCK_SIZE_X=32, BLOCK_SIZE_Y=32",
    dict(qweight_ptr=("randbits", "int32", K * N // 8),
         # (q - zero) * scale within +-0.06, as for weights of std 0.02.
         scales_ptr=("uniform", "float16", (K // G) * N, 0.002, 0.004),
         zeros_ptr=("randbits", "int32", (K // G) * N // 8), group_size=G,
         result_ptr=("zeros", "float16", K * N), num_cols=N // 8, num_rows=K),
    # A small integer times an fp16 scale, one rounding: exact.
    (cdiv(N // 8, 32), cdiv(K, 32)), ["result_ptr"],
    bytes=4 * K * N // 8 + 2 * (K // G) * N + 4 * (K // G) * N // 8 + 2 * K * N, tol=0))

# The compressed-tensors scaled GEMM (triton_scaled_mm.py's scaled_mm_kernel:
# (A @ B) * scale_a * scale_b, scales per tensor or per row / column, fp32
# accumulator for fp8 and int32 for int8), vLLM's Triton stand-in for
# cutlass_scaled_mm (taken off CUDA, or where CUTLASS cannot take the
# weight's shape; timed here on its own merits): fp8 (e4m3) with static
# per-tensor scales (a compressed-tensors FP8 checkpoint; both scales [1, 1],
# so BLOCK_SIZE_SCALE_A = BLOCK_SIZE_SCALE_B = 1), bf16 out, no bias: 512
# tokens through a 4096 x 4096 projection, the weight [N, K] passed
# transposed (K contiguous, is_weak_contiguous). triton_scaled_mm's
# heuristic for next_power_of_2(M) > 128: 128 x 128 x 128 tiles, Triton's
# default 4 warps and 3 stages; grid (512 / 128) x (4096 / 128) = 128
# programs, one wave.
M, N, K = 512, 4096, 4096
CASES.append(vllm_case(
    "vllm_scaled_mm_fp8_bf16", "model_executor/layers/quantization/compressed_tensors/triton_scaled_mm.py",
    "scaled_mm_kernel",
    "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, scale_a_ptr=*fp32, scale_b_ptr=*fp32, c_ptr=*bf16, bias_ptr=None, "
    "M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, "
    "stride_cn=i32, ACCUMULATOR_DTYPE=tl.float32, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, "
    "BLOCK_SIZE_SCALE_A=1, BLOCK_SIZE_SCALE_B=1",
    dict(a_ptr=fp8_e4m3(M * K, 100), b_ptr=fp8_e4m3(N * K, 60), scale_a_ptr=("full", "float32", 1, 0.008),
         scale_b_ptr=("full", "float32", 1, 1.5e-4), c_ptr=("zeros", "bfloat16", M * N), M=M, N=N, K=K,
         stride_am=K, stride_ak=1, stride_bk=1, stride_bn=K, stride_cm=N, stride_cn=1),
    # fp32 sums of 4096 in another order, two scale products; bf16 out.
    (cdiv(M, 128) * cdiv(N, 128),), ["c_ptr"], bytes=M * K + N * K + 2 * M * N + 2 * 4, tol=1e-2,
    flops=2 * M * N * K))
