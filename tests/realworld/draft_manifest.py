#!/usr/bin/env python3
"""Drafts MANIFEST lines for the real-world corpus from the files' launchers.

For every @triton.jit function of FILE that is launched (`kernel[grid](...)`
somewhere in the library) or that no other jit function calls, prints one
line

    FILE KERNEL -s "name=type-or-value, ..."

The draft reads each launch site: a constexpr argument written as a literal
(or a name the launching function assigns a literal) takes that value; a
constexpr with a default is left out; a parameter set by @triton.heuristics or
by every @triton.autotune config is left out or takes the first config's
value. Run-time parameters are typed from how the kernel uses them: pointers
(what tl.load/tl.store/tl.atomic_* address, or a name with 'ptr'), integer
pointers for index-like names, fp32 for float-like scalars (or float
literals at the launch), i32 otherwise. The draft is a starting point: the
MANIFEST is edited by hand after (docs/realworld.md says how it was made).
Python 3 standard library only; nothing is imported from the files.
"""

import ast
import os
import re
import sys

POINTER_CALLS = {"load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas",
                 "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor", "make_block_ptr",
                 "make_tensor_descriptor"}
INT_POINTER = re.compile(r"(idx|index|indices|label|target|ids|pos|offset|seqlen|lock|count|"
                         r"slot|table|expert|token|mask_ptr|lens|cu_|num_tokens|sorted|topk_ids|row_ptr)",
                         re.I)
FLOAT_SCALAR = re.compile(r"(eps|scale|alpha|beta|gamma|theta|smoothing|softcap|temperature|"
                          r"^p$|prob|momentum|slope|lambd|threshold|coef|weight_decay|lr|"
                          r"factor|sm_scale|rate|base|margin|logit|lse_sq|z_loss)", re.I)
NOT_POINTER = re.compile(r"(stride|^n_|^num_|size|len|offset|^n$|cols|rows|dim)", re.I)


def is_jit(fn):
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr == "jit":
            return True
        if isinstance(target, ast.Name) and target.id in ("jit", "triton_jit", "triton_jit_decorator"):
            return True
    return False


def decorator_named(fn, name):
    for d in fn.decorator_list:
        if isinstance(d, ast.Call):
            t = d.func
            if (isinstance(t, ast.Attribute) and t.attr == name) or (
                    isinstance(t, ast.Name) and t.id == name):
                return d
    return None


def is_constexpr(arg):
    a = arg.annotation
    if a is None:
        return False
    if isinstance(a, ast.Attribute):
        return a.attr == "constexpr"
    if isinstance(a, ast.Name):
        return a.id == "constexpr"
    if isinstance(a, ast.Constant) and isinstance(a.value, str):
        return a.value.endswith("constexpr")
    return False


def additive_names(expr, out):
    """Names reachable from `expr` through + and - (and .to(), subscripts)."""
    if isinstance(expr, ast.Name):
        out.add(expr.id)
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        additive_names(expr.left, out)
        additive_names(expr.right, out)
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in (
            "to", "advance"):
        additive_names(expr.func.value, out)
        if expr.func.attr == "advance" and expr.args:
            additive_names(expr.args[0], out)
    elif isinstance(expr, ast.IfExp):
        additive_names(expr.body, out)
        additive_names(expr.orelse, out)
    elif isinstance(expr, ast.Subscript):
        additive_names(expr.value, out)


def pointer_params(fn, functions):
    """Parameters of `fn` used as addresses (directly or through locals)."""
    deps = {}
    seeds = set()
    calls = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            names = set()
            additive_names(node.value, names)
            for t in node.targets:
                for tn in ast.walk(t):
                    if isinstance(tn, ast.Name):
                        deps.setdefault(tn.id, set()).update(names)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            names = set()
            additive_names(node.value, names)
            deps.setdefault(node.target.id, set()).update(names)
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
            if name in POINTER_CALLS:
                if node.args:
                    additive_names(node.args[0], seeds)
                for kw in node.keywords:
                    if kw.arg in ("pointer", "base", "ptr"):
                        additive_names(kw.value, seeds)
            elif name in functions and functions[name] is not fn:
                calls.append((functions[name], node))
    # Arguments passed to helpers at positions the helper uses as pointers.
    for callee, node in calls:
        inner = pointer_params(callee, {})
        params = [a.arg for a in callee.args.args]
        for i, a in enumerate(node.args):
            if i < len(params) and params[i] in inner:
                additive_names(a, seeds)
        for kw in node.keywords:
            if kw.arg in inner:
                additive_names(kw.value, seeds)
    seen, work = set(), list(seeds)
    while work:
        n = work.pop()
        if n in seen:
            continue
        seen.add(n)
        work.extend(deps.get(n, ()))
    params = [a.arg for a in fn.args.args]
    return {p for p in params if p in seen and not NOT_POINTER.search(p)} | {
        p for p in params if re.search(r"ptr", p, re.I)}


