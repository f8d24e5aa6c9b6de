# Host Python that real kernel files put around their kernels (issue 13):
# `**kwargs` and `*args` in calls, generator expressions, a module-level `if`
# whose first branch names a Triton module CUDA builds lack.
import triton
import triton.language as tl

DEVICE_KIND = detect_device()  # noqa: F821 (host code Kiln cannot run)
cache_kwargs = {"cache_results": False}
WARPS = [2, 4, 8]

if DEVICE_KIND == "xpu":
    fast_tanh = tl.extra.intel.libdevice.tanh
else:
    fast_tanh = tl.extra.cuda.libdevice.tanh


def configs(*sizes, **options):
    if all(w % 2 == 0 for w in WARPS) and sum(w for w in WARPS) == 14:
        return [triton.Config({"BLOCK": b}, num_warps=w) for b in sizes for w in WARPS]
    return []


@triton.autotune(configs=configs(*[64, 128]), key=["n"], **cache_kwargs)
@triton.heuristics({"EVEN_N": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def scaled_tanh(x_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, fast_tanh(x), mask=offs < n)


@triton.jit
def add3(a, b, c):
    return a + b + c


@triton.jit
def star_call(x_ptr):
    parts = (1.0, 2.0, 3.0)
    tl.store(x_ptr, add3(*parts))


@triton.jit
def kwargs_in_kernel(x_ptr):
    tl.store(x_ptr, add3(**cache_kwargs))


@triton.jit
def generator_in_kernel(x_ptr):
    tl.store(x_ptr, tl.sum(i for i in range(3)))


@triton.jit
def trans_b_dot(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 16)
    n = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + n[:, None] * 16 + r[None, :])
    c = tl.dot(a, b, trans_b=True)
    tl.store(c_ptr + r[:, None] * 32 + n[None, :], c)


@triton.jit
def old_spellings(x_ptr, N: tl.core.constexpr):
    offs = tl.core.arange(0, N)
    x = tl.load(x_ptr + offs)
    bits = x.to(tl.core.get_int_dtype(bitwidth=32, signed=True), bitcast=True)
    y = tl.libdevice.tanh(x) + bits.to(tl.float32)
    tl.store(x_ptr + offs, y)


# Module-level constexprs computed by host functions (fla's softplus.py):
# str.format with keywords, loops, split and join run as Python would.
def _make_asm(n):
    template = """
        mov.b32 ${out}, ${inp};
    """
    text = ""
    for i in range(n):
        text += "{" + template.format(out=i, inp=i + n) + "}\n"
    return " ".join(text.split("\n"))


def _make_constraints(n):
    return ",".join("=r" for i in range(n)) + "," + ",".join("r" for i in range(n))


def _scale_of(name, x):
    return {"half": 0.5}.get(name, x) * 4, "{}-{}".format(name, x)


def _strings():
    return ("{0} {{{1}}} {x}".format(1, 2.5, x=None) + "{}".format(True), " a b ".strip().replace(" ", "-"),
            str(0.1) + str(1e20) + str(-3.0), "p,q".split(","), "x" .startswith("x"))


STRINGS = tl.constexpr(_strings())
copy_asm: tl.constexpr = tl.constexpr(_make_asm(1))
copy_constraints = tl.constexpr(_make_constraints(1))
SCALE = tl.constexpr(_scale_of("half", 2.5)[0])
SCALE_NAME = tl.constexpr(_scale_of("x", 2.5)[1])
BAD_ASM = tl.constexpr(_make_asm(1.5))


@triton.jit
def host_made_asm(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise(asm=copy_asm, constraints=copy_constraints, args=[x],
                                  dtype=tl.float32, is_pure=True, pack=1)
    tl.static_assert(SCALE_NAME == "x-2.5")
    tl.static_assert(copy_constraints == "=r,r")
    tl.static_assert(STRINGS[0] == "1 {2.5} NoneTrue")
    tl.static_assert(STRINGS[1] == "a-b")
    tl.static_assert(STRINGS[2] == "0.11e+20-3.0")
    tl.static_assert(STRINGS[3][1] == "q")
    tl.static_assert(STRINGS[4])
    tl.store(x_ptr + offs, y * SCALE)


@triton.jit
def host_call_fails(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + len(BAD_ASM))
