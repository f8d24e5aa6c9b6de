#!/usr/bin/env python3
"""Nsight Compute side by side: Kiln's and Triton's kernel of each real-world case.

For each case of bench/realworld_cases.py (--filter as bench/realworld_cubins.py
takes it), profiles the first launch of the case's kernel on each side (the
correctness launches: Kiln's comes first) with the sections that say where
memory traffic goes, and writes one summary: duration, registers, shared
memory, achieved occupancy, the global sectors the accesses touch beyond the
ideal (ncu's uncoalesced-access counters) and the bytes of each sector used.
On the GPU machine:

    python3 bench/ncu_realworld.py --cubins DIR --out OUT [--filter a,b]

With `--forms CASE:KERNEL,...` it profiles bench/matmul_forms_cubins.py's
cases instead (its `--build` cubins in DIR; KERNEL the case's kernel name).
With `--stalls` it also collects the warp state statistics and reports, per
side, the instructions issued, the cycles, and the stall reasons per issued
instruction (ncu's smsp__average_warps_issue_stalled_*), largest first:
where a kernel issues no more than Triton's and still takes longer, they say
what it waits on. With `--sass` it also writes each case's SASS with ncu's
per-instruction stall samples (OUT/CASE.sass.csv.gz, both sides' launches):
which instructions the time goes to. With `--tutorial09 SIZE` it profiles
tutorial 09's persistent matmul cubins instead (DIR from
bench/build_persistent_matmul_cubins.sh, --filter their names) at
M=N=K=SIZE through bench/persistent_matmul_cubins.py, where Triton's launch
comes first.
"""
import argparse
import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys

NCU = os.environ.get("NCU", "/usr/local/cuda/bin/ncu")
SECTIONS = ["SpeedOfLight", "LaunchStats", "Occupancy", "SourceCounters",
            "MemoryWorkloadAnalysis_Tables"]


STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


def profile(case_id, kernel, cubins, work, forms=False, stalls=False, sass_out=None, tutorial09_size=0):
    report = os.path.join(work, case_id)
    cmd = [NCU, "-f", "-o", report, "-k", f"regex:^{re.escape(kernel)}$", "-c", "2"]
    for s in SECTIONS + (["WarpStateStats"] if stalls else []):
        cmd += ["--section", s]
    if tutorial09_size:
        # Triton's kernel launches first there, then Kiln's.
        cmd += [sys.executable, "bench/persistent_matmul_cubins.py", "--cubins", cubins, "--out",
                os.path.join(work, "t09_" + case_id), "--rounds", "1", "--sizes", str(tutorial09_size),
                "--only", case_id]
    elif forms:
        cmd += [sys.executable, "bench/matmul_forms_cubins.py", "--cubins", cubins, "--out",
                os.path.join(work, "forms_" + case_id), "--rounds", "1", "--only", case_id]
    else:
        cmd += [sys.executable, "bench/realworld_cubins.py", "--cubins", cubins, "--out",
                os.path.join(work, "rw_" + case_id), "--rounds", "1", "--reps", "1",
                "--filter", case_id]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    text = subprocess.run([NCU, "-i", report + ".ncu-rep", "--page", "details", "--csv"],
                          capture_output=True, text=True).stdout
    if sass_out:
        page = subprocess.run([NCU, "-i", report + ".ncu-rep", "--page", "source", "--csv",
                               "--print-source", "sass"], capture_output=True).stdout
        with gzip.open(sass_out, "wb") as f:
            f.write(page)
    raw = ""
    if stalls:
        raw = subprocess.run([NCU, "-i", report + ".ncu-rep", "--page", "raw", "--csv"],
                             capture_output=True, text=True).stdout
    return list(csv.reader(io.StringIO(text))), list(csv.reader(io.StringIO(raw)))


def stall_summary(raw):
    """Per profiled launch (in order): instructions, cycles, and the stall
    reasons above 0.05 per issued instruction, largest first."""
    if len(raw) < 3:
        return []
    header = raw[0]
    out = []
    for row in raw[2:]:
        values = {}
        for name, value in zip(header, row):
            try:
                values[name] = float(value.replace(",", ""))
            except ValueError:
                pass
        reasons = {n[len(STALL_PREFIX):-len(STALL_SUFFIX)]: round(v, 3) for n, v in values.items()
                   if n.startswith(STALL_PREFIX) and n.endswith(STALL_SUFFIX) and v > 0.05
                   and "not_issued" not in n}
        first = lambda *names: next((values[n] for n in names if n in values), None)
        out.append(dict(instructions=first("smsp__inst_executed.sum", "sm__inst_executed.sum"),
                        cycles=first("sm__cycles_elapsed.max", "gpc__cycles_elapsed.max",
                                     "sm__cycles_elapsed.avg"),
                        stalls=dict(sorted(reasons.items(), key=lambda kv: -kv[1]))))
    return out


