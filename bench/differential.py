#!/usr/bin/env python3
"""Differential check: corpus kernels through Kiln and through upstream Triton.

Runs on the GPU machine (torch + triton installed). For each case below, the
Kiln cubin (built here by bench/build_differential.sh, carried over in
.devbuild/differential/) is launched through the CUDA driver with ctypes, the
same kernel source is launched through upstream Triton, both on identical
inputs, and every output buffer is compared: bitwise for integers and data
movement, within a stated relative tolerance for floating-point math.

    python3 bench/differential.py --cubins .devbuild/differential [--out DIR]

Prints one line per case (`ok`, `MISMATCH`, `ERROR`) and `N passed, N
failed`; writes differential.json to --out. Exit status 1 on any failure.
The case list is also read by bench/build_differential.sh (--list).
"""

import argparse
import ctypes
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "tests", "kernels")


def cdiv(a, b):
    return (a + b - 1) // b


# Each case: corpus file, kernel, the kilnc signature (named form), the
# run-time arguments (name -> ("randn"|"randint"|"zeros", dtype, numel) for
# buffers, a number for scalars), the grid, the buffers to compare and the
# float tolerance (0: bitwise), as the largest difference over the largest
# magnitude of the output. Sums may differ in the last bits (the order of
# additions differs between the two compilers), a*b+c by one rounding where
# one compiler contracts it into an FMA and the other does not.
CASES = [
    dict(id="row_stats_f32", file="reductions/row_reductions.py", kernel="row_stats",
         sig="x_ptr=*fp32, sum_ptr=*fp32, max_ptr=*fp32, min_ptr=*fp32, M=i32, N=i32, stride=i32, BM=16, BN=128",
         args=dict(x_ptr=("randn", "float32", 100 * 100), sum_ptr=("zeros", "float32", 100),
                   max_ptr=("zeros", "float32", 100), min_ptr=("zeros", "float32", 100),
                   M=100, N=100, stride=100),
         grid=(cdiv(100, 16),), outputs=["sum_ptr", "max_ptr", "min_ptr"], tol=1e-6),
    dict(id="row_stats_i32", file="reductions/row_reductions.py", kernel="row_stats",
         sig="x_ptr=*i32, sum_ptr=*i32, max_ptr=*i32, min_ptr=*i32, M=i32, N=i32, stride=i32, BM=8, BN=256",
         args=dict(x_ptr=("randint", "int32", 37 * 200), sum_ptr=("zeros", "int32", 37),
                   max_ptr=("zeros", "int32", 37), min_ptr=("zeros", "int32", 37),
                   M=37, N=200, stride=200),
         grid=(cdiv(37, 8),), outputs=["sum_ptr", "max_ptr", "min_ptr"], tol=0),
    dict(id="row_stats_f16", file="reductions/row_reductions.py", kernel="row_stats",
         sig="x_ptr=*fp16, sum_ptr=*fp32, max_ptr=*fp16, min_ptr=*fp16, M=i32, N=i32, stride=i32, BM=32, BN=64",
         args=dict(x_ptr=("randn", "float16", 70 * 64), sum_ptr=("zeros", "float32", 70),
                   max_ptr=("zeros", "float16", 70), min_ptr=("zeros", "float16", 70),
                   M=70, N=60, stride=64),
         # tl.sum of fp16 adds in fp16 (as upstream does): a few fp16 ulps
         # (2^-10 each) apart when the order of additions differs.
         grid=(cdiv(70, 32),), outputs=["sum_ptr", "max_ptr", "min_ptr"], tol=4e-3),
    dict(id="column_sum_keepdims", file="reductions/row_reductions.py", kernel="column_sum_keepdims",
         sig="x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, BM=64, BN=32",
         args=dict(x_ptr=("randn", "float32", 50 * 70), out_ptr=("zeros", "float32", 50 * 70), M=50, N=70),
         grid=(cdiv(70, 32),), outputs=["out_ptr"], tol=1e-6),
    dict(id="transpose_f32", file="memory/strided_access.py", kernel="transpose_tile",
         sig="src_ptr=*fp32, dst_ptr=*fp32, M=i32, N=i32, src_stride=i32, dst_stride=i32, BM=32, BN=32",
         args=dict(src_ptr=("randn", "float32", 70 * 45), dst_ptr=("zeros", "float32", 45 * 70),
                   M=70, N=45, src_stride=45, dst_stride=70),
         grid=(cdiv(70, 32), cdiv(45, 32)), outputs=["dst_ptr"], tol=0),
    dict(id="transpose_f16", file="memory/strided_access.py", kernel="transpose_tile",
         sig="src_ptr=*fp16, dst_ptr=*fp16, M=i32, N=i32, src_stride=i32, dst_stride=i32, BM=64, BN=64",
         args=dict(src_ptr=("randn", "float16", 130 * 100), dst_ptr=("zeros", "float16", 100 * 130),
                   M=130, N=100, src_stride=100, dst_stride=130),
         grid=(cdiv(130, 64), cdiv(100, 64)), outputs=["dst_ptr"], tol=0),
    dict(id="broadcasting", file="shapes/reshape_permute.py", kernel="broadcasting",
         sig="row_ptr=*fp32, col_ptr=*fp32, out_ptr=*fp32, M=32, N=64",
         args=dict(row_ptr=("randn", "float32", 64), col_ptr=("randn", "float32", 32),
                   out_ptr=("zeros", "float32", 32 * 64)),
         grid=(1,), outputs=["out_ptr"], tol=1e-6),
    dict(id="outer_product", file="shapes/reshape_permute.py", kernel="outer_product",
         sig="a_ptr=*fp32, b_ptr=*fp32, out_ptr=*fp32, M=64, N=32",
         args=dict(a_ptr=("randn", "float32", 64), b_ptr=("randn", "float32", 32),
                   out_ptr=("zeros", "float32", 64 * 32)),
         grid=(1,), outputs=["out_ptr"], tol=0),
    dict(id="nested_loops", file="control_flow/loops.py", kernel="nested_loops",
         sig="x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, BM=16, BN=64",
         args=dict(x_ptr=("randn", "float32", 50 * 150), out_ptr=("zeros", "float32", 16 * 64), M=50, N=150),
         grid=(1,), outputs=["out_ptr"], tol=1e-5),
    dict(id="fill_2d_i32", file="language/constructors.py", kernel="fill_2d",
         sig="out_ptr=*i32, fill=i32, M=16, N=32",
         args=dict(out_ptr=("zeros", "int32", 16 * 32), fill=7),
         grid=(1,), outputs=["out_ptr"], tol=0),
    dict(id="fill_2d_u8", file="language/constructors.py", kernel="fill_2d",
         sig="out_ptr=*u8, fill=i32, M=8, N=8",
         args=dict(out_ptr=("zeros", "uint8", 64), fill=9),
         grid=(1,), outputs=["out_ptr"], tol=0),
    dict(id="layer_norm_bwd_dwdb", file="tutorials/layer_norm.py", kernel="layer_norm_bwd_dwdb",
         sig="dw_part_ptr=*fp32, db_part_ptr=*fp32, dw_ptr=*fp16, db_ptr=*fp16, G=i32, N=i32, BLOCK_G=32, BLOCK_N=128",
         args=dict(dw_part_ptr=("randn", "float32", 40 * 300), db_part_ptr=("randn", "float32", 40 * 300),
                   dw_ptr=("zeros", "float16", 300), db_ptr=("zeros", "float16", 300), G=40, N=300),
         grid=(cdiv(300, 128),), outputs=["dw_ptr", "db_ptr"], tol=2e-3),
    dict(id="complex_multiply", file="shapes/join_split.py", kernel="complex_multiply",
         sig="a_ptr=*fp32, b_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256",
         args=dict(a_ptr=("randn", "float32", 600), b_ptr=("randn", "float32", 600),
                   out_ptr=("zeros", "float32", 600), n=300),
         grid=(cdiv(300, 256),), outputs=["out_ptr"], tol=1e-6),
    dict(id="interleave_halves", file="shapes/join_split.py", kernel="interleave_halves",
         sig="x_ptr=*fp16, y_ptr=*fp16, out_ptr=*fp16, BLOCK=128",
         args=dict(x_ptr=("randn", "float16", 128), y_ptr=("randn", "float16", 128),
                   out_ptr=("zeros", "float16", 256)),
         grid=(1,), outputs=["out_ptr"], tol=0),
    dict(id="sort_rows_f32", file="reductions/sort.py", kernel="sort_rows",
         sig="x_ptr=*fp32, out_ptr=*fp32, DESCENDING=0, N=128",
         args=dict(x_ptr=("randn", "float32", 4 * 128), out_ptr=("zeros", "float32", 4 * 128)),
         grid=(4,), outputs=["out_ptr"], tol=0),
    dict(id="sort_rows_i32", file="reductions/sort.py", kernel="sort_rows",
         sig="x_ptr=*i32, out_ptr=*i32, DESCENDING=1, N=256",
         args=dict(x_ptr=("randint", "int32", 4 * 256), out_ptr=("zeros", "int32", 4 * 256)),
         grid=(4,), outputs=["out_ptr"], tol=0),
    dict(id="prefix_sums_f32", file="reductions/scans.py", kernel="prefix_sums",
         sig="x_ptr=*fp32, sum_ptr=*fp32, prod_ptr=*fp32, n=i32, BLOCK=1024",
         args=dict(x_ptr=("uniform", "float32", 1000), sum_ptr=("zeros", "float32", 1000),
                   prod_ptr=("zeros", "float32", 1000), n=1000),
         grid=(1,), outputs=["sum_ptr", "prod_ptr"], tol=1e-5),
    dict(id="prefix_sums_i32", file="reductions/scans.py", kernel="prefix_sums",
         sig="x_ptr=*i32, sum_ptr=*i32, prod_ptr=*i32, n=i32, BLOCK=256",
         args=dict(x_ptr=("small", "int32", 200), sum_ptr=("zeros", "int32", 200),
                   prod_ptr=("zeros", "int32", 200), n=200),
         grid=(1,), outputs=["sum_ptr", "prod_ptr"], tol=0),
    dict(id="running_max", file="reductions/scans.py", kernel="running_max",
         sig="x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512",
         args=dict(x_ptr=("randn", "float32", 500), out_ptr=("zeros", "float32", 500), n=500),
         grid=(1,), outputs=["out_ptr"], tol=0),
    dict(id="segmented_sum", file="reductions/scans.py", kernel="segmented_sum",
         sig="x_ptr=*fp32, flag_ptr=*i32, out_ptr=*fp32, n=i32, BLOCK=512",
         args=dict(x_ptr=("randn", "float32", 500), flag_ptr=("bits", "int32", 500),
                   out_ptr=("zeros", "float32", 500), n=500),
         grid=(1,), outputs=["out_ptr"], tol=1e-5),
    dict(id="atomic_rmw_i32", file="memory/atomics.py", kernel="atomic_rmw",
         sig="counts_ptr=*i32, vals_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256",
         args=dict(counts_ptr=("randint", "int32", 1000), vals_ptr=("randint", "int32", 1000),
                   out_ptr=("zeros", "int32", 1000), n=1000),
         grid=(cdiv(1000, 256),), outputs=["counts_ptr", "out_ptr"], tol=0),
    dict(id="histogram_atomic", file="memory/atomics.py", kernel="histogram_atomic",
         sig="x_ptr=*i32, hist_ptr=*i32, n=i32, BINS=64, BLOCK=1024",
         args=dict(x_ptr=("natural", "int32", 5000), hist_ptr=("zeros", "int32", 64), n=5000),
         grid=(cdiv(5000, 1024),), outputs=["hist_ptr"], tol=0),
    dict(id="packed_bytes_asm", file="language/inline_asm.py", kernel="packed_bytes",
         sig="x_ptr=*u8, out_ptr=*u8, n=i32, BLOCK=1024",
         args=dict(x_ptr=("natural", "uint8", 3000), out_ptr=("zeros", "uint8", 3000), n=3000),
         grid=(cdiv(3000, 1024),), outputs=["out_ptr"], tol=0),
    dict(id="asin_libdevice", file="tutorials/libdevice_math.py", kernel="asin_kernel",
         sig="x_ptr=*fp32, y_ptr=*fp32, n=i32, BLOCK=1024",
         args=dict(x_ptr=("uniform", "float32", 5000), y_ptr=("zeros", "float32", 5000), n=5000),
         grid=(cdiv(5000, 1024),), outputs=["y_ptr"], tol=1e-6),
    dict(id="gelu_tanh_libdevice", file="tutorials/libdevice_math.py", kernel="gelu_tanh",
         sig="x_ptr=*fp32, y_ptr=*fp32, n=i32, BLOCK=1024",
         args=dict(x_ptr=("randn", "float32", 5000), y_ptr=("zeros", "float32", 5000), n=5000),
         grid=(cdiv(5000, 1024),), outputs=["y_ptr"], tol=1e-6),
    dict(id="convert_f16_fp8e4nv", file="elementwise/casts.py", kernel="convert",
         sig="in_ptr=*fp16, out_ptr=*fp8e4nv, n=i32, BLOCK=1024",
         args=dict(in_ptr=("randn", "float16", 3000), out_ptr=("zeros", "float8_e4m3fn", 3000), n=3000),
         grid=(cdiv(3000, 1024),), outputs=["out_ptr"], tol=0),
    dict(id="tile_copy_block_ptr", file="memory/block_pointers.py", kernel="tile_copy",
         sig="src_ptr=*fp32, dst_ptr=*fp32, M=i32, N=i32, stride_m=i32, stride_n=i32, BM=64, BN=64",
         args=dict(src_ptr=("randn", "float32", 100 * 150), dst_ptr=("zeros", "float32", 100 * 150),
                   M=100, N=150, stride_m=150, stride_n=1),
         grid=(cdiv(100, 64), cdiv(150, 64)), outputs=["dst_ptr"], tol=0),
    dict(id="tile_copy_block_ptr_f16", file="memory/block_pointers.py", kernel="tile_copy",
         sig="src_ptr=*fp16, dst_ptr=*fp16, M=i32, N=i32, stride_m=i32, stride_n=i32, BM=128, BN=32",
         args=dict(src_ptr=("randn", "float16", 300 * 64), dst_ptr=("zeros", "float16", 300 * 64),
                   M=300, N=50, stride_m=64, stride_n=1),
         grid=(cdiv(300, 128), cdiv(50, 32)), outputs=["dst_ptr"], tol=0),
    dict(id="row_sum_block_ptr", file="memory/block_pointers.py", kernel="row_sum_block_ptr",
         sig="x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, stride_m=i64, BM=32, BN=128",
         args=dict(x_ptr=("randn", "float32", 70 * 300), out_ptr=("zeros", "float32", 70),
                   M=70, N=300, stride_m=300),
         grid=(cdiv(70, 32),), outputs=["out_ptr"], tol=1e-6),
    dict(id="row_argmax_f32", file="reductions/argminmax.py", kernel="row_argmax",
         sig="x_ptr=*fp32, idx_ptr=*i32, val_ptr=*fp32, N=i32, BLOCK=1024",
         args=dict(x_ptr=("randn", "float32", 8 * 1000), idx_ptr=("zeros", "int32", 8),
                   val_ptr=("zeros", "float32", 8), N=1000),
         grid=(8,), outputs=["idx_ptr", "val_ptr"], tol=0),
]


