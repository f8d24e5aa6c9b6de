"""Real-world attention forwards and GEMMs (bench/realworld_cases.py says what
a case is): Tri Dao's Triton FlashAttention and kernl's attention forwards,
FlagGems' mm and bmm, xformers' tiled matmul and kernl's fused linear layer
and batched matmul, each at its host's launch configuration (or, where an
autotuner picks it, the config of its list named beside the case) for an
LLM-sized problem: 4 x 32 heads x 4096 tokens for attention, 4096^3 for a
GEMM. `flops` counts the useful work: 2*M*N*K for a GEMM, 4*B*H*S*S*D for
attention, halved when causal.
"""

import os

from realworld_case_rules import TRL, case, cdiv

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = []
PENDING = []  # cases not run, each saying why (see the comment above each)

KERNL = TRL + "kernl/src/kernl/implementations/"
FLAGGEMS_ROOT = TRL + "flaggems/src"
FLAGGEMS = FLAGGEMS_ROOT + "/flag_gems/"

# Stand-ins for what FlagGems' ops modules import and the sample does not
# carry: its `runtime` package (tuned configs, heuristics, device module),
# mm's stream-K variant, and its `utils` package, whose __init__ imports
# modules absent here (pointwise_dynamic, triton_driver_helper, ...).
# `utils` is stubbed as a package over the sample's directory, so that
# `from flag_gems.utils import triton_lang_extension as tle` loads the real
# module (its jit program_id, which the kernels call); libentry() and
# libtuner(...) become identity decorators (the runner launches the kernel's
# JITFunction with the case's config either way).
FLAGGEMS_STUBS = {
    "flag_gems.runtime": dict(get_tuned_config=lambda op: [], get_heuristic_config=lambda op: {},
                              torch_device_fn=None),
    "flag_gems.ops.mm_streamk": dict(streamk_mm=None),
    "flag_gems.utils": dict(__path__=[os.path.join(REPO, FLAGGEMS, "utils")],
                            libentry=lambda: (lambda fn: fn), libtuner=lambda *a, **k: (lambda fn: fn)),
    "flag_gems.utils.triton_lang_helper": dict(use_tl_extra=lambda fn: fn),
}


