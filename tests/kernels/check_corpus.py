#!/usr/bin/env python3
"""Compiles every variant of the kernel corpus to verified kiln IR.

Each corpus file (tests/kernels/**/*.py) states its variants and what it
covers in comment lines:

    # kiln-variant: -n softmax_rows -s "out_ptr=*fp32, in_ptr=*fp32, n_cols=i32, BLOCK=1024"
    # kiln-covers: softmax_rows: tl.max; tl.sum; for over tl.range

A variant line holds kilnc arguments (shell quoting); for each one this runs

    kilnc compile FILE <args> --arch sm_90a --emit kiln -o /dev/null

and prints `PASS file -n kernel` or `FAIL file -n kernel: <first error line>`,
then `N passed, M failed`. Exit status 1 if anything failed.

KNOWN_FAILURES lists variants expected to fail, one `FILE KERNEL REASON` per
line (KERNEL@N names the kernel's Nth variant only). They print XFAIL and do
not count as failures; a listed variant that passes (XPASS) or an entry that
matches no variant does, so the list stays honest. `--update-known-failures`
rewrites the list from the current results.

With --manifest (the real-world corpus, tests/realworld/), the files stay
unchanged and the variants come from a manifest instead: one line per variant,
`FILE KERNEL KILNC-ARGS...` (shell quoting; FILE relative to the manifest's
directory; `#` starts a comment). Every other .py file under the file's
library (its first path component) is passed to kilnc as `--src`, as a
`triton_kernel(srcs = glob(["**/*.py"]))` would. `--times PATH` writes each
variant's compile time (seconds, all archs) as tab-separated lines.

Covers lines name items of SURFACE, the construct list of docs/language.md;
`--write-language-doc docs/language.md` regenerates that page from the
results (an item is supported when a kernel covering it passes every
variant). Python 3 standard library only.
"""

import argparse
import concurrent.futures
import time
import os
import re
import shlex
import subprocess
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANT_RE = re.compile(r"^#\s*kiln-variant:\s*(.*)$")
COVERS_RE = re.compile(r"^#\s*kiln-covers:\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")


class Variant:
    def __init__(self, path, line, args):
        self.path = path  # relative to the corpus root, with '/'
        self.line = line
        self.args = args
        self.kernel = None
        self.index = 1  # 1-based among the kernel's variants
        self.count = 1
        self.status = None  # PASS FAIL XFAIL XPASS
        self.message = ""
        self.srcs = []  # other files kilnc may import from (--src)
        self.seconds = 0.0

    def label(self):
        text = f"{self.path} -n {self.kernel}"
        if self.count > 1:
            text += f" (variant {self.index}/{self.count})"
        return text


def fail_usage(message):
    print(f"check_corpus.py: {message}", file=sys.stderr)
    sys.exit(2)


def corpus_files(root):
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
        for name in sorted(filenames):
            if name.endswith(".py") and name not in ("check_corpus.py", "run_upstream.py"):
                files.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return files


def read_corpus(root):
    """Returns (variants, covers, problems); covers maps (file, kernel) → [item]."""
    variants, covers, problems = [], OrderedDict(), []
    for rel in corpus_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().splitlines()
        file_variants = []
        for number, text in enumerate(lines, 1):
            m = VARIANT_RE.match(text)
            if m:
                try:
                    args = shlex.split(m.group(1))
                except ValueError as e:
                    problems.append(f"{rel}:{number}: bad kiln-variant line: {e}")
                    continue
                v = Variant(rel, number, args)
                if "-n" in args and args.index("-n") + 1 < len(args):
                    v.kernel = args[args.index("-n") + 1]
                else:
                    problems.append(f"{rel}:{number}: kiln-variant needs -n KERNEL")
                    continue
                file_variants.append(v)
                continue
            m = COVERS_RE.match(text)
            if m:
                items = [i.strip() for i in m.group(2).split(";") if i.strip()]
                covers.setdefault((rel, m.group(1)), []).extend(items)
            elif text.lstrip().startswith("# kiln-"):
                problems.append(f"{rel}:{number}: unrecognised kiln- header line")
        if not file_variants:
            problems.append(f"{rel}: no '# kiln-variant:' lines")
        per_kernel = OrderedDict()
        for v in file_variants:
            per_kernel.setdefault(v.kernel, []).append(v)
        for group in per_kernel.values():
            for i, v in enumerate(group, 1):
                v.index, v.count = i, len(group)
        for (path, kernel) in covers:
            if path == rel and kernel not in per_kernel:
                problems.append(f"{rel}: kiln-covers names '{kernel}', which has no variant")
        variants.extend(file_variants)
    return variants, covers, problems


