# The autotune decorator and triton.Config through module-level aliases
# (ArcticTraining's moe_gemm.py binds triton_autotune = triton.autotune).
import triton
import triton.language as tl

triton_autotune = triton.autotune
triton_jit = triton.jit
triton_config = triton.Config


@triton_autotune(configs=[triton_config({"BLOCK": 128}, num_warps=4),
                          triton_config({"BLOCK": 256}, num_warps=8)], key=["n"])
@triton_jit
def aliased(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


not_autotune = print


@not_autotune
@triton_jit
def other_decorator(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
