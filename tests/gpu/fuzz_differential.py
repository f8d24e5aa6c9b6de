#!/usr/bin/env python3
"""Differential fuzzing on the GPU: generated kernels through Kiln and Triton.

The kernels come from tests/fuzz/kernelgen.py (valid by construction, with
their inputs and comparison rules). Four steps:

  prepare  (here)  N kernels: DEST/src/ID.py and DEST/manifest.json; every
                   kernel gets an sm_90a cubin, a spread-out subset (--subset)
                   an sm_90 one as well, for the GPU sanitizers.
  compile  (here, or on the GPU machine with bench/pack_kilnc.sh's kilnc)
                   kilnc for each missing cubin, --jobs at a time: DEST/cubin/
                   ID.ARCH.{cubin,json}; failures go to DEST/compile.jsonl
                   (any failure on a generated kernel is a finding).
  run      (GPU)   --workers processes, each with its own share: inputs from
                   the case's seed, the Kiln cubin through the CUDA driver
                   (ctypes), the same source through Triton's JIT, every
                   output compared: bitwise when the generator marked it exact
                   (integer and memory ops, and float values computed without
                   rounding), else within the case's tolerance relative to the
                   output's largest magnitude (kernelgen's error estimate x64,
                   from 1e-5 to 0.25). Writes OUT/report.txt (counts, by
                   feature, every failure), OUT/report.json and
                   OUT/repros.tar.gz (for each failure: the source, the case,
                   how to re-run it).
  sanitize (GPU)   compute-sanitizer memcheck (leak check on), racecheck,
                   synccheck and initcheck over the subset's sm_90 and sm_90a
                   cubins, Kiln only (no torch: ctypes + numpy), four tools at
                   a time; OUT/sanitize.txt summarizes, per tool and arch, the
                   errors and the cases they came from.

    python3 tests/gpu/fuzz_differential.py prepare --count 500 --seed 1 --dest .devbuild/fuzzdiff
    python3 tests/gpu/fuzz_differential.py compile --kilnc build/compiler/driver/kilnc --dest .devbuild/fuzzdiff --jobs 2
    python3 tests/gpu/fuzz_differential.py run --dest .devbuild/fuzzdiff --out $OUT [--workers 12] [--filter ID]
    python3 tests/gpu/fuzz_differential.py sanitize --dest .devbuild/fuzzdiff --out $OUT

Statuses: ok, MISMATCH (a Kiln bug until shown otherwise), ERROR (the Kiln
launch failed or crashed), TRITON-ERROR (Triton rejected or crashed on the
kernel: a generator bug, or Triton's), NOT BUILT (kilnc did not compile it:
see compile.jsonl), SKIPPED (not started before --deadline). `run` exits 1
unless every case is ok.
"""

import argparse
import collections
import concurrent.futures
import ctypes
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fuzz"))
STICKY_ERRORS = {700, 701, 702, 709, 710, 714, 715, 716, 717, 718, 719, 720, 999}
SCALAR_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "fp32": ctypes.c_float}
HOPPER = ("sm_90a", "sm_90")


def load_manifest(dest):
    with open(os.path.join(dest, "manifest.json")) as f:
        return json.load(f)


def parse_sig(sig):
    """[(name, type or None, value text)] and the launch options."""
    params, options = [], {}
    for entry in sig.split(", "):
        name, _, value = entry.partition("=")
        if name in ("num_warps", "num_stages"):
            options[name] = int(value)
        elif value.startswith("*") or value.split(":")[0] in SCALAR_CTYPES:
            params.append((name, value.split(":")[0], None))
        else:
            params.append((name, None, value))
    return params, options


# ---------------------------------------------------------------------------
# prepare / compile (no GPU)