def read_manifest(path):
    """Returns (variants, problems) from a manifest of unchanged files."""
    root = os.path.dirname(os.path.abspath(path))
    variants, problems, libraries = [], [], {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, text in enumerate(lines, 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        try:
            fields = shlex.split(text)
        except ValueError as e:
            problems.append(f"{path}:{number}: bad manifest line: {e}")
            continue
        if len(fields) < 2:
            problems.append(f"{path}:{number}: expected 'FILE KERNEL ARGS...'")
            continue
        rel, kernel = fields[0], fields[1]
        if not os.path.isfile(os.path.join(root, rel)):
            problems.append(f"{path}:{number}: no file {rel}")
            continue
        v = Variant(rel, number, ["-n", kernel] + fields[2:])
        v.kernel = kernel
        library = rel.split("/")[0]
        if library not in libraries:
            found = []
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, library)):
                dirnames.sort()
                found += [os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/")
                          for n in sorted(filenames) if n.endswith(".py")]
            libraries[library] = found
        v.srcs = [s for s in libraries[library] if s != rel]
        variants.append(v)
    per_kernel = OrderedDict()
    for v in variants:
        per_kernel.setdefault((v.path, v.kernel), []).append(v)
    for group in per_kernel.values():
        for i, v in enumerate(group, 1):
            v.index, v.count = i, len(group)
    return variants, problems


def read_known_failures(path):
    """Returns an ordered map (file, kernel, index-or-None) → reason."""
    known = OrderedDict()
    if not os.path.exists(path):
        return known
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            fields = text.split(None, 2)
            if len(fields) < 3:
                fail_usage(f"{path}:{number}: expected 'FILE KERNEL REASON', got '{text}'")
            kernel, _, index = fields[1].partition("@")
            known[(fields[0], kernel, int(index) if index else None)] = fields[2]
    return known


def first_error_line(output, returncode):
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l:
            return l
    if returncode < 0:
        return f"kilnc killed by signal {-returncode}" + (f": {lines[0]}" if lines else "")
    if lines:
        return lines[0]
    return f"kilnc exited with status {returncode} and no message"


def compile_variant(kilnc, root, archs, emit, timeout, v):
    """Compiles `v` for every arch; the first failure is the variant's."""
    start = time.monotonic()
    try:
        return compile_variant_archs(kilnc, root, archs, emit, timeout, v)
    finally:
        v.seconds = time.monotonic() - start


def compile_variant_archs(kilnc, root, archs, emit, timeout, v):
    for arch in archs:
        srcs = []
        for s in v.srcs:
            srcs += ["--src", os.path.join(root, s)]
        cmd = [kilnc, "compile", os.path.join(root, v.path)] + v.args + srcs + [
            "--arch", arch, "--emit", emit, "-o", os.devnull]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout, errors="replace")
        except subprocess.TimeoutExpired:
            return False, f"[{arch}] kilnc timed out after {timeout} s"
        if p.returncode != 0:
            message = first_error_line(p.stdout.replace(root + os.sep, ""), p.returncode)
            return False, (f"[{arch}] " if len(archs) > 1 else "") + message
    return True, ""


