#!/usr/bin/env python3
"""Kiln's tuned launchers beside upstream Triton's autotuner, on the same
sources, timed the same way, interleaved, in one process.

Kernels (bench/tune_matmul.sh):
  * matmul_kernel of upstream's tutorial 03, the file unchanged (--tutorial;
    its own @triton.autotune(configs=get_autotune_config(), key=['M', 'N',
    'K'])), fp16, ACTIVATION="", at the shapes of tuning/matmul_spec.json;
  * layernorm_kernel of kernels/layernorm_autotuned.py (BLOCK/num_warps
    configs, key N) at the shapes of tuning/layernorm_spec.json.

Per shape, the candidates are
  * "triton": upstream's autotuned kernel as the tutorial calls it (its
    autotuner tunes on the first call, with its own do_bench);
  * "kiln": the generated launcher's default overload as a user calls it
    (libkiln_tune_bench.so, bench/tune_bridge.cc): the embedded tuning
    table's config for this GPU and key, or, where no table covers this GPU
    (--runtime-tuning-without-table), the one run-time tuning measures on the
    first call;
  * "kiln[i]": every compiled config of Kiln's launcher, by position.
Each is checked first (the output against PyTorch's, in fp32). Then all are
timed in one loop as triton.testing.do_bench times one (warm-up; before each
timed launch the same 256 MiB L2 flush; a pair of CUDA events around each
launch), but interleaved: each repetition launches every candidate once, in
an order rotated by one per repetition, so that the GPU's clocks and
temperature drift over the shape's measurement reach every candidate alike.
The figure is the median over all repetitions (the spread of the medians of
five consecutive rounds of repetitions is reported as noise). Host overheads
(Python's launch path, ctypes) hide behind the flush, as in do_bench.

Acceptance (issue 16), per shape: Kiln's default overload within 3% of the
best Kiln config (default / best <= 1.03), and at least 0.97x upstream
Triton's autotuned figure (triton / kiln >= 0.97).

Writes OUT/results.json (every figure, check and choice, the device and
versions) and OUT/results.md (dated tables), and prints the table.

  python3 bench/tune_compare.py --lib DEST/libkiln_tune_bench.so \\
      --tutorial DEST/upstream/03-matrix-multiplication.py --out OUT \\
      [--runtime-tuning-without-table] [--quick] [--tuner-summary FILE ...]
"""

import argparse
import ctypes
import datetime
import hashlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

MATMUL, LAYERNORM = 0, 1
FLUSH_BYTES = 256 << 20  # as triton.testing.do_bench
ACCEPT_BEST = 1.03
ACCEPT_TRITON = 0.97


# --------------------------------------------------------------------------
# Kiln, through the bridge
# --------------------------------------------------------------------------