# Tri Dao's Triton FlashAttention forward (flash_attn_triton.py, the
# [batch, seqlen, heads, d] layout, no bias), fp16: batch 4 x 4096 tokens,
# 32 heads of 64 and 16 heads of 128, without and with the causal mask. Its
# host's config: 128 x 128 tiles, 1 stage, 4 warps at head dim 64 and 8 at
# 128; EVEN_M, EVEN_N and EVEN_HEADDIM True from its heuristics at these
# sizes; Lse and the TMP scratch [batch, heads, seqlen rounded up to 128] as
# the host allocates them (the kernel stores each row's rescale factor to
# TMP and loads it back).
# PENDING: the kernel calls tl.dot(q, k, trans_b=True), Triton 2.0's form;
# Triton 3.6's tl.dot has no trans_b (dot() got an unexpected keyword
# argument), so upstream cannot compile it and there is nothing to compare
# or time against. kilnc compiles all four (it reads trans_b as tl.trans).
B, S = 4, 4096
for D, H in ((64, 32), (128, 16)):
    for causal in (False, True):
        PENDING.append(case(
            f"flash_attn_triton_fwd_d{D}_{'causal' if causal else 'noncausal'}_fp16",
            TRL + "flash_attn/flash_attn/flash_attn_triton.py", "_fwd_kernel",
            "Q=*fp16, K=*fp16, V=*fp16, Bias=None, Out=*fp16, Lse=*fp32, TMP=*fp32, softmax_scale=fp32, "
            "stride_qb=i32, stride_qh=i32, stride_qm=i32, stride_kb=i32, stride_kh=i32, stride_kn=i32, "
            "stride_vb=i32, stride_vh=i32, stride_vn=i32, stride_bb=i32, stride_bh=i32, stride_bm=i32, "
            "stride_ob=i32, stride_oh=i32, stride_om=i32, nheads=i32, seqlen_q=i32, seqlen_k=i32, "
            "seqlen_q_rounded=i32, headdim=i32, CACHE_KEY_SEQLEN_Q=i32, CACHE_KEY_SEQLEN_K=i32, "
            f"BIAS_TYPE='none', IS_CAUSAL={causal}, BLOCK_HEADDIM={D}, EVEN_M=True, EVEN_N=True, "
            f"EVEN_HEADDIM=True, BLOCK_M=128, BLOCK_N=128, num_warps={4 if D <= 64 else 8}, num_stages=1",
            dict(Q=("randn", "float16", B * S * H * D), K=("randn", "float16", B * S * H * D),
                 V=("randn", "float16", B * S * H * D), Out=("zeros", "float16", B * S * H * D),
                 Lse=("zeros", "float32", B * H * cdiv(S, 128) * 128),
                 TMP=("zeros", "float32", B * H * cdiv(S, 128) * 128), softmax_scale=D ** -0.5,
                 stride_qb=S * H * D, stride_qh=D, stride_qm=H * D, stride_kb=S * H * D, stride_kh=D,
                 stride_kn=H * D, stride_vb=S * H * D, stride_vh=D, stride_vn=H * D,
                 stride_bb=0, stride_bh=0, stride_bm=0,  # no bias: the host's zeros
                 stride_ob=S * H * D, stride_oh=D, stride_om=H * D, nheads=H, seqlen_q=S, seqlen_k=S,
                 seqlen_q_rounded=cdiv(S, 128) * 128, headdim=D, CACHE_KEY_SEQLEN_Q=S // 32,
                 CACHE_KEY_SEQLEN_K=S // 32),
            # exp, log and row sums in another order; fp16 out.
            (cdiv(S, 128), B * H), ["Out", "Lse", "TMP"],
            bytes=2 * 4 * B * S * H * D + 2 * 4 * B * H * S, tol=1e-2,
            flops=4 * B * H * S * S * D // (2 if causal else 1)))

# kernl's attention forward (attention.py, the [batch, heads, seqlen, d]
# layout, no mask), fp16: batch 4 x 32 heads x 4096 tokens, head dim 64,
# without and with the causal mask. Its host's config: 128 x 128 tiles
# (BLOCK_M == BLOCK_N, as its causal loop bound assumes), 4 warps at head
# dim 64, 2 stages; no load masks at 4096 tokens.
B, H, S, D = 4, 32, 4096, 64
for causal in (False, True):
    CASES.append(case(
        f"kernl_attention_fwd_{'causal' if causal else 'noncausal'}_fp16", KERNL + "attention.py", "_fwd_kernel",
        "head_size=i32, m_size=i32, n_size=i32, cache_key_m_size=i32, cache_key_n_size=i32, q_ptr=*fp16, "
        "k_ptr=*fp16, v_ptr=*fp16, sm_scale=fp32, attention_mask_ptr=None, output_ptr=*fp16, "
        "q_batch_stride=i32, q_head_stride=i32, q_m_stride=i32, q_k_stride=i32, k_batch_stride=i32, "
        "k_head_stride=i32, k_n_stride=i32, k_k_stride=i32, v_batch_stride=i32, v_head_stride=i32, "
        "v_k_stride=i32, v_n_stride=i32, output_batch_stride=i32, output_head_stride=i32, "
        "output_row_stride=i32, output_col_stride=i32, attention_mask_batch_stride=i32, "
        "attention_mask_head_stride=i32, attention_mask_m_stride=i32, attention_mask_n_stride=i32, "
        "min_clamp_value=i32, attention_mask_batch_size=i32, attention_mask_head_size=i32, "
        "attention_mask_m_size=i32, attention_mask_n_size=i32, HAS_MASK=False, IS_MATRIX_MASK=False, "
        f"IS_CAUSAL={causal}, BLOCK_DHEAD_SIZE={D}, BLOCK_M_SIZE=128, BLOCK_N_SIZE=128, "
        "M_LOAD_MASK_NEEDED=False, N_LOAD_MASK_NEEDED=False, num_warps=4, num_stages=2",
        dict(head_size=H, m_size=S, n_size=S, cache_key_m_size=S // 32, cache_key_n_size=S // 32,
             q_ptr=("randn", "float16", B * H * S * D), k_ptr=("randn", "float16", B * H * S * D),
             v_ptr=("randn", "float16", B * H * S * D), sm_scale=D ** -0.5,
             output_ptr=("zeros", "float16", B * H * S * D),
             q_batch_stride=H * S * D, q_head_stride=S * D, q_m_stride=D, q_k_stride=1,
             k_batch_stride=H * S * D, k_head_stride=S * D, k_n_stride=D, k_k_stride=1,
             v_batch_stride=H * S * D, v_head_stride=S * D, v_k_stride=D, v_n_stride=1,
             output_batch_stride=H * S * D, output_head_stride=S * D, output_row_stride=D, output_col_stride=1,
             # No mask: the host's zero strides, sizes and clamp value.
             attention_mask_batch_stride=0, attention_mask_head_stride=0, attention_mask_m_stride=0,
             attention_mask_n_stride=0, min_clamp_value=0, attention_mask_batch_size=0,
             attention_mask_head_size=0, attention_mask_m_size=0, attention_mask_n_size=0),
        # exp and row sums in another order; fp16 out.
        (cdiv(S, 128), B * H), ["output_ptr"], bytes=2 * 4 * B * H * S * D, tol=1e-2,
        flops=4 * B * H * S * S * D // (2 if causal else 1)))

# FlagGems' mm (mm.py's mm_kernel_general: grouped launch, GROUP_M 8 from
# its host, rows and columns wrapped modulo M and N instead of masked, the
# last K block peeled off with a mask), fp16, 4096^3. Autotuned (libtuner
# over its nvidia tune_configs.yaml "mm" list): its largest tile, 128 x 128
# x 64, 3 stages, 8 warps, plausibly an H100's pick at this size.
M = N = K = 4096
CASES.append(case(
    "flaggems_mm_fp16", FLAGGEMS + "ops/mm.py", "mm_kernel_general",
    "A=*fp16, B=*fp16, C=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, "
    "stride_bn=i32, stride_cm=i32, stride_cn=i32, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, "
    "num_warps=8, num_stages=3",
    dict(A=("randn", "float16", M * K), B=("randn", "float16", K * N, K ** -0.5), C=("zeros", "float16", M * N),
         M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1),
    # fp32 sums in another order: an fp16 rounding (2^-11) or so apart.
    (cdiv(M, 128) * cdiv(N, 128),), ["C"], bytes=2 * (M * K + K * N + M * N), tol=1e-2,
    flops=2 * M * N * K, package=FLAGGEMS_ROOT, stubs=FLAGGEMS_STUBS,
    srcs=[FLAGGEMS + "utils/triton_lang_extension.py"]))

# FlagGems' bmm (bmm.py: contiguous [batch, M, K] x [batch, K, N], the batch
# on grid axis 2, its own grouped reordering over axes 0 and 1), bf16:
# batch 16 of 1024^3. Autotuned (libtuner over its "bmm" list): its largest
# tile, 128 x 128 x 32 with GROUP_M 2, 4 warps, 3 stages, plausibly an
# H100's pick; DIVISIBLE_M/N/K True from its heuristics at these sizes.
BT, M, N, K = 16, 1024, 1024, 1024
CASES.append(case(
    "flaggems_bmm_bf16", FLAGGEMS + "ops/bmm.py", "bmm_kernel",
    "A=*bf16, B=*bf16, O=*bf16, M=i32, N=i32, K=i32, TILE_M=128, TILE_N=128, TILE_K=32, GROUP_M=2, "
    "DIVISIBLE_M=True, DIVISIBLE_N=True, DIVISIBLE_K=True, num_warps=4, num_stages=3",
    dict(A=("randn", "bfloat16", BT * M * K), B=("randn", "bfloat16", BT * K * N, K ** -0.5),
         O=("zeros", "bfloat16", BT * M * N), M=M, N=N, K=K),
    # fp32 sums in another order: a bf16 rounding (2^-8) apart.
    (cdiv(M, 128), cdiv(N, 128), BT), ["O"], bytes=2 * BT * (M * K + K * N + M * N), tol=1e-2,
    flops=2 * BT * M * N * K, package=FLAGGEMS_ROOT, stubs=FLAGGEMS_STUBS,
    srcs=[FLAGGEMS + "utils/triton_lang_extension.py"]))

# xformers' tiled matmul (tiled_matmul_kernels.py: up to 3 x 3 blocks of A,
# B and C in one launch, each program picking its block's pointers, sizes
# and strides with tl.where), fp16, as a fused QKV projection runs it: 4096
# tokens x 4096 through Llama-2-7B's three 4096 x 4096 weights, A one block
# and B and C three columns (its _launch_triton_matmul: the nn.Linear
# weights passed transposed, [K, N] views of [N, K], so stride_bk 1; the
# padding rows and columns of sizes 0 and strides 0 / 1 as _get_strides
# pads them). The host passes the one A and the three B and C blocks again
# in the unused slots; here those slots get small buffers of their own,
# which no program reads (M2 = M3 = K2 = K3 = 0). Autotuned with a perf
# model: its first config, 128 x 256 x 32, 3 stages, 8 warps, GROUP_M 8,
# SPLIT_K 1; EVEN_K from its heuristic, ACC_TYPE fp32 from its host.
M, N, K = 4096, 4096, 4096
dummy = ("zeros", "float16", 8)
blocks = dict(A11=("randn", "float16", M * K),
              B11=("randn", "float16", N * K, K ** -0.5), B12=("randn", "float16", N * K, K ** -0.5),
              B13=("randn", "float16", N * K, K ** -0.5),
              C11=("zeros", "float16", M * N), C12=("zeros", "float16", M * N), C13=("zeros", "float16", M * N))
names = [f"{t}{i}{j}" for t in "ABC" for i in (1, 2, 3) for j in (1, 2, 3)]
CASES.append(case(
    "xformers_tiled_matmul_qkv_fp16", TRL + "xformers/xformers/ops/_triton/tiled_matmul_kernels.py",
    "_xformers_tiled_matmul_kernel",
    "".join(f"{n}=*fp16, " for n in names)
    + "".join(f"{s}{i}=i32, " for s in ("M", "N", "K") for i in (1, 2, 3))
    + "".join(f"stride_{s}{i}=i32, " for s in ("am", "ak", "bk", "bn", "cm", "cn") for i in (1, 2, 3))
    + "BLOCK_M=128, BLOCK_N=256, BLOCK_K=32, GROUP_M=8, SPLIT_K=1, EVEN_K=True, ACC_TYPE=tl.float32, "
    "num_warps=8, num_stages=3",
    dict({n: blocks.get(n, dummy) for n in names},
         M1=M, M2=0, M3=0, N1=N, N2=N, N3=N, K1=K, K2=0, K3=0,
         stride_am1=K, stride_am2=0, stride_am3=0, stride_ak1=1, stride_ak2=1, stride_ak3=1,
         stride_bk1=1, stride_bk2=1, stride_bk3=1, stride_bn1=K, stride_bn2=0, stride_bn3=0,
         stride_cm1=N, stride_cm2=N, stride_cm3=N, stride_cn1=1, stride_cn2=1, stride_cn3=1),
    # fp32 sums in another order: an fp16 rounding (2^-11) or so apart.
    (cdiv(M, 128) * 3 * cdiv(N, 256), 1), ["C11", "C12", "C13"],
    bytes=2 * (M * K + 3 * K * N + 3 * M * N), tol=1e-2, flops=2 * M * 3 * N * K,
    # Imported by the file for its autotuner's pruning and perf model
    # (Triton's old matmul_perf_model), absent here.
    stubs={"xformers.ops._triton.matmul_perf_model": dict(early_config_prune=None, estimate_matmul_time=None)}))

# kernl's fused linear layer (linear_layer.py's kernel_fma: x @ W^T + bias,
# then an optional activation), fp16 with bias and its default activation
# (none, ""), no saved pre-activation, as its linear_layer calls it: 4096
# tokens x 4096 -> 4096, the nn.Linear weight [N, K] (K contiguous). Its K
# loop counts down (`range(K, 0, -BLOCK_K)`). Autotuned with a perf model:
# its first config, 128 x 256 x 32, 3 stages, 8 warps, GROUP_M 8 from its
# host; K_LOAD_MASK_NEEDED True (no mask: its heuristic's inverted name).
M, N, K = 4096, 4096, 4096
CASES.append(case(
    "kernl_linear_bias_fp16", KERNL + "linear_layer.py", "kernel_fma",
    "C=*fp16, ACT_INPUTS=None, A=*fp16, B=*fp16, bias=*fp16, M=i32, N=i32, K=i32, CACHE_KEY_M=i32, "
    "CACHE_KEY_N=i32, CACHE_KEY_K=i32, output_m_stride=i32, output_n_stride=i32, act_inputs_m_stride=i32, "
    "act_inputs_n_stride=i32, a_m_stride=i32, a_k_stride=i32, b_n_stride=i32, b_k_stride=i32, BLOCK_M=128, "
    "GROUP_M=8, BLOCK_N=256, BLOCK_K=32, SPLIT_K=1, K_LOAD_MASK_NEEDED=True, HAS_BIAS=True, "
    "SHOULD_SAVE_ACT_INPUTS=False, ACTIVATION='', num_warps=8, num_stages=3",
    dict(C=("zeros", "float16", M * N), A=("randn", "float16", M * K), B=("randn", "float16", N * K, K ** -0.5),
         bias=("randn", "float16", N, 0.1), M=M, N=N, K=K, CACHE_KEY_M=M // 32, CACHE_KEY_N=N // 32,
         CACHE_KEY_K=K // 32, output_m_stride=N, output_n_stride=1, act_inputs_m_stride=0,
         act_inputs_n_stride=0, a_m_stride=K, a_k_stride=1, b_n_stride=K, b_k_stride=1),
    # fp32 sums in another order: an fp16 rounding (2^-11) or so apart.
    (cdiv(M, 128) * cdiv(N, 256),), ["C"], bytes=2 * (M * K + N * K + M * N + N), tol=1e-2,
    flops=2 * M * N * K, package=TRL + "kernl/src", srcs=[KERNL + "activation_func.py"],
    # Imported by the file for its autotuner (Triton 2's triton.ops, gone
    # from Triton 3).
    stubs={"triton.ops.matmul_perf_model": dict(early_config_prune=None, estimate_matmul_time=None)}))

# kernl's batched matmul (batched_matmul.py: the batch on grid axis 1,
# grouped launch, masked loads), fp16: batch 16 of 1024^3. Autotuned: its
# first config, 128 x 256 x 32, GROUP_M 8, 2 stages, 8 warps.
BT, M, N, K = 16, 1024, 1024, 1024
CASES.append(case(
    "kernl_batched_matmul_fp16", KERNL + "batched_matmul.py", "matmul_kernel",
    "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, m_size=i32, n_size=i32, k_size=i32, a_batch_stride=i32, "
    "a_m_stride=i32, a_k_stride=i32, b_batch_stride=i32, b_k_stride=i32, b_n_stride=i32, c_batch_stride=i32, "
    "c_m_stride=i32, c_n_stride=i32, BLOCK_M_SIZE=128, BLOCK_N_SIZE=256, BLOCK_K_SIZE=32, GROUP_M_SIZE=8, "
    "num_warps=8, num_stages=2",
    dict(a_ptr=("randn", "float16", BT * M * K), b_ptr=("randn", "float16", BT * K * N, K ** -0.5),
         c_ptr=("zeros", "float16", BT * M * N), m_size=M, n_size=N, k_size=K, a_batch_stride=M * K,
         a_m_stride=K, a_k_stride=1, b_batch_stride=K * N, b_k_stride=N, b_n_stride=1, c_batch_stride=M * N,
         c_m_stride=N, c_n_stride=1),
    # fp32 sums in another order: an fp16 rounding (2^-11) or so apart.
    (cdiv(M, 128) * cdiv(N, 256), BT), ["c_ptr"], bytes=2 * BT * (M * K + K * N + M * N), tol=1e-2,
    flops=2 * BT * M * N * K))
