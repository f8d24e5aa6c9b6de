"""Real-world matmul forms (bench/kernels/matmul_forms.py: int8 GEMM, weight-
only int8 and packed-int4 GEMMs, split-K with atomics, batched matmul, a
linear layer with bias and activation, and its skinny decode shape) as Kiln
cubins beside Triton 3.6's JIT of the same file, same config, same inputs,
one process: the sweep that looks for a form where Kiln falls behind outside
the tutorials.

Here (no GPU, no torch), build the cubins:

    python3 bench/matmul_forms_cubins.py --build build/compiler/driver/kilnc --cubins DIR

On the GPU machine, from the repository root:

    python3 bench/matmul_forms_cubins.py --cubins DIR --out OUT_DIR [--only NAME,...]

Every output is checked against torch (and Kiln's against Triton's) before
it is timed: exact for int8, else allclose with the listed tolerance on
outputs of about 1. Timing as every bench here (cubin_launch.time_interleaved:
do_bench, Kiln and Triton interleaved over --rounds rounds, the median of
per-round ratios). Writes OUT_DIR/results.json and results.md. --kiln-only
runs and checks each Kiln cubin once (for compute-sanitizer); it exits 1 if
an output is wrong; --small takes small shapes instead of the listed ones:

    compute-sanitizer --tool racecheck python3 bench/matmul_forms_cubins.py \
        --cubins DIR --kiln-only --small
"""
import argparse
import collections
import ctypes
import datetime
import importlib.util
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(REPO, "bench", "kernels", "matmul_forms.py")

# name: cubin name; kernel: the @triton.jit function; types: each pointer's
# element type; units: the stride parameters that are 1 (`:1`, the rest
# 16-divisible); meta: constexprs, num_warps, num_stages; shapes: (M, N, K),
# or (B, M, N, K) for the batched kernel.
Case = collections.namedtuple("Case", "name kernel types units meta shapes")
ROW_MAJOR = ("stride_ak", "stride_bn", "stride_cn")
B_TRANSPOSED = ("stride_ak", "stride_bk", "stride_cn")


def _meta(bm, bn, bk, warps, stages, **extra):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages, **extra)


