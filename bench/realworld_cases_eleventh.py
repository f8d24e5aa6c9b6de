"""Real-world cases: the eleventh sample (tests/realworld/MANIFEST.eleventh):
upstream Triton's own kernel library (triton_kernels: the MoE matmul dense
and on gpt-oss-20b's ragged expert rows, its SwiGLU, the MoE top-k combine
reduction, MXFP4 and MXFP8 quantization), Lightning Attention-2's
block-parallel forward (the intra-block decayed attention and the per-block
kv state), its simple RMS norm, and fla-org's native sparse attention
(selected-block attention forward). bench/realworld_cases.py says what a case
is.

Configs are the launchers' constants (triton_kernels' opt_flags worked
through for an H100, as MANIFEST.eleventh says) or the first autotune
config; grids as each launcher computes them; sizes LLM-sized (gpt-oss-20b's
MoE: 32 experts, top-4, d_model 2880; 8192 tokens; MiniMax-01's 64 heads of
128 over 4096 tokens; NSA over 2 x 4096 tokens of 64 query heads).

Signatures are written without alignment hints (realworld_cubins.py --list
adds the ones Triton's JIT specializes on).
"""

import os

from realworld_case_rules import SMS, TRL, cached, case, cdiv

CASES = []


# --- triton_kernels (upstream Triton's python/triton_kernels) -----------------------------
# Imported as the package `triton_kernels` from tests/realworld/triton_kernels;
# kilnc gets the whole package as --src (its kernels import helpers from
# across it).
TK_ROOT = TRL + "triton_kernels"
TK = TK_ROOT + "/triton_kernels/"
TK_SRCS = sorted(os.path.relpath(os.path.join(d, f), os.path.join(os.path.dirname(__file__), ".."))
                 for d, _, files in os.walk(os.path.join(os.path.dirname(__file__), "..", TK))
                 for f in files if f.endswith(".py"))
TK_PKG = dict(package=TK_ROOT, srcs=TK_SRCS)


def matmul_sig(**values):
    """_matmul's signature: every parameter in order, None unless given (the
    launcher's None arguments for what a case does not use)."""
    names = (
        "Y YPtr stride_y_k stride_y_z stride_y_m stride_y_n YExpectedScale YActualScale YChecksumScale "
        "stride_y_mx_k stride_y_mx_z stride_y_mx_m stride_y_mx_n X XPtr stride_x_z stride_x_m stride_x_k "
        "X_TRANSPOSE XScale XMxScale stride_x_mx_z stride_x_mx_m stride_x_mx_k W WPtr stride_w_e stride_w_k "
        "stride_w_n W_TRANSPOSE WScale WMxScale stride_w_mx_e stride_w_mx_k stride_w_mx_n OutAcc stride_acc_z "
        "stride_acc_m stride_acc_n OutAccScale Y_ACC_IS_Y B stride_b_e M N K K_W Betas Gammas GatherIndx "
        "WriteBackIndx writeback_size RAGGED_DIMENSION XSliceSizes XSliceOffs XBlockOffs XBlockSchedule "
        "X_EXPECTED_SLICE_SIZE X_SLICE_SIZES_DIVISIBILITY WSliceSizes WSliceOffs WBlockOffs WBlockSchedule "
        "W_EXPECTED_SLICE_SIZE _W_SLICE_SIZES_DIVISIBILITY batch_size grid_m grid_n out_alpha ACTIVATION_FN "
        "activation_fn_args ACTIVATION_REDUCTION_N EPILOGUE_FN epilogue_fn_args N_EXPTS_TOT "
        "MAX_NUM_IMPRECISE_ACC ALLOW_TF32 FLEXPOINT_SATURATE_INF PER_BATCH_W_SCALE PER_BATCH_OUT_SCALE "
        "PER_BATCH_ACC_SCALE BLOCK_M BLOCK_N BLOCK_K GROUP_M XCD_SWIZZLE SWIZZLE_MX_VALUE SWIZZLE_MX_SCALE "
        "EPILOGUE_SUBTILE EVEN_K SPLIT_K W_CACHE_MODIFIER NUM_SMS X_TMA_MODE Y_TMA_MODE "
        "TOKENS_PER_EXPT_FOR_ANNOTATION UPCAST_INDICES SWAP_XW IS_EPILOGUE_QUANT_MXFP8 pYPtrs ScatterShardIndx "
        "reduce_rank n_reduce_shards").split()
    defaults = dict(X_TRANSPOSE=False, W_TRANSPOSE=False, ACTIVATION_REDUCTION_N=1, ALLOW_TF32=True,
                    FLEXPOINT_SATURATE_INF=False, PER_BATCH_W_SCALE=False, PER_BATCH_OUT_SCALE=False,
                    PER_BATCH_ACC_SCALE=False, GROUP_M=8, XCD_SWIZZLE=1, EPILOGUE_SUBTILE=1, SPLIT_K=1, NUM_SMS=0,
                    UPCAST_INDICES=False, SWAP_XW=False, IS_EPILOGUE_QUANT_MXFP8=False, reduce_rank="i32",
                    n_reduce_shards=1)
    defaults.update(values)
    options = [f"{k}={defaults.pop(k)}" for k in ("num_warps", "num_stages") if k in defaults]
    assert set(defaults) <= set(names), set(defaults) - set(names)
    return ", ".join([f"{n}={defaults.get(n, 'None')}" for n in names] + options)


