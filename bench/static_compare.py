#!/usr/bin/env python3
"""Kiln's and upstream Triton's cubins of the real-world corpus side by side,
without a GPU: registers, spills, shared memory and SASS instruction counts
of every manifest variant, with the variants where Kiln's code looks worse
flagged. A map of where to look for slow kernels the bench does not time.

    python3 bench/static_compare.py --manifest tests/realworld/MANIFEST.second \\
        --kilnc build/compiler/driver/kilnc --out /tmp/static [--filter TEXT]

With `--cases TEXT` (instead of, or beside, --manifest) it compares the
real-world bench cases (bench/realworld_cases.py) whose id contains TEXT
(or one of its comma-separated parts),
with the signatures and hints bench/build_realworld_cubins.sh compiles
them with: the figures beside a timed case's, or in place of them where no
GPU was at hand.

Both compilers take each variant's signature with `:16` added to its
pointers (what Triton's JIT assumes of fresh allocations) for sm_90a. Kiln's
side is kilnc; upstream's is triton.compile in .triton-venv's Python (one
process per file), the file imported with its library's packages present
and the modules it imports that tests/realworld does not carry stood in for
by permissive stubs. A variant either side cannot compile is listed, not
compared. Results are cached in --out (rerun to add variants); writes
OUT/static.tsv and OUT/static.md, the flagged rows first; Triton's TTGIR and
PTX of each variant stay beside its cubins (OUT/VARIANT.triton.ttgir, .ptx),
to read against kilnc --dump-ir.

With `--mma-sync` Kiln compiles for plain sm_90 and Triton runs with
DISABLE_MMA_V3=1: both compilers' mma.sync paths (what they run on
sm_80-89); use a separate --out.

Flags: `spill` (Kiln spills more), `occupancy` (Kiln's registers or shared
memory leave fewer blocks per SM), `loads`/`stores` (more global memory
instructions: narrower accesses), `tensor-cores` (Triton uses wgmma or mma
and Kiln does not, or Kiln mma.sync where Triton wgmma), `size` (SASS over
1.5x Triton's).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
REALWORLD = os.path.join(REPO, "tests", "realworld")
sys.path.insert(0, os.path.join(REPO, "tests", "kernels"))
import check_corpus  # noqa: E402
import run_upstream  # noqa: E402

CUOBJDUMP_CANDIDATES = [
    os.path.join(REPO, ".triton-venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/cuobjdump"),
    "/usr/local/cuda/bin/cuobjdump",
]


def variant_id(v):
    """library__file__kernel__index: two files of a library may hold kernels
    of one name (FlagAttention's flash.py and piecewise.py _bwd_kv_kernel)."""
    parts = v.path.split("/")
    stem = os.path.splitext(parts[-1])[0]
    return f"{parts[0]}__{stem}__{v.kernel}__{v.index}"


def hinted(sig):
    """`:16` on every pointer without a hint."""
    out = []
    for entry in run_upstream.split_signature(sig):
        name, _, value = entry.partition("=")
        value = value.strip()
        if value.startswith("*") and ":" not in value:
            value += ":16"
        out.append(f"{name.strip()}={value}")
    return ", ".join(out)


def bench_case_variants(text):
    """The bench cases whose id contains `text` (or one of its comma-separated
    parts), as variants (index: the id)."""
    listing = subprocess.run([sys.executable, os.path.join(HERE, "realworld_cubins.py"), "--list"],
                             stdout=subprocess.PIPE, check=True, text=True).stdout
    variants = []
    for line in listing.splitlines():
        cid, path, kernel, sig, srcs = (line.split("|") + [""])[:5]
        if not any(t in cid for t in text.split(",")):
            continue
        v = check_corpus.Variant(os.path.relpath(os.path.join(REPO, path), REALWORLD), 0,
                                 ["-n", kernel, "-s", sig])
        v.kernel, v.index = kernel, cid
        v.srcs = [os.path.relpath(os.path.join(REPO, s), REALWORLD)
                  for s in shlex.split(srcs) if s != "--src"]
        variants.append(v)
    return variants


def variant_args(v):
    args = list(v.args)
    if "-s" in args:
        i = args.index("-s") + 1
        args[i] = hinted(args[i])
    return args


# ---------------------------------------------------------------------------
# Kiln's side

# --mma-sync: Kiln's plain sm_90 cubins (its sm_80-89 path: ldmatrix,
# mma.sync, cp.async) beside Triton run with DISABLE_MMA_V3=1 (its own
# mma.sync path, what it runs on sm_80-89).
KILN_ARCH = "sm_90a"


def kiln_compile(kilnc, out, v):
    base = os.path.join(out, variant_id(v))
    if os.path.exists(base + ".kiln.cubin") or os.path.exists(base + ".kiln.err"):
        return
    srcs = []
    for s in v.srcs:
        srcs += ["--src", os.path.join(REALWORLD, s)]
    cmd = [kilnc, "compile", os.path.join(REALWORLD, v.path)] + variant_args(v) + srcs + [
        "--arch", KILN_ARCH, "--emit", "cubin", "-o", base + ".kiln.cubin", "--metadata", base + ".kiln.json"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, errors="replace")
    if p.returncode != 0:
        with open(base + ".kiln.err", "w") as f:
            f.write(p.stdout)


# ---------------------------------------------------------------------------
# Upstream's side (runs in the venv: --upstream-worker FILE ID ARGS-JSON ...)

class AnythingMeta(type):
    """A class deriving from a stand-in (torch.autograd.Function without
    torch) answers any class attribute (`Function.apply`) with Anything."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything()


class AnythingBase(metaclass=AnythingMeta):
    pass


class Anything:
    """Whatever a module tests/realworld does not carry was imported for: a
    decorator that returns what it decorates, a callable, an attribute bag."""

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return Anything()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything()

    def __mro_entries__(self, bases):
        return (AnythingBase,)

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __eq__(self, other):
        return False

    def __hash__(self):
        return 0

    def __lt__(self, other):
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def _anything(self, *args):
        return Anything()

    for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
                "rshift", "matmul"):
        locals()[f"__{_op}__"] = locals()[f"__r{_op}__"] = _anything
    __neg__ = __pos__ = __invert__ = __getitem__ = _anything
    del _op


def install_stub_finder():
    import importlib.abc
    import importlib.machinery
    import types

    class StubModule(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            return Anything()

    class StubLoader(importlib.abc.Loader):
        def create_module(self, spec):
            module = StubModule(spec.name)
            module.__path__ = []
            return module

        def exec_module(self, module):
            pass

    class StubFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            return importlib.machinery.ModuleSpec(name, StubLoader(), is_package=True)

    sys.meta_path.append(StubFinder())


def library_root(path):
    """The directory a file's dotted module name starts from."""
    lib = os.path.join(REALWORLD, os.path.relpath(path, REALWORLD).split(os.sep)[0])
    for sub in ("src", "python"):
        if os.path.isdir(os.path.join(lib, sub)) and path.startswith(os.path.join(lib, sub) + os.sep):
            return os.path.join(lib, sub)
    return lib


def load_module(path):
    import realworld_cubins
    return realworld_cubins.import_in_package(path, library_root(path))


def upstream_worker(path, jobs):
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    target = GPUTarget("cuda", 90, 32)

    class Properties(dict):
        def __getattr__(self, name):
            return self.get(name, 0)

    props = Properties(max_shared_mem=232448, multiprocessor_count=132, max_num_regs=65536, warpSize=32,
                       sm_clock_rate=1980000, mem_clock_rate=2619000, mem_bus_width=5120)

    class NoGpuDriver:
        def get_active_torch_device(self):
            return "cpu"

        def get_current_target(self):
            return target

        def get_current_device(self):
            return 0

        def __getattr__(self, name):
            if name == "utils":
                return type("utils", (), dict(get_device_properties=staticmethod(lambda d: props)))()
            return Anything()

    triton.runtime.driver.set_active(NoGpuDriver())
    try:
        import torch
        torch.cuda.is_available = lambda: True
        torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
        torch.cuda.get_device_properties = lambda *a, **k: type(
            "P", (), dict(multi_processor_count=132, major=9, minor=0, name="NVIDIA H100",
                          total_memory=80 << 30, shared_memory_per_block_optin=232448))()
        torch.cuda.current_device = lambda: 0
        torch.cuda.get_device_name = lambda *a, **k: "NVIDIA H100"
        torch.version.cuda = torch.version.cuda or "12.8"
    except ImportError:
        pass
    install_stub_finder()
    try:
        module = load_module(path)
    except BaseException as e:  # noqa: BLE001 - any import failure is reported
        for base, _ in jobs:
            with open(base + ".triton.err", "w") as f:
                f.write(f"import: {type(e).__name__}: {e}\n" + traceback.format_exc())
        return
    for base, args in jobs:
        try:
            name = args[args.index("-n") + 1]
            fn = getattr(module, name)
            while not isinstance(fn, triton.runtime.jit.JITFunction):
                fn = fn.fn
            given, options = run_upstream.split_options(args[args.index("-s") + 1])
            import inspect
            params = inspect.signature(fn.fn).parameters
            signature, constexprs, attributes = {}, {}, {}
            for i, (pname, p) in enumerate(params.items()):
                is_constexpr = i in fn.constexprs
                if pname in given:
                    value = given[pname]
                    if not is_constexpr and value.startswith("("):
                        signature[pname] = run_upstream.tuple_signature(value, (i,), constexprs, tl)
                    elif not is_constexpr and run_upstream.is_type(value):
                        if value.endswith(":1") and not value.startswith("*"):
                            signature[pname] = "constexpr"
                            constexprs[(i,)] = 1
                        else:
                            signature[pname] = value.split(":")[0]
                            if value.endswith(":16"):
                                attributes[(i,)] = [["tt.divisibility", 16]]
                    else:
                        signature[pname] = "constexpr"
                        constexprs[(i,)] = run_upstream.constexpr_value(value, tl, module)
                elif p.default is not inspect.Parameter.empty:
                    signature[pname] = "constexpr"
                    constexprs[(i,)] = p.default
                else:
                    raise ValueError(f"parameter {pname} has no value in the variant")
            compiled = triton.compile(ASTSource(fn, signature, constexprs, attributes), target=target,
                                      options=options)
            with open(base + ".triton.cubin", "wb") as f:
                f.write(compiled.asm["cubin"])
            # For reading beside Kiln's IR (kilnc --dump-ir).
            for stage in ("ttgir", "ptx"):
                with open(base + ".triton." + stage, "w") as f:
                    f.write(compiled.asm[stage])
            with open(base + ".triton.json", "w") as f:
                json.dump(dict(shared=compiled.metadata.shared, num_warps=compiled.metadata.num_warps), f)
        except BaseException as e:  # noqa: BLE001
            text = str(e).strip().splitlines()
            with open(base + ".triton.err", "w") as f:
                f.write(f"{type(e).__name__}: " + (" / ".join(text[-3:]) if text else "") + "\n")


def upstream_compile(python, out, path, variants):
    jobs = []
    for v in variants:
        base = os.path.join(out, variant_id(v))
        if not (os.path.exists(base + ".triton.cubin") or os.path.exists(base + ".triton.err")):
            jobs.append((base, variant_args(v)))
    if not jobs:
        return
    try:
        subprocess.run([python, os.path.abspath(__file__), "--upstream-worker", path, json.dumps(jobs)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
    except subprocess.TimeoutExpired:
        pass
    for base, _ in jobs:
        if not (os.path.exists(base + ".triton.cubin") or os.path.exists(base + ".triton.err")):
            with open(base + ".triton.err", "w") as f:
                f.write("no result (the worker crashed or timed out)\n")


# ---------------------------------------------------------------------------
# Comparison

def cuobjdump():
    for c in CUOBJDUMP_CANDIDATES:
        if os.path.exists(c):
            return c
    return "cuobjdump"


def cubin_stats(path):
    tool = cuobjdump()
    usage = subprocess.run([tool, "-res-usage", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           errors="replace").stdout
    stats = {}
    m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", usage)
    if m:
        stats.update(regs=int(m[1]), stack=int(m[2]), static_shared=int(m[3]), local=int(m[4]))
    sass = subprocess.run([tool, "-sass", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          errors="replace").stdout
    counts = dict(total=0, ldg=0, ldg_bytes=0, stg=0, stg_bytes=0, lds=0, sts=0, ldsm=0, hgmma=0, hmma=0,
                  mufu=0, bar=0, ldl=0, stl=0, shfl=0, atom=0, ldgsts=0, tma=0)
    for line in sass.splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if not m:
            continue
        op = m[2]
        if op in ("NOP",):
            continue
        counts["total"] += 1
        head = op.split(".")[0]
        width = 4
        for w, b in ((".128", 16), (".64", 8), (".U16", 2), (".S16", 2), (".U8", 1), (".S8", 1)):
            if w in op:
                width = b
        if head == "LDG":
            counts["ldg"] += 1
            counts["ldg_bytes"] += width
        elif head == "STG":
            counts["stg"] += 1
            counts["stg_bytes"] += width
        elif head in ("LDS",):
            counts["lds"] += 1
        elif head in ("STS", "STSM"):
            counts["sts"] += 1
        elif head == "LDGSTS":
            counts["ldgsts"] += 1
        elif head in ("UTMALDG", "UBLKCP"):
            counts["tma"] += 1
        elif head == "LDSM":
            counts["ldsm"] += 1
        elif head == "HGMMA":
            counts["hgmma"] += 1
        elif head in ("HMMA", "IMMA", "QMMA"):
            counts["hmma"] += 1
        elif head == "MUFU":
            counts["mufu"] += 1
        elif head == "BAR":
            counts["bar"] += 1
        elif head == "LDL":
            counts["ldl"] += 1
        elif head == "STL":
            counts["stl"] += 1
        elif head == "SHFL":
            counts["shfl"] += 1
        elif head in ("ATOM", "ATOMG", "RED", "REDG"):
            counts["atom"] += 1
    stats.update(counts)
    return stats


def blocks_per_sm(regs, warps, shared):
    threads = 32 * warps
    per_thread = max(regs, 1)
    per_warp = ((per_thread * 32 + 255) // 256) * 256
    by_regs = 65536 // (per_warp * warps) if per_warp * warps else 32
    by_threads = 2048 // threads
    by_shared = (233472 // (shared + 1024)) if shared else 32
    return max(0, min(by_regs, by_threads, by_shared, 32))


def compare(out, v):
    base = os.path.join(out, variant_id(v))
    row = dict(id=variant_id(v), file=v.path, kernel=v.kernel)
    if os.path.exists(base + ".kiln.err"):
        row["status"] = "kiln error: " + open(base + ".kiln.err").read().strip().splitlines()[0][:160]
        return row
    if os.path.exists(base + ".triton.err"):
        row["status"] = "triton error: " + open(base + ".triton.err").read().strip()[:160]
        return row
    if not (os.path.exists(base + ".kiln.cubin") and os.path.exists(base + ".triton.cubin")):
        row["status"] = "missing"
        return row
    k, t = cubin_stats(base + ".kiln.cubin"), cubin_stats(base + ".triton.cubin")
    meta = json.load(open(base + ".kiln.json"))
    tmeta = json.load(open(base + ".triton.json"))
    warps = meta.get("num_warps", 4)
    k_shared = meta.get("shared_bytes", 0)
    t_shared = tmeta.get("shared", 0)
    k_blocks = blocks_per_sm(k.get("regs", 0), warps, k_shared)
    t_blocks = blocks_per_sm(t.get("regs", 0), tmeta.get("num_warps", warps), t_shared)
    flags = []
    if k["ldl"] + k["stl"] > t["ldl"] + t["stl"] or k.get("local", 0) > t.get("local", 0):
        flags.append("spill")
    if k_blocks < t_blocks:
        flags.append("occupancy")
    if k["ldg"] > 1.25 * t["ldg"] + 2:
        flags.append("loads")
    if (t["ldgsts"] or t["tma"]) and not (k["ldgsts"] or k["tma"]):
        flags.append("async-copies")
    if k["stg"] > 1.25 * t["stg"] + 2:
        flags.append("stores")
    if (t["hgmma"] and not k["hgmma"]) or (t["hmma"] and not (k["hmma"] or k["hgmma"])):
        flags.append("tensor-cores")
    if k["total"] > 1.5 * t["total"] + 50:
        flags.append("size")
    row.update(status="compared", flags=flags, warps=warps, kiln=k, triton=t, kiln_shared=k_shared,
               triton_shared=t_shared, kiln_blocks=k_blocks, triton_blocks=t_blocks)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", action="append", required=False, default=[])
    ap.add_argument("--cases", help="bench cases whose id contains this text (a,b: either)")
    ap.add_argument("--kilnc", default=os.path.join(REPO, "build/compiler/driver/kilnc"))
    ap.add_argument("--python", default=os.path.join(REPO, ".triton-venv/bin/python"))
    ap.add_argument("--out", required=False)
    ap.add_argument("--filter", default="")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--mma-sync", action="store_true",
                    help="Kiln for plain sm_90 and Triton with DISABLE_MMA_V3=1: both compilers' mma.sync paths")
    ap.add_argument("--upstream-worker", nargs=2, metavar=("FILE", "JOBS"))
    a = ap.parse_args()
    if a.upstream_worker:
        upstream_worker(a.upstream_worker[0], json.loads(a.upstream_worker[1]))
        return 0
    if not (a.manifest or a.cases is not None) or not a.out:
        ap.error("--manifest (or --cases) and --out are required")
    os.makedirs(a.out, exist_ok=True)
    if a.mma_sync:
        global KILN_ARCH
        KILN_ARCH = "sm_90"
        os.environ["DISABLE_MMA_V3"] = "1"  # the upstream workers inherit it
    variants = bench_case_variants(a.cases) if a.cases is not None else []
    for m in a.manifest:
        vs, problems = check_corpus.read_manifest(m)
        variants += [v for v in vs if "-s" in v.args and a.filter in f"{v.path} -n {v.kernel}"]
    by_file = {}
    for v in variants:
        by_file.setdefault(v.path, []).append(v)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        list(pool.map(lambda v: kiln_compile(a.kilnc, a.out, v), variants))
        list(pool.map(lambda item: upstream_compile(a.python, a.out, os.path.join(REALWORLD, item[0]), item[1]),
                      by_file.items()))
    rows = [compare(a.out, v) for v in variants]
    with open(os.path.join(a.out, "static.json"), "w") as f:
        json.dump(rows, f, indent=1)
    compared = [r for r in rows if r["status"] == "compared"]
    flagged = sorted((r for r in compared if r["flags"]), key=lambda r: (-len(r["flags"]), r["id"]))
    lines = ["| variant | flags | regs K/T | blocks/SM K/T | shared K/T | spill K/T | LDG K/T | LDGSTS+TMA K/T | "
             "STG K/T | LDS+STS+LDSM K/T | BAR K/T | SHFL K/T | SASS K/T |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in flagged + [r for r in compared if not r["flags"]]:
        k, t = r["kiln"], r["triton"]
        lines.append(f"| {r['id']} | {' '.join(r['flags'])} | {k.get('regs')}/{t.get('regs')} | "
                     f"{r['kiln_blocks']}/{r['triton_blocks']} | {r['kiln_shared']}/{r['triton_shared']} | "
                     f"{k['ldl'] + k['stl']}/{t['ldl'] + t['stl']} | {k['ldg']}/{t['ldg']} | "
                     f"{k['ldgsts'] + k['tma']}/{t['ldgsts'] + t['tma']} | {k['stg']}/{t['stg']} | "
                     f"{k['lds'] + k['sts'] + k['ldsm']}/{t['lds'] + t['sts'] + t['ldsm']} | "
                     f"{k['bar']}/{t['bar']} | {k['shfl']}/{t['shfl']} | {k['total']}/{t['total']} |")
    others = [r for r in rows if r["status"] != "compared"]
    with open(os.path.join(a.out, "static.md"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + "\n".join(f"- {r['id']}: {r['status']}" for r in others) + "\n")
    print(f"{len(compared)} compared, {len(flagged)} flagged, {len(others)} not compared "
          f"({sum(r['status'].startswith('triton') for r in others)} Triton errors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
