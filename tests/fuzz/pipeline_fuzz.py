#!/usr/bin/env python3
"""Whole-pipeline fuzzing: random and mutated kernels through kilnc to cubins.

Two sources of kernels, interleaved:

- generated (tests/fuzz/kernelgen.py): valid by construction, so ANY failure
  of kilnc is a finding: a crash, an internal error, a verifier failure after
  a pass, a ptxas rejection, a hang, and also a clean diagnostic (the
  generator or Kiln is wrong: triage which);
- mutated corpus variants (tests/kernels/**.py `# kiln-variant:` lines):
  their signatures (block sizes x2 or /2, pointer dtypes, hints, num_warps,
  num_stages) and sources (dtype names, reductions, operators, literals)
  changed at random. Those may be invalid, so a clean `file:line:col: error:`
  diagnostic is fine there; crashes, internal errors, verifier failures,
  ptxas rejections and hangs are findings.

Each kernel is compiled with `kilnc compile ... --arch A -o X.cubin` for each
arch (--archs; generated kernels with even seeds for the Hopper archs only, so
that fp8e4nv is generated too). A finding goes to OUT/findings/CLASS-N/ with
the kernel, the command and kilnc's output, once per distinct first error.

    python3 tests/fuzz/pipeline_fuzz.py --kilnc build/compiler/driver/kilnc \
        --seconds 600 [--seed 1] [--archs sm_90a,sm_90,sm_80] [--out build/pipeline-fuzz]
        [--mutate 0.3] [--jobs 1]
    python3 tests/fuzz/pipeline_fuzz.py --kilnc K --replay DIR   # re-run one finding

Prints one line per finding and a summary (kernels, compiles, findings by
class, features covered); exits 1 if there were findings. Python 3 standard
library only.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "tests", "kernels")
sys.path.insert(0, HERE)
sys.path.insert(0, CORPUS)
import kernelgen  # noqa: E402

HOPPER = ("sm_90a", "sm_90")


def classify(rc, err, timed_out):
    """None for success; else the finding's class."""
    if timed_out:
        return "timeout"
    if rc == 0:
        return None
    if "AddressSanitizer" in err or "LeakSanitizer" in err or "runtime error:" in err:
        return "sanitizer"
    if rc < 0 or rc >= 128 or "Stack dump" in err or "PLEASE submit a bug report" in err:
        return "crash"
    if re.search(r"internal error|LLVM ERROR|UNREACHABLE|Assertion .* failed", err):
        return "internal"
    if re.search(r"ptxas", err, re.I):
        return "ptxas"
    if re.search(r"failed to legalize|failed to verify|verification failed|does not verify", err):
        return "verifier"
    if re.search(r"error: '[\w.]+' op ", err) and not re.search(r"need[s]? sm_\d", err):
        return "verifier"
    if re.search(r"^[^\s:][^:\n]*:\d+:\d+: error: ", err, re.M):
        return "diagnostic"
    return "internal"  # an error without a source location: not user-facing


def error_key(cls, err):
    """The first error line with locations and numbers blanked: one finding
    per distinct failure."""
    lines = [l for l in err.splitlines() if "error" in l.lower() or "Assertion" in l]
    first = lines[0] if lines else (err.strip().splitlines() or [""])[0]
    first = re.sub(r"^[^\s:]*:\d+:\d+: ", "", first)
    first = re.sub(r"\d+", "N", first)
    first = re.sub(r"'[^']*'", "'X'", first) if cls == "diagnostic" else first
    return cls + ": " + first[:200]


def cpu_limit(seconds):
    """A preexec_fn limiting CPU time (kilnc's and, separately, ptxas's): on
    a loaded machine wall time says nothing about a hang."""
    def apply():
        resource.setrlimit(resource.RLIMIT_CPU, (int(seconds), int(seconds) + 5))
    return apply


