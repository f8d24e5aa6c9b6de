"""Real-world cases: the tenth sample (tests/realworld/MANIFEST.tenth):
triton-lang/kernels' autotuned GEMM, flash attention (forward and backward)
and cross entropy, verl's fused linear-entropy forward mainloop and its
block-wise fp8 weight cast, Megatron-LM's MXFP8 quantization and inference
MoE token permutation, and three of the new flash-linear-attention kernels
(Kimi Delta Attention's WY recomputation and gate cumsum, RWKV-7's token-shift
addcmul). bench/realworld_cases.py says what a case is.

Configs are the launchers' constants or the first autotune config (where
MANIFEST.tenth took another for a kernel the bench times, the comment says
why); grids as each launcher computes them; sizes LLM-sized (4 x 32 heads x
4096 tokens for attention, Llama-2's vocabulary, Qwen2.5-7B's hidden size,
Qwen3-30B-A3B's MoE at EP 8, Kimi-Linear's 32 heads of 128, RWKV-7 1.5B).

Signatures are written without alignment hints (realworld_cubins.py --list
adds the ones Triton's JIT specializes on).
"""

import math

from realworld_case_rules import TRL, cached, case, cdiv

CASES = []


# --- triton-lang/kernels (kernels/) -------------------------------------------------
# Imported as the package `kernels` from tests/realworld/triton_lang_kernels
# (matmul.py imports its perf model relatively).
TLK_ROOT = TRL + "triton_lang_kernels"
TLK = TLK_ROOT + "/kernels/"
TLK_PKG = dict(package=TLK_ROOT)

# The autotuned GEMM on a 4096^3 fp16 problem, its first config (128 x 256 x
# 32, 3 stages, 8 warps), GROUP_M 8, EVEN_K from its heuristic, AB_DTYPE fp16
# (get_higher_dtype of two fp16 operands), acc fp32, input_precision None as
# the launcher's default. Grid (tiles, SPLIT_K).
M = N = K = 4096
CASES.append(case(
    "tlk_matmul_fp16_4096", TLK + "matmul.py", "_kernel",
    "A=*fp16, B=*fp16, C=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, "
    "stride_bn=i32, stride_cm=i32, stride_cn=i32, acc_dtype=tl.float32, input_precision=None, "
    "fp8_fast_accum=True, BLOCK_M=128, BLOCK_N=256, BLOCK_K=32, GROUP_M=8, SPLIT_K=1, EVEN_K=True, "
    "AB_DTYPE=tl.float16, num_warps=8, num_stages=3",
    dict(A=("randn", "float16", M * K), B=("randn", "float16", K * N, 0.02), C=("zeros", "float16", M * N),
         M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1),
    # fp32 sums of 4096 products in another order; fp16 out.
    (cdiv(M, 128) * cdiv(N, 256), 1), ["C"], bytes=2 * (M * K + K * N + M * N), flops=2 * M * N * K,
    tol=1e-2, **TLK_PKG))

# Flash attention (block pointers over Z * H * N_CTX-tall views): fp16 q, k,
# v [4, 32, 4096, 128], sm_scale 1/sqrt(128); the forward as its autograd
# function launches it for head dim 128 (128 x 64 tiles, 8 warps, 4 stages),
# causal; L [Z * H, N_CTX] the base-2 logsumexp. Grid (N_CTX / 128, Z * H, 1).
FZ, FH, FS, FD = 4, 32, 4096, 128
QKV = FZ * FH * FS * FD
ATTN_STRIDES = dict(stride_qz=FH * FS * FD, stride_qh=FS * FD, stride_qm=FD, stride_qk=1, stride_kz=FH * FS * FD,
                    stride_kh=FS * FD, stride_kn=FD, stride_kk=1, stride_vz=FH * FS * FD, stride_vh=FS * FD,
                    stride_vn=FD, stride_vk=1)
ATTN_SIG = ("stride_qz=i32, stride_qh=i32, stride_qm=i32, stride_qk=i32, stride_kz=i32, stride_kh=i32, "
            "stride_kn=i32, stride_kk=i32, stride_vz=i32, stride_vh=i32, stride_vn=i32, stride_vk=i32")
