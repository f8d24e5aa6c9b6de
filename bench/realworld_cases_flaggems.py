"""Real-world cases: FlagGems' memory-bound and reduction kernels (FlagOpen's
Triton operator library for PyTorch, src/flag_gems/ops and fused/): online
softmax over a vocabulary and along a non-contiguous dim, a sum down the
rows, Welford's var_mean, the LayerNorm and RMSNorm weight gradients
(reductions down columns), a row scan, and the gathers and scatters of
serving (index_select along columns, vLLM's paged KV-cache write, MoE top-k
routing). bench/realworld_cases.py says what a case is.

Sizes are LLM-sized (4096-8192 tokens, hidden 4096, Llama-3's vocabulary).
Configs are what FlagGems' host code launches for them: its nvidia
heuristics (runtime/backend/_nvidia/heuristics_config_utils.py, with the
H100/H200's 132 SMs) where a kernel takes @triton.heuristics, an entry of its
tune_configs.yaml list (named beside the case) where it autotunes, else the
host's own constants. The modules load as the mm and bmm cases of
realworld_cases_attention_gemm.py load them (its stand-ins, plus a few more
below), with triton_lang_extension.py (tle.program_id, widened to int64) as
--src where the kernel calls it.

Left out: argmax_kernel, whose [8, 4096] bf16 tile on 4 warps (its
heuristics at M >= 4096, and [4, 4096] below) spills on both compilers."""

from realworld_case_rules import case, cdiv
from realworld_cases_attention_gemm import FLAGGEMS, FLAGGEMS_ROOT, FLAGGEMS_STUBS

CASES = []

TLE = FLAGGEMS + "utils/triton_lang_extension.py"
# realworld_cases_attention_gemm.py's stand-ins, and what these modules
# import besides for their host code: dim_compress (sum, var_mean,
# index_select), get_device_properties and runtime.device, whose name
# cumsum.py reads at import.
STUBS = dict(FLAGGEMS_STUBS)
STUBS["flag_gems.runtime"] = dict(FLAGGEMS_STUBS["flag_gems.runtime"],
                                  device=type("device", (), dict(name="nvidia")))
STUBS["flag_gems.utils"] = dict(FLAGGEMS_STUBS["flag_gems.utils"], dim_compress=None,
                                get_device_properties=None)


def fg(id, path, kernel, sig, args, grid, outputs, bytes, tol, srcs=(TLE,)):
    """A FlagGems case: the file imported as flag_gems.<path>."""
    return case(id, FLAGGEMS + path, kernel, sig, args, grid, outputs, bytes=bytes, tol=tol,
                package=FLAGGEMS_ROOT, stubs=STUBS, srcs=list(srcs))


# softmax(logits, dim=-1) over Llama-3's vocabulary (128256), bf16, 4096
# tokens: softmax_kernel_inner, one program a row. Its heuristics: TILE_N
# 4096 (N > 32K), so not ONE_TILE_PER_CTA: an online-softmax loop (running
# max and rescaled sum per lane, the last tile masked), then the normalizing
# sweep backwards from the masked tail with evict_first loads; 16 warps
# (TILE_N >= 4096).
M, N = 4096, 128256
CASES.append(fg(
    "flaggems_softmax_inner_bf16", "ops/softmax.py", "softmax_kernel_inner",
    "output_ptr=*bf16, input_ptr=*bf16, M=i32, N=i32, TILE_N=4096, ONE_TILE_PER_CTA=False, num_warps=16",
    dict(output_ptr=("zeros", "bfloat16", M * N), input_ptr=("randn", "bfloat16", M * N, 2.0), M=M, N=N),
    # exp and the running sums in another order; bf16 out.
    (M,), ["output_ptr"], bytes=2 * 2 * M * N, tol=1e-2))

