"""Real-world cases: the ninth sample (tests/realworld/MANIFEST.ninth):
MegaBlocks' MoE token permutation, STK's block-sparse matmuls (as MegaBlocks'
dMoE calls them), MInference's sparse prefill attention, OpenAI's TopK
sparse-autoencoder decoder, lion-pytorch's optimizer step, Lightning
Thunder's cross entropy, torchtitan's expert-parallel top-k combine, and
FBGEMM's fp8 row-wise GEMMs and quantizers, MoE grouped GEMM and jagged
(sequence-learning) softmax and flash attention. bench/realworld_cases.py
says what a case is.

Configs are the first autotune config (or the launcher's constants), as
MANIFEST.ninth gives them, and grids as each launcher computes them; sizes
are LLM-sized (Mixtral-8x7B for the MoE kernels, Llama-3-8B for attention,
Llama-2's 32000-word vocabulary, a 4096 x 14336 weight for the optimizer).

Index tensors are built as their producers build them (the routing sort of
MegaBlocks, STK's block-diagonal dMoE topology, MInference's top-k block
index, FBGEMM's jagged offsets), from fixed seeds; the jagged lengths are
drawn in Python (random.Random) so that bytes and FLOPs are exact.

First run (H100, Triton 3.6, cubins of kilnc at c93a81f): all 19 agree
with Triton, 15 of them bitwise.
"""

import math
import random

from realworld_case_rules import SMS, TRL, cached, case, cdiv, fp8_e4m3

CASES = []


# --- MegaBlocks (megablocks/backend/kernels.py) ------------------------------
# Mixtral-8x7B's dMoE: 8192 tokens, hidden 4096, 8 experts, top-2, bf16; the
# routing sort's int32 indices (positions into the token x top-k pairs, in
# expert order) and bin ids (each pair's expert), inclusive bin ends, and bin
# ends padded to 128 rows (ops.round_up(tokens_per_expert, 128) summed).
MB = TRL + "megablocks/megablocks/backend/kernels.py"
MB_PKG = dict(package=TRL + "megablocks")
T, H, E, TOPK = 8192, 4096, 8, 2
MB_ROWS = T * TOPK + E * 128  # the padded buffer's capacity (padded_bins[-1] <= this)


def _megablocks_routing(torch, g, dev):
    ids = torch.rand(T, E, generator=g, device=dev).argsort(dim=1)[:, :TOPK].reshape(-1)
    bin_ids, indices = torch.sort(ids, stable=True)
    counts = torch.bincount(ids, minlength=E)
    padded = (counts + 127) // 128 * 128
    return dict(indices=indices.to(torch.int32), bin_ids=bin_ids.to(torch.int32),
                bins=torch.cumsum(counts, 0).to(torch.int32),
                padded_bins=torch.cumsum(padded, 0).to(torch.int32),
                weights=torch.rand(T * TOPK, generator=g, device=dev).to(torch.bfloat16))


mb = cached(_megablocks_routing)

# padded_gather: each token's row copied to its two experts' padded slots
# (one program a pair, BLOCK_X 64, 2 warps).
CASES.append(case(
    "megablocks_padded_gather_bf16", MB, "_padded_copy",
    "a=*bf16, b=*bf16, indices=*i32, bin_ids=*i32, weights=None, bins=*i32, padded_bins=*i32, "
    f"NUM_COLUMNS={H}, TOP_K={TOPK}, BLOCK_X=64, A_TO_B=True, SCALE=False, num_warps=2",
    dict(a=("randn", "bfloat16", T * H), b=("zeros", "bfloat16", MB_ROWS * H), indices=mb("indices"),
         bin_ids=mb("bin_ids"), bins=mb("bins"), padded_bins=mb("padded_bins")),
    # A pure copy: exact.
    (T * TOPK,), ["b"], bytes=2 * 2 * T * TOPK * H + 8 * T * TOPK, tol=0, **MB_PKG))

# padded_scatter: the experts' padded output rows back to the token x top-k
# pairs, scaled by the router weights (the combine's first step).
CASES.append(case(
    "megablocks_padded_scatter_bf16", MB, "_padded_copy",
    "a=*bf16, b=*bf16, indices=*i32, bin_ids=*i32, weights=*bf16, bins=*i32, padded_bins=*i32, "
    f"NUM_COLUMNS={H}, TOP_K={TOPK}, BLOCK_X=64, A_TO_B=False, SCALE=True, num_warps=2",
    dict(a=("zeros", "bfloat16", T * TOPK * H), b=("randn", "bfloat16", MB_ROWS * H), indices=mb("indices"),
         bin_ids=mb("bin_ids"), weights=mb("weights"), bins=mb("bins"), padded_bins=mb("padded_bins")),
    # One fp32 product of two bf16 values, rounded to bf16: exact.
    (T * TOPK,), ["a"], bytes=2 * 2 * T * TOPK * H + 10 * T * TOPK, tol=0, **MB_PKG))

