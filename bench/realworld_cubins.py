#!/usr/bin/env python3
"""Real-world kernels, memory-bound and tensor-core: Kiln's cubins beside upstream Triton's JIT.

The cases (bench/realworld_cases.py) are kernels from upstream's tutorials and
the real-world samples under tests/realworld/, unchanged, at the sizes and
launch configurations their host code picks. bench/build_realworld_cubins.sh
compiles them here; on the GPU machine this script runs each cubin and the
same source through Triton 3.6 on identical inputs, checks that the outputs
agree (within the case's bound), and times both the way
triton.testing.do_bench does: L2 flushed before each run, CUDA events around
the kernel, the median. Rounds alternate between the two.

    python3 bench/realworld_cubins.py --list          # id|file|kernel|signature (hints added)[|--src FILE ...]
    python3 bench/realworld_cubins.py --cubins DIR --out OUT [--filter TEXT] [--rounds 3]
    compute-sanitizer --tool racecheck python3 bench/realworld_cubins.py --cubins DIR --kiln-only --filter TEXT
    python3 bench/realworld_cubins.py --cubins SM90_DIR --triton-mma-v2   # Kiln's plain sm_90 (mma.sync)
        # cubins beside Triton's mma.sync path: what both run on sm_80-89

Writes OUT/realworld.json and OUT/realworld.md (Triton GB/s, Kiln GB/s, or
TFLOP/s for a case that states its FLOPs; Kiln/Triton per case) and prints
the table.
"""

import argparse
import ast
import ctypes
import importlib.util
import json
import os
import statistics
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "gpu"))
import cubin_launch  # noqa: E402
import differential as diff  # noqa: E402
from realworld_cases import CASES  # noqa: E402


def unspecialized_parameters(case):
    """The parameters the kernel's `@triton.jit(do_not_specialize=[...])`
    names (by name or position): Triton's JIT gives them no hints."""
    tree = ast.parse(open(os.path.join(REPO, case["file"])).read())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name == case["kernel"]):
            continue
        names = [a.arg for a in node.args.args]
        out = set()
        for decorator in node.decorator_list:
            for keyword in getattr(decorator, "keywords", []):
                if keyword.arg == "do_not_specialize":
                    for item in ast.literal_eval(keyword.value):
                        out.add(names[item] if isinstance(item, int) else item)
        return out
    return set()


def hinted_signature(case):
    """The case's signature with the hints Triton's JIT specializes on for its
    arguments: `:16` on pointers (fresh allocations) and on integers divisible
    by 16, `:1` on integers equal to 1, except for the parameters the kernel
    says not to specialize."""
    out = []
    unspecialized = unspecialized_parameters(case)
    for entry in diff.split_top_level(case["sig"]):
        name, _, value = entry.partition("=")
        name, value = name.strip(), value.strip()
        if name in unspecialized:
            pass
        elif value.startswith("*"):
            value += ":16"
        elif value in ("i32", "i64") and name in case["args"]:
            v = case["args"][name]
            if v == 1:
                value += ":1"
            elif v % 16 == 0:
                value += ":16"
        out.append(f"{name}={value}")
    return ", ".join(out)


def import_in_package(path, root):
    """Imports the file at `path` as the module its path below `root` names
    (relative imports then resolve), its parent packages empty: their
    __init__ files import modules the sample does not carry."""
    dotted = os.path.relpath(path, root)[:-len(".py")].split(os.sep)
    for depth in range(1, len(dotted)):
        name = ".".join(dotted[:depth])
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [os.path.join(root, *dotted[:depth])]
            sys.modules[name] = package
    sys.path.insert(0, root)
    return importlib.import_module(".".join(dotted))


def load_kernel(case):
    path = os.path.join(REPO, case["file"])
    # Stand-ins for the modules the sample imports but tests/realworld does
    # not carry (`stubs`: module name -> the attributes it is imported for).
    for name, attributes in case.get("stubs", {}).items():
        stub = types.ModuleType(name)
        stub.__dict__.update(attributes)
        sys.modules[name] = stub
    if case.get("package"):
        module = import_in_package(path, os.path.join(REPO, case["package"]))
        return diff.unwrap_triton(getattr(module, case["kernel"]))[0]
    # A tutorial runs its tests and benchmarks at import: only its kernels
    # and what they need are loaded.
    spec = importlib.util.spec_from_file_location("kiln_bench_matmul", os.path.join(HERE, "matmul.py"))
    matmul = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(matmul)
    module = matmul.load_tutorial(path, module_name="kiln_bench_" + case["id"])
    return diff.unwrap_triton(getattr(module, case["kernel"]))[0]


