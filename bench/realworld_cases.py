"""The cases of bench/realworld_cubins.py: kernels from the tutorials and the
real-world samples (tests/realworld/), memory-bound ones first, then
tensor-core ones (GEMMs, attention, a chunked scan: kernels of tl.dot),
then a third batch of both (Mamba-2, decode attention, MoE, int4 and fp8
GEMMs, NF4 dequantization), at the sizes and launch configurations their
own host code picks for an LLM-sized problem (4096-8192 rows; 4096 tokens,
4 x 32 heads x 4096 for attention; 32-64 sequences for decode).

A case is differential_cases.py's dict (tests/gpu/differential_cases.py says
what each key means) with `file` relative to the repository root, and:

  package the directory that holds the file's top-level package, where the
          file is imported as part of one (its parent packages are made
          empty, so that their __init__ files, which import modules the
          sample does not carry, do not run)
  bytes   the bytes the kernel must move (each input read once, each output
          written once), for GB/s
  flops   for tensor-core kernels: the FLOPs, reported as TFLOP/s instead
  reset   buffers zeroed before every timed run, on both sides (locks and
          accumulators a kernel expects to start at zero)
  stubs   module name -> attributes: stand-ins for modules the file imports
          (for its host code) that the sample does not carry
  srcs    the library's other files the kernel imports jit functions from
          (kilnc's --src)

PENDING holds cases that kilnc does not compile right yet, each saying why;
they are not run (move one to CASES once it does).

Signatures are written without alignment hints: realworld_cubins.py --list
adds the ones Triton's JIT specializes on for these arguments (`:16` for a
pointer or an integer divisible by 16, `:1` for an integer equal to 1), so
that both compilers see the same facts.
"""

from realworld_case_rules import (LIGER, SMS, TRL, TUT, case, cdiv, decay_cumsum,  # noqa: F401
                                  fp8_e4m3)

CASES = []
PENDING = []  # cases kilnc does not compile right yet (not run), each saying why

# Tutorial 02: the softmax as its host code launches it on an H200 (num_stages
# 4 with more than 200 KB of shared memory, 8 warps, a persistent grid).
R, C = 8192, 4096
CASES.append(case(
    "t02_softmax_fp32", TUT + "02-fused-softmax.py", "softmax_kernel",
    "output_ptr=*fp32, input_ptr=*fp32, input_row_stride=i32, output_row_stride=i32, n_rows=i32, "
    f"n_cols=i32, BLOCK_SIZE={C}, num_stages=4, num_warps=8",
    dict(output_ptr=("zeros", "float32", R * C), input_ptr=("randn", "float32", R * C),
         input_row_stride=C, output_row_stride=C, n_rows=R, n_cols=C),
    (SMS * 4,), ["output_ptr"], bytes=8 * R * C, tol=1e-5))

# Tutorial 04: the seeded dropout (Philox random numbers per element).
N = 1 << 25
CASES.append(case(
    "t04_seeded_dropout_fp32", TUT + "04-low-memory-dropout.py", "_seeded_dropout",
    "x_ptr=*fp32, output_ptr=*fp32, n_elements=i32, p=fp32, seed=i32, BLOCK_SIZE=1024",
    dict(x_ptr=("randn", "float32", N), output_ptr=("zeros", "float32", N), n_elements=N, p=0.5,
         seed=123),
    (cdiv(N, 1024),), ["output_ptr"], bytes=8 * N, tol=0))

# Tutorial 05: the layer-norm backward, fp16, M = N = 4096 (GROUP_SIZE_M 128,
# 8 warps): dx with the partial dw/db sums under spin locks, then their sum.
M, N, G = 4096, 4096, 128
CASES.append(case(
    "t05_layer_norm_bwd_dx_fp16", TUT + "05-layer-norm.py", "_layer_norm_bwd_dx_fused",
    "DX=*fp16, DY=*fp16, DW=*fp16, DB=*fp16, X=*fp16, W=*fp16, Mean=*fp32, Rstd=*fp32, Lock=*i32, "
    f"stride=i32, N=i32, GROUP_SIZE_M={G}, BLOCK_SIZE_N={N}, num_warps=8",
    dict(DX=("zeros", "float16", M * N), DY=("randn", "float16", M * N), DW=("zeros", "float16", G * N),
         DB=("zeros", "float16", G * N), X=("randn", "float16", M * N), W=("randn", "float16", N),
         Mean=("randn", "float32", M, 0.1), Rstd=("uniform", "float32", M, 0.5, 2.0),
         Lock=("zeros", "int32", 2 * G), stride=N, N=N),
    (M,), ["DX"], bytes=2 * 3 * M * N + 2 * 2 * 2 * G * N, tol=1e-2, reset=["DW", "DB", "Lock"]))
CASES.append(case(
    "t05_layer_norm_bwd_dwdb_fp16", TUT + "05-layer-norm.py", "_layer_norm_bwd_dwdb",
    "DW=*fp16, DB=*fp16, FINAL_DW=*fp16, FINAL_DB=*fp16, M=i32, N=i32, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128",
    dict(DW=("randn", "float16", G * N), DB=("randn", "float16", G * N),
         FINAL_DW=("zeros", "float16", N), FINAL_DB=("zeros", "float16", N), M=G, N=N),
    (cdiv(N, 128),), ["FINAL_DW", "FINAL_DB"], bytes=2 * 2 * G * N + 2 * 2 * N, tol=1e-2))

# Liger's RMSNorm (Llama casting), bf16, 8192 x 4096: forward (one row a
# program, 8 warps) and backward (a program per SM, its rows in a loop).
R, C = 8192, 4096
CASES.append(case(
    "liger_rms_norm_fwd_bf16", LIGER + "rms_norm.py", "_rms_norm_forward_kernel",
    "Y_ptr=*bf16, Y_row_stride=i32, X_ptr=*bf16, X_row_stride=i32, W_ptr=*bf16, W_row_stride=i32, "
    "RSTD_ptr=*fp32, RSTD_row_stride=i32, n_cols=i32, eps=fp32, offset=fp32, casting_mode=0, "
    f"elementwise_affine=True, BLOCK_SIZE={C}, num_warps=8",
    dict(Y_ptr=("zeros", "bfloat16", R * C), Y_row_stride=C, X_ptr=("randn", "bfloat16", R * C),
         X_row_stride=C, W_ptr=("randn", "bfloat16", C), W_row_stride=1, RSTD_ptr=("zeros", "float32", R),
         RSTD_row_stride=1, n_cols=C, eps=1e-6, offset=0.0),
    (R,), ["Y_ptr", "RSTD_ptr"], bytes=2 * 2 * R * C + 2 * C + 4 * R, tol=1e-2))
CASES.append(case(
    "liger_rms_norm_bwd_bf16", LIGER + "rms_norm.py", "_rms_norm_backward_kernel",
    "dY_ptr=*bf16, dY_row_stride=i32, dX_ptr=*bf16, dX_row_stride=i32, X_ptr=*bf16, X_row_stride=i32, "
    "X_dtype=tl.bfloat16, W_ptr=*bf16, W_row_stride=i32, RSTD_ptr=*fp32, RSTD_row_stride=i32, "
    "dW_ptr=*fp32, dW_row_stride=i32, n_rows=i32, n_cols=i32, offset=fp32, rows_per_program=i32, "
    f"casting_mode=0, elementwise_affine=True, BLOCK_SIZE={C}, num_warps=8",
    dict(dY_ptr=("randn", "bfloat16", R * C), dY_row_stride=C, dX_ptr=("zeros", "bfloat16", R * C),
         dX_row_stride=C, X_ptr=("randn", "bfloat16", R * C), X_row_stride=C,
         W_ptr=("randn", "bfloat16", C), W_row_stride=1, RSTD_ptr=("uniform", "float32", R, 0.5, 2.0),
         RSTD_row_stride=1, dW_ptr=("zeros", "float32", SMS * C), dW_row_stride=C, n_rows=R, n_cols=C,
         offset=0.0, rows_per_program=cdiv(R, SMS)),
    (SMS,), ["dX_ptr", "dW_ptr"], bytes=2 * 3 * R * C + 2 * C + 4 * R + 4 * SMS * C, tol=1e-2))

# Liger's LayerNorm forward, bf16, 8192 x 4096.
CASES.append(case(
    "liger_layer_norm_fwd_bf16", LIGER + "layer_norm.py", "_layer_norm_forward_kernel",
    "Y_ptr=*bf16, Y_row_stride=i32, X_ptr=*bf16, X_row_stride=i32, W_ptr=*bf16, W_row_stride=i32, "
    "B_ptr=*bf16, B_row_stride=i32, Mean_ptr=*fp32, Mean_row_stride=i32, RSTD_ptr=*fp32, "
    f"RSTD_row_stride=i32, n_cols=i32, eps=fp32, BLOCK_SIZE={C}, num_warps=8",
    dict(Y_ptr=("zeros", "bfloat16", R * C), Y_row_stride=C, X_ptr=("randn", "bfloat16", R * C),
         X_row_stride=C, W_ptr=("randn", "bfloat16", C), W_row_stride=1, B_ptr=("randn", "bfloat16", C),
         B_row_stride=1, Mean_ptr=("zeros", "float32", R), Mean_row_stride=1,
         RSTD_ptr=("zeros", "float32", R), RSTD_row_stride=1, n_cols=C, eps=1e-6),
    (R,), ["Y_ptr", "Mean_ptr", "RSTD_ptr"], bytes=2 * 2 * R * C + 4 * C + 8 * R, tol=1e-2))

# Liger's cross entropy with the gradient written over the logits, bf16,
# 4096 tokens over a 32000-word vocabulary (BLOCK_SIZE 32768, 32 warps).
R, V = 4096, 32000
CASES.append(case(
    "liger_cross_entropy_bf16", LIGER + "cross_entropy.py", "liger_cross_entropy_kernel",
    "X_ptr=*bf16, X_stride=i32, Y_ptr=*i64, Y_stride=i32, weight_ptr=None, loss_ptr=*fp32, "
    "z_loss_ptr=None, loss_stride=i32, token_accuracy_ptr=None, token_accuracy_stride=i32, "
    "predicted_tokens_ptr=None, predicted_tokens_stride=i32, n_cols=i32, n_non_ignore=i32, "
    "sum_non_ignore_weight=i32, weight_sum=fp32, ignore_index=i32, lse_square_scale=0.0, "
    "label_smoothing=0.0, reduction='mean', softcap=fp32, RETURN_Z_LOSS=False, "
    "RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False, BLOCK_SIZE=32768, HAS_WEIGHT=False, "
    "HAS_SOFTCAPPING=False, HAS_GRADIENTS=True, num_warps=32",
    dict(X_ptr=("randn", "bfloat16", R * V), X_stride=V, Y_ptr=("index", "int64", R, V), Y_stride=1,
         loss_ptr=("zeros", "float32", R), loss_stride=1, token_accuracy_stride=0,
         predicted_tokens_stride=0, n_cols=V, n_non_ignore=R, sum_non_ignore_weight=R, weight_sum=0.0,
         ignore_index=-100, softcap=0.0),
    (R,), ["X_ptr", "loss_ptr"], bytes=2 * 2 * R * V + 12 * R, tol=2e-2))

# Liger's SwiGLU forward, bf16, 4096 x 11008 (one row a program, 16 warps).
R, C = 4096, 11008
CASES.append(case(
    "liger_swiglu_fwd_bf16", LIGER + "swiglu.py", "_swiglu_forward_kernel",
    f"a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, stride=i32, gate_multiplier=fp32, n_cols={C}, "
    "BLOCK_SIZE=16384, num_warps=16",
    dict(a_ptr=("randn", "bfloat16", R * C), b_ptr=("randn", "bfloat16", R * C),
         c_ptr=("zeros", "bfloat16", R * C), stride=C, gate_multiplier=1.0),
    (R,), ["c_ptr"], bytes=2 * 3 * R * C, tol=1e-2))