# The MoE matmul's non-persistent kernel on a dense bf16 1024 x 4096 x 4096
# GEMM (x @ w, w K x N row-major): 1024 rows give 128 tiles on 132 SMs, so
# opt_flags picks it (not the persistent one): 128 x 256 x 64, 4 stages, 8
# warps, GROUP_M 8, no split-K. The weight and output canonicalized to 3-D
# (batch stride 0). N_EXPTS_TOT is what the launcher passes for a 2-D weight
# (its first dimension, K). Grid: the tiles.
M, N, K = 1024, 4096, 4096
CASES.append(case(
    "tk_matmul_bf16_1024x4096x4096", TK + "matmul_details/_matmul.py", "_matmul",
    matmul_sig(Y="*bf16", YPtr="*bf16", stride_y_k="i32", stride_y_z="i32", stride_y_m="i32", stride_y_n="i32",
               X="*bf16", XPtr="*bf16", stride_x_z="i32", stride_x_m="i32", stride_x_k="i32", W="*bf16",
               WPtr="*bf16", stride_w_e="i32", stride_w_k="i32", stride_w_n="i32", M="i32", N="i32", K="i32",
               K_W="i32", batch_size="i32", grid_m="i32", grid_n="i32", N_EXPTS_TOT=K, BLOCK_M=128, BLOCK_N=256,
               BLOCK_K=64, EVEN_K=True, num_warps=8, num_stages=4),
    dict(Y=("zeros", "bfloat16", M * N), YPtr=("zeros", "bfloat16", 1), stride_y_k=M * N, stride_y_z=M * N,
         stride_y_m=N, stride_y_n=1, X=("randn", "bfloat16", M * K), XPtr=("zeros", "bfloat16", 1),
         stride_x_z=0, stride_x_m=K, stride_x_k=1, W=("randn", "bfloat16", K * N, 0.02),
         WPtr=("zeros", "bfloat16", 1), stride_w_e=0, stride_w_k=N, stride_w_n=1, M=M, N=N, K=K, K_W=K,
         batch_size=1, grid_m=cdiv(M, 128), grid_n=cdiv(N, 256), reduce_rank=0),
    # fp32 sums of 4096 products in another order; bf16 out.
    (cdiv(M, 128) * cdiv(N, 256),), ["Y"], bytes=2 * (M * K + K * N + M * N), flops=2 * M * N * K, tol=1e-2,
    **TK_PKG))


