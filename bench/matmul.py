"""Matmul acceptance bench: upstream Triton's tutorial 03 (matmul_kernel, the
file unchanged) under upstream Triton 3.6's JIT, under Kiln's ahead-of-time
builds of the same file, and cuBLAS, on one GPU in one process.

Run on the GPU machine (bench/README.md, "Matmul"), from the repository root:

    python3 bench/matmul.py --build .devbuild-matmul --out OUT_DIR [--sanitize]

--build is what bench/pack_matmul.sh packed: libkiln_matmul_bench.so (a C
interface to the launchers kiln-codegen generated for the tutorial, see
bench/matmul_bridge.cc), its libraries in lib/, and configs/, each compiled
directory's configs.txt and config<K>.error files (a config kilnc rejected).
Two Kiln builds of the kernel run: ARCHS sm_90a (the wgmma path) and ARCHS
sm_90 (the mma.sync path), both on the H100.

For fp16, bf16 and fp8 the tutorial's way (B transposed, as the tutorial does
it; fp8e4nv = float8_e4m3fn, the acceptance criterion's, and, when the build
has it, fp8e5 = float8_e5m2, which the tutorial itself uses), at
M = N = K = 1024, 4096, 8192, three configs: 128x256x64 (GROUP_SIZE_M 8,
num_warps 8, num_stages 3), 128x128x64 (num_warps 4, num_stages 4) and the
config Triton's autotuner picks for that dtype and size on this GPU (the
tutorial's own @triton.autotune, run first). Each config runs under Triton
(the tutorial's kernel with the config forced: matmul_kernel.fn with explicit
meta-parameters), Kiln sm_90a and Kiln sm_90 (through the generated launcher);
cuBLAS is torch.matmul (torch._scaled_mm for fp8e4nv; cuBLAS has no
e5m2 x e5m2 product). Before timing, every output is checked as the tutorial
does, torch.allclose(out, torch_out, atol=1e-2, rtol=0) (atol=0.125 for fp8,
as the tutorial), with torch_out = torch.matmul of the same inputs in fp32
(TF32 off) and the inputs scaled so that C's entries are about 1 at every K;
Kiln is also checked at (M, N, K) = (1000, 1001, 999), (512, 512, 16) and
(256, 256, 8200). Timing is triton.testing.do_bench (median); TFLOP/s counts
2 M N K. A config a build lacks (kilnc rejected it: its config<K>.error) or a
launch that fails is an error cell, never a crash.

Writes OUT_DIR/results.json (every figure, the checks, the variants Kiln ran,
the device and versions) and OUT_DIR/results.md (the tables). --sanitize
then runs compute-sanitizer memcheck, racecheck and synccheck on a small
matmul through the launcher for both builds (one child process per tool,
`--sanitize-child`) and adds their summaries.
"""
import argparse
import ast
import ctypes
import datetime
import json
import os
import re
import subprocess
import sys
import time
import types

START = time.time()
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = os.path.join(REPO, ".upstream", "03-matrix-multiplication.py")

SIZES = [1024, 4096, 8192]
ODD_SHAPES = [(1000, 1001, 999), (512, 512, 16), (256, 256, 8200)]
DTYPES = ["fp16", "bf16", "fp8e5", "fp8e4nv"]
BUILDS = [("sm_90a", 0), ("sm_90", 1)]
DTYPE_INDEX = {"fp16": 0, "bf16": 1, "fp8e5": 2, "fp8e4nv": 3}
FIXED = [
    ("128x256x64", dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                        num_warps=8, num_stages=3)),
    ("128x128x64", dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                        num_warps=4, num_stages=4)),
]
META = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]


def config_name(cfg):
    return "{}x{}x{} g{} w{} s{}".format(*(cfg[k] for k in META))


def fragment(cfg):
    """The config as kilnc's configs.txt writes it, keys in any order."""
    return frozenset("{}={}".format(k, cfg[k]) for k in META)


# --------------------------------------------------------------------------
# The tutorial, and the inputs
# --------------------------------------------------------------------------

