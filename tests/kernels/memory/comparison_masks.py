# Loads masked by a comparison of contiguous offsets with a bound: the mask
# is constant over a run of offsets only where the comparison cannot flip
# inside it. `t < c` and `t >= c` flip at c, a run boundary when c is as
# divisible as the run is long; `t > c` and `t <= c` flip at c + 1, and
# `t == c` and `t != c` are true (or false) at one element: their loads
# take a predicate per element. (accelerated-scan's backward reads the
# states shifted by one, `load(states + t - 1, mask=t > 0)`: one predicate
# for a thread's four elements read zeros at t = 1, 2, 3.)
#
# kiln-variant: -n shifted_by_one -s "x_ptr=*fp32:16, y_ptr=*fp32:16, n=i32:16, BLOCK=1024"
# kiln-variant: -n compared_masks -s "x_ptr=*fp32:16, y_ptr=*fp32:16, n=i32:16, c=i32:16, BLOCK=1024"
# kiln-covers: shifted_by_one: comparisons < <= > >= == !=; tl.load(mask=, other=)
import triton
import triton.language as tl


@triton.jit
def shifted_by_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # y[t] = x[t - 1], y[0] = 0.
    t = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + t - 1, mask=t > 0, other=0.0)
    tl.store(y_ptr + t, x, mask=t < n)


@triton.jit
def compared_masks(x_ptr, y_ptr, n, c, BLOCK: tl.constexpr):
    # Six loads of x, each masked by one comparison of t with c (a multiple
    # of 16), summed with weights that tell them apart.
    t = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + t, mask=t < c, other=0.0)
    y += 2.0 * tl.load(x_ptr + t, mask=t >= c, other=0.0)
    y += 4.0 * tl.load(x_ptr + t, mask=t > c, other=0.0)
    y += 8.0 * tl.load(x_ptr + t, mask=t <= c, other=0.0)
    y += 16.0 * tl.load(x_ptr + t, mask=t == c, other=0.0)
    y += 32.0 * tl.load(x_ptr + t, mask=t != c, other=0.0)
    tl.store(y_ptr + t, y, mask=t < n)
