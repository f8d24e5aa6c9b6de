"""Real-world cases: GPT-QModel's GGUF fused GEMMs (ModelCloud/GPTQModel,
tests/realworld/gptqmodel, nn_modules/qlinear/gguf_triton.py): the k-quant
weights dequantized in the loop, 32 (Q4_K) or 16 (Q6_K) values of K a step,
into an fp16 tl.dot. bench/realworld_cases.py says what a case is.

Layers of Llama-3-8B: Q4_K (the bulk of a Q4_K_M file) on the gate/up
projection, 4096 -> 14336; Q6_K (a Q6_K file) on the q/o projection,
4096 -> 4096. The layout is GGUFTritonKernel._build_triton_cache's: each
256-value super-block's bytes transposed to [NUM_BLOCKS, bytes, N], so qs
[16, 128, N] u8 (two 4-bit values a byte), scale and min [16, 8, N] fp16
(d * sc and dmin * m, one per 32 values); Q6_K ql [16, 128, N] and qh
[16, 64, N] u8, scale [16, 16, N] fp16 (d * the int8 scale, one per 16
values). The forward casts x to fp16 (contiguous [M, K]); out [M, N] fp16.
K = 4096 is 16 super-blocks, so fused_q4_k_matmul / fused_q6_k_matmul pick
the _large kernels (NUM_BLOCKS >= 16), autotuned (custom_autotune) over
_GGUF_TRITON_LARGE_CONFIGS: decode takes that list's first config whose
BLOCK_SIZE_M covers the tokens, 8 x 16 (2 warps, 2 stages) for 8 tokens and
16 x 16 (2 warps, 2 stages) for 16; prefill (512 tokens) its largest tile,
32 x 64 (8 warps, 2 stages). Grid: cdiv(M, BLOCK_SIZE_M) x cdiv(N,
BLOCK_SIZE_N), as _launch computes it. Decode cases are bound by the weight
bytes and count bytes; prefill counts FLOPs.

The module imports GPT-QModel's adapter, constants, backend and torch GGUF
layer (absent here) for its host class: stubs stand in for them. Its jit
functions sit under `if _TRITON_AVAILABLE:`, set by a guarded import of
triton_utils.custom_autotune, which kilnc gets as --src (as the corpus passes
the library's files).
"""

import types

from realworld_case_rules import TRL, case, cdiv

CASES = []

FILE = TRL + "gptqmodel/gptqmodel/nn_modules/qlinear/gguf_triton.py"
PKG = TRL + "gptqmodel"
# The module's `try: import triton ...; from ..triton_utils import
# custom_autotune` guards its jit functions: kilnc takes the try branch when
# the relative import resolves among the --src files.
SRCS = [TRL + "gptqmodel/gptqmodel/nn_modules/triton_utils/__init__.py",
        TRL + "gptqmodel/gptqmodel/nn_modules/triton_utils/custom_autotune.py"]
_NS = types.SimpleNamespace
STUBS = {
    "gptqmodel.adapter.adapter": dict(Adapter=object, Lora=object),
    "gptqmodel.models._const": dict(DEVICE=_NS(CUDA="cuda"), PLATFORM=_NS(LINUX="linux", WIN32="win32")),
    "gptqmodel.quantization": dict(FORMAT=_NS(GGUF="gguf"), METHOD=_NS(GGUF="gguf")),
    "gptqmodel.utils.backend": dict(BACKEND=_NS(GGUF_TRITON="gguf_triton")),
    "gptqmodel.utils.python": dict(has_gil_disabled=lambda: False),
    "gptqmodel.nn_modules.qlinear.gguf": dict(GGUFTorchLinear=object, _unpack_q4_k_scale_min_torch=None),
}
K = 4096
NB = K // 256  # super-blocks along K


def config(m):
    """(BLOCK_SIZE_M, BLOCK_SIZE_N, num_warps, num_stages) for m tokens."""
    return {8: (8, 16, 2, 2), 16: (16, 16, 2, 2)}.get(m, (32, 64, 8, 2))


def common(m, n):
    """x, out and their strides, and the run-time sizes."""
    return dict(x_ptr=("randn", "float16", m * K), out_ptr=("zeros", "float16", m * n), M=m, N=n,
                NUM_BLOCKS=NB, stride_xm=K, stride_xk=1, stride_om=n, stride_on=1)


