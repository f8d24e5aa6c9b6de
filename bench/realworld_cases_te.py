"""Real-world cases: Transformer Engine's Triton kernels (NVIDIA/
TransformerEngine, tests/realworld/transformer_engine). bench/realworld_cases.py
says what a case is.

mHC (manifold-constrained hyper-connections, `common/triton/mhc.py`): the
expand-combine step mixes a layer's output f (M tokens x C) into n = 4
residual streams x (M x C x 4) through per-token 1 x 4 and 4 x 4 matrices,
out = f @ H_post + x @ H_res, and its backward. Both are autotuned; the cases
take configs of their autotune lists at M = 8192 tokens (s x b) and a hidden
size C of 4096, bf16 activations and fp32 mixing matrices as TE keeps them:
the forward at 2 x 256 blocks (1 warp, 1 stage), the backward at 4 tokens x
the whole 4096 (BLOCK_SIZE_C = C, as its pruner sets it) in steps of 64
(1 warp, 2 stages), TF32 precision, no bias.
"""

from realworld_case_rules import TRL, case, cdiv

CASES = []

FILE = TRL + "transformer_engine/transformer_engine/common/triton/mhc.py"
M, C, N = 8192, 4096, 4

CASES.append(case(
    "te_mhc_expand_combine_fwd_bf16", FILE, "_mhc_expand_combine_fwd",
    "f_ptr=*bf16, bias_ptr=None, H_post_ptr=*fp32, x_ptr=*bf16, H_res_ptr=*fp32, output_ptr=*bf16, "
    "M=i32, C=i32, n=4, stride_fm=i32, stride_fc=i32, stride_bias=i32, stride_xm=i32, stride_xCn=i32, "
    "stride_output_m=i32, stride_output_Cn=i32, BLOCK_SIZE_M=2, BLOCK_SIZE_C=256, HAS_BIAS=False, "
    "num_warps=1, num_stages=1",
    dict(f_ptr=("randn", "bfloat16", M * C), H_post_ptr=("randn", "float32", M * N),
         x_ptr=("randn", "bfloat16", M * C * N), H_res_ptr=("randn", "float32", M * N * N),
         output_ptr=("zeros", "bfloat16", M * C * N), M=M, C=C, stride_fm=C, stride_fc=1, stride_bias=1,
         stride_xm=C * N, stride_xCn=1, stride_output_m=C * N, stride_output_Cn=1),
    (cdiv(C, 256), cdiv(M, 2)), ["output_ptr"],
    bytes=2 * M * C + 2 * 2 * M * C * N + 4 * M * (N + N * N), tol=2e-2))

CASES.append(case(
    "te_mhc_expand_combine_bwd_bf16", FILE, "_mhc_expand_combine_bwd",
    "grad_output_ptr=*bf16, f_ptr=*bf16, bias_ptr=None, H_post_ptr=*fp32, x_ptr=*bf16, H_res_ptr=*fp32, "
    "grad_H_post_ptr=*fp32, grad_f_ptr=*bf16, grad_bias_ptr=*bf16, grad_bias_ws_ptr=None, "
    "grad_H_res_ptr=*fp32, grad_x_ptr=*bf16, M=i32, C=i32, n=4, stride_grad_output_m=i32, "
    "stride_grad_output_Cn=i32, stride_fm=i32, stride_fc=i32, stride_bias=i32, stride_xm=i32, "
    "stride_xCn=i32, stride_grad_fm=i32, stride_grad_fc=i32, stride_grad_bias=i32, "
    "stride_grad_bias_ws_m=i32, stride_grad_bias_ws_c=i32, stride_grad_xm=i32, stride_grad_xCn=i32, "
    f"BLOCK_SIZE_M=4, BLOCK_SIZE_C={C}, STEP_SIZE_C=64, precision='tf32', HAS_BIAS=False, "
    "FUSE_GRAD_X_ACC=False, DETERMINISTIC=False, num_warps=1, num_stages=2",
    dict(grad_output_ptr=("randn", "bfloat16", M * C * N), f_ptr=("randn", "bfloat16", M * C),
         H_post_ptr=("randn", "float32", M * N), x_ptr=("randn", "bfloat16", M * C * N),
         H_res_ptr=("randn", "float32", M * N * N), grad_H_post_ptr=("zeros", "float32", M * N),
         grad_f_ptr=("zeros", "bfloat16", M * C), grad_bias_ptr=("zeros", "bfloat16", 1),
         grad_H_res_ptr=("zeros", "float32", M * N * N), grad_x_ptr=("zeros", "bfloat16", M * C * N),
         M=M, C=C, stride_grad_output_m=C * N, stride_grad_output_Cn=1, stride_fm=C, stride_fc=1,
         stride_bias=1, stride_xm=C * N, stride_xCn=1, stride_grad_fm=C, stride_grad_fc=1,
         stride_grad_bias=1, stride_grad_bias_ws_m=C, stride_grad_bias_ws_c=1, stride_grad_xm=C * N,
         stride_grad_xCn=1),
    (1, cdiv(M, 4)), ["grad_H_post_ptr", "grad_f_ptr", "grad_H_res_ptr", "grad_x_ptr"],
    bytes=2 * (2 * M * C * N + M * C) + 4 * M * (N + N * N) + 2 * (M * C + M * C * N)
    + 4 * M * (N + N * N), tol=2e-2))