# softmax(x, dim=1) of a [32, 4096, 4096] fp16 tensor (scores laid out
# [heads, keys, queries]): softmax_kernel_non_inner, the reduced dim strided
# by K. Its heuristics at M = 32, K = 4096 on 132 SMs: TILE_K 1024 (doubled
# until M x K / TILE_K programs fit one wave), TILE_N cdiv(8192, 1024) = 8,
# so [8, 1024] tiles walked down N twice (online max/sum, then the outputs,
# backwards), 16 warps; grid (M, K / TILE_K).
M, N, K = 32, 4096, 4096
CASES.append(fg(
    "flaggems_softmax_non_inner_fp16", "ops/softmax.py", "softmax_kernel_non_inner",
    "output_ptr=*fp16, input_ptr=*fp16, M=i32, N=i32, K=i32, TILE_N=8, TILE_K=1024, "
    "ONE_TILE_PER_CTA=False, num_warps=16",
    dict(output_ptr=("zeros", "float16", M * N * K), input_ptr=("randn", "float16", M * N * K, 2.0),
         M=M, N=N, K=K),
    # exp and the running sums in another order; fp16 out.
    (M, cdiv(K, 1024), 1), ["output_ptr"], bytes=2 * 2 * M * N * K, tol=1e-2))

# sum(x, dim=0) of [8192, 4096] bf16 (a bias gradient: the output gradient
# summed over tokens): sum_dim_kernel_non_inner with M 1, N 8192, K 4096. Its
# (softmax_non_inner) heuristics on 132 SMs: TILE_K 32, TILE_N 256, 16 warps:
# 128 programs, each summing a 64-byte-wide column strip down all rows in
# fp32, bf16 out.
N, K = 8192, 4096
CASES.append(fg(
    "flaggems_sum_dim0_bf16", "ops/sum.py", "sum_dim_kernel_non_inner",
    "output_ptr=*bf16, input_ptr=*bf16, M=i32, N=i32, K=i32, TILE_N=256, TILE_K=32, "
    "ONE_TILE_PER_CTA=False, num_warps=16",
    dict(output_ptr=("zeros", "bfloat16", K), input_ptr=("randn", "bfloat16", N * K), M=1, N=N, K=K),
    # fp32 sums of 8192 in another order; bf16 out.
    (1, cdiv(K, 32), 1), ["output_ptr"], bytes=2 * N * K + 2 * K, tol=1e-2))

# var_mean(x, dim=-1) (correction 1), bf16 [8192, 4096]: var_mean_welford_kernel,
# a running Welford update per lane over [BLOCK_M, BLOCK_N] tiles, merged by
# tl.reduce over three tensors. Autotuned over its "var_mean" list (BLOCK_M
# 1-8, BLOCK_N 1024 or 2048, 4-16 warps): a mid entry, BLOCK_M 4, BLOCK_N
# 1024, 8 warps.
M, N = 8192, 4096
CASES.append(fg(
    "flaggems_var_mean_bf16", "ops/var_mean.py", "var_mean_welford_kernel",
    "X=*bf16, Var=*bf16, Mean=*bf16, M=i32, N=i32, correction=fp32, BLOCK_M=4, BLOCK_N=1024, num_warps=8",
    dict(X=("randn", "bfloat16", M * N), Var=("zeros", "bfloat16", M), Mean=("zeros", "bfloat16", M),
         M=M, N=N, correction=1.0),
    # Welford merges in another order; bf16 out.
    (cdiv(M, 4),), ["Var", "Mean"], bytes=2 * M * N + 2 * 2 * M, tol=1e-2))