# Liger's GELU-tanh GLU forward (tanh from libdevice), bf16, 4096 x 14336.
R, C = 4096, 14336
CASES.append(case(
    "liger_geglu_tanh_fwd_bf16", LIGER + "geglu.py", "_geglu_tanh_forward_kernel",
    f"a=*bf16, b=*bf16, c=*bf16, stride=i32, n_cols={C}, BLOCK_SIZE=16384, num_warps=16",
    dict(a=("randn", "bfloat16", R * C), b=("randn", "bfloat16", R * C), c=("zeros", "bfloat16", R * C),
         stride=C),
    (R,), ["c"], bytes=2 * 3 * R * C, tol=1e-2))

# Liger's fused residual add + RMSNorm forward, bf16, 8192 x 4096 (num_stages 2).
R, C = 8192, 4096
CASES.append(case(
    "liger_fused_add_rms_norm_fwd_bf16", LIGER + "fused_add_rms_norm.py", "_fused_add_rms_norm_forward_kernel",
    "Y_ptr=*bf16, Y_row_stride=i32, S_ptr=*bf16, S_row_stride=i32, X_ptr=*bf16, X_row_stride=i32, "
    "R_ptr=*bf16, R_row_stride=i32, W_ptr=*bf16, W_row_stride=i32, RSTD_ptr=*fp32, RSTD_row_stride=i32, "
    f"n_cols=i32, eps=fp32, offset=fp32, casting_mode=0, BLOCK_SIZE={C}, num_warps=8, num_stages=2",
    dict(Y_ptr=("zeros", "bfloat16", R * C), Y_row_stride=C, S_ptr=("zeros", "bfloat16", R * C),
         S_row_stride=C, X_ptr=("randn", "bfloat16", R * C), X_row_stride=C,
         R_ptr=("randn", "bfloat16", R * C), R_row_stride=C, W_ptr=("randn", "bfloat16", C), W_row_stride=1,
         RSTD_ptr=("zeros", "float32", R), RSTD_row_stride=1, n_cols=C, eps=1e-6, offset=0.0),
    (R,), ["Y_ptr", "S_ptr", "RSTD_ptr"], bytes=2 * 4 * R * C + 2 * C + 4 * R, tol=1e-2))

# Liger's KL divergence forward (batchmean), fp32, 4096 x 32000 (BLOCK_SIZE
# 16384, 16 warps, two blocks a row).
R, V = 4096, 32000
CASES.append(case(
    "liger_kldiv_fwd_fp32", LIGER + "kl_div.py", "_kldiv_kernel_forward",
    "y_ptr=*fp32, y_stride=i32, gt_ptr=*fp32, gt_stride=i32, loss_ptr=*fp32, loss_stride=i32, "
    "n_cols=i32, eps=fp32, BLOCK_SIZE=16384, log_target=False, reduction=3, num_warps=16",
    dict(y_ptr=("randn", "float32", R * V), y_stride=V, gt_ptr=("uniform", "float32", R * V, 0.0, 1.0),
         gt_stride=V, loss_ptr=("zeros", "float32", R), loss_stride=1, n_cols=V, eps=1e-10),
    (R,), ["loss_ptr"], bytes=2 * 4 * R * V + 4 * R, tol=1e-4))

# Tutorial 05's forward in its three-loop form, fp16, at the widths where
# its BLOCK_SIZE covers a row (1024, 4 warps) and where it loops (8192).
for C, block, warps in ((1024, 1024, 4), (8192, 8192, 8)):
    R = 4096
    CASES.append(case(
        f"t05_layer_norm_fwd_fp16_n{C}", TUT + "05-layer-norm.py", "_layer_norm_fwd_fused",
        f"X=*fp16, Y=*fp16, W=*fp16, B=*fp16, Mean=*fp32, Rstd=*fp32, stride=i32, N=i32, eps=fp32, "
        f"BLOCK_SIZE={block}, num_warps={warps}",
        dict(X=("randn", "float16", R * C), Y=("zeros", "float16", R * C), W=("randn", "float16", C),
             B=("randn", "float16", C), Mean=("zeros", "float32", R), Rstd=("zeros", "float32", R),
             stride=C, N=C, eps=1e-5),
        (R,), ["Y", "Mean", "Rstd"], bytes=2 * 2 * R * C + 4 * C + 8 * R, tol=1e-2))

# Tutorial 01's vector add, fp16 (the add through 16-byte vectors).
N = 1 << 28
CASES.append(case(
    "t01_vector_add_fp16", TUT + "01-vector-add.py", "add_kernel",
    "x_ptr=*fp16, y_ptr=*fp16, output_ptr=*fp16, n_elements=i32, BLOCK_SIZE=1024",
    dict(x_ptr=("randn", "float16", N), y_ptr=("randn", "float16", N), output_ptr=("zeros", "float16", N),
         n_elements=N),
    (cdiv(N, 1024),), ["output_ptr"], bytes=2 * 3 * N, tol=0))