def prepare(opts):
    import kernelgen
    os.makedirs(os.path.join(opts.dest, "src"), exist_ok=True)
    cases = []
    step = max(1, opts.count // max(1, opts.subset)) if opts.subset else 0
    for i in range(opts.count):
        seed = opts.seed + i
        case = kernelgen.generate(seed, HOPPER)
        cid = f"f{seed}"
        with open(os.path.join(opts.dest, "src", cid + ".py"), "w") as f:
            f.write(case.pop("source"))
        case["id"] = cid
        case["archs"] = ["sm_90a"] + (["sm_90"] if step and i % step == 0 else [])
        cases.append(case)
    with open(os.path.join(opts.dest, "manifest.json"), "w") as f:
        json.dump(dict(generator="tests/fuzz/kernelgen.py", seed=opts.seed, cases=cases), f, indent=0)
    n_sub = sum(len(c["archs"]) > 1 for c in cases)
    print(f"prepare: {len(cases)} kernels in {opts.dest} ({n_sub} with sm_90 cubins too)")
    return 0


def compile_cases(opts):
    from pipeline_fuzz import classify, cpu_limit, error_key
    manifest = load_manifest(opts.dest)
    os.makedirs(os.path.join(opts.dest, "cubin"), exist_ok=True)
    jobs = []
    for case in manifest["cases"]:
        for arch in case["archs"]:
            cubin = os.path.join(opts.dest, "cubin", f"{case['id']}.{arch}.cubin")
            if not os.path.exists(cubin):
                jobs.append((case, arch, cubin))

    def one(job):
        case, arch, cubin = job
        cmd = [opts.kilnc, "compile", os.path.join(opts.dest, "src", case["id"] + ".py"), "-n", case["kernel"],
               "-s", case["sig"], "--arch", arch, "-o", cubin + ".tmp",
               "--metadata", cubin[:-len(".cubin")] + ".json"]
        start = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=opts.timeout * 50, errors="replace",
                               preexec_fn=cpu_limit(opts.timeout))
            rc, err, to = p.returncode, p.stderr + p.stdout, p.returncode in (-24, -9)
        except subprocess.TimeoutExpired:
            rc, err, to = -9, "", True
        if rc == 0 and not to:
            os.replace(cubin + ".tmp", cubin)
            return None
        if os.path.exists(cubin + ".tmp"):
            os.remove(cubin + ".tmp")
        cls = classify(rc, err, to)
        return dict(id=case["id"], arch=arch, cls=cls, key=error_key(cls, err), log=err[-4000:],
                    secs=round(time.time() - start, 1), features=case["features"])

    start = time.time()
    failures = []
    # Failures are appended as they come (a compile step cut short keeps them).
    with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool, \
            open(os.path.join(opts.dest, "compile.jsonl"), "a") as log:
        for n, result in enumerate(pool.map(one, jobs), 1):
            if result:
                failures.append(result)
                log.write(json.dumps(result) + "\n")
                log.flush()
                print(f"compile: {result['id']} {result['arch']}: {result['key']}", flush=True)
            if n % 50 == 0:
                print(f"compile: {n}/{len(jobs)} ({time.time() - start:.0f} s)", flush=True)
    print(f"compile: {len(jobs)} cubins in {time.time() - start:.0f} s, {len(failures)} failed "
          f"(findings: {dict(collections.Counter(r['cls'] for r in failures))})")
    return 1 if failures else 0


# ---------------------------------------------------------------------------
# run (GPU): one worker per share of the cases, in a child process.

def cubin_paths(dest, case, arch):
    base = os.path.join(dest, "cubin", f"{case['id']}.{arch}")
    return base + ".cubin", base + ".json"


