"""Layer norm forward in the tutorial's fused three-loop form (mean loop,
variance loop, normalize loop, the row's mean and 1/std stored):
Kiln's cubins against upstream Triton's JIT on the same source
(bench/kernels/layernorm_stats.py).

Build the cubins here (bench/build_layernorm_stats.sh: kilnc, sm_90a, one per
N, BLOCK = N, num_warps = min(N/256, 8) as the tutorial picks), then on the
GPU machine, from the repository root:

    python3 bench/layernorm_stats.py --cubins .devbuild/layernorm_stats --out OUT_DIR
    python3 bench/layernorm_stats.py --cubins before=DIR1 --cubins after=DIR2 ...

Each cubin is launched through the CUDA driver with ctypes; both sides are
timed by triton.testing.do_bench (L2 flushed before each run, median), in
--rounds rounds that take the providers in turn, so that clock and thermal
drift fall on all of them alike. The figure of a provider is the median of
its rounds, the ratio the median of the per-round ratios to Triton. GB/s
counts 4 bytes per element (x read once, y written once, fp16), as
bench/reductions.py does for layer norm. Every output (y, mean, rstd) is
checked against PyTorch first. --dump DIR writes Triton's PTX and both
sides' SASS (cuobjdump, when it is there) for a comparison.

CUDA events resolve about 0.5 us, a twentieth of the 12 us that N = 1024
takes, so each round reports do_bench's median (as bench/reductions.py does)
and the mean of its samples, which the kernels' random phase against the
timer's ticks makes finer. For times without events (--launches runs each
provider in turn between cudaProfilerStart/Stop, an L2 flush before each):

    ncu --profile-from-start off --csv --print-units base --clock-control none \
        --metrics gpu__time_duration.sum python3 bench/layernorm_stats.py \
        --cubins DIR --rounds 0 --launches 50 --out OUT > ncu.csv
    python3 bench/layernorm_stats.py --cubins DIR --out OUT --ncu-csv ncu.csv

Writes OUT_DIR/layernorm_stats.json; exits non-zero when an output is wrong
or a cubin is missing.
"""
import argparse
import ctypes
import importlib.util
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(REPO, "bench", "kernels", "layernorm_stats.py")
ROWS = 4096
SIZES = [1024, 4096, 8192]
EPS = 1e-5


