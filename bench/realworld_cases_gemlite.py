"""Real-world cases: gemlite's low-bit GEMMs (mobiusml/gemlite,
triton_kernels/): weights packed eight 4-bit values an int32 along K and
dequantized in the loop, as HQQ/vLLM/SGLang serve them, and the 8-bit
weight-and-activation paths with per-row and per-column scales. Prefill
shapes (4096 tokens) go through gemm_INT_kernel, decode through the split-K
GEMM (16 tokens) and the reversed split-K GEMV (one token). The layer is
Llama-3-8B's gate projection, 4096 -> 14336, HQQ's group size 128 (gemlite's
default for 4-bit). bench/realworld_cases.py says what a case is.

Configs are entries of gemlite's own "fast" autotune lists for NVIDIA, after
its pruner (which caps stages at 4 for packed weights)."""

from realworld_case_rules import TRL, case, cdiv, fp8_e4m3

CASES = []

GL = TRL + "gemlite/gemlite/triton_kernels/"
PKG = TRL + "gemlite"
UTILS = [GL + "utils.py"]  # dequantize and the tile orders
M, N, K, QG = 4096, 14336, 4096, 128
W4 = "W_nbits=4, unpack_mask=15, elements_per_sample=8, b_sizeof=4"
META_PTRS = "scales_ptr=*fp16, zeros_ptr=*fp16, scales_a_ptr=None"
STRIDES = ("stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32")


