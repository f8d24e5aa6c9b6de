# Kernels that call a function given as a tl.constexpr argument (upstream's
# JIT takes any @triton.jit function there), and a kernel rebound by an
# autotuner after its definition.
import triton
import triton.language as tl

from .mods import score as scores

_is_cpu = False


@triton.jit
def negate(x, scale):
    return -x * scale


@triton.jit
def apply_mod(x_ptr, out_ptr, n, MOD: tl.constexpr = None, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if MOD is not None:
        x = MOD(x, 3.0)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def default_mod(x_ptr, out_ptr, n, MOD: tl.constexpr = negate, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, MOD(tl.load(x_ptr + offs, mask=offs < n), 2.0), mask=offs < n)


tuned = triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in [64, 256] for w in [2, 8]],
    key=["n"],
)


@triton.jit
def rebound(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


if not _is_cpu:
    rebound = tuned(rebound)


def launch(x, out):
    rebound[(1,)](x, out, x.numel())
