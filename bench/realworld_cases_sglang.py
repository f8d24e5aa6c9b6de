"""Real-world cases: SGLang's extend attention (prefill with a cached prefix;
sgl-project/sglang v0.5.17, tests/realworld/sglang:
`kernels/ops/attention/extend_attention.py`, `_fwd_kernel`), as the Triton
attention backend calls `extend_attention_fwd` on an H100/H200: causal, no
custom mask, no sliding window, sinks or logit cap, unscaled bf16 KV
(k_scale = v_scale = 1.0), one-token pages (PAGE_SIZE 1), num_stages 1, and
the tiles `_get_block_sizes_for_extend_attention` picks for capability 9
(Lq <= 128: 128 x 64; Lq <= 256: 64 x 64; wider: 32 x 64; 8 warps above
Lq 64). bench/realworld_cases.py says what a case is.

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

The module imports `sglang.srt.utils` (absent from the sample) for host-side
platform probes: stubbed to "neither CUDA nor HIP", so that importing it
does not query a GPU (the config function that reads the answer is not run;
the cases give its Hopper choices).
"""

from realworld_case_rules import TRL, case, cdiv

CASES = []

ROOT = TRL + "sglang"
FILE = ROOT + "/sglang/kernels/ops/attention/extend_attention.py"
STUBS = {"sglang.srt.utils": dict(is_cuda=lambda: False, is_hip=lambda: False,
                                  is_gfx95_supported=lambda: False)}

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