def warps(n):
    return min(max(n // 256, 1), 8)


def load_kernel():
    spec = importlib.util.spec_from_file_location("kiln_bench_layernorm_stats", KERNEL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's JIT looks the module up by name.
    spec.loader.exec_module(module)
    return module.layernorm_stats_kernel


class Cubin:
    """One kilnc cubin, launched through the driver API."""

    def __init__(self, cuda, path):
        with open(path, "rb") as f:
            image = f.read()
        with open(os.path.splitext(path)[0] + ".json") as f:
            self.meta = json.load(f)
        self.cuda = cuda
        self.module, self.function = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(cuda.cuModuleLoadData(ctypes.byref(self.module), image), "cuModuleLoadData")
        self.check(cuda.cuModuleGetFunction(ctypes.byref(self.function), self.module,
                                            self.meta["entry"].encode()), "cuModuleGetFunction")
        self.path = path

    @staticmethod
    def check(status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed with CUresult {status}")

    def launcher(self, grid, args):
        holders = []
        for value in args:
            if hasattr(value, "data_ptr"):
                holders.append(ctypes.c_uint64(value.data_ptr()))
            elif isinstance(value, float):
                holders.append(ctypes.c_float(value))
            else:
                holders.append(ctypes.c_int32(value))
        pointers = (ctypes.c_void_p * len(holders))(
            *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        threads = 32 * self.meta.get("launch_warps", self.meta["num_warps"])
        shared = self.meta.get("shared_bytes", 0)

        def launch():
            self.check(self.cuda.cuLaunchKernel(self.function, grid, 1, 1, threads, 1, 1, shared,
                                                None, pointers, None), "cuLaunchKernel")
        launch.keep = (holders, pointers)
        return launch


def sass(path):
    try:
        return subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"cuobjdump failed: {e}\n"


def summarize_ncu(opts):
    """Kernel durations from `ncu --csv --metrics gpu__time_duration.sum` of
    a --launches run: launches went size by size, round by round, provider
    by provider, in the order layernorm_stats.json lists."""
    import csv
    with open(os.path.join(opts.out, "layernorm_stats.json")) as f:
        report = json.load(f)
    with open(opts.ncu_csv) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = [r for r in csv.DictReader(lines[start:])
            if r["Metric Name"] == "gpu__time_duration.sum"
            and r["Kernel Name"].startswith("layernorm_stats_kernel")]
    durations = [float(r["Metric Value"].replace(",", "")) for r in rows]
    unit = rows[0]["Metric Unit"] if rows else "?"
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
    durations = [d * scale.get(unit, 1.0) for d in durations]
    k = 0
    for info in report["results"]:
        labels, n = info["labels"], info["N"]
        per = {label: [] for label in labels}
        count = len(durations) // len(report["results"]) // len(labels)
        for _ in range(count):
            for label in labels:
                per[label].append(durations[k])
                k += 1
        tri = statistics.median(per["triton"])
        for label in labels:
            med = statistics.median(per[label])
            print(f"ncu N={n} {label:8} median {med:7.2f} us  mean "
                  f"{statistics.fmean(per[label]):7.2f} us  ({len(per[label])} launches)"
                  f"  {4 * ROWS * n / (med * 1e-6) / 1e9:7.1f} GB/s  x{tri / med:.3f} of Triton")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cubins", action="append", required=True,
                        help="[LABEL=]DIR holding layernorm_stats_<N>.cubin and .json")
    parser.add_argument("--out", default=".")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="*", default=SIZES)
    parser.add_argument("--dump", help="write PTX/SASS of both sides here")
    parser.add_argument("--launches", type=int, default=0,
                        help="then launch each provider this many times in turn between "
                             "cudaProfilerStart/Stop, for `ncu --profile-from-start off`")
    parser.add_argument("--ncu-csv", help="summarize `ncu --csv` output of a --launches run "
                                          "(with its layernorm_stats.json in --out) and exit")
    opts = parser.parse_args()
    if opts.ncu_csv:
        return summarize_ncu(opts)
    os.makedirs(opts.out, exist_ok=True)
    import torch
    import triton
    from triton.testing import do_bench

    cuda = ctypes.CDLL("libcuda.so.1")
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # a current context for the driver calls
    kernel = load_kernel()
    providers = []
    for entry in opts.cubins:
        label, _, directory = entry.rpartition("=")
        providers.append((label or "kiln", directory))

    report = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__,
              "torch": torch.__version__, "rows": ROWS, "rounds": opts.rounds, "results": []}
    failed = False
    for n in opts.sizes:
        gen = torch.Generator(device="cuda").manual_seed(n)
        x = (-2.3 + 0.5 * torch.randn(ROWS, n, device="cuda", generator=gen)).half()
        w = torch.rand(n, device="cuda", generator=gen).half()
        b = torch.rand(n, device="cuda", generator=gen).half()
        ref = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), EPS)
        ref_mean = x.float().mean(1)
        ref_rstd = 1 / torch.sqrt(x.float().var(1, unbiased=False) + EPS)

        runs = {}
        outputs = {}
        # Upstream Triton.
        y = torch.empty_like(x)
        mean = torch.empty(ROWS, device="cuda")
        rstd = torch.empty(ROWS, device="cuda")
        tri = lambda y=y, mean=mean, rstd=rstd: kernel[(ROWS,)](
            x, y, w, b, mean, rstd, x.stride(0), n, EPS, BLOCK=n, num_warps=warps(n))
        compiled = kernel[(ROWS,)](x, y, w, b, mean, rstd, x.stride(0), n, EPS, BLOCK=n,
                                   num_warps=warps(n))
        runs["triton"] = tri
        outputs["triton"] = (y, mean, rstd)
        info = {"N": n, "num_warps": warps(n), "registers": {"triton": compiled.n_regs}}
        if opts.dump:
            os.makedirs(opts.dump, exist_ok=True)
            with open(os.path.join(opts.dump, f"triton_{n}.ptx"), "w") as f:
                f.write(compiled.asm["ptx"])
            path = os.path.join(opts.dump, f"triton_{n}.cubin")
            with open(path, "wb") as f:
                f.write(compiled.asm["cubin"])
            with open(os.path.join(opts.dump, f"sass_{n}.txt"), "w") as f:
                f.write("==== triton\n" + sass(path))
        for label, directory in providers:
            path = os.path.join(directory, f"layernorm_stats_{n}.cubin")
            if not os.path.exists(path):
                print(f"missing {path}", flush=True)
                failed = True
                continue
            cubin = Cubin(cuda, path)
            y = torch.empty_like(x)
            mean = torch.empty(ROWS, device="cuda")
            rstd = torch.empty(ROWS, device="cuda")
            runs[label] = cubin.launcher(ROWS, [x, y, w, b, mean, rstd, x.stride(0), n, EPS])
            outputs[label] = (y, mean, rstd)
            info["registers"][label] = cubin.meta.get("registers")
            if opts.dump:
                with open(os.path.join(opts.dump, f"sass_{n}.txt"), "a") as f:
                    f.write(f"==== {label}\n" + sass(path))
        correct = {}
        for label, (y, mean, rstd) in outputs.items():
            runs[label]()
            torch.cuda.synchronize()
            correct[label] = bool(torch.allclose(y.float(), ref, atol=1e-2, rtol=0)
                                  and torch.allclose(mean, ref_mean, atol=1e-4, rtol=1e-4)
                                  and torch.allclose(rstd, ref_rstd, atol=1e-3, rtol=1e-3))
            failed |= not correct[label]
        info["correct"] = correct

        info["labels"] = list(runs)
        report["results"].append(info)
        if opts.launches:
            flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            for _ in range(opts.launches):
                for run in runs.values():
                    flush.zero_()
                    run()
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
        if opts.rounds == 0:
            print(f"layernorm_stats N={n} correct: {correct}", flush=True)
            continue
        # CUDA events resolve about 0.5 us, 4% of the 12 us that N = 1024
        # takes: each sample is quantized, so beside do_bench's median (what
        # bench/reductions.py reports) the mean of all samples, which the
        # kernels' random phase against the timer's ticks makes finer.
        median = {label: [] for label in runs}
        mean = {label: [] for label in runs}
        for _ in range(opts.rounds):
            for label, run in runs.items():
                times = do_bench(run, return_mode="all")
                median[label].append(statistics.median(times))
                mid = statistics.median(times)
                # The mean without gross outliers (a preempted sample).
                mean[label].append(statistics.fmean(t for t in times if t <= 1.5 * mid))
        gbps = lambda t: 4 * ROWS * n / (t * 1e-3) / 1e9
        info["ms_median"], info["ms_mean"] = median, mean
        for kind, ms in (("median", median), ("mean", mean)):
            info["GBps_" + kind] = {label: gbps(statistics.median(v)) for label, v in ms.items()}
            info["round_ratios_" + kind] = {
                label: [t / k for t, k in zip(ms["triton"], v)]
                for label, v in ms.items() if label != "triton"}
            info["ratio_" + kind] = {label: statistics.median(r) for label, r
                                     in info["round_ratios_" + kind].items()}
        for label in runs:
            line = (f"layernorm_stats N={n} {label:8} regs={info['registers'].get(label)}"
                    + ("" if correct[label] else "  WRONG"))
            for kind in ("median", "mean"):
                line += f"  {kind}: {info['GBps_' + kind][label]:7.1f} GB/s"
                ratio = info["ratio_" + kind].get(label)
                if ratio:
                    line += f" x{ratio:.3f}"
            print(line, flush=True)
        for label in info["ratio_mean"]:
            print(f"  {label} per-round ratios, mean: "
                  + " ".join(f"{r:.3f}" for r in info["round_ratios_mean"][label])
                  + "; median: " + " ".join(f"{r:.3f}" for r in info["round_ratios_median"][label]),
                  flush=True)

    path = os.path.join(opts.out, "layernorm_stats.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"device: {report['device']}, triton {report['triton']}; wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