def literal(expr, env):
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float, bool, str)) or (
            isinstance(expr, ast.Constant) and expr.value is None):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        v = literal(expr.operand, env)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(expr, ast.Name) and expr.id in env:
        return env[expr.id]
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in (
            "tl", "torch") and expr.attr in DTYPES:
        return DTYPES[expr.attr]
    return None


DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int32": "i32", "int64": "i64",
          "float8e4nv": "fp8e4nv", "float64": "fp64"}


class Launch:
    def __init__(self, call, env):
        self.call, self.env = call, env


def find_launches(tree):
    """kernel name → [Launch] (the call and the literal names of its function)."""
    launches = {}

    def visit(body_owner, env):
        for node in ast.walk(body_owner):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], ast.Name):
                v = literal(node.value, {})
                if v is not None:
                    env.setdefault(node.targets[0].id, v)
        for node in ast.walk(body_owner):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                k = node.func.value
                name = k.id if isinstance(k, ast.Name) else (k.attr if isinstance(k, ast.Attribute) else None)
                if name:
                    launches.setdefault(name, []).append(Launch(node, env))

    for node in module_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            visit(node, {})
    return launches


def first_config(fn, module_env):
    d = decorator_named(fn, "autotune")
    if d is None:
        return {}
    configs = None
    for kw in d.keywords:
        if kw.arg == "configs":
            configs = kw.value
    if configs is None and d.args:
        configs = d.args[0]
    if isinstance(configs, ast.Name) and configs.id in module_env:
        configs = module_env[configs.id]
    first = None
    if isinstance(configs, ast.List) and configs.elts:
        first = configs.elts[0]
    elif isinstance(configs, ast.ListComp):
        first = configs.elt
    if not isinstance(first, ast.Call):
        return {"?": True}
    out = {}
    if first.args and isinstance(first.args[0], ast.Dict):
        for k, v in zip(first.args[0].keys, first.args[0].values):
            if isinstance(k, ast.Constant):
                lv = literal(v, {})
                out[k.value] = lv if lv is not None else "?"
    for kw in first.keywords:
        if kw.arg in ("num_warps", "num_stages"):
            lv = literal(kw.value, {})
            if lv is not None:
                out[kw.arg] = lv
    return out


def heuristic_params(fn):
    """Heuristic keys → True when the lambda reads a run-time parameter
    (its value depends on the arguments: the draft gives True), else False."""
    d = decorator_named(fn, "heuristics")
    runtime = {a.arg for a in fn.args.args if not is_constexpr(a)}
    out = {}
    if d is not None and d.args and isinstance(d.args[0], ast.Dict):
        for k, v in zip(d.args[0].keys, d.args[0].values):
            if isinstance(k, ast.Constant):
                reads = {n.slice.value for n in ast.walk(v) if isinstance(n, ast.Subscript)
                         and isinstance(n.slice, ast.Constant)}
                out[k.value] = bool(reads & runtime)
    return out


def guess_constexpr(name):
    """A value for a constexpr the launcher computes at run time."""
    if re.search(r"^(HAS|HAVE|IS|USE|ENABLE|EVEN|RETURN|DO|APPLY|STORE|COMPUTE|INCLUDE|LONG|"
                 r"WARP_SPECIALIZE|FP8|ROTARY_INTERLEAVED|CAUSAL|FLATTEN|EPILOGUE)", name, re.I):
        return False
    if name in ("num_warps", "NUM_WARPS"):
        return 4
    if name in ("num_stages", "NUM_STAGES"):
        return 2
    if re.search(r"dtype|_TY$", name, re.I):
        return "tl.float32"
    if re.search(r"^reduction$", name):
        return "'mean'"
    if re.search(r"ignore_index", name, re.I):
        return -100
    if re.search(r"mode|type$|TYPE$", name, re.I):
        return 0
    if re.search(r"^eps$|EPS", name, re.I):
        return 1e-6
    if FLOAT_SCALAR.search(name) or re.search(r"val$", name):
        return 1.0
    if re.search(r"block|tile|BM|BN|BK|chunk|HEAD_DIM|^hd$|pad_", name, re.I):
        return 64
    if re.search(r"group", name, re.I):
        return 8
    if re.search(r"stride", name, re.I):
        return 1
    return 64


