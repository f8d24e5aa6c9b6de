#!/usr/bin/env python3
"""Seeds for the libFuzzer targets of tests/fuzz, from files in the tree.

    python3 tests/fuzz/make_seeds.py signature DIR   # "params\\nsignature" per corpus variant
    python3 tests/fuzz/make_seeds.py codegen DIR     # metadata JSON of tests/unit/testdata, singly and in pairs

The signature seeds take each corpus variant's -s text with the kernel's
parameter list in signature_fuzzer.cpp's notation (NAME! for tl.constexpr,
NAME!=DEFAULT). Python 3 standard library only.
"""
import glob
import os
import re
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kernel_params(text, kernel):
    m = re.search(r"^def %s\((.*?)\):" % re.escape(kernel), text, re.M | re.S)
    if not m:
        return None
    out = []
    for p in re.split(r",(?![^(\[]*[)\]])", m.group(1)):
        p = p.strip()
        if not p:
            continue
        name, _, rest = p.partition(":")
        name, _, default = name.partition("=")
        constexpr = "constexpr" in rest
        default = default or (rest.partition("=")[2] if "=" in rest else "")
        entry = name.strip() + ("!" if constexpr else "")
        if constexpr and default.strip():
            entry += "=" + default.strip()
        out.append(entry)
    return ", ".join(out)


def signature_seeds(dest):
    n = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "kernels", "**", "*.py"), recursive=True)):
        text = open(path, encoding="utf-8").read()
        for line in re.findall(r"^#\s*kiln-variant:\s*(.*)$", text, re.M):
            try:
                args = shlex.split(line)
            except ValueError:
                continue
            if "-n" not in args or "-s" not in args:
                continue
            params = kernel_params(text, args[args.index("-n") + 1])
            if params is None:
                continue
            n += 1
            with open(os.path.join(dest, f"sig{n}"), "w") as f:
                f.write(params + "\n" + args[args.index("-s") + 1])
    return n


def codegen_seeds(dest):
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "unit", "testdata", "**", "*.json"), recursive=True))
    docs = [open(p, encoding="utf-8").read() for p in files]
    n = 0
    for i, d in enumerate(docs):
        n += 1
        open(os.path.join(dest, f"meta{n}"), "w").write(d)
        if i + 1 < len(docs):
            n += 1
            open(os.path.join(dest, f"meta{n}"), "w").write(d + "\n----\n" + docs[i + 1])
    return n


if __name__ == "__main__":
    kind, dest = sys.argv[1], sys.argv[2]
    os.makedirs(dest, exist_ok=True)
    count = {"signature": signature_seeds, "codegen": codegen_seeds}[kind](dest)
    print(f"make_seeds: {count} {kind} seeds in {dest}")
