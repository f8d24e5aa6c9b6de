#!/usr/bin/env python3
"""Compiles every corpus variant with upstream Triton, to prove the corpus is
valid Triton: run it where Triton 3.6 is installed (the GPU machine).

    python3 tests/kernels/run_upstream.py [--arch 90] [--filter TEXT] [-j N]

Each `# kiln-variant:` line becomes triton.compile(ASTSource(...)) for a CUDA
target of that compute capability (no GPU needed for compiling): its named
signature gives the types and constexpr values, constexprs it omits take the
kernel's defaults, and decorators (@triton.autotune, @triton.heuristics) are
looked through. Prints `OK`/`ERROR` per variant and `N ok, M errors`.
"""

import argparse
import concurrent.futures
import importlib.util
import inspect
import multiprocessing
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_corpus  # noqa: E402


def split_signature(text):
    """Splits 'a=*fp32, B=1024, S="x"' at top-level commas."""
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


def constexpr_value(text, tl, module=None):
    """The Python value of a constexpr's text; a name or dotted path is a
    (jit function) attribute of the kernel's module."""
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    if text[:1] in "'\"":
        return text[1:-1]
    if text.startswith("tl."):
        return getattr(tl, text[3:])
    if text.startswith("("):  # a tuple of values (SHAPE=(8, 16))
        return tuple(constexpr_value(e, tl, module) for e in split_signature(text.strip()[1:-1]) if e)
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


def is_type(text):
    return text.startswith("*") or text[:1] in "iuf" and text[1:2].isdigit() or text in (
        "fp16", "bf16", "fp32", "fp64", "i1")


def tuple_signature(text, path, constexprs, tl):
    """A tuple parameter's signature entry for ASTSource, "(i32, i32:1, 8)":
    a Python tuple of its elements' types, each `:1` or constexpr element
    "constexpr" with its value in `constexprs` under its path (parameter
    index, then positions), as upstream's JIT specializes them."""
    types = []
    for i, element in enumerate(split_signature(text.strip()[1:-1])):
        if element.startswith("("):
            types.append(tuple_signature(element, path + (i,), constexprs, tl))
        elif is_type(element) and not element.endswith(":1"):
            types.append(element.split(":")[0])
        else:
            types.append("constexpr")
            constexprs[path + (i,)] = 1 if is_type(element) else constexpr_value(element, tl)
    return tuple(types)


def split_options(sig_text):
    """A `-s` signature's parameter values by name, and its launch options
    (num_warps, num_stages, num_ctas) as ints."""
    given, options = {}, {}
    for entry in split_signature(sig_text):
        key, _, value = entry.partition("=")
        key, value = key.strip(), value.strip()
        if key in ("num_warps", "num_stages", "num_ctas"):
            options[key] = int(value)
        else:
            given[key] = value
    return given, options


def compile_one(root, rel, args, cc):
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name = args[args.index("-n") + 1]
    sig_text = args[args.index("-s") + 1]
    spec = importlib.util.spec_from_file_location("corpus_" + rel.replace("/", "_")[:-3],
                                                  os.path.join(root, rel))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, name)
    while not isinstance(fn, triton.runtime.jit.JITFunction):
        fn = fn.fn
    given, options = split_options(sig_text)
    params = inspect.signature(fn.fn).parameters
    signature, constexprs = {}, {}
    for i, (pname, p) in enumerate(params.items()):
        is_constexpr = i in fn.constexprs if hasattr(fn, "constexprs") else False
        if pname in given:
            value = given[pname]
            if not is_constexpr and value.startswith("("):
                signature[pname] = tuple_signature(value, (i,), constexprs, tl)
                continue
            if not is_constexpr and is_type(value):
                signature[pname] = value.split(":")[0]
                continue
            signature[pname] = "constexpr"
            constexprs[(i,)] = constexpr_value(value, tl, module)
        elif p.default is not inspect.Parameter.empty:
            signature[pname] = "constexpr"
            constexprs[(i,)] = p.default
        else:
            raise ValueError(f"parameter {pname} has no value in the variant")
    src = ASTSource(fn, signature, constexprs=constexprs)
    triton.compile(src, target=GPUTarget("cuda", cc, 32), options=options)
    return True


def run(job):
    root, rel, args, cc = job
    try:
        compile_one(root, rel, args, cc)
        return ""
    except Exception as e:  # report the first line of Triton's message
        text = str(e).strip().splitlines()
        return f"{type(e).__name__}: " + (" / ".join(text[-3:]) if text else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=check_corpus.HERE)
    ap.add_argument("--arch", type=int, default=90, help="compute capability, e.g. 90")
    ap.add_argument("--filter", default="")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 4)
    a = ap.parse_args()
    variants, _, problems = check_corpus.read_corpus(os.path.abspath(a.root))
    variants = [v for v in variants if a.filter in f"{v.path} -n {v.kernel}"]
    jobs = [(os.path.abspath(a.root), v.path, v.args, a.arch) for v in variants]
    ctx = multiprocessing.get_context("spawn")
    errors = 0
    with concurrent.futures.ProcessPoolExecutor(max_workers=a.jobs, mp_context=ctx) as pool:
        for v, message in zip(variants, pool.map(run, jobs)):
            if message:
                errors += 1
                print(f"ERROR {v.label()}: {message}")
            else:
                print(f"OK {v.label()}")
    for p in problems:
        print(f"ERROR {p}")
    print(f"{len(variants) - errors} ok, {errors + len(problems)} errors")
    return 1 if errors or problems else 0


if __name__ == "__main__":
    sys.exit(main())