def w4_args(m, c_dtype="float16"):
    """x [m, K] fp16, W_q [K/8, N] int32 (row-major, as gemlite packs over
    rows), scales and zeros [K/128, N] fp16: (q - zero) * scale of about
    +-0.03, as for weights of std 0.02."""
    return dict(a_ptr=("randn", "float16", m * K), b_ptr=("randbits", "int32", K // 8 * N),
                c_ptr=("zeros", c_dtype, m * N),
                scales_ptr=("uniform", "float16", K // QG * N, 0.002, 0.004),
                zeros_ptr=("uniform", "float16", K // QG * N, 6.0, 9.0), M=m, N=N, K=K,
                stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1,
                stride_meta_g=N, stride_meta_n=1, M_CLOSEST=m, load_scales_as_block=False)


def w4_bytes(m):
    return K // 2 * N + 2 * 2 * K // QG * N + 2 * m * K + 2 * m * N


# A16W4 prefill: gemm_INT_kernel, asymmetric groups ((q - zero) * scale,
# W_group_mode 3), fp32 accumulation. 64 x 256 x 64, A loaded mid-loop
# (A_load_order 2), 8 warps, 4 stages.
CASES.append(case(
    "gemlite_gemm_a16w4_fp16", GL + "gemm_kernels.py", "gemm_INT_kernel",
    f"a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, {META_PTRS}, M=i32, N=i32, K=i32, M_CLOSEST=i32, {W4}, "
    f"group_size={QG}, type_id=0, a_sizeof=2, {STRIDES}, stride_meta_a_m=None, stride_meta_a_g=None, "
    "stride_meta_g=i32, stride_meta_n=i32, load_scales_as_block=i1, input_dtype=tl.float16, "
    "output_dtype=tl.float16, acc_dtype=tl.float32, meta_dtype=tl.float16, channel_scale_mode=0, "
    "W_group_mode=3, zero_is_scalar=False, BLOCK_SIZE_M=64, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, "
    "GROUP_SIZE_M=8, NUM_STAGES=2, A_load_order=2, data_contiguous=True, num_warps=8, num_stages=2",
    w4_args(M),
    # fp32 sums in another order: an fp16 rounding or two apart.
    (cdiv(M, 64) * cdiv(N, 256),), ["c_ptr"], bytes=w4_bytes(M), tol=1e-2, flops=2 * M * N * K,
    package=PKG, srcs=UTILS))


def w8a8(id, in_sig, in_dtype, make, acc, config, tol):
    """gemm_INT_kernel with 8-bit activations and weights (elements_per_sample
    1, no groups): int32 or fp32 sums scaled per row of x and per column of
    W in the epilogue (channel_scale_mode 3), fp16 out. W [K, N] row-major."""
    bm, bn, bk, warps, stages, order = config
    return case(
        id, GL + "gemm_kernels.py", "gemm_INT_kernel",
        f"a_ptr=*{in_sig}, b_ptr=*{in_sig}, c_ptr=*fp16, scales_ptr=*fp32, zeros_ptr=*fp32, "
        f"scales_a_ptr=*fp32, M=i32, N=i32, K=i32, M_CLOSEST=i32, W_nbits=8, group_size={K}, "
        f"unpack_mask=255, elements_per_sample=1, type_id=0, a_sizeof=1, b_sizeof=1, {STRIDES}, "
        "stride_meta_a_m=i32, stride_meta_a_g=i32, stride_meta_g=i32, stride_meta_n=i32, "
        f"load_scales_as_block=i1, input_dtype={in_dtype}, output_dtype=tl.float16, acc_dtype={acc}, "
        "meta_dtype=tl.float32, channel_scale_mode=3, W_group_mode=0, zero_is_scalar=False, "
        f"BLOCK_SIZE_M={bm}, BLOCK_SIZE_N={bn}, BLOCK_SIZE_K={bk}, GROUP_SIZE_M=8, NUM_STAGES={stages}, "
        f"A_load_order={order}, data_contiguous=True, num_warps={warps}, num_stages={stages}",
        dict(a_ptr=make(M * K), b_ptr=make(K * N), c_ptr=("zeros", "float16", M * N),
             scales_ptr=("uniform", "float32", N, 0.001, 0.002), zeros_ptr=("zeros", "float32", N),
             scales_a_ptr=("uniform", "float32", M, 0.001, 0.002), M=M, N=N, K=K,
             stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1,
             stride_meta_a_m=1, stride_meta_a_g=1, stride_meta_g=N, stride_meta_n=1, M_CLOSEST=M,
             load_scales_as_block=False),
        (cdiv(M, bm) * cdiv(N, bn),), ["c_ptr"], bytes=M * K + K * N + 2 * M * N + 4 * (M + N),
        tol=tol, flops=2 * M * N * K, package=PKG, srcs=UTILS)


# A8W8 int8 (gemlite's dynamic int8 path): exact int32 sums, so only the
# epilogue's fp32 scaling and fp16 rounding can differ. 64 x 256 x 128, 8
# warps, 4 stages.
CASES.append(w8a8("gemlite_gemm_a8w8_int8", "i8", "tl.int8",
                  lambda n: ("randint", "int8", n, -127, 128), "tl.int32", (64, 256, 128, 8, 4, 0), 1e-3))

# A8W8 fp8 e4m3 (gemlite's fp8 path): fp32 sums of e4m3 products.
CASES.append(w8a8("gemlite_gemm_a8w8_fp8", "fp8e4nv", "tl.float8e4nv",
                  lambda n: fp8_e4m3(n, 100), "tl.float32", (64, 256, 128, 8, 4, 0), 1e-2))

# A16W4 decode, 16 tokens: the split-K GEMM, four K splits summed into C by
# fp16 atomics (C zeroed before each run, as its host allocates it). 16 x 64
# x 128, split 4, 4 warps, 4 stages.
MD = 16
CASES.append(case(
    "gemlite_gemm_splitk_a16w4_decode_fp16", GL + "gemm_splitK_kernels.py", "gemm_splitK_INT_kernel",
    f"a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, {META_PTRS}, M=i32, N=i32, K=i32, M_CLOSEST=i32, {W4}, "
    f"group_size={QG}, type_id=0, a_sizeof=2, {STRIDES}, stride_meta_a_m=None, stride_meta_a_g=None, "
    "stride_meta_g=i32, stride_meta_n=i32, load_scales_as_block=i1, input_dtype=tl.float16, "
    "output_dtype=tl.float16, acc_dtype=tl.float32, meta_dtype=tl.float16, channel_scale_mode=0, "
    "W_group_mode=3, zero_is_scalar=False, BLOCK_SIZE_M=16, BLOCK_SIZE_N=64, BLOCK_SIZE_K=128, "
    "GROUP_SIZE_M=8, SPLIT_K=4, NUM_STAGES=4, A_load_order=0, data_contiguous=True, num_warps=4, "
    "num_stages=4",
    w4_args(MD),
    # Four splits added into fp16 C in any order.
    (cdiv(MD, 16) * cdiv(N, 64), 4), ["c_ptr"], bytes=w4_bytes(MD), tol=1e-2, reset=["c_ptr"],
    package=PKG, srcs=UTILS))

# A16W4 decode, one token: the reversed split-K GEMV (two K chunks of 32 a
# program, products summed with tl.sum in fp16 as gemlite's host picks
# acc_dtype for fp16 inputs, added into C by atomics). 256 columns a
# program, 1 warp, 1 stage.
CASES.append(case(
    "gemlite_gemv_revsplitk_a16w4_fp16", GL + "gemv_revsplitK_kernels.py", "gemv_INT_revsplitK_kernel",
    f"a_ptr=*fp16, b_ptr=*i32, c_ptr=*fp16, {META_PTRS}, M=i32, N=i32, K=i32, {W4.replace(', b_sizeof=4', '')}, "
    f"group_size={QG}, type_id=0, use_prehook=False, {STRIDES}, stride_meta_g=i32, stride_meta_n=i32, "
    "input_dtype=tl.float16, output_dtype=tl.float16, acc_dtype=tl.float16, meta_dtype=tl.float16, "
    "channel_scale_mode=0, W_group_mode=3, zero_is_scalar=False, BLOCK_SIZE_M=1, BLOCK_SIZE_N=256, "
    "BLOCK_SIZE_K=32, A_load_order=0, dot_prod_mode=0, data_contiguous=True, dump_b_val=0, num_warps=1, num_stages=1",
    w4_args(1),
    # fp16 sums of 64 products, 64 partial sums added by fp16 atomics.
    (cdiv(N, 256), cdiv(K, 64)), ["c_ptr"], bytes=w4_bytes(1), tol=2e-2, reset=["c_ptr"], package=PKG, srcs=UTILS))
