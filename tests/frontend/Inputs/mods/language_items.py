# Language items real kernel files use (issue 13).
import torch
import triton
import triton.language as tl


@triton.jit
def bool_ops_on_blocks(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    keep = (x > 0) and (offs < n) or not (x < -1)
    tl.store(out_ptr + offs, x, mask=keep)


@triton.jit
def pointer_element_type(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x.to(out_ptr.type.element_ty), mask=offs < n)


@triton.jit
def launch_option_names(x_ptr, n, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.full((BLOCK,), num_warps, tl.int32), mask=offs < n)


@triton.jit
def dead_raise(x_ptr, MODE: tl.constexpr):
    if MODE == 0:
        tl.store(x_ptr, 1.0)
    else:
        raise ValueError("unsupported mode")


@triton.jit
def torch_dtype(x_ptr, OUT_DTYPE: tl.constexpr = torch.float16):
    tl.store(x_ptr, tl.full((), 1.0, torch.float32).to(OUT_DTYPE))


@tl.constexpr
def accumulator_type(dtype: tl.dtype) -> tl.dtype:
    if dtype.is_fp16() or dtype.is_bf16():
        return tl.float32
    return dtype


@triton.jit
def minimum_of(dtype):
    dtype_ = dtype.value
    if dtype_.is_floating():
        return float("-inf")
    return 0


@triton.jit
def constexpr_helpers(x_ptr, out_ptr):
    acc = tl.load(x_ptr).to(accumulator_type(x_ptr.dtype.element_ty))
    acc = tl.maximum(acc, minimum_of(acc.dtype))
    m = tl.float32(-float("inf"))
    tl.store(out_ptr, tl.maximum(acc, m))


@triton.jit
def pointer_from_int(addrs, out_ptr, BLOCK: tl.constexpr):
    # tutorial 08's grouped GEMM: a table of addresses, each cast to a pointer
    a = tl.load(addrs).to(tl.pointer_type(tl.float16))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a + offs))
    tl.store(addrs + 1, a.to(tl.int64, bitcast=True))


@triton.jit
def block_pointer_element_type(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # A block pointer's type.element_ty is its block: .to casts to its
    # element type (applied-ai's attention forward).
    out = tl.make_block_ptr(out_ptr, shape=(n,), strides=(1,), offsets=(0,),
                            block_shape=(BLOCK,), order=(0,))
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out, (x * 2).to(out.type.element_ty), boundary_check=(0,))