def compile_one(kilnc, path, kernel, sig, arch, workdir, timeout, extra=()):
    """Runs kilnc; `timeout` is CPU seconds (a process over it is a hang),
    with 50 times as much wall time as a last resort."""
    out = os.path.join(workdir, f"k-{arch}.cubin")
    cmd = [kilnc, "compile", path, "-n", kernel, "-s", sig, "--arch", arch, "-o", out,
           "--metadata", os.path.join(workdir, f"k-{arch}.json")] + list(extra)
    start = time.time()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout * 50, errors="replace",
                           preexec_fn=cpu_limit(timeout))
        rc, err, timed_out = p.returncode, p.stderr + p.stdout, False
        # SIGXCPU (or SIGKILL past the hard limit): over the CPU budget.
        timed_out = rc in (-24, -9)
    except subprocess.TimeoutExpired as e:
        rc, err, timed_out = -9, (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) \
            else (e.stderr or ""), True
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cmd, rc, err, timed_out, cpu


# ---------------------------------------------------------------------------
# Mutation of the corpus.

def corpus_variants():
    import check_corpus
    variants, _, _ = check_corpus.read_corpus(CORPUS)
    out = []
    for v in variants:
        if "-s" not in v.args:
            continue
        out.append((v.path, v.kernel, v.args))
    return out


POINTER_TYPES = ["fp32", "fp16", "bf16"]
SOURCE_SWAPS = [
    (r"tl\.float32\b", ["tl.float16", "tl.bfloat16"]),
    (r"tl\.float16\b", ["tl.float32", "tl.bfloat16", "tl.float8e5"]),
    (r"tl\.sum\(", ["tl.max(", "tl.min(", "tl.cumsum("]),
    (r"tl\.max\(", ["tl.sum(", "tl.argmax("]),
    (r"tl\.exp\(", ["tl.exp2(", "tl.sin(", "tl.log("]),
    (r" \+ ", [" * ", " - "]),
    (r" \* ", [" + ", " / "]),
    (r"\b(16|32|64|128)\b", ["8", "16", "32", "64", "256"]),
    (r"tl\.dot\(([^,()]+), ([^,()]+)\)", [r"tl.dot(\2, \1)", r"tl.dot(\1, tl.trans(\2))"]),
    (r"axis=1\b", ["axis=0"]),
    (r"axis=0\b", ["axis=1"]),
    (r"mask=([^,)]+)", ["mask=None"]),
]