class Kiln:
    def __init__(self, path):
        self.lib = ctypes.CDLL(os.path.abspath(path))
        i32p = ctypes.POINTER(ctypes.c_int32)
        u64 = ctypes.c_uint64
        self.lib.kiln_tune_num_configs.argtypes = [ctypes.c_int]
        self.lib.kiln_tune_config.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.kiln_tune_prepare.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.kiln_tune_explain.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_int,
                                               ctypes.c_char_p, ctypes.c_int]
        self.lib.kiln_tune_matmul.argtypes = [ctypes.c_int, u64, u64, u64, i32p, u64, ctypes.c_char_p,
                                              ctypes.c_int]
        self.lib.kiln_tune_layernorm.argtypes = [ctypes.c_int] + [u64] * 6 + [ctypes.c_int32] * 3 + [
            ctypes.c_float, u64, ctypes.c_char_p, ctypes.c_int]
        self.error = ctypes.create_string_buffer(2048)

    def configs(self, kernel):
        out = ctypes.create_string_buffer(1024)
        names = []
        for i in range(self.lib.kiln_tune_num_configs(kernel)):
            self.lib.kiln_tune_config(kernel, i, out, len(out))
            names.append(out.value.decode())
        return names

    def prepare(self, kernel, runtime_tuning):
        out = ctypes.create_string_buffer(4096)
        covered = self.lib.kiln_tune_prepare(kernel, int(runtime_tuning), out, len(out))
        if covered < 0:
            raise SystemExit("tune_compare: no GPU for Kiln: " + out.value.decode())
        return bool(covered), out.value.decode()

    def explain(self, kernel, key):
        out = ctypes.create_string_buffer(4096)
        values = (ctypes.c_int64 * len(key))(*key)
        if self.lib.kiln_tune_explain(kernel, values, len(key), out, len(out)) != 0:
            return None, out.value.decode()
        config, _, why = out.value.decode().partition("\t")
        return config, why

    def _check(self, status):
        if status != 0:
            raise RuntimeError(self.error.value.decode())

    def matmul(self, position, a, b, c, stream):
        M, K = a.shape
        N = b.shape[1]
        sizes = (ctypes.c_int32 * 9)(M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                     c.stride(0), c.stride(1))
        args = (position, a.data_ptr(), b.data_ptr(), c.data_ptr(), sizes, stream, self.error,
                len(self.error))
        fn = self.lib.kiln_tune_matmul

        def launch():
            self._check(fn(*args))
        return launch

    def layernorm(self, position, x, y, w, b, mean, rstd, eps, stream):
        M, N = x.shape
        args = (position, x.data_ptr(), y.data_ptr(), w.data_ptr(), b.data_ptr(), mean.data_ptr(),
                rstd.data_ptr(), M, x.stride(0), N, eps, stream, self.error, len(self.error))
        fn = self.lib.kiln_tune_layernorm

        def launch():
            self._check(fn(*args))
        return launch


# --------------------------------------------------------------------------
# Timing: do_bench's method, every candidate interleaved
# --------------------------------------------------------------------------

def quantile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    at = q * (len(sorted_values) - 1)
    low = int(at)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (at - low)