class CudaError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def launch_cubin(cuda, cubin, meta, case, args, stream=None):
    """Launches case's cubin with args (name -> int pointer or scalar) and
    waits for it."""
    def check(status, what):
        if status != 0:
            raise CudaError(status, f"{what} failed with CUresult {status}")

    with open(cubin, "rb") as f:
        image = f.read()
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
    try:
        check(cuda.cuModuleGetFunction(ctypes.byref(function), module, meta["entry"].encode()),
              "cuModuleGetFunction")
        shared = meta.get("shared_bytes", 0)
        if shared > 48 * 1024:
            check(cuda.cuFuncSetAttribute(function, 8, shared), "cuFuncSetAttribute")
        holders = []
        for p in meta["params"]:
            if p.get("equal_to_1"):
                continue
            value = args[p["name"]]
            if p["type"].startswith("*"):
                holders.append(ctypes.c_uint64(value))
            else:
                holders.append(SCALAR_CTYPES[p["type"]](value))
        pointers = (ctypes.c_void_p * max(1, len(holders)))(
            *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        grid = tuple(case["grid"]) + (1,) * (3 - len(case["grid"]))
        check(cuda.cuLaunchKernel(function, grid[0], grid[1], grid[2],
                                  32 * meta.get("launch_warps", meta["num_warps"]), 1, 1, shared,
                                  stream, pointers, None), "cuLaunchKernel")
        check(cuda.cuCtxSynchronize(), "kernel (cuCtxSynchronize)")
    finally:
        cuda.cuModuleUnload(module)


def run_case(case, opts, torch, cuda, differential):
    cubin, meta_path = cubin_paths(opts.dest, case, "sm_90a")
    if not os.path.exists(cubin):
        return dict(status="NOT BUILT", error="no sm_90a cubin (see compile.jsonl)")
    with open(meta_path) as f:
        meta = json.load(f)
    params, options = parse_sig(case["sig"])
    gen = torch.Generator(device="cuda").manual_seed(case["seed"])
    inputs = {}
    for name, spec in case["args"].items():
        inputs[name] = differential.make_input(torch, tuple(spec), gen, name) if isinstance(spec, list) else spec
    kiln_args = dict(inputs)
    for name in case["outputs"]:
        kiln_args[name] = inputs[name].clone()
    torch.cuda.synchronize()
    launch_cubin(cuda, cubin, meta, case,
                 {k: (v.data_ptr() if hasattr(v, "data_ptr") else v) for k, v in kiln_args.items()})

    # Triton: the same file through its JIT.
    spec = importlib.util.spec_from_file_location("fuzz_" + case["id"],
                                                  os.path.join(opts.dest, "src", case["id"] + ".py"))
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kwargs = {}
        for name, type_, value in params:
            kwargs[name] = inputs[name] if type_ is not None else int(value)
        getattr(module, case["kernel"])[tuple(case["grid"])](
            **kwargs, num_warps=options["num_warps"], num_stages=options["num_stages"])
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001 - any Triton failure is reported, not raised
        text = f"{type(error).__name__}: {error}"
        if any(str(code) in text for code in STICKY_ERRORS) and "CUDA" in text:
            raise CudaError(999, "Triton's launch broke the context: " + text[:300])
        return dict(status="TRITON-ERROR", error=text[-1500:])

    worst, ok, details = {}, True, []
    for name in case["outputs"]:
        rule = case["compare"][name]
        rule = dict(tol=0) if rule.get("exact") else dict(tol=rule["tol"])
        good, metric, detail = differential.compare(torch, kiln_args[name], inputs[name], rule)
        ok &= good
        worst[name] = metric
        if detail:
            details.append(f"{name} ({'exact' if rule['tol'] == 0 else 'tol %.3g' % rule['tol']}): {detail}")
    return dict(status="ok" if ok else "MISMATCH", worst=worst, detail="; ".join(details))


def worker(opts):
    """Runs cases[start:] of shard `opts.shard` of `opts.of`; one JSON line per event."""
    import torch
    import differential  # tests/gpu/differential.py: make_input, compare
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(opts.cache, f"w{opts.shard}"))
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.zeros(1, device="cuda")
    cases = shard_cases(opts)
    log = open(opts.log, "a")

    def emit(**record):
        log.write(json.dumps(record) + "\n")
        log.flush()

    for index in range(opts.start, len(cases)):
        case = cases[index]
        if opts.until and time.time() > opts.until:
            emit(event="result", index=index, id=case["id"], status="SKIPPED",
                 error="past the run's --deadline")
            continue
        emit(event="start", index=index, id=case["id"])
        timer = threading.Timer(opts.timeout, lambda: (emit(
            event="result", index=index, id=case["id"], status="ERROR",
            error=f"timed out after {opts.timeout} s"), os._exit(4)))
        timer.start()
        t0 = time.time()
        try:
            result = run_case(case, opts, torch, cuda, differential)
        except CudaError as error:
            result = dict(status="ERROR", error=str(error))
            if error.status in STICKY_ERRORS:
                timer.cancel()
                emit(event="result", index=index, id=case["id"], **result)
                os._exit(3)
        except Exception as error:  # noqa: BLE001
            result = dict(status="ERROR", error=f"{type(error).__name__}: {error}")
        timer.cancel()
        emit(event="result", index=index, id=case["id"], secs=round(time.time() - t0, 2), **result)
    return 0


