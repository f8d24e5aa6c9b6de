# A platform probe called by name in the host code an autotune decorator
# runs (vLLM's `current_platform.is_rocm()` in a config function) answers
# as on a CUDA GPU, as the kernels' own module-level probes do.
#
# RUN: %kilnc configs %s -n probed | FileCheck %s
# CHECK: BLOCK=128, num_warps=4
# CHECK-NEXT: BLOCK=256, num_warps=4
# CHECK-NOT: BLOCK=64
import triton
import triton.language as tl
from vllm.platforms import current_platform


def get_configs():
    if current_platform.is_rocm() or not current_platform.is_cuda():
        return [triton.Config({"BLOCK": 64}, num_warps=8)]
    return [triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=4)]


@triton.autotune(configs=get_configs(), key=["n"])
@triton.jit
def probed(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