class Timer:
    """Times several launches as do_bench times one, interleaved."""

    def __init__(self, torch, warmup_ms, rep_ms, max_reps, rounds=5):
        self.torch = torch
        self.cache = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
        self.warmup_ms, self.rep_ms, self.max_reps, self.rounds = warmup_ms, rep_ms, max_reps, rounds

    def _estimate(self, fn):
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            self.cache.zero_()
            fn()
        end.record()
        torch.cuda.synchronize()
        return max(start.elapsed_time(end) / 5, 1e-4)

    def run(self, calls):
        """calls: [(name, fn)]. Returns {name: stats}."""
        torch = self.torch
        if not calls:
            return {}
        estimates = sorted(self._estimate(fn) for _, fn in calls)
        estimate = quantile(estimates, 0.5)
        warmup = max(1, int(self.warmup_ms / estimate))
        reps = max(self.rounds * 4, min(self.max_reps, int(self.rep_ms / estimate)))
        for _ in range(warmup):
            for _, fn in calls:
                fn()
        count = len(calls)
        samples = [[] for _ in calls]
        block = max(1, 256 // count)  # repetitions between synchronizations
        pool = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                for _ in range(block * count)]
        for first in range(0, reps, block):
            used = []
            for r in range(first, min(first + block, reps)):
                for j in range(count):
                    i = (j + r) % count
                    start, end = pool[len(used)]
                    self.cache.zero_()
                    start.record()
                    calls[i][1]()
                    end.record()
                    used.append((i, start, end))
            torch.cuda.synchronize()
            for i, start, end in used:
                samples[i].append(start.elapsed_time(end))
        out = {}
        per_round = max(1, reps // self.rounds)
        for (name, _), times in zip(calls, samples):
            rounds = [quantile(sorted(times[k:k + per_round]), 0.5)
                      for k in range(0, per_round * self.rounds, per_round) if times[k:k + per_round]]
            ordered = sorted(times)
            out[name] = {"ms": quantile(ordered, 0.5), "p20_ms": quantile(ordered, 0.2),
                         "p80_ms": quantile(ordered, 0.8), "reps": len(times),
                         "round_medians_ms": [round(x, 6) for x in rounds]}
        return out


# --------------------------------------------------------------------------
# The kernels
# --------------------------------------------------------------------------

def triton_config_text(config):
    if config is None:
        return None
    parts = ["{}={}".format(k, v) for k, v in config.kwargs.items()]
    parts += ["num_warps={}".format(config.num_warps), "num_stages={}".format(config.num_stages)]
    return ", ".join(parts)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def spec_shapes(name):
    with open(os.path.join(HERE, "tuning", name)) as f:
        return json.load(f)["kernels"][0]["shapes"]


def compare_shape(torch, timer, kiln, kernel, key, shape, configs, make_calls):
    """Checks and times one shape; returns its row. make_calls() makes the inputs and returns
    (triton_call, kiln_call(position), output tensor, reference, atol, rtol, Triton's kernel)."""
    triton_call, kiln_call, out, ref, atol, rtol, triton_kernel = make_calls()
    row = {"kernel": ["matmul_kernel", "layernorm_kernel"][kernel], "shape": shape, "key": key,
           "checks": {}, "errors": {}}

    def check(name, fn):
        try:
            out.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            got = out.float()
            ok = bool(torch.allclose(got, ref, atol=atol, rtol=rtol))
            err = float((got - ref).abs().nan_to_num(float("inf")).max())
            row["checks"][name] = {"ok": ok, "max_abs_err": err}
            return ok
        except Exception as e:  # noqa: BLE001 - a failing candidate is a table cell
            row["errors"][name] = "{}: {}".format(type(e).__name__, str(e).strip().splitlines()[0][:300])
            return False

    start = time.time()
    check("triton", triton_call)  # its autotuner tunes here
    row["triton_tuning_s"] = round(time.time() - start, 2)
    row["triton_config"] = triton_config_text(getattr(triton_kernel, "best_config", None))
    start = time.time()
    check("kiln", kiln_call(-1))  # run-time tuning, if on, measures here
    row["kiln_first_call_s"] = round(time.time() - start, 2)
    row["kiln_config"], row["kiln_why"] = kiln.explain(kernel, key)
    calls = [(name, fn) for name, fn in (("triton", triton_call), ("kiln", kiln_call(-1)))
             if row["checks"].get(name, {}).get("ok")]
    for i, name in enumerate(configs):
        fn = kiln_call(i)
        if check("kiln[{}]".format(i), fn):
            calls.append(("kiln[{}]".format(i), fn))
    try:
        timings = timer.run(calls)
    except Exception as e:  # noqa: BLE001 - a launch that fails while timed fails the row
        row["errors"]["timing"] = "{}: {}".format(type(e).__name__, str(e).strip().splitlines()[0][:300])
        timings = {}
    row["timings"] = timings
    kiln_ms = timings.get("kiln", {}).get("ms")
    triton_ms = timings.get("triton", {}).get("ms")
    ranked = sorted((timings[n]["ms"], int(n[5:-1])) for n in timings if n.startswith("kiln["))
    row["kiln_ms"], row["triton_ms"] = kiln_ms, triton_ms
    if ranked:
        row["best_ms"], best = ranked[0]
        row["best_config"] = configs[best]
    if "kiln[0]" in timings:
        row["first_ms"] = timings["kiln[0]"]["ms"]
    if row["kiln_config"] in configs:
        same = "kiln[{}]".format(configs.index(row["kiln_config"]))
        if same in timings and kiln_ms:
            # The same cubin through the config overload: the noise floor.
            row["same_config_ms"] = timings[same]["ms"]
    row["default_over_best"] = kiln_ms / row["best_ms"] if kiln_ms and row.get("best_ms") else None
    row["triton_over_kiln"] = triton_ms / kiln_ms if kiln_ms and triton_ms else None
    failures = []
    if row["default_over_best"] is None or row["default_over_best"] > ACCEPT_BEST:
        failures.append("default {} is {} the best config ({})".format(
            fmt(kiln_ms), fmt_ratio(row["default_over_best"]), row.get("best_config")))
    if row["triton_over_kiln"] is None or row["triton_over_kiln"] < ACCEPT_TRITON:
        failures.append("Triton/Kiln = {} < {}".format(fmt_ratio(row["triton_over_kiln"]), ACCEPT_TRITON))
    for name, e in row["errors"].items():
        failures.append("{}: {}".format(name, e))
    for name, c in row["checks"].items():
        if not c["ok"]:
            failures.append("{}: output differs from PyTorch's (max abs err {:.3g})".format(
                name, c["max_abs_err"]))
    row["failures"] = failures
    print_row(row)
    return row


def matmul_rows(torch, timer, kiln, mod, matmul_module, on_row):
    configs = kiln.configs(MATMUL)
    stream = torch.cuda.current_stream().cuda_stream
    for s in spec_shapes("matmul_spec.json"):
        M, N, K = s["M"], s["N"], s["K"]

        def make_calls():
            a, b, ref = matmul_module.make_inputs(torch, "fp16", M, N, K)
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            grid = lambda meta: (triton_cdiv(M, meta["BLOCK_SIZE_M"]) * triton_cdiv(N, meta["BLOCK_SIZE_N"]),)

            def triton_call():
                mod.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                        c.stride(0), c.stride(1), ACTIVATION="")

            return (triton_call, lambda p: kiln.matmul(p, a, b, c, stream), c, ref, 1e-2, 0.0,
                    mod.matmul_kernel)

        on_row(compare_shape(torch, timer, kiln, MATMUL, [M, N, K], "M={} N={} K={}".format(M, N, K),
                             configs, make_calls))
        torch.cuda.empty_cache()