SQUARE = [(4096, 4096, 4096)]
CASES = [
    Case("int8_128x256x128_w8s3", "int8_matmul_kernel", dict(a_ptr="i8", b_ptr="i8", c_ptr="i32"),
         ROW_MAJOR, _meta(128, 256, 128, 8, 3), SQUARE),
    Case("int8_bt_128x256x128_w8s3", "int8_matmul_kernel", dict(a_ptr="i8", b_ptr="i8", c_ptr="i32"),
         B_TRANSPOSED, _meta(128, 256, 128, 8, 3), SQUARE),
    Case("int8_128x128x128_w4s4", "int8_matmul_kernel", dict(a_ptr="i8", b_ptr="i8", c_ptr="i32"),
         ROW_MAJOR, _meta(128, 128, 128, 4, 4), SQUARE),
    Case("w8a16_128x256x64_w8s3", "w8a16_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i8", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(128, 256, 64, 8, 3), SQUARE),
    Case("w8a16_128x128x64_w4s4", "w8a16_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i8", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(128, 128, 64, 4, 4), SQUARE),
    Case("w8a16_decode_16x64x128_w4s4", "w8a16_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i8", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(16, 64, 128, 4, 4), [(16, 8192, 8192)]),
    Case("w4a16_128x128x64_w4s4", "w4a16_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i32", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(128, 128, 64, 4, 4, GROUP_K=128), SQUARE),
    Case("w4a16_64x128x64_w4s4", "w4a16_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i32", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(64, 128, 64, 4, 4, GROUP_K=128), SQUARE),
    Case("w4a16_decode_16x64x128_w4s4", "w4a16_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i32", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(16, 64, 128, 4, 4, GROUP_K=128), [(16, 8192, 8192)]),
    Case("w4a16_columns_128x128x64_w4s4", "w4a16_columns_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i32", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(128, 128, 64, 4, 4, GROUP_K=128), SQUARE),
    Case("w4a16_columns_64x128x64_w4s4", "w4a16_columns_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="i32", scale_ptr="fp16", c_ptr="fp16"), ROW_MAJOR,
         _meta(64, 128, 64, 4, 4, GROUP_K=128), SQUARE),
    Case("split_k4_128x128x64_w4s4", "split_k_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp32"),
         ROW_MAJOR, _meta(128, 128, 64, 4, 4, SPLIT_K=4), [(1024, 1024, 16384)]),
    Case("batched_128x128x64_w4s4", "batched_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16"),
         ROW_MAJOR, _meta(128, 128, 64, 4, 4), [(16, 1024, 1024, 1024)]),
    Case("batched_128x256x64_w8s3", "batched_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16"),
         ROW_MAJOR, _meta(128, 256, 64, 8, 3), [(8, 2048, 2048, 2048)]),
    Case("linear_gelu_128x256x64_w8s3", "linear_kernel",
         dict(x_ptr="fp16", w_ptr="fp16", bias_ptr="fp16", y_ptr="fp16"), ("stride_xk", "stride_wk", "stride_yn"),
         _meta(128, 256, 64, 8, 3, ACTIVATION="gelu"), SQUARE),
    Case("linear_relu_128x128x64_w4s4", "linear_kernel",
         dict(x_ptr="fp16", w_ptr="fp16", bias_ptr="fp16", y_ptr="fp16"), ("stride_xk", "stride_wk", "stride_yn"),
         _meta(128, 128, 64, 4, 4, ACTIVATION="relu"), SQUARE),
    Case("fp16_acc_128x256x64_w8s3", "fp16_acc_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16"),
         ROW_MAJOR, _meta(128, 256, 64, 8, 3), SQUARE),
    Case("fp16_acc_128x128x64_w4s4", "fp16_acc_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16"),
         ROW_MAJOR, _meta(128, 128, 64, 4, 4), SQUARE),
    Case("moe_64x128x64_w4s4", "moe_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16", topk_weights_ptr="fp32", sorted_token_ids_ptr="i32",
              expert_ids_ptr="i32"), ("stride_ak", "stride_bn", "stride_cn"),
         _meta(64, 128, 64, 4, 4, TOP_K=2), [(4096, 2048, 4096)]),
    Case("moe_128x128x64_w8s3", "moe_matmul_kernel",
         dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16", topk_weights_ptr="fp32", sorted_token_ids_ptr="i32",
              expert_ids_ptr="i32"), ("stride_ak", "stride_bn", "stride_cn"),
         _meta(128, 128, 64, 8, 3, TOP_K=2), [(4096, 2048, 4096)]),
    Case("block_ptr_128x256x64_w8s3", "block_ptr_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16"),
         ROW_MAJOR, _meta(128, 256, 64, 8, 3), SQUARE),
    Case("block_ptr_128x128x64_w8s3", "block_ptr_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16"),
         ROW_MAJOR, _meta(128, 128, 64, 8, 3), SQUARE),
    Case("block_ptr_128x128x64_w4s4", "block_ptr_matmul_kernel", dict(a_ptr="fp16", b_ptr="fp16", c_ptr="fp16"),
         ROW_MAJOR, _meta(128, 128, 64, 4, 4), SQUARE),
    Case("fp8_scaled_128x256x128_w8s3", "fp8_scaled_matmul_kernel",
         dict(a_ptr="fp8e4nv", b_ptr="fp8e4nv", a_scale_ptr="fp32", b_scale_ptr="fp32", c_ptr="bf16"),
         B_TRANSPOSED, _meta(128, 256, 128, 8, 3), SQUARE),
    Case("fp8_scaled_128x128x128_w4s4", "fp8_scaled_matmul_kernel",
         dict(a_ptr="fp8e4nv", b_ptr="fp8e4nv", a_scale_ptr="fp32", b_scale_ptr="fp32", c_ptr="bf16"),
         B_TRANSPOSED, _meta(128, 128, 128, 4, 4), SQUARE),
    Case("swiglu_128x128x64_w8s3", "swiglu_matmul_kernel",
         dict(x_ptr="fp16", w1_ptr="fp16", w3_ptr="fp16", y_ptr="fp16"), ("stride_xk", "stride_wn", "stride_yn"),
         _meta(128, 128, 64, 8, 3), SQUARE),
    Case("swiglu_64x128x64_w4s3", "swiglu_matmul_kernel",
         dict(x_ptr="fp16", w1_ptr="fp16", w3_ptr="fp16", y_ptr="fp16"), ("stride_xk", "stride_wn", "stride_yn"),
         _meta(64, 128, 64, 4, 3), SQUARE),
    Case("linear_decode_16x64x128_w4s4", "linear_kernel",
         dict(x_ptr="fp16", w_ptr="fp16", bias_ptr="fp16", y_ptr="fp16"), ("stride_xk", "stride_wk", "stride_yn"),
         _meta(16, 64, 128, 4, 4, ACTIVATION=""), [(16, 8192, 8192)]),
]


