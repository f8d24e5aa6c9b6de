# tl.map_elementwise: a @triton.jit function on scalars mapped over blocks
# (broadcast to one shape), with per-element control flow that runs only the
# branch an element takes: if/else with returns, a while loop with a
# per-element trip count, tuples of results, pack=2 (two elements of each
# argument per call). (Kiln also maps over pointer blocks, which upstream
# Triton 3.6 fails to lower: tests/lit/map_elementwise_to_ptx.py.)
#
# kiln-variant: -n selu_kernel -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, alpha=fp32, BLOCK=1024"
# kiln-variant: -n selu_kernel -s "x_ptr=*fp16, out_ptr=*fp16, n=i32, alpha=fp32, BLOCK=512, num_warps=8"
# kiln-variant: -n collatz_kernel -s "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256"
# kiln-variant: -n sorted_pairs -s "a_ptr=*fp16, b_ptr=*fp16, lo_ptr=*fp16, hi_ptr=*fp16, n=i32, BLOCK=1024"
# kiln-variant: -n sorted_pairs -s "a_ptr=*fp32:16, b_ptr=*fp32:16, lo_ptr=*fp32:16, hi_ptr=*fp32:16, n=i32:16, BLOCK=256"
# kiln-variant: -n two_results -s "x_ptr=*fp32, idx_ptr=*i32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-covers: selu_kernel: tl.map_elementwise
# kiln-covers: collatz_kernel: tl.map_elementwise
# kiln-covers: sorted_pairs: tl.map_elementwise
# kiln-covers: two_results: tl.map_elementwise
import triton
import triton.language as tl


@triton.jit
def _selu(x, alpha):
    if x > 0:
        return x
    else:
        return (alpha * (tl.exp(x.to(tl.float32)) - 1)).to(x.dtype)


@triton.jit
def selu_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.map_elementwise(_selu, x, alpha)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def _collatz_steps(v):
    steps = 0
    while v > 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    return steps


@triton.jit
def collatz_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1)
    tl.store(out_ptr + offs, tl.map_elementwise(_collatz_steps, x), mask=offs < n)


@triton.jit
def _order2(a0, a1, b0, b1):
    return tl.minimum(a0, b0), tl.minimum(a1, b1), tl.maximum(a0, b0), tl.maximum(a1, b1)


@triton.jit
def sorted_pairs(a_ptr, b_ptr, lo_ptr, hi_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n)
    b = tl.load(b_ptr + offs, mask=offs < n)
    lo, hi = tl.map_elementwise(_order2, a, b, pack=2)
    tl.store(lo_ptr + offs, lo, mask=offs < n)
    tl.store(hi_ptr + offs, hi, mask=offs < n)


@triton.jit
def _scale_if_positive(x, i):
    result = x - i
    if x > 0:
        result = x * i
    return result, (x > 0).to(tl.int32)


@triton.jit
def two_results(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    idx = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    scaled, positive = tl.map_elementwise(_scale_if_positive, x, idx)
    tl.store(out_ptr + offs, tl.where(positive != 0, scaled * 2.0, scaled), mask=offs < n)