def layernorm_rows(torch, timer, kiln, ln, on_row):
    configs = kiln.configs(LAYERNORM)
    stream = torch.cuda.current_stream().cuda_stream
    eps = 1e-5
    for s in spec_shapes("layernorm_spec.json"):
        M, N = s["M"], s["N"]

        def make_calls():
            gen = torch.Generator(device="cuda").manual_seed(0)
            x = torch.randn((M, N), device="cuda", generator=gen).to(torch.float16)
            w = torch.rand((N,), device="cuda", generator=gen).to(torch.float16)
            b = torch.randn((N,), device="cuda", generator=gen).to(torch.float16)
            y = torch.empty_like(x)
            mean = torch.empty((M,), device="cuda", dtype=torch.float32)
            rstd = torch.empty((M,), device="cuda", dtype=torch.float32)
            ref = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), eps)

            def triton_call():
                ln.layernorm_kernel[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, eps)

            return (triton_call, lambda p: kiln.layernorm(p, x, y, w, b, mean, rstd, eps, stream), y, ref,
                    2e-2, 1e-2, ln.layernorm_kernel)

        on_row(compare_shape(torch, timer, kiln, LAYERNORM, [N], "M={} N={}".format(M, N), configs,
                             make_calls))
        torch.cuda.empty_cache()


def triton_cdiv(a, b):
    return -(-a // b)


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def fmt(ms):
    return "-" if ms is None else "{:.4f}".format(ms)


def fmt_ratio(r):
    return "-" if r is None else "{:.3f}".format(r)


def short(config):
    if not config:
        return "-"
    values = dict(part.split("=", 1) for part in config.split(", "))
    if "BLOCK_SIZE_M" in values:
        return "{}x{}x{} w{} s{}".format(values["BLOCK_SIZE_M"], values["BLOCK_SIZE_N"], values["BLOCK_SIZE_K"],
                                         values.get("num_warps", "?"), values.get("num_stages", "?"))
    return "BLOCK={} w{}".format(values.get("BLOCK", "?"), values.get("num_warps", "?"))


def noise(row):
    t = row.get("timings", {}).get("kiln")
    if not t or not t["round_medians_ms"]:
        return None
    return (max(t["round_medians_ms"]) - min(t["round_medians_ms"])) / t["ms"]


HEADER = ("| kernel | shape | Kiln default ms | its config | best Kiln config ms | best config | default/best "
          "| Triton ms | Triton's config | Triton/Kiln | same config ms | rounds spread | ok |")


def table_line(row):
    same = row.get("same_config_ms")
    spread = noise(row)
    return "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
        row["kernel"], row["shape"], fmt(row.get("kiln_ms")), short(row.get("kiln_config")),
        fmt(row.get("best_ms")), short(row.get("best_config")), fmt_ratio(row.get("default_over_best")),
        fmt(row.get("triton_ms")), short(row.get("triton_config")), fmt_ratio(row.get("triton_over_kiln")),
        fmt(same), "-" if spread is None else "{:.1%}".format(spread), "yes" if not row["failures"] else "**no**")