# flash-attn's rotary embedding (not interleaved, offsets 0), fp16, batch 4,
# 4096 tokens, 32 heads of 128.
B, S, H, D = 4, 4096, 32, 128
CASES.append(case(
    "flash_attn_rotary_fp16", "tests/realworld/flash_attn/flash_attn/ops/triton/rotary.py", "rotary_kernel",
    "OUT=*fp16, X=*fp16, COS=*fp16, SIN=*fp16, CU_SEQLENS=None, SEQLEN_OFFSETS=i32, seqlen=i32, "
    "nheads=i32, seqlen_ro=i32, stride_out_batch=i32, stride_out_seqlen=i32, stride_out_nheads=i32, "
    "stride_out_headdim=i32, stride_x_batch=i32, stride_x_seqlen=i32, stride_x_nheads=i32, "
    f"stride_x_headdim=i32, ROTARY_DIM={D}, IS_SEQLEN_OFFSETS_TENSOR=False, IS_VARLEN=False, "
    "INTERLEAVED=False, CONJUGATE=False, BLOCK_H=2, BLOCK_M=8",
    dict(OUT=("zeros", "float16", B * S * H * D), X=("randn", "float16", B * S * H * D),
         COS=("uniform", "float16", S * D // 2), SIN=("uniform", "float16", S * D // 2), SEQLEN_OFFSETS=0,
         seqlen=S, nheads=H, seqlen_ro=S, stride_out_batch=S * H * D, stride_out_seqlen=H * D,
         stride_out_nheads=D, stride_out_headdim=1, stride_x_batch=S * H * D, stride_x_seqlen=H * D,
         stride_x_nheads=D, stride_x_headdim=1),
    (cdiv(H, 2), cdiv(S, 8), B), ["OUT"], bytes=2 * 2 * B * S * H * D + 2 * S * D, tol=1e-2))

# lightllm's SiLU-and-mul over [gate | up] rows, bf16, 4096 tokens x 11008
# (128 x 128 tiles, 4 warps).
M, N = 4096, 11008
CASES.append(case(
    "lightllm_silu_and_mul_bf16", "tests/realworld/lightllm/lightllm/models/llama/triton_kernel/silu_and_mul.py",
    "_silu_and_mul_kernel",
    "input_ptr=*bf16, output_ptr=*bf16, stride_input_m=i32, stride_input_n=i32, stride_output_m=i32, "
    "stride_output_n=i32, size_m=i32, size_n=i32, BLOCK_M=128, BLOCK_N=128",
    dict(input_ptr=("randn", "bfloat16", M * 2 * N), output_ptr=("zeros", "bfloat16", M * N),
         stride_input_m=2 * N, stride_input_n=1, stride_output_m=N, stride_output_n=1, size_m=M, size_n=N),
    (cdiv(M, 128), cdiv(N, 128)), ["output_ptr"], bytes=2 * 3 * M * N, tol=1e-2))


def sorted_code(torch, gen):
    """bitsandbytes' quantization map: 256 sorted levels in [-1, 1]."""
    return torch.sort(torch.rand(256, generator=gen, device="cuda") * 2 - 1).values


# bitsandbytes' 8-bit blockwise quantization (absmax per 256 values, a binary
# search of the code for each), fp16, 4096 x 4096.
N, BLOCK = 4096 * 4096, 256
CASES.append(case(
    "bnb_quantize_8bit_blockwise_fp16", "tests/realworld/bitsandbytes/bitsandbytes/backends/triton/kernels_8bit_quant.py",
    "quantize_8bit_blockwise_kernel",
    f"A_ptr=*fp16, code_ptr=*fp32, absmax_ptr=*fp16, out_ptr=*u8, n_elements=i32, BLOCK_SIZE={BLOCK}, "
    "CODE_SIZE=256, SPLIT_NUM_BLOCKS=1",
    dict(A_ptr=("randn", "float16", N), code_ptr=sorted_code, absmax_ptr=("zeros", "float16", N // BLOCK),
         out_ptr=("zeros", "uint8", N), n_elements=N),
    (N // BLOCK,), ["out_ptr", "absmax_ptr"], bytes=3 * N + 2 * (N // BLOCK), tol=0))

# lightllm's decode attention, stage 1 (paged KV gathered through a token
# table, one warp a (sequence, head, 256-token block)), fp16: 32 sequences of
# 4096 tokens, 32 query heads over 8 KV heads of 128.
B, S, H, HK, D, SEQ = 32, 4096, 32, 8, 128, 256
CASES.append(case(
    "lightllm_decode_stage1_fp16", "tests/realworld/lightllm/lightllm/models/llama/triton_kernel/flash_decoding_stage1.py",
    "_fwd_kernel_flash_decode_stage1",
    "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, Req_to_tokens=*i32, B_req_idx=*i32, B_Seqlen=*i32, "
    "Mid_O=*fp32, Mid_O_LogExpSum=*fp32, stride_req_to_tokens_b=i32, stride_req_to_tokens_s=i32, "
    "stride_qbs=i32, stride_qh=i32, stride_qd=i32, stride_kbs=i32, stride_kh=i32, stride_kd=i32, "
    "stride_vbs=i32, stride_vh=i32, stride_vd=i32, stride_mid_ob=i32, stride_mid_oh=i32, stride_mid_os=i32, "
    "stride_mid_od=i32, stride_mid_o_eb=i32, stride_mid_o_eh=i32, stride_mid_o_es=i32, gqa_group_size=i32, "
    f"BLOCK_SEQ={SEQ}, BLOCK_DMODEL={D}, BLOCK_N=16, num_warps=1, num_stages=2",
    dict(Q=("randn", "float16", B * H * D), K=("randn", "float16", B * S * HK * D),
         V=("randn", "float16", B * S * HK * D), sm_scale=D ** -0.5, Req_to_tokens=("perm", "int32", B * S),
         B_req_idx=("arange", "int32", B), B_Seqlen=("full", "int32", B, S),
         Mid_O=("zeros", "float32", B * H * (S // SEQ) * D), Mid_O_LogExpSum=("zeros", "float32", B * H * (S // SEQ)),
         stride_req_to_tokens_b=S, stride_req_to_tokens_s=1, stride_qbs=H * D, stride_qh=D, stride_qd=1,
         stride_kbs=HK * D, stride_kh=D, stride_kd=1, stride_vbs=HK * D, stride_vh=D, stride_vd=1,
         stride_mid_ob=H * (S // SEQ) * D, stride_mid_oh=(S // SEQ) * D, stride_mid_os=D, stride_mid_od=1,
         stride_mid_o_eb=H * (S // SEQ), stride_mid_o_eh=S // SEQ, stride_mid_o_es=1, gqa_group_size=H // HK),
    # q * k and its sum over d are fp16 in both compilers, summed in another order.
    (B, H, S // SEQ), ["Mid_O", "Mid_O_LogExpSum"], bytes=2 * 2 * B * S * HK * D + 4 * B * S, tol=1e-2))

# lightllm's RMSNorm (two loops over the row, 4 warps as its host picks),
# bf16, 8192 tokens x 4096.
R, C = 8192, 4096
CASES.append(case(
    "lightllm_rmsnorm_bf16", "tests/realworld/lightllm/lightllm/models/llama/triton_kernel/rmsnorm.py",
    "_rms_norm_fwd_fused",
    "X=*bf16, Y=*bf16, W=*bf16, x_stride0=i32, x_stride1=i32, y_stride0=i32, y_stride1=i32, N=i32, "
    f"eps=fp32, BLOCK_SIZE={C}, num_warps=4",
    dict(X=("randn", "bfloat16", R * C), Y=("zeros", "bfloat16", R * C), W=("randn", "bfloat16", C),
         x_stride0=C, x_stride1=1, y_stride0=C, y_stride1=1, N=C, eps=1e-6),
    (R,), ["Y"], bytes=2 * 2 * R * C + 2 * C, tol=1e-2))

# lightllm's rotary embedding, in place on q and k, bf16: 16384 tokens, 32
# query and 8 key heads of 128 (8 warps, 16 tokens x 4 heads a program).
T, HQ, HK, D = 16384, 32, 8, 128
CASES.append(case(
    "lightllm_rotary_bf16", "tests/realworld/lightllm/lightllm/models/llama/triton_kernel/rotary_emb.py",
    "_rotary_kernel",
    "Q=*bf16, K=*bf16, Cos=*bf16, Sin=*bf16, stride_qbs=i32, stride_qh=i32, stride_qd=i32, stride_kbs=i32, "
    "stride_kh=i32, stride_kd=i32, stride_cosbs=i32, stride_cosd=i32, stride_sinbs=i32, stride_sind=i32, "
    f"max_total_len=i32, HEAD_Q=i32, HEAD_K=i32, BLOCK_HEAD=4, BLOCK_SEQ=16, BLOCK_DMODEL={D}, "
    "num_warps=8, num_stages=1",
    dict(Q=("randn", "bfloat16", T * HQ * D), K=("randn", "bfloat16", T * HK * D),
         Cos=("uniform", "bfloat16", T * D // 2), Sin=("uniform", "bfloat16", T * D // 2),
         stride_qbs=HQ * D, stride_qh=D, stride_qd=1, stride_kbs=HK * D, stride_kh=D, stride_kd=1,
         stride_cosbs=D // 2, stride_cosd=1, stride_sinbs=D // 2, stride_sind=1, max_total_len=T, HEAD_Q=HQ,
         HEAD_K=HK),
    (cdiv(HQ, 4), cdiv(T, 16)), ["Q", "K"], bytes=2 * 2 * T * (HQ + HK) * D + 2 * 2 * T * D // 2, tol=1e-2))


# ---------------------------------------------------------------------------
# Tensor-core kernels (tl.dot): GEMMs (fp8 with per-block scales, fp16 with
# a fused epilogue), attention forwards (fp16, and int8 Q·K) and Mamba-2's
# chunked scan, each at the launch configuration its host code picks for an
# LLM-sized problem or, where an autotuner picks it, at the config of its
# list named beside the case. `flops` counts the useful work: 2*M*N*K for a
# GEMM, 4*B*H*S*S*D for attention, halved when causal (the usual count: the
# masked-off parts of the diagonal blocks, which the kernels compute, are
# left out).
# DeepSeek-V3's fp8 GEMM (inference/kernel.py; activations quantized per
# token and 128 columns, weights per 128 x 128 block, each block's product
# scaled in the K loop), bf16 out (its generate.py's default dtype): 4096
# prefill tokens through a dense layer's w1, 7168 -> 18432. Autotuned over
# BLOCK_SIZE_M {16, 32, 64} x BLOCK_SIZE_N {32, 64, 128} x 3-6 stages (8
# warps): its largest tile, 64 x 128, at 4 stages. The grid is its host's.
M, N, K = 4096, 18432, 7168
CASES.append(case(
    "deepseek_fp8_gemm_bf16", TRL + "deepseek_v3/inference/kernel.py", "fp8_gemm_kernel",
    f"a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*bf16, a_s_ptr=*fp32, b_s_ptr=*fp32, M=i32, N={N}, K={K}, "
    "BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, num_warps=8, num_stages=4",
    # Activations of about N(0, 1) over scales near 4/448, weights of about
    # N(0, 0.02) over scales near 0.09/448: C's entries of about 1.7 (std).
    dict(a_ptr=fp8_e4m3(M * K, 112), b_ptr=fp8_e4m3(N * K, 100), c_ptr=("zeros", "bfloat16", M * N),
         a_s_ptr=("uniform", "float32", M * (K // 128), 0.008, 0.01),
         b_s_ptr=("uniform", "float32", (N // 128) * (K // 128), 1.8e-4, 2.2e-4), M=M),
    # fp32 sums in another order: a bf16 rounding (2^-8) apart.
    (cdiv(M, 64), cdiv(N, 128)), ["c_ptr"], bytes=M * K + N * K + 2 * M * N, tol=1e-2,
    flops=2 * M * N * K, package=TRL + "deepseek_v3"))

# lightllm's block-scaled fp8 GEMM (w8a8, 128 x 128 weight blocks; grouped
# launch, GROUP_M 32), bf16 out: 4096 tokens through DeepSeek-V3's dense w2,
# 18432 -> 7168. Its host's config when no tuned one is on file (4 warps, 3
# stages, BLOCK_M 64, the blocks 128), and its __main__'s layouts: B the
# [N, K] weight seen as [K, N] (K contiguous), Bscale [K/128, N/128].
M, N, K = 4096, 7168, 18432
CASES.append(case(
    "lightllm_fp8_block_gemm_bf16",
    TRL + "lightllm/lightllm/common/quantization/triton_quant/fp8/fp8w8a8_block_gemm_kernel.py",
    "_block_scaled_block_gemm",
    "A=*fp8e4nv, B=*fp8e4nv, C=*bf16, Ascale=*fp32, Bscale=*fp32, M=i32, N=i32, K=i32, group_n=i32, "
    "group_k=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, "
    "stride_Ascale_m=i32, stride_Ascale_k=i32, stride_Bscale_k=i32, stride_Bscale_n=i32, BLOCK_M=64, "
    "BLOCK_N=128, BLOCK_K=128, GROUP_M=32, num_warps=4, num_stages=3",
    dict(A=fp8_e4m3(M * K, 112), B=fp8_e4m3(N * K, 100), C=("zeros", "bfloat16", M * N),
         Ascale=("uniform", "float32", M * (K // 128), 0.008, 0.01),
         Bscale=("uniform", "float32", (K // 128) * (N // 128), 1.8e-4, 2.2e-4), M=M, N=N, K=K,
         group_n=128, group_k=128, stride_am=K, stride_ak=1, stride_bk=1, stride_bn=K, stride_cm=N,
         stride_cn=1, stride_Ascale_m=K // 128, stride_Ascale_k=1, stride_Bscale_k=N // 128,
         stride_Bscale_n=1),
    # fp32 sums in another order: a bf16 rounding (2^-8) apart.
    (cdiv(M, 64) * cdiv(N, 128),), ["C"], bytes=M * K + N * K + 2 * M * N, tol=1e-2,
    flops=2 * M * N * K,
    # Imported by the file for its host-side config class, absent here.
    stubs={"lightllm.common.kernel_config": dict(KernelConfigs=object),
           "frozendict": dict(frozendict=dict)}))

# torchao's int8 GEMM of its int8 mixed-precision training, (A @ B) * row
# scale * column scale, bf16 scales and out: 4096 tokens through Llama-3-8B's
# MLP gate projection, 4096 -> 14336, B the row-quantized [N, K] weight
# transposed (K contiguous), as its _dynamic_int8_mm passes it. Autotuned:
# its first config, 128 x 256 x 64, 3 stages, 8 warps (EVEN_K from its
# heuristic). Its K loop counts down, `for k in range(K, 0, -BLOCK_K)` (a
# run-time start and a negative step; kilnc dropped such loops before
# tests/frontend/negative_range_step.py).
M, N, K = 4096, 14336, 4096
CASES.append(case(
    "torchao_int8_mm_bf16", TRL + "torchao/torchao/prototype/quantized_training/int8_mm.py",
    "_scaled_int8_mm_kernel",
    "A_ptr=*i8, B_ptr=*i8, C_ptr=*bf16, row_scale_ptr=*bf16, col_scale_ptr=*bf16, M=i32, N=i32, K=i32, "
    "stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BLOCK_M=128, "
    "BLOCK_N=256, BLOCK_K=64, GROUP_M=8, EVEN_K=True, COL_SCALE_SCALAR=False, num_warps=8, num_stages=3",
    dict(A_ptr=("randint", "int8", M * K, -127, 128), B_ptr=("randint", "int8", N * K, -127, 128),
         C_ptr=("zeros", "bfloat16", M * N), row_scale_ptr=("uniform", "bfloat16", M, 0.01, 0.03),
         col_scale_ptr=("uniform", "bfloat16", N, 1e-4, 3e-4), M=M, N=N, K=K, stride_am=K, stride_ak=1,
         stride_bk=1, stride_bn=K, stride_cm=N, stride_cn=1),
    # Exact: int32 sums, then the same two fp32 products and one rounding.
    (cdiv(M, 128) * cdiv(N, 256),), ["C_ptr"], bytes=M * K + N * K + 2 * M * N + 2 * (M + N), tol=0,
    flops=2 * M * N * K))

# attorch's linear layer with its fused GELU (erf), fp16 with bias, as a
# half-precision model without autograd runs it (fp16=True, save_pre_act
# False): 4096 tokens through a GPT-style MLP's up projection, 4096 ->
# 16384, the weight stored [in, out]. Autotuned: its biggest config, 128 x
# 64 (K) x 256, 3 stages, 8 warps; tf32 from its heuristic (True on sm_90;
# fp16 operands do not use it).
M, N, K = 4096, 16384, 4096
CASES.append(case(
    "attorch_linear_gelu_fp16", TRL + "attorch/attorch/linear_kernels.py", "linear_forward_kernel",
    "input_pointer=*fp16, weight_pointer=*fp16, bias_pointer=*fp16, pre_act_pointer=*fp16, "
    "output_pointer=*fp16, batch_dim=i32, in_feat_dim=i32, out_feat_dim=i32, input_batch_stride=i32, "
    "input_in_feat_stride=i32, weight_in_feat_stride=i32, weight_out_feat_stride=i32, "
    "pre_act_batch_stride=i32, pre_act_out_feat_stride=i32, output_batch_stride=i32, "
    "output_out_feat_stride=i32, param=None, add_bias=True, act_func='gelu', save_pre_act=False, fp16=True, "
    "tf32=True, BLOCK_SIZE_BATCH=128, BLOCK_SIZE_IN_FEAT=64, BLOCK_SIZE_OUT_FEAT=256, GROUP_SIZE_BATCH=8, "
    "num_warps=8, num_stages=3",
    dict(input_pointer=("randn", "float16", M * K), weight_pointer=("randn", "float16", K * N, K ** -0.5),
         bias_pointer=("randn", "float16", N, 0.1),
         # Never written with save_pre_act False (the host passes the output
         # again, with its strides).
         pre_act_pointer=("zeros", "float16", 1),
         output_pointer=("zeros", "float16", M * N), batch_dim=M, in_feat_dim=K, out_feat_dim=N,
         input_batch_stride=K, input_in_feat_stride=1, weight_in_feat_stride=N, weight_out_feat_stride=1,
         pre_act_batch_stride=N, pre_act_out_feat_stride=1, output_batch_stride=N, output_out_feat_stride=1),
    # fp32 sums in another order and erf to a few ulps: an fp16 rounding
    # (2^-11) or two of the largest output apart.
    (cdiv(M, 128) * cdiv(N, 256),), ["output_pointer"], bytes=2 * (M * K + K * N + M * N + N), tol=2e-3,
    flops=2 * M * N * K, package=TRL + "attorch", srcs=[TRL + "attorch/attorch/act_kernels.py"]))

# attorch's attention backward (`_bwd_kernel`, the FlashAttention-2
# backward of Triton's old tutorial: one program per (batch, head) walks all
# column blocks, dq read, added to and written back per block), as its
# autograd backward launches it on Hopper: 128 x 128 blocks, 8 warps, 1
# stage, MMA_V3, not sequence-parallel, non-causal. 8 x 16 heads of 2048
# tokens, fp16, head dims 64 and 128. L (the forward's base-2 logsumexp)
# between 6 and 7, above any row's scaled q.k here, so that p stays under 1;
# delta of about 1.
Z, H, N_CTX = 8, 16, 2048
for DMODEL in (64, 128):
    QKV = Z * H * N_CTX * DMODEL
    CASES.append(case(
        f"attorch_attention_bwd_d{DMODEL}_fp16", TRL + "attorch/attorch/multi_head_attention_kernels.py",
        "_bwd_kernel",
        "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, Out=*fp16, DO=*fp16, DQ=*fp16, DK=*fp16, DV=*fp16, "
        "L=*fp32, D=*fp32, stride_dqa=i32, stride_qz=i32, stride_qh=i32, stride_qm=i32, stride_qk=i32, "
        "stride_kz=i32, stride_kh=i32, stride_kn=i32, stride_kk=i32, stride_vz=i32, stride_vh=i32, "
        "stride_vn=i32, stride_vk=i32, Z=i32, H=i32, N_CTX=i32, Z_H_N_CTX=i32, SQ_Z_H_N_CTX=i32, "
        f"BLOCK_M=128, BLOCK_DMODEL={DMODEL}, BLOCK_N=128, SEQUENCE_PARALLEL=False, CAUSAL=False, "
        "MMA_V3=True, num_warps=8, num_stages=1",
        dict(Q=("randn", "float16", QKV), K=("randn", "float16", QKV), V=("randn", "float16", QKV),
             sm_scale=DMODEL ** -0.5, Out=("randn", "float16", QKV), DO=("randn", "float16", QKV),
             DQ=("zeros", "float16", QKV), DK=("zeros", "float16", QKV), DV=("zeros", "float16", QKV),
             L=("uniform", "float32", Z * H * N_CTX, 6.0, 7.0),
             D=("uniform", "float32", Z * H * N_CTX, -1.0, 1.0),
             stride_dqa=QKV, stride_qz=H * N_CTX * DMODEL, stride_qh=N_CTX * DMODEL, stride_qm=DMODEL,
             stride_qk=1, stride_kz=H * N_CTX * DMODEL, stride_kh=N_CTX * DMODEL, stride_kn=DMODEL,
             stride_kk=1, stride_vz=H * N_CTX * DMODEL, stride_vh=N_CTX * DMODEL, stride_vn=DMODEL,
             stride_vk=1, Z=Z, H=H, N_CTX=N_CTX, Z_H_N_CTX=Z * H * N_CTX,
             SQ_Z_H_N_CTX=cdiv(N_CTX, 128) * Z * H * N_CTX),
        # fp16 operands, fp32 sums of 2048 products in another order, dq
        # rounded to fp16 after each of 16 column blocks.
        (Z * H, 1), ["DQ", "DK", "DV"], bytes=2 * 9 * QKV, tol=2e-2,
        flops=5 * 2 * Z * H * N_CTX * N_CTX * DMODEL))

# SageAttention's int8 attention (Q and K quantized per 128 / 64 rows with
# the softmax scale folded into Q's scales, P·V in fp16 with an fp16
# accumulator), its HND layout, fp16 out: batch 4 x 32 heads x 4096 tokens,
# head dim 128, non-causal (its attn_qk_int8_per_block.forward: 128 x 64
# tiles, 8 warps, 4 stages at head dim 128) and causal (the _causal file's).
B, H, S, D = 4, 32, 4096, 128
for causal in (False, True):
    file = "attn_qk_int8_per_block_causal.py" if causal else "attn_qk_int8_per_block.py"
    mask_sig = "" if causal else "mask=None, "
    mask_strides = "" if causal else "stride_maskz=i32, stride_maskh=i32, stride_maskm=i32, stride_maskn=i32, "
    args = dict(Q=("randint", "int8", B * H * S * D, -127, 128), K=("randint", "int8", B * H * S * D, -127, 128),
                V=("randn", "float16", B * H * S * D),
                # Logits of about N(0, 2.2) in log2 units.
                Q_scale=("uniform", "float32", B * H * (S // 128), 0.005, 0.007),
                K_scale=("uniform", "float32", B * H * (S // 64), 0.005, 0.007),
                Out=("zeros", "float16", B * H * S * D),
                Lse=("zeros", "float32", 1),  # not written (RETURN_LSE False)
                stride_qz=H * S * D, stride_qh=S * D, stride_qn=D, stride_kz=H * S * D, stride_kh=S * D,
                stride_kn=D, stride_vz=H * S * D, stride_vh=S * D, stride_vn=D, stride_oz=H * S * D,
                stride_oh=S * D, stride_on=D, qo_len=S, kv_len=S)
    if not causal:  # no mask: its host passes zero strides
        args.update(stride_maskz=0, stride_maskh=0, stride_maskm=0, stride_maskn=0)
    CASES.append(case(
        f"sage_attn_int8_{'causal' if causal else 'noncausal'}_fp16",
        TRL + "sageattention/sageattention/triton/" + file, "_attn_fwd",
        f"Q=*i8, K=*i8, V=*fp16, Q_scale=*fp32, K_scale=*fp32, Out=*fp16, {mask_sig}Lse=*fp32, stride_qz=i32, "
        "stride_qh=i32, stride_qn=i32, stride_kz=i32, stride_kh=i32, stride_kn=i32, stride_vz=i32, "
        f"stride_vh=i32, stride_vn=i32, stride_oz=i32, stride_oh=i32, stride_on=i32, {mask_strides}"
        f"qo_len=i32, kv_len=i32, H={H}, num_kv_groups=1, HEAD_DIM={D}, BLOCK_M=128, BLOCK_N=64, "
        f"STAGE={3 if causal else 1}, RETURN_LSE=False, num_warps=8, num_stages=4",
        args,
        # P·V is an fp16 dot (out_dtype): where its sums round to fp16
        # depends on how each compiler runs it (Triton accumulates in fp16 in
        # the MMA); exp2 and row sums in another order.
        (cdiv(S, 128), H, B), ["Out"], bytes=2 * B * H * S * D + 2 * 2 * B * H * S * D, tol=1e-2,
        flops=4 * B * H * S * S * D // (2 if causal else 1)))

# FlagAttention's flash-attention forward, fp16: batch 4 x 32 heads x 4096
# tokens, head dim 128, without and with the causal mask. Its
# get_fwd_config has tuned rows for sm_80 and sm_86 only (on sm_90 it falls
# back to 32 x 32 tiles, 1 stage, 4 warps); these use its sm_80 row for head
# dim 128 past 1024 tokens, causal or not: 128 x 128 tiles, 3 stages, 8
# warps. At these sizes its split-KV heuristic keeps one split.
B, H, S, D = 4, 32, 4096, 128
for causal in (False, True):
    CASES.append(case(
        f"flag_attn_fwd_{'causal' if causal else 'noncausal'}_fp16", TRL + "flag_attn/src/flag_attn/flash.py",
        "_fwd_kernel",
        "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, dropout_p=fp32, seed=i32, offset=i32, L=*fp32, O=*fp16, "
        "stride_qz=i32, stride_qh=i32, stride_qm=i32, stride_qk=i32, stride_kz=i32, stride_kh=i32, "
        "stride_kn=i32, stride_kk=i32, stride_vz=i32, stride_vh=i32, stride_vn=i32, stride_vk=i32, "
        "stride_oz=i32, stride_oh=i32, stride_om=i32, stride_ok=i32, Z=i32, H=i32, M=i32, N=i32, P_SEQ=i32, "
        f"num_groups=i32, BLOCK_M=128, BLOCK_DMODEL={D}, BLOCK_N=128, IS_CAUSAL={causal}, IS_DROPOUT=False, "
        "LARGER_M=False, DIVISIBLE_M=True, DIVISIBLE_N=True, num_warps=8, num_stages=3",
        dict(Q=("randn", "float16", B * H * S * D), K=("randn", "float16", B * H * S * D),
             V=("randn", "float16", B * H * S * D), sm_scale=D ** -0.5, dropout_p=0.0, seed=0, offset=0,
             L=("zeros", "float32", B * H * S), O=("zeros", "float16", B * H * S * D),
             stride_qz=H * S * D, stride_qh=S * D, stride_qm=D, stride_qk=1, stride_kz=H * S * D,
             stride_kh=S * D, stride_kn=D, stride_kk=1, stride_vz=H * S * D, stride_vh=S * D, stride_vn=D,
             stride_vk=1, stride_oz=H * S * D, stride_oh=S * D, stride_om=D, stride_ok=1, Z=B, H=H, M=S, N=S,
             P_SEQ=0, num_groups=1),
        # exp2 and row sums in another order; fp16 out.
        (cdiv(S, 128), H, B), ["O", "L"], bytes=2 * 4 * B * H * S * D + 4 * B * H * S, tol=1e-2,
        flops=4 * B * H * S * S * D // (2 if causal else 1), package=TRL + "flag_attn/src"))

# lightllm's prefill attention (context_attention_fwd: causal, K and V
# gathered through the request -> token-slot table of its paged KV cache),
# fp16: 4 requests of 4096 tokens, Llama-3-8B's 32 query heads over 8 KV
# heads of 128. Its host's config off Tesla GPUs: 128 x 128 tiles, 8 warps, 1
# stage. K and V are the halves of its per-layer KV buffer [tokens, 2 x 8
# heads, 128] (row stride 2 x 8 x 128), each here in a buffer of that shape;
# the slots are scattered, as after requests come and go.
B, S, H, HK, D = 4, 4096, 32, 8, 128
T = B * S
CASES.append(case(
    "lightllm_context_attention_fp16",
    TRL + "lightllm/lightllm/models/llama/triton_kernel/context_flashattention_nopad.py", "_fwd_kernel",
    "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, Out=*fp16, B_Start_Loc=*i32, B_Seqlen=*i32, Req_to_tokens=*i32, "
    "B_req_idx=*i32, stride_qbs=i32, stride_qh=i32, stride_qd=i32, stride_kbs=i32, stride_kh=i32, "
    "stride_kd=i32, stride_vbs=i32, stride_vh=i32, stride_vd=i32, stride_obs=i32, stride_oh=i32, "
    "stride_od=i32, stride_req_to_tokens_b=i32, stride_req_to_tokens_s=i32, kv_group_num=i32, "
    f"b_prompt_cache_len=*i32, H={H}, BLOCK_DMODEL={D}, BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=1",
    dict(Q=("randn", "float16", T * H * D), K=("randn", "float16", T * 2 * HK * D),
         V=("randn", "float16", T * 2 * HK * D), sm_scale=D ** -0.5 * 1.4426950408889634,
         Out=("zeros", "float16", T * H * D),
         B_Start_Loc=lambda torch, gen, b=B, s=S: torch.arange(b, dtype=torch.int32, device="cuda") * s,
         B_Seqlen=("full", "int32", B, S), Req_to_tokens=("perm", "int32", T), B_req_idx=("arange", "int32", B),
         stride_qbs=H * D, stride_qh=D, stride_qd=1, stride_kbs=2 * HK * D, stride_kh=D, stride_kd=1,
         stride_vbs=2 * HK * D, stride_vh=D, stride_vd=1, stride_obs=H * D, stride_oh=D, stride_od=1,
         stride_req_to_tokens_b=S, stride_req_to_tokens_s=1, kv_group_num=H // HK,
         b_prompt_cache_len=("zeros", "int32", B)),
    # exp2 and row sums in another order; fp16 out.
    (cdiv(S, 128), B * H, 1), ["Out"], bytes=2 * 2 * T * H * D + 2 * 2 * T * HK * D + 4 * T, tol=1e-2,
    flops=2 * B * H * S * S * D,
    # Imported for its host's is_tesla(), absent here.
    stubs={"lightllm.utils.device_utils": dict(is_tesla=lambda: False)}))

# Mamba-2's chunked scan, forward (ssd_chunk_scan.py: per 256-token chunk,
# the carried-in state through C, C·state, plus the causal intra-chunk
# (C B^T, decayed) @ x, plus D x; small dots with fp32 scaling between),
# bf16: Mamba2-2.7B (80 heads of 64, state 128, one group), batch 4 x 4096
# tokens, as its _mamba_chunk_scan_combined_fwd calls it (CB in fp32, states
# in C's dtype, D per head, z left to the gated norm). Autotuned: the config
# of its list that fits head dim 64, 128 x 64 x 64, 4 stages, 4 warps.
# FLOPs: C·state (2 L P N per chunk and head) and the causal half of the
# L x L x P product.
B, S, H, P, G, NS, L = 4, 4096, 80, 64, 1, 128, 256
NC = S // L
CASES.append(case(
    "mamba2_chunk_scan_fwd_bf16", TRL + "mamba/mamba_ssm/ops/triton/ssd_chunk_scan.py", "_chunk_scan_fwd_kernel",
    "cb_ptr=*fp32, x_ptr=*bf16, z_ptr=None, out_ptr=*bf16, out_x_ptr=None, dt_ptr=*fp32, dA_cumsum_ptr=*fp32, "
    "seq_idx_ptr=None, C_ptr=*bf16, prev_states_ptr=*bf16, D_ptr=*fp32, chunk_size=i32, hdim=i32, dstate=i32, "
    "batch=i32, seqlen=i32, nheads_ngroups_ratio=i32, stride_cb_batch=i32, stride_cb_chunk=i32, "
    "stride_cb_head=i32, stride_cb_csize_m=i32, stride_cb_csize_k=i32, stride_x_batch=i32, "
    "stride_x_seqlen=i32, stride_x_head=i32, stride_x_hdim=i32, stride_z_batch=i32, stride_z_seqlen=i32, "
    "stride_z_head=i32, stride_z_hdim=i32, stride_out_batch=i32, stride_out_seqlen=i32, stride_out_head=i32, "
    "stride_out_hdim=i32, stride_dt_batch=i32, stride_dt_chunk=i32, stride_dt_head=i32, stride_dt_csize=i32, "
    "stride_dA_cs_batch=i32, stride_dA_cs_chunk=i32, stride_dA_cs_head=i32, stride_dA_cs_csize=i32, "
    "stride_seq_idx_batch=i32, stride_seq_idx_seqlen=i32, stride_C_batch=i32, stride_C_seqlen=i32, "
    "stride_C_head=i32, stride_C_dstate=i32, stride_states_batch=i32, stride_states_chunk=i32, "
    "stride_states_head=i32, stride_states_hdim=i32, stride_states_dstate=i32, stride_D_head=i32, "
    "IS_CAUSAL=True, HAS_D=True, D_HAS_HDIM=False, HAS_Z=False, HAS_SEQ_IDX=False, BLOCK_SIZE_M=128, "
    f"BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, BLOCK_SIZE_DSTATE={NS}, IS_TRITON_22=True, num_warps=4, num_stages=4",
    dict(cb_ptr=("randn", "float32", B * NC * G * L * L), x_ptr=("randn", "bfloat16", B * S * H * P),
         out_ptr=("zeros", "bfloat16", B * S * H * P),
         dt_ptr=("uniform", "float32", B * H * NC * L, 0.001, 0.1),
         dA_cumsum_ptr=decay_cumsum(B * H * NC, L, 0.05),
         C_ptr=("randn", "bfloat16", B * S * G * NS), prev_states_ptr=("randn", "bfloat16", B * NC * H * P * NS),
         D_ptr=("randn", "float32", H), chunk_size=L, hdim=P, dstate=NS, batch=B, seqlen=S,
         nheads_ngroups_ratio=H // G,
         stride_cb_batch=NC * G * L * L, stride_cb_chunk=G * L * L, stride_cb_head=L * L, stride_cb_csize_m=L,
         stride_cb_csize_k=1,
         stride_x_batch=S * H * P, stride_x_seqlen=H * P, stride_x_head=P, stride_x_hdim=1,
         stride_z_batch=0, stride_z_seqlen=0, stride_z_head=0, stride_z_hdim=0,
         stride_out_batch=S * H * P, stride_out_seqlen=H * P, stride_out_head=P, stride_out_hdim=1,
         # dt and dA_cumsum are [batch, heads, chunks, L]; the host passes
         # their chunk stride before their head stride.
         stride_dt_batch=H * NC * L, stride_dt_chunk=L, stride_dt_head=NC * L, stride_dt_csize=1,
         stride_dA_cs_batch=H * NC * L, stride_dA_cs_chunk=L, stride_dA_cs_head=NC * L, stride_dA_cs_csize=1,
         stride_seq_idx_batch=0, stride_seq_idx_seqlen=0,
         stride_C_batch=S * G * NS, stride_C_seqlen=G * NS, stride_C_head=NS, stride_C_dstate=1,
         stride_states_batch=NC * H * P * NS, stride_states_chunk=H * P * NS, stride_states_head=P * NS,
         stride_states_hdim=NS, stride_states_dstate=1, stride_D_head=1),
    # fp32 sums in another order, exp to an ulp or so: a bf16 rounding (2^-8)
    # apart.
    (cdiv(L, 128) * cdiv(P, 64), B * NC, H), ["out_ptr"],
    bytes=2 * 2 * B * S * H * P + 4 * B * NC * G * L * L + 2 * B * S * G * NS + 2 * B * NC * H * P * NS
    + 2 * 4 * B * H * S,
    tol=1e-2, flops=B * NC * H * (2 * L * P * NS + L * L * P), package=TRL + "mamba"))


# ---------------------------------------------------------------------------
# A third batch, from kernels not covered above: the rest of Mamba-2's
# forward (chunk states, C·B^T, the state passing between chunks, the gated
# RMSNorm) and its decode step; lightllm's GQA decode attention (tensor cores
# over a query-head group) and DeepSeek-MLA-style fp8 batched GEMM;
# native-sparse-attention's flash-attention forward; the vLLM-style fused
# MoE GEMM; weight-only int4 GEMMs (HQQ through torchao, GPTQ split-K for
# decode); bitsandbytes' NF4 dequantization (QLoRA's every forward). Sizes
# and configurations as above: the hosts' own, or the named autotune config.
# Kernels without tl.dot, and decode kernels whose dots are 16 rows (a
# query-head group, 16 tokens), are bound by their reads and count bytes;
# the others count FLOPs. Left out: unsloth's kernels (its utils import
# unsloth_zoo and unsloth's device modules, absent here; they are close kin
# of Liger's above), xformers' RoPE and RMSNorm (kilnc: libdevice_find comes
# from xformers.triton.importing, which the sample lacks), gemlite's GEMMs
# (their host, core.py, which picks the packing and group modes, is absent).
MAMBA = TRL + "mamba/mamba_ssm/ops/triton/"


# Mamba-2's chunk states (ssd_chunk_state.py: per 256-token chunk and head,
# x^T @ (B scaled by dt and the decay to the chunk's end)), bf16 in, fp32
# states (its _chunk_state_fwd's states_in_fp32): Mamba2-2.7B (80 heads of
# 64, state 128, one group), batch 4 x 4096 tokens, as
# _mamba_chunk_scan_combined_fwd calls it. Autotuned: the config of its list
# whose tile is the head dim x state, 64 x 128 x 32, 4 stages, 4 warps (one
# program per chunk and head).
B, S, H, P, G, NS, L = 4, 4096, 80, 64, 1, 128, 256
NC = S // L
CASES.append(case(
    "mamba2_chunk_state_fwd_bf16", MAMBA + "ssd_chunk_state.py", "_chunk_state_fwd_kernel",
    "x_ptr=*bf16, b_ptr=*bf16, states_ptr=*fp32, dt_ptr=*fp32, dA_cumsum_ptr=*fp32, seq_idx_ptr=None, "
    "hdim=i32, dstate=i32, chunk_size=i32, batch=i32, seqlen=i32, nheads_ngroups_ratio=i32, "
    "stride_x_batch=i32, stride_x_seqlen=i32, stride_x_head=i32, stride_x_hdim=i32, stride_b_batch=i32, "
    "stride_b_seqlen=i32, stride_b_head=i32, stride_b_dstate=i32, stride_states_batch=i32, "
    "stride_states_chunk=i32, stride_states_head=i32, stride_states_hdim=i32, stride_states_dstate=i32, "
    "stride_dt_batch=i32, stride_dt_chunk=i32, stride_dt_head=i32, stride_dt_csize=i32, "
    "stride_dA_cs_batch=i32, stride_dA_cs_chunk=i32, stride_dA_cs_head=i32, stride_dA_cs_csize=i32, "
    "stride_seq_idx_batch=i32, stride_seq_idx_seqlen=i32, HAS_SEQ_IDX=False, BLOCK_SIZE_M=64, "
    "BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, num_warps=4, num_stages=4",
    dict(x_ptr=("randn", "bfloat16", B * S * H * P), b_ptr=("randn", "bfloat16", B * S * G * NS),
         states_ptr=("zeros", "float32", B * NC * H * P * NS),
         dt_ptr=("uniform", "float32", B * H * NC * L, 0.001, 0.1),
         dA_cumsum_ptr=decay_cumsum(B * H * NC, L, 0.05), hdim=P, dstate=NS, chunk_size=L, batch=B,
         seqlen=S, nheads_ngroups_ratio=H // G,
         stride_x_batch=S * H * P, stride_x_seqlen=H * P, stride_x_head=P, stride_x_hdim=1,
         stride_b_batch=S * G * NS, stride_b_seqlen=G * NS, stride_b_head=NS, stride_b_dstate=1,
         stride_states_batch=NC * H * P * NS, stride_states_chunk=H * P * NS, stride_states_head=P * NS,
         stride_states_hdim=NS, stride_states_dstate=1,
         # dt and dA_cumsum are [batch, heads, chunks, L]: chunk stride
         # before head stride, as the host passes them.
         stride_dt_batch=H * NC * L, stride_dt_chunk=L, stride_dt_head=NC * L, stride_dt_csize=1,
         stride_dA_cs_batch=H * NC * L, stride_dA_cs_chunk=L, stride_dA_cs_head=NC * L, stride_dA_cs_csize=1,
         stride_seq_idx_batch=0, stride_seq_idx_seqlen=0),
    # fp32 sums in another order; B is scaled by exp() and rounded to bf16
    # before the dot, so an ulp of exp can move one product by a bf16
    # rounding (2^-8).
    (cdiv(P, 64) * cdiv(NS, 128), B * NC, H), ["states_ptr"],
    bytes=2 * B * S * H * P + 2 * B * S * G * NS + 4 * B * NC * H * P * NS + 2 * 4 * B * H * S,
    tol=1e-2, flops=2 * B * S * H * P * NS, package=TRL + "mamba"))

# Mamba-2's C·B^T per chunk (ssd_bmm.py's _bmm_chunk_fwd, not causal, fp32
# out, as _mamba_chunk_scan_combined_fwd calls it for the chunk scan's CB):
# the same model and batch, 256 x 256 per chunk over the state 128.
# Autotuned: 128 x 128 x 32, 4 stages, 4 warps (four tiles a chunk, 256
# programs for the 64 chunks; plausibly its pick for this small product,
# bound by its fp32 output).
CASES.append(case(
    "mamba2_bmm_chunk_fwd_bf16", MAMBA + "ssd_bmm.py", "_bmm_chunk_fwd_kernel",
    "a_ptr=*bf16, b_ptr=*bf16, out_ptr=*fp32, seq_idx_ptr=None, seqlen=i32, chunk_size=i32, K=i32, "
    "ngroups=i32, stride_a_batch=i32, stride_a_seqlen=i32, stride_a_head=i32, stride_ak=i32, "
    "stride_b_batch=i32, stride_b_seqlen=i32, stride_b_head=i32, stride_bk=i32, stride_out_batch=i32, "
    "stride_out_chunk=i32, stride_out_head=i32, stride_outm=i32, stride_outn=i32, "
    "stride_seq_idx_batch=i32, stride_seq_idx_seqlen=i32, IS_CAUSAL=False, dot_dtype=tl.bfloat16, "
    "HAS_SEQ_IDX=False, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, num_warps=4, num_stages=4",
    dict(a_ptr=("randn", "bfloat16", B * S * G * NS), b_ptr=("randn", "bfloat16", B * S * G * NS),
         out_ptr=("zeros", "float32", B * NC * G * L * L), seqlen=S, chunk_size=L, K=NS, ngroups=G,
         stride_a_batch=S * G * NS, stride_a_seqlen=G * NS, stride_a_head=NS, stride_ak=1,
         stride_b_batch=S * G * NS, stride_b_seqlen=G * NS, stride_b_head=NS, stride_bk=1,
         stride_out_batch=NC * G * L * L, stride_out_chunk=G * L * L, stride_out_head=L * L, stride_outm=L,
         stride_outn=1, stride_seq_idx_batch=0, stride_seq_idx_seqlen=0),
    # fp32 sums of 128 bf16 products in another order.
    (cdiv(L, 128) * cdiv(L, 128), B, NC * G), ["out_ptr"],
    bytes=2 * 2 * B * S * G * NS + 4 * B * NC * G * L * L, tol=1e-5,
    flops=2 * B * NC * G * L * L * NS, package=TRL + "mamba"))

# Mamba-2's state passing (ssd_state_passing.py: the chunk states carried
# from chunk to chunk, state = exp(dA_chunk) * state + chunk state, a loop
# over the 16 chunks per element), fp32 states in, C's dtype (bf16) out:
# the same model and batch, 64 x 128 = 8192 values per head. The host
# passes dA_cumsum[:, :, :, -1], a strided view ending each chunk's row;
# here those values are in a compact [batch, heads, chunks] buffer (a view
# 1020 bytes into its buffer would not be 16-byte aligned, which the
# hinted signature assumes of pointers). Autotuned over BLOCK_SIZE (4
# warps): 1024, eight values a thread, 2560 programs.
DIM = P * NS
CASES.append(case(
    "mamba2_state_passing_fwd_bf16", MAMBA + "ssd_state_passing.py", "_state_passing_fwd_kernel",
    "states_ptr=*fp32, out_ptr=*bf16, final_states_ptr=*fp32, dA_cs_ptr=*fp32, initstates_ptr=None, "
    "seq_idx_ptr=None, dim=i32, nchunks=i32, seqlen=i32, chunk_size=i32, stride_states_batch=i32, "
    "stride_states_chunk=i32, stride_states_head=i32, stride_states_dim=i32, stride_out_batch=i32, "
    "stride_out_chunk=i32, stride_out_head=i32, stride_out_dim=i32, stride_final_states_batch=i32, "
    "stride_final_states_head=i32, stride_final_states_dim=i32, stride_dA_cs_batch=i32, "
    "stride_dA_cs_chunk=i32, stride_dA_cs_head=i32, stride_initstates_batch=i32, "
    "stride_initstates_head=i32, stride_initstates_dim=i32, stride_seq_idx_batch=i32, "
    "stride_seq_idx_seqlen=i32, HAS_INITSTATES=False, HAS_SEQ_IDX=False, BLOCK_SIZE=1024, num_warps=4, "
    "num_stages=3",
    dict(states_ptr=("randn", "float32", B * NC * H * DIM), out_ptr=("zeros", "bfloat16", B * NC * H * DIM),
         final_states_ptr=("zeros", "float32", B * H * DIM),
         # A chunk's total decay, sum over 256 tokens of dt * A.
         dA_cs_ptr=("uniform", "float32", B * H * NC, -10.0, -3.0), dim=DIM, nchunks=NC,
         seqlen=0, chunk_size=0,  # the host's values without seq_idx
         stride_states_batch=NC * H * DIM, stride_states_chunk=H * DIM, stride_states_head=DIM,
         stride_states_dim=1, stride_out_batch=NC * H * DIM, stride_out_chunk=H * DIM, stride_out_head=DIM,
         stride_out_dim=1, stride_final_states_batch=H * DIM, stride_final_states_head=DIM,
         stride_final_states_dim=1, stride_dA_cs_batch=H * NC, stride_dA_cs_chunk=1, stride_dA_cs_head=NC,
         stride_initstates_batch=0, stride_initstates_head=0, stride_initstates_dim=0,
         stride_seq_idx_batch=0, stride_seq_idx_seqlen=0),
    # exp to an ulp or so and scale * state + new contracted or not: the
    # bf16 out a rounding (2^-8) apart.
    (cdiv(DIM, 1024), B, H), ["out_ptr", "final_states_ptr"],
    bytes=4 * B * NC * H * DIM + 2 * B * NC * H * DIM + 4 * B * H * DIM + 4 * B * H * NC, tol=1e-2,
    package=TRL + "mamba"))

# Mamba-2's gated RMSNorm (layernorm_gated.py, norm(x * silu(z)) as Mamba2's
# norm_before_gate=False), as mamba_split_conv1d_scan_combined calls it:
# the scan's output rows, 5120 wide (one group), and z a slice of the
# in_proj output, rows 10576 apart (2 x 5120 + 2 x 128 + 80 heads), bf16:
# batch 4 x 4096 tokens. Its host's BLOCK_N 8192 and 8 warps.
M, N, DZ = B * S, H * P, 2 * H * P + 2 * G * NS + H
CASES.append(case(
    "mamba2_rmsnorm_gated_fwd_bf16", MAMBA + "layernorm_gated.py", "_layer_norm_fwd_1pass_kernel",
    "X=*bf16, Y=*bf16, W=*bf16, B=None, Z=*bf16, Mean=None, Rstd=*fp32, stride_x_row=i32, "
    "stride_y_row=i32, stride_z_row=i32, M=i32, N=i32, eps=fp32, BLOCK_N=8192, HAS_BIAS=False, HAS_Z=True, "
    "NORM_BEFORE_GATE=False, IS_RMS_NORM=True, num_warps=8",
    dict(X=("randn", "bfloat16", M * N), Y=("zeros", "bfloat16", M * N), W=("randn", "bfloat16", N),
         Z=("randn", "bfloat16", (M - 1) * DZ + N), Rstd=("zeros", "float32", M), stride_x_row=N,
         stride_y_row=N, stride_z_row=DZ, M=M, N=N, eps=1e-5),
    # sigmoid's exp and the row sum in another order: a bf16 rounding apart.
    (M, 1), ["Y", "Rstd"], bytes=2 * 3 * M * N + 2 * N + 4 * M, tol=1e-2, package=TRL + "mamba"))

# Mamba-2's decode step (selective_state_update.py), as Mamba2.step calls
# it: 64 sequences of Mamba2-2.7B, the bf16 state [64, 80, 64, 128] updated
# in place; A, dt, dt_bias and D repeated over the head dim with zero
# strides (so TIE_HDIM), dt_softplus, no z (the gated norm follows). x, B
# and C are slices of the conv step's [64, 5376] output and dt of the
# in_proj output (rows 10576 apart), each here in a buffer of that row
# stride. Its host's BLOCK_SIZE_M 4 and 4 warps for state 128.
BT, XBC = 64, H * P + 2 * G * NS
CASES.append(case(
    "mamba2_selective_state_update_bf16", MAMBA + "selective_state_update.py", "_selective_scan_update_kernel",
    "state_ptr=*bf16, x_ptr=*bf16, dt_ptr=*bf16, dt_bias_ptr=*bf16, A_ptr=*fp32, B_ptr=*bf16, C_ptr=*bf16, "
    "D_ptr=*bf16, z_ptr=None, out_ptr=*bf16, state_batch_indices_ptr=None, batch=i32, nheads=i32, dim=i32, "
    "dstate=i32, nheads_ngroups_ratio=i32, stride_state_batch=i32, stride_state_head=i32, "
    "stride_state_dim=i32, stride_state_dstate=i32, stride_x_batch=i32, stride_x_head=i32, "
    "stride_x_dim=i32, stride_dt_batch=i32, stride_dt_head=i32, stride_dt_dim=i32, "
    "stride_dt_bias_head=i32, stride_dt_bias_dim=i32, stride_A_head=i32, stride_A_dim=i32, "
    "stride_A_dstate=i32, stride_B_batch=i32, stride_B_group=i32, stride_B_dstate=i32, "
    "stride_C_batch=i32, stride_C_group=i32, stride_C_dstate=i32, stride_D_head=i32, stride_D_dim=i32, "
    "stride_z_batch=i32, stride_z_head=i32, stride_z_dim=i32, stride_out_batch=i32, stride_out_head=i32, "
    "stride_out_dim=i32, DT_SOFTPLUS=True, TIE_HDIM=True, BLOCK_SIZE_M=4, HAS_DT_BIAS=True, HAS_D=True, "
    f"HAS_Z=False, HAS_STATE_BATCH_INDICES=False, BLOCK_SIZE_DSTATE={NS}, num_warps=4",
    dict(state_ptr=("randn", "bfloat16", BT * H * P * NS), x_ptr=("randn", "bfloat16", BT * XBC),
         dt_ptr=("randn", "bfloat16", BT * DZ, 0.5),
         # softplus(dt + dt_bias) of 0.002 to 0.08, as Mamba2 initializes dt_bias.
         dt_bias_ptr=("uniform", "bfloat16", H, -6.0, -2.5),
         A_ptr=("uniform", "float32", H, -16.0, -1.0),  # -exp(A_log), A_log = log(U(1, 16))
         B_ptr=("randn", "bfloat16", BT * XBC), C_ptr=("randn", "bfloat16", BT * XBC),
         D_ptr=("uniform", "bfloat16", H, 0.5, 1.5), out_ptr=("zeros", "bfloat16", BT * H * P),
         batch=BT, nheads=H, dim=P, dstate=NS, nheads_ngroups_ratio=H // G,
         stride_state_batch=H * P * NS, stride_state_head=P * NS, stride_state_dim=NS, stride_state_dstate=1,
         stride_x_batch=XBC, stride_x_head=P, stride_x_dim=1, stride_dt_batch=DZ, stride_dt_head=1,
         stride_dt_dim=0, stride_dt_bias_head=1, stride_dt_bias_dim=0, stride_A_head=1, stride_A_dim=0,
         stride_A_dstate=0, stride_B_batch=XBC, stride_B_group=NS, stride_B_dstate=1, stride_C_batch=XBC,
         stride_C_group=NS, stride_C_dstate=1, stride_D_head=1, stride_D_dim=0, stride_z_batch=0,
         stride_z_head=0, stride_z_dim=0, stride_out_batch=H * P, stride_out_head=P, stride_out_dim=1),
    # softplus's log and exp, exp(A dt), to an ulp or so; the state sum in
    # another order; bf16 state and out: a rounding (2^-8) apart.
    (cdiv(P, 4), BT, H), ["state_ptr", "out_ptr"],
    bytes=2 * 2 * BT * H * P * NS + 2 * 2 * BT * H * P + 2 * 2 * BT * G * NS + 2 * BT * H, tol=1e-2,
    package=TRL + "mamba", srcs=[MAMBA + "softplus.py"]))

# lightllm's GQA decode attention, stage 1 of its flash decoding
# (gqa_flash_decoding_stage1.py: per sequence, KV head and 128-token block,
# the group's query heads as the rows of tl.dot, padded to 16, against 16
# gathered tokens a step), fp16: 32 sequences of 4096 tokens, Llama-3-8B's 32
# query heads over 8 KV heads of 128. Its host's BLOCK_SEQ 128, BLOCK_N 16,
# 2 warps, 2 stages; Mid_O holds max_len / 128 + 1 blocks, as
# gqa_token_decode_attention_flash_decoding allocates it. K and V are the
# halves of the per-layer KV buffer [tokens, 2 x 8 heads, 128], each here in
# a buffer of that shape; the token slots scattered.
B, S, H, HK, D, SEQ = 32, 4096, 32, 8, 128, 128
T, NB = B * S, S // SEQ + 1
CASES.append(case(
    "lightllm_gqa_decode_stage1_fp16", TRL + "lightllm/lightllm/models/llama/triton_kernel/gqa_flash_decoding_stage1.py",
    "_fwd_kernel_flash_decode_stage1",
    "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, Req_to_tokens=*i32, B_req_idx=*i32, B_Seqlen=*i32, "
    "Mid_O=*fp32, Mid_O_LogExpSum=*fp32, stride_req_to_tokens_b=i32, stride_req_to_tokens_s=i32, "
    "stride_qbs=i32, stride_qh=i32, stride_qd=i32, stride_kbs=i32, stride_kh=i32, stride_kd=i32, "
    "stride_vbs=i32, stride_vh=i32, stride_vd=i32, stride_mid_ob=i32, stride_mid_oh=i32, stride_mid_os=i32, "
    "stride_mid_od=i32, stride_mid_o_eb=i32, stride_mid_o_eh=i32, stride_mid_o_es=i32, gqa_group_size=i32, "
    f"Q_HEAD_NUM=16, BLOCK_SEQ={SEQ}, BLOCK_DMODEL={D}, BLOCK_N=16, num_warps=2, num_stages=2",
    dict(Q=("randn", "float16", B * H * D), K=("randn", "float16", T * 2 * HK * D),
         V=("randn", "float16", T * 2 * HK * D), sm_scale=D ** -0.5, Req_to_tokens=("perm", "int32", T),
         B_req_idx=("arange", "int32", B), B_Seqlen=("full", "int32", B, S),
         Mid_O=("zeros", "float32", B * H * NB * D), Mid_O_LogExpSum=("zeros", "float32", B * H * NB),
         stride_req_to_tokens_b=S, stride_req_to_tokens_s=1, stride_qbs=H * D, stride_qh=D, stride_qd=1,
         stride_kbs=2 * HK * D, stride_kh=D, stride_kd=1, stride_vbs=2 * HK * D, stride_vh=D, stride_vd=1,
         stride_mid_ob=H * NB * D, stride_mid_oh=NB * D, stride_mid_os=D, stride_mid_od=1,
         stride_mid_o_eb=H * NB, stride_mid_o_eh=NB, stride_mid_o_es=1, gqa_group_size=H // HK),
    # exp and row sums in another order; P rounded to fp16 for the second dot.
    (B, HK, S // SEQ), ["Mid_O", "Mid_O_LogExpSum"],
    bytes=2 * 2 * T * HK * D + 2 * B * H * D + 4 * T + 4 * B * H * (S // SEQ) * (D + 1), tol=1e-2))

# lightllm's GQA decode attention without the split
# (gqa_decode_flashattention_nopad.py: one program per sequence and KV
# head walks all 4096 tokens, 32 a step, the group's query heads padded to
# 16 rows), fp16, the same sequences, heads and KV buffer as above. Its
# host's BLOCK_N 32, 4 warps, 2 stages; 256 programs, fewer than two per SM.
CASES.append(case(
    "lightllm_gqa_decode_nopad_fp16",
    TRL + "lightllm/lightllm/models/llama/triton_kernel/gqa_decode_flashattention_nopad.py", "_fwd_kernel",
    "Q=*fp16, K=*fp16, V=*fp16, sm_scale=fp32, Req_to_tokens=*i32, B_req_idx=*i32, B_seqlen=*i32, Out=*fp16, "
    "stride_qbs=i32, stride_qh=i32, stride_qd=i32, stride_kbs=i32, stride_kh=i32, stride_kd=i32, "
    "stride_vbs=i32, stride_vh=i32, stride_vd=i32, stride_obs=i32, stride_oh=i32, stride_od=i32, "
    "stride_req_to_tokens_b=i32, stride_req_to_tokens_s=i32, kv_group_num=i32, Q_HEAD_NUM=16, "
    f"BLOCK_DMODEL={D}, BLOCK_N=32, num_warps=4, num_stages=2",
    dict(Q=("randn", "float16", B * H * D), K=("randn", "float16", T * 2 * HK * D),
         V=("randn", "float16", T * 2 * HK * D), sm_scale=D ** -0.5, Req_to_tokens=("perm", "int32", T),
         B_req_idx=("arange", "int32", B), B_seqlen=("full", "int32", B, S), Out=("zeros", "float16", B * H * D),
         stride_qbs=H * D, stride_qh=D, stride_qd=1, stride_kbs=2 * HK * D, stride_kh=D, stride_kd=1,
         stride_vbs=2 * HK * D, stride_vh=D, stride_vd=1, stride_obs=H * D, stride_oh=D, stride_od=1,
         stride_req_to_tokens_b=S, stride_req_to_tokens_s=1, kv_group_num=H // HK),
    # exp and row sums in another order; P rounded to fp16 for the second
    # dot; fp16 out.
    (B, HK), ["Out"], bytes=2 * 2 * T * HK * D + 2 * 2 * B * H * D + 4 * T, tol=1e-2))

# native-sparse-attention's flash-attention forward (flash_attention.py,
# varlen with block pointers, causal and gqa_interleave as run-time
# flags), bf16: 4 sequences of 4096 tokens packed, 32 query heads over 8 KV
# heads of 128, causal. Its host's 128 x 64 tiles and, on Hopper at head
# dim 128, 8 warps and 3 stages (get_num_warps_stages).
B, S, H, HK, D = 4, 4096, 32, 8, 128
T = B * S
CASES.append(case(
    "nsa_flash_attn_fwd_causal_bf16", TRL + "nsa/native_sparse_attention/ops/triton/flash_attention.py",
    "forward_kernel",
    "q_ptr=*bf16, k_ptr=*bf16, v_ptr=*bf16, o_ptr=*bf16, lse_ptr=*fp32, cu_seqlens_q=*i32, cu_seqlens_k=*i32, "
    "NUM_KV_HEADS=i32, NUM_SHARE_Q_HEADS=i32, qk_head_dim=i32, v_head_dim=i32, sm_scale=fp32, causal=i1, "
    "gqa_interleave=i1, stride_qn=i32, stride_qh=i32, stride_qd=i32, stride_kn=i32, stride_kh=i32, "
    "stride_kd=i32, stride_vn=i32, stride_vh=i32, stride_vd=i32, stride_on=i32, stride_oh=i32, "
    "stride_od=i32, stride_lh=i32, stride_ln=i32, BLOCK_SIZE_Q=128, BLOCK_SIZE_K=64, "
    f"BLOCK_SIZE_KD={D}, BLOCK_SIZE_VD={D}, num_warps=8, num_stages=3",
    dict(q_ptr=("randn", "bfloat16", T * H * D), k_ptr=("randn", "bfloat16", T * HK * D),
         v_ptr=("randn", "bfloat16", T * HK * D), o_ptr=("zeros", "bfloat16", T * H * D),
         lse_ptr=("zeros", "float32", H * T),
         cu_seqlens_q=lambda torch, gen, b=B, s=S: torch.arange(b + 1, dtype=torch.int32, device="cuda") * s,
         cu_seqlens_k=lambda torch, gen, b=B, s=S: torch.arange(b + 1, dtype=torch.int32, device="cuda") * s,
         NUM_KV_HEADS=HK, NUM_SHARE_Q_HEADS=H // HK, qk_head_dim=D, v_head_dim=D, sm_scale=D ** -0.5,
         causal=True, gqa_interleave=False, stride_qn=H * D, stride_qh=D, stride_qd=1, stride_kn=HK * D,
         stride_kh=D, stride_kd=1, stride_vn=HK * D, stride_vh=D, stride_vd=1, stride_on=H * D, stride_oh=D,
         stride_od=1, stride_lh=T, stride_ln=1),
    # exp2, log2 and row sums in another order; bf16 out.
    (B, H, cdiv(S, 128)), ["o_ptr", "lse_ptr"],
    bytes=2 * 2 * T * H * D + 2 * 2 * T * HK * D + 4 * H * T, tol=1e-2,
    flops=4 * B * H * S * S * D // 2, package=TRL + "nsa"))


def moe_routing(tokens, experts, top_k, block):
    """moe_align_block_size's outputs for a random top-k routing (its own
    seed, so that the three arguments built from it agree): the flattened
    (token, k) slots sorted by expert, each expert's run padded to a
    multiple of `block` with the invalid slot tokens * top_k; the expert of
    each block; the padded length. A function of the argument's index."""
    def build(torch):
        gen = torch.Generator(device="cuda").manual_seed(7)
        ids = torch.rand(tokens, experts, generator=gen, device="cuda").argsort(dim=1)[:, :top_k].reshape(-1)
        numel = ids.numel()
        sorted_ids = torch.full((numel + experts * (block - 1),), numel, dtype=torch.int32, device="cuda")
        expert_ids = torch.zeros(numel + experts, dtype=torch.int32, device="cuda")
        pos = 0
        for e in range(experts):
            slots = (ids == e).nonzero().flatten().to(torch.int32)
            sorted_ids[pos:pos + slots.numel()] = slots
            padded = cdiv(slots.numel(), block) * block
            expert_ids[pos // block:(pos + padded) // block] = e
            pos += padded
        return sorted_ids, expert_ids, torch.tensor([pos], dtype=torch.int32, device="cuda")
    return lambda index: (lambda torch, gen: build(torch)[index])


# The fused MoE GEMM of vLLM (applied-ai's copy, v0_moe_fused.py: tokens
# gathered through the expert-sorted slot list, each block of 64 slots
# through its expert's weight), bf16: Mixtral-8x7B's w1 (gate and up, 4096
# -> 2 x 14336) for 4096 prefill tokens, top-2 of 8 experts, random routing.
# Its host's config past one token per expert, 64 x 64 x 32 with GROUP_SIZE_M
# 8 (Triton's default 4 warps, 3 stages). The weights [E, N, K] are read
# K-contiguous (stride_bk 1). (The col-major v2_moe_fused.py is left out:
# its pid mapping skips tiles unless the grid is square.)
M, E, TOPK, N, K, BM = 4096, 8, 2, 2 * 14336, 4096, 64
EM = M * TOPK + E * (BM - 1)
routing = moe_routing(M, E, TOPK, BM)
CASES.append(case(
    "applied_ai_fused_moe_bf16", TRL + "applied_ai/kernels/triton/inference/col_major_moe_gemm/v0_moe_fused.py",
    "fused_moe_kernel",
    "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, topk_weights_ptr=*fp32, sorted_token_ids_ptr=*i32, "
    "expert_ids_ptr=*i32, num_tokens_post_padded_ptr=*i32, N=i32, K=i32, EM=i32, num_valid_tokens=i32, "
    "stride_am=i32, stride_ak=i32, stride_be=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, "
    "stride_cn=i32, stride_weight=i32, stride_token_id=i32, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, "
    f"BLOCK_SIZE_K=32, GROUP_SIZE_M=8, MUL_ROUTED_WEIGHT=False, top_k={TOPK}, compute_type=tl.bfloat16, "
    "num_warps=4, num_stages=3",
    dict(a_ptr=("randn", "bfloat16", M * K), b_ptr=("randn", "bfloat16", E * N * K, K ** -0.5),
         c_ptr=("zeros", "bfloat16", M * TOPK * N),
         topk_weights_ptr=("uniform", "float32", M * TOPK, 0.0, 1.0),  # not read (MUL_ROUTED_WEIGHT False)
         sorted_token_ids_ptr=routing(0), expert_ids_ptr=routing(1), num_tokens_post_padded_ptr=routing(2),
         N=N, K=K, EM=EM, num_valid_tokens=M * TOPK, stride_am=K, stride_ak=1, stride_be=N * K, stride_bk=1,
         stride_bn=K, stride_cm=N, stride_cn=1, stride_weight=1, stride_token_id=1),
    # fp32 sums in another order: a bf16 rounding (2^-8) apart.
    (cdiv(EM, BM) * cdiv(N, 64),), ["c_ptr"], bytes=2 * (M * K + E * N * K + M * TOPK * N), tol=1e-2,
    flops=2 * M * TOPK * N * K,
    # Imported by the file for its host's moe_align_block_size, absent here.
    stubs={"vllm._C": dict(ops=None)}))

# torchao's HQQ mixed GEMM (hqq/kernels.py: bf16 activations against 4-bit
# weights packed two a byte, [K/2, N], unpacked with a join and a reshape,
# (q - zero) * scale per group of 64 along K), bf16: 4096 tokens through
# Llama-3-8B's gate projection, 4096 -> 14336, HQQ's group size 64. Scales
# and zeros are HQQ's [N, K/64] passed transposed (stride_scale_k 1), as
# torchao's tests pass them. Autotuned (compute-bound list): its first
# config, 128 x 256 x 32, 3 stages, 8 warps; EVEN_K and SPLIT_K 1 (bf16)
# from its heuristics.
M, N, K, QG = 4096, 14336, 4096, 64
CASES.append(case(
    "torchao_hqq_mixed_mm_bf16", TRL + "torchao/torchao/prototype/hqq/kernels.py", "_mixed_mm_kernel",
    "A=*bf16, B=*u8, scales_ptr=*bf16, zeros_ptr=*bf16, C=*bf16, M=i32, N=i32, K=i32, stride_am=i32, "
    "stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, stride_scale_k=i32, "
    f"stride_scale_n=i32, IS_BFLOAT16=True, QGROUP_SIZE={QG}, BLOCK_M=128, BLOCK_N=256, BLOCK_K=32, "
    "SPLIT_K=1, EVEN_K=True, TRANSPOSED=False, GROUP_M=8, acc_dtype=tl.float32, input_precision='ieee', "
    "fp8_fast_accum=False, num_warps=8, num_stages=3",
    dict(A=("randn", "bfloat16", M * K), B=("randbits", "uint8", K // 2 * N),
         # (q - zero) * scale of about +-0.03, as for weights of std 0.02.
         scales_ptr=("uniform", "bfloat16", N * (K // QG), 0.002, 0.004),
         zeros_ptr=("uniform", "bfloat16", N * (K // QG), 6.0, 9.0), C=("zeros", "bfloat16", M * N),
         M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1,
         stride_scale_k=1, stride_scale_n=K // QG),
    # fp32 sums in another order: a bf16 rounding (2^-8) apart.
    (cdiv(M, 128) * cdiv(N, 256), 1), ["C"], bytes=2 * M * K + K // 2 * N + 2 * 2 * N * (K // QG) + 2 * M * N,
    tol=1e-2, flops=2 * M * N * K))

# applied-ai's GPTQ split-K GEMM for decode (splitk_dequant_gemm.py: fp16
# activations against 4-bit weights packed eight an int32 along K, scales
# and packed zeros per group of 128, four K splits summed into C by fp16
# atomics), 16 tokens through Llama-3-8B's gate projection, 4096 -> 14336.
# Its host's 16 x 32 x 128 tiles, split_k 4, 3 stages, 4 warps; C zeroed
# before each run, as the host allocates it.
M, N, K, QG = 16, 14336, 4096, 128
CASES.append(case(
    "applied_ai_gptq_splitk_fp16", TRL + "applied_ai/kernels/triton/inference/gptq/splitk_dequant_gemm.py",
    "matmul_split_k_kernel",
    "a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, scales_ptr=*fp16, zeros_ptr=*i32, stride_am=i32, stride_ak=i32, "
    "stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, stride_scales_g=i32, stride_scales_n=i32, "
    "stride_zeros_g=i32, stride_zeros_n=i32, groupsize=i32, m=i32, n=i32, k=i32, block_m=16, block_n=32, "
    "block_k=128, group_m=8, split_k=4, num_warps=4, num_stages=3",
    dict(a_ptr=("randn", "float16", M * K), b_ptr=("randbits", "int32", K // 8 * N),
         c_ptr=("zeros", "float16", M * N), scales_ptr=("uniform", "float16", K // QG * N, 0.002, 0.004),
         zeros_ptr=("randbits", "int32", K // QG * N // 8), stride_am=K, stride_ak=1, stride_bk=N,
         stride_bn=1, stride_cm=N, stride_cn=1, stride_scales_g=N, stride_scales_n=1,
         stride_zeros_g=N // 8, stride_zeros_n=1, groupsize=QG, m=M, n=N, k=K),
    # The four splits add into fp16 C in any order (a few fp16 roundings,
    # 2^-11 each); b * scale - zero contracted into an FMA or not.
    (cdiv(M, 16) * cdiv(N, 32), 4), ["c_ptr"],
    bytes=K // 2 * N + 2 * K // QG * N + K // QG * N // 2 + 2 * M * K + 2 * M * N, tol=1e-2,
    reset=["c_ptr"]))

# bitsandbytes' NF4 dequantization (kernels_4bit.py's dequant_nf4_kernel: a
# byte holds two codes, mapped through a where-tree to the NF4 levels,
# scaled by the absmax of each 64 and interleaved), to bf16 as QLoRA
# dequantizes a weight every forward: Llama-3-8B's gate projection, 14336 x
# 4096. Its host's SPLIT_SIZE 256 (Triton's default 4 warps).
N = 14336 * 4096
CASES.append(case(
    "bnb_dequant_nf4_bf16", "tests/realworld/bitsandbytes/bitsandbytes/backends/triton/kernels_4bit.py",
    "dequant_nf4_kernel",
    "a_ptr=*u8, c_ptr=*bf16, absmax_ptr=*fp32, num_paired_elements=i32, num_output_elements=i32, "
    "QUANT_BLOCK=64, SPLIT_SIZE=256",
    dict(a_ptr=("randbits", "uint8", N // 2), c_ptr=("zeros", "bfloat16", N),
         absmax_ptr=("uniform", "float32", N // 64, 0.02, 0.1), num_paired_elements=N // 2,
         num_output_elements=N),
    # One fp32 product and its bf16 rounding: exact.
    (cdiv(N // 2, 256),), ["c_ptr"], bytes=N // 2 + 2 * N + 4 * (N // 64), tol=0))

# lightllm's fp8 batched GEMM with per-row and per-column scales
# (bmm_scaled_fp8.py), as DeepSeek's MLA absorbs its key up-projection:
# per head, 4096 tokens' q_nope [4096, 128] against W_UK [128, 512], all 128
# heads on one GPU (data-parallel attention), bf16 scales and out; B
# K-contiguous (its host asserts b.stride(1) == 1), as its __main__ lays it
# out. Its config when no tuned one is on file: 128 x 256 x 128, GROUP_SIZE_M
# 8, 4 stages, 8 warps (one K step at K = 128).
HB, M, N, K = 128, 4096, 512, 128
CASES.append(case(
    "lightllm_bmm_scaled_fp8_bf16", TRL + "lightllm/lightllm/common/basemodel/triton_kernel/bmm_scaled_fp8.py",
    "bmm_scaled_fp8_kernel",
    "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*bf16, a_scale_ptr=*bf16, b_scale_ptr=*bf16, M=i32, N=i32, K=i32, "
    "stride_ah=i32, stride_am=i32, stride_ak=i32, stride_bh=i32, stride_bk=i32, stride_bn=i32, "
    "stride_ch=i32, stride_cm=i32, stride_cn=i32, stride_scale_ah=i32, stride_scale_am=i32, "
    "stride_scale_bh=i32, stride_scale_bn=i32, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=128, "
    "GROUP_SIZE_M=8, num_warps=8, num_stages=4",
    dict(a_ptr=fp8_e4m3(HB * M * K, 112), b_ptr=fp8_e4m3(HB * N * K, 100), c_ptr=("zeros", "bfloat16", HB * M * N),
         a_scale_ptr=("uniform", "bfloat16", HB * M, 0.008, 0.01),
         b_scale_ptr=("uniform", "bfloat16", HB * N, 1.8e-4, 2.2e-4), M=M, N=N, K=K,
         stride_ah=M * K, stride_am=K, stride_ak=1, stride_bh=N * K, stride_bk=1, stride_bn=K,
         stride_ch=M * N, stride_cm=N, stride_cn=1, stride_scale_ah=M, stride_scale_am=1,
         stride_scale_bh=N, stride_scale_bn=1),
    # fp32 sums in another order, two scale products: a bf16 rounding apart.
    (cdiv(M, 128) * cdiv(N, 256), HB), ["c_ptr"], bytes=HB * (M * K + N * K + 2 * M * N + 2 * (M + N)),
    tol=1e-2, flops=2 * HB * M * N * K,
    # Imported by the file for its host-side config class, absent here.
    stubs={"lightllm.common.kernel_config": dict(KernelConfigs=object),
           "frozendict": dict(frozendict=dict)}))

# Later batches, one file per family of kernels.
from realworld_cases_fla import CASES as FLA_CASES  # noqa: E402
from realworld_cases_attention_gemm import CASES as ATTENTION_GEMM_CASES  # noqa: E402
from realworld_cases_quantize import CASES as QUANTIZE_CASES  # noqa: E402
from realworld_cases_gemlite import CASES as GEMLITE_CASES  # noqa: E402
from realworld_cases_flaggems import CASES as FLAGGEMS_CASES  # noqa: E402
from realworld_cases_vllm import CASES as VLLM_CASES  # noqa: E402
from realworld_cases_lmdeploy import CASES as LMDEPLOY_CASES  # noqa: E402
from realworld_cases_sglang import CASES as SGLANG_CASES  # noqa: E402
from realworld_cases_te import CASES as TE_CASES  # noqa: E402
from realworld_cases_mamba3 import CASES as MAMBA3_CASES  # noqa: E402
from realworld_cases_mamba2_bwd import CASES as MAMBA2_BWD_CASES  # noqa: E402
from realworld_cases_gguf import CASES as GGUF_CASES  # noqa: E402
from realworld_cases_ninth import CASES as NINTH_CASES  # noqa: E402
from realworld_cases_tenth import CASES as TENTH_CASES  # noqa: E402
from realworld_cases_eleventh import CASES as ELEVENTH_CASES  # noqa: E402
from realworld_cases_twelfth import CASES as TWELFTH_CASES  # noqa: E402
from realworld_cases_thirteenth import CASES as THIRTEENTH_CASES  # noqa: E402
from realworld_cases_fourteenth import CASES as FOURTEENTH_CASES  # noqa: E402
from realworld_cases_fifteenth import CASES as FIFTEENTH_CASES  # noqa: E402
from realworld_cases_sixteenth import CASES as SIXTEENTH_CASES  # noqa: E402

CASES += (FLA_CASES + ATTENTION_GEMM_CASES + QUANTIZE_CASES + GEMLITE_CASES + FLAGGEMS_CASES + VLLM_CASES
          + LMDEPLOY_CASES + SGLANG_CASES + TE_CASES + MAMBA3_CASES + MAMBA2_BWD_CASES + GGUF_CASES
          + NINTH_CASES + TENTH_CASES + ELEVENTH_CASES + TWELFTH_CASES + THIRTEENTH_CASES + FOURTEENTH_CASES
          + FIFTEENTH_CASES + SIXTEENTH_CASES)