# LayerNorm's weight and bias gradients, bf16 [8192, 4096]:
# weight_bias_backward_kernel, each program walking all rows down a strip of
# BLOCK_COL_SIZE columns (a column-major reduction: 16-byte pieces of rows
# 8 KB apart), mean and rstd in bf16 as the forward stores them. Autotuned
# over "weight_bias_backward" (BLOCK_ROW_SIZE 128, BLOCK_COL_SIZE 1-8, 4-16
# warps): its widest strip, 8 columns, 4 warps.
M, N = 8192, 4096
CASES.append(fg(
    "flaggems_layer_norm_dwdb_bf16", "ops/layernorm.py", "weight_bias_backward_kernel",
    "dY=*bf16, X=*bf16, Mean=*bf16, Rstd=*bf16, dW=*bf16, dB=*bf16, M=i32, N=i32, "
    "BLOCK_ROW_SIZE=128, BLOCK_COL_SIZE=8, num_warps=4",
    dict(dY=("randn", "bfloat16", M * N), X=("randn", "bfloat16", M * N),
         Mean=("randn", "bfloat16", M, 0.1), Rstd=("uniform", "bfloat16", M, 0.5, 2.0),
         dW=("zeros", "bfloat16", N), dB=("zeros", "bfloat16", N), M=M, N=N),
    # fp32 sums of 8192 in another order; bf16 out.
    (cdiv(N, 8), 1, 1), ["dW", "dB"], bytes=2 * 2 * M * N + 2 * 2 * M + 2 * 2 * N, tol=1e-2))