def mutate_signature(sig, rng):
    entries = [e.strip() for e in re.split(r",(?![^\[<]*[\]>])", sig) if e.strip()]
    named = all("=" in e for e in entries)
    if not named:
        return sig
    swap = {}
    out = []
    for e in entries:
        name, _, value = e.partition("=")
        if name == "num_warps":
            value = str(rng.choice([1, 2, 4, 8, 16])) if rng.random() < 0.5 else value
        elif name == "num_stages":
            value = str(rng.choice([1, 2, 3, 4, 5])) if rng.random() < 0.5 else value
        elif value.startswith("*"):
            base, _, hint = value[1:].partition(":")
            if base in POINTER_TYPES and rng.random() < 0.3:
                swap.setdefault(base, rng.choice(POINTER_TYPES))
                base = swap[base]
            if rng.random() < 0.2:
                hint = "" if hint else "16"
            value = "*" + base + (":" + hint if hint else "")
        elif re.fullmatch(r"\d+", value) and int(value) >= 2 and (int(value) & (int(value) - 1)) == 0:
            if rng.random() < 0.4:
                value = str(max(1, min(1024, int(value) * rng.choice([2, 2, 4]) // rng.choice([1, 4]))))
        out.append(f"{name}={value}")
    if not any(e.startswith("num_warps=") for e in out) and rng.random() < 0.3:
        out.append(f"num_warps={rng.choice([1, 2, 8])}")
    return ", ".join(out)


def mutate_source(text, rng):
    for _ in range(rng.randint(1, 3)):
        pattern, repl = rng.choice(SOURCE_SWAPS)
        matches = list(re.finditer(pattern, text))
        # Leave the kiln-variant header and imports alone.
        matches = [m for m in matches if not text[:m.start()].splitlines()[-1:] or
                   not text[:m.start()].splitlines()[-1].lstrip().startswith("#")]
        if not matches:
            continue
        m = rng.choice(matches)
        new = m.expand(rng.choice(repl)) if "\\" in repl[0] else rng.choice(repl)
        text = text[:m.start()] + new + text[m.end():]
    return text


# ---------------------------------------------------------------------------

def run_item(item, opts):
    """Compiles one kernel for its archs; returns (item, [(arch, cls, key, cmd, err, secs)])."""
    results = []
    workdir = tempfile.mkdtemp(prefix="pf-", dir=opts.tmp)
    path = os.path.join(workdir, item["file"])
    with open(path, "w") as f:
        f.write(item["source"])
    for arch in item["archs"]:
        cmd, rc, err, timed_out, secs = compile_one(opts.kilnc, path, item["kernel"], item["sig"], arch,
                                                    workdir, opts.timeout, item.get("extra", ()))
        cls = classify(rc, err, timed_out)
        if cls == "diagnostic" and item["kind"] == "mutated":
            cls = None  # a clean diagnostic for a possibly invalid kernel
        results.append((arch, cls, error_key(cls, err) if cls else None, cmd, err, secs))
        if cls and item["kind"] == "generated" and cls == "diagnostic":
            break  # the same diagnostic on every arch, most likely
    subprocess.run(["rm", "-rf", workdir])
    return item, results


def make_item(n, opts, rng, variants):
    if variants and rng.random() < opts.mutate:
        path, kernel, args = rng.choice(variants)
        sig = args[args.index("-s") + 1]
        extra = []
        for flag in ("-w", "-ns", "--num-warps", "--num-stages"):
            if flag in args:
                extra += [flag, args[args.index(flag) + 1]]
        with open(os.path.join(CORPUS, path)) as f:
            text = f.read()
        if rng.random() < 0.5:
            text = mutate_source(text, rng)
        sig = mutate_signature(sig, rng)
        return dict(kind="mutated", id=f"m{n}", origin=f"{path} -n {kernel}", file=os.path.basename(path),
                    source=text, kernel=kernel, sig=sig, extra=extra,
                    archs=[rng.choice(opts.archs)])
    seed = opts.seed + n
    archs = [a for a in opts.archs if a in HOPPER] if seed % 2 == 0 else list(opts.archs)
    archs = archs or list(opts.archs)
    case = kernelgen.generate(seed, archs)
    return dict(kind="generated", id=f"g{seed}", origin=f"kernelgen seed {seed}", file=f"gen_{seed}.py",
                source=case["source"], kernel=case["kernel"], sig=case["sig"], archs=archs,
                features=case["features"])


def save_finding(opts, item, arch, cls, key, cmd, err, index):
    d = os.path.join(opts.out, "findings", f"{cls}-{index}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, item["file"]), "w") as f:
        f.write(item["source"])
    args = ["kilnc"] + cmd[1:]
    args[2] = item["file"]
    args = [a for a in args]
    # -o/--metadata into the finding's directory.
    for flag in ("-o", "--metadata"):
        i = args.index(flag)
        args[i + 1] = os.path.basename(args[i + 1])
    with open(os.path.join(d, "cmd.sh"), "w") as f:
        f.write("# " + item["origin"] + "\n" + " ".join(shlex.quote(a) for a in args) + "\n")
    with open(os.path.join(d, "kilnc.log"), "w") as f:
        f.write(err)
    with open(os.path.join(d, "finding.json"), "w") as f:
        json.dump(dict(cls=cls, key=key, arch=arch, kind=item["kind"], origin=item["origin"],
                       kernel=item["kernel"], sig=item["sig"], extra=item.get("extra", [])), f, indent=1)
    return d


def replay(opts):
    with open(os.path.join(opts.replay, "finding.json")) as f:
        meta = json.load(f)
    src = [n for n in os.listdir(opts.replay) if n.endswith(".py")][0]
    with tempfile.TemporaryDirectory() as tmp:
        cmd, rc, err, timed_out, secs = compile_one(opts.kilnc, os.path.join(opts.replay, src), meta["kernel"],
                                                    meta["sig"], meta["arch"], tmp, opts.timeout,
                                                    meta.get("extra", []))
    cls = classify(rc, err, timed_out)
    if cls == "diagnostic" and meta["kind"] == "mutated":
        cls = None
    print(err.rstrip())
    print(f"replay: {cls or 'ok'} ({secs:.1f} CPU-s); was {meta['cls']}")
    return 1 if cls else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kilnc", required=True)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--count", type=int, default=0, help="stop after this many kernels (0: by time)")
    p.add_argument("--seed", type=int, default=1, help="first generator seed")
    p.add_argument("--archs", default="sm_90a,sm_90,sm_80")
    p.add_argument("--out", default=os.path.join(ROOT, "build", "pipeline-fuzz"))
    p.add_argument("--mutate", type=float, default=0.3, help="share of mutated corpus variants")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=120,
                   help="CPU seconds per kilnc (and per ptxas) run; past it: a hang")
    p.add_argument("--replay", help="re-run the finding in this directory")
    opts = p.parse_args()
    opts.kilnc = os.path.abspath(opts.kilnc)
    opts.archs = opts.archs.split(",")
    if opts.replay:
        return replay(opts)
    os.makedirs(opts.out, exist_ok=True)
    opts.tmp = tempfile.mkdtemp(prefix="pipeline-fuzz-")
    rng = random.Random(opts.seed * 7919 + 1)
    variants = corpus_variants() if opts.mutate > 0 else []
    start = time.time()
    seen = {}
    counts = collections.Counter()
    features = collections.Counter()
    compiles, secs_total, n = 0, 0.0, 0
    log = open(os.path.join(opts.out, "log.jsonl"), "a")
    with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
        pending = set()

        def more():
            nonlocal n
            if opts.count and n >= opts.count:
                return False
            if not opts.count and time.time() - start > opts.seconds:
                return False
            pending.add(pool.submit(run_item, make_item(n, opts, rng, variants), opts))
            n += 1
            return True

        for _ in range(opts.jobs):
            more()
        while pending:
            done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                pending.discard(fut)
                item, results = fut.result()
                counts[item["kind"]] += 1
                features.update(item.get("features", []))
                for arch, cls, key, cmd, err, secs in results:
                    compiles += 1
                    secs_total += secs
                    log.write(json.dumps(dict(id=item["id"], arch=arch, cls=cls, key=key, secs=round(secs, 2)))
                              + "\n")
                    if not cls:
                        continue
                    counts["finding:" + cls] += 1
                    if key in seen:
                        continue
                    d = save_finding(opts, item, arch, cls, key, cmd, err, len(seen))
                    seen[key] = d
                    print(f"FINDING {cls} [{item['id']} {arch}] {key}\n  -> {d}", flush=True)
                log.flush()
                more()
    elapsed = time.time() - start
    print(f"pipeline_fuzz: {n} kernels ({counts['generated']} generated, {counts['mutated']} mutated), "
          f"{compiles} compiles in {elapsed:.0f} s wall ({secs_total / max(1, compiles):.2f} CPU-s each), "
          f"{len(seen)} distinct findings")
    for k, v in sorted(counts.items()):
        if k.startswith("finding:"):
            print(f"  {k[8:]}: {v} compiles")
    print("features of generated kernels: " + ", ".join(f"{k} {v}" for k, v in sorted(features.items())))
    subprocess.run(["rm", "-rf", opts.tmp])
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
