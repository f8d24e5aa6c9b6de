"""The cases of bench/realworld_cubins.py: kernels from the tutorials and the
real-world samples (tests/realworld/), mostly memory-bound, at the sizes and
launch configurations their own host code picks for a 4096-8192 row,
LLM-sized problem.

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

Signatures are written without alignment hints: realworld_cubins.py --list
adds the ones Triton's JIT specializes on for these arguments (`:16` for a
pointer or an integer divisible by 16, `:1` for an integer equal to 1), so
that both compilers see the same facts.
"""

TUT = "tests/realworld/tutorials/python/tutorials/"
LIGER_ROOT = "tests/realworld/liger/src"
LIGER = LIGER_ROOT + "/liger_kernel/ops/"
SMS = 132  # the H100/H200 SM count, as the hosts' sm_count grids use it


def cdiv(a, b):
    return (a + b - 1) // b


def case(id, file, kernel, sig, args, grid, outputs, bytes, tol, **rules):
    if file.startswith(LIGER_ROOT + "/"):
        rules.setdefault("package", LIGER_ROOT)
    return dict(id=id, file=file, kernel=kernel, sig=sig, args=args, grid=tuple(grid),
                outputs=list(outputs), bytes=bytes, tol=tol, **rules)



CASES = []

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
