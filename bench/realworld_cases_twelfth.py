"""Real-world cases: the twelfth sample (tests/realworld/MANIFEST.twelfth):
scattermoe's MoE GEMMs (the scatter-to-scatter expert GEMM and the grouped
weight gradient X^T dY), Intel's XPU-backend benchmark kernels (flash
attention forward and backward through tensor descriptors, the
tensor-descriptor GEMM, split-K with atomic adds, GEMM + SwiGLU fused),
ArcticTraining's persistent grouped MoE GEMM, and Fast-LLM's dense and
output-sparse (dropless MoE) GEMMs, cross entropy forward + backward, RMS
norm, rotary and Adam. bench/realworld_cases.py says what a case is.

Configs are the launchers' constants or the autotune config MANIFEST.twelfth
gives (Intel's 256 x 256 x 32 tiles at 32 warps do not fit an H100's
registers: their lists' 256 x 128 x 32, as the manifest); grids as each
launcher computes them; sizes LLM-sized (Mixtral-8x7B's MoE: 8 experts,
top-2, d_model 4096, FFN 14336, 4096 tokens for scattermoe and 8192 for
Fast-LLM's dropless MoE; Llama-3-8B's up projection and vocabulary 128256;
Qwen3-30B-A3B's 128 experts of 768; 4 x 32 heads x 4096 tokens of 128 for
attention).

Signatures are written without alignment hints (realworld_cubins.py --list
adds the ones Triton's JIT specializes on).
"""

import math
import os

from realworld_case_rules import TRL, cached, case, cdiv

CASES = []
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


# --- scattermoe (scattermoe/kernels/ops.py) ----------------------------------------------
# Imported as scattermoe.kernels.ops from tests/realworld/scattermoe (its
# package __init__ files left out: ops.py needs only torch and triton).
# Mixtral-8x7B's GLU MLP: 4096 tokens, each routed to 2 distinct random
# experts of 8; flatten_sort_count's outputs: the flattened expert ids
# sorted (int64), the flat (token * 2 + choice) index of each sorted row
# (int64) and the inclusive cumsum of the expert counts (int64). The one
# autotune config of each kernel (BLOCK_M 128 the module global, BLOCK_N
# 128, BLOCK_K 32, 4 stages, 4 warps; XtY 32 x 128 x 128), NO_K_MASK and
# NO_N_MASK from the heuristics (all sizes divide).
SM_ROOT = TRL + "scattermoe"
SM_OPS = SM_ROOT + "/scattermoe/kernels/ops.py"
ST, SK, SE, SD, SF = 4096, 2, 8, 4096, 14336  # tokens, top-k, experts, d_model, FFN
SROWS = ST * SK


def _smoe_routing(torch, g, dev):
    experts = torch.rand(ST, SE, generator=g, device=dev).argsort(dim=1)[:, :SK].reshape(-1)
    sorted_experts, scattered = torch.sort(experts, stable=True)
    offsets = torch.bincount(experts, minlength=SE).cumsum(-1)
    return dict(experts=sorted_experts, scattered=scattered, offsets=offsets)


smoe = cached(_smoe_routing)
S2S_SIG = ("X_ptr=*bf16, stride_xm={xm}, stride_xk=1, W_ptr=*bf16, stride_we=i32, stride_wk={wk}, "
           "stride_wn={wn}, Y_ptr=*bf16, stride_ym={ym}, stride_yn=1, B_ptr={b}, stride_be={be}, "
           "stride_bn={bn}, grouped_idx_ptr=*i64, expert_idxs_ptr=*i64, FAN_OUT={fan_out}, M=i32, K={k}, "
           "N={n}, E=8, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, ACC_TYPE=tl.float32, allow_tf32=True, "
           "x_grouped={xg}, y_grouped={yg}, NO_K_MASK=True, NO_N_MASK=True, num_warps=4, num_stages=4")