def print_row(row):
    print("{:<17} {:<20} kiln {:>8} ({:<16}) best {:>8} ({:<16}) def/best {:>6}  triton {:>8} ({:<16}) "
          "triton/kiln {:>6}  {}".format(
              row["kernel"], row["shape"], fmt(row.get("kiln_ms")), short(row.get("kiln_config")),
              fmt(row.get("best_ms")), short(row.get("best_config")), fmt_ratio(row.get("default_over_best")),
              fmt(row.get("triton_ms")), short(row.get("triton_config")), fmt_ratio(row.get("triton_over_kiln")),
              "ok" if not row["failures"] else "NOT MET: " + "; ".join(row["failures"])), flush=True)


def markdown(results):
    lines = ["# Offline autotuning: Kiln's tuned launchers beside Triton's autotuner ({})".format(results["date"]),
             "",
             "- device: {} (driver {}); torch {}, triton {}".format(
                 results["device"], results.get("driver"), results["torch"], results["triton"]),
             "- command: `{}`".format(results["command"]),
             "- matmul: upstream's tutorial 03, unchanged (`{}`, sha256 {}), fp16, ACTIVATION=\"\", "
             "Kiln ARCHS sm_90a, its {} CUDA configs ({} compiled for sm_90a)".format(
                 results["tutorial"], results["tutorial_sha256"][:8] + "…", results["tutorial_configs"],
                 len(results["kiln_configs"]["matmul_kernel"])),
             "- layer norm: `bench/kernels/layernorm_autotuned.py`, {} configs".format(
                 len(results["kiln_configs"]["layernorm_kernel"])),
             "- Kiln's default overload chose from: {}".format("; ".join(
                 "{}: {}".format(k, v) for k, v in results["kiln_choice_source"].items())),
             "- timing: {}".format(results["timing"]),
             "- acceptance per shape: default/best <= {} and Triton/Kiln >= {}: **{}**".format(
                 ACCEPT_BEST, ACCEPT_TRITON, "met" if results["accepted"] else "NOT met"),
             "", HEADER, "|" + "---|" * 13]
    lines += [table_line(r) for r in results["rows"]]
    failures = [(r["kernel"], r["shape"], f) for r in results["rows"] for f in r["failures"]]
    if failures:
        lines += ["", "Not met:", ""] + ["- {} {}: {}".format(*f) for f in failures]
    lines += ["", "Columns: *same config ms* is the default overload's config launched through the config "
              "overload in the same loop (the two differ by noise and the launcher's lookup only); *rounds "
              "spread* is (max - min) / median of the default's medians over five consecutive rounds of "
              "repetitions."]
    for name, text in results.get("tuner_summaries", {}).items():
        lines += ["", "## {}".format(name), "", "```", text.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def driver_version():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              stdout=subprocess.PIPE, text=True, check=False).stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="libkiln_tune_bench.so (bench/tune_matmul.sh build)")
    parser.add_argument("--tutorial", required=True, help="upstream's 03-matrix-multiplication.py, unchanged")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--runtime-tuning-without-table", action="store_true",
                        help="where no embedded table covers this GPU, let the default overload measure on its "
                             "first call for each key (run-time tuning) instead of running the first config")
    parser.add_argument("--quick", action="store_true", help="5 ms of warm-up and 20 ms of repetitions")
    parser.add_argument("--kernel", choices=["matmul", "layernorm"], help="only this kernel")
    parser.add_argument("--no-precompile", action="store_true",
                        help="let Triton's autotuner compile the tutorial's configs one by one")
    parser.add_argument("--tuner-summary", action="append", default=[], metavar="FILE",
                        help="a tuner's summary (stdout) to append to results.md")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    import torch
    import triton
    import matmul as matmul_module  # bench/matmul.py: the tutorial loader and inputs

    torch.backends.cuda.matmul.allow_tf32 = False
    kiln = Kiln(args.lib)
    warmup_ms, rep_ms = (5, 20) if args.quick else (25, 100)
    timer = Timer(torch, warmup_ms, rep_ms, max_reps=1000)
    with open(args.tutorial, "rb") as f:
        tutorial_sha = hashlib.sha256(f.read()).hexdigest()
    mod = matmul_module.load_tutorial(args.tutorial)
    ln = load_module(os.path.join(HERE, "kernels", "layernorm_autotuned.py"), "kiln_tune_layernorm_autotuned")
    results = {
        "date": datetime.date.today().isoformat(),
        "device": torch.cuda.get_device_name(),
        "driver": driver_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "command": " ".join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:]),
        "tutorial": os.path.basename(args.tutorial),
        "tutorial_sha256": tutorial_sha,
        "tutorial_configs": len(mod.matmul_kernel.configs),
        "kiln_configs": {"matmul_kernel": kiln.configs(MATMUL), "layernorm_kernel": kiln.configs(LAYERNORM)},
        "kiln_choice_source": {},
        "timing": ("do_bench's method (warm-up {} ms; {} ms of repetitions, at most 1000; a 256 MiB L2 flush "
                   "before each timed launch; CUDA events around each launch; median), every candidate of a "
                   "shape interleaved, rotated each repetition, in one process").format(warmup_ms, rep_ms),
        "accept": {"default_over_best_max": ACCEPT_BEST, "triton_over_kiln_min": ACCEPT_TRITON},
        "rows": [],
    }
    for kernel, name in ((MATMUL, "matmul_kernel"), (LAYERNORM, "layernorm_kernel")):
        covered, tables = kiln.prepare(kernel, args.runtime_tuning_without_table)
        if covered:
            source = "embedded table ({})".format(tables)
        elif args.runtime_tuning_without_table:
            source = "run-time tuning (no embedded table covers this GPU; embedded: {})".format(tables or "none")
        else:
            source = "the first config (no embedded table covers this GPU; embedded: {})".format(tables or "none")
        results["kiln_choice_source"][name] = source
        print("kiln {}: {}".format(name, source), flush=True)
    if tutorial_sha != "f88a9506694c58d483ad3cdb4aa672c23df0300803bcfaca13b9396184825008":
        print("tune_compare: note: the tutorial is not the version measured so far (sha256 {})".format(tutorial_sha))

    def save():
        results["accepted"] = bool(results["rows"]) and not any(r["failures"] for r in results["rows"])
        results["tuner_summaries"] = {}
        for path in args.tuner_summary:
            if os.path.exists(path):
                with open(path) as f:
                    results["tuner_summaries"][os.path.basename(path)] = f.read()
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        with open(os.path.join(args.out, "results.md"), "w") as f:
            f.write(markdown(results))

    def on_row(row):  # saved as it comes, so that a run cut short still returns what it measured
        results["rows"].append(row)
        save()

    if args.kernel in (None, "matmul"):
        if not args.no_precompile:
            matmul_module.precompile_triton(types.SimpleNamespace(tutorial=args.tutorial, dtypes=["fp16"]), mod)
        matmul_rows(torch, timer, kiln, mod, matmul_module, on_row)
    if args.kernel in (None, "layernorm"):
        layernorm_rows(torch, timer, kiln, ln, on_row)
    save()
    print()
    print("\n".join([HEADER, "|" + "---|" * 13] + [table_line(r) for r in results["rows"]]))
    print()
    print("acceptance: {}".format("met" if results["accepted"] else "NOT met"))
    print("wrote {} and results.md".format(os.path.join(args.out, "results.json")))
    return 0 if results["accepted"] else 1


if __name__ == "__main__":
    sys.exit(main())