CASES.append(case(
    "tlk_flash_fwd_causal_d128", TLK + "flash_attention.py", "_fwd_kernel",
    f"Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, L=*fp32, Out=*fp16, {ATTN_SIG}, stride_oz=i32, stride_oh=i32, "
    f"stride_om=i32, stride_on=i32, Z=i32, H=i32, N_CTX=i32, Z_H_N_CTX=i32, BLOCK_M=128, BLOCK_DMODEL={FD}, "
    "BLOCK_N=64, IS_CAUSAL=True, num_warps=8, num_stages=4",
    dict(Q=("randn", "float16", QKV), K=("randn", "float16", QKV), V=("randn", "float16", QKV),
         sm_scale=FD ** -0.5, L=("zeros", "float32", FZ * FH * FS), Out=("zeros", "float16", QKV), **ATTN_STRIDES,
         stride_oz=FH * FS * FD, stride_oh=FS * FD, stride_om=FD, stride_on=1, Z=FZ, H=FH, N_CTX=FS,
         Z_H_N_CTX=FZ * FH * FS),
    # exp2 and the row sums in another order; fp16 out.
    (FS // 128, FZ * FH, 1), ["Out", "L"], bytes=2 * 4 * QKV + 4 * FZ * FH * FS,
    flops=4 * FZ * FH * FS * FS * FD // 2, tol=1e-2, **TLK_PKG))


# Its backward as the autograd function launches it on Hopper (MMA_V3):
# 128 x 128 blocks, 8 warps, 1 stage, not sequence-parallel (one program per
# (batch, head) walks all 32 column blocks, dq read, added to and written back
# per block: zeroed before each run, as the host's torch.zeros_like), causal.
# Its inputs made consistent in PyTorch: O the causal attention of q, k, v,
# L the forward's base-2 logsumexp of the scaled scores (computed in
# 4-head slices), delta = rowsum(O * dO) (what _bwd_preprocess writes; the
# bench runs one kernel a case).
def _flash_bwd_inputs(torch, g, dev):
    shape = (FZ, FH, FS, FD)
    q = torch.randn(shape, generator=g, device=dev).half()
    k = torch.randn(shape, generator=g, device=dev).half()
    v = torch.randn(shape, generator=g, device=dev).half()
    do = torch.randn(shape, generator=g, device=dev).half()
    sm_scale = FD ** -0.5
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=sm_scale)
    qk_scale = sm_scale * 1.44269504
    causal = torch.ones(FS, FS, dtype=torch.bool, device=dev).tril()
    qf, kf = q.reshape(FZ * FH, FS, FD), k.reshape(FZ * FH, FS, FD)
    L = torch.empty(FZ * FH, FS, dtype=torch.float32, device=dev)
    for i in range(0, FZ * FH, 4):
        s = (qf[i:i + 4].float() @ kf[i:i + 4].float().transpose(1, 2)) * qk_scale
        s = s.masked_fill(~causal, -math.inf)
        L[i:i + 4] = torch.logsumexp(s * math.log(2), dim=-1) / math.log(2)
        del s
    delta = (o.float() * do.float()).sum(-1).reshape(-1)
    return dict(q=q.reshape(-1), k=k.reshape(-1), v=v.reshape(-1), o=o.reshape(-1), do=do.reshape(-1),
                L=L.reshape(-1), delta=delta)


fb = cached(_flash_bwd_inputs)
CASES.append(case(
    "tlk_flash_bwd_causal_d128", TLK + "flash_attention.py", "_bwd_kernel",
    "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, Out=*fp16, DO=*fp16, DQ=*fp16, DK=*fp16, DV=*fp16, L=*fp32, "
    f"D=*fp32, stride_dqa=i32, {ATTN_SIG}, Z=i32, H=i32, N_CTX=i32, Z_H_N_CTX=i32, SQ_Z_H_N_CTX=i32, "
    f"BLOCK_M=128, BLOCK_DMODEL={FD}, BLOCK_N=128, SEQUENCE_PARALLEL=False, CAUSAL=True, MMA_V3=True, "
    "num_warps=8, num_stages=1",
    dict(Q=fb("q"), K=fb("k"), V=fb("v"), sm_scale=FD ** -0.5, Out=fb("o"), DO=fb("do"),
         DQ=("zeros", "float16", QKV), DK=("zeros", "float16", QKV), DV=("zeros", "float16", QKV), L=fb("L"),
         D=fb("delta"), stride_dqa=QKV, **ATTN_STRIDES, Z=FZ, H=FH, N_CTX=FS, Z_H_N_CTX=FZ * FH * FS,
         SQ_Z_H_N_CTX=cdiv(FS, 128) * FZ * FH * FS),
    # fp16 operands, fp32 sums in another order, dq rounded to fp16 after
    # each of up to 32 column blocks.
    (FZ * FH, 1), ["DQ", "DK", "DV"], bytes=2 * 7 * QKV + 2 * 4 * FZ * FH * FS, tol=2e-2,
    flops=5 * 2 * FZ * FH * FS * FS * FD // 2, reset=["DQ"], **TLK_PKG))

# Cross entropy over Llama-2's 32000-word vocabulary for 16384 tokens: one
# program a row (BLOCK 32768 and 16 warps from its heuristics), bf16 logits
# in, bf16 negative log-probabilities out (the saved tensor the backward
# turns into the gradient), the loss read back from them at the int64 target.
R, V = 16384, 32000
CASES.append(case(
    "tlk_cross_entropy_fwd_32000", TLK + "cross_entropy.py", "_forward",
    "LOGITS=*bf16, PROBS=*bf16, IDX=*i64, LOSS=*bf16, N=i32, BLOCK=32768, num_warps=16",
    dict(LOGITS=("randn", "bfloat16", R * V, 2.0), PROBS=("zeros", "bfloat16", R * V),
         IDX=("index", "int64", R, V), LOSS=("zeros", "bfloat16", R), N=V),
    # exp and log (approximate in both), the row sums in another order;
    # bf16 out.
    (R,), ["PROBS", "LOSS"], bytes=2 * 2 * R * V + 8 * R + 2 * 2 * R, tol=1e-2, **TLK_PKG))

# --- verl (verl/utils/kernel) ------------------------------------------------------------
VERL_PKG = dict(package=TRL + "verl")

# The fused linear cross-entropy/entropy forward's mainloop (what verl's RL
# trainer runs for the policy's token log-probs and entropy): logits =
# hidden @ weight^T computed 128 x 256 at a time and reduced on the fly
# (running max, sum of exp, sum of logit * exp, the label's logit) per
# 1024-column vocabulary split. Qwen2.5-7B's hidden 3584, bf16, at a smaller
# vocabulary (32768: 32 splits) and 4096 tokens, so that a launch stays
# near a millisecond; int64 labels; temperature 1; its single autotune
# config (128 x 256 x 32, 3 stages, 8 warps), USE_TMA as on an H100
# (device-side tensor descriptors). Grid: the launcher's
# cdiv(tokens, 128) * splits.
T, HID, VOC, SPLIT = 4096, 3584, 32768, 1024
NS = cdiv(VOC, SPLIT)
CASES.append(case(
    "verl_entropy_fwd_mainloop", TRL + "verl/verl/utils/kernel/kernels.py",
    "efficient_entropy_kernel_general_mainloop",
    "rank=i32, hidden_ptr=*bf16, weight_ptr=*bf16, labels_ptr=*i64, num_tokens=i32, hidden_size=i32, "
    "vocab_size=i32, vocab_per_split=i32, stride_hidden_m=i64, stride_hidden_k=i64, stride_weight_n=i64, "
    "stride_weight_k=i64, max_ptr=*fp32, stride_max_m=i64, stride_max_n=i64, accu_ptr=*fp32, "
    "stride_accu_m=i64, stride_accu_n=i64, entropy_b_ptr=*fp32, stride_entropy_b_m=i64, "
    "stride_entropy_b_n=i64, global_logprobs_ptr=*fp32, stride_global_logprobs=i64, "
    "global_logprobs_scalar_ptr=*fp32, rcp_temperature=fp32, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, "
    "BLOCK_SIZE_K=32, USE_TMA=True, num_warps=8, num_stages=3",
    dict(rank=0, hidden_ptr=("randn", "bfloat16", T * HID), weight_ptr=("randn", "bfloat16", VOC * HID, 0.02),
         labels_ptr=("index", "int64", T, VOC), num_tokens=T, hidden_size=HID, vocab_size=VOC,
         vocab_per_split=SPLIT, stride_hidden_m=HID, stride_hidden_k=1, stride_weight_n=HID, stride_weight_k=1,
         max_ptr=("zeros", "float32", T * NS), stride_max_m=NS, stride_max_n=1,
         accu_ptr=("zeros", "float32", T * NS), stride_accu_m=NS, stride_accu_n=1,
         entropy_b_ptr=("zeros", "float32", T * NS), stride_entropy_b_m=NS, stride_entropy_b_n=1,
         global_logprobs_ptr=("zeros", "float32", T), stride_global_logprobs=1,
         global_logprobs_scalar_ptr=("full", "float32", 1, 1.0), rcp_temperature=1.0),
    # fp32 sums of 3584 bf16 products in another order, exp (approximate in
    # both) and the running sums; each label's logit stored by the one split
    # that holds it.
    (cdiv(T, 128) * NS,), ["max_ptr", "accu_ptr", "entropy_b_ptr", "global_logprobs_ptr",
                           "global_logprobs_scalar_ptr"],
    bytes=2 * (T * HID + VOC * HID) + 8 * T + 3 * 4 * T * NS + 4 * T, flops=2 * T * HID * VOC, tol=1e-4,
    **VERL_PKG))

# The block-wise fp8 weight cast of verl's FP8 rollout (its weight sync): a
# bf16 [14336, 4096] MLP weight (std 0.02) to e4m3 with fp32 [112, 32]
# block scales, 128 x 128 blocks, contiguous (8 warps, 2 stages, as the
# launcher picks); eps 1e-10, +-448. Grid (M / 128, N / 128).
M, N = 14336, 4096
CASES.append(case(
    "verl_blockwise_fp8_cast", TRL + "verl/verl/utils/kernel/fp8_kernel.py", "_blockwise_cast_to_fp8_kernel",
    "X=*bf16, Y=*fp8e4nv, S=*fp32, stride_xm=i32, stride_xn=i32, stride_ym=i32, stride_yn=i32, stride_sm=i32, "
    "stride_sn=i32, M=i32, N=i32, eps=fp32, fp8_min=fp32, fp8_max=fp32, BLOCK_M=128, BLOCK_N=128, "
    "num_warps=8, num_stages=2",
    dict(X=("randn", "bfloat16", M * N, 0.02), Y=("zeros", "float8_e4m3fn", M * N),
         S=("zeros", "float32", (M // 128) * (N // 128)), stride_xm=N, stride_xn=1, stride_ym=N, stride_yn=1,
         stride_sm=N // 128, stride_sn=1, M=M, N=N, eps=1e-10, fp8_min=-448.0, fp8_max=448.0),
    # A maximum, two divisions and products rounded to e4m3: exact.
    (M // 128, N // 128), ["Y", "S"], bytes=2 * M * N + M * N + 4 * (M // 128) * (N // 128), tol=0,
    **VERL_PKG))

# --- Megatron-LM (megatron/core) -----------------------------------------------------------
MEG_PKG = dict(package=TRL + "megatron")
MEG = TRL + "megatron/megatron/core/"

# MXFP8 quantization with the scale swizzle fused (inference MoE's FC1
# input): bf16 [16384, 2048] to e4m3 with one e8m0 scale a 32-element group,
# written in cuBLAS's 128 x 4 blocked layout (n_col_blocks 16); one program a
# row, BLOCK_K 2048, Triton's default 4 warps. Scales zeroed as the host
# allocates them.
M, K = 16384, 2048
CASES.append(case(
    "megatron_mxfp8_quant_2048", MEG + "inference/quantization/mxfp8_quantize.py", "_mxfp8_quant_swizzle_kernel",
    "out_ptr=*fp8e4nv, scale_ptr=*u8, src_ptr=*bf16, K=i32, n_col_blocks=i32, REAL_GROUPS=64, BLOCK_K=2048, "
    "BLOCK_GROUPS=64",
    dict(out_ptr=("zeros", "float8_e4m3fn", M * K), scale_ptr=("zeros", "uint8", M * K // 32),
         src_ptr=("randn", "bfloat16", M * K), K=K, n_col_blocks=K // 32 // 4),
    # Power-of-two scales (exact products), e4m3 rounding: exact.
    (M,), ["out_ptr", "scale_ptr"], bytes=2 * M * K + M * K + M * K // 32, tol=0, **MEG_PKG))

# Inference MoE token permutation (Qwen3-30B-A3B at EP 8: 128 experts, the 16
# local ones from expert 32, top-8, hidden 2048, a 4096-token CUDA graph, all
# tokens valid): each (token, choice) pair routed to a local expert claims a
# row of that expert's 16-aligned block by an atomic add on its counter (the
# exclusive offsets _prefix_sum_kernel writes) and copies the token's row
# and probability there; 512 programs in a grid-stride loop, BLOCK_H 1024,
# no inverse map. The order of the rows within an expert's block is the
# atomics' (it differs from run to run), so the inputs make every row an
# expert receives the same: each token has exactly one local expert among its
# eight (at a random choice; the other seven distinct non-local ones), its
# hidden row and that choice's probability are the expert's own (16 random
# bf16 rows, 16 fp32 values). Then the permuted rows, probabilities and the
# final counters (the inclusive offsets) are deterministic; the source-index
# map (out_src_idx) is not, and is not compared. 4096 local pairs, what
# uniform routing gives on average. The counters are zeroed before each timed
# run (the bench's reset; the exclusive offsets would be restored by the
# host's prefix sum): the experts' rows then overlap at the front of the
# buffer, in bounds.
MT, MH, TOPK, NE, NLOC, LSTART, ALIGN = 4096, 2048, 8, 128, 16, 32, 16
MOUT = MT * min(TOPK, NLOC) + ALIGN * NLOC


def _moe_routing(torch, g, dev):
    lid = torch.randint(0, NLOC, (MT,), generator=g, device=dev)
    others = torch.rand(MT, NE - NLOC, generator=g, device=dev).argsort(dim=1)[:, :TOPK - 1]
    others = torch.where(others >= LSTART, others + NLOC, others)  # skip the local experts' ids
    choices = torch.cat([others, (lid + LSTART)[:, None]], dim=1)
    order = torch.rand(MT, TOPK, generator=g, device=dev).argsort(dim=1)
    routing = choices.gather(1, order)
    rows = torch.randn(NLOC, MH, generator=g, device=dev).to(torch.bfloat16)
    pval = torch.rand(NLOC, generator=g, device=dev)
    probs = torch.rand(MT, TOPK, generator=g, device=dev)
    probs = torch.where(routing == (lid + LSTART)[:, None], pval[lid][:, None], probs)
    counts = torch.bincount(lid, minlength=NLOC)
    aligned = (counts + ALIGN - 1) // ALIGN * ALIGN
    return dict(hidden=rows[lid].reshape(-1), probs=probs.reshape(-1), routing=routing.reshape(-1),
                counters=(torch.cumsum(aligned, 0) - aligned).to(torch.int32))


moe = cached(_moe_routing)
CASES.append(case(
    "megatron_moe_permute_bf16", MEG + "inference/moe/permute.py", "_permute_tokens_kernel",
    "hidden_ptr=*bf16, probs_ptr=*fp32, routing_map_ptr=*i64, out_hidden_ptr=*bf16, out_probs_ptr=*fp32, "
    "out_src_idx_ptr=*i32, inverse_map_ptr=*i32, counters_ptr=*i32, valid_tokens_ptr=*i32, hidden_dim=i32, "
    f"max_pairs=i32, topk={TOPK}, local_expert_start=i32, num_local_experts={NLOC}, BLOCK_H=1024, "
    "NUM_BLOCKS=512, HAS_INVERSE=False",
    dict(hidden_ptr=moe("hidden"), probs_ptr=moe("probs"), routing_map_ptr=moe("routing"),
         out_hidden_ptr=("zeros", "bfloat16", MOUT * MH), out_probs_ptr=("zeros", "float32", MOUT),
         out_src_idx_ptr=("full", "int32", MOUT, -1), inverse_map_ptr=("zeros", "int32", 1),
         counters_ptr=moe("counters"), valid_tokens_ptr=("full", "int32", 1, MT), hidden_dim=MH,
         max_pairs=MT * TOPK, local_expert_start=LSTART),
    # Copies: exact.
    (512,), ["out_hidden_ptr", "out_probs_ptr", "counters_ptr"],
    bytes=2 * 2 * MT * MH + 8 * MT * TOPK + 4 * MT + 8 * MT, tol=0, reset=["counters_ptr"],
    # permute.py imports null_decorator (for when triton is missing) and the
    # batch-invariant unpermute module, neither in the sample.
    stubs={"megatron.core.utils": dict(null_decorator=lambda *a, **k: (lambda fn: fn)),
           "megatron.core.inference.moe.batch_invariant": {}},
    **MEG_PKG))

# --- flash-linear-attention (fla/ops: kda, rwkv7) ------------------------------------------
# Imported as bench/realworld_cases_fla.py does (its stubs), with the further
# fla.utils names these files take.
from realworld_cases_fla import FLA, FLA_ROOT, FLA_STUBS, OP, unit_rows, chunk_decay  # noqa: E402


def _identity_factory(*args, **kwargs):
    return lambda fn: fn


TENTH_FLA_STUBS = dict(FLA_STUBS)
TENTH_FLA_STUBS["fla.utils"] = dict(
    FLA_STUBS["fla.utils"], IS_AMD=False, IS_ARM=False, IS_NVIDIA=True, IS_TF32_SUPPORTED=True,
    check_pytorch_version=lambda version: True, autocast_custom_fwd=lambda fn: fn,
    autocast_custom_bwd=lambda fn: fn)


def fla_case(*args, **rules):
    rules.setdefault("package", FLA_ROOT)
    rules.setdefault("stubs", TENTH_FLA_STUBS)
    rules.setdefault("srcs", [OP])
    return case(*args, **rules)


# Kimi Delta Attention (Kimi-Linear: 32 heads of 128 for q, k and v), batch 4
# x 4096 tokens, 64-token chunks, not varlen.
B, T, H, K, V, BT = 4, 4096, 32, 128, 128, 64
NT = T // BT


def tril_inverse_rows(batch, length, heads, bt, std):
    """bf16 [B, T, HV, BT]: per chunk a unit lower-triangular matrix (row t
    of its chunk: columns up to t % BT), as (I + A)^-1 of a well-conditioned
    A is, off-diagonal entries randn * std."""
    def make(torch, gen):
        x = torch.randn(batch, length, heads, bt, generator=gen, device="cuda") * std
        row = (torch.arange(length, device="cuda") % bt)[None, :, None, None]
        col = torch.arange(bt, device="cuda")[None, None, None, :]
        x = torch.where(col < row, x, torch.zeros_like(x)) + (col == row).float()
        return x.to(torch.bfloat16).reshape(-1)
    return make


# recompute_w_u_fwd (kda/wy_fast.py), KDA's WY representation in every
# chunked forward: u = A (beta v), w = A (beta 2^gk k) and kg = k 2^(gk_last
# - gk) per chunk and head, A the inverted intra-chunk matrix (bf16, as
# chunk_kda_fwd_intra leaves Akk), gk the per-channel chunk-local cumulative
# log2 decay (fp32). The host's BK = BV = 64, qg not stored (q None: the host
# passes it only when recomputation is disabled); autotuned over 2-8 warps x
# 2-4 stages: 4 warps, 3 stages. Grid (NT, B * HV). FLOPs: the triangular
# halves of A v and A k.
CASES.append(fla_case(
    "fla_kda_recompute_w_u_fwd", FLA + "kda/wy_fast.py", "recompute_w_u_fwd_kda_kernel",
    "q=None, k=*bf16, qg=None, kg=*bf16, v=*bf16, beta=*bf16, w=*bf16, u=*bf16, A=*bf16, gk=*fp32, "
    f"cu_seqlens=None, chunk_indices=None, T=i32, H={H}, HV={H}, K={K}, V={V}, BT={BT}, BK=64, BV=64, "
    "STORE_QG=False, STORE_KG=True, IS_VARLEN=False, num_warps=4, num_stages=3",
    dict(k=unit_rows(B * T * H, K), kg=("zeros", "bfloat16", B * T * H * K), v=("randn", "bfloat16", B * T * H * V),
         beta=("uniform", "bfloat16", B * T * H, 0.0, 1.0), w=("zeros", "bfloat16", B * T * H * K),
         u=("zeros", "bfloat16", B * T * H * V), A=tril_inverse_rows(B, T, H, BT, 0.05),
         gk=chunk_decay(B, T, H, BT, 0.05, dim=K), T=T),
    # fp32 sums of 64 products in another order, exp2 to an ulp; bf16 out.
    (NT, B * H), ["w", "u", "kg"],
    bytes=2 * B * T * H * (K + V + 1 + BT) + 4 * B * T * H * K + 2 * B * T * H * (2 * K + V), tol=1e-2,
    flops=B * NT * H * BT * BT * (K + V)))

# kda_gate_chunk_cumsum (kda/gate.py), the gate KDA's chunked forward
# computes in-kernel: g = -exp(A_log) softplus(g_raw + dt_bias) per channel,
# its chunk-local cumulative sum, scaled by 1/ln 2 (log2 units); bf16 raw
# gate [B, T, H, 128] in, fp32 out; A_log = log(uniform(1, 16)) per head,
# dt_bias per channel. Autotuned over BS {32, 64} x 2-8 warps: BS 64, 4 warps.
# Grid (K / BS, NT, B * H).
CASES.append(fla_case(
    "fla_kda_gate_chunk_cumsum", FLA + "kda/gate.py", "kda_gate_chunk_cumsum_vector_kernel",
    "s=*bf16, A_log=*fp32, dt_bias=*fp32, o=*fp32, scale=fp32, cu_seqlens=None, chunk_indices=None, "
    f"lower_bound=None, T=i32, H={H}, S={K}, BT={BT}, BS=64, REVERSE=False, HAS_A=True, HAS_BIAS=True, "
    "HAS_SCALE=True, IS_VARLEN=False, USE_LOWER_BOUND=False, num_warps=4",
    dict(s=("randn", "bfloat16", B * T * H * K), A_log=("uniform", "float32", H, 0.0, math.log(16.0)),
         dt_bias=("randn", "float32", H * K, 0.5), o=("zeros", "float32", B * T * H * K),
         scale=1 / math.log(2), T=T),
    # softplus (inline PTX, the same in both) and exp to an ulp, the
    # cumulative sum in another order.
    (K // 64, NT, B * H), ["o"], bytes=(2 + 4) * B * T * H * K + 4 * (H + H * K), tol=1e-5,
    # softplus.py picks its implementation by fla.utils' IS_NVIDIA (module
    # level): kilnc reads it from fla/utils.
    srcs=[OP, FLA + "utils/softplus.py", FLA_ROOT + "/fla/utils/__init__.py", FLA_ROOT + "/fla/utils/_device.py"]))

# RWKV-7's fused token-shift addcmul (rwkv7/fused_addcmul.py), in every
# RWKV-7 layer's forward: the six mixes x + delta * mu_{r,w,k,v,a,g} of a
# bf16 [8, 4096, 2048] hidden state (RWKV-7 1.5B, batch 8), one fma each.
# BD = next_power_of_2(D) as the launcher passes it (MANIFEST.tenth's 64 is
# not what it launches); BT from its autotune list ({2, 4, 8} x 2-32 warps x
# 1-3 stages): 8 rows, 8 warps, 1 stage. Grid (B, cdiv(T, BT)).
RB, RT, RD = 8, 4096, 2048
MIX = ", ".join(f"ix{c}=*bf16" for c in "rwkvag") + ", " + ", ".join(f"ox{c}=*bf16" for c in "rwkvag")
CASES.append(fla_case(
    "fla_rwkv7_fused_addcmul_fwd", FLA + "rwkv7/fused_addcmul.py", "fused_addcmul_fwd_kernel",
    f"hidden=*bf16, delta=*bf16, {MIX}, use_xg=True, T=i32, T_OFFSET=i32, BT=8, D={RD}, BD={RD}, "
    "num_warps=8, num_stages=1",
    dict(hidden=("randn", "bfloat16", RB * RT * RD), delta=("randn", "bfloat16", RB * RT * RD),
         **{f"ix{c}": ("uniform", "bfloat16", RD, 0.0, 1.0) for c in "rwkvag"},
         **{f"ox{c}": ("zeros", "bfloat16", RB * RT * RD) for c in "rwkvag"}, T=RT, T_OFFSET=0),
    # One fma each: Triton's a bf16 HFMA2 (one rounding), an fp32 fma
    # rounded to bf16 where a compiler upcasts (two): a bf16 ulp apart at
    # rare ties.
    (RB, cdiv(RT, 8)), [f"ox{c}" for c in "rwkvag"], bytes=2 * 8 * RB * RT * RD + 2 * 6 * RD, tol=1e-2,
    srcs=[]))