# gpt-oss-20b's MoE down projection on ragged M: 1024 tokens, each routed to
# 4 distinct random experts of 32 (4096 expert rows, sorted by expert), bf16
# activations [4096, 2880] in expert order times each expert's bf16 [2880,
# 2880] weight, scaled by the row's gate weight and scattered to the row's
# (token, choice) slot (WriteBackIndx, a permutation: no two rows collide).
# The ragged metadata as make_ragged_tensor_metadata builds it for BLOCK_M
# 128: slice sizes and offsets, block offsets (the total blocks last), the
# block schedule ((block in slice) << 16 | slice, -1 past the last block),
# grid_m the launcher's bound n_blocks(32, 4096, 128) = 63 (programs past the
# real blocks exit). Non-persistent, as on an H100 with an MXFP4 weight's
# Hopper layout (128 x 256 x 64, 4 stages, 8 warps). Grid: grid_m x grid_n.
T, TOPK, E, D = 1024, 4, 32, 2880
ROWS = T * TOPK
GRID_M = E - 1 - ((E - ROWS - 1) // 128)


def _moe_rows(torch, g, dev):
    experts = torch.rand(T, E, generator=g, device=dev).argsort(dim=1)[:, :TOPK].reshape(-1)
    order = torch.argsort(experts, stable=True)
    counts = torch.bincount(experts, minlength=E)
    blocks = (counts + 127) // 128
    zero = torch.zeros(1, dtype=torch.int64, device=dev)
    slice_offs = torch.cat([zero, torch.cumsum(counts, 0)])
    block_offs = torch.cat([zero, torch.cumsum(blocks, 0)])
    schedule = torch.full((GRID_M,), -1, dtype=torch.int64, device=dev)
    slice_of_block = torch.repeat_interleave(torch.arange(E, device=dev), blocks)
    block_in_slice = torch.arange(slice_of_block.numel(), device=dev) - block_offs[slice_of_block]
    schedule[:slice_of_block.numel()] = (block_in_slice << 16) | slice_of_block
    return dict(sizes=counts.to(torch.int32), offs=slice_offs.to(torch.int32), block_offs=block_offs.to(torch.int32),
                schedule=schedule.to(torch.int32), writeback=order.to(torch.int32),
                gammas=torch.rand(ROWS, generator=g, device=dev).to(torch.bfloat16))


moe = cached(_moe_rows)
CASES.append(case(
    "tk_matmul_moe_down_gpt_oss_20b", TK + "matmul_details/_matmul.py", "_matmul",
    matmul_sig(Y="*bf16", YPtr="*bf16", stride_y_k="i32", stride_y_z="i32", stride_y_m="i32", stride_y_n="i32",
               X="*bf16", XPtr="*bf16", stride_x_z="i32", stride_x_m="i32", stride_x_k="i32", W="*bf16",
               WPtr="*bf16", stride_w_e="i32", stride_w_k="i32", stride_w_n="i32", N="i32", K="i32", K_W="i32",
               Gammas="*bf16", WriteBackIndx="*i32", writeback_size="i32", RAGGED_DIMENSION="'M'",
               XSliceSizes="*i32", XSliceOffs="*i32", XBlockOffs="*i32", XBlockSchedule="*i32",
               X_SLICE_SIZES_DIVISIBILITY=1, batch_size="i32", grid_m="i32", grid_n="i32", N_EXPTS_TOT=E,
               BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, EVEN_K=False, num_warps=8, num_stages=4),
    dict(Y=("zeros", "bfloat16", ROWS * D), YPtr=("zeros", "bfloat16", 1), stride_y_k=ROWS * D,
         stride_y_z=ROWS * D, stride_y_m=D, stride_y_n=1, X=("randn", "bfloat16", ROWS * D),
         XPtr=("zeros", "bfloat16", 1), stride_x_z=0, stride_x_m=D, stride_x_k=1,
         W=("randn", "bfloat16", E * D * D, 0.02), WPtr=("zeros", "bfloat16", 1), stride_w_e=D * D, stride_w_k=D,
         stride_w_n=1, N=D, K=D, K_W=D, Gammas=moe("gammas"), WriteBackIndx=moe("writeback"), writeback_size=ROWS,
         XSliceSizes=moe("sizes"), XSliceOffs=moe("offs"), XBlockOffs=moe("block_offs"),
         XBlockSchedule=moe("schedule"), batch_size=1, grid_m=GRID_M, grid_n=cdiv(D, 256), reduce_rank=0),
    # fp32 sums of 2880 products in another order, times a bf16 gate; bf16
    # out.
    (GRID_M * cdiv(D, 256),), ["Y"], bytes=2 * (ROWS * D + E * D * D + ROWS * D) + 4 * ROWS,
    flops=2 * ROWS * D * D, tol=1e-2, **TK_PKG))

# SwiGLU as gpt-oss runs it between the expert GEMMs (no routing data):
# bf16 [8192, 5760] of interleaved gate/linear pairs to bf16 [8192, 2880],
# alpha 1.702, limit 7.0 (both clamps), BLOCK_M 32 // 2, BLOCK_N 128 (2880 is
# not a multiple: EVEN_N False), 4 warps; 512 x 23 tiles >= 8 x 132, so the
# grid is 8 programs an SM, each striding over the tiles. Inputs randn * 4
# so that the clamps bite.
M, N2 = 8192, 5760
CASES.append(case(
    "tk_swiglu_gpt_oss", TK + "swiglu_details/_swiglu.py", "_swiglu",
    "Out=*bf16, OutExpectedScale=None, OutActualScale=None, OutChecksumScale=None, A=*bf16, AScale=None, "
    "alpha=fp32, M=i32, N=i32, stride_am=i32, stride_an=i32, stride_outm=i32, stride_outn=i32, limit=7.0, "
    "NTokens=None, BLOCK_M=16, BLOCK_N=128, EVEN_N=False, M_BLOCKS=i32, N_BLOCKS=i32, "
    "flexpoint_saturate_inf=False, num_warps=4",
    dict(Out=("zeros", "bfloat16", M * N2 // 2), A=("randn", "bfloat16", M * N2, 4.0), alpha=1.702, M=M,
         N=N2 // 2, stride_am=N2, stride_an=1, stride_outm=N2 // 2, stride_outn=1, M_BLOCKS=cdiv(M, 16),
         N_BLOCKS=cdiv(N2 // 2, 128)),
    # exp (approximate in both) and a division; bf16 out.
    (8 * SMS,), ["Out"], bytes=2 * (M * N2 + M * N2 // 2), tol=1e-2, **TK_PKG))

# The MoE top-k combine (reduce over dim 1 of the down projection's bf16
# [8192, 4, 2880] output): each token's 4 rows times their fp32 gate weights
# ([8192, 4, 1], broadcast along the row), int32 keep-mask likewise (half
# dropped), summed to bf16 [8192, 2880]. BLOCK_S0 64, BLOCK_X_S1 128, 4 warps,
# the unspecialized kernel (no postprocess functions). Grid (S0 / 64,
# cdiv(2880, 128)).
S0, KR, S1 = 8192, 4, 2880
CASES.append(case(
    "tk_reduce_topk_combine", TK + "reduce.py", "_reduce_forward",
    "X=*bf16, stride_xr=i64, stride_x0=i64, stride_x1=i32, XMx=None, stride_xmxr=None, stride_xmx0=None, "
    "stride_xmx1=None, Y=*bf16, stride_y0=i64, stride_y1=i32, YMx=None, stride_ymx0=None, stride_ymx1=None, "
    "Mask=*i32, stride_mr=i32, stride_m0=i32, stride_m1=i32, Scale=*fp32, stride_sr=i32, stride_s0=i32, "
    "stride_s1=i32, K=i32, S0=i32, X_S1=i32, Y_S1=i32, POSTPROCESS_FN1=None, postprocess_fn1_args=None, "
    "POSTPROCESS_FN2=None, postprocess_fn2_args=None, XFlex=None, YFlexExpected=None, YFlexActual=None, "
    "YFlexChecksum=None, Y_FLEX_SATURATE_INF=False, IS_MASK_NONE=False, BROADCAST_R=False, BROADCAST_S0=False, "
    "BROADCAST_S1=True, IS_SCALE_NONE=False, SCALE_BROADCAST_R=False, SCALE_BROADCAST_S0=False, "
    "SCALE_BROADCAST_S1=True, BLOCK_S0=64, BLOCK_X_S1=128, BLOCK_Y_S1=128, num_warps=4",
    dict(X=("randn", "bfloat16", S0 * KR * S1), stride_xr=S1, stride_x0=KR * S1, stride_x1=1,
         Y=("zeros", "bfloat16", S0 * S1), stride_y0=S1, stride_y1=1, Mask=("index", "int32", S0 * KR, 2),
         stride_mr=1, stride_m0=KR, stride_m1=0, Scale=("uniform", "float32", S0 * KR, 0.0, 1.0), stride_sr=1,
         stride_s0=KR, stride_s1=0, K=KR, S0=S0, X_S1=S1, Y_S1=S1),
    # fp32 sums of four products; bf16 out.
    (S0 // 64, cdiv(S1, 128)), ["Y"], bytes=2 * S0 * KR * S1 + 2 * 4 * S0 * KR + 2 * S0 * S1, tol=1e-2, **TK_PKG))

# MXFP4 weight quantization (downcast_to_mxfp along K, as gpt-oss's expert
# weights are prepared): bf16 rows of 2880 (16384 of them, randn * 0.02) to
# e2m1 pairs in uint8 and one e8m0 uint8 scale per 32, scales rounded up
# (DequantScaleRoundingMode.ROUND_UP); BLOCK 32 x 128, 8 warps for bf16.
# Grid (rows / 32, cdiv(2880, 128)).
R, L = 16384, 2880
CASES.append(case(
    "tk_mxfp4_quantize_weights", TK + "numerics_details/mxfp_details/_downcast_to_mxfp.py", "_downcast_to_mxfp",
    "mx_tensor_ptr=*u8, stride_mxt_outer=i32, stride_mxt_quant=1, mx_scale_ptr=*u8, stride_mx_scale_outer=i32, "
    "stride_mx_scale_quant=i32, src_ptr=*bf16, stride_src_outer=i32, stride_src_quant=i32, outer_dim=i32, "
    "quant_dim=i32, BLOCK_SIZE_OUT_DIM=32, BLOCK_SIZE_QUANT_DIM=128, DEQUANT_SCALE_ROUNDING_MODE=0, num_warps=8",
    dict(mx_tensor_ptr=("zeros", "uint8", R * L // 2), stride_mxt_outer=L // 2,
         mx_scale_ptr=("zeros", "uint8", R * L // 32), stride_mx_scale_outer=L // 32, stride_mx_scale_quant=1,
         src_ptr=("randn", "bfloat16", R * L, 0.02), stride_src_outer=L, stride_src_quant=1, outer_dim=R,
         quant_dim=L),
    # Power-of-two scales and round-to-nearest e2m1 codes: exact.
    (R // 32, cdiv(L, 128)), ["mx_tensor_ptr", "mx_scale_ptr"], bytes=2 * R * L + R * L // 2 + R * L // 32,
    tol=0, **TK_PKG))

# MXFP8 activation quantization (e4m3 data, e8m0 scales rounded down: the OCP
# rule): bf16 [8192, 4096] activations; BLOCK 32 x 128, 8 warps.
R, L = 8192, 4096
CASES.append(case(
    "tk_mxfp8_quantize_acts", TK + "numerics_details/mxfp_details/_downcast_to_mxfp.py", "_downcast_to_mxfp",
    "mx_tensor_ptr=*fp8e4nv, stride_mxt_outer=i32, stride_mxt_quant=1, mx_scale_ptr=*u8, "
    "stride_mx_scale_outer=i32, stride_mx_scale_quant=i32, src_ptr=*bf16, stride_src_outer=i32, "
    "stride_src_quant=i32, outer_dim=i32, quant_dim=i32, BLOCK_SIZE_OUT_DIM=32, BLOCK_SIZE_QUANT_DIM=128, "
    "DEQUANT_SCALE_ROUNDING_MODE=1, num_warps=8",
    dict(mx_tensor_ptr=("zeros", "float8_e4m3fn", R * L), stride_mxt_outer=L,
         mx_scale_ptr=("zeros", "uint8", R * L // 32), stride_mx_scale_outer=L // 32, stride_mx_scale_quant=1,
         src_ptr=("randn", "bfloat16", R * L), stride_src_outer=L, stride_src_quant=1, outer_dim=R, quant_dim=L),
    # Power-of-two scales, e4m3 rounding: exact.
    (R // 32, L // 128), ["mx_tensor_ptr", "mx_scale_ptr"], bytes=2 * R * L + R * L + R * L // 32, tol=0,
    **TK_PKG))

# --- lightning-attention (lightning_attn/ops/triton) -------------------------------------
LA_PKG = dict(package=TRL + "lightning_attn")
LA = TRL + "lightning_attn/lightning_attn/ops/triton/"

# Lightning Attention-2's block-parallel forward at MiniMax-01's shapes: bf16
# q, k, v [1, 64, 4096, 128] (randn * 0.1), one fp32 decay slope a head
# (uniform in [0.01, 0.5]); every size constexpr, as the launcher passes
# them. BLOCK 256, CBLOCK 64, Triton's default 4 warps.
LB, LH, LN, LD = 1, 64, 4096, 128
LNB, LCB = LN // 256, 256 // 64
QKV = LB * LH * LN * LD
LA_SIZES = f"b={LB}, h={LH}, n={LN}, d={LD}, e={LD}, BLOCK=256, NUM_BLOCK={LNB}"

# The intra-block part: each program's 64 query rows against the block's
# keys up to them (decay exp(-s (i - j)), -inf above the diagonal), two dots
# a step (q k^T, then (qk * decay) v) in fp32. Grid (b * h * NUM_BLOCK,
# NUM_CBLOCK). FLOPs: 10 of the 16 sub-block pairs a block.
CASES.append(case(
    "lightning_attn2_parallel_fwd_diag", LA + "lightning_attn2_parallel.py", "_fwd_diag_kernel",
    f"Q=*bf16, K=*bf16, V=*bf16, Out=*bf16, S=*fp32, {LA_SIZES}, CBLOCK=64, NUM_CBLOCK={LCB}",
    dict(Q=("randn", "bfloat16", QKV, 0.1), K=("randn", "bfloat16", QKV, 0.1), V=("randn", "bfloat16", QKV),
         Out=("zeros", "bfloat16", QKV), S=("uniform", "float32", LH, 0.01, 0.5)),
    # fp32 (tf32 on both sides) sums in another order, exp to an ulp; bf16
    # out.
    (LB * LH * LNB, LCB), ["Out"], bytes=2 * 4 * QKV + 4 * LH,
    flops=LB * LH * LNB * 10 * 2 * 64 * 64 * 2 * LD, tol=2e-2, **LA_PKG))

# Its main forward (lightning_attn2.py `_fwd_kernel`): one program a (batch
# x head, 32-column slice of v), the whole sequence in 64-row blocks, four
# fp32 (tf32) dots a block (q k^T, (qk * decay) v, q kv, k^T v), kv carried
# across blocks. BLOCK 64, BLOCK_MODEL 32 as its launcher picks for e 128;
# grid (b * h, e / 32).
LF_BLOCKS = LN // 64
CASES.append(case(
    "lightning_attn2_fwd", LA + "lightning_attn2.py", "_fwd_kernel",
    f"Q=*bf16, K=*bf16, V=*bf16, Out=*bf16, S=*fp32, b={LB}, h={LH}, n={LN}, d={LD}, e={LD}, BLOCK=64, "
    f"NUM_BLOCK={LF_BLOCKS}, BLOCK_MODEL=32",
    dict(Q=("randn", "bfloat16", QKV, 0.1), K=("randn", "bfloat16", QKV, 0.1), V=("randn", "bfloat16", QKV),
         Out=("zeros", "bfloat16", QKV), S=("uniform", "float32", LH, 0.01, 0.5)),
    # fp32 (tf32 on both sides) sums in another order, kv carried over 64
    # blocks; bf16 out.
    (LB * LH, LD // 32), ["Out"], bytes=2 * 4 * QKV + 4 * LH,
    flops=LB * LH * (LD // 32) * LF_BLOCKS * 2 * 64 * (64 * LD + 64 * 32 + LD * 32 + LD * 32), tol=2e-2,
    **LA_PKG))

# The inter-block state: each 256-token block's decayed k^T v ([128, 128]
# fp32, what _fwd_kv_reduce then scans across blocks), four 64-row steps of
# one dot each. One feature block (NUM_FBLOCK 1). Grid (b * h, NUM_BLOCK, 1).
CASES.append(case(
    "lightning_attn2_parallel_fwd_kv", LA + "lightning_attn2_parallel.py", "_fwd_kv_parallel",
    f"K=*bf16, V=*bf16, S=*fp32, KV=*fp32, {LA_SIZES}, D_FBLOCK={LD}, E_FBLOCK={LD}, NUM_FBLOCK=1, "
    f"CBLOCK=64, NUM_CBLOCK={LCB}",
    dict(K=("randn", "bfloat16", QKV, 0.1), V=("randn", "bfloat16", QKV), S=("uniform", "float32", LH, 0.01, 0.5),
         KV=("zeros", "float32", LB * LH * LNB * LD * LD)),
    # fp32 (tf32) sums of 256 decayed products in another order.
    (LB * LH, LNB, 1), ["KV"], bytes=2 * 2 * QKV + 4 * LB * LH * LNB * LD * LD,
    flops=LB * LH * LNB * 2 * 256 * LD * LD, tol=2e-2, **LA_PKG))

# The block-parallel forward's inter-block part (_fwd_none_diag_kernel, the
# file's second definition): each 64-row chunk's q (bf16 widened) times its
# block's kv state ([128, 128] fp32, row-major), decayed, added to the
# intra-block output already in Out. One dot outside any loop. Grid (b * h,
# NUM_BLOCK * NUM_CBLOCK, NUM_FBLOCK).
LKV = LB * LH * LNB * LD * LD
CASES.append(case(
    "lightning_attn2_parallel_fwd_none_diag", LA + "lightning_attn2_parallel.py", "_fwd_none_diag_kernel",
    f"Q=*bf16, K=*bf16, V=*bf16, Out=*bf16, S=*fp32, KV=*fp32, {LA_SIZES}, D_FBLOCK={LD}, E_FBLOCK={LD}, "
    f"NUM_FBLOCK=1, CBLOCK=64, NUM_CBLOCK={LCB}",
    dict(Q=("randn", "bfloat16", QKV, 0.1), K=("randn", "bfloat16", QKV, 0.1), V=("randn", "bfloat16", QKV),
         Out=("randn", "bfloat16", QKV), S=("uniform", "float32", LH, 0.01, 0.5), KV=("randn", "float32", LKV, 0.1)),
    # fp32 (tf32) sums of 128 products in another order; bf16 out.
    (LB * LH, LNB * LCB, 1), ["Out"], bytes=2 * 3 * QKV + 4 * LKV, flops=LB * LH * LNB * LCB * 2 * 64 * LD * LD,
    tol=2e-2, **LA_PKG))

# Its backward counterpart (_bwd_none_diag_kernel): three such dots a
# program (do kv^T, dkv v^T, k dkv), each added to the gradient in DQ, DK,
# DV.
CASES.append(case(
    "lightning_attn2_parallel_bwd_none_diag", LA + "lightning_attn2_parallel.py", "_bwd_none_diag_kernel",
    f"Q=*bf16, K=*bf16, V=*bf16, S=*fp32, DO=*bf16, DQ=*bf16, DK=*bf16, DV=*bf16, KV=*fp32, DKV=*fp32, "
    f"{LA_SIZES}, D_FBLOCK={LD}, E_FBLOCK={LD}, NUM_FBLOCK=1, CBLOCK=64, NUM_CBLOCK={LCB}",
    dict(Q=("randn", "bfloat16", QKV, 0.1), K=("randn", "bfloat16", QKV, 0.1), V=("randn", "bfloat16", QKV),
         S=("uniform", "float32", LH, 0.01, 0.5), DO=("randn", "bfloat16", QKV), DQ=("randn", "bfloat16", QKV),
         DK=("randn", "bfloat16", QKV), DV=("randn", "bfloat16", QKV), KV=("randn", "float32", LKV, 0.1),
         DKV=("randn", "float32", LKV, 0.1)),
    # fp32 (tf32) sums of 128 products in another order; bf16 out.
    (LB * LH, LNB * LCB, 1), ["DQ", "DK", "DV"], bytes=2 * 7 * QKV + 2 * 4 * LKV,
    flops=3 * LB * LH * LNB * LCB * 2 * 64 * LD * LD, tol=2e-2, **LA_PKG))

# Its simple RMS norm (no weight: x / rms(x)), bf16 [8192, 4096], fp32 rstd
# out; BLOCK_SIZE_N 4096 and 16 warps from the launcher's heuristic; eps
# 1e-6. One program a row.
M, N = 8192, 4096
CASES.append(case(
    "lightning_srmsnorm_fwd", LA + "srmsnorm.py", "srms_norm_fw",
    "X=*bf16, Y=*bf16, V=*fp32, stride=i32, N=i32, eps=fp32, BLOCK_SIZE_N=4096, num_warps=16",
    dict(X=("randn", "bfloat16", M * N), Y=("zeros", "bfloat16", M * N), V=("zeros", "float32", M), stride=N, N=N,
         eps=1e-6),
    # rsqrt (approximate in both), the row sum in another order; bf16 out.
    (M,), ["Y", "V"], bytes=2 * 2 * M * N + 4 * M, tol=1e-2, **LA_PKG))

# --- fla-org native-sparse-attention (native_sparse_attention/ops/parallel.py) -----------
# The selected-block attention forward (NSA's selection branch): bf16 q [2,
# 4096, 64, 128] over 4 kv heads (G 16 query heads a group), 16 selected
# 64-token blocks a (token, kv head) (int32 indices: block 0 always, the
# rest random, those past the token skipped by the kernel, as it does for
# the top-k's padding), scale 1/sqrt(128); USE_BLOCK_COUNTS False (an int
# count), no varlen offsets; BK = BV = 128 as on sm_90, the first autotune
# config's 1 warp. Grid (T, NV, B * H). Its fla imports are host helpers:
# stand-ins.
NB, NT, NH, NHQ, NK, NS, NBS = 2, 4096, 4, 64, 128, 16, 64


def _nsa_indices(torch, gen):
    idx = torch.randint(0, NT // NBS, (NB, NT, NH, NS), generator=gen, device="cuda", dtype=torch.int32)
    idx[..., 0] = 0
    return idx.reshape(-1)


def _identity(fn):
    return fn


NSA_STUBS = {"fla": {}, "fla.ops": {}, "fla.ops.common": {},
             "fla.ops.common.utils": dict(prepare_chunk_indices=None, prepare_chunk_offsets=None, prepare_lens=None,
                                          prepare_token_indices=None),
             "fla.ops.utils": dict(mean_pooling=None),
             "fla.utils": dict(autocast_custom_bwd=_identity, autocast_custom_fwd=_identity, contiguous=_identity),
             "einops": dict(rearrange=None)}
CASES.append(case(
    "fla_nsa_selected_attention_fwd", TRL + "fla_nsa/native_sparse_attention/ops/parallel.py",
    "parallel_nsa_fwd_kernel",
    "q=*bf16, k=*bf16, v=*bf16, o=*bf16, lse=*fp32, scale=fp32, block_indices=*i32, block_counts=i32, "
    f"offsets=None, token_indices=None, T=i32, H={NH}, HQ={NHQ}, G={NHQ // NH}, K={NK}, V={NK}, S={NS}, "
    f"BS={NBS}, BK={NK}, BV={NK}, USE_OFFSETS=False, USE_BLOCK_COUNTS=False, num_warps=1",
    dict(q=("randn", "bfloat16", NB * NT * NHQ * NK), k=("randn", "bfloat16", NB * NT * NH * NK),
         v=("randn", "bfloat16", NB * NT * NH * NK), o=("zeros", "bfloat16", NB * NT * NHQ * NK),
         lse=("zeros", "float32", NB * NT * NHQ), scale=NK ** -0.5, block_indices=_nsa_indices, block_counts=NS,
         T=NT),
    # fp32 sums of 128 and 64 products in another order, exp to an ulp;
    # bf16 out.
    (NT, 1, NB * NH), ["o", "lse"],
    bytes=2 * NB * NT * (2 * NHQ * NK + 2 * NH * NK) + 4 * NB * NT * (NHQ + NH * NS),
    flops=NB * NT * NH * NS * 2 * 2 * (NHQ // NH) * NBS * NK // 2, tol=1e-2,
    package=TRL + "fla_nsa", stubs=NSA_STUBS, srcs=[TRL + "fla_nsa/native_sparse_attention/ops/utils.py"]))