def runtime_params(kernel_name):
    """The kernel's non-constexpr parameters in order, read from the source
    (no triton import here: the build runs where there is none)."""
    import ast
    tree = ast.parse(open(SOURCE).read())
    fn = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == kernel_name)
    return [a.arg for a in fn.args.args if not (a.annotation is not None and "constexpr" in ast.unparse(a.annotation))]


def signature(case):
    parts = []
    for p in runtime_params(case.kernel):
        if p in case.types:
            parts.append(f"{p}=*{case.types[p]}:16")
        else:
            parts.append(f"{p}=i32:{1 if p in case.units else 16}")
    for k, v in case.meta.items():
        parts.append(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}")
    return ", ".join(parts)


def build(kilnc, directory):
    os.makedirs(directory, exist_ok=True)
    failed = 0
    for case in CASES:
        command = [kilnc, "compile", SOURCE, "-n", case.kernel, "--arch", "sm_90a",
                   "-o", os.path.join(directory, case.name + ".cubin"),
                   "--metadata", os.path.join(directory, case.name + ".json"), "-s", signature(case)]
        result = subprocess.run(command, capture_output=True, text=True)
        meta = {}
        if result.returncode == 0:
            meta = json.load(open(os.path.join(directory, case.name + ".json")))
        else:
            failed += 1
        print(f"{case.name}: {'ok' if result.returncode == 0 else 'FAILED'} registers {meta.get('registers')} "
              f"spills {meta.get('spills')} shared {meta.get('shared_bytes')}", flush=True)
        if result.stderr.strip():
            print("  " + result.stderr.strip().replace("\n", "\n  "), flush=True)
    return failed