class Side:
    """One compiler's launch of a case: `launch()` on the current stream."""

    def __init__(self, launch):
        self.launch = launch
        self.times = []


def kiln_side(case, opts, args, cuda, torch):
    """The case's cubin through bench/cubin_launch.py (the other benches'
    loader: shared memory, `:1` checks, global scratch)."""
    cubin = cubin_launch.Cubin(cuda, opts.cubins, case["id"])
    values = {name: (v.data_ptr() if hasattr(v, "data_ptr") else v) for name, v in args.items()}
    arguments = cubin.arguments(values)
    stream = torch.cuda.current_stream().cuda_stream
    side = Side(lambda: cubin.launch(case["grid"], arguments, stream))
    side.keep = (cubin, arguments)
    side.registers = cubin.meta.get("registers")
    return side


def triton_side(case, args, triton_language):
    params, options = diff.parse_signature(case["sig"])
    fn = load_kernel(case)
    kwargs = {name: (args[name] if type_ is not None else diff.constexpr_value(const, triton_language))
              for name, type_, const in params}
    grid = case["grid"]
    warps = options.get("num_warps", 4)
    stages = options.get("num_stages", 3)

    side = Side(None)

    def launch():
        side.compiled = fn[grid](**kwargs, num_warps=warps, num_stages=stages)

    side.launch = launch
    return side


def case_inputs(case, torch):
    gen = torch.Generator(device="cuda").manual_seed(case.get("seed", 1234))
    return {n: (diff.make_input(torch, s, gen, n) if isinstance(s, tuple) or callable(s) else s)
            for n, s in case["args"].items()}


def run_kiln_only(case, opts, torch, cuda):
    """One launch of Kiln's cubin, nothing compared or timed (for
    compute-sanitizer, which would otherwise check Triton's kernel too)."""
    if opts.grid_limit:
        # Racecheck's hazards lie within a block: a few blocks of a large
        # grid check what all of them would, in a fraction of the time.
        grid = case["grid"]
        grid = (grid,) if isinstance(grid, int) else tuple(grid)
        case = dict(case, grid=tuple(min(g, opts.grid_limit) for g in grid))
    kiln = kiln_side(case, opts, case_inputs(case, torch), cuda, torch)
    kiln.launch()
    torch.cuda.synchronize()
    return dict(id=case["id"], kernel=case["kernel"], ok=True)


