#!/usr/bin/env python3
"""Differential check: corpus kernels through Kiln and through upstream Triton.

Runs on the GPU machine (torch + triton installed). For each case of
tests/gpu/differential_cases.py, the Kiln cubin (built here by
tests/gpu/build_differential.sh, carried over in .devbuild/differential/) is
launched through the CUDA driver with ctypes, the same kernel source is
launched through upstream Triton's JIT, both on identical inputs, and every
buffer the kernel writes is compared: bitwise for integers and data
movement, within a stated bound for floating-point math (see the cases file).

    python3 tests/gpu/differential.py --cubins .devbuild/differential [--out DIR]
                                  [--filter TEXT] [--timeout S]
    python3 tests/gpu/differential.py --list       # id|file|kernel|signature|flags
    python3 tests/gpu/differential.py --coverage   # corpus kernels without a case
    python3 tests/gpu/differential.py --self-check # the case list against the corpus
    python3 tests/gpu/differential.py --cubins DIR --kiln-only   # no Triton side

--kiln-only launches only the Kiln cubins (same inputs, no comparison): what
compute-sanitizer runs over (tests/gpu/compute_sanitizer.sh), so that its
reports are about Kiln's code and not Triton's.

Prints one line per case (`ok`, `MISMATCH`, `ERROR`, `NOT RUN`) and `N
passed, N failed`; writes differential.json to --out. Exit status 1 on any
failure. A case whose cubin is missing (build_differential.sh skipped it) is
`NOT RUN` and counts as a failure.

The cases run in a child process; when a kernel leaves the CUDA context
unusable (an illegal address, a trap) or runs past --timeout seconds, that
case is an ERROR and a fresh child goes on with the next case.

Triton's JIT types a run-time scalar by its Python value (an int is i32 when
it fits, else i64, or u64 from 2**63; a float is fp32; a bool is i1), while
the Kiln cubin takes the signature's type. Cases choose values for which the
two agree (an i64 seed >= 2**31) or for which the kernel's result does not
depend on the difference; the cases file says so where it matters.
"""

import argparse
import ctypes
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "kernels")
sys.path.insert(0, HERE)
from differential_cases import CASES  # noqa: E402

# Scalar parameter types of kilnc signatures, with their ctypes.
SCALAR_CTYPES = {
    "i1": ctypes.c_uint8, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
    "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16,
    "u32": ctypes.c_uint32, "u64": ctypes.c_uint64, "fp16": ctypes.c_uint16,
    "bf16": ctypes.c_uint16, "fp32": ctypes.c_float, "fp64": ctypes.c_double,
}
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas")
# CUDA errors after which the context cannot be used any more.
STICKY_ERRORS = {700, 701, 702, 709, 710, 714, 715, 716, 717, 718, 719, 720, 999}