def summarize(rows):
    """Per profiled launch (in order): the figures the summary shows."""
    if not rows:
        return []
    header = rows[0]
    col = {name: i for i, name in enumerate(header)}
    launches = {}
    for r in rows[1:]:
        if len(r) <= col["Metric Value"]:
            continue
        d = launches.setdefault(r[col["ID"]], dict(messages=[]))
        name, value = r[col["Metric Name"]], r[col["Metric Value"]]
        if name:
            d[name] = value
        for i, field in enumerate(r):
            if i > col["Metric Value"] and field and len(field) > 40:
                d["messages"].append(field)
    out = []
    for key in sorted(launches, key=int):
        d = launches[key]
        s = dict(duration_us=d.get("Duration"), registers=d.get("Registers Per Thread"),
                 shared_kb=d.get("Dynamic Shared Memory Per Block"),
                 occupancy=d.get("Achieved Occupancy"))
        for m in d["messages"]:
            if (x := re.search(r"total of (\d+) excessive sectors \((\d+)% of the total (\d+) sectors",
                               m)):
                s["excessive_sectors"] = int(x.group(1))
                s["sectors"] = int(x.group(3))
            if (x := re.search(r"global (loads|stores)[^.]*\. On average, only ([\d.]+) of the 32 bytes",
                               m)):
                s[f"bytes_per_sector_{x.group(1)}"] = float(x.group(2))
            if (x := re.search(r"shared (loads|stores)[^.]*causes on average a ([\d.]+) - way", m)):
                s[f"shared_{x.group(1)}_ways"] = float(x.group(2))
        out.append(s)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--filter", default="")
    parser.add_argument("--forms", default="", help="CASE:KERNEL,... of bench/matmul_forms_cubins.py")
    parser.add_argument("--stalls", action="store_true", help="also the stall reasons of each side")
    parser.add_argument("--sass", action="store_true",
                        help="also each case's SASS with per-instruction stall samples")
    parser.add_argument("--tutorial09", type=int, default=0, metavar="SIZE",
                        help="--cubins holds bench/build_persistent_matmul_cubins.sh's cubins: profile "
                             "those whose name is in --filter (comma-separated) at M=N=K=SIZE")
    opts = parser.parse_args()
    if opts.tutorial09:
        names = set(opts.filter.split(","))
        listed = "\n".join(f"{n}||{k}" for n, k in (line.split("|")[:2] for line in
                                                    open(os.path.join(opts.cubins, "list.txt")))
                           if n in names)
    elif opts.forms:
        listed = "\n".join(f"{c}||{k}" for c, k in (p.split(":") for p in opts.forms.split(",")))
    else:
        listed = subprocess.run([sys.executable, "bench/realworld_cubins.py", "--list", "--filter",
                                 opts.filter], capture_output=True, text=True, check=True).stdout
    work = os.path.join("/tmp", "ncu_realworld")
    os.makedirs(work, exist_ok=True)
    os.makedirs(opts.out, exist_ok=True)
    results = []
    for line in listed.splitlines():
        case_id, _, kernel = line.split("|")[:3]
        sass_out = os.path.join(opts.out, case_id + ".sass.csv.gz") if opts.sass else None
        details, raw = profile(case_id, kernel, opts.cubins, work, bool(opts.forms), opts.stalls,
                               sass_out, opts.tutorial09)
        launches = summarize(details)
        for launch, stall in zip(launches, stall_summary(raw)):
            launch.update(stall)
        sides = dict(zip(("triton", "kiln") if opts.tutorial09 else ("kiln", "triton"), launches))
        results.append(dict(id=case_id, kernel=kernel, **sides))
        print(case_id, json.dumps(sides), flush=True)
    json.dump(results, open(os.path.join(opts.out, "ncu_realworld.json"), "w"), indent=1)
    keys = ["duration_us", "registers", "shared_kb", "occupancy", "excessive_sectors",
            "bytes_per_sector_loads", "bytes_per_sector_stores"]
    lines = ["| case | " + " | ".join(f"{k} (Kiln, Triton)" for k in keys) + " |",
             "|---" * (len(keys) + 1) + "|"]
    for r in results:
        cells = [f"{r.get('kiln', {}).get(k, '-')}, {r.get('triton', {}).get(k, '-')}" for k in keys]
        lines.append(f"| {r['id']} | " + " | ".join(cells) + " |")
    if opts.stalls:
        lines += ["", "| case | side | instructions | cycles | stalls per issued instruction |",
                  "|---|---|---|---|---|"]
        for r in results:
            for side in ("kiln", "triton"):
                d = r.get(side, {})
                top = ", ".join(f"{k} {v}" for k, v in list(d.get("stalls", {}).items())[:6])
                lines.append(f"| {r['id']} | {side} | {d.get('instructions')} | {d.get('cycles')} | {top} |")
    open(os.path.join(opts.out, "ncu_realworld.md"), "w").write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