def fmt(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str) and v in DTYPES.values():
        return "tl." + {b: a for a, b in DTYPES.items()}[v]
    if isinstance(v, str):
        return repr(v).replace("'", '"') if False else v
    return str(v)


def module_level(body):
    """The statements of a module body, and those of its top-level `if` and
    `try` blocks (kernels defined under `if has_triton():`)."""
    for n in body:
        yield n
        if isinstance(n, ast.If):
            yield from module_level(n.body)
            yield from module_level(n.orelse)
        elif isinstance(n, ast.Try):
            yield from module_level(n.body)


def draft(path, rel, all_launches, matmulish=False, called_elsewhere=()):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    functions = {n.name: n for n in module_level(tree.body) if isinstance(n, ast.FunctionDef)}
    module_env = {}
    for n in module_level(tree.body):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            module_env[n.targets[0].id] = n.value
    jits = {n: f for n, f in functions.items() if is_jit(f)}
    called = set()
    for f in jits.values():
        for node in ast.walk(f):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in jits:
                called.add(node.func.id)
    lines = []
    for name, fn in jits.items():
        launches = all_launches.get(name, [])
        if not launches and (name in called or name in called_elsewhere or not pointer_params(fn, jits)):
            continue
        params = fn.args.args
        defaults = dict(zip([a.arg for a in params[len(params) - len(fn.args.defaults):]],
                            fn.args.defaults))
        ptrs = pointer_params(fn, jits)
        config = first_config(fn, module_env)
        heur = heuristic_params(fn)
        launch = launches[0] if launches else None
        bound = {}
        if launch:
            for i, a in enumerate(launch.call.args):
                if i < len(params):
                    bound[params[i].arg] = a
            for kw in launch.call.keywords:
                if kw.arg:
                    bound[kw.arg] = kw.value
        fields = []
        for a in params:
            p = a.arg
            if is_constexpr(a):
                if p in heur:
                    if heur[p]:
                        fields.append(f"{p}=True")
                    continue
                if p in config and config[p] != "?":
                    fields.append(f"{p}={fmt(config[p])}")
                    continue
                v = literal(bound[p], launch.env) if p in bound else None
                if v is not None:
                    fields.append(f"{p}={fmt(v)}")
                elif p in defaults:
                    continue
                else:
                    fields.append(f"{p}={fmt(guess_constexpr(p))}")
                continue
            if p in ptrs:
                if INT_POINTER.search(p):
                    fields.append(f"{p}=*i32")
                else:
                    fields.append(f"{p}=*{'fp16' if matmulish else 'fp32'}")
                continue
            v = literal(bound[p], launch.env) if p in bound else None
            if v is None and p in defaults:
                v = literal(defaults[p], {})
            if isinstance(v, bool):
                fields.append(f"{p}=i1")
            elif isinstance(v, float) or (v is None and FLOAT_SCALAR.search(p)
                                          and "stride" not in p):
                fields.append(f"{p}=fp32")
            else:
                fields.append(f"{p}=i32")
        for opt in ("num_warps", "num_stages"):
            if opt in config and opt not in [a.arg for a in params]:
                fields.append(f"{opt}={config[opt]}")
        lines.append(f'{rel} {name} -s "{", ".join(fields)}"')
    return lines


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    files = sys.argv[1:]
    launches = {}
    called = set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            try:
                tree = ast.parse(f.read())
            except SyntaxError:
                continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                called.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None))
        for k, v in find_launches(tree).items():
            launches.setdefault(k, []).extend(v)
    for path in files:
        rel = os.path.relpath(os.path.abspath(path), root)
        mm = bool(re.search(r"(mm|matmul|gemm|attn|attention|dot|linear)", rel))
        for line in draft(path, rel, launches, mm, called):
            print(line)


if __name__ == "__main__":
    main()
