"""Vector add: Kiln's ahead-of-time build against upstream Triton's JIT, same source.

Run on the GPU machine, from the repository root:

    python3 bench/vector_add.py --binary BIN_DIR/vector_add --out OUT_DIR

Upstream Triton runs add_kernel imported from examples/vector_add/add.py (the
file Kiln compiles), with the configurations of examples/vector_add/BUILD.bazel,
timed by triton.testing.do_bench (median and 20/80% quantiles). The Kiln
figures come from our `vector_add` binary, which times its launches the way
do_bench does (L2 flush before each run, events around it, the median), run
once per size with
`--bench-n=N` (the first run also checks its results, the others add
`--bench-only`); it prints one line per measurement:

    RESULT fp32 n=268435456 GBps=3012.4 [more key=value ...]

Prints a table with both figures and their ratio, and writes
OUT_DIR/vector_add.json. Exits non-zero when the binary fails or prints no
RESULT line, or when Triton's output is wrong.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_FILE = os.path.join(REPO, "examples", "vector_add", "add.py")

# (dtype, BLOCK, num_warps): the specializations of examples/vector_add/BUILD.bazel.
CONFIGS = [("fp32", 1024, 4), ("fp16", 2048, 8)]
SIZES = [1 << 24, 1 << 28]


def load_add_kernel():
    """Imports add_kernel from the example's file, so both sides run one source."""
    spec = importlib.util.spec_from_file_location("kiln_example_vector_add", KERNEL_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's JIT looks the module up by name.
    spec.loader.exec_module(module)
    return module.add_kernel


def gbps(n, elem_bytes, ms):
    """Bandwidth of one add: two reads and one write of n elements."""
    return 3 * n * elem_bytes / (ms * 1e-3) / 1e9


def bench_triton(add_kernel, sizes):
    import torch
    import triton
    from triton.testing import do_bench

    torch_dtypes = {"fp32": torch.float32, "fp16": torch.float16}
    rows = []
    for dtype, block, num_warps in CONFIGS:
        for n in sizes:
            x = torch.rand(n, device="cuda", dtype=torch_dtypes[dtype])
            y = torch.rand(n, device="cuda", dtype=torch_dtypes[dtype])
            out = torch.empty_like(x)
            grid = (triton.cdiv(n, block),)

            def run():
                add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=num_warps)

            run()
            torch.cuda.synchronize()
            ok = bool(torch.equal(out, x + y))
            median, p20, p80 = do_bench(run, quantiles=[0.5, 0.2, 0.8])
            elem = x.element_size()
            rows.append({
                "dtype": dtype, "n": n, "BLOCK": block, "num_warps": num_warps,
                "correct": ok, "ms_median": median, "ms_p20": p20, "ms_p80": p80,
                "GBps": gbps(n, elem, median),
                "GBps_p20": gbps(n, elem, p80), "GBps_p80": gbps(n, elem, p20),
            })
            print(f"triton {dtype} n={n}: {rows[-1]['GBps']:.1f} GB/s"
                  f"{'' if ok else ' (WRONG RESULT)'}", flush=True)
            del x, y, out
            torch.cuda.empty_cache()
    return rows


def parse_value(text):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def parse_results(stdout):
    """Reads `RESULT <dtype> key=value ...` lines into dicts."""
    results = []
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) < 2 or fields[0] != "RESULT":
            continue
        result = {"dtype": fields[1]}
        for field in fields[2:]:
            key, sep, value = field.partition("=")
            if sep:
                result[key] = parse_value(value)
        results.append(result)
    return results


def run_binary(binary, sizes, extra_args):
    """Runs the binary once per size: the first run also checks results
    (at the binary's own sizes), the others only time (--bench-only)."""
    runs = []
    for i, n in enumerate(sizes):
        command = [binary, f"--bench-n={n}"] + ([] if i == 0 else ["--bench-only"]) + extra_args
        print("running", " ".join(command), flush=True)
        proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        runs.append({"command": command, "exit_code": proc.returncode,
                     "stdout": proc.stdout, "stderr": proc.stderr[-4000:]})
    return runs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True, help="our built vector_add binary")
    parser.add_argument("--out", default=".", help="directory for vector_add.json")
    parser.add_argument("--binary-arg", action="append", default=[],
                        help="extra argument for the binary (repeatable)")
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES,
                        help="element counts to compare (default 2^24 2^28)")
    opts = parser.parse_args()
    os.makedirs(opts.out, exist_ok=True)

    import torch
    import triton

    report = {
        "device": torch.cuda.get_device_name(0),
        "compute_capability": list(torch.cuda.get_device_capability(0)),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "binary": opts.binary,
        "kernel_file": os.path.relpath(KERNEL_FILE, REPO),
    }
    print(f"device: {report['device']} (sm_{''.join(map(str, report['compute_capability']))}), "
          f"triton {report['triton']}", flush=True)

    triton_rows = bench_triton(load_add_kernel(), opts.sizes)
    runs = run_binary(opts.binary, opts.sizes, opts.binary_arg)
    kiln_rows = [r for run in runs for r in parse_results(run["stdout"])]
    report.update({"triton_results": triton_rows, "kiln_results": kiln_rows, "kiln_runs": runs})

    kiln_by_key = {(r["dtype"], r.get("n")): r for r in kiln_rows}
    table = []
    for t in triton_rows:
        k = kiln_by_key.get((t["dtype"], t["n"]))
        kiln_gbps = k.get("GBps") if k else None
        ratio = kiln_gbps / t["GBps"] if isinstance(kiln_gbps, (int, float)) else None
        table.append({"dtype": t["dtype"], "n": t["n"], "triton_GBps": t["GBps"],
                      "kiln_GBps": kiln_gbps, "kiln_over_triton": ratio,
                      "triton_correct": t["correct"]})
    report["comparison"] = table

    print()
    print(f"vector add on {report['device']}: GB/s counts 2 reads + 1 write per element")
    print(f"{'dtype':<6} {'n':>11} {'Triton GB/s':>12} {'Kiln GB/s':>10} {'Kiln/Triton':>12}")
    for row in table:
        kiln = f"{row['kiln_GBps']:.1f}" if row["kiln_GBps"] is not None else "-"
        ratio = f"{row['kiln_over_triton']:.3f}" if row["kiln_over_triton"] is not None else "-"
        print(f"{row['dtype']:<6} {row['n']:>11} {row['triton_GBps']:>12.1f} {kiln:>10} {ratio:>12}")

    path = os.path.join(opts.out, "vector_add.json")
    with open(path, "w") as fh:
        json.dump(report, fh, indent=1)
    print(f"\nwrote {path}")

    failures = []
    failures += [f"{' '.join(run['command'])} exited with status {run['exit_code']}"
                 for run in runs if run["exit_code"] != 0]
    failures += [f"Triton gave a wrong result for {r['dtype']} n={r['n']}"
                 for r in triton_rows if not r["correct"]]
    if not kiln_rows:
        failures.append("the binary printed no RESULT line")
    for row in table:
        if row["kiln_GBps"] is None:
            print(f"note: no Kiln RESULT line for {row['dtype']} n={row['n']}", file=sys.stderr)
    for failure in failures:
        print("error:", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
