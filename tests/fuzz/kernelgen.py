#!/usr/bin/env python3
"""kernelgen: random Triton kernels that are valid by construction.

Each kernel is a @triton.jit function over 2-D tiles of three symbolic
dimensions, M (BM rows, one program per BM rows of M), N (BN columns, a
single tile: N <= BN) and K (BK, a single tile: K <= BK, or a loop over KL in
steps of BK). The generator keeps, for every value it has bound to a name,
its shape (a tuple of those dimensions), its dtype, a bound on its magnitude
and whether it is computed exactly (the same bits under any correct
compiler), and only emits what Triton 3.6 accepts and what has one defined
result:

- loads with masks and `other=`, row-major or transposed, with run-time
  strides (padded rows), 1-D and scalar loads, loads in K loops; stores of
  every result through masks, with implicit float narrowing;
- elementwise arithmetic with broadcasting and dtype promotion, integer
  division and remainder by a positive divisor, shifts by small amounts,
  bitwise ops; math functions (exp, exp2, log, log2, sqrt, rsqrt, sin, cos,
  sigmoid, erf, floor, ceil, fma, abs) on arguments kept in range;
- comparisons, tl.where, floor/ceil, float->int casts, bitcasts and
  argmax/argmin only on exact values (a one-ulp difference upstream of a
  discontinuous operation is not a miscompile);
- reductions (sum, max, min, argmax, argmin, xor_sum), scans (cumsum,
  cumprod, reverse), tl.trans;
- tl.dot for fp16, bf16, fp32 (ieee and tf32), int8 and fp8 operands of
  tensor-core shapes (>= 16), with and without an accumulator, chained
  (one dot's result feeding the next), and in K loops;
- control flow: for over range / tl.range (run-time trip counts, zero
  included), while, tl.static_range, if/else on a run-time scalar, if/elif on
  a constexpr; per element, through tl.map_elementwise of a helper that
  branches (fp32) or loops (i32) on exact values.

Magnitudes are kept finite (a value whose bound grows past its dtype's comfort
is scaled by a power of two, which is exact), and the relative error a float
value may carry between two correct compilers is estimated alongside, which
gives each output its comparison rule: bitwise when exact, else a tolerance
relative to the output's largest magnitude: 64 times the estimate, at least
5e-5 and at most 0.25.

    python3 tests/fuzz/kernelgen.py --seed 7 [--archs sm_90a,sm_80]   # print one kernel
    python3 tests/fuzz/kernelgen.py --self-check 1000                   # generate and check, no kilnc
    import kernelgen; case = kernelgen.generate(seed, archs)             # a dict, see below

A case: source (the file's text), kernel, sig (kilnc's named signature),
args (name -> input spec as tests/gpu/differential.py's make_input reads it, or a
scalar), outputs, compare (output -> {"exact": True} or {"tol": x}), grid,
features (what the kernel uses, for the report by feature). Python 3
standard library only.
"""

import argparse
import math
import random
import sys

# Kiln signature name -> (triton.language name, torch dtype name, kind, bits).
DTYPES = {
    "fp32": ("tl.float32", "float32", "float", 32),
    "fp16": ("tl.float16", "float16", "float", 16),
    "bf16": ("tl.bfloat16", "bfloat16", "float", 16),
    "i32": ("tl.int32", "int32", "int", 32),
    "i8": ("tl.int8", "int8", "int", 8),
    "fp8e4nv": ("tl.float8e4nv", "float8_e4m3fn", "fp8", 8),
    "fp8e5": ("tl.float8e5", "float8_e5m2", "fp8", 8),
}
# Relative rounding error of one operation in the dtype (half an ulp).
UNIT = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp8e4nv": 2.0 ** -4,
        "fp8e5": 2.0 ** -3}
# Largest magnitude a value may reach before it is scaled back.
COMFORT = {"fp32": 4096.0, "fp16": 256.0, "bf16": 256.0}
DIMS = ("M", "N", "K")


def is_float(dt):
    return DTYPES[dt][2] == "float"


def is_int(dt):
    return DTYPES[dt][2] == "int"


def tl(dt):
    return DTYPES[dt][0]


class Value:
    """A name bound in the kernel: shape, dtype, magnitude bound, error."""

    def __init__(self, name, shape, dtype, exact, bound, err=0.0):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype
        self.exact = exact if is_float(dtype) else True
        self.bound = float(bound)
        self.err = 0.0 if self.exact else err

    def __repr__(self):
        return f"{self.name}:{self.dtype}{list(self.shape)}"


def combine_shape(a, b):
    """The broadcast shape of a and b, or None when it is not a tile shape."""
    if a == b or len(b) == 0:
        return a
    if len(a) == 0:
        return b
    if len(a) == 1 and len(b) == 1:
        return (a[0], b[0])
    if len(a) == 2 and len(b) == 2:
        return a if a == (b[1], b[0]) else None
    if len(b) == 1:
        return a if b[0] in a else None
    return b if a[0] in b else None


