"""The cases of bench/realworld_cubins.py: kernels from the tutorials and the
real-world samples (tests/realworld/), memory-bound ones first, then
tensor-core ones (GEMMs, attention, a chunked scan: kernels of tl.dot), at
the sizes and launch configurations their own host code picks for an
LLM-sized problem (4096-8192 rows; 4096 tokens, 4 x 32 heads x 4096 for
attention).

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
TRL = "tests/realworld/"


def fp8_e4m3(numel, std):
    """fp8 (e4m3) values as a per-block quantization to the full range makes
    them: randn * std, clamped to +-448 (torch's cast gives NaN from 480)."""
    return lambda torch, gen: ((torch.randn(numel, generator=gen, device="cuda") * std)
                               .clamp(-448, 448).to(torch.float8_e4m3fn))


def decay_cumsum(rows, length, step):
    """Mamba's dA_cumsum: the running sum along each chunk of dt * A, a decay
    of up to `step` per token (A < 0), so 0 > dA_cumsum, decreasing."""
    return lambda torch, gen: -(torch.rand(rows, length, generator=gen, device="cuda") * step).cumsum(-1).reshape(-1)


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
