#!/usr/bin/env python3
"""Kiln's tuned launchers beside upstream Triton's autotuner, same sources.

For the autotuned matmul (kernels/matmul_autotuned.py, tutorial 03's shape
and config list; M=N=K in 256..8192 and M=16/64 with N=K=4096) and layer norm
(kernels/layernorm_autotuned.py, 4096 rows, N in 512..16384), in one run:

  * Kiln (bench/tune_bench, built with -DKILN_TUNE_BENCH=ON): the generated
    launcher's default overload, as a user calls it (its choice comes from
    the embedded tuning table for this GPU, or with --runtime-tuning from
    measuring on its first call), every config through the config overload
    (the best of them, and the first: what the launcher ran before tables);
  * upstream Triton: the @triton.autotune decorator of the same file tunes on
    the first call, then the call is timed.

All times are triton.testing.do_bench's method (warm-up, L2 flush, CUDA
events, median); Kiln's by kiln::Benchmark in C++. Prints a table, checks the
issue's acceptance (default within 3% of the best config; at least 0.97x
upstream's autotuned time) and writes OUT/tune_compare.json.

  python3 bench/tune_compare.py --bench BIN/tune_bench --out OUT [--runtime-tuning]
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_kiln(binary, runtime_tuning, quick):
    command = [binary] + (["--runtime-tuning"] if runtime_tuning else []) + (["--quick"] if quick else [])
    print("+", " ".join(command), flush=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    sys.stdout.write("".join(line + "\n" for line in proc.stdout.splitlines() if not line.startswith("RESULT ")))
    if proc.returncode != 0:
        raise SystemExit(f"tune_bench failed ({proc.returncode})")
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[len("RESULT "):])
            results[(r["kernel"], r["shape"])] = r
    return results


def upstream(quick):
    import torch
    import triton
    import triton.testing

    bench = dict(warmup=5, rep=20) if quick else {}
    out = {}
    mm = load(os.path.join(HERE, "kernels", "matmul_autotuned.py"), "kiln_bench_matmul_autotuned")
    shapes = [(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192)] + [(16, 4096, 4096), (64, 4096, 4096)]
    for M, N, K in shapes:
        a = torch.randn((M, K), device="cuda", dtype=torch.float16)
        b = torch.randn((K, N), device="cuda", dtype=torch.float16)
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)

        def call():
            mm.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                   c.stride(0), c.stride(1))

        call()
        torch.cuda.synchronize()
        ms = triton.testing.do_bench(call, quantiles=[0.5, 0.2, 0.8], **bench)[0]
        out[("matmul_kernel", f"M={M} N={N} K={K}")] = (ms, str(mm.matmul_kernel.best_config))
        print(f"upstream matmul M={M} N={N} K={K}: {ms:.4f} ms ({mm.matmul_kernel.best_config})", flush=True)
    ln = load(os.path.join(HERE, "kernels", "layernorm_autotuned.py"), "kiln_bench_layernorm_autotuned")
    M = 4096
    for N in (512, 1024, 2048, 4096, 8192, 16384):
        x = torch.randn((M, N), device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        w = torch.randn((N,), device="cuda", dtype=torch.float16)
        bias = torch.randn((N,), device="cuda", dtype=torch.float16)
        mean = torch.empty((M,), device="cuda", dtype=torch.float32)
        rstd = torch.empty((M,), device="cuda", dtype=torch.float32)

        def call():
            ln.layernorm_kernel[(M,)](x, y, w, bias, mean, rstd, x.stride(0), N, 1e-5)

        call()
        torch.cuda.synchronize()
        ms = triton.testing.do_bench(call, quantiles=[0.5, 0.2, 0.8], **bench)[0]
        out[("layernorm_kernel", f"M={M} N={N}")] = (ms, str(ln.layernorm_kernel.best_config))
        print(f"upstream layernorm M={M} N={N}: {ms:.4f} ms ({ln.layernorm_kernel.best_config})", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="the tune_bench binary")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--runtime-tuning", action="store_true",
                        help="let the default overload measure on its first call (no table embedded yet)")
    parser.add_argument("--skip-upstream", action="store_true")
    parser.add_argument("--quick", action="store_true", help="shorter do_bench (5 ms warm-up, 20 ms)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    kiln = run_kiln(args.bench, args.runtime_tuning, args.quick)
    theirs = {} if args.skip_upstream else upstream(args.quick)

    rows = []
    failures = []
    print()
    print(f"{'kernel':<17} {'shape':<22} {'default':>9} {'best':>9} {'first':>9} {'triton':>9} "
          f"{'def/best':>8} {'triton/def':>10}  default config (why)")
    for key, r in kiln.items():
        kernel, shape = key
        up = theirs.get(key)
        ratio_best = r["default_ms"] / r["best_ms"] if r["best_ms"] else float("nan")
        ratio_up = up[0] / r["default_ms"] if up else float("nan")
        ok_best = ratio_best <= 1.03
        ok_up = (ratio_up >= 0.97) if up else None
        if not ok_best:
            failures.append(f"{kernel} {shape}: default {r['default_ms']:.4f} ms is {ratio_best:.3f}x the best config")
        if ok_up is False:
            failures.append(f"{kernel} {shape}: Triton/Kiln = {ratio_up:.3f} < 0.97")
        why = r["why"].split(": ", 1)[-1] if r["why"] else ""
        print(f"{kernel:<17} {shape:<22} {r['default_ms']:9.4f} {r['best_ms']:9.4f} {r['first_ms']:9.4f} "
              f"{(up[0] if up else float('nan')):9.4f} {ratio_best:8.3f} {ratio_up:10.3f}  "
              f"{r['default_config']} ({why})")
        rows.append(dict(r, triton_ms=up[0] if up else None, triton_config=up[1] if up else None,
                         default_over_best=ratio_best, triton_over_default=ratio_up))
    device = None
    try:
        import torch
        device = torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001 - the table is still worth writing
        pass
    with open(os.path.join(args.out, "tune_compare.json"), "w") as f:
        json.dump({"device": device, "runtime_tuning": args.runtime_tuning, "rows": rows,
                   "failures": failures}, f, indent=1)
    print()
    if failures:
        print("acceptance: NOT met:")
        for line in failures:
            print("  " + line)
    else:
        print("acceptance: met (default within 3% of the best config, >= 0.97x Triton's autotuned time)")
    print(f"wrote {os.path.join(args.out, 'tune_compare.json')}")


if __name__ == "__main__":
    main()