def q4_k(m, n=14336):
    bm, bn, warps, stages = config(m)
    weights = NB * 128 * n + 2 * 2 * NB * 8 * n
    CASES.append(case(
        f"gptqmodel_gguf_q4_k_m{m}_fp16", FILE, "_gguf_q4_k_fused_matmul_kernel_impl",
        "x_ptr=*fp16, qs_ptr=*u8, scale_ptr=*fp16, min_ptr=*fp16, out_ptr=*fp16, M=i32, N=i32, "
        "NUM_BLOCKS=i32, stride_xm=i32, stride_xk=i32, stride_qb=i32, stride_qq=i32, stride_qn=i32, "
        "stride_sb=i32, stride_ss=i32, stride_sn=i32, stride_mb=i32, stride_ms=i32, stride_mn=i32, "
        f"stride_om=i32, stride_on=i32, BLOCK_SIZE_M={bm}, BLOCK_SIZE_N={bn}, num_warps={warps}, "
        f"num_stages={stages}",
        dict(common(m, n), qs_ptr=("randbits", "uint8", NB * 128 * n),
             # q * scale - min, q in [0, 15]: weights of about +-0.03 (std
             # 0.02), min about 7.5 scales.
             scale_ptr=("uniform", "float16", NB * 8 * n, 0.002, 0.006),
             min_ptr=("uniform", "float16", NB * 8 * n, 0.015, 0.045),
             stride_qb=128 * n, stride_qq=n, stride_qn=1, stride_sb=8 * n, stride_ss=n, stride_sn=1,
             stride_mb=8 * n, stride_ms=n, stride_mn=1),
        # fp32 sums in another order; q * scale - min contracted or not (an
        # fp16 rounding of a weight); fp16 out.
        (cdiv(m, bm), cdiv(n, bn)), ["out_ptr"], bytes=weights + 2 * m * K + 2 * m * n, tol=1e-2,
        package=PKG, stubs=STUBS, srcs=SRCS, **({"flops": 2 * m * n * K} if m > 16 else {})))


def q6_k(m, n=4096):
    bm, bn, warps, stages = config(m)
    weights = NB * (128 + 64) * n + 2 * NB * 16 * n
    CASES.append(case(
        f"gptqmodel_gguf_q6_k_m{m}_fp16", FILE, "_gguf_q6_k_fused_matmul_kernel_impl",
        "x_ptr=*fp16, ql_ptr=*u8, qh_ptr=*u8, scale_ptr=*fp16, out_ptr=*fp16, M=i32, N=i32, "
        "NUM_BLOCKS=i32, stride_xm=i32, stride_xk=i32, stride_qlb=i32, stride_qlq=i32, stride_qln=i32, "
        "stride_qhb=i32, stride_qhq=i32, stride_qhn=i32, stride_sb=i32, stride_ss=i32, stride_sn=i32, "
        f"stride_om=i32, stride_on=i32, BLOCK_SIZE_M={bm}, BLOCK_SIZE_N={bn}, num_warps={warps}, "
        f"num_stages={stages}",
        dict(common(m, n), ql_ptr=("randbits", "uint8", NB * 128 * n), qh_ptr=("randbits", "uint8", NB * 64 * n),
             # (q - 32) * scale, q in [0, 63]: weights of about +-0.03.
             scale_ptr=("uniform", "float16", NB * 16 * n, 0.0005, 0.0015),
             stride_qlb=128 * n, stride_qlq=n, stride_qln=1, stride_qhb=64 * n, stride_qhq=n, stride_qhn=1,
             stride_sb=16 * n, stride_ss=n, stride_sn=1),
        # fp32 sums in another order; fp16 out.
        (cdiv(m, bm), cdiv(n, bn)), ["out_ptr"], bytes=weights + 2 * m * K + 2 * m * n, tol=1e-2,
        package=PKG, stubs=STUBS, srcs=SRCS, **({"flops": 2 * m * n * K} if m > 16 else {})))


for tokens in (8, 16, 512):
    q4_k(tokens)
for tokens in (8, 16, 512):
    q6_k(tokens)