def shard_cases(opts):
    cases = [c for c in load_manifest(opts.dest)["cases"] if not opts.filter or opts.filter == c["id"]]
    return cases[opts.shard::opts.of]


def run_shard(opts, shard, out):
    """Runs one shard to the end in child processes, restarting after a crash."""
    log = os.path.join(out, "work", f"shard{shard}.jsonl")
    open(log, "w").close()
    start = 0
    n = len(load_manifest(opts.dest)["cases"][shard::opts.workers]) if not opts.filter else None
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "worker", "--dest", opts.dest, "--shard", str(shard),
               "--of", str(opts.workers), "--start", str(start), "--log", log, "--timeout", str(opts.timeout),
               "--cache", opts.cache, "--until", str(opts.until)] + (["--filter", opts.filter] if opts.filter else [])
        with open(os.path.join(out, "work", f"shard{shard}.stderr"), "a") as err:
            code = subprocess.call(cmd, stdout=err, stderr=err)
        records = [json.loads(l) for l in open(log)]
        results = {r["index"] for r in records if r["event"] == "result"}
        started = [r["index"] for r in records if r["event"] == "start"]
        if code == 0 or not started or max(started) < start:
            if code != 0 and (not started or max(started) < start):
                with open(log, "a") as f:
                    f.write(json.dumps(dict(event="dead", start=start, code=code)) + "\n")
            return
        last = max(started)
        if last not in results:
            with open(log, "a") as f:
                f.write(json.dumps(dict(event="result", index=last, id="?", status="ERROR",
                                        error=f"the worker died during the case (exit {code})")) + "\n")
        start = last + 1
        if n is not None and start >= n:
            return


def run(opts):
    manifest = load_manifest(opts.dest)
    cases = {c["id"]: c for c in manifest["cases"]}
    out = opts.out
    os.makedirs(os.path.join(out, "work"), exist_ok=True)
    opts.cache = opts.cache or os.path.join("/tmp", "fuzzdiff-triton-cache")
    start = time.time()
    opts.until = start + opts.deadline if opts.deadline else 0
    with concurrent.futures.ThreadPoolExecutor(opts.workers) as pool:
        list(pool.map(lambda s: run_shard(opts, s, out), range(opts.workers)))
    elapsed = time.time() - start
    results = {}
    for shard in range(opts.workers):
        order = [c["id"] for c in manifest["cases"] if not opts.filter or opts.filter == c["id"]][shard::opts.workers]
        path = os.path.join(out, "work", f"shard{shard}.jsonl")
        for line in open(path):
            r = json.loads(line)
            if r["event"] == "result" and r["index"] < len(order):
                r["id"] = order[r["index"]]
                results.setdefault(r["id"], r)
            if r["event"] == "dead":
                for cid in order[r["start"]:]:
                    results.setdefault(cid, dict(id=cid, status="ERROR",
                                                 error=f"the worker exited {r['code']} before the case"))
    selected = [c for c in manifest["cases"] if not opts.filter or opts.filter == c["id"]]
    for c in selected:
        results.setdefault(c["id"], dict(id=c["id"], status="ERROR", error="not reached"))
    compile_failures = {}
    cpath = os.path.join(opts.dest, "compile.jsonl")
    if os.path.exists(cpath):
        for line in open(cpath):
            r = json.loads(line)
            compile_failures.setdefault(r["id"], r)
    report(opts, selected, results, compile_failures, elapsed, out)
    return 0 if all(results[c["id"]]["status"] == "ok" for c in selected) else 1