def run_case(case, opts, torch, triton, cuda):
    import triton.language as tl
    inputs = case_inputs(case, torch)
    # Each side writes its own copies of the outputs and reset buffers.
    own = set(case["outputs"]) | set(case.get("reset", []))
    kiln_args = {n: (v.clone() if n in own else v) for n, v in inputs.items()}
    triton_args = {n: (v.clone() if n in own else v) for n, v in inputs.items()}
    kiln = kiln_side(case, opts, kiln_args, cuda, torch)
    theirs = triton_side(case, triton_args, tl)
    kiln.launch()
    theirs.launch()
    torch.cuda.synchronize()
    triton_registers = getattr(theirs.compiled, "n_regs", None)
    if opts.dump_triton:
        cubin_launch.write_triton_asm(theirs.compiled, opts.dump_triton, case["id"])
    worst, ok = 0.0, True
    for name in case["outputs"]:
        good, metric, detail = diff.compare(torch, kiln_args[name], triton_args[name],
                                            dict(tol=case["tol"]))
        ok &= good
        worst = max(worst, metric)
        if detail:
            print(f"  {case['id']}: {name}: {detail}", flush=True)

    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(opts.rounds):
        for side, side_args in ((kiln, kiln_args), (theirs, triton_args)):
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(opts.reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(opts.reps)]
            for i in range(opts.reps):
                for name in case.get("reset", []):
                    side_args[name].zero_()
                flush.zero_()
                # Keeps the GPU busy while Python issues the launch, so that
                # neither side's host overhead is timed.
                torch.cuda._sleep(20000)
                starts[i].record()
                side.launch()
                ends[i].record()
            torch.cuda.synchronize()
            side.times.append(statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)))
    kiln_ms = statistics.median(kiln.times)
    triton_ms = statistics.median(theirs.times)
    # GB/s, or TFLOP/s for a case that states its FLOPs (tensor-core kernels).
    gbps = lambda ms: (case["flops"] / ms / 1e9 if "flops" in case  # noqa: E731
                       else case["bytes"] / ms / 1e6)
    return dict(id=case["id"], file=case["file"], kernel=case["kernel"], ok=ok, worst=worst,
                kiln_ms=kiln_ms, triton_ms=triton_ms, kiln_gbps=gbps(kiln_ms),
                triton_gbps=gbps(triton_ms), ratio=triton_ms / kiln_ms,
                # What kiln_gbps and triton_gbps hold (their names predate
                # the TFLOP/s cases).
                unit="TFLOP/s" if "flops" in case else "GB/s",
                per_round=[t / k for k, t in zip(kiln.times, theirs.times)],
                registers=kiln.registers, triton_registers=triton_registers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--cubins")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--filter", default="", help="only cases whose id contains one of these (comma-separated)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--dump-triton", metavar="DIR",
                        help="write Triton's TTGIR, PTX and cubin of each case there (for SASS comparisons)")
    parser.add_argument("--kiln-only", action="store_true",
                        help="launch each case's Kiln cubin once, no Triton, no timing (for compute-sanitizer)")
    parser.add_argument("--grid-limit", type=int, default=0, metavar="N",
                        help="with --kiln-only: launch at most N blocks along each grid dimension")
    cubin_launch.add_triton_mma_v2_option(parser)
    opts = parser.parse_args()
    cubin_launch.use_triton_mma_v2(opts)
    filters = opts.filter.split(",")
    cases = [c for c in CASES if any(f in c["id"] for f in filters)]
    if opts.list:
        for c in cases:
            line = f"{c['id']}|{c['file']}|{c['kernel']}|{hinted_signature(c)}"
            if c.get("srcs"):  # the files it imports jit functions from, as kilnc's --src
                line += "|" + " ".join(f"--src {src}" for src in c["srcs"])
            print(line)
        return 0
    import torch
    import triton
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.zeros(1, device="cuda")
    # Triton writes the tensor maps of in-kernel TMA descriptors
    # (tl.make_tensor_descriptor: FBGEMM's grouped GEMM) to global scratch
    # from this allocator; Kiln's cubins get theirs from cubin_launch.
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    results, failed = [], 0
    if opts.kiln_only:
        for case in cases:
            run_kiln_only(case, opts, torch, cuda)
            print(f"ok       {case['id']} (Kiln only)", flush=True)
        print(f"{len(cases)} passed, 0 failed")
        return 0
    for case in cases:
        try:
            r = run_case(case, opts, torch, triton, cuda)
        except Exception as error:  # one case's failure does not stop the sweep
            r = dict(id=case["id"], ok=False, error=f"{type(error).__name__}: {error}")
        failed += not r["ok"]
        results.append(r)
        if "ratio" in r:
            unit = "TFLOP/s" if "flops" in case else "GB/s"
            print(f"{r['id']}: Triton {r['triton_gbps']:.0f} {unit}, Kiln {r['kiln_gbps']:.0f} {unit}, "
                  f"{r['ratio']:.3f} ({' '.join(f'{x:.3f}' for x in r['per_round'])})"
                  f"{'' if r['ok'] else ' MISMATCH'}", flush=True)
        else:
            print(f"{r['id']}: ERROR {r['error']}", flush=True)
        torch.cuda.empty_cache()
    os.makedirs(opts.out, exist_ok=True)
    env = dict(device=torch.cuda.get_device_name(), triton=triton.__version__, torch=torch.__version__,
               triton_mma_v2=opts.triton_mma_v2)
    json.dump(dict(env, cases=results), open(os.path.join(opts.out, "realworld.json"), "w"), indent=1)
    lines = [f"# Real-world kernels ({env['device']}, Triton {env['triton']}"
             f"{', with DISABLE_MMA_V3=1: its mma.sync path' if opts.triton_mma_v2 else ''})", "",
             "| case | kernel | Triton GB/s (TFLOP/s) | Kiln GB/s (TFLOP/s) | Kiln/Triton | per round | registers (Kiln, Triton) |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        if "ratio" in r:
            lines.append(f"| {r['id']} | {r['kernel']} | {r['triton_gbps']:.0f} | {r['kiln_gbps']:.0f} | "
                         f"{r['ratio']:.3f}{'' if r['ok'] else ' (MISMATCH)'} | "
                         f"{' '.join(f'{x:.3f}' for x in r['per_round'])} | "
                         f"{r.get('registers')}, {r.get('triton_registers')} |")
        else:
            lines.append(f"| {r['id']} | | | | ERROR: {r['error']} | | |")
    open(os.path.join(opts.out, "realworld.md"), "w").write("\n".join(lines) + "\n")
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