def load_tutorial(path, names=(), module_name="kiln_bench_tutorial03"):
    """The tutorial as a module, without its top-level test and benchmark code:
    its imports, its functions (kernels and the host helpers the autotune
    decorator calls, not the perf_report-decorated benchmark), the
    module-level assignments before the kernel (DEVICE) and those to `names`
    wherever they are (tutorial 08's tma_configs, which its second kernel's
    decorator reads). The code objects keep the file's name and line numbers,
    so Triton reads the kernel's source from the file itself."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    keep, seen_kernel = [], False
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep.append(node)
        elif isinstance(node, ast.FunctionDef):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if all(d.startswith(("triton.jit", "triton.autotune", "triton.heuristics")) for d in decorators):
                keep.append(node)
            seen_kernel = seen_kernel or any(d.startswith("triton.jit") for d in decorators)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not seen_kernel or any(isinstance(t, ast.Name) and t.id in names for t in targets):
                keep.append(node)
    module = types.ModuleType(module_name)
    module.__file__ = path
    sys.modules[module.__name__] = module  # Triton's JIT looks the module up by name.
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), module.__dict__)
    return module


def make_inputs(torch, dtype, M, N, K, seed=0, device="cuda", b_transposed=False):
    """A (M x K) and B (K x N) as the tutorial makes them (fp8, or any dtype
    with b_transposed: B transposed, i.e. stored N x K), scaled so that C's
    entries are about 1 at every K; and torch_out, their product in fp32."""
    gen = torch.Generator(device=device).manual_seed(seed)
    if dtype in ("fp16", "bf16", "fp32"):
        # The tutorial's rand - 0.5, scaled: std(C) = sqrt(K) s^2 / 12 = 1.
        # fp32 operands: tl.dot's default input_precision, tf32.
        s = (12.0 / K ** 0.5) ** 0.5
        t = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
        a = ((torch.rand((M, K), device=device, generator=gen) - 0.5) * s).to(t)
        b = ((torch.rand((K, N), device=device, generator=gen) - 0.5) * s).to(t)
        if b_transposed:
            b = b.T.contiguous().T
    else:
        # The tutorial's randn, B pre-transposed ("b = b.T" then the cast keeps
        # the transposed strides): std(C) = sqrt(K) s^2 = 1.
        s = K ** -0.25
        t = torch.float8_e5m2 if dtype == "fp8e5" else torch.float8_e4m3fn
        a = (torch.randn((M, K), device=device, generator=gen) * s).to(t)
        b = (torch.randn((N, K), device=device, generator=gen) * s).T.to(t)
    torch_out = torch.matmul(a.float(), b.float())
    return a, b, torch_out


def atol(dtype):
    return 0.125 if dtype.startswith("fp8") else 1e-2


# --------------------------------------------------------------------------
# The three providers
# --------------------------------------------------------------------------

class Kiln:
    """Kiln's generated launchers, through bench/matmul_bridge.cc."""

    def __init__(self, build_dir):
        self.lib = ctypes.CDLL(os.path.join(build_dir, "libkiln_matmul_bench.so"))
        self.lib.kiln_matmul.restype = ctypes.c_int
        self.lib.kiln_matmul.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32), ctypes.c_uint64,
            ctypes.c_char_p, ctypes.c_int]
        self.lib.kiln_matmul_last.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.kiln_matmul_describe.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.kiln_matmul_observe()
        self.error = ctypes.create_string_buffer(4096)
        self.build_errors = read_build_errors(os.path.join(build_dir, "configs"))

    def describe(self, build):
        out = ctypes.create_string_buffer(1 << 20)
        self.lib.kiln_matmul_describe(build, out, len(out))
        return out.value.decode()

    def launcher(self, build, dtype, a, b, c, cfg, stream):
        """A function that launches once and returns None, or raises with the
        launcher's status."""
        M, K = a.shape
        N = b.shape[1]
        sizes = (ctypes.c_int32 * 9)(M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                     c.stride(0), c.stride(1))
        meta = (ctypes.c_int32 * 6)(*(cfg[k] for k in META))
        args = (build, DTYPE_INDEX[dtype], a.data_ptr(), b.data_ptr(), c.data_ptr(), sizes, meta,
                stream, self.error, len(self.error))
        fn = self.lib.kiln_matmul

        def launch():
            if fn(*args):
                raise RuntimeError(self.error.value.decode())
        return launch

    def last_variant(self):
        out = ctypes.create_string_buffer(2048)
        self.lib.kiln_matmul_last(out, len(out))
        try:
            return json.loads(out.value.decode()) if out.value else None
        except ValueError:
            return {"raw": out.value.decode(errors="replace")}

    def rejected(self, arch, dtype, cfg):
        """kilnc's diagnostics if it rejected this config for this build."""
        return self.build_errors.get((arch, dtype, fragment(cfg)))