def report(opts, selected, results, compile_failures, elapsed, out):
    statuses = collections.Counter(results[c["id"]]["status"] for c in selected)
    by_feature = collections.defaultdict(collections.Counter)
    for c in selected:
        for f in c["features"]:
            by_feature[f][results[c["id"]]["status"]] += 1
    lines = [f"fuzz_differential: {len(selected)} generated kernels (tests/fuzz/kernelgen.py) on the GPU in "
             f"{elapsed:.0f} s, {opts.workers} workers; Kiln sm_90a cubins against Triton's JIT",
             "status: " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()),
             "", "by feature (cases: ok / other statuses):"]
    for f in sorted(by_feature):
        cnt = by_feature[f]
        other = ", ".join(f"{k} {v}" for k, v in cnt.items() if k != "ok")
        lines.append(f"  {f:24} {sum(cnt.values()):5}: ok {cnt['ok']}" + (f"; {other}" if other else ""))
    lines.append("")
    failing = [c for c in selected if results[c["id"]]["status"] != "ok"]
    for c in failing:
        r = results[c["id"]]
        text = r.get("detail") or r.get("error", "")
        if r["status"] == "NOT BUILT" and c["id"] in compile_failures:
            text = compile_failures[c["id"]]["key"]
        lines.append(f"{r['status']:12} {c['id']} [{', '.join(c['features'][:12])}]: {text[:600]}")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(dict(elapsed=elapsed, statuses=statuses, results=[results[c["id"]] for c in selected],
                       by_feature={k: dict(v) for k, v in by_feature.items()}), f, indent=0)
    if failing:
        with tarfile.open(os.path.join(out, "repros.tar.gz"), "w:gz") as tar:
            for c in failing:
                d = f"repros/{c['id']}"
                tar.add(os.path.join(opts.dest, "src", c["id"] + ".py"), f"{d}/{c['id']}.py")
                for arch in c["archs"]:
                    for path in cubin_paths(opts.dest, c, arch):
                        if os.path.exists(path):
                            tar.add(path, f"{d}/{os.path.basename(path)}")
                info = dict(case=c, result=results[c["id"]], compile=compile_failures.get(c["id"]),
                            rerun=f"python3 tests/gpu/fuzz_differential.py run --dest DEST --out OUT --workers 1 "
                                  f"--filter {c['id']}",
                            kilnc=f"kilnc compile {c['id']}.py -n {c['kernel']} -s \"{c['sig']}\" --arch sm_90a "
                                  f"-o {c['id']}.cubin --metadata {c['id']}.json")
                data = json.dumps(info, indent=1).encode()
                ti = tarfile.TarInfo(f"{d}/case.json")
                ti.size = len(data)
                import io
                tar.addfile(ti, io.BytesIO(data))


# ---------------------------------------------------------------------------
# sanitize (GPU): Kiln's cubins only, under compute-sanitizer.