def split_top_level(text):
    """Splits 'a=*fp32, MODE="x,y", B=1' at the commas outside quotes and brackets."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_signature(sig):
    """Returns ([(name, type, constexpr-text)], launch options).

    `type` is a pointer ("*fp32") or scalar ("i64") type of a run-time
    parameter, else None; `constexpr-text` is the value text of a constexpr
    ("1024", "True", "'copy'", "tl.float16", "0.25") or "None" for a pointer
    specialized for None (it then leaves the kernel's ABI, as in kilnc).
    """
    params, options = [], {}
    for entry in split_top_level(sig):
        name, _, value = entry.partition("=")
        name, value = name.strip(), value.strip()
        if name in LAUNCH_OPTIONS:
            options[name] = int(value)
        elif value.startswith("("):  # a tuple parameter: its text, hints kept
            params.append((name, value, None))
        elif value.startswith("*") or value.split(":")[0] in SCALAR_CTYPES:
            params.append((name, value.split(":")[0], None))
        else:
            params.append((name, None, value))
    return params, options


def tuple_leaves(text):
    """The run-time elements of a tuple parameter's type text, in order:
    [(tuple_index, type, equal_to_1)], as kilnc flattens them into the entry
    point's parameters (constexpr elements left out)."""
    leaves = []

    def walk(text, index):
        for i, element in enumerate(split_top_level(text.strip()[1:-1])):
            if element.startswith("("):
                walk(element, index + [i])
            elif element.startswith("*") or element.split(":")[0] in SCALAR_CTYPES:
                leaves.append((index + [i], element.split(":")[0], element.endswith(":1")))

    walk(text, [])
    return leaves


def element_at(value, index):
    for i in index:
        value = value[i]
    return value


def constexpr_value(text, tl=None, module=None):
    """The Python value of a constexpr's text (tl: triton.language, for tl.X;
    module: the kernel's, for a jit function named by its dotted path)."""
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    if text[:1] in "'\"":
        return text[1:-1]
    if text.startswith("tl."):
        return getattr(tl, text[3:]) if tl else text
    try:
        return int(text, 0)
    except ValueError:
        pass
    if module is not None and re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", text):
        value = module
        for attr in text.split("."):
            value = getattr(value, attr)
        return value
    return float(text)


def runtime_params(case):
    """The case's run-time parameters, in order: [(name, type)]."""
    return [(n, t) for n, t, _ in parse_signature(case["sig"])[0] if t is not None]


def cubin_name(case):
    return case["id"] + ".cubin"


# ---------------------------------------------------------------------------
# Corpus enumeration (--coverage, --self-check): check_corpus.py's reading.

def corpus_kernels():
    """{(file, kernel): [signature, ...]} and {(file, kernel): why excluded}."""
    sys.path.insert(0, CORPUS)
    import check_corpus
    variants, _, _ = check_corpus.read_corpus(os.path.abspath(CORPUS))
    kernels = {}
    for v in variants:
        sig = v.args[v.args.index("-s") + 1] if "-s" in v.args else ""
        kernels.setdefault((v.path, v.kernel), []).append(sig)
    # Every corpus kernel compiles on some arch (KNOWN_BACKEND_FAILURES lists
    # only arch-specific failures), so none is excluded.
    excluded = {}
    return kernels, excluded


def kernel_source(path, kernel):
    """The text of `def kernel(...)` up to the next top-level statement."""
    with open(os.path.join(CORPUS, path), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^def %s\(.*?(?=^\S)" % re.escape(kernel), text + "\n#", re.M | re.S)
    return m.group(0) if m else ""


def coverage():
    kernels, excluded = corpus_kernels()
    covered = {(c["file"], c["kernel"]) for c in CASES}
    missing = [k for k in kernels if k not in excluded and k not in covered]
    for path, kernel in missing:
        print(f"no case: {path} -n {kernel}")
    for (path, kernel), why in sorted(excluded.items()):
        print(f"excluded: {path} -n {kernel} ({why})")
    eligible = len(kernels) - len(excluded)
    print(f"{len(CASES)} cases cover {eligible - len(missing)} of the {eligible} corpus "
          f"kernels ({len(kernels)} kernels in all)")
    return 1 if missing else 0


def self_check():
    """Checks the case list without torch: names, arguments, outputs."""
    kernels, excluded = corpus_kernels()
    problems, ids = [], set()
    for case in CASES:
        cid = case["id"]
        if cid in ids:
            problems.append(f"{cid}: duplicate id")
        ids.add(cid)
        if (case["file"], case["kernel"]) not in kernels:
            problems.append(f"{cid}: {case['file']} -n {case['kernel']} is not a corpus kernel")
        elif (case["file"], case["kernel"]) in excluded:
            problems.append(f"{cid}: {case['kernel']} is excluded: {excluded[(case['file'], case['kernel'])]}")
        params, _ = parse_signature(case["sig"])
        names = [n for n, _, _ in params]
        src = kernel_source(case["file"], case["kernel"])
        m = re.match(r"def \w+\((.*?)\):", src, re.S)
        declared = [p.split(":")[0].split("=")[0].strip() for p in m.group(1).split(",")] if m else []
        defaults = {p.split(":")[0].split("=")[0].strip() for p in (m.group(1).split(",") if m else [])
                    if "=" in p}
        for n in names:
            if n not in declared:
                problems.append(f"{cid}: signature names '{n}', which {case['kernel']} lacks")
        if [n for n in declared if n in names] != names:
            problems.append(f"{cid}: signature order differs from the kernel's parameters")
        runtime = [n for n, t in runtime_params(case)]
        if sorted(runtime) != sorted(case["args"]):
            problems.append(f"{cid}: args {sorted(case['args'])} != run-time parameters {sorted(runtime)}")
        missing = [n for n in declared if n not in names and n not in defaults]
        if missing and not case.get("heuristics"):
            problems.append(f"{cid}: parameters {missing} have no value (and no default)")
        for out in case["outputs"]:
            if out not in case["args"] or not isinstance(case["args"][out], tuple):
                problems.append(f"{cid}: output '{out}' is not a buffer argument")
        for name, spec in case["args"].items():
            t = dict(runtime_params(case)).get(name)
            if t is None:
                continue
            if t.startswith("("):
                try:
                    ok = all(isinstance(element_at(spec, index), (int, float)) for index, _, _ in tuple_leaves(t))
                except (TypeError, IndexError):
                    ok = False
                if not ok:
                    problems.append(f"{cid}: '{name}' is the tuple {t} but its argument is {spec!r}")
                continue
            if t.startswith("*") != (isinstance(spec, tuple) or callable(spec)):
                problems.append(f"{cid}: '{name}' is {t} but its argument is {spec!r}")
        for name in case.get("per_output", {}):
            if name not in case["outputs"]:
                problems.append(f"{cid}: per_output names '{name}', not an output")
        if not case["outputs"]:
            problems.append(f"{cid}: no outputs")
        if "tol" not in case and "ulp" not in case:
            problems.append(f"{cid}: no tol= or ulp=")
        if len(case["grid"]) not in (1, 2, 3):
            problems.append(f"{cid}: grid {case['grid']}")
    for p in problems:
        print("FAIL " + p)
    print(f"self-check: {len(CASES)} cases, {len(problems)} problems")
    return 1 if problems else 0


# ---------------------------------------------------------------------------
# On the GPU machine.

def make_input(torch, spec, gen, name):
    """A CUDA tensor for an argument spec (see differential_cases.py)."""
    if callable(spec):
        return spec(torch, gen)
    kind, dtype, numel, *extra = spec
    dt = getattr(torch, dtype)
    dev = "cuda"
    # torch supports little more than copies and views of uint16/32/64:
    # those go through the signed type of their width.
    signed = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}.get(dt)

    def f32(t):
        return t.to(dt)

    if kind == "zeros":
        return torch.zeros(numel, dtype=signed or dt, device=dev).view(dt)
    if kind == "full":
        return torch.full((numel,), extra[0], dtype=signed or dt, device=dev).view(dt)
    if kind == "arange":
        return torch.arange(numel, device=dev).to(dt)
    if kind == "randn":
        scale = extra[0] if extra else 1.0
        return f32(torch.randn(numel, generator=gen, device=dev, dtype=torch.float64 if dt == torch.float64
                               else torch.float32) * scale)
    if kind == "uniform":
        lo, hi = extra if extra else (-1.0, 1.0)
        base = torch.rand(numel, generator=gen, device=dev,
                          dtype=torch.float64 if dt == torch.float64 else torch.float32)
        return f32(base * (hi - lo) + lo)
    if kind == "wide":  # magnitudes from 1e-8 to 1e6, both signs
        mant = torch.randn(numel, generator=gen, device=dev)
        expo = torch.rand(numel, generator=gen, device=dev) * 14 - 8
        return f32(mant * torch.pow(10.0, expo))
    if kind == "ties":  # small integers: many equal values
        return torch.randint(-3, 4, (numel,), generator=gen, device=dev).to(dt)
    if kind in ("specials", "coarse"):
        # specials: normal values with 0, -0, ±inf and NaN sprinkled in;
        # coarse: small integers (many ties) with a few NaNs.
        if kind == "coarse":
            x = torch.randint(-3, 4, (numel,), generator=gen, device=dev).float()
            picks = torch.tensor([float("nan")], device=dev)
        else:
            x = torch.randn(numel, generator=gen, device=dev)
            picks = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan")], device=dev)
        which = torch.randint(0, 100, (numel,), generator=gen, device=dev)
        sel = torch.randint(0, len(picks), (numel,), generator=gen, device=dev)
        x = torch.where(which < 15, picks[sel], x)
        return f32(x)
    if kind == "randbits":  # every bit pattern of the dtype
        size = torch.empty(0, dtype=dt).element_size()
        raw = torch.randint(0, 256, (numel * size,), generator=gen, device=dev, dtype=torch.uint8)
        return raw.view(dt)
    if kind == "perm":
        return torch.randperm(numel, generator=gen, device=dev).to(dt)
    if kind == "window":  # zeros except randn in [start, start + length)
        start, length = extra
        t = torch.zeros(numel, dtype=dt, device=dev)
        t[start:start + length] = torch.randn(length, generator=gen, device=dev).to(dt)
        return t
    bounds = dict(randint=(-1000, 1000), small=(-3, 4), natural=(0, 1000), bits=(0, 2)).get(kind)
    if kind in ("randint", "index", "nonzero") and extra:
        bounds = tuple(extra) if kind != "index" else (0, extra[0])
    if bounds is None:
        raise ValueError(f"argument {name}: unknown input kind {kind!r}")
    vals = torch.randint(*bounds, (numel,), generator=gen, device=dev, dtype=torch.int64)
    if kind == "nonzero":  # magnitudes in [lo, hi), random signs
        vals = vals * (torch.randint(0, 2, (numel,), generator=gen, device=dev) * 2 - 1)
    if dt.is_floating_point or dt == torch.bool:
        return vals.to(dt)
    return vals.to(signed).view(dt) if signed else vals.to(dt)


def scalar_holder(type_, value):
    """A ctypes object holding a scalar argument in the kernel's ABI."""
    import struct
    if type_ == "fp16":
        return ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", value))[0])
    if type_ == "bf16":  # round to nearest even from fp32
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        return ctypes.c_uint16((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)
    return SCALAR_CTYPES[type_](value)


def compare(torch, a, b, spec):
    """(ok, metric, detail) for one output: a from Kiln, b from Triton."""
    n_bad, first = 0, None
    if not a.is_floating_point() or (spec.get("tol", 0) == 0 and "ulp" not in spec):
        if a.is_floating_point():
            ai, bi = bits_of(torch, a), bits_of(torch, b)
            bad = (ai != bi) & ~(a.float().isnan() & b.float().isnan())
        else:
            width = a.element_size()
            ai = a.view(torch.uint8).view(-1, width)
            bi = b.view(torch.uint8).view(-1, width)
            bad = (ai != bi).any(dim=1)
        n_bad = int(bad.sum().item())
        metric = 0.0 if n_bad == 0 else float("inf")
    elif "ulp" in spec:
        oa, ob = ordered(torch, a), ordered(torch, b)
        nan_a, nan_b = a.float().isnan(), b.float().isnan()
        # In int64 while the signs agree (exact); else far apart anyway.
        same_sign = (oa >= 0) == (ob >= 0)
        dist = torch.where(same_sign, (oa - ob).abs().double(), oa.abs().double() + ob.abs().double())
        dist = torch.where(nan_a & nan_b, torch.zeros_like(dist), dist)
        dist = torch.where(nan_a ^ nan_b, torch.full_like(dist, float("inf")), dist)
        bad = dist > spec["ulp"]
        n_bad = int(bad.sum().item())
        metric = dist.max().item() if dist.numel() else 0.0
    else:
        # Relative to the output's scale: sums near zero would make a
        # per-element relative error meaningless.
        af, bf = a.double(), b.double()
        same = (af == bf) | (af.isnan() & bf.isnan())
        finite = bf.isfinite()
        scale = bf[finite].abs().max().clamp_min(1e-30) if finite.any() else torch.tensor(1.0)
        diff = ((af - bf).abs() / scale)
        diff = torch.where(same, torch.zeros_like(diff), diff)
        diff = torch.where(diff.isnan(), torch.full_like(diff, float("inf")), diff)
        bad = diff > spec["tol"]
        n_bad = int(bad.sum().item())
        metric = diff.max().item() if diff.numel() else 0.0
    if n_bad:
        i = int(bad.nonzero()[0].item())
        first = f"{n_bad} of {a.numel()} differ, first at [{i}]: kiln {show(torch, a, i)} triton {show(torch, b, i)}"
    return n_bad == 0, metric, first


def bits_of(torch, t):
    """The bits of a tensor as signed integers of its width."""
    return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def ordered(torch, t):
    """Float bits mapped to integers that order like the values (+0 and -0 → 0)."""
    b = bits_of(torch, t).long()
    mag = b & ((1 << (8 * t.element_size() - 1)) - 1)
    return torch.where(b < 0, -mag, mag)


def show(torch, t, i):
    """Element i as a value (and its bits, for floats), read from its bytes."""
    w = t.element_size()
    raw = bytes(t.reshape(-1).view(torch.uint8)[i * w:(i + 1) * w].cpu().tolist())
    if t.is_floating_point():
        return f"{t[i].float().item()!r} (0x{int.from_bytes(raw, 'little'):x})"
    return str(int.from_bytes(raw, "little", signed=t.dtype.is_signed))


def unwrap_triton(kernel_obj):
    """(JITFunction, [Heuristics wrappers, outermost first])."""
    from triton.runtime.autotuner import Heuristics
    from triton.runtime.jit import JITFunction
    wrappers = []
    fn = kernel_obj
    while not isinstance(fn, JITFunction):
        if isinstance(fn, Heuristics):
            wrappers.append(fn)
        fn = fn.fn
    return fn, wrappers


def run_case(case, opts, torch, triton, cuda):
    params, options = parse_signature(case["sig"])
    meta = {}
    meta_path = os.path.join(opts.cubins, case["id"] + ".json")
    cubin_path = os.path.join(opts.cubins, cubin_name(case))
    if not os.path.exists(cubin_path):
        return dict(status="NOT RUN", error="no cubin (kilnc did not compile it)")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
    num_warps = meta.get("num_warps", options.get("num_warps", 4))
    num_stages = options.get("num_stages", meta.get("num_stages", 3))
    shared = meta.get("shared_bytes", 0)
    # A tuple parameter is its run-time elements, one parameter each.
    abi = [(p["name"], p["type"]) for p in meta.get("params", [])]
    ours = []
    for n, t, _ in params:
        if t is not None and t.startswith("("):
            ours += [(n, leaf) for _, leaf, _ in tuple_leaves(t)]
        elif t is not None:
            ours.append((n, t))
    if abi and abi != ours:
        return dict(status="ERROR", error=f"cubin parameters {abi} differ from the signature's {ours}")

    gen = torch.Generator(device="cuda").manual_seed(case.get("seed", 1234))
    inputs = {}
    # A tuple argument is a buffer spec, except for a tuple parameter's value.
    tuple_params = {n for n, t, _ in params if t is not None and t.startswith("(")}
    for name, spec in case["args"].items():
        buffer = callable(spec) or (isinstance(spec, tuple) and name not in tuple_params)
        inputs[name] = make_input(torch, spec, gen, name) if buffer else spec
    # Buffers the kernel writes get one copy each; read-only inputs are shared.
    kiln_args = dict(inputs)
    triton_args = dict(inputs)
    for name in case["outputs"]:
        kiln_args[name] = inputs[name].clone()

    # Kiln: the cubin through the driver API.
    def check(status, what):
        if status != 0:
            raise CudaError(status, f"{what} failed with CUresult {status}")

    with open(cubin_path, "rb") as f:
        image = f.read()
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
    try:
        check(cuda.cuModuleGetFunction(ctypes.byref(function), module,
                                       meta.get("entry", case["kernel"]).encode()), "cuModuleGetFunction")
        if shared > 48 * 1024:
            check(cuda.cuFuncSetAttribute(function, 8, shared),  # MAX_DYNAMIC_SHARED_SIZE_BYTES
                  "cuFuncSetAttribute")
        holders = []
        # A `:1` parameter is the constant 1, dropped from the entry point's
        # parameters (as the generated launchers check it and pass nothing).
        dropped = {(p["name"], tuple(p.get("tuple_index", ()))) for p in meta.get("params", [])
                   if p.get("equal_to_1")}
        arguments = []  # (name, tuple index, type, value)
        for name, type_, _ in params:
            if type_ is not None and type_.startswith("("):
                arguments += [(name, tuple(index), leaf, element_at(kiln_args[name], index))
                              for index, leaf, _ in tuple_leaves(type_)]
            elif type_ is not None:
                arguments.append((name, (), type_, kiln_args[name]))
        for name, index, type_, value in arguments:
            if (name, index) in dropped:
                if value != 1:
                    return dict(status="ERROR", error=f"{name}{list(index) if index else ''} is specialized "
                                                      f"to 1 (`:1`) but is {value}")
                continue
            if type_.startswith("*"):
                holders.append(ctypes.c_uint64(value.data_ptr()))
            else:
                holders.append(scalar_holder(type_, value))
        grid = tuple(case["grid"]) + (1,) * (3 - len(case["grid"]))
        # With "global_scratch_bytes" the entry point takes one more pointer,
        # after all the others: that many bytes per program (CTA) of the
        # grid, or null when this arch's code uses none. Alive until the
        # kernel has run.
        scratch = None
        if "global_scratch_bytes" in meta:
            per_program = meta["global_scratch_bytes"]
            if per_program:
                scratch = torch.zeros(max(1, per_program * grid[0] * grid[1] * grid[2]), dtype=torch.uint8,
                                      device="cuda")
            holders.append(ctypes.c_uint64(scratch.data_ptr() if scratch is not None else 0))
        pointers = (ctypes.c_void_p * max(1, len(holders)))(
            *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        torch.cuda.synchronize()
        # launch_warps: kilnc compiled the kernel for fewer warps than the
        # config's (wgmma's warpgroups along M).
        threads = 32 * (meta.get("launch_warps", num_warps) + meta.get("producer_warps", 0))
        check(cuda.cuLaunchKernel(function, grid[0], grid[1], grid[2], threads, 1, 1,
                                  shared, None, pointers, None), "cuLaunchKernel")
        check(cuda.cuCtxSynchronize(), "kernel (cuCtxSynchronize)")
    finally:
        cuda.cuModuleUnload(module)
    if opts.kiln_only:
        return dict(status="ok", worst=0.0, bound=0, unit="(Kiln only)", detail="")

    # Upstream Triton: the same source file, through its JIT.
    import triton.language as tl
    spec = importlib.util.spec_from_file_location(
        "corpus_" + case["id"], os.path.join(CORPUS, case["file"]))
    source = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source)
    jit_fn, heuristics = unwrap_triton(getattr(source, case["kernel"]))
    kwargs = {}
    for name, type_, const in params:
        kwargs[name] = (triton_args[name] if type_ is not None
                        else constexpr_value(const, tl, source))
    # Constexprs the signature leaves out: the kernel's heuristics (outermost
    # first, as upstream applies them), else the parameter's default.
    for h in heuristics:
        for name, fn in h.values.items():
            if name not in kwargs:
                kwargs[name] = fn(dict(kwargs))
    # kilnc resolves the same heuristics itself: a disagreement is a Kiln bug.
    for c in meta.get("constexprs", []):
        theirs = kwargs.get(c["name"])
        if isinstance(theirs, (bool, int)) and str(theirs) != c["value"]:
            return dict(status="MISMATCH", worst=float("inf"), bound=0, unit="",
                        detail=f"kilnc resolved {c['name']}={c['value']}, Triton {theirs}")
    jit_fn[case["grid"]](**kwargs, num_warps=num_warps, num_stages=num_stages)
    torch.cuda.synchronize()

    worst, ok, details = 0.0, True, []
    for name in case["outputs"]:
        rule = dict(tol=case.get("tol", 0))
        if "ulp" in case:
            rule = dict(ulp=case["ulp"])
        rule = case.get("per_output", {}).get(name, rule)
        good, metric, detail = compare(torch, kiln_args[name], triton_args[name], rule)
        ok &= good
        worst = max(worst, metric)
        if detail:
            details.append(f"{name}: {detail}")
    bound = case.get("ulp", case.get("tol", 0))
    unit = "ulp" if "ulp" in case else "relative"
    return dict(status="ok" if ok else "MISMATCH", worst=worst, bound=bound, unit=unit,
                detail="; ".join(details))


class CudaError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def child(opts, cases, start, log_path):
    """Runs cases[start:], appending one JSON line per event to log_path."""
    import torch
    import triton

    cuda = ctypes.CDLL("libcuda.so.1")
    torch.zeros(1, device="cuda")  # the primary context, current on this thread
    log = open(log_path, "a")

    def emit(**record):
        log.write(json.dumps(record) + "\n")
        log.flush()

    emit(event="env", device=torch.cuda.get_device_name(), triton=triton.__version__,
         torch=torch.__version__)
    for index in range(start, len(cases)):
        case = cases[index]
        emit(event="start", index=index, id=case["id"])
        timer = threading.Timer(opts.timeout, lambda: (emit(
            event="result", index=index, id=case["id"], status="ERROR",
            error=f"timed out after {opts.timeout} s"), os._exit(4)))
        timer.start()
        try:
            result = run_case(case, opts, torch, triton, cuda)
        except CudaError as error:
            result = dict(status="ERROR", error=str(error))
            if error.status in STICKY_ERRORS:
                timer.cancel()
                emit(event="result", index=index, id=case["id"], **result)
                os._exit(3)  # the context is lost: the parent starts a fresh child
        except Exception as error:  # a case that cannot run is a failure too
            result = dict(status="ERROR", error=f"{type(error).__name__}: {error}")
        timer.cancel()
        emit(event="result", index=index, id=case["id"], **result)
        torch.cuda.empty_cache()
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubins", help="directory of the Kiln cubins (and their .json metadata)")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--filter", default="", help="only cases whose id or file contains one of these (comma-separated)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per case")
    parser.add_argument("--list", action="store_true",
                        help="print `id|file|kernel|signature|flags` per case (for the build script)")
    parser.add_argument("--coverage", action="store_true",
                        help="list corpus kernels that have no case; exit 1 if any")
    parser.add_argument("--self-check", action="store_true",
                        help="check the case list against the corpus (no torch needed)")
    parser.add_argument("--kiln-only", action="store_true",
                        help="run only the Kiln cubins, without comparing (for compute-sanitizer)")
    parser.add_argument("--child-from", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-log", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.list:
        for case in CASES:
            flags = "may-fail" if case.get("may_fail") else ""
            print(f"{case['id']}|{case['file']}|{case['kernel']}|{case['sig']}|{flags}")
        return 0
    if opts.coverage:
        return coverage()
    if opts.self_check:
        return self_check()
    filters = opts.filter.split(",")
    cases = [c for c in CASES if any(f in c["id"] or f in c["file"] for f in filters)]
    if opts.child_from is not None:
        return child(opts, cases, opts.child_from, opts.child_log)
    if not opts.cubins:
        parser.error("--cubins is required")

    os.makedirs(opts.out, exist_ok=True)
    log_path = os.path.join(opts.out, "differential.log.jsonl")
    open(log_path, "w").close()
    results, env, start, printed = {}, {}, 0, 0
    while start < len(cases):
        cmd = [sys.executable, os.path.abspath(__file__), "--cubins", opts.cubins,
               "--filter", opts.filter, "--timeout", str(opts.timeout),
               "--child-from", str(start), "--child-log", log_path] + \
            (["--kiln-only"] if opts.kiln_only else [])
        code = subprocess.call(cmd)
        started = None
        with open(log_path) as f:
            for line in f:
                record = json.loads(line)
                if record["event"] == "env":
                    env = record
                elif record["event"] == "start":
                    started = max(record["index"], started if started is not None else -1)
                elif record["event"] == "result":
                    results.setdefault(record["index"], record)
        while printed in results:
            print_result(cases[printed], results[printed])
            printed += 1
        if code == 0:
            break
        if started is None or started < start:  # died before its first case
            reason = f"the runner exited with status {code} before the case"
            for index in range(start, len(cases)):
                results.setdefault(index, dict(id=cases[index]["id"], status="ERROR", error=reason))
            break
        results.setdefault(started, dict(id=cases[started]["id"], status="ERROR",
                                         error=f"the runner died during the case (exit status {code})"))
        start = started + 1
    for index in range(printed, len(cases)):
        results.setdefault(index, dict(id=cases[index]["id"], status="ERROR", error="not reached"))
        print_result(cases[index], results[index])
    passed = sum(r["status"] == "ok" for r in results.values())
    failed = len(cases) - passed
    with open(os.path.join(opts.out, "differential.json"), "w") as f:
        json.dump(dict(device=env.get("device"), triton=env.get("triton"), torch=env.get("torch"),
                       cases=[results[i] for i in sorted(results)]), f, indent=1)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def print_result(case, r):
    label = f"{case['id']} ({case['file']} -n {case['kernel']})"
    status = r["status"]
    if status in ("ok", "MISMATCH"):
        line = f"{status:8} {label}: worst {r['unit']} difference {r['worst']:.3g} (bound {r['bound']})"
        if r.get("detail"):
            line += f"; {r['detail']}"
    else:
        line = f"{status:8} {label}: {r.get('error', '')}"
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