def read_build_errors(configs_dir):
    """(arch, dtype, config) -> the first lines of config<K>.error, for every
    config a build directory lacks. Directories are
    configs/<arch>/<dtype>_<general|aligned>/ (bench/pack_matmul.sh)."""
    errors = {}
    if not os.path.isdir(configs_dir):
        return errors
    for arch in os.listdir(configs_dir):
        for name in os.listdir(os.path.join(configs_dir, arch)):
            directory = os.path.join(configs_dir, arch, name)
            dtype = name.rsplit("_", 1)[0]
            index = os.path.join(directory, "configs.txt")
            if not os.path.exists(index):
                continue
            for line in open(index):
                key, _, text = line.strip().partition(": ")
                error_file = os.path.join(directory, key + ".error")
                if not os.path.exists(error_file):
                    continue
                cfg = dict(item.split("=") for item in text.split(", "))
                frag = frozenset("{}={}".format(k, cfg.get(k)) for k in META)
                lines = [l for l in open(error_file).read().splitlines() if "error" in l]
                message = "no cubin in this build ({} variant): {}".format(
                    name.rsplit("_", 1)[1], (lines or ["(no message)"])[0].strip())
                errors.setdefault((arch, dtype, frag), message)
    return errors


def triton_launcher(mod, a, b, c, cfg):
    M, K = a.shape
    N = b.shape[1]
    grid = (-(-M // cfg["BLOCK_SIZE_M"]) * -(-N // cfg["BLOCK_SIZE_N"]),)
    fn = mod.matmul_kernel.fn  # the JITFunction under the autotuner
    kwargs = dict(cfg, ACTIVATION="")
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return lambda: fn[grid](a, b, c, M, N, K, *strides, **kwargs)


def cublas_launcher(torch, dtype, a, b):
    if dtype in ("fp16", "bf16"):
        return lambda: torch.matmul(a, b)
    if dtype == "fp8e5":
        return None  # cuBLAS multiplies no e5m2 by e5m2
    one = torch.ones((), device="cuda")
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float16)


def autotuned_pick(mod, torch, a, b):
    """Runs the tutorial's autotuned kernel (its own config list) and returns
    the config Triton picked, with the autotuning time."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    start = time.time()
    grid = lambda META: (-(-M // META["BLOCK_SIZE_M"]) * -(-N // META["BLOCK_SIZE_N"]),)
    mod.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1), ACTIVATION="")
    torch.cuda.synchronize()
    best = mod.matmul_kernel.best_config
    cfg = {k: best.kwargs[k] for k in META[:4]}
    cfg.update(num_warps=best.num_warps, num_stages=best.num_stages)
    return cfg, time.time() - start


def precompile_triton(args, mod):
    """Compiles the tutorial's configs for each dtype in parallel processes
    (JITFunction.warmup), so that the autotuner finds them in Triton's cache
    instead of compiling 16 configs one after another. Best effort."""
    import concurrent.futures
    import multiprocessing
    jobs = [(args.tutorial, dtype, {k: getattr(c, "kwargs", {}).get(k) for k in META[:4]}
             | {"num_warps": c.num_warps, "num_stages": c.num_stages})
            for dtype in args.dtypes for c in mod.matmul_kernel.configs]
    start = time.time()
    failures = 0
    try:
        ctx = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 4),
                                                    mp_context=ctx) as pool:
            for ok in pool.map(_warmup_one, jobs):
                failures += not ok
    except Exception as e:  # noqa: BLE001 - the autotuner compiles what this did not
        print("precompile: skipped ({})".format(e), flush=True)
    print("precompile: {} Triton compiles in {:.1f} s ({} failed)".format(
        len(jobs), time.time() - start, failures), flush=True)


def _warmup_one(job):
    tutorial, dtype, cfg = job
    try:
        import torch
        mod = load_tutorial(tutorial)
        a, b, _ = make_inputs(torch, dtype, 1024, 1024, 1024)
        c = torch.empty((1024, 1024), device="cuda", dtype=torch.float16)
        mod.matmul_kernel.fn.warmup(a, b, c, 1024, 1024, 1024, a.stride(0), a.stride(1), b.stride(0),
                                    b.stride(1), c.stride(0), c.stride(1), ACTIVATION="", grid=(1,),
                                    **cfg)
        return True
    except Exception:  # noqa: BLE001
        return False


# --------------------------------------------------------------------------
# Checking and timing
# --------------------------------------------------------------------------

def check(torch, run, c, torch_out, dtype):
    """Runs once and checks as the tutorial does. Returns (ok, max_abs_err)."""
    c.fill_(float("nan"))
    run()
    torch.cuda.synchronize()
    out = c.float()
    ok = bool(torch.allclose(out, torch_out, atol=atol(dtype), rtol=0))
    err = float((out - torch_out).abs().nan_to_num(float("inf")).max())
    return ok, err


def time_ms(run):
    from triton.testing import do_bench
    ms = do_bench(run, quantiles=[0.5, 0.2, 0.8])
    return ms[0] if isinstance(ms, (list, tuple)) else ms


def measure(torch, name, make_run, c, torch_out, dtype, flops, timed=True):
    """One cell: check, then time. Errors become the cell's error."""
    cell = {"provider": name}
    try:
        run = make_run()
        ok, err = check(torch, run, c, torch_out, dtype)
        cell.update(correct=ok, max_abs_err=err)
        if ok and timed:
            ms = time_ms(run)
            cell.update(ms=ms, tflops=flops / (ms * 1e-3) / 1e12)
    except Exception as e:  # noqa: BLE001 - a failing provider is a table cell
        message = str(e).strip().splitlines()
        cell["error"] = "{}: {}".format(type(e).__name__, message[0] if message else "")[:400]
    return cell


def kiln_cell(torch, kiln, arch, build, dtype, a, b, c, cfg, torch_out, flops, timed=True):
    rejected = kiln.rejected(arch, dtype, cfg)
    stream = torch.cuda.current_stream().cuda_stream
    cell = measure(torch, "kiln_" + arch, lambda: kiln.launcher(build, dtype, a, b, c, cfg, stream),
                   c, torch_out, dtype, flops, timed)
    if "error" in cell and rejected:
        cell["error"] = rejected
    elif "error" not in cell:
        cell["variant"] = kiln.last_variant()
    return cell


def write_results(results, out_dir):
    """Writes what there is so far, so that a run cut short still returns it."""
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    if results.get("rows") or results.get("odd_shapes"):
        with open(os.path.join(out_dir, "results.md"), "w") as f:
            f.write(markdown(results))


def run_bench(args):
    import torch
    import triton

    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.cuda.get_device_name()
    mod = load_tutorial(args.tutorial)
    kiln = Kiln(args.build)
    results = {
        "date": datetime.date.today().isoformat(),
        "device": device,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "tutorial": os.path.relpath(args.tutorial, REPO),
        "tutorial_sha256": __import__("hashlib").sha256(open(args.tutorial, "rb").read()).hexdigest(),
        "kiln_builds": {arch: kiln.describe(build).split("\n", 1)[0] for arch, build in BUILDS},
        "rows": [], "odd_shapes": [], "autotune": [],
    }
    if not args.no_precompile:
        precompile_triton(args, mod)

    # Triton and cuBLAS first, then Kiln: a Kiln kernel that faults loses the
    # CUDA context, and with it only the cells after it.
    rows = {}
    for dtype in args.dtypes:
        for size in args.sizes:
            M = N = K = size
            flops = 2.0 * M * N * K
            a, b, torch_out = make_inputs(torch, dtype, M, N, K)
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            pick, seconds = autotuned_pick(mod, torch, a, b)
            results["autotune"].append({"dtype": dtype, "size": size, "pick": pick,
                                        "seconds": round(seconds, 1)})
            configs = list(FIXED)
            same = [n for n, cfg in FIXED if cfg == pick]
            if same:
                configs = [(n + " (autotune pick)" if n == same[0] else n, cfg) for n, cfg in FIXED]
            else:
                configs.append(("autotune pick " + config_name(pick), pick))
            cublas = cublas_launcher(torch, dtype, a, b)
            cublas_cell = {"provider": "cublas", "error": "no cuBLAS e5m2 x e5m2 product"}
            if cublas is not None:
                try:
                    ms = time_ms(cublas)
                    cublas_cell = {"provider": "cublas", "ms": ms, "tflops": flops / (ms * 1e-3) / 1e12}
                except Exception as e:  # noqa: BLE001
                    cublas_cell = {"provider": "cublas", "error": str(e).splitlines()[0][:300]}
            for name, cfg in configs:
                row = {"dtype": dtype, "M": M, "N": N, "K": K, "config": name, "meta": cfg,
                       "cublas": cublas_cell}
                row["triton"] = measure(torch, "triton", lambda: triton_launcher(mod, a, b, c, cfg), c,
                                        torch_out, dtype, flops)
                rows.setdefault((dtype, size), []).append(row)
                results["rows"].append(row)
            del a, b, c, torch_out
            torch.cuda.empty_cache()

    lost = []  # the first failure that took the CUDA context with it

    def kiln_or_skip(*cell_args, **kw):
        if lost:
            return {"provider": "kiln", "error": "not run: the CUDA context was lost at " + lost[0]}
        cell = kiln_cell(*cell_args, **kw)
        if "error" in cell:
            try:
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                lost.append("{}: {}".format(cell["error"][:200], str(e).splitlines()[0][:200]))
        return cell

    for dtype in args.dtypes:
        for size in args.sizes:
            M = N = K = size
            flops = 2.0 * M * N * K
            a, b, torch_out = make_inputs(torch, dtype, M, N, K)
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            for row in rows[(dtype, size)]:
                for arch, build in BUILDS:
                    row["kiln_" + arch] = kiln_or_skip(torch, kiln, arch, build, dtype, a, b, c,
                                                       row["meta"], torch_out, flops)
                print(summary_line(row), flush=True)
                write_results(results, args.out)
            del a, b, c, torch_out
            torch.cuda.empty_cache()

    # Correctness at shapes that are not multiples of the tiles: the fixed
    # configs and this dtype's autotune picks.
    for dtype in args.dtypes:
        configs = [cfg for _, cfg in FIXED]
        for p in results["autotune"]:
            if p["dtype"] == dtype and p["pick"] not in configs:
                configs.append(p["pick"])
        for M, N, K in ODD_SHAPES:
            a, b, torch_out = make_inputs(torch, dtype, M, N, K, seed=1)
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            for cfg in configs:
                entry = {"dtype": dtype, "M": M, "N": N, "K": K, "config": config_name(cfg)}
                for arch, build in BUILDS:
                    entry["kiln_" + arch] = kiln_or_skip(torch, kiln, arch, build, dtype, a, b, c, cfg,
                                                         torch_out, 0, timed=False)
                results["odd_shapes"].append(entry)
                print("odd {} {}x{}x{} {}: {}".format(dtype, M, N, K, config_name(cfg), ", ".join(
                    "{} {}".format(p, verdict(entry[p])) for p in ("kiln_sm_90a", "kiln_sm_90"))),
                    flush=True)
        write_results(results, args.out)
    return results


def verdict(cell):
    if "error" in cell:
        return "ERROR"
    return "ok" if cell.get("correct") else "WRONG (max err {:.3g})".format(cell.get("max_abs_err", 0))


def summary_line(row):
    def fig(cell):
        if "error" in cell:
            return "ERROR"
        if "tflops" in cell:
            return "{:.1f}".format(cell["tflops"])
        return verdict(cell)
    return "{dtype} {M}^3 {config}: triton {t} | kiln sm_90a {ka} | kiln sm_90 {k9} | cublas {cb}".format(
        t=fig(row["triton"]), ka=fig(row["kiln_sm_90a"]), k9=fig(row["kiln_sm_90"]),
        cb=fig(row["cublas"]), **row)


# --------------------------------------------------------------------------
# compute-sanitizer
# --------------------------------------------------------------------------

SANITIZE_SHAPE = (200, 136, 136)  # two tiles of 128 in M, ragged everywhere


def sanitize_child(args):
    """Runs the small matmul through the launcher for both builds, each dtype
    and both fixed configs, with the inputs made and the results checked on
    the CPU, so that Kiln's kernels are nearly the only ones the sanitizer
    sees; exits non-zero if an output is wrong."""
    import torch
    kiln = Kiln(args.build)
    M, N, K = SANITIZE_SHAPE
    bad = 0
    stream = torch.cuda.current_stream().cuda_stream
    for dtype in args.dtypes:
        a, b, torch_out = make_inputs(torch, dtype, M, N, K, seed=2, device="cpu")
        a, b = a.cuda(), b.cuda()
        if dtype.startswith("fp8") and b.stride() != (1, K):
            b = b.T.contiguous().T  # keep the tutorial's transposed B
        for name, cfg in FIXED:
            if args.sanitize_config not in (None, name):
                continue
            for arch, build in BUILDS:
                if args.sanitize_build not in (None, arch):
                    continue
                c = torch.full((M, N), float("nan"), dtype=torch.float16).cuda()
                verdict_text = "ok"
                try:
                    kiln.launcher(build, dtype, a, b, c, cfg, stream)()
                    torch.cuda.synchronize()
                    out = c.cpu().float()
                    if not torch.allclose(out, torch_out, atol=atol(dtype), rtol=0):
                        verdict_text = "WRONG (max err {:.3g})".format(
                            float((out - torch_out).abs().nan_to_num(float("inf")).max()))
                except Exception as e:  # noqa: BLE001
                    rejected = kiln.rejected(arch, dtype, cfg)
                    verdict_text = rejected or "ERROR " + str(e).splitlines()[0][:200]
                print("sanitize-child {} {} {}: {}".format(dtype, name, arch, verdict_text), flush=True)
                bad += verdict_text != "ok" and not verdict_text.startswith("no cubin")
    sys.exit(1 if bad else 0)


def run_sanitizer(args, out_dir):
    """Each tool on each (build, config), one child process each, so that a
    finding names the build and config it came from. Logs go to
    OUT_DIR/sanitize_<tool>.log (appended, one section per child)."""
    tool_path = shutil_which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    summaries = []
    for tool in ("memcheck", "racecheck", "synccheck"):
        log = os.path.join(out_dir, "sanitize_{}.log".format(tool))
        if os.path.exists(log):
            os.remove(log)
        for arch, build in BUILDS:
            for name, cfg in FIXED:
                entry = {"tool": tool, "build": arch, "config": name, "shape": list(SANITIZE_SHAPE),
                         "dtypes": args.sanitize_dtypes}
                summaries.append(entry)
                left = args.time_budget - (time.time() - START)
                if left < 30:
                    entry.update(exit="not run", summary="out of time (--time-budget)")
                    continue
                part = log + ".part"
                cmd = [tool_path, "--tool", tool, "--error-exitcode", "9", "--print-limit", "10",
                       "--log-file", part, sys.executable, os.path.abspath(__file__),
                       "--sanitize-child", "--sanitize-build", arch, "--sanitize-config", name,
                       "--build", args.build, "--tutorial", args.tutorial,
                       "--dtypes", *args.sanitize_dtypes]
                if tool == "racecheck":
                    cmd[3:3] = ["--racecheck-report", "hazard"]
                start = time.time()
                try:
                    proc = subprocess.run(cmd, capture_output=True, text=True,
                                          timeout=min(args.sanitize_timeout, left - 10))
                    code, output = proc.returncode, proc.stdout + proc.stderr
                except subprocess.TimeoutExpired as e:
                    code, output = "timeout", (e.stdout or b"").decode(errors="replace")
                except OSError as e:
                    code, output = "not run", str(e)
                text = open(part).read() if os.path.exists(part) else ""
                with open(log, "a") as f:
                    f.write("##### {} {} {}\n{}".format(tool, arch, name, text))
                if os.path.exists(part):
                    os.remove(part)
                summary = re.findall(r"(ERROR SUMMARY: .*|RACECHECK SUMMARY: .*)", text)
                first = re.findall(r"========= (?:Invalid|Race|Barrier|Warning|Error|Program hit).*",
                                   text)
                where = re.findall(r"at (matmul_kernel\+0x[0-9a-f]+)", text)
                wrong = [l for l in output.splitlines()
                         if l.startswith("sanitize-child") and not l.endswith(": ok")]
                entry.update(exit=code, seconds=round(time.time() - start, 1),
                             summary=summary[-1] if summary else None,
                             first_findings=[f.replace("========= ", "") for f in first[:2]],
                             pcs=sorted(set(where))[:4], child_not_ok=wrong[:4])
                print("sanitize {} {} {}: exit {} {}".format(tool, arch, name, code, entry["summary"]),
                      flush=True)
    return summaries


def shutil_which(name):
    import shutil
    return shutil.which(name)


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

def cell_text(cell):
    if cell is None:
        return "-"
    if "error" in cell:
        return "error"
    if "tflops" in cell:
        return "{:.1f}".format(cell["tflops"])
    if cell.get("correct") is False:
        return "WRONG ({:.3g})".format(cell["max_abs_err"])
    return "ok"


def ratio(a, b):
    if a and b and "tflops" in a and "tflops" in b:
        return "{:.3f}".format(a["tflops"] / b["tflops"])
    return "-"


def markdown(results):
    lines = ["# Matmul: upstream tutorial 03 under Triton, Kiln (sm_90a, sm_90) and cuBLAS", "",
             "{} · torch {} · Triton {} · {} (sha256 {}…) · {}".format(
                 results["device"], results["torch"], results["triton"], results["tutorial"],
                 results["tutorial_sha256"][:12], results["date"]), "",
             "TFLOP/s (median of triton.testing.do_bench; 2MNK). Every figure follows a passing check "
             "(torch.allclose(out, fp32 torch_out, atol=1e-2 (fp8: 0.125), rtol=0)). "
             "Kiln sm_90a = the ARCHS sm_90a build (wgmma path), Kiln sm_90 = ARCHS sm_90 (mma.sync); "
             "cuBLAS = torch.matmul (fp8e4nv: torch._scaled_mm).", "",
             "Kiln builds: " + "; ".join("{}: {}".format(k, v) for k, v in
                                         results.get("kiln_builds", {}).items()), "",
             "| dtype | M=N=K | config | Triton | Kiln sm_90a | Kiln sm_90 | cuBLAS | sm_90a/Triton | "
             "sm_90/Triton | Triton/cuBLAS | sm_90a/cuBLAS |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    errors = []
    for row in results["rows"]:
        cells = [row.get(p, {"provider": p, "error": "not run"})
                 for p in ("triton", "kiln_sm_90a", "kiln_sm_90", "cublas")]
        triton_cell, sm90a, sm90, cublas = cells
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            row["dtype"], row["M"], row["config"], *(cell_text(c) for c in cells),
            ratio(sm90a, triton_cell), ratio(sm90, triton_cell), ratio(triton_cell, cublas),
            ratio(sm90a, cublas)))
        for c in cells:
            what = c.get("error") or ("WRONG, max abs error {:.3g}".format(c["max_abs_err"])
                                      if c.get("correct") is False else None)
            if what and c["provider"] != "cublas":
                errors.append("{} {}^3 {} {}: {}".format(row["dtype"], row["M"], row["config"],
                                                         c["provider"], what))
    lines += ["", "Autotune picks (Triton 3.6's autotuner over the tutorial's 16 CUDA configs):", ""]
    for p in results["autotune"]:
        lines.append("- {} {}^3: {} ({} s)".format(p["dtype"], p["size"], config_name(p["pick"]),
                                                  p["seconds"]))
    lines += ["", "## Correctness at ragged shapes (Kiln, through the generated launcher)", "",
              "| dtype | M x N x K | config | Kiln sm_90a | Kiln sm_90 |", "|---|---|---|---|---|"]
    for e in results["odd_shapes"]:
        lines.append("| {} | {}x{}x{} | {} | {} | {} |".format(
            e["dtype"], e["M"], e["N"], e["K"], e["config"], verdict(e["kiln_sm_90a"]),
            verdict(e["kiln_sm_90"])))
        for p in ("kiln_sm_90a", "kiln_sm_90"):
            if "error" in e[p]:
                errors.append("{} {}x{}x{} {} {}: {}".format(e["dtype"], e["M"], e["N"], e["K"],
                                                             e["config"], p, e[p]["error"]))
    variants = {}
    for row in results["rows"]:
        for p in ("kiln_sm_90a", "kiln_sm_90"):
            v = row.get(p, {}).get("variant")
            if v:
                variants[(p, row["dtype"], row["config"].split(" (")[0])] = v
    if variants:
        lines += ["", "## What Kiln ran (the launcher's choice; from the launch observer)", "",
                  "| build | dtype | config | aligned variant | registers | spills | shared bytes |",
                  "|---|---|---|---|---|---|---|"]
        for (p, dtype, name), v in sorted(variants.items()):
            lines.append("| {} | {} | {} | {} | {} | {} | {} |".format(
                p, dtype, name, v.get("aligned"), v.get("registers"), v.get("spills"),
                v.get("shared_bytes")))
    if results.get("sanitize"):
        first = results["sanitize"][0]
        lines += ["", "## compute-sanitizer ({}x{}x{}, {}, through the launcher)".format(
            *first["shape"], ", ".join(first["dtypes"])), "",
            "| tool | build | config | exit | summary | first finding | at |", "|---|---|---|---|---|---|---|"]
        for e in results["sanitize"]:
            lines.append("| {} | {} | {} | {} | {} | {} | {} |".format(
                e["tool"], e["build"], e["config"], e.get("exit"), e.get("summary") or "-",
                "; ".join(e.get("first_findings", [])[:1]) or "-", ", ".join(e.get("pcs", [])) or "-"))
    if errors:
        lines += ["", "## Errors", ""] + ["- " + e for e in errors]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, ".devbuild-matmul"),
                        help="what bench/pack_matmul.sh packed")
    parser.add_argument("--tutorial", default=TUTORIAL, help="upstream's 03-matrix-multiplication.py")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--dtypes", nargs="+", choices=DTYPES,
                        help="default: those the build has (KILN_MATMUL_TYPES)")
    parser.add_argument("--sanitize", action="store_true",
                        help="also run compute-sanitizer memcheck/racecheck/synccheck")
    parser.add_argument("--sanitize-only", action="store_true", help="only the sanitizer runs")
    parser.add_argument("--sanitize-timeout", type=int, default=240, help="seconds per tool")
    parser.add_argument("--sanitize-dtypes", nargs="+", default=["fp16"], choices=DTYPES)
    parser.add_argument("--time-budget", type=float, default=560,
                        help="seconds for the whole run: a sanitizer tool that would start later "
                             "than 30 s before it is skipped (the GPU machine stops a command at 600)")
    parser.add_argument("--sanitize-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sanitize-build", help=argparse.SUPPRESS)
    parser.add_argument("--sanitize-config", help=argparse.SUPPRESS)
    parser.add_argument("--no-precompile", action="store_true",
                        help="let the autotuner compile Triton's configs one by one")
    args = parser.parse_args()
    args.tutorial = os.path.abspath(args.tutorial)
    args.build = os.path.abspath(args.build)
    if not args.dtypes:
        built = set()
        configs = os.path.join(args.build, "configs")
        for arch in os.listdir(configs) if os.path.isdir(configs) else []:
            built |= {name.rsplit("_", 1)[0] for name in os.listdir(os.path.join(configs, arch))}
        args.dtypes = [d for d in DTYPES if d in built] or DTYPES
    if args.sanitize_child:
        sanitize_child(args)
        return
    if not os.path.exists(args.tutorial):
        sys.exit("matmul.py: no {}; fetch it as bench/README.md says".format(args.tutorial))
    os.makedirs(args.out, exist_ok=True)
    results = {"rows": [], "odd_shapes": [], "autotune": []}
    if not args.sanitize_only:
        results = run_bench(args)
    if args.sanitize or args.sanitize_only:
        results["sanitize"] = run_sanitizer(args, args.out)
    results.setdefault("device", "")
    results["seconds"] = round(time.time() - START, 1)
    write_results(results, args.out)
    print(markdown(results))


if __name__ == "__main__":
    main()