# Expert layer 1 forward: x [4096, 4096] (token order) gathered by each
# sorted row's token, times W = weight.permute(0, 2, 1) of the [8, 28672,
# 4096] gate/up weight (strides e 117440512, k 1, n 4096), out grouped [8192,
# 28672]; no bias. Grid: the (row block, column block) tiles. A row block
# that straddles two experts runs the K loop once per expert (FLOPs: the
# useful ones).
N1 = 2 * SF
CASES.append(case(
    "smoe_scatter2scatter_mixtral_w1", SM_OPS, "_scatter2scatter",
    S2S_SIG.format(xm=SD, wk=1, wn=SD, ym=N1, b="None", be=0, bn=0, fan_out=SK, k=SD, n=N1, xg=False, yg=True),
    dict(X_ptr=("randn", "bfloat16", ST * SD), W_ptr=("randn", "bfloat16", SE * N1 * SD, 0.02),
         stride_we=N1 * SD, Y_ptr=("zeros", "bfloat16", SROWS * N1), grouped_idx_ptr=smoe("scattered"),
         expert_idxs_ptr=smoe("experts"), M=ST),
    # fp32 sums of 4096 products in another order; bf16 out.
    (cdiv(SROWS, 128) * cdiv(N1, 128),), ["Y_ptr"], bytes=2 * (ST * SD + SE * N1 * SD + SROWS * N1),
    flops=2 * SROWS * N1 * SD, tol=1e-2, package=SM_ROOT))

# Expert layer 2 forward: the activation h [8192, 14336] grouped (x_grouped),
# W = weight.permute(0, 2, 1) of the [8, 4096, 14336] down weight, FAN_OUT 1
# (M = 8192 rows), out scattered back to each row's (token, choice) slot
# [8192, 4096], with a bf16 bias [8, 4096] added per row's expert.
CASES.append(case(
    "smoe_scatter2scatter_mixtral_w2_bias", SM_OPS, "_scatter2scatter",
    S2S_SIG.format(xm=SF, wk=1, wn=SF, ym=SD, b="*bf16", be=SD, bn=1, fan_out=1, k=SF, n=SD, xg=True, yg=False),
    dict(X_ptr=("randn", "bfloat16", SROWS * SF), W_ptr=("randn", "bfloat16", SE * SD * SF, 0.02),
         stride_we=SD * SF, Y_ptr=("zeros", "bfloat16", SROWS * SD), B_ptr=("randn", "bfloat16", SE * SD, 0.1),
         grouped_idx_ptr=smoe("scattered"), expert_idxs_ptr=smoe("experts"), M=SROWS),
    # fp32 sums of 14336 products in another order; bf16 out.
    (cdiv(SROWS, 128) * cdiv(SD, 128),), ["Y_ptr"], bytes=2 * (SROWS * SF + SE * SD * SF + SROWS * SD + SE * SD),
    flops=2 * SROWS * SD * SF, tol=1e-2, package=SM_ROOT))

