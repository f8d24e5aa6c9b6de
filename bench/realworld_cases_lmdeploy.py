"""Real-world cases: lmdeploy's varlen flash-attention prefill
(InternLM/lmdeploy at 1263d5c, the seventh sample under
tests/realworld/lmdeploy: `pytorch/kernels/cuda/flashattention.py`,
`_flash_prefill_fwd_kernel`), at the configs its host code picks on sm_9x
(`_kernel_meta_sm9x`): head dim 128 takes 128 x 128 tiles over 8 warps and 3
stages; DeepSeek-V3's MLA (a 576-wide key, latent and rope, whose first 512
columns are the value: `shared_kv`, v = k^T) 64-row tiles over 8 warps and 2
stages. 4 sequences of 2048 tokens (cu_seqlens), causal, bf16.
bench/realworld_cases.py says what a case is.
"""

import logging
import types

from realworld_case_rules import TRL, case, cdiv

CASES = []

ROOT = TRL + "lmdeploy"
FILE = ROOT + "/lmdeploy/pytorch/kernels/cuda/flashattention.py"
STUBS = {"lmdeploy.utils": dict(get_logger=lambda name: logging.getLogger(name))}

B, S = 4, 2048
T = B * S


def cu_seqlens(torch, gen):
    return torch.arange(0, B + 1, device="cuda", dtype=torch.int32) * S


def prefill_case(id, heads, kv_heads, dk, dv, shared_kv, block_m, block_n, warps, stages):
    dk1 = 64 if dk == 576 else 0
    sig = (
        "q_ptr=*bf16, k_ptr=*bf16, v_ptr=*bf16, o_ptr=*bf16, cu_seqlens_q_ptr=*i32, cu_seqlens_k_ptr=*i32, "
        "q_start_loc_ptr=None, q_seqlens_ptr=None, kv_start_loc_ptr=None, kv_seqlens_ptr=None, sinks=None, "
        f"alibi_slopes_ptr=None, sm_scale=fp32, stride_qs={heads * dk}, stride_qh={dk}, stride_qd=1, "
        f"stride_ks={kv_heads * dk}, stride_kh=i32, stride_kd=1, stride_vs={kv_heads * (dk if shared_kv else dv)}, "
        f"stride_vh=i32, stride_vd=1, stride_os={heads * dv}, stride_oh={dv}, stride_od=1, kv_group_num=i32, "
        f"head_dim_k={dk}, head_dim_v={dv}, causal=True, window_size=-1, logit_softcapping=-1, "
        f"shared_kv={shared_kv}, block_sparse_size=1, BLOCK_M={block_m}, BLOCK_N={block_n}, "
        f"BLOCK_DK={dk - dk1}, BLOCK_DK1={dk1}, BLOCK_DV={dv}, num_warps={warps}, num_stages={stages}")
    args = dict(q_ptr=("randn", "bfloat16", T * heads * dk), k_ptr=("randn", "bfloat16", T * kv_heads * dk),
                v_ptr=("randn", "bfloat16", T * kv_heads * (dk if shared_kv else dv)),
                o_ptr=("zeros", "bfloat16", T * heads * dv), cu_seqlens_q_ptr=cu_seqlens,
                cu_seqlens_k_ptr=cu_seqlens, sm_scale=dk ** -0.5,
                stride_kh=dk, stride_vh=dk if shared_kv else dv, kv_group_num=heads // kv_heads)
    # Causal: half of the S x S scores, each a dot of dk and one of dv.
    flops = 2 * B * heads * (S * S // 2) * (dk + dv)
    return case(id, FILE, "_flash_prefill_fwd_kernel", sig, args, (cdiv(S, block_m), heads, B), ["o_ptr"],
                bytes=2 * T * (heads * dk + 2 * kv_heads * dk + heads * dv), tol=2e-2, flops=flops,
                package=ROOT, stubs=STUBS)


# Llama-3-8B: 32 query heads of 128 over 8 KV heads.
CASES.append(prefill_case("lmdeploy_prefill_d128_bf16", 32, 8, 128, 128, False, 128, 128, 8, 3))
# DeepSeek-V3 MLA at TP8: 16 heads over one latent KV head.
CASES.append(prefill_case("lmdeploy_prefill_mla_bf16", 16, 1, 576, 512, True, 64, 64, 8, 2))