# --- STK (stk/backend/triton_kernels.py) --------------------------------------
# MegaBlocks' dMoE on STK: the topology is block-diagonal in 128 x 128
# blocks, each expert's rows (tokens x top-2 = 16384, 2048 an expert: 16
# row blocks) against its 14336 / 128 = 112 column blocks of the
# 8 x 14336-wide hidden layer: 128 x 112 = 14336 nonzero blocks. int16 row
# and column indices, int32 row offsets and the transposed block order. The
# single autotune config (128 x 128 x 32, 4 stages, 4 warps), GROUP_M 128.
STK = TRL + "stk/stk/backend/triton_kernels.py"
STK_PKG = dict(package=TRL + "stk")
FFN = 14336
RB, CB = 2 * T // 128 // E, FFN // 128  # row and column blocks an expert
ROWS, COLS = E * RB * 128, E * FFN
NNZ = E * RB * CB


def _stk_topology(torch, g, dev):
    r = torch.arange(E * RB, device=dev)
    rows = r.repeat_interleave(CB)  # row-major: each row block's CB blocks
    cols = (r // RB).repeat_interleave(CB) * CB + torch.arange(CB, device=dev).repeat(E * RB)
    # The transposed order (column-major): block (row, col)'s position in
    # the row-major order, for each column block's RB rows.
    c = torch.arange(E * CB, device=dev)
    t_rows = (c // CB).repeat_interleave(RB) * RB + torch.arange(RB, device=dev).repeat(E * CB)
    t_cols = c.repeat_interleave(RB)
    block_offsets_t = t_rows * CB + (t_cols % CB)
    return dict(row_indices=rows.to(torch.int16), column_indices=cols.to(torch.int16),
                offsets=(torch.arange(E * RB + 1, device=dev) * CB).to(torch.int32),
                block_offsets_t=block_offsets_t.to(torch.int32))


stk = cached(_stk_topology)

# sdd: the first layer x @ w1^T into the sparse blocks (one program a
# block), w1 [8 x 14336, 4096] read transposed (unit k stride).
CASES.append(case(
    "stk_sdd_fp16", STK, "_sdd_kernel",
    "A=*fp16, B=*fp16, C=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, "
    "stride_bn=i32, stride_cm=i32, stride_cn=i32, row_indices=*i16, column_indices=*i16, BLOCK_M=128, "
    "BLOCK_N=128, BLOCK_K=32, BLOCK_SIZE=128, GROUP_M=128, ACC_TYPE=tl.float32, num_warps=4, num_stages=4",
    dict(A=("randn", "float16", ROWS * H), B=("randn", "float16", COLS * H, 0.02),
         C=("zeros", "float16", NNZ * 128 * 128), M=ROWS, N=COLS, K=H, stride_am=H, stride_ak=1,
         stride_bk=1, stride_bn=H, stride_cm=128, stride_cn=1, row_indices=stk("row_indices"),
         column_indices=stk("column_indices")),
    # fp32 sums in another order, fp16 out.
    (NNZ,), ["C"], bytes=2 * (ROWS * H + COLS * H + NNZ * 128 * 128), flops=2 * NNZ * 128 * 128 * H,
    tol=1e-2, **STK_PKG))

# dsd: the second layer h @ w2, h the sparse activations, w2 [8 x 14336,
# 4096] row-major; a program an output tile, over its row's 112 blocks.
CASES.append(case(
    "stk_dsd_fp16", STK, "_dsd_kernel",
    "A=*fp16, B=*fp16, C=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, "
    "stride_bn=i32, stride_cm=i32, stride_cn=i32, row_indices=*i16, column_indices=*i16, offsets=*i32, "
    "block_offsets_t=*i32, trans_A=False, trans_B=False, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, "
    "BLOCK_SIZE=128, GROUP_M=128, ACC_TYPE=tl.float32, num_warps=4, num_stages=4",
    dict(A=("randn", "float16", NNZ * 128 * 128), B=("randn", "float16", COLS * H, 0.02),
         C=("zeros", "float16", ROWS * H), M=ROWS, N=H, K=COLS, stride_am=128, stride_ak=1, stride_bk=H,
         stride_bn=1, stride_cm=H, stride_cn=1, row_indices=stk("row_indices"),
         column_indices=stk("column_indices"), offsets=stk("offsets"), block_offsets_t=stk("block_offsets_t")),
    # fp32 sums in another order, fp16 out.
    (ROWS // 128, H // 128), ["C"], bytes=2 * (NNZ * 128 * 128 + COLS * H + ROWS * H),
    flops=2 * NNZ * 128 * 128 * H, tol=1e-2, **STK_PKG))

# --- MInference (minference/ops) -------------------------------------------------
# Llama-3-8B's 32 heads of 128 (K/V repeated to 32 heads) on a 32704-token
# prompt, padded by the launcher to 32768 (seqlens holds 32704): q, k, v
# [1, 32, 32768, 128] bf16.
MI = TRL + "minference/minference/ops/"
MI_PKG = dict(package=TRL + "minference")
HQ, S, D = 32, 32768, 128
SEQ = S - 64
NROWS = S // 64
QKV = HQ * S * D
ATTN_STRIDES = dict(
    stride_qz=QKV, stride_qh=S * D, stride_qm=D, stride_qk=1, stride_kz=QKV, stride_kh=S * D, stride_kn=D,
    stride_kk=1, stride_vz=QKV, stride_vh=S * D, stride_vn=D, stride_vk=1, stride_oz=QKV, stride_oh=S * D,
    stride_om=D, stride_ok=1)
ATTN_SIG = ("stride_qz=i32, stride_qh=i32, stride_qm=i32, stride_qk=i32, stride_kz=i32, stride_kh=i32, "
            "stride_kn=i32, stride_kk=i32, stride_vz=i32, stride_vh=i32, stride_vn=i32, stride_vk=i32, "
            "stride_oz=i32, stride_oh=i32, stride_om=i32, stride_ok=i32")
# Each row block's blocks: the top 100 of the causal pooled scores
# (_build_block_index: top-k over [0, m] with -inf past the diagonal, sorted),
# here over random scores.
TOPB = 100


def _block_index(torch, g, dev):
    scores = torch.rand(HQ, NROWS, NROWS, generator=g, device=dev)
    ar = torch.arange(NROWS, device=dev)
    scores = scores.masked_fill(ar[None, :, None] < ar[None, None, :], -math.inf)
    index = torch.topk(scores, TOPB, dim=-1).indices.to(torch.int32).sort(dim=-1).values
    return dict(index=index.reshape(-1))


blocks = sum(min(m + 1, TOPB) for m in range(cdiv(SEQ, 64)))  # the programs past seqlen return
CASES.append(case(
    "minference_block_sparse_attn_bf16", MI + "block_sparse_flash_attention.py",
    "_triton_block_sparse_attn_fwd_kernel",
    "Q=*bf16, K=*bf16, V=*bf16, seqlens=*i32, sm_scale=fp32, block_index=*i32, Out=*bf16, "
    f"{ATTN_SIG}, Z=i32, H=i32, N_CTX=i32, NUM_ROWS=i32, MAX_BLOCKS_PRE_ROW=i32, BLOCK_M=64, BLOCK_N=64, "
    f"BLOCK_DMODEL={D}, dtype=tl.bfloat16, num_warps=4, num_stages=2",
    dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
         seqlens=("full", "int32", 1, SEQ), sm_scale=D ** -0.5, block_index=cached(_block_index)("index"),
         Out=("zeros", "bfloat16", QKV), **ATTN_STRIDES, Z=1, H=HQ, N_CTX=S, NUM_ROWS=NROWS,
         MAX_BLOCKS_PRE_ROW=TOPB),
    # exp2 and the row sums in another order; bf16 out.
    (NROWS, HQ, 1), ["Out"], bytes=2 * 4 * QKV, flops=HQ * blocks * 4 * 64 * 64 * D, tol=2e-2, **MI_PKG))

# The vertical-slash pattern (pit_sparse_flash_attention_v2, the kernel
# MInference's default "vertical_and_slash" heads run), bf16 as Llama-3
# runs it: per row block, up to 32 slash blocks (64-wide key ranges: the
# diagonal block and earlier ones, block-aligned here) and up to 1024
# vertical key columns before the row block, as convert_vertical_slash_indexes
# lays them out (int32 counts [1, 32, 512], offsets [.., 32], columns
# [.., 1024]; entries past a count are never read).
NNZ_S, NNZ_V = 32, 1024


def _vertical_slash(torch, g, dev):
    m = torch.arange(NROWS, device=dev)
    nblk = torch.clamp(m + 1, max=NNZ_S).repeat(HQ)  # [HQ * NROWS]
    # Slash blocks: the diagonal block and a random sorted choice of the
    # earlier ones (the top NNZ_S of random scores, -1 past the diagonal).
    scores = torch.rand(HQ, NROWS, NROWS, generator=g, device=dev)
    scores = scores.masked_fill(m[None, :, None] < m[None, None, :], -1.0)
    scores[:, m, m] = 2.0
    slash = torch.topk(scores, NNZ_S, dim=-1).indices.sort(dim=-1).values * 64
    # Vertical columns: distinct and sorted in [0, 64 m), one in each of
    # NNZ_V equal bins (every column when there are fewer).
    ncol = torch.clamp(m * 64, max=NNZ_V)
    j = torch.arange(NNZ_V, device=dev)
    r = torch.rand(HQ, NROWS, NNZ_V, generator=g, device=dev)
    lo = (j[None, :] * m[:, None] * 64) // NNZ_V  # [NROWS, NNZ_V]: bin starts
    hi = ((j[None, :] + 1) * m[:, None] * 64) // NNZ_V
    cols = lo[None] + (r * (hi - lo)[None]).floor().long()
    cols = torch.where((m * 64 < NNZ_V)[None, :, None], j.expand_as(cols), cols)
    return dict(block_count=nblk.to(torch.int32), block_offset=slash.to(torch.int32).reshape(-1),
                column_count=ncol.repeat(HQ).to(torch.int32), column_index=cols.to(torch.int32).reshape(-1))


vs = cached(_vertical_slash)
vs_blocks = HQ * sum(min(m + 1, NNZ_S) + cdiv(min(m * 64, NNZ_V), 64) for m in range(cdiv(SEQ, 64)))
CASES.append(case(
    "minference_vertical_slash_attn_bf16", MI + "pit_sparse_flash_attention_v2.py",
    "_triton_mixed_sparse_attn_fwd_kernel",
    "Q=*bf16, K=*bf16, V=*bf16, seqlens=*i32, sm_scale=fp32, block_count=*i32, block_offset=*i32, "
    f"column_count=*i32, column_index=*i32, Out=*bf16, {ATTN_SIG}, Z=i32, H=i32, N_CTX=i32, NUM_ROWS=i32, "
    f"NNZ_S=i32, NNZ_V=i32, BLOCK_M=64, BLOCK_N=64, BLOCK_DMODEL={D}, dtype=tl.bfloat16, num_warps=4, "
    "num_stages=2",
    dict(Q=("randn", "bfloat16", QKV), K=("randn", "bfloat16", QKV), V=("randn", "bfloat16", QKV),
         seqlens=("full", "int32", 1, SEQ), sm_scale=D ** -0.5, block_count=vs("block_count"),
         block_offset=vs("block_offset"), column_count=vs("column_count"), column_index=vs("column_index"),
         Out=("zeros", "bfloat16", QKV), **ATTN_STRIDES, Z=1, H=HQ, N_CTX=S, NUM_ROWS=NROWS, NNZ_S=NNZ_S,
         NNZ_V=NNZ_V),
    # exp2 and the row sums in another order; bf16 out.
    (NROWS, HQ, 1), ["Out"], bytes=2 * 4 * QKV, flops=vs_blocks * 4 * 64 * 64 * D, tol=2e-2,
    # Its host code imports the CUDA index builder, absent here.
    stubs={"minference.cuda": dict(convert_vertical_slash_indexes=None)}, **MI_PKG))

# --- sparse_autoencoder (sparse_autoencoder/kernels.py) ---------------------------
# The GPT-2-small TopK SAE (d_model 768, 32768 latents, k 32) decoding a
# 4096-token batch: latents @ W_dec as sparse @ dense, one program a token,
# its 32 decoder rows gathered (int64 top-k indices, positive fp32 values).
# Bytes: the gathered rows (each read from L2 or DRAM), the indices and
# values, and the output.
A_, NL, DM, KK = 4096, 32768, 768, 32
CASES.append(case(
    "sae_sparse_dense_matmul_fp32", TRL + "sparse_autoencoder/sparse_autoencoder/kernels.py",
    "triton_sparse_dense_matmul_kernel",
    "sparse_indices_ptr=*i64, sparse_values_ptr=*fp32, dense_ptr=*fp32, out_ptr=*fp32, stride_dn=i32, "
    "stride_db=i32, A=i32, B=i32, N=i32, K=i32, BLOCK_SIZE_K=32, BLOCK_SIZE_B=1024",
    dict(sparse_indices_ptr=("index", "int64", A_ * KK, NL),
         sparse_values_ptr=("uniform", "float32", A_ * KK, 0.0, 2.0),
         dense_ptr=("randn", "float32", NL * DM, 0.05), out_ptr=("zeros", "float32", A_ * DM), stride_dn=DM,
         stride_db=1, A=A_, B=DM, N=NL, K=KK),
    # v * row accumulated in the same order; a*b+c an FMA or not.
    (A_,), ["out_ptr"], bytes=4 * A_ * KK * DM + 12 * A_ * KK + 4 * A_ * DM, tol=1e-5,
    package=TRL + "sparse_autoencoder"))

# --- lion-pytorch (lion_pytorch/triton.py) --------------------------------------
# One Lion step on a 4096 x 14336 weight, in place on p and exp_avg; the
# first autotune config (BLOCK_SIZE 128, 4 warps); lr 1e-4, wd 1e-2, betas
# 0.9/0.99.
NP = 4096 * 14336
for dtype, t, size, tol in (("float32", "fp32", 4, 1e-5), ("bfloat16", "bf16", 2, 1e-2)):
    CASES.append(case(
        f"lion_update_{t}", TRL + "lion/lion_pytorch/triton.py", "update_fn_kernel",
        f"p_ptr=*{t}, grad_ptr=*{t}, exp_avg_ptr=*{t}, lr=fp32, wd=fp32, beta1=fp32, beta2=fp32, "
        "n_elements=i32, BLOCK_SIZE=128, num_warps=4",
        dict(p_ptr=("randn", dtype, NP, 0.02), grad_ptr=("randn", dtype, NP, 1e-3),
             exp_avg_ptr=("randn", dtype, NP, 1e-3), lr=1e-4, wd=1e-2, beta1=0.9, beta2=0.99, n_elements=NP),
        # p * (1 - lr * wd) + sign and diff * beta + grad: FMA contraction
        # or not (a sign only flips at an update of 0).
        (cdiv(NP, 128),), ["p_ptr", "exp_avg_ptr"], bytes=5 * size * NP, tol=tol,
        package=TRL + "lion"))

# --- Lightning Thunder (thunder/executors/triton_crossentropy_impl.py) -------------
# Cross entropy over Llama-2's 32000-word vocabulary for 4096 tokens
# (log_size_logits int(log(4096)) = 8), ignore_index -100, no weights or
# smoothing: the forward (bf16 logits, int64 targets, the fp32 negative
# log-probabilities kept for the backward, bf16 per-token loss) and the
# backward (mean reduction: the scalar gradient expanded, stride 0) writing
# fp32 logit gradients. The first autotune config: BLOCK 1024, 1 warp, 1 stage.
# The module registers itself with Thunder's executor registry at import:
# stand-ins for the parts it calls.


class _Executor:
    def __init__(self, *args, **kwargs):
        pass

    def register_operator(self, *args, **kwargs):
        return None

    def register_implementation(self, *args, **kwargs):
        return None


THUNDER_STUBS = {
    "thunder.extend": dict(OperatorExecutor=_Executor, register_executor=lambda executor: None),
    "thunder.executors.triton_utils": dict(triton_version=lambda: "3.6.0",
                                           is_triton_version_at_least=lambda version: True),
    "thunder.torch": dict(cross_entropy=None),
}
THUNDER = TRL + "thunder/thunder/executors/triton_crossentropy_impl.py"
R, V = 4096, 32000
CASES.append(case(
    "thunder_cross_entropy_fwd_bf16", THUNDER, "_forward",
    "LOGITS=*bf16, PROBS=*fp32, IDX=*i64, LOSS=*bf16, weight=None, N=i32, WEIGHT_BUFFER=*fp32, "
    "smoothing_factor=fp32, log_size_logits=i32, WEIGHTS=False, CLASS_INDICES=True, LABEL_SMOOTHING=False, "
    "IGNORE_INDEX=-100, BUFFER_DTYPE=tl.float32, BLOCK=1024, num_warps=1, num_stages=1",
    dict(LOGITS=("randn", "bfloat16", R * V, 2.0), PROBS=("zeros", "float32", R * V), IDX=("index", "int64", R, V),
         LOSS=("zeros", "bfloat16", R), N=V, WEIGHT_BUFFER=("zeros", "float32", R), smoothing_factor=0.0,
         log_size_logits=8),
    # exp and log (approximate in both) and the running sums in another
    # order; the loss rounded to bf16.
    (R,), ["PROBS", "LOSS"], bytes=2 * 2 * R * V + 4 * R * V + 10 * R, tol=1e-2,
    package=TRL + "thunder", stubs=THUNDER_STUBS))
CASES.append(case(
    "thunder_cross_entropy_bwd_fp32", THUNDER, "_backward",
    "PROBS=*fp32, IDX=*i64, DPROBS=*bf16, dprob_stride=i32, DIN=*fp32, weight=None, N=i32, "
    "WEIGHT_BUFFER=*fp32, smoothing_factor=fp32, log_size_logits=i32, WEIGHTS=False, CLASS_INDICES=True, "
    "LABEL_SMOOTHING=False, IGNORE_INDEX=-100, BUFFER_DTYPE=tl.float32, BLOCK=1024, num_warps=1, num_stages=1",
    # -log p of a softmax over 32000 words: about log(32000) = 10.4.
    dict(PROBS=("uniform", "float32", R * V, 7.0, 14.0), IDX=("index", "int64", R, V),
         DPROBS=("full", "bfloat16", 1, 1.0 / R), dprob_stride=0, DIN=("zeros", "float32", R * V), N=V,
         WEIGHT_BUFFER=("zeros", "float32", R), smoothing_factor=0.0, log_size_logits=8),
    # exp approximate in both (ex2.approx of a scaled argument).
    (R, cdiv(V, 1024)), ["DIN"], bytes=2 * 4 * R * V + 8 * R, tol=1e-5,
    package=TRL + "thunder", stubs=THUNDER_STUBS))

# --- torchtitan (distributed/minimal_async_ep/kernels.py) -------------------------
# The expert-parallel combine of DeepSeek-V3-16B (hidden 2048, top-6) for
# 8192 tokens on a rank: the 49152 routed rows (bf16, expert-sorted) summed
# back into each token's row, scaled by the router scores (fp32, in routed
# row order), through the int64 slot -> routed row table (a permutation);
# BLOCK_N 2048, 8 warps.
TT_T, TT_K, TT_D = 8192, 6, 2048
CASES.append(case(
    "torchtitan_reduce_topk_slots_bf16", TRL + "torchtitan/torchtitan/distributed/minimal_async_ep/kernels.py",
    "_reduce_topk_slots_kernel",
    "routed_output=*bf16, slot_to_row=*i64, scores=*fp32, out=*bf16, NUM_COLS=2048, TOP_K=6, HAS_SCORES=True, "
    "SCORES_ARE_SLOT_ORDERED=False, ROUTED_ROW_STRIDE=2048, ROUTED_COL_STRIDE=1, OUT_ROW_STRIDE=2048, "
    "OUT_COL_STRIDE=1, BLOCK_N=2048, num_warps=8",
    dict(routed_output=("randn", "bfloat16", TT_T * TT_K * TT_D), slot_to_row=("perm", "int64", TT_T * TT_K),
         scores=("uniform", "float32", TT_T * TT_K, 0.0, 1.0), out=("zeros", "bfloat16", TT_T * TT_D)),
    # Six fp32 products summed in the same order (FMA contraction or not);
    # bf16 out.
    (TT_T, 1), ["out"], bytes=2 * TT_T * TT_K * TT_D + 2 * TT_T * TT_D + 12 * TT_T * TT_K, tol=1e-2,
    package=TRL + "torchtitan"))

# --- FBGEMM ---------------------------------------------------------------------------
# fbgemm_gpu.experimental.gemm.triton_gemm, imported as a package from
# tests/realworld/fbgemm (its helpers matmul_perf_model.py and utils.py
# beside it); sll imported as the package sll from fbgemm_gpu/fbgemm_gpu
# (not as fbgemm_gpu, whose name the GEMM package holds).
FB_PKG = dict(package=TRL + "fbgemm")
FP8 = TRL + "fbgemm/fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py"
GG = TRL + "fbgemm/fbgemm_gpu/experimental/gemm/triton_gemm/grouped_gemm.py"
SLL = TRL + "fbgemm/fbgemm_gpu/fbgemm_gpu/sll/triton/"
SLL_PKG = dict(package=TRL + "fbgemm/fbgemm_gpu/fbgemm_gpu")

# fp8 row-wise GEMM C = A @ B^T (matmul_fp8_row), M 4096, N = K = 8192,
# e4m3 operands with fp32 row scales, bf16 out; m_key 256 + M // 1024; the
# first MATMUL_CONFIGS config (128 x 256 x 32, 3 stages, 8 warps), GROUP_M 8,
# persistent over the 132 SMs. fp8_fast_accum (the default): the
# persistent kernel; without it, the no-fast-accumulation one, here with an
# fp32 bias (EVEN_K from its heuristic).
M, N, K = 4096, 8192, 8192
GEMM_ARGS = dict(
    A_ptr=fp8_e4m3(M * K, 112), B_ptr=fp8_e4m3(N * K, 100), C_ptr=("zeros", "bfloat16", M * N), M=M, N=N, K=K,
    m_key=256 + M // 1024, n_key=N, k_key=K, A_scale=("uniform", "float32", M, 0.008, 0.01),
    B_scale=("uniform", "float32", N, 1.8e-4, 2.2e-4), stride_am=K, stride_ak=1, stride_bn=K, stride_bk=1,
    stride_cm=N, stride_cn=1)
GEMM_SIG = ("A_ptr=*fp8e4nv, B_ptr=*fp8e4nv, C_ptr=*bf16, M=i32, N=i32, K=i32, m_key=i32, n_key=i32, k_key=i32, "
            "A_scale=*fp32, B_scale=*fp32, Bias={bias}, stride_am=i32, stride_ak=i32, stride_bn=i32, stride_bk=i32, "
            "stride_cm=i32, stride_cn=i32, dot_out_dtype=tl.float32, allow_tf32=True, ")
GRID = (min(SMS, cdiv(M, 128) * cdiv(N, 256)),)
CASES.append(case(
    "fbgemm_fp8_row_gemm", FP8, "_kernel_matmul_fp8_row",
    GEMM_SIG.format(bias="None") + "fp8_fast_accum=True, skip_scaling_a=False, BLOCK_M=128, BLOCK_N=256, "
    f"BLOCK_K=32, GROUP_M=8, SPLIT_K=1, USE_BIAS=False, AB_DTYPE=False, NUM_SMS={SMS}, num_warps=8, num_stages=3",
    GEMM_ARGS,
    # fp32 sums in another order, two scale products: a bf16 rounding apart.
    GRID, ["C_ptr"], bytes=M * K + N * K + 2 * M * N + 4 * (M + N), flops=2 * M * N * K, tol=1e-2, **FB_PKG))
CASES.append(case(
    "fbgemm_fp8_row_gemm_no_fast_acc_bias", FP8, "_kernel_matmul_fp8_row_no_fast_acc",
    GEMM_SIG.format(bias="*fp32") + "fp8_fast_accum=False, BLOCK_M=128, BLOCK_N=256, BLOCK_K=32, GROUP_M=8, "
    f"SPLIT_K=1, EVEN_K=True, USE_BIAS=True, AB_DTYPE=False, NUM_SMS={SMS}, num_warps=8, num_stages=3",
    dict(GEMM_ARGS, Bias=("randn", "float32", N)),
    # As above, plus the bias.
    GRID, ["C_ptr"], bytes=M * K + N * K + 2 * M * N + 4 * (M + 2 * N), flops=2 * M * N * K, tol=1e-2,
    **FB_PKG))

# The same GEMM in its tiled (not persistent) form with fast accumulation
# bounded: `tl.dot(a, b, acc, max_num_imprecise_acc=32)` over BLOCK_K = 128
# (the first autotune config, 128 x 256 x 128, 8 warps, 3 stages), partial
# sums of 32 of K added to the fp32 accumulator, as Triton does.
CASES.append(case(
    "fbgemm_fp8_row_gemm_imprecise_acc", FP8, "_kernel_matmul_fp8_row_imprecise_acc",
    "A=*fp8e4nv, B=*fp8e4nv, C=*bf16, M=i32, N=i32, K=i32, m_key=i32, n_key=i32, k_key=i32, A_scale=*fp32, "
    "B_scale=*fp32, Bias=None, stride_am=i32, stride_ak=i32, stride_bn=i32, stride_bk=i32, stride_cm=i32, "
    "stride_cn=i32, dot_out_dtype=tl.float32, allow_tf32=True, fp8_fast_accum=True, BLOCK_M=128, BLOCK_N=256, "
    "BLOCK_K=128, GROUP_M=8, SPLIT_K=1, EVEN_K=True, USE_BIAS=False, AB_DTYPE=False, num_warps=8, num_stages=3",
    {("A" if k == "A_ptr" else "B" if k == "B_ptr" else "C" if k == "C_ptr" else k): v
     for k, v in GEMM_ARGS.items()},
    # fp32 partial sums in another order, two scale products: a bf16 rounding apart.
    (cdiv(M, 128) * cdiv(N, 256), 1), ["C"], bytes=M * K + N * K + 2 * M * N + 4 * (M + N),
    flops=2 * M * N * K, tol=1e-2, **FB_PKG))

# Row-wise fp8 quantization (quantize_fp8_row) of a bf16 [4096, 8192]
# activation viewed [1, 1, 4096, 8192]: one program a row, max |a| then
# the scaled e4m3 values and the reciprocal scale; the first autotune
# config (BLOCK_SIZE 512, Triton's default 4 warps, 3 stages).
M, K = 4096, 8192
CASES.append(case(
    "fbgemm_quantize_fp8_row_bf16", FP8, "_kernel_quantize_fp8_row",
    "A=*bf16, A_scale=*fp32, A_fp8=*fp8e4nv, scale_ub=None, zero_start_index_M=None, B=i32, M=i32, N=i32, "
    "K=i32, K_fp8=i32, stride_ab=i32, stride_am=i32, stride_an=i32, stride_ak=i32, stride_ob=i32, "
    "stride_om=i32, stride_on=i32, stride_ok=i32, stride_zb=None, stride_zm=None, "
    "TL_FP8_DTYPE=tl.float8e4nv, MAX_FP8=448.0, EPS=1e-12, CLAMP_MAX=False, JAGGED=False, BLOCK_SIZE=512, "
    "USE_INT64=False",
    dict(A=("randn", "bfloat16", M * K), A_scale=("zeros", "float32", M), A_fp8=("zeros", "float8_e4m3fn", M * K),
         B=1, M=1, N=M, K=K, K_fp8=K, stride_ab=M * K, stride_am=M * K, stride_an=K, stride_ak=1,
         stride_ob=M * K, stride_om=M * K, stride_on=K, stride_ok=1),
    # A maximum, one division and products rounded to e4m3: exact.
    (M,), ["A_fp8", "A_scale"], bytes=2 * M * K + M * K + 4 * M, tol=0, **FB_PKG))

# Group-wise fp8 quantization (quantize_fp8_group: groups of 128 along K, K
# major scales [M, K / 128]) of a bf16 [8192, 4096] activation, the first
# autotune config (GROUP_LOAD 2: 256 values a step).
M, K = 8192, 4096
CASES.append(case(
    "fbgemm_quantize_fp8_group_bf16", FP8, "_kernel_quantize_fp8_group",
    "A=*bf16, A_scale=*fp32, A_fp8=*fp8e4nv, scale_ub=None, m_sizes=None, M=i32, K=i32, stride_am=i32, "
    "stride_ak=i32, stride_om=i32, stride_ok=i32, stride_a_scale_m=i32, stride_a_scale_k=i32, "
    "TL_FP8_DTYPE=tl.float8e4nv, MAX_FP8=448.0, EPS=1e-12, CLAMP_MAX=False, USE_INT64=False, GROUP_SIZE=128, "
    "USE_M_MAJOR=False, G=0, GROUP_LOAD=2",
    dict(A=("randn", "bfloat16", M * K), A_scale=("zeros", "float32", M * K // 128),
         A_fp8=("zeros", "float8_e4m3fn", M * K), M=M, K=K, stride_am=K, stride_ak=1, stride_om=K, stride_ok=1,
         stride_a_scale_m=K // 128, stride_a_scale_k=1),
    # As the row-wise one: exact.
    (M,), ["A_fp8", "A_scale"], bytes=2 * M * K + M * K + 4 * M * K // 128, tol=0, **FB_PKG))

# The MoE grouped GEMM (grouped_gemm, not warp-specialized: Triton 3.6 has
# no tl.async_task) of Llama-4-Scout's 16 experts: 8192 routed tokens x 5120
# against each expert's [8192, 5120] weight (w [16 x 8192, 5120], bf16),
# int32 tokens an expert (a random split), M_BUCKET 8192; TMA loads through
# device-side descriptors (USE_TMA_LOAD, as Triton 3.6's make_tensor_descriptor
# makes the launcher pick), no TMA store; 132 programs, persistent. Its
# early_config_prune at M_BUCKET 8192 drops the 64-row and 64-column
# _NV_CONFIGS tiles (M / G = 512 tokens an expert, M x N tiles > 2 x 132):
# the first left is 128 x 128 x 64, 3 stages, 4 warps.
G_, M, N, K = 16, 8192, 8192, 5120


def _m_sizes(torch, g, dev):
    cuts = torch.sort(torch.randperm(M - 1, generator=g, device=dev)[:G_ - 1] + 1).values
    edges = torch.cat([torch.zeros(1, dtype=cuts.dtype, device=dev), cuts,
                       torch.full((1,), M, dtype=cuts.dtype, device=dev)])
    return dict(m_sizes=(edges[1:] - edges[:-1]).to(torch.int32))


CASES.append(case(
    "fbgemm_grouped_gemm_bf16", GG, "_fbgemm_grouped_gemm",
    "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, scatter_add_indices=None, m_sizes=*i32, G=16, M_BUCKET=i32, "
    f"N={N}, K={K}, NUM_SMS={SMS}, FUSE_SCATTER_ADD=False, USE_TMA_LOAD=True, USE_TMA_STORE=False, "
    "USE_FAST_ACCUM=True, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, NUM_CONSUMER_GROUPS=1, "
    "num_warps=4, num_stages=3",
    dict(a_ptr=("randn", "bfloat16", M * K), b_ptr=("randn", "bfloat16", G_ * N * K, 0.02),
         c_ptr=("zeros", "bfloat16", M * N), m_sizes=cached(_m_sizes)("m_sizes"), M_BUCKET=M),
    # fp32 sums in another order; bf16 out.
    (SMS,), ["c_ptr"], bytes=2 * (M * K + G_ * N * K + M * N), flops=2 * M * N * K, tol=1e-2, **FB_PKG))

# sll's jagged softmax over [sum_B, 4 heads] fp32: 16384 sequences of 1 to
# 512 tokens (int64 offsets), one program a (sequence, head), BLOCK_SIZE
# 512 (max_seq_len 512); row stride 4, so each program reads a column.
rng = random.Random(9)
LENS = [rng.randint(1, 512) for _ in range(16384)]
SUM_B, HS = sum(LENS), 4


def _offsets(lens):
    def make(torch, gen):
        return torch.cumsum(torch.tensor([0] + lens, dtype=torch.int64), 0).to(gen.device)
    return make


CASES.append(case(
    "fbgemm_jagged_softmax_fp32", SLL + "triton_jagged_softmax.py", "jagged_softmax_kernel",
    "input_ptr=*fp32, output_ptr=*fp32, input_offsets_ptr=*i64, input_row_stride=i32, input_head_stride=i32, "
    "output_row_stride=i32, output_head_stride=i32, max_seq_len=512, BLOCK_SIZE=512",
    dict(input_ptr=("randn", "float32", SUM_B * HS), output_ptr=("zeros", "float32", SUM_B * HS),
         input_offsets_ptr=_offsets(LENS), input_row_stride=HS, input_head_stride=1, output_row_stride=HS,
         output_head_stride=1),
    # exp and the division (approximate in both), the sum in another order.
    (len(LENS), HS), ["output_ptr"], bytes=2 * 4 * SUM_B * HS + 8 * (len(LENS) + 1), tol=1e-5, **SLL_PKG))

# sll's basic jagged flash attention forward, fp32 with TF32 dots: 512
# sequences of 1 to 512 tokens, head dim 128, K stored transposed [128,
# sum_B]; 32 x 32 x 32 blocks (the launcher's), grid (max_seq_len / 32, B),
# no mask.
rng = random.Random(10)
LENS = [rng.randint(1, 512) for _ in range(512)]
SUM_B, D = sum(LENS), 128
JFLOPS = sum(cdiv(n, 32) ** 2 * 4 * 32 * 32 * D for n in LENS)
CASES.append(case(
    "fbgemm_jagged_flash_attn_fp32", SLL + "triton_jagged_flash_attention_basic.py",
    "jagged_flash_attention_basic_kernel",
    "q_ptr=*fp32, k_ptr=*fp32, v_ptr=*fp32, offset_ptr=*i64, o_ptr=*fp32, lse_i_ptr=*fp32, stride_qm=i32, "
    "stride_qd=i32, stride_kd=i32, stride_kn=i32, stride_vn=i32, stride_vd=i32, stride_om=i32, stride_od=i32, "
    f"max_seq_len=i32, D={D}, NEXT_D={D}, use_mask=False, allow_tf32=True, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, "
    "BLOCK_SIZE_D=32",
    dict(q_ptr=("randn", "float32", SUM_B * D, 0.3), k_ptr=("randn", "float32", D * SUM_B, 0.3),
         v_ptr=("randn", "float32", SUM_B * D), offset_ptr=_offsets(LENS), o_ptr=("zeros", "float32", SUM_B * D),
         lse_i_ptr=("zeros", "float32", SUM_B), stride_qm=D, stride_qd=1, stride_kd=SUM_B, stride_kn=1,
         stride_vn=D, stride_vd=1, stride_om=D, stride_od=1, max_seq_len=512),
    # TF32 products (the same rounding of the operands), fp32 sums and
    # exp in another order.
    (512 // 32, len(LENS)), ["o_ptr", "lse_i_ptr"], bytes=4 * 4 * SUM_B * D + 4 * SUM_B, flops=JFLOPS,
    tol=1e-2, **SLL_PKG))