# Decode (single.py): one token's x [1, 4096] times its top-2 experts' w1,
# the weight permuted as above (k contiguous), FAN_OUT 2, out [2, 28672]: a
# GEMV summing x * w down each K-contiguous weight tile (tl.sum, no dot).
# Grid: (N / BLOCK_N, the 2 choices).
SM_SINGLE = SM_ROOT + "/scattermoe/kernels/single.py"
CASES.append(case(
    "smoe_single2scatter_mixtral_w1_decode", SM_SINGLE, "_single2scatter",
    "X_ptr=*bf16, stride_xm=i32, stride_xk=i32, W_ptr=*bf16, stride_we=i32, stride_wk=i32, stride_wn=i32, "
    "Y_ptr=*bf16, stride_ym=i32, stride_yn=i32, expert_idxs_ptr=*i64, "
    f"FAN_OUT=2, K={SD}, N={N1}, E={SE}, BLOCK_N=128, BLOCK_K=128, ACC_TYPE=tl.float32",
    dict(X_ptr=("randn", "bfloat16", SD), stride_xm=SD, stride_xk=1,
         W_ptr=("randn", "bfloat16", SE * N1 * SD, 0.02), stride_we=N1 * SD, stride_wk=1, stride_wn=SD,
         Y_ptr=("zeros", "bfloat16", 2 * N1), stride_ym=N1, stride_yn=1,
         expert_idxs_ptr=("index", "int64", 2, SE)),
    # bf16 sums of 128 products a block (the kernel's own tl.sum of bf16
    # x * w), 32 of them in fp32; bf16 out.
    (N1 // 128, 2), ["Y_ptr"], bytes=2 * (SD + 2 * N1 * SD + 2 * N1), tol=5e-2, package=SM_ROOT))

# Layer 1's weight gradient (group_bwd_W): each expert's grouped rows of x
# [8192, 4096] transposed times its rows of dY [8192, 28672], into DW =
# DWt.permute(0, 2, 1) of an [8, 28672, 4096] bf16 buffer (strides e
# 117440512, k 1, n 4096); no bias gradient. Grid (E * K / BLOCK_K, N /
# BLOCK_N), swizzled in the kernel.
CASES.append(case(
    "smoe_groupXtY_mixtral_w1_grad", SM_OPS, "_groupXtY",
    "DY_ptr=*bf16, stride_dym=i32, stride_dyk=i32, X_ptr=*bf16, stride_xm=i32, stride_xn=i32, DW_ptr=*bf16, "
    "stride_dwe=i32, stride_dwk=i32, stride_dwn=i32, Db_ptr=None, stride_dbe=i32, stride_dbn=i32, "
    f"expert_offsets_ptr=*i64, M=i32, K={SD}, N={N1}, BLOCK_M=32, BLOCK_N=128, BLOCK_K=128, "
    "ACC_TYPE=tl.float32, allow_tf32=True, NO_K_MASK=True, NO_N_MASK=True, num_warps=4, num_stages=4",
    dict(DY_ptr=("randn", "bfloat16", SROWS * N1), stride_dym=N1, stride_dyk=1, X_ptr=("randn", "bfloat16", SROWS * SD),
         stride_xm=SD, stride_xn=1, DW_ptr=("zeros", "bfloat16", SE * N1 * SD), stride_dwe=N1 * SD, stride_dwk=1,
         stride_dwn=SD, stride_dbe=0, stride_dbn=0, expert_offsets_ptr=smoe("offsets"), M=SROWS),
    # fp32 sums of ~1024 products (an expert's rows) in another order; bf16
    # out.
    (SE * cdiv(SD, 128), cdiv(N1, 128)), ["DW_ptr"], bytes=2 * (SROWS * N1 + SROWS * SD + SE * N1 * SD),
    flops=2 * SROWS * N1 * SD, tol=1e-2, package=SM_ROOT))

# --- Intel's XPU-backend benchmark kernels (benchmarks/triton_kernels_benchmark) ---------
# Loaded as a tutorial is (kernels, helpers and imports only: their
# module-level benchmark code asks torch.xpu about the device); the suite's
# package and its sycl_tla_kernel binding are stand-ins.
INTEL = TRL + "intel_xpu_bench/benchmarks/triton_kernels_benchmark/"
INTEL_STUBS = {"triton_kernels_benchmark": dict(sycl_tla_kernel=None, BENCHMARKING_METHOD="ELAPSED_TIME"),
               "triton_kernels_benchmark.sycl_tla_kernel": {}}

# Flash attention forward (tutorial 06 through device-made tensor
# descriptors): fp16 q, k, v [4, 32, 4096, 128] (randn * 0.5, the
# benchmark's), sm_scale 0.125 (the benchmark's), causal (STAGE 3), the
# twisted grid (not batch 2 x 16 heads): (1, N_CTX / BLOCK_M, Z * H).
# 128 x 64 tiles, 3 stages, 8 warps (the config an H100's autotuner picks,
# MANIFEST.twelfth). M: the base-2 logsumexp of each row, fp32.
AZ, AH, AN, AD = 4, 32, 4096, 128
AQKV = AZ * AH * AN * AD
CASES.append(case(
    "intel_flash_attn_fwd_causal_d128", INTEL + "flash_attention_benchmark.py", "_attn_fwd",
    f"sm_scale=fp32, M=*fp32, Z=i32, H=i32, Q=*fp16, K=*fp16, V=*fp16, O=*fp16, N_CTX={AN}, HEAD_DIM={AD}, "
    "BLOCK_M=128, BLOCK_N=64, STAGE=3, TWISTED_GRID=True, FP8_INPUT=False, num_warps=8, num_stages=3",
    dict(sm_scale=0.125, M=("zeros", "float32", AZ * AH * AN), Z=AZ, H=AH, Q=("randn", "float16", AQKV, 0.5),
         K=("randn", "float16", AQKV, 0.5), V=("randn", "float16", AQKV, 0.5), O=("zeros", "float16", AQKV)),
    # fp32 sums of 128 and 4096 products in another order, exp2 to an ulp;
    # fp16 out.
    (1, AN // 128, AZ * AH), ["O", "M"], bytes=2 * 4 * AQKV + 4 * AZ * AH * AN,
    flops=2 * AZ * AH * AN * AN * AD, tol=1e-2, stubs=INTEL_STUBS))


# Its backward (causal only): q, v, do fp16 randn * 0.5; k as the launcher
# passes it (k * sm_scale / ln 2, fp16); M each row's base-2 logsumexp of
# q k'^T over its causal keys (what the forward stores, computed here in
# fp32); Delta randn * 0.1 (rowsum(o * do) in the launcher; any moderate
# value serves). The first config filter_func keeps for head dim 128
# (BLOCK_M1 32, BLOCK_N1 128, BLOCK_M2 128, BLOCK_N2 32, 2 stages, 8
# warps), BLK_SLICE_FACTOR 2. Grid (N_CTX / BLOCK_N1, 1, Z * H).
def _attn_bwd_inputs(torch, g, dev):
    q = (torch.randn(AZ * AH, AN, AD, generator=g, device=dev) * 0.5).half()
    k = ((torch.randn(AZ * AH, AN, AD, generator=g, device=dev) * 0.5).half() * (0.125 / math.log(2))).half()
    causal = torch.ones(AN, AN, dtype=torch.bool, device=dev).tril()
    m = torch.empty(AZ * AH, AN, dtype=torch.float32, device=dev)
    for h in range(0, AZ * AH, 8):
        s = torch.bmm(q[h:h + 8].float(), k[h:h + 8].float().transpose(1, 2)).masked_fill(~causal, float("-inf"))
        m[h:h + 8] = torch.logsumexp(s * math.log(2), dim=-1) / math.log(2)
    return dict(q=q.reshape(-1), k=k.reshape(-1), m=m.reshape(-1))


attn_bwd = cached(_attn_bwd_inputs)
CASES.append(case(
    "intel_flash_attn_bwd_causal_d128", INTEL + "flash_attention_benchmark.py", "_attn_bwd",
    "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, DO=*fp16, DQ=*fp16, DK=*fp16, DV=*fp16, M=*fp32, D=*fp32, "
    "stride_z=i32, stride_h=i32, stride_tok=i32, stride_d=i32, H=i32, N_CTX=i32, BLOCK_M1=32, BLOCK_N1=128, "
    f"BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2, HEAD_DIM={AD}, num_warps=8, num_stages=2",
    dict(Q=attn_bwd("q"), K=attn_bwd("k"), V=("randn", "float16", AQKV, 0.5), sm_scale=0.125,
         DO=("randn", "float16", AQKV, 0.5), DQ=("zeros", "float16", AQKV), DK=("zeros", "float16", AQKV),
         DV=("zeros", "float16", AQKV), M=attn_bwd("m"), D=("randn", "float32", AZ * AH * AN, 0.1),
         stride_z=AH * AN * AD, stride_h=AN * AD, stride_tok=AD, stride_d=1, H=AH, N_CTX=AN),
    # fp32 sums of up to 4096 products in another order, exp2 to an ulp;
    # fp16 out.
    (AN // 128, 1, AZ * AH), ["DQ", "DK", "DV"], bytes=2 * 7 * AQKV + 8 * AZ * AH * AN,
    flops=5 * AZ * AH * AN * AN * AD, tol=2e-2, stubs=INTEL_STUBS))

# The tensor-descriptor GEMM (gemm_benchmark.py) on Llama-3-8B's gate/up
# projection with the weight as stored ([28672, 4096], transpose_b): bf16 x
# bf16 -> fp32 [8192, 28672], every size and stride a constexpr; 256 x 128 x
# 32, GROUP 4, 32 warps, 3 stages (MANIFEST.twelfth). Grid: the tiles.
M, N, K = 8192, 28672, 4096
CASES.append(case(
    "intel_gemm_tdesc_llama3_up_bt", INTEL + "gemm_benchmark.py", "matmul_kernel_with_tensor_descriptors",
    f"a_ptr=*bf16, b_ptr=*bf16, c_ptr=*fp32, M={M}, N={N}, K={K}, stride_am={K}, stride_ak=1, stride_bk=1, "
    f"stride_bn={K}, stride_cm={N}, stride_cn=1, BLOCK_SIZE_M=256, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, "
    "GROUP_SIZE_M=4, transpose_a=False, transpose_b=True, num_warps=32, num_stages=3",
    dict(a_ptr=("randn", "bfloat16", M * K), b_ptr=("randn", "bfloat16", N * K, 0.02),
         c_ptr=("zeros", "float32", M * N)),
    # fp32 sums of 4096 products in another order; fp32 out.
    (cdiv(M, 256) * cdiv(N, 128),), ["c_ptr"], bytes=2 * (M * K + N * K) + 4 * M * N, flops=2 * M * N * K,
    tol=1e-3, stubs=INTEL_STUBS))

# Split-K (gemm_splitk_benchmark.py) on its tall-K shape: bf16 [512, 32768]
# x [32768, 8192] -> fp32, SPLIT_K 4, each split's partial tile atomically
# added (relaxed) into C, which every run starts at zero; its one config at
# 256 x 128 x 32 (MANIFEST.twelfth), GROUP_M 4, 32 warps, 4 stages. Grid
# (tiles, SPLIT_K).
M, N, K = 512, 8192, 32768
CASES.append(case(
    "intel_gemm_splitk4_512x8192x32768", INTEL + "gemm_splitk_benchmark.py", "_kernel",
    f"A=*bf16, B=*bf16, C=*fp32, M={M}, N={N}, K={K}, stride_am={K}, stride_ak=1, stride_bk={N}, stride_bn=1, "
    f"stride_cm={N}, stride_cn=1, acc_dtype=tl.float32, BLOCK_M=256, BLOCK_N=128, BLOCK_K=32, GROUP_M=4, "
    "SPLIT_K=4, num_warps=32, num_stages=4",
    dict(A=("randn", "bfloat16", M * K), B=("randn", "bfloat16", K * N, 0.02), C=("zeros", "float32", M * N)),
    # fp32 sums of 32768 products in another order (four atomic partials in
    # any order); fp32 out.
    (cdiv(M, 256) * cdiv(N, 128), 4), ["C"], bytes=2 * (M * K + K * N) + 4 * 4 * M * N, flops=2 * M * N * K,
    tol=1e-3, reset=["C"], stubs=INTEL_STUBS))

# GEMM + SwiGLU fused (fused_gemm_benchmark.py) on Llama-3-8B's FFN input
# side: y = silu(x w_g + b_g) * (x w_fc + b_fc), x [8192, 4096], w_g and
# w_fc [4096, 14336], biases [14336], all bf16; two accumulators a tile.
# Two configs (MANIFEST.twelfth): 128 x 128 x 64, GROUP 8, 3 stages, 8 warps;
# and the benchmark's first autotune config, 128 x 64 x 32, GROUP 4, 2
# stages, 8 warps (its two accumulating dots then complete at one wait).
# Grid: the tiles.
M, N, K = 8192, 14336, 4096
for cid, bn, bk, group, stages in (("intel_fused_gemm_swiglu_llama3", 128, 64, 8, 3),
                                   ("intel_fused_gemm_swiglu_llama3_s2", 64, 32, 4, 2)):
    CASES.append(case(
        cid, INTEL + "fused_gemm_benchmark.py", "fused_gemm_swiglu_kernel",
        "x_ptr=*bf16, w_g_ptr=*bf16, w_fc_ptr=*bf16, b_g_ptr=*bf16, b_fc_ptr=*bf16, y_ptr=*bf16, M=i32, N=i32, "
        f"K=i32, BLOCK_SIZE_M=128, BLOCK_SIZE_N={bn}, BLOCK_SIZE_K={bk}, GROUP_SIZE_M={group}, num_warps=8, "
        f"num_stages={stages}",
        dict(x_ptr=("randn", "bfloat16", M * K), w_g_ptr=("randn", "bfloat16", K * N, 0.02),
             w_fc_ptr=("randn", "bfloat16", K * N, 0.02), b_g_ptr=("randn", "bfloat16", N, 0.1),
             b_fc_ptr=("randn", "bfloat16", N, 0.1), y_ptr=("zeros", "bfloat16", M * N), M=M, N=N, K=K),
        # fp32 sums of 4096 products in another order, fast exp and divide;
        # bf16 out.
        (cdiv(M, 128) * cdiv(N, bn),), ["y_ptr"], bytes=2 * (M * K + 2 * K * N + 2 * N + M * N),
        flops=4 * M * N * K, tol=1e-2, stubs=INTEL_STUBS))

# --- ArcticTraining (arctic_training/model/moe/moe_gemm.py) ------------------------------
# The persistent grouped GEMM of its MoE on Qwen3-30B-A3B's gate/up
# projection: 4096 tokens x top-8 = 32768 expert rows, 256 for each of the
# 128 experts (the kernel assumes full tiles), bf16 rows [32768, 2048] times
# each expert's [2048, 1536] weight, out bf16 (through fp16, as the kernel
# casts); rows_cumsum the int64 cumulative row counts. The first autotune
# config (128 x 128 x 32, NUM_SM 84, Triton's default 4 warps and 3 stages,
# MANIFEST.twelfth). Grid (NUM_SM,). Its expert lookup after a program's
# first tile (`(row) // cur_m` with cur_m the previous expert's cumsum) is
# the kernel's own: both sides compute it alike.
AT_E, AT_ROWS, AT_K, AT_N = 128, 256, 2048, 1536
AT_M = AT_E * AT_ROWS
CASES.append(case(
    "arctic_grouped_gemm_qwen3_30b_up", TRL + "arctic_training/arctic_training/model/moe/moe_gemm.py",
    "grouped_matmul_kernel",
    "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, rows_cumsum_ptr=*i64, m=i32, k=i32, n=i32, group_size=i32, "
    "NUM_SM=84, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, num_warps=4, num_stages=3",
    dict(a_ptr=("randn", "bfloat16", AT_M * AT_K), b_ptr=("randn", "bfloat16", AT_E * AT_K * AT_N, 0.02),
         c_ptr=("zeros", "bfloat16", AT_M * AT_N),
         rows_cumsum_ptr=lambda torch, gen: torch.arange(1, AT_E + 1, device=gen.device) * AT_ROWS,
         m=AT_M, k=AT_K, n=AT_N, group_size=AT_E),
    # fp32 sums of 2048 products in another order; fp16 then bf16 out.
    (84,), ["c_ptr"], bytes=2 * (AT_M * AT_K + AT_E * AT_K * AT_N + AT_M * AT_N), flops=2 * AT_M * AT_N * AT_K,
    tol=1e-2, package=TRL + "arctic_training"))

# --- Fast-LLM (fast_llm/functional/triton) -----------------------------------------------
# Imported as fast_llm.functional.triton.X from tests/realworld/fast_llm;
# kilnc gets the library's files as --src (its `triton_jit` and `tl_*`
# names come from fast_llm/functional/triton/__init__.py). On the Triton
# side that package is a stand-in with what its __init__ leaves on a CUDA
# machine (triton_jit() is triton.jit, tl_arange tl.arange, ...), built when
# the runner first reads it (this file imports without triton); the
# package's real modules load from its directory. fast_llm.utils (Python
# 3.12 generics) and the modules the sample does not carry (functional.utils,
# tensor) are stand-ins for the names the files import for their hosts.
FL_ROOT = TRL + "fast_llm"
FL = FL_ROOT + "/fast_llm/functional/triton/"
FL_SRCS = sorted(os.path.relpath(os.path.join(d, f), REPO)
                 for d, _, files in os.walk(os.path.join(REPO, FL_ROOT, "fast_llm"))
                 for f in files if f.endswith(".py"))


class _FastLLMTriton:
    """fast_llm.functional.triton's names, as a mapping the runner copies
    into the stand-in module (keys, then each value: triton imported then)."""

    NAMES = ("__path__", "triton", "tl", "tl_constexpr", "TritonConfig", "triton_jit", "triton_autotune",
             "triton_available", "triton_interpret", "tl_arange", "tl_full", "tl_zeros")

    def keys(self):
        return list(self.NAMES)

    def __getitem__(self, name):
        import triton
        import triton.language as tl
        return dict(__path__=[os.path.join(REPO, FL)], triton=triton, tl=tl, tl_constexpr=tl.constexpr,
                    TritonConfig=triton.Config, triton_jit=triton.jit, triton_autotune=triton.autotune,
                    triton_available=True, triton_interpret=False, tl_arange=tl.arange, tl_full=tl.full,
                    tl_zeros=tl.zeros)[name]


FL_RULES = dict(
    package=FL_ROOT, srcs=FL_SRCS,
    stubs={"fast_llm.functional.triton": _FastLLMTriton(),
           "fast_llm.utils": dict(Assert=None, div=lambda x, y: x // y, InvalidObject=None, try_decorate=None),
           "fast_llm.functional.utils": dict(reduce_losses=None, wrap_forward_backward=lambda *a, **k: None),
           "fast_llm.tensor": dict(param_get_and_unset_is_zero=None)})

# The dense GEMM (sparse_linear.py, what output_sparse_matmul falls back to
# without a sparse map) on Llama-3-8B's up projection: bf16 [8192, 4096] x
# [4096, 14336] -> bf16, unmasked (every size divides), every size and
# stride a constexpr; the first autotune config (128 x 256 x 64, GROUP 8, 3
# stages, 8 warps). Grid (row blocks, column blocks), swizzled in the
# kernel.
M, N, K = 8192, 14336, 4096
CASES.append(case(
    "fastllm_dense_matmul_llama3_up", FL + "sparse_linear.py", "dense_matmul_kernel",
    f"lhs_ptr=*bf16, rhs_ptr=*bf16, out_ptr=*bf16, row_dim={M}, col_dim={N}, inner_dim={K}, lhs_stride_row={K}, "
    f"lhs_stride_inner=1, rhs_stride_inner={N}, rhs_stride_col=1, out_stride_row={N}, out_stride_col=1, "
    "accumulate=False, masked=False, block_size_row=128, block_size_col=256, block_size_inner=64, "
    "group_size_row=8, num_warps=8, num_stages=3",
    dict(lhs_ptr=("randn", "bfloat16", M * K), rhs_ptr=("randn", "bfloat16", K * N, 0.02),
         out_ptr=("zeros", "bfloat16", M * N)),
    # fp32 sums of 4096 products in another order; bf16 out.
    (M // 128, N // 256), ["out_ptr"], bytes=2 * (M * K + K * N + M * N), flops=2 * M * N * K, tol=1e-2,
    **FL_RULES))

# The output-sparse GEMM: Mixtral-8x7B's dropless MoE layer 1 (8192 tokens,
# top-2 of 8 experts), lhs the sparse rows [17408, 4096] (each expert's rows
# padded to a multiple of 128, 17408 = 16384 + 8 x 128 rows allocated),
# rhs [4096, 8 x 28672], out [17408, 28672]; expert_ends the int16 padded
# ends of a random routing (blocks past the last end return). First autotune
# config (128 x 256 x 64, GROUP 8, 3 stages, 8 warps). Grid (row blocks,
# column blocks). FLOPs: the 16384 routed rows.
FR, FE, FT, FD, FF = 17408, 8, 8192, 4096, 28672


def _fl_expert_ends(torch, gen):
    g = torch.Generator(device=gen.device).manual_seed(1)
    experts = torch.rand(FT, FE, generator=g, device=gen.device).argsort(dim=1)[:, :2].reshape(-1)
    padded = (torch.bincount(experts, minlength=FE) + 127) // 128 * 128
    return padded.cumsum(0).to(torch.int16)


CASES.append(case(
    "fastllm_output_sparse_matmul_mixtral_w1", FL + "sparse_linear.py", "output_sparse_matmul_kernel",
    f"lhs_ptr=*bf16, rhs_ptr=*bf16, out_ptr=*bf16, expert_ends_ptr=*i16, row_dim={FR}, col_sparse_dim={FF}, "
    f"inner_dim={FD}, sparse_dim={FE}, padded_sparse_dim={FE}, lhs_stride_row={FD}, lhs_stride_inner=1, "
    f"rhs_stride_inner={FE * FF}, rhs_stride_col=1, out_stride_row={FF}, out_stride_col=1, accumulate=False, "
    "block_size_row=128, block_size_col=256, block_size_inner=64, group_size_row=8, num_warps=8, num_stages=3",
    dict(lhs_ptr=("randn", "bfloat16", FR * FD), rhs_ptr=("randn", "bfloat16", FD * FE * FF, 0.02),
         out_ptr=("zeros", "bfloat16", FR * FF), expert_ends_ptr=_fl_expert_ends),
    # fp32 sums of 4096 products in another order; bf16 out.
    (FR // 128, FF // 256), ["out_ptr"], bytes=2 * (FR * FD + FD * FE * FF + FR * FF),
    flops=2 * 2 * FT * FF * FD, tol=1e-2, **FL_RULES))

# Cross entropy from int64 labels, forward and backward fused (the
# gradient into its own buffer), Llama-3-8B's vocabulary 128256, 8192
# tokens of bf16 logits; block 32768 (next_power_of_2 capped) and 16 warps
# from the launcher; grad_losses 1 / 8192. One program a row.
R, V = 8192, 128256
CASES.append(case(
    "fastllm_cross_entropy_fwd_bwd_llama3", FL + "entropy_loss.py",
    "triton_cross_entropy_forward_backward_from_labels_kernel",
    f"logits_ptr=*bf16, labels_ptr=*i64, n_cols={V}, logits_stride_0={V}, block_size=32768, losses_ptr=*fp32, "
    f"max_logits_ptr=None, sum_exp_logits_ptr=None, grad_losses=fp32, grad_logits_ptr=*bf16, "
    f"grad_logits_stride_0={V}, col_min=0, logits_scale_factor=1.0, accumulate=False, num_warps=16",
    dict(logits_ptr=("randn", "bfloat16", R * V), labels_ptr=("index", "int64", R, V),
         losses_ptr=("zeros", "float32", R), grad_losses=1.0 / R, grad_logits_ptr=("zeros", "bfloat16", R * V)),
    # exp and log (approximate in both), the row sums in another order;
    # bf16 gradient out.
    (R,), ["losses_ptr", "grad_logits_ptr"], bytes=2 * 2 * R * V + 8 * R + 4 * R, tol=1e-2, **FL_RULES))

# RMS norm forward (has_bias False, a weight), bf16 [8192, 4096], fp32
# inverse deviation out; block 4096 and 8 warps from the launcher
# (min(block / 256, 8)); eps 1e-5. One program a row.
R, C = 8192, 4096
CASES.append(case(
    "fastllm_rms_norm_fwd", FL + "normalization.py", "triton_normalization_forward_kernel",
    "input_ptr=*bf16, output_ptr=*bf16, weight_ptr=*bf16, bias_ptr=None, inv_var_ptr=*fp32, n_cols=i32, "
    f"eps=fp32, has_bias=False, has_weight=True, zero_centered=False, block_size={C}, num_warps=8",
    dict(input_ptr=("randn", "bfloat16", R * C), output_ptr=("zeros", "bfloat16", R * C),
         weight_ptr=("randn", "bfloat16", C), inv_var_ptr=("zeros", "float32", R), n_cols=C, eps=1e-5),
    # rsqrt-free 1 / sqrt (both), the row sum in another order; bf16 out.
    (R,), ["output_ptr", "inv_var_ptr"], bytes=2 * 2 * R * C + 2 * C + 4 * R, tol=1e-2, **FL_RULES))

# Rotary forward on Llama-3-8B's queries [4, 4096, 32, 128] bf16 (rotary dim
# 64: the first and second halves of each head), fp32 precomputed
# frequencies [4096, 2 x 64] (cos then sin, uniform in [-1, 1] here),
# written to a separate buffer (the launcher's inplace=False);
# rotary_block_size 64, head_block_size 1024 / 64 = 16. Grid (batch x seq,
# 32 / 16).
RB, RS, RH, RD = 4, 4096, 32, 128
RQ = RB * RS * RH * RD
CASES.append(case(
    "fastllm_rotary_fwd_llama3_q", FL + "rotary.py", "triton_rotary_kernel",
    "input_ptr=*bf16, output_ptr=*bf16, frequencies_ptr=*fp32, stride_0=i32, stride_1=i32, stride_2=i32, "
    f"rotary_dim={RD // 2}, num_heads={RH}, rotary_block_size={RD // 2}, head_block_size=16, seq_len={RS}, "
    "backward=False",
    dict(input_ptr=("randn", "bfloat16", RQ), output_ptr=("zeros", "bfloat16", RQ),
         frequencies_ptr=("uniform", "float32", RS * RD, -1.0, 1.0), stride_0=RS * RH * RD, stride_1=RH * RD,
         stride_2=RD),
    # Two fp32 products and a sum an element; bf16 out.
    (RB * RS, RH // 16), ["output_ptr"], bytes=2 * 2 * RQ + 4 * RS * RD, tol=1e-2, **FL_RULES))

# Adam on a 16 Mi-element fp32 shard (params, grads, both moments updated
# in place), step 10 of lr 3e-4, betas 0.9 / 0.95, weight decay 0.1, eps
# 1e-8, grad scale 1 (fp32 tensor), the no-op flag 0; block 1024
# (POINTWISE_BLOCK_SIZE). Grid (numel / 1024,).
NA = 16777216
LR, B1, B2, STEP, WD = 3e-4, 0.9, 0.95, 10, 0.1
CASES.append(case(
    "fastllm_adam_16m", FL + "adam.py", "triton_adam_kernel",
    "params_ptr=*fp32, grads_ptr=*fp32, exp_avgs_ptr=*fp32, exp_avg_sqs_ptr=*fp32, noop_flag_ptr=*i32, "
    "scale_ptr=*fp32, step_size=fp32, beta1=fp32, beta2=fp32, bias_correction=fp32, decay_factor=fp32, "
    f"epsilon=fp32, numel={NA}, block_size=1024",
    dict(params_ptr=("randn", "float32", NA, 0.02), grads_ptr=("randn", "float32", NA, 1e-3),
         exp_avgs_ptr=("randn", "float32", NA, 1e-3), exp_avg_sqs_ptr=("uniform", "float32", NA, 0.0, 1e-6),
         noop_flag_ptr=("zeros", "int32", 1), scale_ptr=("full", "float32", 1, 1.0), step_size=LR / (1 - B1 ** STEP),
         beta1=B1, beta2=B2, bias_correction=(1 - B2 ** STEP) ** 0.5, decay_factor=1 - LR * WD, epsilon=1e-8),
    # sqrt and a division (IEEE in both); fp32 out.
    (NA // 1024,), ["params_ptr", "exp_avgs_ptr", "exp_avg_sqs_ptr"], bytes=4 * 7 * NA, tol=1e-5, **FL_RULES))