def known_entry(known, v):
    for key in ((v.path, v.kernel, v.index), (v.path, v.kernel, None)):
        if key in known:
            return key
    return None


def write_known_failures(path, variants, known, header):
    """Rewrites KNOWN_FAILURES: one entry per failing kernel (or variant)."""
    by_kernel = OrderedDict()
    for v in variants:
        by_kernel.setdefault((v.path, v.kernel), []).append(v)
    lines = []
    for (rel, kernel), group in by_kernel.items():
        failing = [v for v in group if v.status in ("FAIL", "XFAIL")]
        if not failing:
            continue
        if len(failing) == len(group):
            keys = [(rel, kernel, None, group[0])]
        else:
            keys = [(rel, kernel, v.index, v) for v in failing]
        for rel_, kernel_, index, v in keys:
            # A reason written by hand is kept; one copied from kilnc (it
            # starts with the file name) is refreshed to this run's error.
            reason = known.get((rel_, kernel_, index)) or known.get((rel_, kernel_, None))
            if not reason or reason.startswith(rel_ + ":"):
                reason = v.message
            name = kernel_ + (f"@{index}" if index else "")
            lines.append(f"{rel_} {name} {reason}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(header)
        f.write("\n".join(lines) + ("\n" if lines else ""))


HEADER_KNOWN = """\
# Corpus variants that kilnc does not compile yet: FILE KERNEL[@N] REASON.
# check_corpus.py expects each listed variant to fail and fails itself when
# one passes, so shrink this list as the front end grows:
#   python3 tests/kernels/check_corpus.py --kilnc KILNC --update-known-failures
"""

HEADER_KNOWN_BACKEND = """\
# Corpus variants that do not compile to cubins for every arch yet (the GPU
# backend's counterpart of KNOWN_FAILURES): FILE KERNEL[@N] REASON. Kept
# honest the same way; regenerate with
#   python3 tests/kernels/check_corpus.py --kilnc KILNC --emit cubin \\
#     --archs sm_80,sm_86,sm_89,sm_90a,sm_100a,sm_120a --update-known-failures
"""


def read_surface(path):
    """Returns [(section, item, notes, links)] from SURFACE."""
    rows, section = [], ""
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            text = text.rstrip("\n")
            if text.startswith("## "):
                section = text[3:].strip()
                continue
            if not text.strip() or text.startswith("#"):
                continue
            fields = [x.strip() for x in text.split(" || ")]
            notes = [x for x in fields[1:] if not x.startswith("tests/")]
            links = [x for x in fields[1:] if x.startswith("tests/")]
            rows.append((section, fields[0], notes, links))
    return rows


def lit_tests_using(item):
    """tests/frontend lit tests that call the builtin `item` names (tl.NAME)."""
    m = re.match(r"^(tl\.[a-z_0-9]+)", item)
    if not m:
        return []
    frontend = os.path.join(os.path.dirname(HERE), "frontend")
    found = []
    for name in sorted(os.listdir(frontend)) if os.path.isdir(frontend) else []:
        path = os.path.join(frontend, name)
        if os.path.isfile(path) and name.endswith((".py", ".test")):
            with open(path, encoding="utf-8", errors="replace") as f:
                if m.group(1) + "(" in f.read():
                    found.append("tests/frontend/" + name)
    return found


def language_doc(surface, covers, variants):
    by_kernel = OrderedDict()
    for v in variants:
        by_kernel.setdefault((v.path, v.kernel), []).append(v)
    item_kernels = OrderedDict()
    for key, items in covers.items():
        for item in items:
            item_kernels.setdefault(item, []).append(key)

    out = [DOC_HEADER]
    totals = {"yes": 0, "partly": 0, "not yet": 0, "no test": 0, "n/a": 0}
    section = None
    for sec, item, notes, links in surface:
        if sec != section:
            section = sec
            out.append(f"\n## {sec}\n\n| construct | supported | proved by | notes |\n|---|---|---|---|")
        kernels = item_kernels.get(item, [])
        full = [k for k in kernels if all(v.status in ("PASS", "XPASS") for v in by_kernel[k])]
        some = [k for k in kernels if any(v.status in ("PASS", "XPASS") for v in by_kernel[k])]
        if any(n.startswith("n/a") for n in notes):
            status = "n/a"
        elif not kernels and not links:
            status = "no test"
        elif full:
            status = "yes"
        elif some:
            status = "partly"
        elif kernels:
            status = "not yet"
        else:
            status = "see test"
        totals[status] = totals.get(status, 0) + 1
        shown = full + [k for k in some if k not in full] + [k for k in kernels if k not in some]
        refs = [f"[{k[0]}:{k[1]}](../tests/kernels/{k[0]})" for k in shown[:3]]
        if len(shown) > 3:
            refs.append(f"+{len(shown) - 3} more")
        lits = [l for l in lit_tests_using(item) if l not in links]
        refs += [f"[{l}](../{l})" for l in links + lits[:2]]
        cell = item.replace("|", "\\|")
        note = "; ".join(n for n in notes).replace("|", "\\|")
        out.append(f"| `{cell}` | {status} | {', '.join(refs)} | {note} |")
    summary = ", ".join(f"{v} {k}" for k, v in totals.items() if v)
    out.insert(1, f"\nSummary: {summary}.\n")
    return "\n".join(out) + "\n"


DOC_HEADER = """\
# The Triton language in Kiln: what kilnc supports

Generated by `tests/kernels/check_corpus.py --write-language-doc docs/language.md`
from what `kilnc` accepts now: do not edit by hand; edit `tests/kernels/SURFACE`
(the construct list of issue 3) or the corpus, then regenerate.

A construct is **yes** when a corpus kernel that uses it (its `# kiln-covers:`
line) compiles to verified `kiln` IR for every one of its variants
(`kilnc compile FILE -n KERNEL -s SIG --arch sm_90a --emit kiln`), **partly**
when only some of those variants do, **not yet** when none does (the reasons
are in `tests/kernels/KNOWN_FAILURES`). Every corpus file is valid upstream
Triton 3.6 (`tests/kernels/run_upstream.py` compiles every variant there).
Kernels use several constructs, so "not yet" can mean that another construct
of the same kernel is missing; the first error of each is in KNOWN_FAILURES."""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kilnc", default=os.environ.get("KILNC", "kilnc"), help="the kilnc binary")
    ap.add_argument("--root", default=HERE, help="the corpus directory (default: this script's)")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--archs", default="",
                    help="comma-separated archs, each variant compiled for all (default: --arch)")
    ap.add_argument("--emit", default="kiln", choices=["kiln", "ptx", "cubin"],
                    help="how far to compile (kiln: verified IR; cubin: through the GPU backend and ptxas)")
    ap.add_argument("--known-failures", default=None,
                    help="default: ROOT/KNOWN_FAILURES, or ROOT/KNOWN_BACKEND_FAILURES past --emit kiln")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per variant")
    ap.add_argument("--filter", default="", help="only variants whose 'file -n kernel' contains this")
    ap.add_argument("--update-known-failures", action="store_true",
                    help="rewrite KNOWN_FAILURES from this run's failures (hand-written reasons are kept)")
    ap.add_argument("--write-language-doc", metavar="PATH",
                    help="write the construct table (docs/language.md) from this run")
    ap.add_argument("--quiet", "-q", action="store_true", help="print only failures and the summary")
    ap.add_argument("--manifest", metavar="PATH",
                    help="variants from this manifest of unchanged files (the real-world corpus); "
                         "the root is its directory")
    ap.add_argument("--no-srcs", action="store_true",
                    help="with --manifest: compile each file alone (no --src), as older kilnc")
    ap.add_argument("--times", metavar="PATH", help="write each variant's compile time here")
    ap.add_argument("--sample", type=int, default=1, metavar="N",
                    help="only every N-th variant of the manifest (the first, the N+1-th, ...), "
                         "a representative subset for CI's time; 1: all")
    args = ap.parse_args()

    root = os.path.abspath(os.path.dirname(args.manifest) if args.manifest else args.root)
    backend = args.emit != "kiln"
    archs = [a for a in args.archs.split(",") if a] or [args.arch]
    known_path = args.known_failures or os.path.join(
        root, "KNOWN_BACKEND_FAILURES" if backend else "KNOWN_FAILURES")
    if args.manifest:
        variants, problems = read_manifest(args.manifest)
        if args.no_srcs:
            for v in variants:
                v.srcs = []
        covers = OrderedDict()
    else:
        variants, covers, problems = read_corpus(root)
    surface_path = os.path.join(root, "SURFACE")
    surface = read_surface(surface_path) if os.path.exists(surface_path) else []
    surface_items = {row[1] for row in surface}
    if surface:
        for (rel, kernel), items in covers.items():
            for item in items:
                if item not in surface_items:
                    problems.append(f"{rel}: kiln-covers of '{kernel}' names '{item}', which SURFACE lacks")
    known = read_known_failures(known_path)
    if args.filter:
        variants = [v for v in variants if args.filter in f"{v.path} -n {v.kernel}"]
    if args.sample > 1:
        variants = variants[::args.sample]

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(compile_variant, args.kilnc, root, archs, args.emit,
                               args.timeout, v)
                   for v in variants]
        for v, fut in zip(variants, futures):
            ok, message = fut.result()
            listed = known_entry(known, v) is not None
            if ok:
                v.status = "XPASS" if listed else "PASS"
            else:
                v.status = "XFAIL" if listed else "FAIL"
            v.message = message
            if v.status == "PASS" and not args.quiet:
                print(f"PASS {v.label()}")
            elif v.status == "XFAIL" and not args.quiet:
                print(f"XFAIL {v.label()}: {message}")
            elif v.status == "FAIL":
                print(f"FAIL {v.label()}: {message}")
            elif v.status == "XPASS":
                print(f"FAIL {v.label()}: listed in {os.path.basename(known_path)} but passes "
                      f"now; remove it")
            sys.stdout.flush()

    if args.times:
        with open(args.times, "w", encoding="utf-8") as f:
            for v in variants:
                f.write(f"{v.path}\t{v.kernel}\t{v.index}\t{v.status}\t{v.seconds:.2f}\n")

    failed = sum(v.status in ("FAIL", "XPASS") for v in variants)
    if not args.filter and args.sample <= 1:
        for key, reason in known.items():
            if not any(known_entry({key: reason}, v) for v in variants):
                name = key[1] + (f"@{key[2]}" if key[2] else "")
                problems.append(f"KNOWN_FAILURES entry '{key[0]} {name}' matches no variant")
    for p in problems:
        print(f"FAIL {p}")
    failed += len(problems)

    if args.update_known_failures:
        write_known_failures(known_path, variants, known,
                             HEADER_KNOWN_BACKEND if backend else HEADER_KNOWN)
        print(f"wrote {known_path}")
    if args.write_language_doc:
        with open(args.write_language_doc, "w", encoding="utf-8") as f:
            f.write(language_doc(surface, covers, variants))
        print(f"wrote {args.write_language_doc}")

    passed = sum(v.status == "PASS" for v in variants)
    xfail = sum(v.status == "XFAIL" for v in variants)
    kernels = len({(v.path, v.kernel) for v in variants})
    files = len({v.path for v in variants})
    print(f"{files} files, {kernels} kernels, {len(variants)} variants"
          f" (--emit {args.emit}, {','.join(archs)}); "
          f"{xfail} known failures ({os.path.basename(known_path)})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