def kiln_only(opts):
    """Runs the subset's cubins for one arch with numpy inputs (no torch)."""
    import numpy as np
    manifest = load_manifest(opts.dest)
    # The subset: the kernels built for sm_90 too (for both archs).
    cases = [c for c in manifest["cases"] if len(c["archs"]) > 1 and opts.arch in c["archs"] + ["sm_90a"]]
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cuda.cuCtxSetCurrent(ctx) == 0
    rng = np.random.default_rng(1)
    sizes = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int8": 1, "float8_e4m3fn": 1,
             "float8_e5m2": 1}

    def host(spec):
        kind, dtype, numel = spec[0], spec[1], spec[2]
        if kind == "zeros":
            return bytes(numel * sizes[dtype])
        if kind == "randint":
            return rng.integers(spec[3], spec[4], numel).astype(np.int32 if dtype == "int32" else np.int8).tobytes()
        vals = rng.uniform(spec[3], spec[4], numel).astype(np.float32)
        if dtype == "float32":
            return vals.tobytes()
        if dtype == "float16":
            return vals.astype(np.float16).tobytes()
        if dtype == "bfloat16":
            return (vals.view(np.uint32) >> 16).astype(np.uint16).tobytes()
        # fp8: small magnitudes of both signs, never NaN.
        return (rng.integers(0, 0x38, numel) | (rng.integers(0, 2, numel) << 7)).astype(np.uint8).tobytes()

    failures = 0
    for case in cases:
        cubin, meta_path = cubin_paths(opts.dest, case, opts.arch)
        if not os.path.exists(cubin):
            print(f"CASE {case['id']} NOT BUILT", flush=True)
            continue
        meta = json.load(open(meta_path))
        print(f"CASE {case['id']} BEGIN", flush=True)
        args, buffers = {}, []
        for name, spec in case["args"].items():
            if not isinstance(spec, list):
                args[name] = spec
                continue
            data = host(spec)
            ptr = ctypes.c_uint64()
            assert cuda.cuMemAlloc_v2(ctypes.byref(ptr), max(1, len(data))) == 0
            assert cuda.cuMemcpyHtoD_v2(ptr, data, len(data)) == 0
            buffers.append(ptr)
            args[name] = ptr.value
        try:
            launch_cubin(cuda, cubin, meta, case, args)
            print(f"CASE {case['id']} END ok", flush=True)
        except CudaError as error:
            failures += 1
            print(f"CASE {case['id']} END {error}", flush=True)
            if error.status in STICKY_ERRORS:
                return 3
        for ptr in buffers:
            cuda.cuMemFree_v2(ptr)
    return 1 if failures else 0


