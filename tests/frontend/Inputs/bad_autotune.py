import triton
import triton.language as tl
SIZE = 128

@triton.autotune(configs=[triton.Config({"BLOCK": SIZE})], key=[])
@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


@triton.autotune(configs=[triton.Config({"BLOCK": [SIZE]})], key=[])
@triton.jit
def list_value(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


@triton.autotune(configs=[triton.Config({"DTYPE": tl.float16}), triton.Config({"DTYPE": tl.bfloat16})], key=[])
@triton.jit
def dtype_value(x_ptr, DTYPE: tl.constexpr):
    tl.store(x_ptr, tl.zeros((1,), DTYPE).sum())
