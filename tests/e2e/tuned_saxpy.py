# out = alpha * x + y, with the block size and warps left to
# @triton.autotune. Kiln compiles every config (triton_kernel's autotune
# attribute, AUTOTUNE in CMake) and the caller picks one through the config
# type; the first is the default. Upstream Triton runs this file unchanged.
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=2),
    ],
    key=["n"],
)
@triton.jit
def tuned_saxpy(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)
