"""Real-world cases: torchao's blockwise fp8 quantization for fp8 training
(prototype/blockwise_fp8_training/kernels.py). Memory-bound kernels whose
reads and writes run along different dimensions: an activation quantized
per 1 x 128 or 128 x 1 group and written row- or column-major, a weight
quantized per 128 x 128 block and written transposed. bench/realworld_cases.py
says what a case is."""

from realworld_case_rules import TRL, case, cdiv

CASES = []

BW = TRL + "torchao/torchao/prototype/blockwise_fp8_training/kernels.py"
# A Llama-3-8B-sized activation (8192 tokens x 4096) and weight (4096 x
# 14336), bf16, quantized to e4m3 (FP8_MAX 448) with torchao's EPS 1e-12.
M, K, B = 8192, 4096, 128
FP8 = "EPS=1e-12, FP8_MAX=448.0"
X = ("randn", "bfloat16", M * K)
# Autotuned over NUM_GROUPS 2-128, 2-8 warps, 2-6 stages: one mid config
# of that list for both sides.
G = 32
# The file imports torchao's float8 config for its host functions' default
# dtype; the package's __init__ imports far more.
STUBS = {"torchao.float8.config": dict(e4m3_dtype=None)}

def act_quant(name, y_strides, s_strides, grid):
    """One of the three activation kernels: the same arguments, x [M, K]
    row-major, y (fp8) and s (M * K / 128 scales) at the given strides."""
    return case(
        f"torchao_fp8_{name}", BW, f"triton_fp8_blockwise_{name}_kernel",
        "x_ptr=*bf16, x_stride_dim_0=i32, x_stride_dim_1=i32, y_ptr=*fp8e4nv, y_stride_dim_0=i32, "
        "y_stride_dim_1=i32, s_ptr=*fp32, s_stride_dim_0=i32, s_stride_dim_1=i32, M=i32, "
        f"K={K}, BLOCK_SIZE={B}, NUM_GROUPS={G}, {FP8}, num_warps=4, num_stages=2",
        dict(x_ptr=X, x_stride_dim_0=K, x_stride_dim_1=1, y_ptr=("zeros", "float8_e4m3fn", M * K),
             y_stride_dim_0=y_strides[0], y_stride_dim_1=y_strides[1],
             s_ptr=("zeros", "float32", M * K // B), s_stride_dim_0=s_strides[0],
             s_stride_dim_1=s_strides[1], M=M),
        grid, ["y_ptr", "s_ptr"], bytes=2 * M * K + M * K + 4 * M * K // B, tol=0, stubs=STUBS,
        package=TRL + "torchao")


# act_quant_lhs: scales per 1 x 128 group of a row, stored column-major
# (torch._scaled_mm's layout); y row-major like x.
CASES.append(act_quant("act_quant_lhs", (K, 1), (1, M), (cdiv(M, G), cdiv(K, B))))

# act_quant_rhs: scales per 128 x 1 group of a column; y column-major
# (y_stride_dim_0 1): written down its columns.
CASES.append(act_quant("act_quant_rhs", (1, M), (K, 1), (cdiv(M, B), cdiv(K, G))))

# act_quant_transposed_lhs: per-column scales of x, y = x^T written
# row-major ([K, M]; its tile is x's transposed, stored along its rows),
# scales column-major.
CASES.append(act_quant("act_quant_transposed_lhs", (M, 1), (1, K), (cdiv(M, B), cdiv(K, G))))

# weight_quant_transposed_rhs: one scale per 128 x 128 block, y = x^T
# written column-major (its tile stored down its columns), scales
# column-major. Autotuned over 4 or 8 warps, 2 or 4 stages.
N = 14336
CASES.append(case(
    "torchao_fp8_weight_quant_transposed_rhs", BW, "triton_fp8_blockwise_weight_quant_transposed_rhs_kernel",
    "x_ptr=*bf16, x_stride_dim_0=i32, x_stride_dim_1=i32, y_ptr=*fp8e4nv, y_stride_dim_0=i32, "
    f"y_stride_dim_1=i32, s_ptr=*fp32, s_stride_dim_0=i32, s_stride_dim_1=i32, M={K}, N={N}, "
    f"BLOCK_SIZE={B}, {FP8}, num_warps=4, num_stages=2",
    dict(x_ptr=("randn", "bfloat16", K * N), x_stride_dim_0=N, x_stride_dim_1=1,
         y_ptr=("zeros", "float8_e4m3fn", K * N), y_stride_dim_0=1, y_stride_dim_1=N,
         s_ptr=("zeros", "float32", (N // B) * (K // B)), s_stride_dim_0=1, s_stride_dim_1=N // B),
    (cdiv(K, B), cdiv(N, B)), ["y_ptr", "s_ptr"], bytes=2 * K * N + K * N + 4 * (K // B) * (N // B), tol=0, stubs=STUBS, package=TRL + "torchao"))