def parse_signature(sig):
    """[(name, type-or-None, constexpr-value-or-None)], num_warps."""
    params, num_warps = [], 4
    for entry in sig.split(","):
        name, value = (s.strip() for s in entry.split("="))
        if name == "num_warps":
            num_warps = int(value)
        elif value.startswith("*") or value in ("i32", "i64", "fp32", "u32"):
            params.append((name, value, None))
        else:
            params.append((name, None, int(value)))
    return params, num_warps


def cubin_name(case):
    return case["id"] + ".cubin"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubins", help="directory of the Kiln cubins")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--list", action="store_true",
                        help="print `id|file|kernel|signature` per case (for the build script)")
    opts = parser.parse_args()
    if opts.list:
        for case in CASES:
            print(f"{case['id']}|{case['file']}|{case['kernel']}|{case['sig']}")
        return 0

    import torch
    import triton

    cuda = ctypes.CDLL("libcuda.so.1")
    torch.zeros(1, device="cuda")  # the primary context, current on this thread

    def check(status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed with CUresult {status}")

    results, passed, failed = [], 0, 0
    for case in CASES:
        label = f"{case['id']} ({case['file']} -n {case['kernel']})"
        try:
            params, num_warps = parse_signature(case["sig"])
            gen = torch.Generator(device="cuda").manual_seed(1234)

            def make(spec):
                kind, dtype, numel = spec
                dt = getattr(torch, dtype)
                if kind == "randn":
                    return torch.randn(numel, generator=gen, device="cuda").to(dt)
                if kind == "uniform":
                    return (torch.rand(numel, generator=gen, device="cuda") * 2 - 1).to(dt)
                bounds = dict(randint=(-1000, 1000), small=(-3, 4), natural=(0, 1000),
                              bits=(0, 2)).get(kind)
                if bounds:
                    return torch.randint(*bounds, (numel,), generator=gen,
                                         device="cuda").to(dt)
                return torch.zeros(numel, dtype=dt, device="cuda")

            inputs = {n: make(v) if isinstance(v, tuple) else v for n, v in case["args"].items()}
            kiln_args = {n: v.clone() if torch.is_tensor(v) else v for n, v in inputs.items()}
            triton_args = {n: v.clone() if torch.is_tensor(v) else v for n, v in inputs.items()}

            # Kiln: the cubin through the driver API.
            with open(os.path.join(opts.cubins, cubin_name(case)), "rb") as f:
                image = f.read()
            module, function = ctypes.c_void_p(), ctypes.c_void_p()
            check(cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
            check(cuda.cuModuleGetFunction(ctypes.byref(function), module,
                                           case["kernel"].encode()), "cuModuleGetFunction")
            holders = []
            for name, type_, const in params:
                if const is not None:
                    continue
                value = kiln_args[name]
                if type_.startswith("*"):
                    holders.append(ctypes.c_uint64(value.data_ptr()))
                elif type_ == "i64":
                    holders.append(ctypes.c_int64(value))
                elif type_ == "fp32":
                    holders.append(ctypes.c_float(value))
                else:
                    holders.append(ctypes.c_int32(value))
            pointers = (ctypes.c_void_p * len(holders))(
                *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
            grid = tuple(case["grid"]) + (1,) * (3 - len(case["grid"]))
            torch.cuda.synchronize()
            check(cuda.cuLaunchKernel(function, grid[0], grid[1], grid[2], 32 * num_warps, 1, 1,
                                      0, None, pointers, None), "cuLaunchKernel")
            check(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
            cuda.cuModuleUnload(module)

            # Upstream Triton: the same source file.
            spec = importlib.util.spec_from_file_location(
                "corpus_" + case["id"], os.path.join(CORPUS, case["file"]))
            source = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(source)
            kernel = getattr(source, case["kernel"])
            call = [triton_args[n] if c is None else c for n, _, c in params]
            kernel[case["grid"]](*call, num_warps=num_warps)
            torch.cuda.synchronize()

            worst, ok = 0.0, True
            for name in case["outputs"]:
                a, b = kiln_args[name], triton_args[name]
                if a.element_size() == 1 and a.dtype != torch.uint8:
                    a, b = a.view(torch.uint8), b.view(torch.uint8)  # fp8: the bits
                if case["tol"] == 0 or not a.is_floating_point():
                    same = torch.equal(a, b) if not a.is_floating_point() else bool(
                        ((a == b) | (a.isnan() & b.isnan())).all())
                    ok &= same
                    worst = max(worst, 0.0 if same else float("inf"))
                else:
                    # Relative to the output's scale: sums near zero would
                    # make a per-element relative error meaningless.
                    scale = b.float().abs().max().clamp_min(1e-6)
                    diff = ((a.float() - b.float()).abs().max() / scale).item()
                    worst = max(worst, diff)
                    ok &= diff <= case["tol"]
            status = "ok" if ok else "MISMATCH"
            print(f"{status:8} {label}: worst relative difference {worst:.3g} (tolerance {case['tol']})")
            results.append(dict(id=case["id"], status=status, worst=worst, tol=case["tol"]))
        except Exception as error:  # a case that cannot run is a failure too
            ok = False
            print(f"ERROR    {label}: {error}")
            results.append(dict(id=case["id"], status="ERROR", error=str(error)))
        passed += ok
        failed += not ok
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "differential.json"), "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), triton=triton.__version__,
                       cases=results), f, indent=1)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
