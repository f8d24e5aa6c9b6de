#!/usr/bin/env python3
"""The median of several side-by-side runs: reads the JSON files that
bench/vector_add.py (vector_add.json) and bench/reductions.py
(reductions.json) write, one per run, and prints for each configuration the
median Triton GB/s, the median Kiln GB/s and the median of the per-run
Kiln/Triton ratios (each ratio taken within one run). Matmul rows are in
TFLOPS instead (marked so in the kernel column).

    python3 bench/median_of_runs.py RUN1/reductions.json RUN2/... RUN3/...
"""
import json
import statistics
import sys
from collections import OrderedDict


def figure(result):
    return result["TFLOPS"] if "TFLOPS" in result else result["GBps"]


def rows(path):
    data = json.load(open(path))
    triton, kiln = {}, {}
    for r in data["triton_results"]:
        key = (r["kernel"], f"{r['M']} x {r['N']}") if "kernel" in r else (
            "vector add " + r["dtype"], f"n = {r['n']}")
        triton[key] = figure(r)
    for r in data["kiln_results"]:
        key = (r["kernel"], f"{r['M']} x {r['N']}") if "kernel" in r else (
            "vector add " + r["dtype"], f"n = {r['n']}")
        kiln[key] = figure(r)
    return triton, kiln


def main(paths):
    runs = [rows(p) for p in paths]
    table = OrderedDict()
    for triton, kiln in runs:
        for key, t in triton.items():
            if key in kiln:
                table.setdefault(key, []).append((t, kiln[key], kiln[key] / t))
    print(f"median of {len(paths)} runs")
    print(f"{'kernel':25} {'size':12} {'Triton GB/s':>12} {'Kiln GB/s':>10} {'Kiln/Triton':>12}  per-run ratios")
    for (kernel, size), values in table.items():
        if kernel.startswith("matmul"):
            kernel += " (TFLOPS)"
        t = statistics.median(v[0] for v in values)
        k = statistics.median(v[1] for v in values)
        ratio = statistics.median(v[2] for v in values)
        runs_text = " ".join(f"{v[2]:.3f}" for v in values)
        print(f"{kernel:25} {size:12} {t:12.1f} {k:10.1f} {ratio:12.3f}  {runs_text}")


if __name__ == "__main__":
    main(sys.argv[1:])
