# Two kernels for programmatic dependent launch (dependent_launch_gpu_test.cc):
# each waits for the kernel before it on the stream (gdc_wait) before reading
# what that kernel wrote, and lets the next one start once its own reads are
# done (gdc_launch_dependents). Before sm_90 both calls are nothing.
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait


@triton.jit
def plus_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    gdc_wait()
    x = tl.load(x_ptr + offs, mask=mask)
    gdc_launch_dependents()
    tl.store(out_ptr + offs, x + 1.0, mask=mask)


@triton.jit
def doubled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    gdc_wait()
    x = tl.load(x_ptr + offs, mask=mask)
    gdc_launch_dependents()
    tl.store(out_ptr + offs, x * 2.0, mask=mask)