def inputs(torch, case, shape):
    """(values: parameter -> tensor or int, grid, check(out) -> (ok, max
    error), output tensor, reset() before each run, flop count, cuBLAS's
    equivalent fp16 product or None)."""
    gen = torch.Generator(device="cuda").manual_seed(0)

    def uniform(rows, cols, scale):
        return (torch.rand((rows, cols), device="cuda", generator=gen) - 0.5) * scale

    meta = case.meta
    batch = 1
    if case.kernel == "batched_matmul_kernel":
        batch, M, N, K = shape
    else:
        M, N, K = shape
    s = (12.0 / K ** 0.5) ** 0.5  # std of the product's entries about 1
    tiles = triton_cdiv(M, meta["BLOCK_M"]) * triton_cdiv(N, meta["BLOCK_N"])
    values = dict(M=M, N=N, K=K)
    reset = None
    cublas = None
    tolerance = 1e-2
    if case.kernel == "int8_matmul_kernel":
        a = torch.randint(-128, 128, (M, K), device="cuda", generator=gen, dtype=torch.int8)
        b = torch.randint(-128, 128, (K, N), device="cuda", generator=gen, dtype=torch.int8)
        if "stride_bk" in case.units:
            b = b.T.contiguous().T
        c = torch.empty((M, N), device="cuda", dtype=torch.int32)
        reference = (a.double() @ b.double()).to(torch.int32)
        tolerance = 0
        if "stride_bk" in case.units:
            cublas = lambda: torch._int_mm(a, b)
        values.update(a_ptr=a, b_ptr=b, c_ptr=c)
    elif case.kernel in ("w8a16_matmul_kernel", "w4a16_matmul_kernel", "w4a16_columns_matmul_kernel"):
        a = uniform(M, K, s).half()
        if case.kernel == "w8a16_matmul_kernel":
            b = torch.randint(-127, 128, (K, N), device="cuda", generator=gen, dtype=torch.int8)
            scale = (torch.rand((N,), device="cuda", generator=gen) * 0.5 + 0.5) * s / 190.0
            weight = b.float() * scale.half().float()[None, :]
        else:
            w = torch.randint(-8, 8, (K, N), device="cuda", generator=gen, dtype=torch.int32)
            if case.kernel == "w4a16_columns_matmul_kernel":
                nibbles = (w + 8).view(K, N // 8, 8)
                b = torch.zeros((K, N // 8), device="cuda", dtype=torch.int32)
                for i in range(8):
                    b |= nibbles[:, :, i] << (4 * i)
            else:
                nibbles = (w + 8).view(K // 8, 8, N)
                b = torch.zeros((K // 8, N), device="cuda", dtype=torch.int32)
                for i in range(8):
                    b |= nibbles[:, i, :] << (4 * i)
            scale = (torch.rand((K // meta["GROUP_K"], N), device="cuda", generator=gen) * 0.5 + 0.5) * s / 12.0
            weight = w.float() * scale.half().float().repeat_interleave(meta["GROUP_K"], dim=0)
        scale = scale.half()
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        reference = a.float() @ weight
        weight16 = weight.half()
        cublas = lambda: torch.matmul(a, weight16)
        values.update(a_ptr=a, b_ptr=b, scale_ptr=scale, c_ptr=c)
    elif case.kernel in ("block_ptr_matmul_kernel", "fp16_acc_matmul_kernel"):
        a, b = uniform(M, K, s).half(), uniform(K, N, s).half()
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        reference = a.float() @ b.float()
        if case.kernel == "fp16_acc_matmul_kernel":
            tolerance = 0.05  # fp16 sums over K = 4096 (both compilers)
        cublas = lambda: torch.matmul(a, b)
        values.update(a_ptr=a, b_ptr=b, c_ptr=c)
    elif case.kernel == "split_k_matmul_kernel":
        a, b = uniform(M, K, s).half(), uniform(K, N, s).half()
        c = torch.zeros((M, N), device="cuda", dtype=torch.float32)
        reference = a.float() @ b.float()
        reset = c.zero_
        cublas = lambda: torch.matmul(a, b)
        values.update(a_ptr=a, b_ptr=b, c_ptr=c)
    elif case.kernel == "batched_matmul_kernel":
        a = uniform(batch * M, K, s).half().view(batch, M, K)
        b = uniform(batch * K, N, s).half().view(batch, K, N)
        c = torch.empty((batch, M, N), device="cuda", dtype=torch.float16)
        reference = torch.bmm(a.float(), b.float())
        cublas = lambda: torch.bmm(a, b)
        values.update(a_ptr=a, b_ptr=b, c_ptr=c, stride_ab=a.stride(0), stride_bb=b.stride(0),
                      stride_cb=c.stride(0))
    elif case.kernel == "moe_matmul_kernel":
        # M tokens, each routed to TOP_K of 8 experts; rows sorted by expert,
        # each expert's padded to a multiple of BLOCK_M.
        top_k, experts, bm = meta["TOP_K"], 8, meta["BLOCK_M"]
        a = uniform(M, K, s).half()
        b = uniform(experts * K, N, s).half().view(experts, K, N)
        routes = torch.rand((M, experts), device="cuda", generator=gen).argsort(dim=1)[:, :top_k].reshape(-1)
        weights = torch.rand((M * top_k,), device="cuda", generator=gen) + 0.5
        valid = M * top_k
        ids, blocks = [], []
        reference = torch.zeros((valid, N), device="cuda")
        for e in range(experts):
            rows = (routes == e).nonzero().flatten().int()
            reference[rows.long()] = (a[rows.long() // top_k].float() @ b[e].float()) * weights[rows.long(), None]
            padded = triton_cdiv(rows.numel(), bm) * bm
            ids.append(torch.cat([rows, torch.full((padded - rows.numel(),), valid, device="cuda",
                                                   dtype=torch.int32)]))
            blocks += [e] * (padded // bm)
        sorted_ids = torch.cat(ids)
        expert_ids = torch.tensor(blocks, device="cuda", dtype=torch.int32)
        c = torch.zeros((valid, N), device="cuda", dtype=torch.float16)
        tiles = (sorted_ids.numel() // bm) * triton_cdiv(N, meta["BLOCK_N"])
        values = dict(a_ptr=a, b_ptr=b, c_ptr=c, topk_weights_ptr=weights, sorted_token_ids_ptr=sorted_ids,
                      expert_ids_ptr=expert_ids, num_tokens_post_padded=sorted_ids.numel(), N=N, K=K,
                      num_valid_tokens=valid, stride_am=a.stride(0), stride_ak=a.stride(1), stride_be=b.stride(0),
                      stride_bk=b.stride(1), stride_bn=b.stride(2), stride_cm=c.stride(0), stride_cn=c.stride(1))
        batch = top_k  # the flop count: M * TOP_K rows
    elif case.kernel == "fp8_scaled_matmul_kernel":
        sigma = K ** -0.25
        a = (torch.randn((M, K), device="cuda", generator=gen) * sigma).to(torch.float8_e4m3fn)
        b = (torch.randn((N, K), device="cuda", generator=gen) * sigma).to(torch.float8_e4m3fn).T
        a_scale = torch.rand((M,), device="cuda", generator=gen) + 0.5
        b_scale = torch.rand((N,), device="cuda", generator=gen) + 0.5
        c = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
        reference = (a.float() @ b.float()) * a_scale[:, None] * b_scale[None, :]
        # bf16 output (|c| up to about 8: half an ulp is 0.016), and wgmma
        # sums fp8 products keeping fewer bits than fp32: both compilers'
        # outputs, bitwise equal, are 0.053 from torch's on the H200.
        tolerance = 0.1
        values.update(a_ptr=a, b_ptr=b, a_scale_ptr=a_scale, b_scale_ptr=b_scale, c_ptr=c)
    elif case.kernel == "swiglu_matmul_kernel":
        x, w1, w3 = uniform(M, K, s).half(), uniform(K, N, s).half(), uniform(K, N, s).half()
        y = torch.empty((M, N), device="cuda", dtype=torch.float16)
        gate, up = x.float() @ w1.float(), x.float() @ w3.float()
        reference = torch.nn.functional.silu(gate) * up
        w13 = torch.cat([w1, w3], dim=1)
        cublas = lambda: torch.matmul(x, w13)
        values.update(x_ptr=x, w1_ptr=w1, w3_ptr=w3, y_ptr=y, stride_xm=x.stride(0), stride_xk=x.stride(1),
                      stride_wk=w1.stride(0), stride_wn=w1.stride(1), stride_ym=y.stride(0), stride_yn=y.stride(1))
        c = y
        batch = 2  # two products
    else:  # linear_kernel
        x, w = uniform(M, K, s).half(), uniform(N, K, s).half()
        bias = uniform(1, N, 1.0).half().view(N)
        y = torch.empty((M, N), device="cuda", dtype=torch.float16)
        z = x.float() @ w.float().T + bias.float()
        activation = meta["ACTIVATION"]
        reference = torch.relu(z) if activation == "relu" else (
            torch.nn.functional.gelu(z) if activation == "gelu" else z)
        cublas = lambda: torch.nn.functional.linear(x, w, bias)
        values.update(x_ptr=x, w_ptr=w, bias_ptr=bias, y_ptr=y, stride_xm=x.stride(0), stride_xk=x.stride(1),
                      stride_wn=w.stride(0), stride_wk=w.stride(1), stride_ym=y.stride(0), stride_yn=y.stride(1))
        c = y
    if case.kernel in ("int8_matmul_kernel", "w8a16_matmul_kernel", "w4a16_matmul_kernel",
                       "w4a16_columns_matmul_kernel", "split_k_matmul_kernel",
                       "batched_matmul_kernel", "block_ptr_matmul_kernel", "fp8_scaled_matmul_kernel",
                       "fp16_acc_matmul_kernel"):
        a_, b_ = values["a_ptr"], values["b_ptr"]
        values.update(stride_am=a_.stride(-2), stride_ak=a_.stride(-1), stride_bk=b_.stride(-2),
                      stride_bn=b_.stride(-1), stride_cm=c.stride(-2), stride_cn=c.stride(-1))

    def check(out):
        error = (out.double() - reference.double()).abs().max().item()
        return error <= tolerance, error

    grid = (tiles, meta.get("SPLIT_K", batch if case.kernel == "batched_matmul_kernel" else 1))
    return values, grid, check, c, reset, 2.0 * batch * M * N * K, cublas


def triton_cdiv(a, b):
    return (a + b - 1) // b


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--build", default="", help="kilnc: compile the cases into --cubins (no GPU needed)")
    parser.add_argument("--out", default="")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument("--kiln-only", action="store_true")
    parser.add_argument("--asm", default="", help="write Triton's PTX per case here (NAME.triton.ptx)")
    parser.add_argument("--small", action="store_true",
                        help="small shapes instead of the listed ones (for compute-sanitizer)")
    args = parser.parse_args()
    if args.build:
        raise SystemExit(1 if build(args.build, args.cubins) else 0)
    import torch
    import triton
    spec = importlib.util.spec_from_file_location("kiln_cubin_launch", os.path.join(REPO, "bench", "cubin_launch.py"))
    cubin_launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cubin_launch)
    spec = importlib.util.spec_from_file_location("kiln_matmul_forms", SOURCE)
    forms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(forms)
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    only = [o for o in args.only.split(",") if o]
    rows, wrong, right = [], 0, 0
    for case in CASES:
        if only and not any(o in case.name for o in only):
            continue
        if not os.path.exists(os.path.join(args.cubins, case.name + ".cubin")):
            rows.append(dict(name=case.name, error="no cubin (kilnc failed)"))
            print(f"{case.name}: no cubin", flush=True)
            continue
        cubin = cubin_launch.Cubin(cuda, args.cubins, case.name)
        kernel = getattr(forms, case.kernel)
        params = runtime_params(case.kernel)
        shapes = case.shapes
        if args.small:  # K spans several tiles and a masked tail where the kernel masks K
            shapes = [(2, 256, 256, 528)] if case.kernel == "batched_matmul_kernel" else [
                (16 if shape[0] == 16 else 256, 384,
                 512 if case.kernel in ("w4a16_matmul_kernel", "w4a16_columns_matmul_kernel",
                                        "block_ptr_matmul_kernel") else 1040)
                for shape in shapes]
        for shape in shapes:
            values, grid, check, out, reset, flop, cublas = inputs(torch, case, shape)
            launch_values = {k: (v.data_ptr() if torch.is_tensor(v) else v) for k, v in values.items()}
            arguments = cubin.arguments(launch_values)
            positional = [values[p] for p in params]

            def kiln():
                if reset:
                    reset()
                cubin.launch(grid, arguments, torch.cuda.current_stream().cuda_stream)

            def upstream():
                if reset:
                    reset()
                return kernel[grid](*positional, **case.meta)

            shape_text = "x".join(map(str, shape))
            checks, errors, outputs = {}, {}, {}
            for tag, run in (("kiln", kiln), ("triton", upstream)):
                if tag == "triton" and args.kiln_only:
                    break
                out.zero_()
                compiled = run()
                torch.cuda.synchronize()
                checks[tag], errors[tag] = check(out)
                outputs[tag] = out.clone()
                if tag == "triton":
                    triton_regs = (compiled.n_regs, compiled.n_spills, compiled.metadata.shared)
                    if args.asm:
                        os.makedirs(args.asm, exist_ok=True)
                        with open(os.path.join(args.asm, case.name + ".triton.ptx"), "w") as f:
                            f.write(compiled.asm["ptx"])
            if args.kiln_only:
                print(f"{case.name} {shape_text}: correct {checks['kiln']} (max error {errors['kiln']:.3g})",
                      flush=True)
                wrong += not checks["kiln"]
                right += bool(checks["kiln"])
                continue
            same = (outputs["kiln"].double() - outputs["triton"].double()).abs().max().item()
            times, tflops, ratio = cubin_launch.time_interleaved(
                dict(kiln=kiln, triton=upstream, cublas=cublas), args.rounds, flop * 1e-9)
            row = dict(name=case.name, kernel=case.kernel, shape=shape_text, config=case.meta,
                       tflops=tflops, kiln_over_triton=ratio, correct=checks, max_error=errors,
                       max_kiln_minus_triton=same,
                       registers=[cubin.meta.get("registers"), triton_regs[0]],
                       spills=[cubin.meta.get("spills"), triton_regs[1]],
                       shared_bytes=[cubin.shared, triton_regs[2]])
            rows.append(row)
            print(f"{case.name} {shape_text}: kiln {tflops['kiln']:.1f} triton {tflops['triton']:.1f} "
                  f"cublas {tflops.get('cublas', float('nan')):.1f} TFLOP/s kiln/triton {ratio:.3f} "
                  f"correct {checks} |kiln-triton| {same:.3g} regs {row['registers']} spills {row['spills']}",
                  flush=True)
        cubin.unload()
    if args.kiln_only:
        # The count compute_sanitizer.sh's summary reads.
        print(f"{right} passed, {wrong} failed", flush=True)
        raise SystemExit(1 if wrong else 0)
    os.makedirs(args.out, exist_ok=True)
    result = dict(date=datetime.date.today().isoformat(), gpu=torch.cuda.get_device_name(0),
                  triton=triton.__version__, torch=torch.__version__, rounds=args.rounds,
                  command="python3 bench/matmul_forms_cubins.py " + " ".join(sys.argv[1:]), rows=rows)
    json.dump(result, open(os.path.join(args.out, "results.json"), "w"), indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(f"# Real-world matmul forms, Kiln cubins beside Triton {triton.__version__} "
                f"({result['gpu']}, {result['date']})\n\n")
        f.write("| case | shape | Triton TFLOP/s | Kiln TFLOP/s | cuBLAS TFLOP/s | Kiln/Triton | correct (Kiln, Triton) "
                "| max abs Kiln-Triton | regs Kiln/Triton | spills Kiln/Triton |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            if "error" in r:
                f.write(f"| {r['name']} | {r['error']} |\n")
                continue
            cb = r["tflops"].get("cublas")
            f.write(f"| {r['name']} | {r['shape']} | {r['tflops']['triton']:.1f} | {r['tflops']['kiln']:.1f} | "
                    f"{'%.1f' % cb if cb else '—'} | {r['kiln_over_triton']:.3f} | "
                    f"{r['correct']['kiln']}, {r['correct']['triton']} | {r['max_kiln_minus_triton']:.3g} | "
                    f"{r['registers'][0]}/{r['registers'][1]} | {r['spills'][0]}/{r['spills'][1]} |\n")


if __name__ == "__main__":
    main()