def sanitize(opts):
    tools = opts.tools.split(",")
    archs = opts.archs.split(",")
    out = opts.out
    os.makedirs(os.path.join(out, "work"), exist_ok=True)
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    runs = [(t, a) for a in archs for t in tools]

    def one(run):
        tool, arch = run
        log = os.path.join(out, "work", f"sanitize-{tool}-{arch}.log")
        flags = ["--tool", tool, "--error-exitcode", "97", "--print-limit", "200"]
        if tool == "memcheck":
            flags += ["--leak-check", "full"]
        if tool == "racecheck":
            flags += ["--racecheck-report", "all"]
        cmd = [sanitizer] + flags + [sys.executable, os.path.abspath(__file__), "kiln-only", "--dest", opts.dest,
                                     "--arch", arch]
        start = time.time()
        with open(log, "w") as f:
            try:
                code = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=opts.timeout)
            except subprocess.TimeoutExpired:
                code = "timeout"
        return tool, arch, code, log, time.time() - start

    lines = []
    clean = True
    with concurrent.futures.ThreadPoolExecutor(opts.parallel) as pool:
        for tool, arch, code, log, secs in pool.map(one, runs):
            text = open(log, errors="replace").read()
            # racecheck ends with "RACECHECK SUMMARY: N hazards displayed
            # (...)", the other tools with "ERROR SUMMARY: N errors".
            m = re.findall(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: (\d+) hazard)", text)
            errors = int(next(g for g in m[-1] if g)) if m else None
            # Which cases the reports came from: the CASE markers around them.
            per_case = collections.Counter()
            current = None
            for line in text.splitlines():
                mm = re.match(r"CASE (\S+) (BEGIN|END)", line)
                if mm:
                    current = mm.group(1) if mm.group(2) == "BEGIN" else current
                    continue
                if line.startswith("========= ") and re.search(
                        r"Invalid|Race|hazard|Uninitialized|Barrier|error|leaked", line, re.I) and \
                        "SUMMARY: " not in line:
                    per_case[current] += 1
            ran = len(re.findall(r"^CASE \S+ END ok", text, re.M))
            failed_launch = re.findall(r"^CASE (\S+) END (?!ok).*", text, re.M)
            ok = code == 0 and errors == 0
            clean &= ok
            lines.append(f"{tool:10} {arch:7} {'clean' if ok else 'NOT CLEAN'}: {ran} kernels, "
                         f"{errors if errors is not None else '?'} errors, exit {code}, {secs:.0f} s"
                         + (f"; by case: {dict(per_case.most_common(10))}" if per_case else "")
                         + (f"; launch failures: {failed_launch[:10]}" if failed_launch else ""))
            if not ok:
                excerpt = [l for l in text.splitlines() if l.startswith("=========")][:40]
                lines += ["    " + l for l in excerpt]
    text = "compute-sanitizer over the subset's Kiln cubins (" + \
        f"{sum(1 for c in load_manifest(opts.dest)['cases'] if len(c['archs']) > 1)} kernels):\n" + \
        "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out, "sanitize.txt"), "w") as f:
        f.write(text)
    return 0 if clean else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("--count", type=int, default=500)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--subset", type=int, default=48, help="kernels that also get sm_90 cubins (sanitizers)")
    a.add_argument("--dest", default=os.path.join(ROOT, ".devbuild", "fuzzdiff"))
    a = sub.add_parser("compile")
    a.add_argument("--kilnc", required=True)
    a.add_argument("--dest", default=os.path.join(ROOT, ".devbuild", "fuzzdiff"))
    a.add_argument("--jobs", type=int, default=os.cpu_count())
    a.add_argument("--timeout", type=float, default=120, help="CPU seconds per kilnc run")
    a = sub.add_parser("run")
    a.add_argument("--dest", default=os.path.join(ROOT, ".devbuild", "fuzzdiff"))
    a.add_argument("--out", default=os.environ.get("OUT", "fuzzdiff-out"))
    a.add_argument("--workers", type=int, default=12)
    a.add_argument("--timeout", type=float, default=60, help="seconds per case")
    a.add_argument("--filter", default="", help="only the case with this id")
    a.add_argument("--cache", default="")
    a.add_argument("--deadline", type=float, default=0,
                   help="seconds after which no case starts (the rest are SKIPPED); 0: none")
    a = sub.add_parser("worker")
    for flag in ("--dest", "--log", "--cache", "--filter"):
        a.add_argument(flag, default="")
    for flag in ("--shard", "--of", "--start"):
        a.add_argument(flag, type=int, default=0)
    a.add_argument("--until", type=float, default=0)
    a.add_argument("--timeout", type=float, default=60)
    a = sub.add_parser("sanitize")
    a.add_argument("--dest", default=os.path.join(ROOT, ".devbuild", "fuzzdiff"))
    a.add_argument("--out", default=os.environ.get("OUT", "fuzzdiff-out"))
    a.add_argument("--tools", default="memcheck,racecheck,synccheck,initcheck")
    a.add_argument("--archs", default="sm_90,sm_90a")
    a.add_argument("--parallel", type=int, default=8, help="sanitizer runs at a time (of 8: 4 tools x 2 archs)")
    a.add_argument("--timeout", type=float, default=240, help="seconds per sanitizer run")
    a = sub.add_parser("kiln-only")
    a.add_argument("--dest", required=True)
    a.add_argument("--arch", required=True)
    opts = p.parse_args()
    if getattr(opts, "dest", None):
        opts.dest = os.path.abspath(opts.dest)
    if getattr(opts, "kilnc", None):
        opts.kilnc = os.path.abspath(opts.kilnc)
    return {"prepare": prepare, "compile": compile_cases, "run": run, "worker": worker,
            "sanitize": sanitize, "kiln-only": kiln_only}[opts.command](opts)


if __name__ == "__main__":
    sys.exit(main())
