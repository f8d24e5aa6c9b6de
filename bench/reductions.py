"""Softmax (fp32), layer norm (fp16) and transpose (fp32, fp16): Kiln's ahead-of-time build against
upstream Triton's JIT, on the same kernel sources (examples/softmax/softmax.py,
bench/kernels/*.py).

Run on the GPU machine, from the repository root:

    python3 bench/reductions.py --binary BIN_DIR/reductions_bench --out OUT_DIR

Upstream Triton runs the kernels imported from those files, in the
configurations bench/CMakeLists.txt compiles for Kiln (rows = 4096; softmax
BLOCK = N with 4/8/16 warps, layer norm BLOCK = N with min(N/256, 8) warps),
timed by triton.testing.do_bench (median). The Kiln figures come from our
`reductions_bench` binary, which checks every row against a CPU reference and
then times the same way (L2 flushed before each run, median of 20), printing
`RESULT softmax M=4096 N=16384 GBps=...` lines. GB/s counts 8 bytes per
softmax element and 4 per layer-norm element, as ../shared/bench does; the
transpose (8192 x 8192, 64 x 64 tiles, 4 warps) counts a read and a write of
each element; the matmul (tests/kernels/tutorials/matmul.py, fp16, 4096^3,
128 x 128 x 32 tiles, 8 warps) is in TFLOPS.

Prints a table (Triton GB/s, Kiln GB/s, Kiln/Triton) and writes
OUT_DIR/reductions.json. Exits non-zero if the binary fails or a
configuration has no Kiln figure.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = 4096
SOFTMAX_N = [1024, 4096, 16384]
LAYERNORM_N = [1024, 4096, 8192]
TRANSPOSE_N = 8192
MATMUL_N = 4096


def load_path(relative, function):
    path = os.path.join(REPO, relative)
    name = os.path.splitext(os.path.basename(relative))[0]
    spec = importlib.util.spec_from_file_location("kiln_bench_" + name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's JIT looks the module up by name.
    spec.loader.exec_module(module)
    return getattr(module, function)


def load(name, function):
    directory = ("examples", "softmax") if name == "softmax" else ("bench", "kernels")
    path = os.path.join(REPO, *directory, name + ".py")
    spec = importlib.util.spec_from_file_location("kiln_bench_" + name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's JIT looks the module up by name.
    spec.loader.exec_module(module)
    return getattr(module, function)


def softmax_warps(block):
    return 4 if block <= 2048 else (8 if block <= 8192 else 16)


def bench_triton():
    import torch
    from triton.testing import do_bench

    rows = []
    softmax = load("softmax", "softmax_kernel")
    for n in SOFTMAX_N:
        x = torch.randn(ROWS, n, device="cuda")
        out = torch.empty_like(x)
        run = lambda: softmax[(ROWS,)](out, x, x.stride(0), out.stride(0), n,
                                       BLOCK=n, num_warps=softmax_warps(n))
        run()
        correct = bool(torch.allclose(out, torch.softmax(x, 1), atol=1e-5))
        ms = do_bench(run, quantiles=[0.5])
        ms = ms[0] if isinstance(ms, (list, tuple)) else ms
        rows.append({"kernel": "softmax", "M": ROWS, "N": n, "correct": correct,
                     "ms": ms, "GBps": 8 * ROWS * n / (ms * 1e-3) / 1e9})
        print(f"triton softmax N={n}: {rows[-1]['GBps']:.1f} GB/s", flush=True)
    layernorm = load("layernorm", "layernorm_kernel")
    for n in LAYERNORM_N:
        x = torch.randn(ROWS, n, device="cuda", dtype=torch.float16)
        w = torch.rand(n, device="cuda", dtype=torch.float16)
        b = torch.rand(n, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        warps = min(max(n // 256, 1), 8)
        run = lambda: layernorm[(ROWS,)](x, y, w, b, x.stride(0), n, 1e-5,
                                         BLOCK=n, num_warps=warps)
        run()
        ref = torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)
        correct = bool(torch.allclose(y, ref, atol=1e-2))
        ms = do_bench(run, quantiles=[0.5])
        ms = ms[0] if isinstance(ms, (list, tuple)) else ms
        rows.append({"kernel": "layernorm", "M": ROWS, "N": n, "correct": correct,
                     "ms": ms, "GBps": 4 * ROWS * n / (ms * 1e-3) / 1e9})
        print(f"triton layernorm N={n}: {rows[-1]['GBps']:.1f} GB/s", flush=True)
    transpose = load("transpose", "transpose_kernel")
    n = TRANSPOSE_N
    for name, dtype in (("transpose_fp32", torch.float32), ("transpose_fp16", torch.float16)):
        x = torch.randn(n, n, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        run = lambda: transpose[(n // 64, n // 64)](x, y, n, n, BLOCK_M=64, BLOCK_N=64,
                                                    num_warps=4)
        run()
        correct = bool(torch.equal(y, x.t()))
        ms = do_bench(run, quantiles=[0.5])
        ms = ms[0] if isinstance(ms, (list, tuple)) else ms
        rows.append({"kernel": name, "M": n, "N": n, "correct": correct, "ms": ms,
                     "GBps": 2 * x.element_size() * n * n / (ms * 1e-3) / 1e9})
        print(f"triton {name}: {rows[-1]['GBps']:.1f} GB/s", flush=True)
    matmul = load_path(os.path.join("tests", "kernels", "tutorials", "matmul.py"), "matmul_kernel")
    # The tutorial is @triton.autotune'd; both sides run the one config
    # Kiln was built with (bench/CMakeLists.txt), so call the kernel itself.
    matmul = getattr(matmul, "fn", matmul)
    n = MATMUL_N
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    grid = ((n // 128) * (n // 128),)
    run = lambda: matmul[grid](a, b, c, n, n, n, n, 1, n, 1, n, 1, BM=128, BN=128, BK=32,
                               GROUP=8, num_warps=8)
    run()
    correct = bool(torch.allclose(c.float(), (a.float() @ b.float()), atol=0.5, rtol=1e-2))
    ms = do_bench(run, quantiles=[0.5])
    ms = ms[0] if isinstance(ms, (list, tuple)) else ms
    rows.append({"kernel": "matmul_fp16", "M": n, "N": n, "correct": correct, "ms": ms,
                 "TFLOPS": 2 * n ** 3 / (ms * 1e-3) / 1e12})
    print(f"triton matmul_fp16: {rows[-1]['TFLOPS']:.1f} TFLOPS", flush=True)
    return rows


def parse_results(stdout):
    results = []
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) < 2 or fields[0] != "RESULT":
            continue
        result = {"kernel": fields[1]}
        for field in fields[2:]:
            key, _, value = field.partition("=")
            try:
                result[key] = float(value) if "." in value else int(value)
            except ValueError:
                result[key] = value
        results.append(result)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--out", default=".")
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    import torch
    import triton

    report = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__,
              "torch": torch.__version__}
    triton_rows = bench_triton()
    proc = subprocess.run([opts.binary], capture_output=True, text=True, timeout=900)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    kiln_rows = parse_results(proc.stdout)
    report.update({"triton_results": triton_rows, "kiln_results": kiln_rows,
                   "kiln_exit_code": proc.returncode})

    print(f"\nreductions on {report['device']}, {ROWS} rows "
          "(GB/s: softmax 8 B/element, layer norm 4 B/element; matmul in TFLOPS)")
    print(f"{'kernel':14} {'N':>6} {'Triton GB/s':>12} {'Kiln GB/s':>10} {'Kiln/Triton':>12}")
    missing = False
    for t in triton_rows:
        k = next((r for r in kiln_rows if r["kernel"] == t["kernel"] and r["N"] == t["N"]), None)
        if k is None:
            missing = True
        unit = "TFLOPS" if "TFLOPS" in t else "GBps"
        kiln = f"{k[unit]:.1f}" if k else "-"
        ratio = f"{k[unit] / t[unit]:.3f}" if k else "-"
        print(f"{t['kernel']:14} {t['N']:>6} {t[unit]:>12.1f} {kiln:>10} {ratio:>12}"
              f"{'' if t['correct'] else '  (Triton result WRONG)'}")
    path = os.path.join(opts.out, "reductions.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\nwrote {path}")
    return 1 if proc.returncode != 0 or missing else 0


if __name__ == "__main__":
    sys.exit(main())