# RMSNorm's weight gradient, first stage, bf16 [8192, 4096]: rms_norm_grad_dw_kernel
# at its host's ROW_BLOCK_SIZE 16 and COL_BLOCK_SIZE 256 (4 warps): each
# program reduces a [16, 256] tile of x * dy * inv_rms over its rows into an
# fp32 partial row (the host sums the 512 partials with torch.sum).
M, N = 8192, 4096
CASES.append(fg(
    "flaggems_rms_norm_grad_dw_bf16", "ops/rms_norm.py", "rms_norm_grad_dw_kernel",
    "X=*bf16, DY=*bf16, INV_RMS=*fp32, DW=*fp32, dx_stride_r=i32, dx_stride_c=i32, x_stride_r=i32, "
    "x_stride_c=i32, M=i32, N=i32, ROW_BLOCK_SIZE=16, COL_BLOCK_SIZE=256",
    dict(X=("randn", "bfloat16", M * N), DY=("randn", "bfloat16", M * N),
         INV_RMS=("uniform", "float32", M, 0.5, 2.0), DW=("zeros", "float32", M // 16 * N),
         dx_stride_r=N, dx_stride_c=1, x_stride_r=N, x_stride_c=1, M=M, N=N),
    # fp32 sums of 16 products in another order.
    (cdiv(M, 16), cdiv(N, 256)), ["DW"], bytes=2 * 2 * M * N + 4 * M + 4 * M // 16 * N, tol=1e-5, srcs=()))

# index_select(x, dim=1, index) along the contiguous dim: 2048 random
# columns of a [8192, 4096] bf16 activation (e.g. keeping a subset of
# channels): index_select_kernel, a gather within each row. Its heuristics
# at N = 4096: BLOCK_M 1, BLOCK_N 256 (4 warps); grid (M, index_len / 256).
M, N, L = 8192, 4096, 2048
CASES.append(fg(
    "flaggems_index_select_cols_bf16", "ops/index_select.py", "index_select_kernel",
    "inp=*bf16, out=*bf16, M=i32, N=i32, index=*i64, index_len=i32, BLOCK_M=1, BLOCK_N=256",
    dict(inp=("randn", "bfloat16", M * N), out=("zeros", "bfloat16", M * L), M=M, N=N,
         index=("index", "int64", L, N), index_len=L),
    # A copy: exact.
    (M, cdiv(L, 256)), ["out"], bytes=2 * 2 * M * L + 8 * L, tol=0))

# vLLM's reshape_and_cache (the paged KV-cache write of every step), bf16:
# 8192 tokens of Llama-3-8B's 8 KV heads x 128, into 16-token blocks; key
# cache [blocks, heads, 128/8, 16, 8] (8 elements = 16 bytes innermost),
# value cache [blocks, heads, 128, 16] (written transposed, 2-byte pieces
# 32 bytes apart). One program a token, n = heads x head size = 1024, 4
# warps; slot_mapping a permutation of the 8192 slots, so every slot is
# written. k_scale and v_scale are vLLM's one-element scale tensors (unused
# for a bf16 cache).
T, H, D, BS, X = 8192, 8, 128, 16, 8
CASES.append(fg(
    "flaggems_reshape_and_cache_bf16", "fused/reshape_and_cache.py", "reshape_and_cache_kernel",
    "key=*bf16, value=*bf16, key_cache=*bf16, value_cache=*bf16, slot_mapping=*i64, key_stride=i32, "
    "value_stride=i32, num_heads=i32, head_size=i32, block_size=i32, x=i32, k_scale=*fp32, "
    f"v_scale=*fp32, n={H * D}",
    dict(key=("randn", "bfloat16", T * H * D), value=("randn", "bfloat16", T * H * D),
         key_cache=("zeros", "bfloat16", T * H * D), value_cache=("zeros", "bfloat16", T * H * D),
         slot_mapping=("perm", "int64", T), key_stride=H * D, value_stride=H * D, num_heads=H,
         head_size=D, block_size=BS, x=X, k_scale=("full", "float32", 1, 1.0),
         v_scale=("full", "float32", 1, 1.0)),
    # A copy: exact.
    (T,), ["key_cache", "value_cache"], bytes=2 * 2 * 2 * T * H * D + 8 * T, tol=0, srcs=()))

# MoE routing (vLLM's topk_softmax), fp32 gating logits of 8192 tokens over
# 128 experts, top 8 (Qwen3-30B-A3B): topk_gating_softmax_kernel at its
# host's BLOCK_SIZE_EXPERTS 128 and BLOCK_SIZE_ROWS 1024 / 128 = 8 (4
# warps): a softmax per row, then k rounds of max, argmax and masking out.
T, E, TOPK = 8192, 128, 8
CASES.append(fg(
    "flaggems_topk_softmax_fp32", "fused/topk_softmax.py", "topk_gating_softmax_kernel",
    "input_ptr=*fp32, finished_ptr=None, output_ptr=*fp32, indices_ptr=*i32, source_rows_ptr=*i32, "
    "num_rows=i32, k=i32, num_experts=i32, start_expert=i32, end_expert=i32, INDEX_TY=tl.int32, "
    "BLOCK_SIZE_ROWS=8, BLOCK_SIZE_EXPERTS=128",
    dict(input_ptr=("randn", "float32", T * E), output_ptr=("zeros", "float32", T * TOPK),
         indices_ptr=("zeros", "int32", T * TOPK), source_rows_ptr=("zeros", "int32", T * TOPK),
         num_rows=T, k=TOPK, num_experts=E, start_expert=0, end_expert=E),
    # exp and the row sums in another order: the weights an fp32 rounding
    # or so apart, the indices (up to 127) and rows equal.
    (cdiv(T, 8),), ["output_ptr", "indices_ptr", "source_rows_ptr"], bytes=4 * T * E + 3 * 4 * T * TOPK,
    tol=1e-5, srcs=()))

# cumsum(x, dim=-1), fp32 [8192, 4096] (e.g. top-p over sorted
# probabilities): its row scan for N <= 16384, the persistent
# reduce_then_scan_root_scan_kernel_row, one program a row, TILE_SIZE
# next_pow2(N) = 4096, 8 warps (TILE_SIZE > 2048).
M, N = 8192, 4096
CASES.append(fg(
    "flaggems_cumsum_row_fp32", "ops/cumsum.py", "reduce_then_scan_root_scan_kernel_row",
    "in_ptr=*fp32, out_ptr=*fp32, N=i32, TILE_SIZE=4096, num_warps=8",
    dict(in_ptr=("randn", "float32", M * N), out_ptr=("zeros", "float32", M * N), N=N),
    # A scan in another order: fp32 roundings of the running sums.
    (M, 1, 1), ["out_ptr"], bytes=2 * 4 * M * N, tol=1e-5, srcs=()))