class Gen:
    def __init__(self, seed, archs):
        self.rng = random.Random(seed)
        self.seed = seed
        self.archs = archs
        r = self.rng
        self.want_dot = r.random() < 0.45
        lo = 16 if self.want_dot else 1
        pick = lambda lo_, hi_: 2 ** r.randint(int(math.log2(lo_)), int(math.log2(hi_)))
        self.size = {"M": pick(max(lo, 2), 128), "N": pick(max(lo, 2), 128), "K": pick(max(lo, 2), 64)}
        while self.size["M"] * self.size["N"] > 8192:
            self.size["M"] //= 2
        if self.want_dot:
            self.size["M"] = max(self.size["M"], 16)
        self.num_warps = r.choice([1, 2, 4, 4, 4, 8])
        if self.size["M"] * self.size["N"] >= 8192 and self.num_warps < 4:
            self.num_warps = 4
        self.num_stages = r.choice([1, 2, 3, 3, 4])
        # Problem sizes (run-time): M rows over the grid, N <= BN, K <= BK.
        bm, bn, bk = self.size["M"], self.size["N"], self.size["K"]
        self.totals = {
            "M": r.choice([bm, 2 * bm, 3 * bm - 1, max(1, bm // 2 + 1), 4 * bm + 3]),
            "N": r.choice([bn, bn, max(1, bn - 1), max(1, bn // 2 + 1)]),
            "K": r.choice([bk, bk, max(1, bk - 3), max(1, bk // 2)]),
        }
        self.kl = r.choice([bk, 2 * bk, 3 * bk + 5, 4 * bk])  # K-loop length
        self.trip = r.choice([0, 1, 2, 3, 3, 5])  # run-time loop trip count
        self.flag = r.choice([0, 1])
        self.mode = r.choice([0, 1, 2])  # the constexpr MODE
        self.alpha = r.choice([0.5, 1.25, -0.75, 2.0])
        self.grid = -(-self.totals["M"] // bm)
        self.lines = []
        self.indent = 1
        self.pool = []  # visible values, innermost scope last
        self.scopes = []
        self.count = 0
        self.inputs = []  # (name, dtype, spec, hint)
        self.outputs = []  # (name, dtype, numel)
        self.compare = {}
        self.features = set()
        self.scalars_used = set()
        self.helpers = []  # module-level @triton.jit helpers, as source lines
        self.fp8_types = [t for t in ("fp8e5", "fp8e4nv")
                          if t == "fp8e5" or all(a not in ("sm_80", "sm_86") for a in archs)]

    # -- emission ----------------------------------------------------------
    def emit(self, text):
        self.lines.append("    " * self.indent + text)

    def fresh(self, prefix="v"):
        self.count += 1
        return f"{prefix}{self.count}"

    def bind(self, expr, shape, dtype, exact, bound, err=0.0, prefix="v"):
        v = Value(self.fresh(prefix), shape, dtype, exact, bound, err)
        self.emit(f"{v.name} = {expr}")
        self.pool.append(v)
        return v

    def feature(self, *names):
        self.features.update(names)

    def scalar(self, name):
        self.scalars_used.add(name)
        return name

    # -- shapes ------------------------------------------------------------
    def mask_of(self, dim):
        return {"M": "mask_m", "N": "mask_n", "K": "mask_k"}[dim]

    def expand(self, v, shape, expr=None):
        """An expression of v broadcast (or transposed) to `shape`."""
        e = expr or v.name
        if v.shape == shape or len(v.shape) == 0:
            return e
        if len(v.shape) == 1 and len(shape) == 2:
            axis = 1 if v.shape[0] == shape[0] else 0
            form = self.rng.random()
            if form < 0.15:
                self.feature("expand_dims")
                return f"tl.expand_dims({e}, {axis})"
            if form < 0.25:
                self.feature("broadcast_to")
                idx = "[:, None]" if axis == 1 else "[None, :]"
                return f"tl.broadcast_to({e}{idx}, ({self.cx(shape[0])}, {self.cx(shape[1])}))"
            return f"{e}[:, None]" if axis == 1 else f"{e}[None, :]"
        if len(v.shape) == 2 and v.shape == (shape[1], shape[0]):
            self.feature("trans")
            return f"tl.trans({e})"
        raise AssertionError(f"cannot expand {v} to {shape}")

    def fits(self, v, shape):
        """Whether v broadcasts to shape without reduction."""
        return combine_shape(shape, v.shape) == shape

    def to_shape(self, v, shape):
        """v brought to `shape`: broadcast, transposed, or reduced over the
        dimensions `shape` lacks (emitting the reduction)."""
        if self.fits(v, shape):
            return v
        extra = [d for d in v.shape if d not in shape]
        axis = v.shape.index(extra[0]) if extra else 0
        return self.to_shape(self.reduce(v, axis, op=self.rng.choice(["sum", "max", "min"])), shape)

    # -- values --------------------------------------------------------------
    def pick(self, pred=lambda v: True):
        cands = [v for v in self.pool if pred(v)]
        if not cands:
            return None
        # Prefer recent values: deeper expressions.
        weights = [1 + i for i in range(len(cands))]
        return self.rng.choices(cands, weights)[0]

    def cast(self, v, dtype, exact_needed=False):
        """v converted to dtype, as a new value (or v itself)."""
        if v.dtype == dtype:
            return v
        src = v.dtype
        if DTYPES[dtype][2] == "fp8" and (not v.exact or src not in ("fp32", "fp16")):
            v = self.cast(v, "fp32")
            src = "fp32"
        if DTYPES[src][2] == "fp8" and dtype not in ("fp16", "fp32"):
            v = self.cast(v, "fp32")
            src = "fp32"
        if DTYPES[dtype][2] == "fp8" or (dtype in ("fp16", "bf16") and v.bound > 200):
            v = self.normalize(v, 4.0 if DTYPES[dtype][2] == "fp8" else 64.0)
        self.feature("cast")
        if is_float(src) or DTYPES[src][2] == "fp8":
            if is_int(dtype):
                if not v.exact:
                    return self.cast(self.rng.choice([self.zeros_like(v, "i32"), self.iota(v.shape)]),
                                     dtype)
                self.feature("cast_f2i")
                return self.bind(f"tl.minimum(tl.maximum({v.name}, -100.0), 100.0).to({tl(dtype)})",
                                 v.shape, dtype, True, 100)
            lossy = DTYPES[dtype][3] < DTYPES[src][3] or (src, dtype) in (("fp16", "bf16"), ("bf16", "fp16"))
            exact = v.exact
            err = v.err + (UNIT.get(dtype, 0) if lossy else 0)
            if DTYPES[dtype][2] == "fp8":
                self.feature("fp8")
            return self.bind(f"{v.name}.to({tl(dtype)})", v.shape, dtype, exact, v.bound, err)
        # From an integer.
        if is_int(dtype):
            bound = v.bound if dtype == "i32" else 128
            return self.bind(f"{v.name}.to({tl(dtype)})", v.shape, dtype, True, bound)
        self.feature("cast_i2f")
        if DTYPES[dtype][2] == "fp8":
            w = self.bind(f"({v.name} % 8).to(tl.float16)", v.shape, "fp16", True, 8)
            return self.bind(f"{w.name}.to({tl(dtype)})", v.shape, dtype, True, 8)
        return self.bind(f"({v.name} % 64).to({tl(dtype)})", v.shape, dtype, True, 64)

    def normalize(self, v, limit):
        """v scaled by a power of two so that its bound is at most `limit`."""
        if not is_float(v.dtype) or v.bound <= limit:
            return v
        k = math.ceil(math.log2(v.bound / limit))
        self.feature("scale")
        return self.bind(f"{v.name} * {2.0 ** -k!r}", v.shape, v.dtype, v.exact, v.bound * 2.0 ** -k,
                         v.err)

    def zeros_like(self, v, dtype):
        shape = ", ".join(self.cx(d) for d in v.shape)
        if not v.shape:
            return self.bind("pid * 0", (), "i32", True, 0)
        self.feature("zeros")
        return self.bind(f"tl.zeros(({shape},), dtype={tl(dtype)})", v.shape, dtype, True, 0)

    def cx(self, dim):
        return {"M": "BM", "N": "BN", "K": "BK"}[dim]

    def iota(self, shape):
        """Exact i32 values from the index vectors."""
        self.feature("iota")
        if len(shape) == 0:
            return self.bind("pid * 7 + 3", (), "i32", True, 10 ** 6)
        if len(shape) == 1:
            idx = {"M": "offs_m", "N": "offs_n", "K": "offs_k"}[shape[0]]
            return self.bind(f"{idx} * {self.rng.choice([1, 3, -5])} + {self.rng.randint(-9, 9)}", shape,
                             "i32", True, 10 ** 6)
        a = {"M": "offs_m", "N": "offs_n", "K": "offs_k"}[shape[0]]
        b = {"M": "offs_m", "N": "offs_n", "K": "offs_k"}[shape[1]]
        return self.bind(f"{a}[:, None] * {self.rng.choice([1, 5, 17])} - {b}[None, :]", shape, "i32",
                         True, 10 ** 6)

    # -- loads -----------------------------------------------------------------
    def new_input(self, dtype, numel, prefix="x"):
        name = f"{prefix}{len(self.inputs)}"
        kind = DTYPES[dtype][2]
        if kind == "int":
            lo, hi = (-128, 128) if dtype == "i8" else self.rng.choice([(-1000, 1000), (-100000, 100000)])
            spec = ["randint", DTYPES[dtype][1], numel, lo, hi]
        else:
            spec = ["uniform", DTYPES[dtype][1], numel, -1.0, 1.0]
        hint = ":16" if self.rng.random() < 0.5 else ""
        self.feature("in_" + dtype)
        self.inputs.append((name, dtype, spec, hint))
        return name

    def stride_param(self, minimum):
        """A run-time row stride >= minimum (its value, its name)."""
        pad = self.rng.choice([0, 0, 3, 16])
        value = minimum + pad
        name = f"stride{len(self.strides)}"
        self.strides.append((name, value))
        return name, value

    def load(self, shape=None, dtype=None, in_loop_k=False):
        r = self.rng
        if shape is None:
            shape = r.choice([("M", "N"), ("M", "N"), ("M", "K"), ("M",), ("N",), ("K", "N"), ()])
        if dtype is None:
            dtype = r.choice(["fp32", "fp32", "fp16", "bf16", "i32", "i8"] + (["fp8"] if self.fp8_types else []))
            if dtype == "fp8":
                dtype = r.choice(self.fp8_types)
        total = dict(self.totals)
        idx = {"M": "offs_m", "N": "offs_n", "K": "offs_k"}
        mask = {d: self.mask_of(d) for d in DIMS}
        if in_loop_k:
            total["K"] = self.kl
            idx["K"], mask["K"] = "offs_l", "mask_l"
            self.feature("load_in_loop")
        # N == BN exactly: the mask on N may be left out.
        if total["N"] == self.size["N"] and r.random() < 0.4:
            mask["N"] = None
            self.feature("load_unmasked_dim")
        if DTYPES[dtype][2] == "fp8":
            self.feature("fp8")
        other = ""
        if r.random() < 0.8:
            if is_int(dtype):
                o = r.choice([0, 0, 3, -1])
                other = f", other={o}"
            else:
                o = r.choice([0.0, 0.0, 1.5, -0.5])
                other = f", other={o!r}"
            self.feature("load_other")
        cache = r.choice(["", "", "", ", cache_modifier=\".cg\"", ", eviction_policy=\"evict_last\""])
        self.feature("load_" + str(len(shape)) + "d")
        if len(shape) == 0:
            ptr = self.new_input(dtype, self.grid)
            expr = f"tl.load({ptr} + pid)"
            return self.bind(expr, (), dtype, True, 1 if not is_int(dtype) else self.bound_of_input(ptr))
        if len(shape) == 1:
            d = shape[0]
            strided = r.random() < 0.3
            if strided:
                s, sv = self.stride_param(1)
                ptr = self.new_input(dtype, total[d] * sv)
                addr = f"{ptr} + {idx[d]} * {s}"
                self.feature("load_strided")
            else:
                ptr = self.new_input(dtype, total[d])
                addr = f"{ptr} + {idx[d]}"
            m = mask[d] if mask[d] else None
            if d == "M" and m is None:
                m = "mask_m"
            mtext = f", mask={m}" if m else ""
            if not m:
                other = ""
            return self.bind(f"tl.load({addr}{mtext}{other}{cache})", shape, dtype, True,
                             self.bound_of_input(ptr))
        a, b = shape
        trans = r.random() < 0.3
        if trans:
            # Stored as [total(b), total(a)]: element (i, j) at j * s + i.
            s, sv = self.stride_param(total[a])
            ptr = self.new_input(dtype, total[b] * sv)
            addr = f"{ptr} + {idx[a]}[:, None] + {idx[b]}[None, :] * {s}"
            self.feature("load_transposed")
        else:
            s, sv = self.stride_param(total[b])
            ptr = self.new_input(dtype, total[a] * sv)
            addr = f"{ptr} + {idx[a]}[:, None] * {s} + {idx[b]}[None, :]"
        if sv != (total[a] if trans else total[b]):
            self.feature("load_padded_stride")
        parts = []
        if mask[a]:
            parts.append(f"{mask[a]}[:, None]")
        if mask[b]:
            parts.append(f"{mask[b]}[None, :]")
        if parts:
            self.feature("load_mask")
            mtext = ", mask=" + " & ".join(parts)
        else:
            mtext, other = "", ""
        return self.bind(f"tl.load({addr}{mtext}{other}{cache})", shape, dtype, True, self.bound_of_input(ptr))

    def bound_of_input(self, ptr):
        for name, dtype, spec, _ in self.inputs:
            if name == ptr:
                return max(abs(spec[3]), abs(spec[4])) if is_int(dtype) else 1.5
        return 1.5

    # -- operations ------------------------------------------------------------
    def operand(self, shape_pred=None, dtype_pred=None):
        v = self.pick(lambda v: (shape_pred is None or shape_pred(v)) and (dtype_pred is None or dtype_pred(v)))
        if v is None or self.rng.random() < 0.2:
            v = self.load()
        return v

    def mapped(self):
        """tl.map_elementwise of a generated helper with per-element control
        flow over an exact fp32 or i32 block: the result stays exact."""
        ok = lambda v: v.exact and v.dtype in ("fp32", "i32") and v.shape
        v = self.operand(dtype_pred=ok)
        if not ok(v):
            return None
        name = f"_map{len(self.helpers)}"
        if v.dtype == "fp32":
            # Halves the positive elements, negates the rest: exact.
            body = ["    r = a", "    if a > 0:", "        r = a * 0.5", "    else:", "        r = -a",
                    "    return r"]
        else:
            # Halves an element until it is at most 7 (a trip count of its own).
            body = ["    while a > 7:", "        a = a // 2", "    return a"]
        self.helpers += ["@triton.jit", f"def {name}(a):"] + body + ["", ""]
        self.feature("map_elementwise")
        return self.bind(f"tl.map_elementwise({name}, {v.name})", v.shape, v.dtype, True, v.bound)

    def unary(self):
        r = self.rng
        if r.random() < 0.06:
            mapped = self.mapped()
            if mapped is not None:
                return mapped
        v = self.operand(dtype_pred=lambda v: DTYPES[v.dtype][2] != "fp8")
        if DTYPES[v.dtype][2] == "fp8":
            v = self.cast(v, "fp32")
        if is_int(v.dtype):
            op = r.choice(["neg", "not", "shl", "shr", "abs"])
            self.feature("int_" + op)
            expr = {"neg": f"-{v.name}", "not": f"~{v.name}", "shl": f"{v.name} << {r.randint(0, 3)}",
                    "shr": f"{v.name} >> {r.randint(0, 5)}", "abs": f"tl.abs({v.name})"}[op]
            return self.bind(expr, v.shape, v.dtype, True, v.bound * 8)
        if v.dtype != "fp32" and r.random() < 0.6:
            op = r.choice(["neg", "abs", "scale"])
            self.feature("f16_" + op)
            if op == "scale":
                return self.bind(f"{v.name} * 0.5", v.shape, v.dtype, v.exact, v.bound / 2, v.err)
            return self.bind(f"-{v.name}" if op == "neg" else f"tl.abs({v.name})", v.shape, v.dtype, v.exact,
                             v.bound, v.err)
        v = self.cast(v, "fp32")
        ops = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "sigmoid", "erf", "abs",
               "alpha", "div"]
        if v.exact:
            ops += ["floor", "ceil", "bitcast"]
        op = r.choice(ops)
        self.feature("math_" + op)
        n, b, e = v.name, v.bound, v.err
        approx = 2.0 ** -18
        if op in ("exp", "exp2"):
            cap = 6.0
            return self.bind(f"tl.{op}(tl.minimum({n}, {cap}))", v.shape, "fp32", False,
                             math.exp(min(b, cap)), e * max(1.0, min(b, cap)) + approx)
        if op in ("log", "log2"):
            return self.bind(f"tl.{op}(tl.abs({n}) + 1.0)", v.shape, "fp32", False, math.log2(b + 1) + 1,
                             e + approx)
        if op == "sqrt":
            return self.bind(f"tl.sqrt(tl.abs({n}) + 1.0)", v.shape, "fp32", False, math.sqrt(b + 1), e + approx)
        if op == "rsqrt":
            return self.bind(f"tl.rsqrt(tl.abs({n}) + 1.0)", v.shape, "fp32", False, 1.0, e * b + approx)
        if op in ("sin", "cos"):
            if b > 8:
                v = self.normalize(v, 8.0)
                n, b, e = v.name, v.bound, v.err
            return self.bind(f"tl.{op}({n})", v.shape, "fp32", False, 1.0, e * max(b, 1) + approx)
        if op in ("sigmoid", "erf"):
            return self.bind(f"tl.{op}({n})", v.shape, "fp32", False, 1.0, e * max(b, 1) + approx)
        if op == "abs":
            return self.bind(f"tl.abs({n})", v.shape, "fp32", v.exact, b, e)
        if op == "alpha":
            self.feature("scalar_param")
            return self.bind(f"{n} * {self.scalar('alpha')}", v.shape, "fp32", False, b * 2, e + 2 ** -23)
        if op == "div":
            w = self.to_shape(self.operand(dtype_pred=lambda w: is_float(w.dtype)), v.shape)
            w = self.cast(w, "fp32")
            return self.bind(f"{n} / (tl.abs({self.expand(w, v.shape)}) + 1.0)", v.shape, "fp32", False, b,
                             e + w.err * w.bound + 2 ** -22)
        if op in ("floor", "ceil"):
            w = self.normalize(v, 64.0)
            return self.bind(f"tl.{op}({w.name} * 4.0)", v.shape, "fp32", True, w.bound * 4 + 1)
        # bitcast: exact fp32 to its bits (an exact i32).
        return self.bind(f"{n}.to(tl.int32, bitcast=True)", v.shape, "i32", True, 2 ** 31)

    def binary(self):
        r = self.rng
        x = self.operand(dtype_pred=lambda v: DTYPES[v.dtype][2] != "fp8")
        y = self.operand(shape_pred=lambda w: combine_shape(x.shape, w.shape) is not None,
                         dtype_pred=lambda v: DTYPES[v.dtype][2] != "fp8")
        if DTYPES[x.dtype][2] == "fp8":
            x = self.cast(x, "fp16")
        if DTYPES[y.dtype][2] == "fp8":
            y = self.cast(y, "fp16")
        shape = combine_shape(x.shape, y.shape)
        if shape is None:
            y = self.to_shape(y, x.shape)
            shape = x.shape
        # Operand dtypes: both integer (promoted to the wider) or both float.
        if is_int(x.dtype) != is_int(y.dtype):
            if r.random() < 0.5:
                y = self.cast(y, x.dtype)
            else:
                x = self.cast(x, y.dtype)
        if is_float(x.dtype) and x.dtype != y.dtype:
            if r.random() < 0.5:
                # Triton's promotion: fp16 with bf16 (or either with fp32) is fp32.
                self.feature("promotion")
                x, y = self.cast(x, "fp32") if r.random() < 0.3 else x, y
            else:
                y = self.cast(y, x.dtype)
        xe, ye = self.expand(x, shape), self.expand(y, shape)
        if is_int(x.dtype):
            dtype = "i32" if "i32" in (x.dtype, y.dtype) else "i8"
            if x.dtype != y.dtype:
                self.feature("int_promotion")
            op = r.choice(["+", "-", "*", "&", "|", "^", "//", "%", "max", "min", "where"])
            self.feature("int_" + {"//": "div", "%": "rem", "+": "add", "-": "sub", "*": "mul", "&": "and",
                                   "|": "or", "^": "xor"}.get(op, op))
            if op in ("//", "%"):
                expr = f"{xe} {op} (({ye} & 7) + 1)"
            elif op in ("max", "min"):
                expr = f"tl.{op}imum({xe}, {ye})"
            elif op == "where":
                expr = f"tl.where({xe} > {ye}, {xe}, {ye} + 1)"
            else:
                expr = f"{xe} {op} {ye}"
            return self.bind(expr, shape, dtype, True, max(x.bound, y.bound) ** 2)
        dtype = x.dtype if x.dtype == y.dtype else "fp32"
        exact = x.exact and y.exact
        err = max(x.err, y.err)
        op = r.choice(["+", "-", "*", "max", "min", "where", "fma", "+", "*"])
        if op == "fma" and dtype != "fp32":
            op = "*"
        if op in ("*", "fma") and x.bound * y.bound > COMFORT[dtype]:
            x = self.normalize(x, math.sqrt(COMFORT[dtype]))
            y = self.normalize(y, math.sqrt(COMFORT[dtype]))
            xe, ye = self.expand(x, shape), self.expand(y, shape)
        if op in ("+", "-") and x.bound + y.bound > COMFORT[dtype]:
            x = self.normalize(x, COMFORT[dtype] / 2)
            y = self.normalize(y, COMFORT[dtype] / 2)
            xe, ye = self.expand(x, shape), self.expand(y, shape)
        self.feature("f_" + {"+": "add", "-": "sub", "*": "mul"}.get(op, op))
        unit = UNIT[dtype] * 2
        if op in ("max", "min"):
            # Upstream computes tl.maximum/minimum of bf16 in fp32.
            return self.bind(f"tl.{op}imum({xe}, {ye})", shape, "fp32" if dtype == "bf16" else dtype, exact,
                             max(x.bound, y.bound), err)
        if op == "where":
            c = self.pick(lambda c: c.exact and combine_shape(c.shape, shape) == shape and
                          DTYPES[c.dtype][2] != "fp8")
            if c is None:
                c = self.iota(shape) if r.random() < 0.5 else x
            if c is x and not x.exact:
                c = self.iota(shape)
            ce = self.expand(c, shape)
            threshold = "0" if is_int(c.dtype) else "0.25"
            cmp = r.choice(["<", ">", "<=", ">=", "==", "!="])
            self.feature("compare")
            return self.bind(f"tl.where({ce} {cmp} {threshold}, {xe}, {ye})", shape, dtype, exact,
                             max(x.bound, y.bound), err)
        if op == "fma":
            x, y = self.cast(x, "fp32"), self.cast(y, "fp32")
            xe, ye = self.expand(x, shape), self.expand(y, shape)
            z = self.to_shape(self.operand(dtype_pred=lambda w: w.dtype == "fp32"), shape)
            if z.dtype != "fp32":
                z = self.cast(z, "fp32")
            z = self.normalize(z, COMFORT["fp32"] / 2)
            return self.bind(f"tl.fma({xe}, {ye}, {self.expand(z, shape)})", shape, "fp32", False,
                             x.bound * y.bound + z.bound, max(err, z.err) * 2 + 2 ** -22)
        bound = x.bound * y.bound if op == "*" else x.bound + y.bound
        if op == "*":
            err = x.err + y.err
        return self.bind(f"{xe} {op} {ye}", shape, dtype, False, bound, err + unit)

    def reduce(self, v=None, axis=None, op=None):
        r = self.rng
        if v is None:
            v = self.operand(shape_pred=lambda v: len(v.shape) >= 1)
            if len(v.shape) == 0:
                v = self.load(shape=("M", "N"))
        if DTYPES[v.dtype][2] == "fp8":
            v = self.cast(v, "fp32")
        if axis is None:
            axis = r.randrange(len(v.shape))
        ops = ["sum", "max", "min"]
        if v.exact:
            ops += ["argmax", "argmin"]
        if is_int(v.dtype):
            ops.append("xor_sum")
        if op is None:
            op = r.choice(ops)
        self.feature("reduce_" + op)
        shape = tuple(d for i, d in enumerate(v.shape) if i != axis)
        n = self.size[v.shape[axis]]
        axis_text = f"axis={axis}" if len(v.shape) > 1 or r.random() < 0.5 else "axis=0"
        if op in ("argmax", "argmin"):
            return self.bind(f"tl.{op}({v.name}, {axis_text})", shape, "i32", True, n)
        if op == "sum":
            dtype = "i32" if v.dtype == "i8" else v.dtype
            if is_float(v.dtype):
                v = self.normalize(v, COMFORT[v.dtype] / n)
                return self.bind(f"tl.sum({v.name}, {axis_text})", shape, dtype, False, v.bound * n,
                                 v.err + UNIT[dtype] * 2 * math.log2(n + 1))
            return self.bind(f"tl.sum({v.name}, {axis_text})", shape, dtype, True, v.bound * n)
        if op == "xor_sum":
            return self.bind(f"tl.xor_sum({v.name}, {axis_text})", shape, v.dtype, True, v.bound * 2)
        # max/min widen everything narrower than 32 bits (upstream's rule).
        dtype = v.dtype if DTYPES[v.dtype][3] == 32 else ("fp32" if is_float(v.dtype) else "i32")
        return self.bind(f"tl.{op}({v.name}, {axis_text})", shape, dtype, v.exact, v.bound, v.err)

    def center(self):
        """x - tl.max/min/sum(x, axis, keep_dims=True): a reduction kept 2-D
        and broadcast back (softmax's first step)."""
        v = self.operand(shape_pred=lambda v: len(v.shape) == 2)
        if len(v.shape) != 2:
            v = self.load(shape=("M", "N"))
        v = self.cast(v, "fp32")
        v = self.normalize(v, 64.0)
        axis = self.rng.randrange(2)
        op = self.rng.choice(["max", "min", "sum"])
        self.feature("keep_dims")
        n = self.size[v.shape[axis]]
        bound = v.bound * (n + 1) if op == "sum" else 2 * v.bound
        return self.bind(f"{v.name} - tl.{op}({v.name}, axis={axis}, keep_dims=True)", v.shape, "fp32", False,
                         bound, v.err + UNIT["fp32"] * 2 * math.log2(n + 1))

    def scan(self):
        r = self.rng
        v = self.operand(shape_pred=lambda v: len(v.shape) >= 1)
        if len(v.shape) == 0:
            v = self.load(shape=("M", "N"))
        if DTYPES[v.dtype][2] == "fp8":
            v = self.cast(v, "fp32")
        axis = r.randrange(len(v.shape))
        n = self.size[v.shape[axis]]
        rev = ", reverse=True" if r.random() < 0.3 else ""
        if rev:
            self.feature("scan_reverse")
        op = r.choice(["cumsum", "cumsum", "cumprod"])
        self.feature("scan_" + op)
        # Scans take bf16 as fp32; cumsum widens narrow integers to int32.
        widened = "fp32" if v.dtype == "bf16" else v.dtype
        if op == "cumprod":
            if is_float(v.dtype):
                # The float bounds are fp32 tensors to upstream: fp16 and
                # bf16 values are clamped in fp32.
                clamped = "fp64" if v.dtype == "fp64" else "fp32"
                w = self.bind(f"tl.minimum(tl.maximum({v.name}, -1.0), 1.0)", v.shape, clamped, v.exact, 1.0,
                              v.err)
                return self.bind(f"tl.cumprod({w.name}, axis={axis}{rev})", v.shape, clamped, False, 1.0,
                                 v.err * n + UNIT[clamped] * 2 * n)
            return self.bind(f"tl.cumprod({v.name}, axis={axis}{rev})", v.shape, v.dtype, True, 2 ** 31)
        dtype = "i32" if v.dtype == "i8" else widened
        if is_float(v.dtype):
            v = self.normalize(v, COMFORT[v.dtype] / n)
            return self.bind(f"tl.cumsum({v.name}, axis={axis}{rev})", v.shape, dtype, False, v.bound * n,
                             v.err + UNIT[dtype] * 2 * math.log2(n + 1))
        return self.bind(f"tl.cumsum({v.name}, axis={axis}{rev})", v.shape, dtype, True, v.bound * n)

    def trans(self):
        v = self.operand(shape_pred=lambda v: len(v.shape) == 2)
        if len(v.shape) != 2:
            v = self.load(shape=("M", "N"))
        self.feature("trans")
        return self.bind(f"tl.trans({v.name})", (v.shape[1], v.shape[0]), v.dtype, v.exact, v.bound, v.err)

    # -- dots ----------------------------------------------------------------
    def dot_dtype(self):
        r = self.rng
        choices = ["fp16", "fp16", "bf16", "fp32", "i8"] + self.fp8_types
        return r.choice(choices)

    def dot_operand(self, shape, dtype, in_loop_k=False):
        r = self.rng
        v = None
        if not in_loop_k and r.random() < 0.5:
            v = self.pick(lambda w: w.shape == shape and DTYPES[w.dtype][2] != "fp8" and
                          (is_int(w.dtype) == (dtype == "i8")))
        if v is None:
            v = self.load(shape=shape, dtype=dtype if r.random() < 0.7 else ("i32" if dtype == "i8" else "fp32"),
                          in_loop_k=in_loop_k)
        if dtype == "i8":
            return self.cast(v, "i8")
        if DTYPES[dtype][2] == "fp8":
            return self.cast(v, dtype) if v.dtype != dtype else v
        v = self.normalize(v, 4.0)
        return self.cast(v, dtype)

    def dot(self, in_loop_k=False, acc=None, a_shape=None):
        r = self.rng
        dtype = self.dot_dtype() if acc is None or acc.dtype == "fp32" else "i8"
        if acc is not None and acc.dtype == "fp32" and dtype == "i8":
            dtype = "fp16"
        if acc is None and not in_loop_k and r.random() < 0.3:
            # Chained: an earlier dot's (M, N) result times an (N, N) tile.
            prev = self.pick(lambda w: w.shape == ("M", "N") and "dot" in w.name)
            if prev is not None and is_float(prev.dtype):
                self.feature("dot_chain")
                dtype = r.choice(["fp16", "bf16", "fp32"])
                a = self.cast(self.normalize(prev, 4.0), dtype)
                return self.dot_pair(a, self.dot_operand(("N", "N"), dtype), dtype, None, "N")
        kdim = "K"
        if DTYPES[dtype][3] == 8 and self.size[kdim] < 32:
            # Upstream's minimum K for 8-bit operands is 32 (k_loop never
            # gives an int32 accumulator then).
            dtype = "fp16"
        a = self.dot_operand(("M", kdim), dtype, in_loop_k)
        b = self.dot_operand((kdim, "N"), dtype, in_loop_k)
        return self.dot_pair(a, b, dtype, acc, kdim)

    def dot_pair(self, a, b, dtype, acc, kdim):
        r = self.rng
        self.feature("dot", "dot_" + dtype)
        out = "i32" if dtype == "i8" else "fp32"
        extra = ""
        unit = 2.0 ** -22 * math.log2(self.size[kdim] + 1)
        if dtype == "fp32":
            prec = r.choice(["ieee", "tf32"])
            extra = f", input_precision=\"{prec}\""
            self.feature("dot_fp32_" + prec)
            if prec == "tf32":
                unit += 2.0 ** -10
        if DTYPES[dtype][2] == "fp8":
            unit += 2.0 ** -12  # Hopper's fp8 MMA accumulates with fewer bits
        n = self.size[kdim] * (self.kl // self.size["K"] + 1 if acc is not None else 1)
        bound = a.bound * b.bound * n + (acc.bound if acc is not None else 0)
        err = (a.err + b.err + unit) if dtype != "i8" else 0.0
        accs = ""
        if acc is not None:
            accs = f", {acc.name}" if r.random() < 0.5 else f", acc={acc.name}"
            err = max(err, acc.err)
            if dtype == "i8":
                # Upstream's out_dtype defaults to fp32 and must match acc.
                extra += ", out_dtype=tl.int32"
        return self.bind(f"tl.dot({a.name}, {b.name}{accs}{extra})", ("M", "N"), out, dtype == "i8", bound,
                         err, prefix="dot")

    # -- control flow ----------------------------------------------------------
    def open_scope(self):
        self.scopes.append(len(self.pool))
        self.indent += 1

    def close_scope(self):
        self.indent -= 1
        del self.pool[self.scopes.pop():]

    def carried(self):
        """A value to carry through a loop or branch (an outer-scope value)."""
        v = self.pick(lambda v: DTYPES[v.dtype][2] != "fp8")
        if v is None:
            v = self.load()
            if DTYPES[v.dtype][2] == "fp8":
                v = self.cast(v, "fp32")
        return v

    def update(self, c, amount_shape_ok=True):
        """Emits `c = f(c, t)` keeping c's dtype and shape; returns the
        (bound, err, exact) after one update."""
        r = self.rng
        t = self.pick(lambda w: self.fits(w, c.shape) and DTYPES[w.dtype][2] != "fp8")
        if t is None or r.random() < 0.3:
            t = self.statement_value()
        if not self.fits(t, c.shape):
            t = self.to_shape(t, c.shape)
        if DTYPES[t.dtype][2] == "fp8":
            t = self.cast(t, "fp32")
        te = self.expand(t, c.shape)
        if is_int(c.dtype):
            if is_float(t.dtype):
                t = self.cast(t, "i32")
                te = self.expand(t, c.shape)
            op = r.choice(["+", "^", "max", "*3+"])
            expr = {"+": f"{c.name} + {te}", "^": f"{c.name} ^ {te}", "max": f"tl.maximum({c.name}, {te})",
                    "*3+": f"{c.name} * 3 + {te}"}[op]
            self.emit(f"{c.name} = ({expr}).to({tl(c.dtype)})")
            return c.bound, 0.0, True
        if is_int(t.dtype):
            t = self.cast(t, "fp32")
            te = self.expand(t, c.shape)
        t = self.normalize(t, COMFORT[c.dtype] / 4)
        te = self.expand(t, c.shape)
        op = r.choice(["decay", "max", "min"])
        if op == "decay":
            self.emit(f"{c.name} = ({c.name} * 0.5 + {te}).to({tl(c.dtype)})")
            return 2 * t.bound + c.bound, max(c.err, t.err) + UNIT[c.dtype] * 4, False
        self.emit(f"{c.name} = tl.{op}imum({c.name}, {te}).to({tl(c.dtype)})")
        return max(c.bound, t.bound), max(c.err, t.err), c.exact and t.exact

    def loop(self):
        r = self.rng
        c = self.carried()
        kind = r.choice(["for", "for", "tl.range", "while", "static"])
        self.feature("loop_" + kind.replace("tl.", ""))
        if kind == "for":
            var = self.fresh("i")
            start = r.choice(["0", "1"])
            self.emit(f"for {var} in range({start}, {self.scalar('R')} + {start}):")
            trips = self.trip
        elif kind == "tl.range":
            var = self.fresh("i")
            self.emit(f"for {var} in tl.range(0, {self.scalar('R')}, num_stages={r.choice([1, 2, 3])}):")
            trips = self.trip
        elif kind == "static":
            var = self.fresh("i")
            trips = r.randint(1, 3)
            self.emit(f"for {var} in tl.static_range({trips}):")
        else:
            var = self.fresh("i")
            self.emit(f"{var} = 0")
            self.emit(f"while {var} < {self.scalar('R')}:")
            trips = self.trip
        self.open_scope()
        for _ in range(r.randint(0, 2)):
            self.statement()
        bound, err, exact = c.bound, c.err, c.exact
        for _ in range(r.randint(1, 2)):
            b1, e1, x1 = self.update(c)
            bound, err, exact = max(bound, b1), max(err, e1), exact and x1
        if kind == "while":
            self.emit(f"{var} += 1")
        self.close_scope()
        # A fixed point of the bound: the decay update halves c each trip.
        c.bound = bound * (2 if not is_int(c.dtype) else 1) + (2 ** 20 if is_int(c.dtype) else 0)
        c.err = err * max(1, trips) if not exact else 0.0
        c.exact = exact if is_float(c.dtype) else True
        if is_float(c.dtype) and not c.exact and c.err == 0:
            c.err = UNIT[c.dtype] * 4

    def k_loop(self):
        """acc (M, N) accumulating tl.dot over KL in steps of BK."""
        r = self.rng
        self.feature("k_loop")
        dtype = self.dot_dtype()
        if DTYPES[dtype][3] == 8 and self.size["K"] < 32:
            dtype = "fp16"  # upstream's minimum K for 8-bit operands is 32
        out = "i32" if dtype == "i8" else "fp32"
        acc = self.bind(f"tl.zeros((BM, BN), dtype={tl(out)})", ("M", "N"), out, True, 0, prefix="dot")
        side = None
        if r.random() < 0.4:
            side = self.bind("tl.zeros((BM,), dtype=tl.float32)", ("M",), "fp32", True, 0, prefix="acc")
        kl = self.scalar("KL")
        stages = r.choice(["", f", num_stages={r.choice([1, 2, 3, 4])}"])
        if stages:
            self.emit(f"for k0 in tl.range(0, {kl}, BK{stages}):")
        else:
            self.emit(f"for k0 in range(0, {kl}, BK):")
        self.open_scope()
        self.emit("offs_l = k0 + offs_k")
        self.emit(f"mask_l = offs_l < {kl}")
        d = self.dot(in_loop_k=True, acc=acc)
        # Force the accumulator's dtype pair.
        if d.dtype != acc.dtype:
            raise AssertionError("dot dtype")
        self.emit(f"{acc.name} = {d.name}")
        if side is not None:
            a = self.pick(lambda w: w.shape == ("M", "K") and w.name != d.name)
            if a is not None:
                a32 = self.cast(a, "fp32") if a.dtype != "fp32" else a
                self.emit(f"{side.name} += tl.sum({a32.name}, axis=1)")
                side_bound = a32.bound * self.kl
            else:
                side_bound = 0
        bound, err = d.bound, d.err
        self.close_scope()
        acc.bound, acc.err, acc.exact = bound, err, out == "i32"
        if side is not None:
            side.bound, side.err, side.exact = side_bound + 1, UNIT["fp32"] * 2 * math.log2(self.kl + 1), False
        return acc

    def branch(self):
        r = self.rng
        c = self.carried()
        constexpr = r.random() < 0.5
        if constexpr:
            self.feature("if_constexpr")
            arms = [f"if MODE == {m}:" for m in range(r.randint(1, 2))]
            arms = [arms[0]] + ["el" + a for a in arms[1:]] + ["else:"]
        else:
            self.feature("if_runtime")
            cond = r.choice([f"{self.scalar('flag')} > 0", f"{self.scalar('flag')} == 0",
                             f"pid % 2 == {self.scalar('flag')}"])
            arms = [f"if {cond}:", "else:"]
        bound, err, exact = c.bound, c.err, c.exact
        for arm in arms:
            self.emit(arm)
            self.open_scope()
            for _ in range(r.randint(0, 1)):
                self.statement()
            b1, e1, x1 = self.update(c)
            bound, err, exact = max(bound, b1), max(err, e1), exact and x1
            self.close_scope()
        c.bound, c.err = bound, err
        c.exact = exact if is_float(c.dtype) else True

    # -- statements ----------------------------------------------------------------
    def statement_value(self):
        r = self.rng
        kinds = ["load", "unary", "binary", "binary", "reduce", "scan", "trans", "center"]
        if self.want_dot:
            kinds += ["dot", "dot"]
        k = r.choice(kinds)
        if k == "load":
            return self.load()
        if k == "unary":
            return self.unary()
        if k == "binary":
            return self.binary()
        if k == "reduce":
            return self.reduce()
        if k == "scan":
            return self.scan()
        if k == "trans":
            return self.trans()
        if k == "center":
            return self.center()
        return self.dot()

    def statement(self):
        r = self.rng
        depth = len(self.scopes)
        x = r.random()
        if depth < 2 and x < 0.12:
            self.loop()
        elif depth < 2 and x < 0.22:
            self.branch()
        elif depth == 0 and self.want_dot and x < 0.32:
            self.k_loop()
        else:
            self.statement_value()

    # -- the kernel ---------------------------------------------------------------
    def store(self, v, k):
        r = self.rng
        dtype = v.dtype
        if DTYPES[dtype][2] == "fp8":
            pass
        elif is_float(dtype) and r.random() < 0.25:
            # The store converts: narrower (or wider) float buffer.
            dtype = r.choice(["fp16", "bf16", "fp32"])
            if dtype in ("fp16", "bf16") and v.bound > 200:
                v = self.normalize(v, 64.0)
            if dtype != v.dtype:
                self.feature("store_convert")
        elif is_int(dtype) and r.random() < 0.2:
            dtype = "i8" if dtype == "i32" else "i32"
            self.feature("store_convert")
        name = f"out{k}"
        sizes = [self.size[d] for d in v.shape]
        tile = 1
        for s in sizes:
            tile *= s
        numel = self.grid * tile
        self.outputs.append((name, dtype, numel))
        base = f"{name} + pid * {tile}"
        local = {"M": "tl.arange(0, BM)", "N": "tl.arange(0, BN)", "K": "tl.arange(0, BK)"}
        if len(v.shape) == 0:
            addr, mask = base, None
        elif len(v.shape) == 1:
            addr, mask = f"{base} + {local[v.shape[0]]}", self.mask_of(v.shape[0])
        else:
            a, b = v.shape
            addr = f"{base} + {local[a]}[:, None] * {self.size[b]} + {local[b]}[None, :]"
            mask = f"{self.mask_of(a)}[:, None] & {self.mask_of(b)}[None, :]"
        self.feature("store_" + str(len(v.shape)) + "d")
        mtext = f", mask={mask}" if mask else ""
        if dtype == "i32" == v.dtype and v.shape and r.random() < 0.3:
            # Integer atomics into a few colliding slots of the program's
            # region: the result does not depend on their order.
            op = r.choice(["add", "max", "min", "xor", "or", "and"])
            self.feature("atomic_" + op)
            slots = r.choice([1, 3, 4])
            addr = f"{base} + ({addr[len(base) + 3:]}) % {slots}"
            self.emit(f"tl.atomic_{op}({addr}, {v.name}{mtext})")
        else:
            self.emit(f"tl.store({addr}, {v.name}{mtext})")
        err = v.err
        if not v.exact and dtype != v.dtype and dtype in UNIT:
            err += UNIT[dtype]
        if v.exact:
            # Also when the store rounds it to a narrower float: deterministic.
            self.compare[name] = {"exact": True}
        else:
            self.compare[name] = {"tol": min(0.25, max(5e-5, 64 * err))}
        self.feature("dtype_" + v.dtype)

    def build(self):
        r = self.rng
        self.strides = []
        n_statements = r.randint(3, 12)
        for _ in range(n_statements):
            self.statement()
        # Outputs: the latest value always, and a few others.
        outs = [self.pool[-1]]
        for v in self.pool[:-1]:
            if r.random() < 0.25 and len(outs) < 4:
                outs.append(v)
        for k, v in enumerate(outs):
            self.store(v, k)
        return self.render()

    def render(self):
        params, sig, args = [], [], {}
        for name, dtype, spec, hint in self.inputs:
            params.append(name)
            sig.append(f"{name}=*{dtype}{hint}")
            args[name] = spec
        for name, dtype, numel in self.outputs:
            params.append(name)
            sig.append(f"{name}=*{dtype}")
            args[name] = ["zeros", DTYPES[dtype][1], numel]
        scalars = [("M", "i32", self.totals["M"]), ("N", "i32", self.totals["N"]),
                   ("K", "i32", self.totals["K"])]
        for s in ("KL", "R", "flag"):
            if s in self.scalars_used:
                scalars.append((s, "i32", {"KL": self.kl, "R": self.trip, "flag": self.flag}[s]))
        if "alpha" in self.scalars_used:
            scalars.append(("alpha", "fp32", self.alpha))
        for name, value in self.strides:
            scalars.append((name, "i32", value))
        for name, t, value in scalars:
            params.append(name)
            hint = ":16" if t == "i32" and value % 16 == 0 and value > 0 and self.rng.random() < 0.5 else ""
            sig.append(f"{name}={t}{hint}")
            args[name] = value
        constexprs = [("BM", self.size["M"]), ("BN", self.size["N"]), ("BK", self.size["K"]),
                      ("MODE", self.mode)]
        for name, value in constexprs:
            params.append(f"{name}: tl.constexpr")
            sig.append(f"{name}={value}")
        sig.append(f"num_warps={self.num_warps}")
        sig.append(f"num_stages={self.num_stages}")
        header = [
            f"# Generated by tests/fuzz/kernelgen.py, seed {self.seed}.",
            "import triton",
            "import triton.language as tl",
            "",
            "",
        ] + self.helpers + [
            "@triton.jit",
            f"def fuzz_kernel({', '.join(params)}):",
            "    pid = tl.program_id(0)",
            "    offs_m = pid * BM + tl.arange(0, BM)",
            "    offs_n = tl.arange(0, BN)",
            "    offs_k = tl.arange(0, BK)",
            "    mask_m = offs_m < M",
            "    mask_n = offs_n < N",
            "    mask_k = offs_k < K",
        ]
        # Hints that hold (each run of BM or BN values starts at a multiple
        # of it and is contiguous): AxisInfo and vectorization take them.
        if self.rng.random() < 0.3:
            self.feature("hints")
            header.insert(header.index("    offs_n = tl.arange(0, BN)") + 1,
                          "    offs_m = tl.max_contiguous(tl.multiple_of(offs_m, BM), BM)")
            if self.rng.random() < 0.5:
                header.insert(header.index("    offs_n = tl.arange(0, BN)") + 1,
                              "    offs_n = tl.max_contiguous(tl.multiple_of(offs_n, BN), BN)")
        source = "\n".join(header + self.lines) + "\n"
        self.feature(f"warps_{self.num_warps}")
        return dict(source=source, kernel="fuzz_kernel", sig=", ".join(sig), args=args,
                    outputs=[o[0] for o in self.outputs], compare=self.compare, grid=[self.grid],
                    features=sorted(self.features), seed=self.seed, archs=list(self.archs),
                    num_warps=self.num_warps, num_stages=self.num_stages)


def generate(seed, archs=("sm_90a", "sm_90", "sm_80")):
    """One case (see the module's docstring) from `seed`."""
    return Gen(seed, archs).build()


def self_check(count):
    """Generates `count` kernels and checks each case against its source:
    Python syntax, the signature against the parameters, every run-time
    parameter with an argument, every output with a rule. No kilnc needed."""
    import ast
    problems = 0
    for seed in range(count):
        archs = ("sm_90a", "sm_90") if seed % 2 == 0 else ("sm_90a", "sm_90", "sm_80")
        try:
            case = generate(seed, archs)
            tree = ast.parse(case["source"])
            fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == case["kernel"]][0]
            declared = [a.arg for a in fn.args.args]
            named = [e.split("=")[0] for e in case["sig"].split(", ")]
            assert named[:len(declared)] == declared, f"signature {named} vs parameters {declared}"
            runtime = [e.split("=")[0] for e in case["sig"].split(", ")
                       if e.split("=")[1][:1] == "*" or e.split("=")[1].split(":")[0] in ("i32", "fp32")]
            assert sorted(runtime) == sorted(case["args"]), "arguments differ from run-time parameters"
            assert case["outputs"] and all(o in case["compare"] for o in case["outputs"]), "outputs"
            if "sm_80" in archs:
                assert "fp8e4nv" not in case["source"] and "float8e4nv" not in case["source"], "e4nv on sm_80"
        except Exception as e:  # noqa: BLE001 - every failure is reported
            problems += 1
            print(f"kernelgen: seed {seed}: {type(e).__name__}: {e}")
    print(f"kernelgen self-check: {count} kernels, {problems} problems")
    return 1 if problems else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--self-check", type=int, metavar="N", help="check N generated kernels and exit")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--archs", default="sm_90a,sm_90,sm_80")
    p.add_argument("--case", action="store_true", help="print the case's JSON after the source")
    o = p.parse_args()
    if o.self_check:
        return self_check(o.self_check)
    case = generate(o.seed, o.archs.split(","))
    print(case["source"])
    print(f"# kilnc -n {case['kernel']} -s \"{case['sig']}\"")
    if o.case:
        import json
        print(json.dumps({k: v for k, v in case.items() if k != "source"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
